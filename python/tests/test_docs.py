"""The tutorial (docs/tutorial-python.md) shows the example's own code, and
the example's model has the gradient finite differences give."""

import re

import numpy as np

import adrev
from conftest import REPO
from test_finite_differences import check

EXAMPLES = REPO / "python" / "examples"
TUTORIAL = REPO / "docs" / "tutorial-python.md"


def code_blocks(markdown):
    return re.findall(r"```[a-z]*\n(.*?)```", markdown, re.DOTALL)


def test_the_tutorial_quotes_the_model_and_the_script():
    blocks = code_blocks(TUTORIAL.read_text())
    model = "\n".join(
        line for line in (EXAMPLES / "logistic.ad").read_text().splitlines() if not line.startswith("--")
    ).strip()
    assert model in [b.strip() for b in blocks], "the tutorial's model is not logistic.ad's"
    script = (EXAMPLES / "logistic_regression.py").read_text()
    for block in blocks:
        if "value_and_grad" in block or "minimize(" in block:
            for line in block.strip().splitlines():
                if line.strip() and "callback" not in line and "fit = minimize" not in line:
                    assert line.strip() in script, f"not in the script: {line}"


def test_the_tutorial_model_against_finite_differences():
    rng = np.random.default_rng(2)
    n, d = 20, 3
    inputs = dict(
        w=rng.normal(size=d), b=0.3, X=rng.normal(size=(n, d)), y=np.sign(rng.normal(size=n)), lam=0.1
    )
    f = adrev.load(EXAMPLES / "logistic.ad").function("loss", backend="eval")
    check(f, inputs, ["w", "b"])
