"""The Python face of the package: programs, functions and their derivatives.

Everything that touches the compiler or an array's memory is in the Rust
module ``adrev._adrev`` (python/src/): loading, compiling, checking inputs
against the entry's types, calling, converting results. This file only
names things the way Python users expect (JAX's names where they fit) and
shapes the results: a dict by parameter name, or the one result when
``wrt`` names a single parameter as a string.
"""

from __future__ import annotations

import os
from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Sequence, Tuple, Union

from . import _adrev
from ._errors import InputError

Wrt = Union[None, str, Sequence[str]]


class Stage(NamedTuple):
    """One stage boundary of the reverse-mode pipeline (``pipeline --dump``)."""

    stage: str
    """The stage that produced it: ``parse``, ``unf``, ``reverse``, ``unf-inverse``, ``optimize``."""
    file: str
    """The file name ``pipeline --dump`` gives it, e.g. ``20.source-unf.ron``."""
    ir: str
    """The IR's envelope name."""
    text: str
    """The module in the paper's notation."""
    ron: str
    """The module as its RON envelope."""


class Expectations(NamedTuple):
    """What a program's ``-- at``, ``-- value`` and ``-- grad`` comment lines state."""

    at: Dict[str, Any]
    value: Any
    grads: Dict[str, Any]


def load(path: Union[str, os.PathLike]) -> "Program":
    """Loads a program file (``.ad`` text, or any IR's RON file)."""
    return Program(_adrev.Program.load(os.fspath(path)))


def compile(text: str, name: str = "<string>") -> "Program":
    """Parses and type-checks program text; ``name`` is the file name in diagnostics."""
    return Program(_adrev.Program.from_text(name, text))


class Program:
    """A program loaded and type-checked once."""

    def __init__(self, native: "_adrev.Program"):
        self._native = native

    @property
    def definitions(self) -> List[str]:
        """The names of the program's definitions, in order (the last is the default entry)."""
        return self._native.definitions()

    def function(
        self,
        name: Optional[str] = None,
        backend: str = "c",
        *,
        route: str = "unf",
        optimize: bool = True,
        parallel: bool = False,
        checkpoint: str = "off",
    ) -> "Function":
        """The definition ``name`` (default: the last) as a callable function.

        ``backend`` is ``"c"`` (generated C, built with the system compiler
        the first time each kind of derivative is asked for) or ``"eval"``
        (the reference evaluator). ``route`` is how reverse-mode derivatives
        are built: ``"unf"`` (UNF, reverse differentiation, UNF inverse),
        ``"direct"`` or ``"forward"``. ``parallel`` runs large loops of the
        generated C on several threads (results then may differ from the
        evaluator's in the last bits). ``checkpoint`` is how reverse mode
        through UNF keeps a loop's states: ``"off"`` (every state) or
        ``"sqrt"`` (√n checkpoints: the same gradient, bit for bit, in
        O(√n) memory for about twice the time; docs/derivatives.md).
        """
        return Function(
            self._native.function(name, backend, route, optimize, parallel, checkpoint)
        )

    def stages(self, name: Optional[str] = None, wrt: Wrt = None) -> List[Stage]:
        """Every stage boundary of the gradient of ``name``, as text and as RON."""
        return [Stage(*s) for s in self._native.stages(name, _wrt_list(wrt))]

    def expectations(self, name: Optional[str] = None) -> Expectations:
        """The program's expectation comments, read against the types of ``name``."""
        at, value, grads = self._native.expectations(name)
        return Expectations(dict(at), value, dict(grads))


