"""Classes a package's function finds by listing an upstream package's folder, and returns.

zoo's `get_lora_layer_modules()` does `os.listdir(os.path.split(peft.tuners.lora.__file__)[0])`,
keeps the `.py` files but `__init__.py`, imports `peft.tuners.lora.{file[:-3]}` and returns
`(eval(x), item, x)` for each name `x` of its `dir()` a filter keeps. Scan evaluates that over
the newest release read (spelled.FILES, spelled.CLASSES: nothing imported): each row is a
class of the upstream (ListedClass: the module it was listed from, its name there) beside the
texts the tuple holds. A caller's loop then unpacks them (text_flow, namespaces.py).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from canary.scan.downstream.imports import Ref
from canary.scan.downstream.source_helpers import chain
from canary.scan.downstream.spelled import (
    CLASSES,
    FILES,
    MAX_LISTED,
    FileEntry,
    Listed,
    NamesIn,
    Texts,
    one_spelled,
)

# most rows a function's listing may give before scan stops following it
MAX_ROWS = 64


@dataclass(frozen=True)
class ListedClass:
    """A class named `name` in upstream module `module`, as a listing of it found it."""

    module: str
    name: str


Cell = ListedClass | str | None


@dataclass(frozen=True)
class Yielded:
    """What a function returns: rows (tuples) of classes listed from a folder and texts."""

    rows: tuple[tuple[Cell, ...], ...]

    def encoded(self) -> list[Any]:
        """JSON-able (CallSites events)."""
        return [[_encoded(cell) for cell in row] for row in self.rows]

    @classmethod
    def decoded(cls, rows: list[Any]) -> Yielded:
        return cls(tuple(tuple(_decoded(cell) for cell in row) for row in rows))


def _encoded(cell: Cell) -> Any:
    return [cell.module, cell.name] if isinstance(cell, ListedClass) else cell


def _decoded(cell: Any) -> Cell:
    return ListedClass(*cell) if isinstance(cell, list) else cell


@dataclass(frozen=True)
class Column:
    """A loop variable unpacking one position of the rows a function yields
    (`for function, parent, child in get_lora_layer_modules():`)."""

    yielded: Yielded
    index: int


def yielded_by(
    expr: ast.expr,
    lookup: Callable[[str], object | None],
    asked: Callable[[str], Yielded | None],
) -> Yielded | None:
    """The rows a call of the package's function returns (`asked` of its name), or a name
    bound to them."""
    if isinstance(expr, ast.Name):
        bound = lookup(expr.id)
        return bound if isinstance(bound, Yielded) else None
    if not (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name)):
        return None
    return asked(expr.func.id) if lookup(expr.func.id) is None else None


def column_of(
    expr: ast.expr, lookup: Callable[[str], object | None]
) -> tuple[Column, tuple[str, ...]] | None:
    """`function.forward` of a loop variable unpacking listed classes: (its column, the
    attributes read)."""
    found = chain(expr)
    bound = lookup(found[0]) if found else None
    return (bound, found[1]) if found and isinstance(bound, Column) else None


@dataclass(frozen=True)
class _Folder:
    parts: tuple[str, ...]  # the upstream package whose folder it is
    path: bool = False  # a pathlib.Path: `.iterdir()`, `.glob()` list it


@dataclass(frozen=True)
class _Entries:
    """A folder's listing: file names, or (`paths`) pathlib paths of them."""

    listed: Listed
    paths: bool = False


@dataclass(frozen=True)
class _Picked:
    """A loop variable over a module's listing, in the walk for one name of it."""

    module: str
    name: str


@dataclass
class _Rows:
    """A list the function gathers rows in."""

    rows: list[tuple[Cell, ...]]


# the spellings of a package's folder: os.path.split(X.__file__)[0], os.path.dirname(X.__file__)
_SPLIT, _DIRNAME, _LISTDIR = ("os", "path", "split"), ("os", "path", "dirname"), ("os", "listdir")
_PATHS = (("Path",), ("pathlib", "Path"))  # Path(X.__file__).parent


