"""Whether a module compiles at all: one that does not cannot be imported, whatever its other
statements hold, so a check of it is `error` naming the line, never `pass`.

A check reads a few statements of a module (canary.analysis.sparse), so a syntax error in the
others is not seen by its index. Compiling the whole text costs about as much as parsing it
whole, which is what reading by statements saved; so the answer is kept by the text's digest
(canary.analysis.modules: in the run, and in the cache across runs), paid once per file.

`compile` turns text into a code object and runs none of it. A text this Python cannot compile
is tried again with syntax newer than it rewritten (canary.analysis.newer); an error inside an
f-string is not judged under a Python older than 3.12, where PEP 701 made nested quotes valid:
the upstream may be valid where its users run it.
"""

from __future__ import annotations

import sys

from canary.analysis.parselock import compile_locked

#: what the answer depends on besides the text: the Python that compiles it, and this reading
#: of it (raised when it changes)
KEY = f"compiles:1:{sys.version_info[0]}.{sys.version_info[1]}"
_FSTRING_WHERE_NEWER = sys.version_info < (3, 12)


#: why a text does not compile: its line (0 when none is named) and the compiler's message
Uncompiled = tuple[int, str]


def compile_error(text: str) -> Uncompiled | None:
    """Why `text` does not compile; None when it does."""
    try:
        compile_locked(text, "<upstream>")
        return None
    except SyntaxError as exc:
        first = exc
    except (RecursionError, MemoryError, ValueError) as exc:
        return 0, f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    from canary.analysis.newer import older_syntax  # it reads through the parser's module

    older = older_syntax(text) if "\0" not in text else None
    if older is not None:
        try:
            compile_locked(older, "<upstream>")
            return None
        except (SyntaxError, RecursionError, MemoryError, ValueError):
            pass
    if _FSTRING_WHERE_NEWER and (first.msg or "").startswith("f-string"):
        return None  # maybe PEP 701's nested quotes: valid from Python 3.12 on
    return first.lineno or 0, first.msg or "invalid syntax"


def said(path: str, why: Uncompiled) -> str:
    """The error a check of the module at `path` that does not compile reports."""
    line, message = why
    where = f"{path}:{line}" if line else path
    return f"{where}: does not compile, so it cannot be imported: {message}"
