"""The strings a downstream expression spells out of literals, so that a name it builds at
run time is a name scan can follow: `eval(f"trl.trainer.{trainer_file}.{name}")`,
`importlib.import_module("trl.trainer." + f)`, `getattr(trl.trainer, name)`.

A piece is a literal, or a name bound to literals: assigned one, a parameter's default, or a
loop variable over a literal list or tuple (the visitor walks such a loop's body once per
value where it builds a name from it).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

# most literals a name or a concatenation may stand for before scan stops following it
MAX_TEXTS = 16


@dataclass(frozen=True)
class Texts:
    """A name bound to string constants: one literal, or the items a loop goes through."""

    values: tuple[str, ...]


@dataclass(frozen=True)
class ParamDefault(Texts):
    """A parameter's default: what the body sees unless a caller passes another value."""


#: a piece of a dotted path scan cannot spell (any value): `transformers.models.{?}`
WILD = "{?}"
_PATH_PATTERN = re.compile(r"[A-Za-z_]\w*(?:\.(?:[\w]|\{\?\})+)+")


@dataclass(frozen=True)
class Derived:
    """A name bound to text made from literals (split, joined, indented again): no text a
    rewrite seeks, but one it may insert, so a text sought later may be found only in it."""

    values: tuple[str, ...]


@dataclass(frozen=True)
class PathPattern(Derived):
    """Text made so that is a dotted path built at run time from pieces scan cannot all spell
    (`f"transformers.models.{model_type}.modeling_{model_type}"`): `pattern` is the path,
    each unknown piece WILD (imports.py follows it to any class of the modules it matches)."""

    pattern: str = ""


