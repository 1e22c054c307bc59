"""A patch under `if hasattr(X, "n"):` with no other path is no tolerance: it is stale.

Where upstream drops the name, such a patch silently stops applying (unsloth_zoo's
`_replace_with_bnb_linear` patch on transformers 5: vision towers got quantized), the drift
canary is for. The guard tolerates the name's absence only where the client does something
else without it: an `else` that does work, or code after a body that returns or continues.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from canary.scan.downstream.guards import Guard, Resolver
from canary.scan.downstream.imports import Ref
from canary.scan.downstream.node_values import attribute_call

# a body ending so leaves the code after the `if` as the path taken without the name
_LEAVES = (ast.Return, ast.Continue, ast.Break)


def needed(
    node: ast.If, guards: list[Guard], resolve: Resolver, lookup: Callable[[str], object | None]
) -> list[Guard]:
    """The body's `guards` without the hasattr tolerance of a name the body patches (or a
    method of it), when the name's absence leaves the client no other path."""
    if _other_path(node):
        return guards
    patched = _patched(node.body, resolve, lookup)
    return [
        g
        for g in guards
        if not (g.kind == "tolerates" and g.ref and any(g.covers(ref) for ref in patched))
    ]


def _other_path(node: ast.If) -> bool:
    """Whether something runs in place of the body: an else that neither only passes nor
    raises, or the code after a body that returns, continues or breaks."""
    orelse = [s for s in node.orelse if not isinstance(s, ast.Pass)]
    if orelse and not isinstance(orelse[-1], ast.Raise):
        return True
    return bool(node.body) and isinstance(node.body[-1], _LEAVES)


def _patched(
    body: list[ast.stmt], resolve: Resolver, lookup: Callable[[str], object | None]
) -> list[Ref]:
    """The upstream objects `body` assigns (`X.n = f`, `X.n += ...`, `setattr(X, "n", f)`)."""
    found: list[Ref] = []
    for node in (inner for statement in body for inner in ast.walk(statement)):
        if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found += [r for t in targets if isinstance(t, ast.Attribute) and (r := resolve(t))]
        elif isinstance(node, ast.Call) and (call := attribute_call(node, lookup)):
            builtin, owner, name = call
            if builtin == "setattr" and (ref := resolve(owner)):
                found.append(ref.child(name))
    return found
