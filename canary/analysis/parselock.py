"""The one lock every parse of text by `ast` in a run takes.

CPython 3.11 keeps ast.parse's recursion counter in interpreter-wide state: when a GC finalizer
lets the GIL switch mid-parse and another thread parses too, the parse fails ("SystemError: AST
constructor recursion depth mismatch"). Parsing holds the GIL anyway: one at a time costs
nothing, and one unlocked parse beside a locked one is enough to fail either (seen: a method's
body parsed for its attributes failed a neighbouring release's index, an error for a pass).
"""

from __future__ import annotations

import ast
import symtable
import threading

_PARSE_LOCK = threading.Lock()


def parse_locked(source: str | bytes, filename: str = "<unknown>") -> ast.Module:
    """`ast.parse(source, filename)`, one at a time across the process's threads; a text this
    Python cannot parse is parsed again with syntax newer than it rewritten in place
    (canary.analysis.newer: the Python that runs the upstream reads it), else its first error
    is raised."""
    try:
        with _PARSE_LOCK:
            return ast.parse(source, filename=filename)
    except SyntaxError:
        from canary.analysis.newer import older_syntax  # it parses through this module

        text = source.decode() if isinstance(source, bytes) else source
        older = older_syntax(text) if "\0" not in text else None
        if older is None:
            raise
        try:
            with _PARSE_LOCK:
                return ast.parse(older, filename=filename)
        except SyntaxError:
            pass
        raise


def compile_locked(source: str, filename: str) -> None:
    """`compile(source, filename, "exec")` under the same lock (it parses too), the code object
    dropped: whether the text compiles is all that is asked; nothing of it runs."""
    with _PARSE_LOCK:
        compile(source, filename, "exec", dont_inherit=True)


def symtable_locked(source: str) -> symtable.SymbolTable:
    """`symtable.symtable(source)` (the compiler's scope pass, which parses) under the same lock."""
    with _PARSE_LOCK:
        return symtable.symtable(source, "<unknown>", "exec")