def _product(left: Iterable[str], right: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(a + b for a in left for b in right)[:MAX_TEXTS]


def spelled(node: ast.expr | None, lookup: Callable[[str], object | None]) -> tuple[str, ...]:
    """The strings `node` may be: a literal, a name bound to Texts, a concatenation or an
    f-string (no conversion, no format spec) of those; () when a piece is unknown."""
    if isinstance(node, ast.Constant):
        return (node.value,) if isinstance(node.value, str) else ()
    if isinstance(node, ast.Name):
        bound = lookup(node.id)
        return bound.values if isinstance(bound, Texts) else ()
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _product(spelled(node.left, lookup), spelled(node.right, lookup))
    if not isinstance(node, ast.JoinedStr):
        return ()
    found: tuple[str, ...] = ("",)
    for piece in node.values:
        if isinstance(piece, ast.FormattedValue):
            if piece.conversion != -1 or piece.format_spec is not None:
                return ()
            found = _product(found, spelled(piece.value, lookup))
        else:
            found = _product(found, spelled(piece, lookup))
        if not found:
            return ()
    return found


def one_spelled(node: ast.expr | None, lookup: Callable[[str], object | None]) -> str | None:
    """The one string `node` spells, if it is exactly one."""
    found = spelled(node, lookup)
    return found[0] if len(found) == 1 else None


# builtins and functions that take a name or path spelled at run time
_NAME_TAKERS = frozenset({"eval", "getattr", "hasattr", "setattr", "import_module"})


def builds_names(body: list[ast.stmt], names: set[str]) -> bool:
    """Whether `body` passes one of `names` (or text made from it) where a name or a path is
    taken: `eval(...)`, `getattr(X, ...)`, `importlib.import_module(...)`."""
    for node in (n for statement in body for n in ast.walk(statement)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
        if called in _NAME_TAKERS and any(
            isinstance(n, ast.Name) and n.id in names for a in node.args for n in ast.walk(a)
        ):
            return True
    return False


def literal_defaults(args: ast.arguments) -> dict[str, ParamDefault]:
    """Parameter -> its default, for those whose default is a string literal
    (`def f(trainer_file="grpo_trainer")`): what the body sees unless a caller passes more."""
    positional = [*args.posonlyargs, *args.args]
    pairs = list(
        zip(positional[len(positional) - len(args.defaults) :], args.defaults, strict=True)
    )
    pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d]
    return {
        a.arg: ParamDefault((d.value,))
        for a, d in pairs
        if isinstance(d, ast.Constant) and isinstance(d.value, str)
    }


def paired_values(target: ast.Tuple | ast.List, value: ast.expr | None) -> list[ast.expr | None]:
    """What each name of `a, b = x, y` is assigned (None where the value is no literal
    tuple or list of as many items, or a name is starred)."""
    starred = any(isinstance(e, ast.Starred) for e in target.elts)
    items = value.elts if isinstance(value, ast.Tuple | ast.List) else []
    if starred or len(items) != len(target.elts):
        return [None] * len(target.elts)
    return list(items)


@dataclass(frozen=True)
class Listed:
    """A name read from `dir(X)` (a filtered list of them, or one item: `names[0]`): one of
    the names of the upstream object at `parts`, which scan cannot spell. `lowercase` when
    the filter keeps lowercase names only (`x.islower()`, `x.endswith("_trainer")`): modules
    or functions, no class."""

    parts: tuple[str, ...]
    lowercase: bool = False


def _keeps_lowercase(filters: list[ast.expr]) -> bool:
    for node in (n for f in filters for n in ast.walk(f)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        tested = [a.value for a in node.args if isinstance(a, ast.Constant)]
        if node.func.attr == "islower" or any(
            isinstance(t, str) and t.lower() == t != t.upper() for t in tested
        ):
            return True
    return False


def listed_piece(node: ast.expr, lookup: Callable[[str], object | None]) -> Listed | None:
    """The listing a piece comes from: a name bound to one, or an item of it (`names[0]`)."""
    if isinstance(node, ast.Subscript):
        node = node.value
    bound = lookup(node.id) if isinstance(node, ast.Name) else None
    return bound if isinstance(bound, Listed) else None


def listing(
    value: ast.expr,
    lookup: Callable[[str], object | None],
    parts_of: Callable[[ast.expr], tuple[str, ...] | None],
) -> Listed | None:
    """What `dir(X)`, `[x for x in dir(X) if ...]` (or over a listing) and `names[0]` hold."""
    if isinstance(value, ast.Subscript):
        return listed_piece(value, lookup)
    filters: list[ast.expr] = []
    if isinstance(value, ast.ListComp) and len(value.generators) == 1:
        filters, value = value.generators[0].ifs, value.generators[0].iter
    narrowed = listed_piece(value, lookup) if isinstance(value, ast.Name) else None
    if narrowed is not None:
        return Listed(narrowed.parts, narrowed.lowercase or _keeps_lowercase(filters))
    if not (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id == "dir"
        and len(value.args) == 1
        and lookup("dir") is None
    ):
        return None
    parts = parts_of(value.args[0])
    return Listed(parts, _keeps_lowercase(filters)) if parts else None


def last_listed(
    node: ast.expr, lookup: Callable[[str], object | None]
) -> tuple[str, Listed] | None:
    """(the path spelled before the last dot, the listing the last piece comes from) of a
    dotted path whose last name is read from `dir()`: `f"trl.trainer.{file}.{names[0]}"`."""
    if isinstance(node, ast.JoinedStr) and len(node.values) >= 2:
        *head, last = node.values
        prefix = one_spelled(ast.JoinedStr(values=head), lookup)
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        last, prefix = node.right, one_spelled(node.left, lookup)
    else:
        return None
    if isinstance(last, ast.FormattedValue):
        if last.conversion != -1 or last.format_spec is not None:
            return None
        last = last.value
    found = listed_piece(last, lookup)
    if found is None or prefix is None or not prefix.endswith("."):
        return None
    return prefix[:-1], found


def _pattern_piece(node: ast.expr, lookup: Callable[[str], object | None]) -> str | None:
    """The pattern text of one piece of a path: a literal or a name bound to one literal as
    it is; a pattern a name holds as it is; a parameter (its default is one of its values) or
    anything unknown WILD; None for a name read from a listing (listed_piece: a class of it)."""
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else None
    bound = lookup(node.id) if isinstance(node, ast.Name) else None
    if isinstance(bound, Listed):
        return None
    if isinstance(bound, PathPattern):
        return bound.pattern
    if isinstance(bound, Texts) and not isinstance(bound, ParamDefault) and len(bound.values) == 1:
        return bound.values[0]
    return WILD


def _pattern_text(node: ast.expr, lookup: Callable[[str], object | None]) -> str | None:
    """What an f-string or a concatenation of pieces spells, a piece scan cannot spell WILD."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _pattern_text(node.left, lookup), _pattern_text(node.right, lookup)
        return left + right if left is not None and right is not None else None
    if not isinstance(node, ast.JoinedStr):
        return _pattern_piece(node, lookup)
    pieces = []
    for piece in node.values:
        if isinstance(piece, ast.FormattedValue):
            if piece.conversion != -1 or piece.format_spec is not None:
                return None
            piece = piece.value
        found = _pattern_text(piece, lookup)
        if found is None:
            return None
        pieces.append(found)
    return "".join(pieces)


def path_pattern(node: ast.expr | None, lookup: Callable[[str], object | None]) -> str | None:
    """The dotted path an f-string or a concatenation builds with at least one piece scan
    cannot spell, that piece WILD (`transformers.models.{?}.modeling_{?}`); None otherwise."""
    if not isinstance(node, ast.JoinedStr | ast.BinOp):
        return None
    text = _pattern_text(node, lookup)
    if text is None or WILD not in text or not _PATH_PATTERN.fullmatch(text):
        return None
    return text
