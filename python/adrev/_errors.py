"""The exceptions of the package (raised by the Rust module as well).

The compiler renders its diagnostics (``file:line:col``, the source line,
a caret); an exception carries that text whole as :attr:`Error.message`
and, where the diagnostic has a position, its file, line and column.
"""

from __future__ import annotations

import re
from typing import Optional

# codespan's location line: "  ┌─ fixtures/dot/program.ad:9:3".
_LOCATION = re.compile(r"┌─ (?P<file>.*):(?P<line>\d+):(?P<column>\d+)\s*$", re.MULTILINE)


class Error(Exception):
    """Every failure of the package.

    ``message`` is the compiler's rendered diagnostic; ``file``, ``line``
    and ``column`` (1-based) say where in the program it points, or are
    ``None`` when it points nowhere in the program text.
    """

    def __init__(self, message: str):
        super().__init__(message.rstrip("\n"))
        self.message: str = message
        found = _LOCATION.search(message)
        self.file: Optional[str] = found.group("file") if found else None
        self.line: Optional[int] = int(found.group("line")) if found else None
        self.column: Optional[int] = int(found.group("column")) if found else None


class CompileError(Error):
    """The program or the request is wrong: a syntax or type error, an unknown
    entry or parameter, a construct the chosen backend cannot compile."""


class InputError(Error, ValueError):
    """The inputs of a call are wrong: a missing or unknown name, a wrong
    Python type, dtype, number of dimensions or size."""


class RunError(Error):
    """The program failed while running on the given inputs (an index out of
    range, an integer overflow, a size that does not match)."""


class InternalError(Error):
    """A bug of the compiler (a verifier refused a pass's output, or the Rust
    code panicked). Please report it with the program and the inputs."""