class FolderRows:
    """Evaluates one function's body over the newest release read; `lookup` gives the
    file's bindings (an upstream module imported at its top is a Ref)."""

    def __init__(
        self,
        lookup: Callable[[str], object | None],
        upstreams: frozenset[str],
        names_in: NamesIn,
    ) -> None:
        self.outer = lookup
        self.upstreams = upstreams
        self.names_in = names_in
        self.env: dict[str, object] = {}
        self.found: Yielded | None = None

    def lookup(self, name: str) -> object | None:
        return self.env[name] if name in self.env else self.outer(name)

    def run(self, body: list[ast.stmt]) -> bool:
        """Walk `body`; False when something is listed that scan cannot evaluate."""
        return all(self._statement(statement) for statement in body)

    def _statement(self, node: ast.stmt) -> bool:
        if isinstance(node, ast.Import):
            for alias in node.names:
                name = alias.asname or alias.name.split(".")[0]
                parts = tuple(alias.name.split(".")) if alias.asname else (name,)
                self.env[name] = Ref(parts, len(parts))
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            if isinstance(node.targets[0], ast.Name):
                self.env[node.targets[0].id] = self._value(node.value)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            return self._gather(node.target.id, node.value)
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            return self._appended(node.value)
        elif isinstance(node, ast.For):
            return self._loop(node)
        elif isinstance(node, ast.If):
            return self.run(node.body) and self.run(node.orelse)
        elif isinstance(node, ast.Return) and node.value is not None:
            self._returned(node.value)
        return True

    def _value(self, node: ast.expr) -> object:
        if isinstance(node, ast.List) and not node.elts:
            return _Rows([])
        folder = self._folder(node)
        if folder is not None:
            return folder
        files = self._files(node)
        if files is not None:
            return files
        texts = one_spelled(node, self.lookup)
        if texts is not None:
            return Texts((texts,))
        loaded = self._parts(node) if isinstance(node, ast.Call) else None  # import_module(n)
        return Ref(loaded, len(loaded)) if loaded else self._listing(node)

    def _parts(self, node: ast.expr) -> tuple[str, ...] | None:
        """The upstream module `node` names: a dotted name from an import, or `eval(name)`,
        `importlib.import_module(name)`, `sys.modules[name]` of a name spelled out."""
        if isinstance(node, ast.Call) and len(node.args) == 1 and _called(node.func) in _LOADS:
            text = one_spelled(node.args[0], self.lookup)
        elif isinstance(node, ast.Subscript) and _dotted(node.value) == ("sys", "modules"):
            text = one_spelled(node.slice, self.lookup)
        else:
            dotted = _dotted(node)
            bound = self.lookup(dotted[0]) if dotted else None
            if not dotted or not isinstance(bound, Ref) or bound.known != len(bound.parts):
                return None
            parts = (*bound.parts, *dotted[1:])
            return parts if parts[0] in self.upstreams else None
        parts = tuple(text.split(".")) if text else ()
        return parts if parts and parts[0] in self.upstreams else None

    def _folder(self, node: ast.expr) -> _Folder | None:
        if isinstance(node, ast.Name):
            bound = self.lookup(node.id)
            return bound if isinstance(bound, _Folder) else None
        path = isinstance(node, ast.Attribute) and node.attr == "parent"
        if isinstance(node, ast.Attribute) and path:
            node = node.value  # Path(X.__file__).parent
            if not (isinstance(node, ast.Call) and _dotted(node.func) in _PATHS):
                return None
        elif isinstance(node, ast.Subscript) and _index(node.slice) == 0:
            node = node.value  # os.path.split(...)[0]
            if not (isinstance(node, ast.Call) and _dotted(node.func) == _SPLIT):
                return None
        elif not (isinstance(node, ast.Call) and _dotted(node.func) == _DIRNAME):
            return None
        file = node.args[0] if len(node.args) == 1 else None
        if not (isinstance(file, ast.Attribute) and file.attr == "__file__"):
            return None
        parts = self._parts(file.value)
        return _Folder(parts, path) if parts else None

    def _files(self, node: ast.expr) -> _Entries | None:
        """`os.listdir(folder)`, `folder.iterdir()`, `folder.glob("*.py")` (also `sorted(...)`
        of them): the folder's file names, or paths."""
        if isinstance(node, ast.Call) and _called(node.func) == "sorted" and len(node.args) == 1:
            node = node.args[0]
        if isinstance(node, ast.Name):
            bound = self.lookup(node.id)
            return bound if isinstance(bound, _Entries) else None
        if not isinstance(node, ast.Call):
            return None
        if _dotted(node.func) == _LISTDIR and node.args:
            folder = self._folder(node.args[0])
            return _Entries(Listed((*folder.parts, FILES))) if folder else None
        if not (isinstance(node.func, ast.Attribute) and node.func.attr in ("iterdir", "glob")):
            return None
        folder = self._folder(node.func.value)
        pattern = getattr(node.args[0], "value", None) if len(node.args) == 1 else "*"
        tests = _globbed(pattern) if node.func.attr == "glob" else ()
        if folder is None or not folder.path or tests is None:
            return None
        return _Entries(Listed((*folder.parts, FILES), filters=tests), paths=True)

    def _listing(self, node: ast.expr) -> Listed | None:
        """`dir(module)` and a comprehension keeping some of its names."""
        if isinstance(node, ast.ListComp) and len(node.generators) == 1:
            generator = node.generators[0]
            base = self._listing(generator.iter)
            variable = generator.target
            whole = isinstance(node.elt, ast.Name) and isinstance(variable, ast.Name)
            if base is None or base.filters is None or not isinstance(variable, ast.Name):
                return None
            tests = tuple((variable.id, test) for test in generator.ifs)
            return Listed(base.parts, base.lowercase, base.filters + tests) if whole else None
        if isinstance(node, ast.Name):
            bound = self.lookup(node.id)
            return bound if isinstance(bound, Listed) else None
        if isinstance(node, ast.Call) and _called(node.func) == "dir" and len(node.args) == 1:
            parts = self._parts(node.args[0])
            return Listed((*parts, CLASSES)) if parts else None
        return None

    def _names(self, listed: Listed) -> list[str] | None:
        """The names a listing keeps on the newest release read; None when scan cannot say."""
        found = self.names_in(listed.parts)
        kept = listed.kept(found or ())
        return list(kept.values[:MAX_LISTED]) if kept is not None and found else None

    def _loop(self, node: ast.For) -> bool:
        """A loop over a folder's files or a module's names: its body once per name kept,
        `if <test of the name>: continue` at its head read as a filter."""
        files = self._files(node.iter)
        listed = files.listed if files else self._listing(node.iter)
        if listed is None or not isinstance(node.target, ast.Name):
            return self.run(node.body)
        variable = node.target.id
        skips = [s for s in node.body if isinstance(s, ast.If) and _skips(s, variable)]
        tests = tuple((variable, ast.UnaryOp(ast.Not(), s.test)) for s in skips)
        if listed.filters is None:
            return False
        names = self._names(Listed(listed.parts, listed.lowercase, listed.filters + tests))
        if names is None:
            return False
        module = ".".join(listed.parts[:-1])
        for name in names:
            self.env[variable] = _entry(files, name) if files else _Picked(module, name)
            if not self.run([s for s in node.body if s not in skips]):
                return False
        return True

    def _gather(self, name: str, value: ast.expr) -> bool:
        """`rows += [(eval(x), item, x) for x in names]`."""
        rows = self.lookup(name)
        if not isinstance(rows, _Rows):
            return True
        made = self._made(value)
        if made is None:
            return False
        rows.rows += made
        return True

    def _appended(self, call: ast.Call) -> bool:
        """`rows.append((cls, item))` and `rows.extend([...])`."""
        func = call.func
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
            return True
        rows = self.lookup(func.value.id)
        if not isinstance(rows, _Rows) or len(call.args) != 1:
            return True
        if func.attr == "append":
            rows.rows.append(tuple(self._cell(e) for e in getattr(call.args[0], "elts", [])))
            return True
        made = self._made(call.args[0]) if func.attr == "extend" else []
        if made is None:
            return False
        rows.rows += made
        return True

    def _made(self, value: ast.expr) -> list[tuple[Cell, ...]] | None:
        """The rows a comprehension of tuples over a module's names makes."""
        if not (isinstance(value, ast.ListComp) and len(value.generators) == 1):
            return []
        generator = value.generators[0]
        listed = self._listing(generator.iter)
        target = generator.target
        if listed is None or not isinstance(target, ast.Name):
            return []
        if listed.filters is None:
            return None
        tests = tuple((target.id, test) for test in generator.ifs)
        names = self._names(Listed(listed.parts, listed.lowercase, listed.filters + tests))
        if names is None:
            return None
        module = ".".join(listed.parts[:-1])
        made = []
        for name in names:
            self.env[target.id] = _Picked(module, name)
            made.append(tuple(self._cell(e) for e in getattr(value.elt, "elts", [value.elt])))
        return made

    def _cell(self, node: ast.expr) -> Cell:
        """A tuple's item: a class picked from a listing (`eval(x)`, `getattr(m, x)`), its
        name (`x`), or a text spelled out (`item`)."""
        if isinstance(node, ast.Call) and _called(node.func) in ("eval", "getattr") and node.args:
            picked = self.lookup(getattr(node.args[-1], "id", ""))
            if isinstance(picked, _Picked) and len(node.args) <= 2:
                return ListedClass(picked.module, picked.name)
        if isinstance(node, ast.Name) and isinstance(picked := self.lookup(node.id), _Picked):
            return picked.name
        return one_spelled(node, self.lookup)

    def _returned(self, value: ast.expr) -> None:
        """`return rows`, `tuple(rows)`, `list(rows)`: what the function yields."""
        if isinstance(value, ast.Call) and _called(value.func) in ("tuple", "list"):
            value = value.args[0] if len(value.args) == 1 else value
        rows = self.lookup(value.id) if isinstance(value, ast.Name) else None
        cells = [cell for row in rows.rows for cell in row] if isinstance(rows, _Rows) else []
        if isinstance(rows, _Rows) and any(isinstance(cell, ListedClass) for cell in cells):
            self.found = Yielded(tuple(rows.rows[:MAX_ROWS]))


