"""Fits a logistic regression with adrev and scipy.optimize.minimize(jac=True),
and plots the loss curve (docs/tutorial-python.md walks through it).

    python python/examples/logistic_regression.py [OUT.png]
"""

import pathlib
import sys

import numpy as np
from scipy.optimize import minimize

import adrev

HERE = pathlib.Path(__file__).resolve().parent

# 1. Data: two Gaussian clouds in 2-D, labels -1 and +1.
rng = np.random.default_rng(0)
n, d = 400, 2
y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
X = rng.normal(size=(n, d)) + 1.25 * y[:, None] * np.array([1.0, -0.5])

# 2. The model: compiled once to C, then called at every step.
loss = adrev.load(HERE / "logistic.ad").function("loss", backend="c")


def objective(theta):
    """scipy's (value, gradient) for the flat parameter vector [w, b]."""
    w, b = theta[:d], theta[d]
    value, grads = loss.value_and_grad(wrt=["w", "b"], w=w, b=b, X=X, y=y, lam=1e-3)
    return value, np.append(grads["w"], grads["b"])


# 3. Fit, recording the loss after every iteration.
history = [objective(np.zeros(d + 1))[0]]
fit = minimize(
    objective,
    np.zeros(d + 1),
    jac=True,
    method="L-BFGS-B",
    callback=lambda theta: history.append(objective(theta)[0]),
)
w, b = fit.x[:d], fit.x[d]
accuracy = np.mean(np.sign(X @ w + b) == y)
print(f"{fit.message}: loss {fit.fun:.6f} after {fit.nit} iterations, accuracy {accuracy:.3f}")
print(f"w = {w}, b = {b:.6f}")

# 4. Check the gradient at the optimum against scipy's finite differences.
from scipy.optimize import check_grad  # noqa: E402

err = check_grad(lambda t: objective(t)[0], lambda t: objective(t)[1], fit.x)
print(f"gradient vs finite differences at the optimum: {err:.2e}")

# 5. Plot: the loss curve, and the points with the decision boundary.
import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
left.plot(range(len(history)), history, marker="o")
left.set_xlabel("L-BFGS-B iteration")
left.set_ylabel("loss")
left.set_yscale("log")
left.set_title("Training loss (adrev gradient, scipy L-BFGS-B)")
right.scatter(X[:, 0], X[:, 1], c=y, cmap="coolwarm", s=10)
xs = np.linspace(X[:, 0].min(), X[:, 0].max(), 2)
right.plot(xs, -(w[0] * xs + b) / w[1], "k-", label="w·x + b = 0")
right.set_ylim(X[:, 1].min(), X[:, 1].max())
right.legend()
right.set_title(f"Decision boundary (accuracy {accuracy:.1%})")
fig.tight_layout()
out = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else HERE.parents[1] / "docs" / "tutorial-python-loss.png"
fig.savefig(out, dpi=100)
print(f"wrote {out}")
