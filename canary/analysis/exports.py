"""What a module exports beyond its plain bindings, read from its AST at index time:

- `__all__` (a literal list or tuple, `+=`, `.extend`, `.append`), which decides what
  `from m import *` binds;
- lazy structures: transformers 4.x `_import_structure` dicts (literals, `[...] = `, `+=`,
  `.append`, `.extend`, `.update`, under availability if/else and try/except), transformers 5.x
  `define_import_structure(...)` over a folder's submodules, trl's `_LazyModule`, and the
  module-level `__getattr__` of peft's packages;
- module alias tables served by an import hook (transformers 5.x `_LEGACY_MODULE_ALIASES`).

Everything is read statically; a construct not understood marks the structure incomplete
rather than guessing what it adds.
"""

from __future__ import annotations

import ast

from canary.analysis.model import LazyExports

_FILE_EXPRS = ('globals()["__file__"]', "__file__", "globals()['__file__']")
#: How many names or calls a folder expression may go through (`_file = ...; Path(_file)...`).
_MAX_PATH_DEPTH = 5


def _strings(node: ast.expr | None) -> list[str] | None:
    """The strings of a literal list/tuple/set (or `a + b` of them); None when not literal."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _strings(node.left), _strings(node.right)
        return None if left is None or right is None else left + right
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        values = [e.value for e in node.elts if isinstance(e, ast.Constant)]
        strings = [v for v in values if isinstance(v, str)]
        if len(strings) == len(node.elts):
            return strings
    if isinstance(node, ast.Call) and ast.unparse(node.func) in ("set", "list", "tuple"):
        return _strings(node.args[0]) if len(node.args) == 1 else [] if not node.args else None
    return None


def _string(node: ast.expr | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _call_name(node: ast.AST | None) -> str:
    return ast.unparse(node.func).rsplit(".", 1)[-1] if isinstance(node, ast.Call) else ""


def _call_args(node: ast.AST | None, name: str) -> list[ast.expr]:
    """The positional arguments of `node` when it is a call of `name`, else none."""
    return node.args if isinstance(node, ast.Call) and _call_name(node) == name else []


def _is_dummy_list(node: ast.expr) -> bool:
    """`[name for name in dir(dummy_objects) ...]`: the placeholders of a missing backend,
    listed where the real names are listed in the other branch."""
    return isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp)


class _Structure:
    """One `_import_structure`-like dict as the module builds it."""

    def __init__(self) -> None:
        self.names: dict[str, list[str]] = {}  # name -> relative submodules
        self.keys: set[str] = set()
        self.folders: list[ast.expr] = []
        self.merges: list[str] = []
        self.complete = True

    def add(self, key: str, values: list[str]) -> None:
        self.keys.add(key)
        for value in values:
            modules = self.names.setdefault(value, [])
            if key not in modules:
                modules.append(key)

    def add_dict(self, node: ast.expr) -> None:
        if not isinstance(node, ast.Dict):
            self.complete = False
            return
        for key, value in zip(node.keys, node.values, strict=True):
            self.add_value(_string(key), value)

    def add_value(self, key: str | None, value: ast.expr) -> None:
        values = _strings(value)
        if key is not None and values is not None:
            self.add(key, values)
        elif key is not None and _is_dummy_list(value):
            self.keys.add(key)
        else:
            self.complete = False


class ExportsCollector:
    """Fed every module-level statement that runs (not those under TYPE_CHECKING)."""

    def __init__(self) -> None:
        self.all_names: dict[str, None] = {}  # in order, each once (a list's `in` was quadratic)
        self.all_seen = False
        self.all_known = True
        self.structures: dict[str, _Structure] = {}
        self.simple: dict[str, ast.expr] = {}  # NAME = expr, for paths such as `_file`
        self.lazy_call: ast.Call | None = None
        self.alias_tables: dict[str, dict[str, str]] = {}
        self.finder = False
        self.getattr_names: dict[str, list[str]] = {}  # name -> "module" or "module:attr"
        self.getattr_computed: list[str] = []  # names `__getattr__` returns without an import
        self.getattr_unread = 0  # the line of a `__getattr__ = ...` whose names are not literal
        self.alias_makers: dict[str, tuple[int, int]] = {}  # function -> (alias, target) args
        self.made_aliases: dict[str, str] = {}  # alias -> target, each relative or absolute
        self.shim = 0  # the line of `sys.modules[__name__] = VALUE`, VALUE no lazy module

    # -- statements ------------------------------------------------------------------------

    def statement(self, node: ast.stmt) -> None:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            self.assign(node.targets[0], node.value)
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            self.assign(node.target, node.value)
        elif isinstance(node, ast.AugAssign) and ast.unparse(node.target) == "__all__":
            self.extend_all(_strings(node.value))
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Subscript):
            owner = ast.unparse(node.target.value)
            if owner in self.structures:  # `_import_structure["x"] += ["Name"]`
                self.structure(owner).add_value(_string(node.target.slice), node.value)
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            self.call(node.value)
        elif isinstance(node, ast.FunctionDef) and node.name == "__getattr__":
            self.module_getattr(node)
        elif isinstance(node, ast.FunctionDef):
            self.alias_maker(node)

    def extend_all(self, values: list[str] | None) -> None:
        self.all_seen = True
        if values is None:
            self.all_known = False
        else:
            self.all_names.update(dict.fromkeys(values))

    def structure(self, name: str) -> _Structure:
        return self.structures.setdefault(name, _Structure())

    def assign(self, target: ast.expr, value: ast.expr) -> None:
        if isinstance(target, ast.Name):
            name = target.id
            self.simple[name] = value
            if name == "__getattr__":
                self.getattr_factory(value)
            elif name == "__all__":
                self.extend_all(_strings(value))
            elif isinstance(value, ast.Dict):
                table = _alias_table(value)
                if table and name.endswith("MODULE_ALIASES"):
                    self.alias_tables[name] = table
                elif name in self.structures or "structure" in name.lower():
                    self.structure(name).add_dict(value)
            elif folders := _call_args(value, "define_import_structure"):
                self.structure(name).folders.append(folders[0])
        elif isinstance(target, ast.Subscript):
            owner = ast.unparse(target.value)
            if owner == "sys.modules" and _call_name(value).endswith("LazyModule"):
                self.lazy_call, self.shim = value, 0  # type: ignore[assignment]
            elif owner == "sys.modules" and ast.unparse(target.slice) == "__name__":
                self.lazy_call, self.shim = None, value.lineno
            elif owner in self.structures:
                self.structure(owner).add_value(_string(target.slice), value)

    def call(self, call: ast.Call) -> None:
        func = call.func
        if isinstance(func, ast.Name) and func.id in self.alias_makers:
            self.made_alias(call, *self.alias_makers[func.id])
            return
        if not isinstance(func, ast.Attribute):
            return
        method, owner = func.attr, func.value
        owner_text = ast.unparse(owner)
        if owner_text == "__all__" and method in ("extend", "append") and call.args:
            arg = call.args[0]
            self.extend_all(_strings(arg) if method == "extend" else _strings(ast.List([arg])))
        elif owner_text == "sys.meta_path" and method in ("append", "insert"):
            self.finder = True
        elif isinstance(owner, ast.Subscript) and ast.unparse(owner.value) in self.structures:
            structure = self.structure(ast.unparse(owner.value))
            key = _string(owner.slice)
            values = _strings(call.args[0]) if call.args else None
            if method == "append" and call.args:
                values = _strings(ast.List([call.args[0]]))
            if method in ("append", "extend") and key is not None and values is not None:
                structure.add(key, values)
            elif method == "update" and call.args and isinstance(call.args[0], ast.Name):
                structure.merges.append(call.args[0].id)
            elif method in ("append", "extend", "update"):
                structure.complete = False
        elif owner_text in self.structures:
            structure = self.structure(owner_text)
            if method == "update" and call.args:
                if isinstance(call.args[0], ast.Name):
                    structure.merges.append(call.args[0].id)
                else:
                    structure.add_dict(call.args[0])
            elif method == "setdefault" and call.args and _string(call.args[0]):
                structure.keys.add(_string(call.args[0]) or "")

    def module_getattr(self, node: ast.FunctionDef) -> None:
        """PEP 562: `if name == "X": from .sub import X; return X` serves X from .sub,
        `if name == "X": ... return value` computes X in `__getattr__` itself, and
        `if name in TABLE: importlib.import_module(...)` serves TABLE's keys, a table mapping
        a name to its module, to "module:attr" (vLLM's `MODULE_ATTRS`) or to (module, attr)."""
        if not node.args.args:
            return
        param = node.args.args[0].arg
        for child in ast.walk(node):
            if not isinstance(child, ast.If):
                continue
            wanted = _compared_names(child.test, param)
            imported = set()
            for statement in child.body:
                if isinstance(statement, ast.ImportFrom):
                    for alias in statement.names:
                        bound = alias.asname or alias.name
                        if bound in wanted:
                            imported.add(bound)
                            where = "." * statement.level + (statement.module or "")
                            self.getattr_names.setdefault(bound, []).append(where)
            if wanted - imported and _returns_a_value(child.body):
                self.getattr_computed.extend(sorted(wanted - imported))
            table = self._table_tested(child.test, param)
            if table and any(_call_name(n) == "import_module" for n in ast.walk(child)):
                for name, where in table.items():
                    self.getattr_names.setdefault(name, []).append(where)

    def getattr_factory(self, value: ast.expr) -> None:
        """`__getattr__ = deprecate_attr(__name__, rename={"Old": (New, "5.29.0")})` (transformers
        5) serves each literal key of a dict argument; any other value's names are not read."""
        call = value if isinstance(value, ast.Call) else None
        arguments = [*call.args, *(k.value for k in call.keywords)] if call else []
        tables = [table.keys for table in arguments if isinstance(table, ast.Dict)]
        served = [name for keys in tables for key in keys if (name := _string(key)) is not None]
        self.getattr_computed.extend(served)
        if not served:
            self.getattr_unread = value.lineno

    def _table_tested(self, test: ast.expr, param: str) -> dict[str, str] | None:
        """The module-level table in `name in TABLE`, if that is the test: name -> "module"
        or "module:attr"."""
        if not (
            isinstance(test, ast.Compare)
            and isinstance(test.ops[0], ast.In)
            and isinstance(test.left, ast.Name)
            and test.left.id == param
            and isinstance(test.comparators[0], ast.Name)
        ):
            return None
        value = self.simple.get(test.comparators[0].id)
        if not isinstance(value, ast.Dict):
            return None
        table = {_string(k): _origin(v) for k, v in zip(value.keys, value.values, strict=True)}
        if any(k is None or v is None for k, v in table.items()):
            return None
        return table  # type: ignore[return-value]

    def alias_maker(self, node: ast.FunctionDef) -> None:
        """transformers 5.14's `_create_module_alias(alias, target)`: a function that puts a
        module at `sys.modules[alias]` and serves `import_module(target, ...)` through it."""
        params = [a.arg for a in node.args.args]
        alias = target = None
        for child in ast.walk(node):
            if isinstance(child, ast.Assign) and len(child.targets) == 1:
                slot = child.targets[0]
                if isinstance(slot, ast.Subscript) and ast.unparse(slot.value) == "sys.modules":
                    key = slot.slice
                    alias = key.id if isinstance(key, ast.Name) and key.id in params else alias
            elif imported := _call_args(child, "import_module"):
                first = imported[0]
                target = first.id if isinstance(first, ast.Name) and first.id in params else target
        if alias and target:
            self.alias_makers[node.name] = (params.index(alias), params.index(target))
        else:
            self.alias_makers.pop(node.name, None)

    def made_alias(self, call: ast.Call, alias_at: int, target_at: int) -> None:
        """One call of an alias maker with literal arguments (`f"{__name__}.x"` for the alias
        names a submodule of this module)."""
        if len(call.args) <= max(alias_at, target_at) or call.keywords:
            return
        alias, target = _own_name(call.args[alias_at]), _string(call.args[target_at])
        if alias is not None and target is not None:
            self.made_aliases[alias] = target

    # -- results ---------------------------------------------------------------------------

    def dunder_all(self) -> tuple[str, ...] | None:
        return tuple(self.all_names) if self.all_seen and self.all_known else None

    def lazy(self, package: str) -> LazyExports | None:
        """The lazy exports with absolute module names (`package`: the module's package)."""
        if self.shim:
            return LazyExports(complete=False, shim=self.shim)
        if self.lazy_call is not None:
            return self._replacing(self.lazy_call, package)
        if self.getattr_names or self.getattr_computed or self.getattr_unread:
            names = {
                name: tuple(_absolute(where, package) for where in wheres)
                for name, wheres in self.getattr_names.items()
            }
            computed = tuple(dict.fromkeys(self.getattr_computed))
            unread = self.getattr_unread
            return LazyExports(names=names, replaces=False, computed=computed, unread=unread)
        return None

    def _replacing(self, call: ast.Call, package: str) -> LazyExports:
        arg = call.args[2] if len(call.args) > 2 else None
        for keyword in call.keywords:
            if keyword.arg == "import_structure":
                arg = keyword.value
        merged = _Structure()
        if isinstance(arg, ast.Name) and arg.id in self.structures:
            self._merge(arg.id, merged, set())
        elif folders := _call_args(arg, "define_import_structure"):
            merged.folders.append(folders[0])
        else:
            merged.complete = False
        extra: tuple[str, ...] = ()
        for keyword in call.keywords:
            if keyword.arg == "extra_objects":
                if isinstance(keyword.value, ast.Dict):
                    extra = tuple(k for k in map(_string, keyword.value.keys) if k)
                else:
                    merged.complete = False
        found: list[str] = []
        for path in merged.folders:
            folder = self._folder(path, package)
            if folder is None:
                merged.complete = False
            else:
                found.append(folder)
        names = {n: tuple(f"{package}.{m}" for m in mods) for n, mods in merged.names.items()}
        for key in merged.keys:  # a key without a dot is a submodule, served as an attribute
            if "." not in key and key not in names:
                names[key] = (f"{package}.{key}",)
        return LazyExports(names, tuple(found), extra, True, merged.complete)

    def _merge(self, name: str, into: _Structure, seen: set[str]) -> None:
        if name in seen or name not in self.structures:
            into.complete = into.complete and name in seen
            return
        seen.add(name)
        structure = self.structures[name]
        for value, keys in structure.names.items():
            for key in keys:
                into.add(key, [value])
        into.keys |= structure.keys
        into.folders.extend(structure.folders)
        into.complete = into.complete and structure.complete
        for other in structure.merges:
            self._merge(other, into, seen)

    def _folder(self, path: ast.expr, package: str, depth: int = 0) -> str | None:
        """The package a path expression names: this module's folder, or a subfolder of it."""
        if depth > _MAX_PATH_DEPTH:
            return None
        if ast.unparse(path) in _FILE_EXPRS:
            return package
        if isinstance(path, ast.Name) and path.id in self.simple:
            return self._folder(self.simple[path.id], package, depth + 1)
        if isinstance(path, ast.Attribute) and path.attr == "parent":
            inner = path.value
            if isinstance(inner, ast.Call) and _call_name(inner) == "Path" and inner.args:
                return self._folder(inner.args[0], package, depth + 1)
        if isinstance(path, ast.Call) and _call_name(path) == "dirname" and path.args:
            return self._folder(path.args[0], package, depth + 1)
        if isinstance(path, ast.BinOp) and isinstance(path.op, ast.Div):
            base, sub = self._folder(path.left, package, depth + 1), _string(path.right)
            return f"{base}.{sub}" if base and sub and sub.isidentifier() else None
        return None

    def aliases(self, package: str) -> dict[str, str]:
        """Legacy submodule -> real submodule: an alias table an import hook serves, and the
        modules an alias maker put in `sys.modules`."""
        found = {
            f"{package}.{old}": f"{package}.{new}"
            for table in (self.alias_tables.values() if self.finder else ())
            for old, new in table.items()
        }
        for alias, target in self.made_aliases.items():
            found[f"{package}.{alias}"] = _absolute(target, package)
        return found


def _alias_table(node: ast.Dict) -> dict[str, str] | None:
    """A literal table of strings to strings (`_MODULE_ALIASES = {"old": "new"}`), else None."""
    table = {_string(k): _string(v) for k, v in zip(node.keys, node.values, strict=True)}
    if any(k is None or v is None for k, v in table.items()):
        return None
    return table  # type: ignore[return-value]


def _compared_names(test: ast.expr, param: str) -> set[str]:
    """Names `test` requires the parameter to equal: `name == "X"`, `name in ("X", "Y")`,
    also inside `and`."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return set().union(*(_compared_names(v, param) for v in test.values))
    if (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.left, ast.Name)
        and test.left.id == param
    ):
        if isinstance(test.ops[0], ast.Eq):
            value = _string(test.comparators[0])
            return {value} if value else set()
        if isinstance(test.ops[0], ast.In):
            return set(_strings(test.comparators[0]) or [])
    return set()


def _own_name(node: ast.expr) -> str | None:
    """ "x.y" from `f"{__name__}.x.y"`: a dotted name below the module defining it."""
    if not isinstance(node, ast.JoinedStr) or len(node.values) != 2:
        return None
    head, tail = node.values
    if not (isinstance(head, ast.FormattedValue) and ast.unparse(head.value) == "__name__"):
        return None
    rest = _string(tail)
    if rest is None or not rest.startswith("."):
        return None
    name = rest[1:]
    return name if all(part.isidentifier() for part in name.split(".")) else None


def _origin(node: ast.expr) -> str | None:
    """A lazy table's value: "module", "module:attr", or ("module", "attr") as "module:attr"."""
    text = _string(node)
    if text is not None:
        return text
    parts = _strings(node) if isinstance(node, ast.Tuple) else None
    return f"{parts[0]}:{parts[1]}" if parts is not None and len(parts) == 2 else None


def _returns_a_value(body: list[ast.stmt]) -> bool:
    """A block that returns something (not only raises): the name is served there."""
    return any(
        isinstance(node, ast.Return) and node.value is not None
        for statement in body
        for node in ast.walk(statement)
    )


def _absolute(where: str, package: str) -> str:
    """`where` ("module" or "module:attr", perhaps relative) made absolute from `package`."""
    level = len(where) - len(where.lstrip("."))
    if level == 0:
        return where
    parts = package.split(".")
    parts = parts[: len(parts) - (level - 1)] if level > 1 else parts
    rest = where[level:]
    return ".".join([*parts, rest] if rest else parts)
