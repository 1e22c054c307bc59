"""Registries of source rewriters, which scan learns about from one comment.

A library may keep its rewriters in a registry keyed by upstream names, applied later to
sources it reads dynamically (unsloth: `RL_FUNCTIONS["grpo_trainer"].append(fix)`, each
`fix(function_name, function)` rewriting the source of one method of the trainer class in
`trl.trainer.grpo_trainer`). Nothing static links the key to the module, so the downstream says
it once, on the line that creates the registry (or the line above it):

    RL_FUNCTIONS = defaultdict(list)  # canary: rewrites trl.trainer.{key}

Every function registered under a key (`.append(f)`, `.extend([f, g])`, `[key] = [f]`,
`[key] += [f]`) then has its second parameter bound to the source of that module; where the
rewriter tests its first parameter against a method name (`if function_name != "training_step":
return function`, `if function_name == "forward":`), to the source of that method of the class
in the module that defines it.
"""

from __future__ import annotations

import ast
import re

_DECLARATION = re.compile(r"#\s*canary:\s*rewrites\s+(?P<module>[A-Za-z_][\w.]*\{key\}[\w.]*)")
_ASSIGNED = re.compile(r"^\s*(?P<name>[A-Za-z_]\w*)\s*(?::[^=]*)?=")

#: the path part that stands for "the class of this module that defines the method that follows"
ANY_CLASS = "*"


def declared_registries(text: str) -> dict[str, str]:
    """Registry name -> module template ("trl.trainer.{key}") from `# canary: rewrites` comments."""
    found: dict[str, str] = {}
    lines = text.splitlines()
    for number, line in enumerate(lines):
        declared = _DECLARATION.search(line)
        if declared is None:
            continue
        for candidate in (line, lines[number + 1] if number + 1 < len(lines) else ""):
            assigned = _ASSIGNED.match(candidate)
            if assigned:
                found[assigned["name"]] = declared["module"]
                break
    return found


def _key(target: ast.expr, registries: dict[str, str]) -> str | None:
    """The module `NAME["key"]` stands for, when NAME is a declared registry."""
    if not (
        isinstance(target, ast.Subscript)
        and isinstance(target.value, ast.Name)
        and target.value.id in registries
        and isinstance(target.slice, ast.Constant)
        and isinstance(target.slice.value, str)
    ):
        return None
    return registries[target.value.id].format(key=target.slice.value)


def _names(values: list[ast.expr]) -> list[str]:
    found = []
    for value in values:
        elements = value.elts if isinstance(value, ast.List | ast.Tuple) else [value]
        found += [e.id for e in elements if isinstance(e, ast.Name)]
    return found


def registrations(node: ast.AST, registries: dict[str, str]) -> list[tuple[str, str]]:
    """(function name, module) pairs a statement registers into a declared registry."""
    if not registries:
        return []
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        module = _key(node.func.value, registries)
        if module and node.func.attr in ("append", "extend", "insert"):
            values = node.args[1:] if node.func.attr == "insert" else node.args
            return [(name, module) for name in _names(values)]
    if isinstance(node, ast.Assign | ast.AugAssign):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        modules = [m for m in (_key(t, registries) for t in targets) if m]
        return [(name, m) for m in modules for name in _names([node.value])]
    return []


def selected_methods(test: ast.expr, selector: str) -> tuple[tuple[str, ...], bool] | None:
    """The method names `test` compares the selector parameter with, and whether the test is
    true for them (`== "x"`, `in (...)`) or false (`!= "x"`, `not in`); an `or` is read by its
    first comparison (`if name != "x" or already_done: return`)."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
        return selected_methods(test.values[0], selector)
    if not (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.left, ast.Name)
        and test.left.id == selector
    ):
        return None
    op, right = test.ops[0], test.comparators[0]
    elements = right.elts if isinstance(right, ast.Tuple | ast.List | ast.Set) else [right]
    names = tuple(
        e.value for e in elements if isinstance(e, ast.Constant) and isinstance(e.value, str)
    )
    if not names:
        return None
    if isinstance(op, ast.Eq | ast.In):
        return names, True
    if isinstance(op, ast.NotEq | ast.NotIn):
        return names, False
    return None
