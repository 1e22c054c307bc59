"""Which upstream object a downstream name or dotted expression denotes, through its aliases."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from canary.matrix.model import DOTTED_NAME
from canary.scan.downstream.rewriters import ANY_CLASS
from canary.scan.downstream.spelled import (
    WILD,
    Listed,
    last_listed,
    listed_piece,
    one_spelled,
    path_pattern,
)


@dataclass(frozen=True)
class Ref:
    """A dotted path into a package; the first `known` parts are certainly a module."""

    parts: tuple[str, ...]
    known: int

    @property
    def root(self) -> str:
        return self.parts[0]

    def child(self, name: str) -> Ref:
        return Ref((*self.parts, name), self.known)


class Scopes:
    """Name bindings of one file: module scope plus one layer per enclosing def/class.

    A binding is whatever the caller stores (a Ref, a tainted source, ...); None marks a name
    that is bound locally to something unknown, so it hides an outer alias of the same name.
    A class body's names are seen from that body only: as in Python, the methods in it look
    past them (a method `create_lora_manager` calls the imported function of that name).
    """

    def __init__(self) -> None:
        self._stack: list[dict[str, object | None]] = [{}]
        self._classes: set[int] = set()  # depths of the scopes that are class bodies

    def push(self, shadowed: list[str], is_class: bool = False) -> None:
        self._stack.append(dict.fromkeys(shadowed))
        if is_class:
            self._classes.add(len(self._stack) - 1)

    def top(self) -> dict[str, object | None]:
        """The innermost scope's bindings (if/else branches start from the same ones)."""
        return self._stack[-1]

    def pop(self) -> None:
        self._classes.discard(len(self._stack) - 1)
        self._stack.pop()

    def bind(self, name: str, value: object | None) -> None:
        self._stack[-1][name] = value

    def lookup(self, name: str) -> object | None:
        innermost = len(self._stack) - 1
        for depth in range(innermost, -1, -1):
            if depth != innermost and depth in self._classes:
                continue
            if name in self._stack[depth]:
                return self._stack[depth][name]
        return None


def bind_import(node: ast.Import | ast.ImportFrom, scopes: Scopes) -> list[Ref]:
    """Bind the names an import statement creates; return what it imports.

    Relative imports are the downstream's own code and bind nothing upstream.
    """
    refs: list[Ref] = []
    if isinstance(node, ast.Import):
        for alias in node.names:
            parts = tuple(alias.name.split("."))
            ref = Ref(parts, len(parts))
            refs.append(ref)
            if alias.asname:
                scopes.bind(alias.asname, ref)
            else:
                scopes.bind(parts[0], Ref(parts[:1], 1))
        return refs
    if node.level or not node.module:
        for alias in node.names:
            scopes.bind(alias.asname or alias.name, None)
        return refs
    module = tuple(node.module.split("."))
    for alias in node.names:
        if alias.name == "*":
            continue
        ref = Ref((*module, alias.name), len(module))
        refs.append(ref)
        scopes.bind(alias.asname or alias.name, ref)
    return refs


def _name(node: ast.expr | None, scopes: Scopes) -> str | None:
    """The one string `node` spells (a literal, or pieces bound to literals: spelled.py)."""
    return one_spelled(node, scopes.lookup)


def _evaluated(call: ast.Call, scopes: Scopes) -> Ref | None:
    """`eval("pkg.mod.Name")` of a dotted path spelled at run time: the object it names; one
    whose last name is read from `dir()` of the module before it names any class there."""
    text = _name(call.args[0], scopes)
    if text is not None:
        return _dotted(text, scopes)
    found = last_listed(call.args[0], scopes.lookup)
    base = _dotted(found[0], scopes) if found else None
    return _any_class(base, found[1]) if base and found else _any_class_of(call.args[0], scopes)


def _any_class_of(path: ast.expr, scopes: Scopes) -> Ref | None:
    """`eval(f"{location}.{name}")` whose last name scan cannot spell (nor read from a
    listing), on a module path it may only know as a pattern (`transformers.models.{?}.
    modeling_{?}`): any class of any module matching it, the last part WILD (wildcards.py).
    The package named first is the one `eval` sees, imported here or by an `exec` beside it."""
    pattern = path_pattern(path, scopes.lookup)
    head, _, last = pattern.rpartition(".") if pattern else ("", "", "")
    if last != WILD or not head:
        return None
    root, *rest = head.split(".")
    base = scopes.lookup(root)
    parts = base.parts if isinstance(base, Ref) else (root,)
    if isinstance(base, Ref) and base.known != len(base.parts):
        return None
    return Ref((*parts, *rest, WILD), len(parts) + len(rest))


