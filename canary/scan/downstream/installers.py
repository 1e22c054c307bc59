"""Helpers of the package that install a replacement over an upstream attribute, and the
replacements they are handed (issue 25 items 2 and 5).

`patch_function(GptOssAttention, "forward", forward)` with `def patch_function(target_obj,
attr_name, new_func)` doing `getattr(target_obj, attr_name)` patches GptOssAttention.forward as
`GptOssAttention.forward = forward` would; such a helper (unsloth_zoo's) installs a replacement
only where its signature matches upstream's, so the names the replacement takes are a contract
(`params`). Handed a list of variants (`functions.append(forward)` after each `def forward`), the
helper installs the one that matches: the names every variant takes are needed whichever it is.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

from canary.scan.downstream.node_values import installed, local_functions, wrapper_params
from canary.scan.downstream.reaching import Function, reaching
from canary.scan.downstream.source_helpers import own_statements
from canary.scan.downstream.spelled import one_spelled

#: the builtins an installer reads or sets its target's attribute with: a file that spells
#: neither defines no installer (the first pass looks for none there)
INSTALLING = frozenset({"getattr", "setattr"})


@dataclass(frozen=True)
class Installer:
    """A function that sets its parameter `name` of `target` to `new`: (position, parameter
    name) of each."""

    target: tuple[int, str]
    name: tuple[int, str]
    new: tuple[int, str]


def installer(fn: Function) -> Installer | None:
    """What `fn` installs, when it reads or sets an attribute of one parameter named by another
    (`getattr(target_obj, attr_name)`, `setattr(target_obj, attr_name, ...)`) and takes the
    replacement as the parameter after the name's; None otherwise, or when it rebinds them."""
    positional = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)]
    rebound: set[str] = set()
    accesses: list[ast.Call] = []  # the body walked once, for both (in the walk's order)
    for node in own_statements(fn.body):
        if isinstance(node, ast.Assign):
            rebound.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in INSTALLING
            and len(node.args) >= 2
            and all(isinstance(a, ast.Name) for a in node.args[:2])
        ):
            accesses.append(node)
    for node in accesses:
        target, name = (a.id for a in node.args[:2] if isinstance(a, ast.Name))
        if target in positional and name in positional and not {target, name} & rebound:
            at = positional.index(name) + 1
            if at < len(positional) and positional[at] != target:
                where = positional.index(target), positional.index(name)
                return Installer((where[0], target), (where[1], name), (at, positional[at]))
    return None


def _argument(call: ast.Call, slot: tuple[int, str]) -> ast.expr | None:
    if any(isinstance(a, ast.Starred) for a in call.args[: slot[0] + 1]):
        return None
    if slot[0] < len(call.args):
        return call.args[slot[0]]
    return next((k.value for k in call.keywords if k.arg == slot[1]), None)


def _common(variants: list[tuple[str, ...]]) -> tuple[str, ...]:
    """The names every variant takes, in the first one's order."""
    if not variants:
        return ()
    return tuple(n for n in variants[0] if all(n in v for v in variants[1:]))