_LOADS = frozenset({"eval", "import_module"})


def _called(func: ast.expr) -> str:
    return func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")


def _dotted(node: ast.expr) -> tuple[str, ...]:
    found = chain(node)
    return (found[0], *found[1]) if found else ()


def _index(node: ast.expr) -> int | None:
    return node.value if isinstance(node, ast.Constant) and type(node.value) is int else None


def _entry(files: _Entries, name: str) -> Texts | FileEntry:
    return FileEntry(name) if files.paths else Texts((name,))


def _globbed(pattern: object) -> tuple[tuple[str, ast.expr], ...] | None:
    """`glob("*.py")` as a filter of the names listed (`*` alone keeps all); None for any
    other pattern."""
    if pattern == "*":
        return ()
    if not isinstance(pattern, str) or not pattern.startswith("*") or set("*?[") & set(pattern[1:]):
        return None
    name = ast.Name(id="_", ctx=ast.Load())
    ends = ast.Call(ast.Attribute(name, "endswith", ast.Load()), [ast.Constant(pattern[1:])], [])
    return (("_", ends),)


def _skips(statement: ast.If, variable: str) -> bool:
    """`if <test of the loop variable>: continue`: a filter of the names listed (one testing
    anything else as well, `name in SKIPPED`, cannot be evaluated: nothing is listed)."""
    if statement.orelse:
        return False
    only_continue = len(statement.body) == 1 and isinstance(statement.body[0], ast.Continue)
    names = {n.id for n in ast.walk(statement.test) if isinstance(n, ast.Name)}
    return only_continue and variable in names


# what a file must spell for scan to look for a listing of a folder in its functions
LISTS_FOLDERS = frozenset({"listdir", "iterdir", "glob"})


class _Scanning(Protocol):
    """What the visitor knows where it meets the def (patterns.FileScanner)."""

    upstreams: frozenset[str]

    @property
    def flow(self) -> Any: ...

    @property
    def scopes(self) -> Any: ...


def folder_rows(at: _Scanning, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> Yielded | None:
    """The rows of listed classes `fn` returns, evaluated over the newest release read (none
    when no release is read), with the bindings of the scope around it."""
    names_in: NamesIn | None = at.flow.names_in
    if names_in is None:
        return None
    rows = FolderRows(at.scopes.lookup, at.upstreams, names_in)
    return rows.found if rows.run(fn.body) else None
