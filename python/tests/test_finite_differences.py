"""Gradients against central finite differences computed in NumPy from
the package's own values, at random points, on both backends."""

import numpy as np
import pytest

import adrev
from conftest import FIXTURES

MLP = """
def mlp (W : [m][n]R) (b : [m]R) (x : [n]R) : R =
  let h = map2 (fun (row, bi) -> tanh (dot row x + bi)) W b in
  log (sum (map exp h))
"""

TUPLE = """
def wave (p : (R, R)) (A : [n]R) : R =
  sum (map (fun a -> sin (a * p.1) + p.2 * a * a) A)
"""


def central_difference(f, inputs, name, h=1e-6):
    """d f / d inputs[name], one real at a time; tuples component-wise."""
    x = inputs[name]
    if isinstance(x, tuple):
        out = []
        for i in range(len(x)):
            def at(xi, i=i):
                return tuple(xi if j == i else c for j, c in enumerate(x))
            step = h * max(1.0, abs(x[i]))
            out.append((f(**{**inputs, name: at(x[i] + step)}) - f(**{**inputs, name: at(x[i] - step)})) / (2 * step))
        return tuple(out)
    if isinstance(x, float):
        step = h * max(1.0, abs(x))
        return (f(**{**inputs, name: x + step}) - f(**{**inputs, name: x - step})) / (2 * step)
    grad = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        step = h * max(1.0, abs(x[idx]))
        up, down = x.copy(), x.copy()
        up[idx] += step
        down[idx] -= step
        grad[idx] = (f(**{**inputs, name: up}) - f(**{**inputs, name: down})) / (2 * step)
    return grad


def check(f, inputs, wrt):
    _, grads = f.value_and_grad(wrt=wrt, **inputs)
    for name in wrt:
        fd = central_difference(f, inputs, name)
        np.testing.assert_allclose(grads[name], fd, rtol=1e-5, atol=1e-6, err_msg=name)


def test_gmm_against_finite_differences(backend):
    rng = np.random.default_rng(17)
    k, d, n = 3, 2, 4
    inputs = dict(
        alphas=rng.normal(size=k),
        means=rng.normal(size=(k, d)),
        icf=rng.normal(size=(k, d + d * (d - 1) // 2)) * 0.5,
        x=rng.normal(size=(n, d)),
        wishart_gamma=1.0,
        wishart_m=0.0,
        lgamma_sum=-0.1207822376352452,
    )
    f = adrev.load(FIXTURES / "gmm" / "program.ad").function("gmm", backend=backend)
    check(f, inputs, ["alphas", "means", "icf"])


def test_mlp_against_finite_differences(backend):
    rng = np.random.default_rng(1)
    inputs = dict(W=rng.normal(size=(3, 4)), b=rng.normal(size=3), x=rng.normal(size=4))
    f = adrev.compile(MLP).function(backend=backend)
    check(f, inputs, ["W", "b", "x"])


def test_tuple_parameter_against_finite_differences(backend):
    inputs = dict(p=(0.7, -1.3), A=np.array([0.5, -2.0, 1.25]))
    f = adrev.compile(TUPLE).function(backend=backend)
    _, grads = f.value_and_grad(**inputs)
    assert isinstance(grads["p"], tuple) and len(grads["p"]) == 2
    check(f, inputs, ["p", "A"])


@pytest.mark.parametrize("route", ["unf", "direct", "forward"])
def test_every_route_agrees_with_finite_differences(route):
    rng = np.random.default_rng(5)
    inputs = dict(W=rng.normal(size=(2, 3)), b=rng.normal(size=2), x=rng.normal(size=3))
    f = adrev.compile(MLP).function(backend="eval", route=route)
    check(f, inputs, ["W", "x"])
