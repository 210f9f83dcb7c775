"""Shared helpers of the package's tests (pytest, run by .ci/run)."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

import adrev

REPO = pathlib.Path(__file__).resolve().parents[2]
FIXTURES = REPO / "fixtures"

BACKENDS = ["eval", "c"]


def fixture_programs():
    """Every fixture program with expectation comments (fixtures/*/program.ad)."""
    return sorted(p.parent.name for p in FIXTURES.glob("*/program.ad"))


def assert_close(got, want, rel=adrev.REL_TOL, abs_=adrev.ABS_TOL, where="value"):
    """Equality up to language.md's tolerance, component by component;
    the Python types and array shapes must agree exactly."""
    if isinstance(want, tuple):
        assert isinstance(got, tuple), f"{where}: expected a tuple, got {type(got).__name__}"
        assert len(got) == len(want), f"{where}: {len(got)} components, expected {len(want)}"
        for i, (g, w) in enumerate(zip(got, want)):
            assert_close(g, w, rel, abs_, f"{where}.{i}")
    elif isinstance(want, list):
        assert isinstance(got, list), f"{where}: expected a list, got {type(got).__name__}"
        assert len(got) == len(want), f"{where}: {len(got)} elements, expected {len(want)}"
        for i, (g, w) in enumerate(zip(got, want)):
            assert_close(g, w, rel, abs_, f"{where}[{i}]")
    elif isinstance(want, np.ndarray):
        assert isinstance(got, np.ndarray), f"{where}: expected an array, got {type(got).__name__}"
        assert got.dtype == want.dtype, f"{where}: dtype {got.dtype}, expected {want.dtype}"
        assert got.shape == want.shape, f"{where}: shape {got.shape}, expected {want.shape}"
        if want.dtype == np.float64:
            np.testing.assert_allclose(got, want, rtol=rel, atol=abs_, equal_nan=True, err_msg=where)
        else:
            np.testing.assert_array_equal(got, want, err_msg=where)
    elif isinstance(want, float):
        assert isinstance(got, float), f"{where}: expected a float, got {type(got).__name__}"
        np.testing.assert_allclose(got, want, rtol=rel, atol=abs_, equal_nan=True, err_msg=where)
    else:
        assert type(got) is type(want) and got == want, f"{where}: {got!r}, expected {want!r}"


@pytest.fixture(params=BACKENDS)
def backend(request):
    """Each test that takes it runs on the evaluator and on generated C."""
    return request.param
