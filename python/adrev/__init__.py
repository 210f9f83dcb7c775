"""adrev: derivatives of array programs, compiled once, called on NumPy arrays.

    import adrev, numpy as np
    prog = adrev.load("fixtures/gmm/program.ad")     # or adrev.compile(text)
    f = prog.function("gmm", backend="c")             # compiled once per request
    value = f(alphas=a, means=m, icf=q, x=x, ...)
    value, grads = f.value_and_grad(wrt=["alphas", "means"], **inputs)

Inputs are keyword arguments named like the entry's parameters: float64
arrays for ``R``, integer arrays for ``Int``, bool arrays for ``Bool``,
Python tuples for tuples, lists for arrays of tuples. Results have the same
shapes. Every failure is an :class:`Error`; docs/python.md has the details.
"""

from ._adrev import ABS_TOL, REL_TOL
from ._errors import CompileError, Error, InputError, InternalError, RunError
from ._api import Function, Program, Stage, compile, load

__all__ = [
    "ABS_TOL",
    "REL_TOL",
    "CompileError",
    "Error",
    "Function",
    "InputError",
    "InternalError",
    "Program",
    "RunError",
    "Stage",
    "compile",
    "load",
]
