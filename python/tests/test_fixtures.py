"""Every fixture's `-- value` and `-- grad` lines through the package, on
the evaluator and on generated C, with language.md's tolerance."""

import pytest

import adrev
from conftest import FIXTURES, assert_close, fixture_programs


def load(case):
    prog = adrev.load(FIXTURES / case / "program.ad")
    return prog, prog.expectations()


def cases_with(stated):
    """The fixtures whose expectation lines state what `stated` reads (a
    case without them has nothing to check, so it is not collected)."""
    return [case for case in fixture_programs() if stated(load(case)[1])]


@pytest.mark.parametrize("case", cases_with(lambda exp: exp.value is not None))
def test_value(case, backend):
    prog, exp = load(case)
    f = prog.function(backend=backend)
    assert_close(f(**exp.at), exp.value)


@pytest.mark.parametrize("case", cases_with(lambda exp: bool(exp.grads)))
def test_gradient(case, backend):
    prog, exp = load(case)
    f = prog.function(backend=backend)
    value, grads = f.value_and_grad(wrt=list(exp.grads), **exp.at)
    if exp.value is not None:
        assert_close(value, exp.value)
    assert list(grads) == list(exp.grads)
    for name, want in exp.grads.items():
        assert_close(grads[name], want, where=f"grad {name}")


def test_most_fixtures_state_values_and_gradients():
    with_value = with_grads = 0
    for case in fixture_programs():
        _, exp = load(case)
        with_value += exp.value is not None
        with_grads += bool(exp.grads)
    assert with_value >= 25 and with_grads >= 25, (with_value, with_grads)
