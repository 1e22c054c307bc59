"""A test of an upstream's version, spelled out whatever names it goes through.

Clients rarely compare `Version(trl.__version__)` in the `if` itself. They bind the comparison
to a flag (`IS_NEW_TRL = ... >= Version("0.20.0")`, or a local, `needed = v ==
version.parse("0.20.0")`), hold the version in a name first (`TRL_VERSION =
version.parse(importlib.metadata.version("trl"))`), or call a helper of their own whose body is
the comparison (LLaMA-Factory's `is_transformers_version_greater_than("4.48.0")` over
`_get_package_version("transformers") >= version.parse(content)`, axolotl's
`is_package_version_ge("trackio", "0.11.0")`). `spelled_out` replaces each such name or call
by the comparison it stands for, so guards.conditions reads a single form.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable
from dataclasses import dataclass

from canary.analysis.parselock import parse_locked
from canary.scan.downstream.guards import Resolver, conditions, upstream_version

#: how deep helpers calling helpers are followed (`is_new()` -> `greater("x", "1")` -> ...)
_DEPTH = 4


@dataclass(frozen=True)
class Flag:
    """A name bound to a version comparison (`IS_V5 = Version(x.__version__) >= Version("5")`):
    `if IS_V5:` gates as the comparison itself would."""

    test: ast.expr


@dataclass(frozen=True)
class Versioned:
    """A name bound to an upstream's version (`V = version.parse(trl.__version__)`): a
    comparison of it compares the version."""

    expr: ast.expr


#: a function of the package -> (its parameters, the comparison it returns, as text)
Helpers = Callable[[str], "tuple[tuple[str, ...], str] | None"]


def _no_helpers(name: str) -> tuple[tuple[str, ...], str] | None:
    return None


def binding(
    value: ast.expr,
    resolve: Resolver,
    lookup: Callable[[str], object | None],
    helpers: Helpers = _no_helpers,
) -> Flag | Versioned | None:
    """What a name assigned `value` holds, when it is a version test or a version."""
    spelled = spelled_out(value, lookup, helpers)
    if isinstance(spelled, ast.Compare | ast.BoolOp | ast.UnaryOp):
        body, orelse = conditions(spelled, resolve)
        return Flag(spelled) if any(g.kind == "gate" for g in (*body, *orelse)) else None
    if _reads_a_version(spelled) and upstream_version(spelled, resolve):
        return Versioned(spelled)
    return None


def _reads_a_version(expr: ast.expr) -> bool:
    """`X.__version__`, or a call of a function named for versions (`version("trl")`,
    `version.parse(...)`, `Version(...)`, `get_package_version(...)`) of one: not any call
    given a name (`importlib.import_module("trl.trainer")`)."""
    if isinstance(expr, ast.Attribute):
        return expr.attr == "__version__"
    if not (isinstance(expr, ast.Call) and len(expr.args) == 1):
        return False
    func = expr.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    named = name == "parse" or "version" in name.lower()
    inner = expr.args[0]
    return named and (isinstance(inner, ast.Constant) or _reads_a_version(inner))


def spelled_out(
    test: ast.expr,
    lookup: Callable[[str], object | None],
    helpers: Helpers = _no_helpers,
    depth: int = 0,
) -> ast.expr:
    """`test` with each flag, name holding a version and call of a version helper replaced
    by what it stands for (the nodes of `test` itself are left as they are)."""
    if depth > _DEPTH:
        return test

    def again(expr: ast.expr) -> ast.expr:
        return spelled_out(expr, lookup, helpers, depth)

    if isinstance(test, ast.Name):
        bound = lookup(test.id)
        if isinstance(bound, Flag):
            return bound.test
        return bound.expr if isinstance(bound, Versioned) else test
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = again(test.operand)
        return test if inner is test.operand else ast.UnaryOp(ast.Not(), inner)
    if isinstance(test, ast.BoolOp):
        values = [again(value) for value in test.values]
        same = all(a is b for a, b in zip(values, test.values, strict=True))
        return test if same else ast.BoolOp(test.op, values)
    if isinstance(test, ast.Compare):
        operands = [again(operand) for operand in (test.left, *test.comparators)]
        if all(a is b for a, b in zip(operands, (test.left, *test.comparators), strict=True)):
            return test
        return ast.Compare(operands[0], test.ops, operands[1:])
    if isinstance(test, ast.Call):
        called = _helper_call(test, helpers)
        if called is not None:
            return spelled_out(called, lookup, helpers, depth + 1)
        args = [again(arg) for arg in test.args]  # `Version(V_TEXT)`, the name holding text
        if all(a is b for a, b in zip(args, test.args, strict=True)):
            return test
        return ast.Call(test.func, args, test.keywords)
    return test


def _helper_call(call: ast.Call, helpers: Helpers) -> ast.expr | None:
    """The comparison a call of a version helper makes: its body's, each parameter replaced
    by the argument the call passes (None when a parameter is left unpassed)."""
    func = call.func
    name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
    helper = helpers(name) if name else None
    if helper is None or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    params, text = helper
    passed = dict(zip(params, call.args, strict=False))
    passed |= {k.arg: k.value for k in call.keywords if k.arg in params}
    if set(passed) != set(params):
        return None
    statement = parse_locked(text).body[0]  # the text is one expression, unparsed by us
    if not isinstance(statement, ast.Expr):
        return None
    substituted: ast.expr = _Substitute(passed).visit(statement.value)
    return substituted


class _Substitute(ast.NodeTransformer):
    """Each parameter's name replaced by the argument passed for it."""

    def __init__(self, passed: dict[str, ast.expr]) -> None:
        self.passed = passed

    def visit_Name(self, node: ast.Name) -> ast.expr:
        return self.passed.get(node.id, node)