class Replacements:
    """The functions a patch installs, read from the file's tree: a def (those of that name
    reaching the patch in the same function, reaching.py), a lambda, or a list of defs."""

    def __init__(self, tree: ast.Module) -> None:
        self._tree = tree
        # the nodes of each def's own body (of the module's: None), not of the defs in it
        self._scope: dict[int, Function | None] = {}
        self._nodes: dict[Function | None, list[ast.AST]] = {None: []}
        pending: list[tuple[ast.AST, Function | None]] = [(tree, None)]
        while pending:
            node, scope = pending.pop()
            for child in ast.iter_child_nodes(node):
                self._scope[id(child)] = scope
                self._nodes[scope].append(child)
                inner = child if isinstance(child, Function) else scope
                self._nodes.setdefault(inner, [])
                pending.append((child, inner))

    @cached_property
    def _functions(self) -> dict[str, Function]:
        """The file's own functions, read on the first patch that needs them."""
        return local_functions(self._tree)

    def _nodes_before(self, at: ast.AST) -> list[ast.AST]:
        """The nodes of the def holding `at` (or of the module) above it, in source order."""
        line = getattr(at, "lineno", 0)
        nodes = self._nodes.get(self._scope.get(id(at)), [])
        found = [n for n in nodes if 0 < getattr(n, "lineno", 0) < line]
        return sorted(found, key=lambda n: (getattr(n, "lineno", 0), getattr(n, "col_offset", 0)))

    def _defs(
        self, name: str, at: ast.AST, lookup: Callable[[str], object | None]
    ) -> list[Function]:
        """The defs of `name` that may be bound at `at`: those of its scope reaching it (one
        per branch of an `if` above), else the file's def of that name."""
        scope = self._scope.get(id(at))
        local = reaching(scope.body if scope else self._tree.body, name, at)
        if local:
            return local
        found = installed(ast.Name(name), self._functions, lookup)
        return [found] if isinstance(found, Function) else []

    def _listed(self, name: str, at: ast.AST) -> list[tuple[str, ast.AST]] | None:
        """The names a list bound to `name` holds at `at` (`fs = [a, b]`, then `fs.append(c)`),
        each with where it was put in (a name stands for the def of it above that)."""
        listed: list[tuple[str, ast.AST]] | None = None
        for node in self._nodes_before(at):
            if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == name for t in node.targets
            ):
                items = node.value.elts if isinstance(node.value, ast.List) else []
                names: list[tuple[str, ast.AST]] = [
                    (e.id, node) for e in items if isinstance(e, ast.Name)
                ]
                listed = names if isinstance(node.value, ast.List) else None
            elif (
                listed is not None
                and isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "append"
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == name
                and len(node.args) == 1
                and isinstance(node.args[0], ast.Name)
            ):
                listed.append((node.args[0].id, node))
        return listed

    def variants(
        self, value: ast.expr | None, at: ast.AST, lookup: Callable[[str], object | None]
    ) -> list[Function | ast.Lambda]:
        """The functions the replacement `value` installed at `at` may be (every variant of a
        list, every def reaching it); empty when one of them is not known."""
        if isinstance(value, ast.Lambda):
            return [value]
        if not isinstance(value, ast.Name):
            found = installed(value, self._functions, lookup)
            return [found] if found is not None else []
        listed = self._listed(value.id, at)
        named = listed if listed is not None else [(value.id, at)]
        defs = [self._defs(n, put, lookup) for n, put in named]
        if not defs or not all(defs):
            return []
        return [d for found in defs for d in found]

    def params(
        self, value: ast.expr | None, at: ast.AST, lookup: Callable[[str], object | None]
    ) -> tuple[str, ...]:
        """The names the replacement `value` installed at `at` takes (every variant)."""
        return _common([wrapper_params(f) for f in self.variants(value, at, lookup)])

    def installs(
        self,
        call: ast.Call,
        installer_of: Callable[[str], Installer | None],
        lookup: Callable[[str], object | None],
    ) -> tuple[ast.expr, str, tuple[str, ...], bool] | None:
        """(the object, the attribute name, the names the replacement takes, whether it takes
        anything as well) a call of one of the package's installers (`installer_of` its
        name) patches."""
        func = call.func
        found = installer_of(func.id) if isinstance(func, ast.Name) else None
        if found is None or not isinstance(func, ast.Name) or lookup(func.id) is not None:
            return None
        target, name = _argument(call, found.target), _argument(call, found.name)
        spelled = one_spelled(name, lookup) if name is not None else None
        if target is None or spelled is None:
            return None
        variants = self.variants(_argument(call, found.new), call, lookup)
        if _forced(call):
            return target, spelled, (), False
        loose = any(_takes_anything(f) for f in variants)
        return target, spelled, _common([wrapper_params(f) for f in variants]), loose


def _forced(call: ast.Call) -> bool:
    """`patch_function(X, "f", g, force=True)`: the helper installs without matching."""
    return any(
        k.arg == "force" and isinstance(k.value, ast.Constant) and k.value.value is True
        for k in call.keywords
    )


def _takes_anything(fn: Function | ast.Lambda) -> bool:
    """A replacement taking `*args` and `**kwargs` fits any signature upstream gives the
    function: the helper installs it whatever names upstream has (unsloth_zoo's checks only
    that upstream's names it lacks come last), so a name of its own upstream dropped is no
    failure to install, only worth a look (severity info: dropped, or renamed?)."""
    return fn.args.vararg is not None and fn.args.kwarg is not None
