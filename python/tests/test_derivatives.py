"""VJP, JVP, Jacobians and Hessians against their closed forms, and
forward against reverse mode."""

import numpy as np
import pytest

import adrev
from conftest import assert_close

CUBE = "def cube (x : [n]R) : [n]R = map (fun a -> a * a * a) x"
CUBES = "def cubes (x : [n]R) : R = sum (map (fun a -> a * a * a) x)"
POLAR = "def polar (r : R) (t : R) : (R, R) = (r * cos t, r * sin t)"
MIXED = "def mixed (x : R) (y : [n]R) : R = x * x * sum (map (fun a -> a * a) y)"

X = np.array([0.5, -1.5, 2.0])


def test_vjp_of_an_array_result(backend):
    f = adrev.compile(CUBE).function(backend=backend)
    ct = np.array([1.0, -2.0, 0.25])
    value, pulled = f.vjp(ct, x=X)
    assert_close(value, X**3)
    assert_close(pulled["x"], 3 * X**2 * ct)
    _, single = f.vjp(ct, x=X, wrt="x")
    assert_close(single, 3 * X**2 * ct)


def test_jvp_of_an_array_result(backend):
    f = adrev.compile(CUBE).function(backend=backend)
    t = np.array([1.0, 0.0, -1.0])
    value, tangent = f.jvp({"x": t}, x=X)
    assert_close(value, X**3)
    assert_close(tangent, 3 * X**2 * t)


def test_jvp_treats_a_missing_tangent_as_zero(backend):
    f = adrev.compile(MIXED).function(backend=backend)
    y = np.array([1.0, 2.0])
    _, only_x = f.jvp({"x": 1.0}, x=3.0, y=y)
    assert_close(only_x, 2 * 3.0 * np.sum(y**2))
    _, none = f.jvp({}, x=3.0, y=y)
    assert_close(none, 0.0)


@pytest.mark.parametrize("mode", ["forward", "reverse", "auto"])
def test_jacobian_in_every_mode(backend, mode):
    f = adrev.compile(CUBE).function(backend=backend)
    assert_close(f.jacobian(x=X, wrt="x", mode=mode), np.diag(3 * X**2))


def test_jacobian_of_a_tuple_result(backend):
    f = adrev.compile(POLAR).function(backend=backend)
    r, t = 2.0, 0.3
    jac = f.jacobian(r=r, t=t)
    assert_close(jac["r"], (np.cos(t), np.sin(t)))
    assert_close(jac["t"], (-r * np.sin(t), r * np.cos(t)))
    value, pulled = f.vjp((1.0, 0.0), r=r, t=t)
    assert_close(value, (r * np.cos(t), r * np.sin(t)))
    assert_close(pulled["t"], -r * np.sin(t))


def test_hessian_of_one_parameter(backend):
    f = adrev.compile(CUBES).function(backend=backend)
    assert_close(f.hessian(x=X, wrt="x"), np.diag(6 * X))


def test_hessian_blocks_by_parameter_pair(backend):
    f = adrev.compile(MIXED).function(backend=backend)
    x, y = 1.5, np.array([1.0, -2.0, 0.5])
    h = f.hessian(x=x, y=y)
    assert set(h) == {("x", "x"), ("x", "y"), ("y", "x"), ("y", "y")}
    assert_close(h[("x", "x")], 2 * np.sum(y**2))
    assert_close(h[("x", "y")], 4 * x * y)
    assert_close(h[("y", "x")], 4 * x * y)
    assert_close(h[("y", "y")], 2 * x * x * np.eye(3))


def test_forward_and_reverse_jacobians_agree_on_a_wide_program():
    text = "def w (A : [n][m]R) : [n]R = map (fun row -> log (sum (map exp row))) A"
    f = adrev.compile(text).function(backend="eval")
    A = np.random.default_rng(3).normal(size=(3, 4))
    fwd = f.jacobian(A=A, wrt="A", mode="forward")
    rev = f.jacobian(A=A, wrt="A", mode="reverse")
    assert fwd.shape == (3, 3, 4)
    assert_close(fwd, rev)
    softmax = np.exp(A) / np.exp(A).sum(axis=1, keepdims=True)
    for i in range(3):
        expected = np.zeros((3, 4))
        expected[i] = softmax[i]
        assert_close(fwd[i], expected)
