"""A large input reaches generated C without a copy: the peak resident
memory of the process grows by much less than the array's size during a
call on 10^7 float64 (80 MB), for a value and for a derivative.

(A large *result* is still converted through the evaluator's value tree,
about ten times its size: docs/python.md, "Limits".)"""


import numpy as np
import pytest

import adrev

N = 10**7
MB = 1 << 20


def peak_rss():
    """The process's peak resident set size in bytes (VmHWM; Linux, the
    platform the project builds and tests on)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM in /proc/self/status")


def reset_peak():
    """Sets the peak to the current resident size (Linux 4.0+)."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def test_a_large_input_is_not_copied():
    f = adrev.compile("def total (x : [n]R) : R = sum (map (fun a -> a * a) x)").function(backend="c")
    f(x=np.ones(3))  # compiles (cc) outside the measurement
    x = np.random.default_rng(0).random(N)
    reset_peak()
    before = peak_rss()
    value = f(x=x)
    grown = peak_rss() - before
    assert value == pytest.approx(float(x @ x), rel=1e-9)
    assert grown < 0.25 * x.nbytes, f"the call grew the peak by {grown / MB:.0f} MB for an {x.nbytes / MB:.0f} MB input"


def test_a_large_input_of_a_derivative_is_not_copied():
    text = "def scaled (x : [n]R) (s : R) : R = sum (map (fun a -> s * a * a) x)"
    f = adrev.compile(text).function(backend="c")
    f.grad(x=np.ones(3), s=1.0, wrt="s")
    x = np.random.default_rng(1).random(N)
    reset_peak()
    before = peak_rss()
    g = f.grad(x=x, s=2.0, wrt="s")
    grown = peak_rss() - before
    assert g == pytest.approx(float(x @ x), rel=1e-9)
    assert grown < 0.25 * x.nbytes, f"the call grew the peak by {grown / MB:.0f} MB for an {x.nbytes / MB:.0f} MB input"
