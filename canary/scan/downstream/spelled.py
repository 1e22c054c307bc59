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
from pathlib import PurePosixPath
from typing import Protocol

# most literals a name or a concatenation may stand for before scan stops following it
MAX_TEXTS = 16
# an upstream module's dotted parts -> what its dir() names (its submodules and what it
# binds), None when not read
NamesIn = Callable[[tuple[str, ...]], "tuple[str, ...] | None"]
#: a last part asking NamesIn for the file names in a package's folder (`os.listdir` of it),
#: and for the classes a module binds (defined there or imported), not for its `dir()`
FILES = "{files}"
CLASSES = "{classes}"


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


@dataclass(frozen=True)
class FileEntry:
    """A name bound to one path a folder's listing gives (`Path.iterdir()`, `.glob()`): its
    `.name`, `.stem` and `.suffix` spell."""

    name: str


#: the attributes of a path that are text of its file name
PATH_PARTS = frozenset({"name", "stem", "suffix"})


def path_part(name: str, attr: str) -> str:
    """`.name`, `.stem` or `.suffix` of a path whose file name is `name`."""
    return str(getattr(PurePosixPath(name), attr))


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
    if isinstance(node, ast.Subscript | ast.Call):
        return _cut(node, lookup)
    if isinstance(node, ast.Attribute) and node.attr in PATH_PARTS:
        entry = lookup(node.value.id) if isinstance(node.value, ast.Name) else None
        return (path_part(entry.name, node.attr),) if isinstance(entry, FileEntry) else ()
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


def _cut(node: ast.Subscript | ast.Call, lookup: Callable[[str], object | None]) -> tuple[str, ...]:
    """A file name cut to its module name: `file[:-3]`, `file[:-len(".py")]`,
    `file.removesuffix(".py")` (and `removeprefix`)."""
    if isinstance(node, ast.Call):
        func = node.func
        if not (isinstance(func, ast.Attribute) and func.attr in _CUTS and len(node.args) == 1):
            return ()
        cut = node.args[0].value if isinstance(node.args[0], ast.Constant) else None
        if not isinstance(cut, str) or node.keywords:
            return ()
        return tuple(getattr(v, func.attr)(cut) for v in spelled(func.value, lookup))
    bounds = node.slice
    if not isinstance(bounds, ast.Slice) or bounds.lower or bounds.step:
        return ()
    end = _negative_length(bounds.upper)
    return tuple(v[:end] for v in spelled(node.value, lookup)) if end is not None else ()


_CUTS = frozenset({"removesuffix", "removeprefix"})


def _negative_length(node: ast.expr | None) -> int | None:
    """`-3` or `-len(".py")`: the end of a slice cutting a suffix."""
    if not (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub)):
        return None
    value = node.operand
    if isinstance(value, ast.Constant) and type(value.value) is int and value.value > 0:
        return -value.value
    if not (isinstance(value, ast.Call) and getattr(value.func, "id", "") == "len"):
        return None
    cut = getattr(value.args[0], "value", None) if len(value.args) == 1 else None
    return -len(cut) if isinstance(cut, str) and cut else None


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


def walked_values(
    fn: ast.FunctionDef | ast.AsyncFunctionDef, rows: list[dict[str, object]]
) -> list[dict[str, object]]:
    """The bindings `fn`'s body is walked with, once each: its literal defaults under each row
    its calls pass (callsites.py), and one walk per module name where a parameter given
    several builds names from them (`eval(f"trl.trainer.{trainer_file}")`); a default joins
    the names given (a caller outside the package may rely on it)."""
    defaults = literal_defaults(fn.args)
    walks: list[dict[str, object]] = []
    for row in rows:
        passed: dict[str, object] = {**defaults, **row}
        for name, value in row.items():
            if isinstance(value, Names) and name in defaults:
                passed[name] = Names(tuple(sorted({*value.values, *defaults[name].values})))
        several = [
            name
            for name, value in passed.items()
            if isinstance(value, Names) and len(value.values) > 1 and builds_names(fn.body, {name})
        ]
        if not several:
            walks.append(passed)
            continue
        named = passed[several[0]]
        values = named.values if isinstance(named, Names) else ()
        walks += [{**passed, several[0]: Names((value,))} for value in values]
    return walks


def paired_values(target: ast.Tuple | ast.List, value: ast.expr | None) -> list[ast.expr | None]:
    """What each name of `a, b = x, y` is assigned (None where the value is no literal
    tuple or list of as many items, or a name is starred)."""
    starred = any(isinstance(e, ast.Starred) for e in target.elts)
    items = value.elts if isinstance(value, ast.Tuple | ast.List) else []
    if starred or len(items) != len(target.elts):
        return [None] * len(target.elts)
    return list(items)


# most module names a listing read from an upstream's files may stand for
MAX_LISTED = 64


@dataclass(frozen=True)
class Names(Texts):
    """The module names a filtered `dir(package)` keeps, evaluated over the upstream's own
    files (`[x for x in dir(trl.trainer) if x.endswith("_trainer")]`)."""


