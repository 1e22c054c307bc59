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

Without the comment, a registry is recognised by how the package uses it
(`inferred_registries`): looked up by a name the package also formats into an upstream module
path (`eval(f"trl.trainer.{trainer_file}")`, `importlib.import_module("trl.trainer." + f)`),
with each entry of what the lookup gives called with two arguments, as a rewriter is
(`for edit in RL_FUNCTIONS.get(trainer_file, []): source = edit(name, source)`).
"""

from __future__ import annotations

import ast
import re

from canary.scan.downstream.source_helpers import own_statements

_DECLARATION = re.compile(r"#\s*canary:\s*rewrites\s+(?P<module>[A-Za-z_][\w.]*\{key\}[\w.]*)")
_PREFIX = re.compile(r"^[A-Za-z_][\w.]*\.$")
# calls that take a dotted path as text: what their formatted names stand for
_PATH_TAKERS = frozenset({"eval", "exec", "import_module"})
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


def rewriter_params(
    fn: ast.FunctionDef | ast.AsyncFunctionDef, module: str | None
) -> tuple[str, str, str] | None:
    """(selector, source parameter, module) of a function a registry holds for `module`."""
    params = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)]
    return (params[0], params[1], module) if module and len(params) >= 2 else None


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


def _formatted(call: ast.Call) -> tuple[str, str] | None:
    """(name, "pkg.mod.{key}") for `eval(f"pkg.mod.{name}...")` or `import_module("pkg.mod." +
    name)`: the name holds the last part of a module path under pkg.mod."""
    func = call.func
    called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
    if called not in _PATH_TAKERS or not call.args:
        return None
    text = call.args[0]
    if isinstance(text, ast.JoinedStr) and len(text.values) >= 2:
        head, value = text.values[0], text.values[1]
        name = value.value if isinstance(value, ast.FormattedValue) else None
    elif isinstance(text, ast.BinOp) and isinstance(text.op, ast.Add):
        head, name = text.left, text.right
    else:
        return None
    prefix = head.value if isinstance(head, ast.Constant) else None
    if not (isinstance(prefix, str) and _PREFIX.match(prefix) and isinstance(name, ast.Name)):
        return None
    return name.id, prefix + "{key}"


def _lookup(expr: ast.expr) -> tuple[str, str] | None:
    """(registry, key name) for `R.get(key, ...)` or `R[key]`."""
    if (
        isinstance(expr, ast.Call)
        and isinstance(expr.func, ast.Attribute)
        and expr.func.attr == "get"
        and isinstance(expr.func.value, ast.Name)
        and expr.args
        and isinstance(expr.args[0], ast.Name)
    ):
        return expr.func.value.id, expr.args[0].id
    if (
        isinstance(expr, ast.Subscript)
        and isinstance(expr.value, ast.Name)
        and isinstance(expr.slice, ast.Name)
    ):
        return expr.value.id, expr.slice.id
    return None


def _applied(loop: ast.For, looked_up: dict[str, tuple[str, str]]) -> tuple[str, str] | None:
    """(registry, key name) when the loop goes through a registry's entries and calls each
    with two arguments."""
    if not isinstance(loop.target, ast.Name):
        return None
    iterated = loop.iter
    found = looked_up.get(iterated.id) if isinstance(iterated, ast.Name) else _lookup(iterated)
    if found is None:
        return None
    entry = loop.target.id
    for node in own_statements(loop.body):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == entry
            and len(node.args) == 2
        ):
            return found
    return None


def inferred_registries(tree: ast.Module) -> dict[str, str]:
    """Registry name -> module template, for the registries of rewriters the file applies."""
    templates: dict[str, str | None] = {}
    for node in ast.walk(tree):
        formatted = _formatted(node) if isinstance(node, ast.Call) else None
        if formatted:
            name, template = formatted
            templates[name] = template if templates.get(name, template) == template else None
    found: dict[str, str] = {}
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        looked_up: dict[str, tuple[str, str]] = {}
        for node in own_statements(fn.body):
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target, lookup = node.targets[0], _lookup(node.value)
                if isinstance(target, ast.Name) and lookup:
                    looked_up[target.id] = lookup
        for node in own_statements(fn.body):
            applied = _applied(node, looked_up) if isinstance(node, ast.For) else None
            module = templates.get(applied[1]) if applied else None
            if applied and module:
                found[applied[0]] = module
    return found