def helper_comparison(
    fn: ast.FunctionDef | ast.AsyncFunctionDef,
    resolve: Resolver,
    lookup: Callable[[str], object | None],
    helpers: Helpers = _no_helpers,
) -> tuple[tuple[str, ...], str] | None:
    """(parameters, comparison as text) of a function whose body returns a comparison that
    reads an upstream's version (or a parameter naming one), else None. The text is
    spelled so that it reads the same from any file: `X.__version__` as `version("x")`."""
    *steps, last = [s for s in fn.body if not _docstring(s)] or [ast.Pass()]
    if not isinstance(last, ast.Return) or last.value is None:
        return None
    args = fn.args
    if args.vararg or args.kwarg or args.posonlyargs or args.kwonlyargs or len(steps) > _DEPTH:
        return None
    held: dict[str, ast.expr] = {}  # `v = get_version(package)` before `return v >= parse(x)`
    for step in steps:  # the copies are rewritten, never the file's own tree
        if not (isinstance(step, ast.Assign) and len(step.targets) == 1):
            return None
        target = step.targets[0]
        if not isinstance(target, ast.Name):
            return None
        held[target.id] = _Substitute(held).visit(copy.deepcopy(step.value))
    returned = _Substitute(held).visit(copy.deepcopy(last.value))
    params = tuple(a.arg for a in args.args)
    spelled = spelled_out(returned, lookup, helpers)
    spelled = _Canonical(resolve).visit(copy.deepcopy(spelled))
    if not isinstance(spelled, ast.Compare | ast.BoolOp | ast.UnaryOp):
        return None
    gated = any(g.kind == "gate" for g in conditions(spelled, resolve)[0])
    if not gated and not any(_names(node, params) for node in ast.walk(spelled)):
        return None  # what a call makes of it is read where it is called (conditions)
    return params, ast.unparse(spelled)


def _names(node: ast.AST, params: tuple[str, ...]) -> bool:
    return isinstance(node, ast.Name) and node.id in params


def _docstring(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)


class _Canonical(ast.NodeTransformer):
    """`X.__version__` of an upstream object as `version("x")`, which names the upstream
    wherever the text is read again (the helper's file imports X, its callers may not)."""

    def __init__(self, resolve: Resolver) -> None:
        self.resolve = resolve

    def visit_Attribute(self, node: ast.Attribute) -> ast.expr:
        if node.attr == "__version__" and (ref := self.resolve(node.value)) is not None:
            return ast.Call(ast.Name("version", ast.Load()), [ast.Constant(ref.root)], [])
        return self.generic_visit(node)  # type: ignore[return-value]