class Function:
    """One entry of a program, compiled once per kind of call and ``wrt``.

    Inputs are keyword arguments named like the entry's parameters, or one
    mapping given first (needed only when a parameter is called ``wrt``,
    ``mode`` or ``inputs``).
    """

    def __init__(self, native: "_adrev.Function"):
        self._native = native

    @property
    def name(self) -> str:
        """The entry's name."""
        return self._native.name

    @property
    def params(self) -> List[Tuple[str, str]]:
        """The entry's parameters: ``(name, type)`` with the type in the language's syntax."""
        return self._native.params()

    @property
    def result(self) -> str:
        """The entry's result type in the language's syntax."""
        return self._native.result()

    @property
    def backend(self) -> str:
        """``"c"`` or ``"eval"``."""
        return self._native.backend

    @property
    def compiled(self) -> int:
        """How many derivative programs this function has compiled so far."""
        return self._native.compiled()

    def __repr__(self) -> str:
        params = " ".join(f"({n} : {t})" for n, t in self.params)
        return f"<adrev.Function {self.name} {params} : {self.result} on {self.backend}>"

    def __call__(self, inputs: Optional[Mapping[str, Any]] = None, /, **kw: Any) -> Any:
        """The entry's value."""
        return self._call("value", None, inputs, kw)["value"]

    def grad(self, inputs: Optional[Mapping[str, Any]] = None, /, *, wrt: Wrt = None, **kw: Any) -> Any:
        """The gradient of a real-valued entry: a dict by parameter, or one array if ``wrt`` is a string."""
        out = self._call("grad", wrt, inputs, kw)
        return _by_name(wrt, out["gradients"])

    def value_and_grad(
        self, inputs: Optional[Mapping[str, Any]] = None, /, *, wrt: Wrt = None, **kw: Any
    ) -> Tuple[Any, Any]:
        """``(value, gradient)``; the gradient as :meth:`grad` gives it."""
        out = self._call("value-and-grad", wrt, inputs, kw)
        return out["value"], _by_name(wrt, out["gradients"])

    def vjp(
        self,
        cotangent: Any,
        inputs: Optional[Mapping[str, Any]] = None,
        /,
        *,
        wrt: Wrt = None,
        **kw: Any,
    ) -> Tuple[Any, Any]:
        """``(value, cotangent pulled back to each parameter)``; ``cotangent`` is shaped like the result."""
        out = self._call("vjp", wrt, inputs, kw, cotangent=cotangent)
        return out["value"], _by_name(wrt, out["gradients"])

    def jvp(
        self,
        tangents: Mapping[str, Any],
        inputs: Optional[Mapping[str, Any]] = None,
        /,
        **kw: Any,
    ) -> Tuple[Any, Any]:
        """``(value, directional derivative)``; ``tangents`` has one entry per parameter."""
        if not isinstance(tangents, Mapping):
            raise InputError(
                f"jvp takes its tangents as a dict by parameter name, not {type(tangents).__name__}"
            )
        out = self._call("jvp", None, inputs, kw, tangents=dict(tangents))
        return out["value"], out["tangent"]

    def jacobian(
        self,
        inputs: Optional[Mapping[str, Any]] = None,
        /,
        *,
        wrt: Wrt = None,
        mode: str = "auto",
        **kw: Any,
    ) -> Any:
        """The Jacobian: per parameter, the result's shape followed by the parameter's.

        ``mode`` is ``"forward"``, ``"reverse"`` or ``"auto"`` (forward when
        the differentiated inputs have at most as many reals as the result).
        """
        out = self._call("jacobian", wrt, inputs, kw, mode=mode)
        return _by_name(wrt, out["jacobian"])

    def hessian(self, inputs: Optional[Mapping[str, Any]] = None, /, *, wrt: Wrt = None, **kw: Any) -> Any:
        """The Hessian of a real-valued entry.

        With ``wrt`` a string, the one block; otherwise a dict by parameter
        pair ``(a, b)`` holding the block of second derivatives by ``a``
        then ``b`` (the shape of ``a`` followed by the shape of ``b``).
        """
        out = self._call("hessian", wrt, inputs, kw)
        blocks = {tuple(pair): block for pair, block in out["hessian"]}
        if isinstance(wrt, str):
            return blocks[(wrt, wrt)]
        return blocks

    def _call(
        self,
        kind: str,
        wrt: Wrt,
        inputs: Optional[Mapping[str, Any]],
        kw: Dict[str, Any],
        *,
        tangents: Optional[Dict[str, Any]] = None,
        cotangent: Any = None,
        mode: str = "auto",
    ) -> Dict[str, Any]:
        return self._native.call(
            kind,
            _wrt_list(wrt),
            _merge(inputs, kw),
            tangents,
            cotangent,
            mode,
        )



def _merge(inputs: Optional[Mapping[str, Any]], kw: Dict[str, Any]) -> Dict[str, Any]:
    if inputs is None:
        return kw
    if not isinstance(inputs, Mapping):
        raise InputError(
            f"inputs are keyword arguments or one dict by parameter name, not {type(inputs).__name__}"
        )
    both = set(inputs).intersection(kw)
    if both:
        raise InputError(f"`{sorted(both)[0]}` is given both in the dict and as a keyword")
    return {**inputs, **kw}


def _wrt_list(wrt: Wrt) -> Optional[List[str]]:
    if wrt is None:
        return None
    if isinstance(wrt, str):
        return [wrt]
    names = list(wrt)
    if not all(isinstance(n, str) for n in names):
        raise InputError("wrt is a parameter name or a list of parameter names")
    return names


def _by_name(wrt: Wrt, pairs: List[Tuple[str, Any]]) -> Any:
    if isinstance(wrt, str):
        return pairs[0][1]
    return dict(pairs)
