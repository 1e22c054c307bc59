"""Signatures as written: parameters with their kinds, defaults and annotations as source text,
and the keywords a deprecation decorator renames on the way in.

A `signature:` pin is parsed with the same code as upstream functions, so both sides compare
in one normal form (`ast.unparse`), whatever the spacing or quoting of either.
"""

from __future__ import annotations

import ast

from canary.analysis.model import FunctionInfo, Param, Rename
from canary.analysis.parselock import parse_locked

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef

#: Decorators that map a deprecated keyword onto a parameter (transformers' utils.deprecation).
RENAMING_DECORATORS = ("deprecate_kwarg",)
#: Their positional parameters, in order.
_RENAME_ARGS = ("old_name", "version", "new_name")


def source_text(node: ast.expr | None) -> str | None:
    """`ast.unparse(node)`: the commonest forms are written here, being a third of the cost of
    indexing a module through unparse."""
    if node is None:
        return None
    return _simple(node) or ast.unparse(node)


def _simple(node: ast.expr) -> str | None:
    """What unparse writes for names, attributes, bool/int/None, subscripts and `X | Y` made
    of those; None for any other form."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Constant):
        return repr(node.value) if type(node.value) in (bool, int, type(None)) else None
    if isinstance(node, ast.Attribute):
        value = _simple(node.value) if isinstance(node.value, ast.Name | ast.Attribute) else None
        return value and f"{value}.{node.attr}"
    if isinstance(node, ast.Subscript):
        value = _simple(node.value) if isinstance(node.value, ast.Name | ast.Attribute) else None
        inner = node.slice
        items = inner.elts if isinstance(inner, ast.Tuple) and len(inner.elts) > 1 else [inner]
        texts = [text for item in items if (text := _simple(item))]
        return f"{value}[{', '.join(texts)}]" if value and len(texts) == len(items) else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        if isinstance(node.right, ast.BinOp):
            return None  # `a | (b | c)`: unparse keeps the parentheses
        left, right = _simple(node.left), _simple(node.right)
        return left and right and f"{left} | {right}"
    return None


def parameters(args: ast.arguments) -> tuple[Param, ...]:
    """Every parameter in signature order; defaults align to the end of the positional ones."""
    positional = [*args.posonlyargs, *args.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults))
    defaults += args.defaults
    params = [
        Param(
            a.arg,
            "posonly" if i < len(args.posonlyargs) else "normal",
            source_text(default),
            source_text(a.annotation),
        )
        for i, (a, default) in enumerate(zip(positional, defaults, strict=True))
    ]
    if args.vararg:
        params.append(Param(args.vararg.arg, "vararg", None, source_text(args.vararg.annotation)))
    params.extend(
        Param(a.arg, "kwonly", source_text(d), source_text(a.annotation))
        for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)
    )
    if args.kwarg:
        params.append(Param(args.kwarg.arg, "kwarg", None, source_text(args.kwarg.annotation)))
    return tuple(params)


def _literal(node: ast.expr | None) -> object:
    return node.value if isinstance(node, ast.Constant) else None


def decorator_names(node: FunctionNode | ast.ClassDef) -> tuple[str, ...]:
    """Each decorator as written, a call by its callee (`@dataclass(frozen=True)`: "dataclass")."""
    return tuple(
        source_text(d.func if isinstance(d, ast.Call) else d) or "" for d in node.decorator_list
    )


def renames(node: FunctionNode) -> tuple[Rename, ...]:
    """`@deprecate_kwarg("old", "1.0", new_name="new")` and the like, read from the call."""
    found = []
    for decorator in node.decorator_list:
        if not isinstance(decorator, ast.Call):
            continue
        name = ast.unparse(decorator.func).rsplit(".", 1)[-1]
        if name not in RENAMING_DECORATORS:
            continue
        given = dict(zip(_RENAME_ARGS, decorator.args, strict=False))
        given.update((k.arg, k.value) for k in decorator.keywords if k.arg)
        old = _literal(given.get("old_name"))
        new = _literal(given.get("new_name"))
        version = _literal(given.get("version"))
        if not isinstance(old, str):
            continue
        found.append(
            Rename(
                old=old,
                new=new if isinstance(new, str) else None,
                version=version if isinstance(version, str) else None,
                raises=_literal(given.get("raise_if_greater_or_equal_version")) is True,
                exposed=_literal(given.get("expose_in_signature")) is True,
            )
        )
    return tuple(found)


def shown(fn: FunctionInfo) -> tuple[Param, ...]:
    """The parameters `inspect.signature` shows: a rename the decorator exposes in the
    signature (transformers' `expose_in_signature=True`) adds its old name, keyword-only with
    default None, before a `**kwargs` (decorators apply from the def up)."""
    params = list(fn.params)
    for rename in reversed(fn.renames):
        if not rename.exposed or rename.old in {p.name for p in params}:
            continue
        added = Param(rename.old, "kwonly", "None")
        at = len(params) - 1 if params and params[-1].kind == "kwarg" else len(params)
        params.insert(at, added)
    return tuple(params)


def parse_signature(text: str) -> tuple[tuple[Param, ...], str | None]:
    """A `signature:` pin such as "(self, x, *, y=None) -> int"; raises SyntaxError."""
    tree = parse_locked(f"def _pinned{text.strip()}:\n    pass\n")
    node = tree.body[0]
    if len(tree.body) != 1 or not isinstance(node, ast.FunctionDef):
        raise SyntaxError("not one signature")
    return parameters(node.args), source_text(node.returns)


def render(params: tuple[Param, ...], returns: str | None = None) -> str:
    """The signature as Python would print it: `/` and `*` markers, stars, defaults."""
    parts: list[str] = []
    for i, param in enumerate(params):
        previous = params[i - 1].kind if i else None
        if param.kind == "kwonly" and previous not in ("kwonly", "vararg"):
            parts.append("*")
        parts.append(_render_param(param))
        following = params[i + 1].kind if i + 1 < len(params) else None
        if param.kind == "posonly" and following != "posonly":
            parts.append("/")
    arrow = f" -> {returns}" if returns else ""
    return f"({', '.join(parts)}){arrow}"


def _render_param(param: Param) -> str:
    star = {"vararg": "*", "kwarg": "**"}.get(param.kind, "")
    annotation = f": {param.annotation}" if param.annotation else ""
    if param.default is None:
        return f"{star}{param.name}{annotation}"
    equals = " = " if annotation else "="
    return f"{star}{param.name}{annotation}{equals}{param.default}"


def _described(param: Param) -> str:
    kind = {"posonly": "positional-only ", "kwonly": "keyword-only "}.get(param.kind, "")
    return f"{kind}parameter {_render_param(param)}"


_KINDS = {
    "posonly": "positional-only",
    "normal": "positional-or-keyword",
    "vararg": "*args",
    "kwonly": "keyword-only",
    "kwarg": "**kwargs",
}


def first_difference(
    actual: tuple[Param, ...],
    pinned: tuple[Param, ...],
    actual_returns: str | None = None,
    pinned_returns: str | None = None,
) -> str | None:
    """None when `actual` matches the pin, else the first difference in words.

    Names, order, kinds and defaults must agree; an annotation is compared only where the
    pin writes one, so a pin without annotations does not break when upstream adds them."""
    for i, (have, want) in enumerate(zip(actual, pinned, strict=False), 1):
        where = f"parameter {i}"
        if have.name != want.name:
            return f"{where} is {have.name}, not {want.name}"
        if have.kind != want.kind:
            return f"{where} {have.name} is {_KINDS[have.kind]}, not {_KINDS[want.kind]}"
        if have.default != want.default:
            if want.default is None:
                return f"{where} {have.name} has a default ({have.default})"
            if have.default is None:
                return f"{where} {have.name} has no default (pinned {want.default})"
            return f"{where} {have.name} defaults to {have.default}, not {want.default}"
        if want.annotation is not None and have.annotation != want.annotation:
            return f"{where} {have.name} is annotated {have.annotation}, not {want.annotation}"
    if len(actual) > len(pinned):
        return f"extra {_described(actual[len(pinned)])}"
    if len(actual) < len(pinned):
        return f"missing {_described(pinned[len(actual)])}"
    if pinned_returns is not None and actual_returns != pinned_returns:
        return f"returns {actual_returns or 'unannotated'}, not {pinned_returns}"
    return None
