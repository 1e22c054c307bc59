"""What a module-level name is bound to once the module has run: Python keeps the last binding
made in execution order, so a `def` followed by `f = _other`, `from x import f` or `del f` is
not what an import of `f` finds.

A binding whose statement starts at column 0 is made whenever the module runs; one indented
(under `if`, `try`, `with`, ...) may or may not be. So the bindings that may stand at the end
are the last unconditional one and every conditional one after it (alternatives, as if/else
branches are); none when that last one is a `del` with nothing after it. Bindings only under
`if TYPE_CHECKING:` do not run.
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Iterable

from canary.analysis.model import Binding, ModuleInfo, Span
from canary.analysis.parselock import parse_locked


def standing(module: ModuleInfo, name: str) -> tuple[Binding, ...]:
    """The bindings of `name` that may hold once `module` has run, in order (the first is the
    last unconditional one, when there is one); empty when the name ends unbound."""
    bindings = sorted(
        (b for b in module.bindings.get(name, []) if not b.typing_only),
        key=lambda b: b.span.start,
    )
    if len(bindings) < 2 and not (bindings and bindings[0].kind == "del"):
        return tuple(bindings)  # the common case: one binding, nothing to order
    last = 0
    for at, binding in enumerate(bindings):
        if unconditional(module, binding):
            last = at
    alive = bindings[last:]
    if alive and alive[0].kind == "del":
        alive = alive[1:]
    return tuple(b for b in alive if b.kind != "del")


def may_rebind(module: ModuleInfo, name: str) -> bool:
    """Whether a statement at column 0 might bind `name` besides its `def`/`class`: one that
    starts with it (`name = ...`), or a `del`, `from` or `import` naming it (a superset, from
    the words of the module's lines at column 0), so a check of a name defined once does not
    parse every statement that mentions it."""
    return module.may_bind_at_top(name)


def unconditional(module: ModuleInfo, binding: Binding) -> bool:
    """Whether the binding's statement stands at the module's top level (column 0)."""
    return at_top(module, binding.span.start)


def at_top(module: ModuleInfo, line: int) -> bool:
    """Whether a statement starting on `line` stands at the module's top level (column 0): it
    runs whenever the module does."""
    first = module.segment(Span(line, line))
    return bool(first) and not first[0].isspace()


def stars_below(module: ModuleInfo, starts: Iterable[int]) -> list[tuple[str, int]]:
    """The star imports (module, line) at the module's top level below every binding of a name
    (the lines it starts on: `starts`), newest first: each binds the name again when its
    module exports it. (One above a binding made under `if`/`try` is not counted: that binding
    stands as an alternative, as branches do.)"""
    lines = list(starts)
    after = max([0, *lines])
    if not module.star_lines or max(module.star_lines) <= after:
        return []  # the common case: no star import below the name's bindings
    below = zip(module.star_imports, module.star_lines, strict=True)
    return sorted(
        ((origin, line) for origin, line in below if line > after and at_top(module, line)),
        key=lambda star: -star[1],
    )


def deleted_at(module: ModuleInfo, name: str) -> int | None:
    """The line of the `del` that leaves `name` unbound once the module has run, if one does."""
    bindings = [b for b in module.bindings.get(name, []) if not b.typing_only]
    if standing(module, name) or not bindings:
        return None
    dels = [b.span.start for b in bindings if b.kind == "del"]
    return max(dels) if dels else None


def assigned_value(module: ModuleInfo, binding: Binding, name: str) -> ast.expr | None:
    """The expression an assignment binds `name` to (`name = VALUE`), None when the statement
    is not a plain assignment of it (an augmented one, a tuple target, an annotation alone)."""
    text = textwrap.dedent(module.segment(binding.span))
    try:
        tree = parse_locked(text, module.path)
    except (SyntaxError, ValueError):
        return None
    node = tree.body[0] if len(tree.body) == 1 else None
    if isinstance(node, ast.Assign) and any(
        isinstance(t, ast.Name) and t.id == name for t in node.targets
    ):
        return node.value
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return node.value
    return None


def dotted(node: ast.expr | None) -> str | None:
    """`a.b.C` as text when `node` is a name or an attribute chain of names, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


def wraps_itself(value: ast.expr | None, name: str) -> bool:
    """`f = decorate(f)` or `f = decorate(...)(f)`: the value is the name's own definition
    wrapped, which counts as a decorator does."""
    return isinstance(value, ast.Call) and any(
        isinstance(arg, ast.Name) and arg.id == name for arg in value.args
    )
