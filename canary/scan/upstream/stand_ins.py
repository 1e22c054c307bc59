"""Stand-in subclasses: a class left at an old import path that only points to the real one.

An upstream that moves a class often leaves a subclass behind under the old name, whose body
says nothing but "this moved" (trl 1.0-1.15: `trl.trainer.kto_trainer.KTOTrainer` only warns
and subclasses `trl.experimental.kto`'s). A rewriter of "the method of the class in this
module" then reaches the real class's method through it, as `getattr(KTOTrainer, name)` does
at run time; a subclass with a body of its own is a class of its own and is not followed.
"""

from __future__ import annotations

import ast
import textwrap

from canary.analysis.parselock import parse_locked


def is_stand_in(text: str) -> bool:
    """Whether the class whose source is `text` holds only a docstring, `pass`/`...`, warnings
    and an `__init__` that warns and hands over to its base."""
    try:
        tree = parse_locked(textwrap.dedent(text))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    classes = [node for node in tree.body if isinstance(node, ast.ClassDef)]
    if len(classes) != 1 or not classes[0].bases:
        return False
    for statement in classes[0].body:
        if isinstance(statement, ast.FunctionDef) and statement.name == "__init__":
            if not all(_says_nothing(s) or _hands_over(s) for s in statement.body):
                return False
        elif not _says_nothing(statement):
            return False
    return True


def _says_nothing(statement: ast.stmt) -> bool:
    """A docstring, `pass`, `...`, or a warning (`warnings.warn(...)`, `logger.warning(...)`)."""
    if isinstance(statement, ast.Pass):
        return True
    if not isinstance(statement, ast.Expr):
        return False
    value = statement.value
    if isinstance(value, ast.Constant):
        return isinstance(value.value, str) or value.value is Ellipsis
    func = value.func if isinstance(value, ast.Call) else None
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return name in ("warn", "warning", "warning_once", "deprecate")


def _hands_over(statement: ast.stmt) -> bool:
    """`super().__init__(*args, **kwargs)`, with whatever it passes."""
    call = statement.value if isinstance(statement, ast.Expr) else None
    func = call.func if isinstance(call, ast.Call) else None
    return (
        isinstance(func, ast.Attribute)
        and func.attr == "__init__"
        and isinstance(func.value, ast.Call)
        and isinstance(func.value.func, ast.Name)
        and func.value.func.id == "super"
    )