@dataclass(frozen=True)
class Listed:
    """A name read from `dir(X)` (a filtered list of them, or one item: `names[0]`): one of
    the names of the upstream object at `parts`, which scan cannot spell. `lowercase` when
    the filter keeps lowercase names only (`x.islower()`, `x.endswith("_trainer")`): modules
    or functions, no class. `filters` are the comprehensions' conditions (each with its
    variable), None when one tests something else than the name."""

    parts: tuple[str, ...]
    lowercase: bool = False
    filters: tuple[tuple[str, ast.expr], ...] | None = ()

    def kept(self, names: Iterable[str]) -> Names | None:
        """Which of `names` the filters keep; None when they cannot be evaluated."""
        if self.filters is None:
            return None
        found: list[str] = []
        for name in names:
            verdicts = [_holds(test, variable, name) for variable, test in self.filters]
            if None in verdicts:
                return None
            found += [name] if all(verdicts) else []
        return Names(tuple(sorted(found))[:MAX_LISTED])


_TESTS = frozenset({"islower", "isupper", "isidentifier", "startswith", "endswith"})
_CASES = frozenset({"lower", "upper", "strip"})


def _operand(node: ast.expr, variable: str, name: str) -> str | tuple[str, ...] | None:
    """What `node` is when the filter's variable is `name`: the name, a literal, a tuple of
    literals, or `x.lower()` of one; None otherwise."""
    if isinstance(node, ast.Name):
        return name if node.id == variable else None
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else None
    if isinstance(node, ast.Attribute) and node.attr in PATH_PARTS:  # of a listed path
        named = isinstance(node.value, ast.Name) and node.value.id == variable
        return path_part(name, node.attr) if named else None
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        items = [_operand(e, "", "") if isinstance(e, ast.Constant) else None for e in node.elts]
        return tuple(i for i in items if isinstance(i, str)) if None not in items else None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not node.args:
        base = _operand(node.func.value, variable, name)
        if isinstance(base, str) and node.func.attr in _CASES:
            return str(getattr(base, node.func.attr)())
    return None


def _holds(test: ast.expr, variable: str, name: str) -> bool | None:
    """`test` of the name (a filter of a comprehension over `dir()`); None when scan cannot
    evaluate it: it calls or reads anything but the name and literals."""
    if isinstance(test, ast.BoolOp):
        found = [_holds(v, variable, name) for v in test.values]
        if None in found:
            return None
        return all(found) if isinstance(test.op, ast.And) else any(found)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _holds(test.operand, variable, name)
        return None if inner is None else not inner
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Attribute):
        base = _operand(test.func.value, variable, name)
        args = [_operand(a, variable, name) for a in test.args]
        if not isinstance(base, str) or test.func.attr not in _TESTS or None in args:
            return None
        return bool(getattr(base, test.func.attr)(*args))
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        left = _operand(test.left, variable, name)
        right = _operand(test.comparators[0], variable, name)
        if left is None or right is None:
            return None
        return _compared(test.ops[0], left, right)
    return None


def _compared(
    op: ast.cmpop, left: str | tuple[str, ...], right: str | tuple[str, ...]
) -> bool | None:
    if isinstance(op, ast.Eq | ast.NotEq):
        return (left == right) == isinstance(op, ast.Eq)
    if isinstance(op, ast.In | ast.NotIn) and isinstance(left, str):
        return (left in right) == isinstance(op, ast.In)
    return None


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
    tested: tuple[tuple[str, ast.expr], ...] | None = ()
    if isinstance(value, ast.ListComp) and len(value.generators) == 1:
        generator, element = value.generators[0], value.elt
        filters, value = generator.ifs, generator.iter
        target = generator.target
        variable = target.id if isinstance(target, ast.Name) else None
        whole = isinstance(element, ast.Name) and element.id == variable  # `[x for x in ...]`
        tested = tuple((variable, f) for f in filters) if variable and whole else None
    narrowed = listed_piece(value, lookup) if isinstance(value, ast.Name) else None
    if narrowed is not None:
        lowercase = narrowed.lowercase or _keeps_lowercase(filters)
        both = None if narrowed.filters is None or tested is None else narrowed.filters + tested
        return Listed(narrowed.parts, lowercase, both)
    if not (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id == "dir"
        and len(value.args) == 1
        and lookup("dir") is None
    ):
        return None
    parts = parts_of(value.args[0])
    return Listed(parts, _keeps_lowercase(filters), tested) if parts else None


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


class _Lists(Protocol):
    def lists(self, parts: tuple[str, ...], found: tuple[str, ...] | None) -> None: ...


def recording(names_in: NamesIn, calls: _Lists) -> NamesIn:
    """`names_in`, each answer told to `calls` (what a file's scan depended on)."""

    def answer(parts: tuple[str, ...]) -> tuple[str, ...] | None:
        found = names_in(parts)
        calls.lists(parts, found)
        return found

    return answer


def decided(
    test: ast.expr, lookup: Callable[[str], object | None], names_in: NamesIn | None
) -> bool | None:
    """What `test` is in a walk once per module a listing names, where it compares with a
    literal the walk's module name (`trainer_file == "grpo_trainer"`) or a name read from
    that module's `dir()` (`name == "GRPOTrainer"`: False where the module has no such
    name); None for any other test, or one scan cannot decide."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    op, left, right = test.ops[0], test.left, test.comparators[0]
    if isinstance(left, ast.Constant):
        left, right = right, left
    literal = right.value if isinstance(right, ast.Constant) else None
    bound = lookup(left.id) if isinstance(left, ast.Name) else None
    if not isinstance(op, ast.Eq | ast.NotEq) or not isinstance(literal, str):
        return None
    if isinstance(bound, Names) and len(bound.values) == 1:
        return (bound.values[0] == literal) == isinstance(op, ast.Eq)
    if not isinstance(bound, Listed) or bound.lowercase or names_in is None:
        return None
    names = names_in(bound.parts)
    return None if names is None or literal in names else isinstance(op, ast.NotEq)