def _any_class(base: Ref, listed: Listed) -> Ref | None:
    """ "Any class of module `base`" for a name read from `dir(base)` that may be a class."""
    if listed.parts != base.parts or listed.lowercase or base.parts[-1] == ANY_CLASS:
        return None
    return base.child(ANY_CLASS)


def _dotted(text: str, scopes: Scopes) -> Ref | None:
    """The object a dotted path names from a name bound here (`trl.trainer.X`)."""
    if not DOTTED_NAME.fullmatch(text):  # a dotted path, as a matrix's module
        return None
    root, *rest = text.split(".")
    base = scopes.lookup(root)
    if not isinstance(base, Ref):
        return None
    for part in rest:
        base = base.child(part)
    return base


def _namespace(expr: ast.expr, scopes: Scopes) -> Ref | None:
    """The object whose namespace `X.__dict__` or `vars(X)` is."""
    if isinstance(expr, ast.Attribute) and expr.attr == "__dict__":
        return resolve(expr.value, scopes)
    if (
        isinstance(expr, ast.Call)
        and isinstance(expr.func, ast.Name)
        and expr.args
        and expr.func.id == "vars"
        and scopes.lookup("vars") is None
    ):
        return resolve(expr.args[0], scopes)
    return None


def resolve(expr: ast.expr, scopes: Scopes) -> Ref | None:
    """The Ref an expression denotes, or None when its root is not an import: a Name or
    Attribute chain, `getattr(X, "n"[, default])`, `X.__dict__["n"]`, `vars(X).get("n")`,
    `inspect.unwrap(X)`."""
    if isinstance(expr, ast.Name):
        bound = scopes.lookup(expr.id)
        return bound if isinstance(bound, Ref) else None
    if isinstance(expr, ast.Attribute):
        base = resolve(expr.value, scopes)
        return base.child(expr.attr) if base else None
    if isinstance(expr, ast.Subscript) and (name := _name(expr.slice, scopes)):
        base = _namespace(expr.value, scopes)
        return base.child(name) if base else None
    if not isinstance(expr, ast.Call) or not expr.args:
        return None
    func = expr.func
    if isinstance(func, ast.Name) and func.id == "getattr" and scopes.lookup("getattr") is None:
        named = expr.args[1] if len(expr.args) > 1 else None
        base, name = resolve(expr.args[0], scopes), _name(named, scopes)
        if base and name is None and named is not None:  # a name read from `dir(base)`
            listed = listed_piece(named, scopes.lookup)
            return _any_class(base, listed) if listed else None
        return base.child(name) if base and name else None
    if isinstance(func, ast.Name) and func.id == "eval" and scopes.lookup("eval") is None:
        return _evaluated(expr, scopes)
    if (
        isinstance(func, ast.Attribute)
        and func.attr == "get"
        and (name := _name(expr.args[0], scopes))
    ):
        base = _namespace(func.value, scopes)
        return base.child(name) if base else None
    called = resolve(func, scopes)
    if called is not None and called.parts == ("inspect", "unwrap"):
        return resolve(expr.args[0], scopes)
    if called is not None and called.parts == ("importlib", "import_module"):
        path = _name(expr.args[0], scopes)  # `importlib.import_module("a.b")` is module a.b
        return Ref(tuple(path.split(".")), len(path.split("."))) if path else None
    return None


_MOCK_PATCH = ("unittest", "mock", "patch")


def mock_patched(call: ast.Call, scopes: Scopes) -> tuple[Ref, ast.expr | None] | None:
    """What `mock.patch("a.b.C.m", new)` or `mock.patch.object(C, "m", new)` replaces (as
    a decorator, a context or started), and the replacement passed."""
    called = resolve(call.func, scopes)
    if called is None or not call.args:
        return None
    if called.parts == _MOCK_PATCH and (path := _name(call.args[0], scopes)):
        new = call.args[1] if len(call.args) > 1 else None
        return Ref(tuple(path.split(".")), 1), new
    if called.parts == (*_MOCK_PATCH, "object") and len(call.args) > 1:
        owner, name = resolve(call.args[0], scopes), _name(call.args[1], scopes)
        new = call.args[2] if len(call.args) > 2 else None
        return (owner.child(name), new) if owner and name else None
    return None
