"""The upstream itself, read as the checks read it: where a name is defined and what it is.

Scan places each proposal where it can hold on a real release: a class or function at the
module that defines it (following re-exports, star imports and the lazy `TYPE_CHECKING`
imports of package roots), a method in the class of the hierarchy that defines it, a name the
downstream reads but upstream only binds (`logger`, `__version__`) as a `symbol`. Nothing is
imported: the modules come from a source tree through the engine's module lookup.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from canary.analysis import ClassInfo, FunctionInfo, ModuleInfo, ParseError
from canary.analysis.attributes import attributes
from canary.analysis.bases import ClassRef, Hierarchy
from canary.analysis.generated import init_of
from canary.analysis.namespace import ModuleLookup, Namespace
from canary.scan.downstream.rewriters import ANY_CLASS
from canary.scan.downstream.spelled import CLASSES, FILES
from canary.scan.upstream.stand_ins import is_stand_in
from canary.sources.tree import SourceError

#: A dotted module name -> its index, or None when this release has no such module.
#: (module, method) -> the class of that module defining the method on some other release
Elsewhere = Callable[[str, str], "str | None"]

_MAX_HOPS = 12
_MAX_BASES = 40
_HEADER = re.compile(r"^\s*class\s+\w+\s*\(([^:]*)\)\s*:", re.MULTILINE)  # its bases, keywords


@dataclass(frozen=True)
class Definition:
    """Where a name lives: `kind` is "module", "class", "function" or "value"."""

    module: str
    name: str
    kind: str


class UpstreamView:
    """One release of one upstream; `label` names it in comments (e.g. "5.17.0")."""

    def __init__(
        self,
        lookup: ModuleLookup,
        label: str,
        namespace: Namespace | None = None,
        places: dict[str, str] | None = None,
        elsewhere: Elsewhere | None = None,
    ):
        self._lookup = lookup
        # where a method no class of this release defines is found on others (releases.py)
        self._elsewhere = elsewhere
        self.label = label
        self._namespace = namespace or Namespace(lookup)  # what lazy modules export
        self._places = {} if places is None else places  # what they were found to (places.py)
        self._modules: dict[str, ModuleInfo | None] = {}
        self._resolved: dict[tuple[str, ...], tuple[Definition, tuple[str, ...]] | None] = {}
        self._owners: dict[tuple[Definition, str], Definition | None] = {}
        self._hierarchy: Hierarchy | None = None  # the engine's, for member()
        self._generated: dict[Definition, bool] = {}  # generated_init()'s answers

    def module(self, name: str) -> ModuleInfo | None:
        """The module's index; None when absent or unreadable (a reason scan cannot place)."""
        if name not in self._modules:
            try:
                self._modules[name] = self._lookup(name) if name else None
            except (SourceError, ParseError):
                self._modules[name] = None
        return self._modules[name]

    def define(self, module: str, name: str, hops: int = _MAX_HOPS) -> Definition | None:
        """What `name` of `module` is, where it is defined; None when not bound there."""
        info = self.module(module)
        if hops <= 0:
            return None
        if info is None:
            return None
        if name in info.classes:
            return Definition(module, name, "class")
        if name in info.functions:
            return Definition(module, name, "function")
        bindings = info.bindings.get(name, [])
        for binding in bindings:
            if binding.kind == "import" and binding.origin:
                found = self._origin(binding.origin, hops - 1)
                if found is not None:
                    return found
        if bindings:
            return Definition(module, name, "value")
        if self.module(f"{module}.{name}") is not None:
            return Definition(f"{module}.{name}", "", "module")
        for star in info.star_imports:
            found = self.define(star, name, hops - 1)
            if found is not None:
                return found
        return self._lazily(info, name, hops) if info.lazy is not None else None

    def _lazily(self, info: ModuleInfo, name: str, hops: int) -> Definition | None:
        """A name a lazy module serves (transformers' roots: `define_import_structure` over
        their folders), found where the engine finds it."""
        key = f"{info.name}:{name}"
        if key not in self._places:
            try:
                found = self._namespace.find(info, name)
            except (SourceError, ParseError):
                return None  # not remembered: a fault is no answer
            defined = ""
            if not isinstance(found, str) and found.bindings and found.module.name != info.name:
                defined = found.module.name
            self._places[key] = defined
        where = self._places[key]
        return self.define(where, name, hops - 1) if where else None

    def _origin(self, origin: str, hops: int) -> Definition | None:
        """What an import binds: a module itself, or a name of the module before the dot."""
        if self.module(origin) is not None:
            return Definition(origin, "", "module")
        head, _, last = origin.rpartition(".")
        return self.define(head, last, hops) if head else None

    def resolve(self, parts: tuple[str, ...]) -> tuple[Definition, tuple[str, ...]] | None:
        """The definition a dotted path reaches and the names left after it.

        None when not even the top module exists; a module with names left means the next name
        is not bound in it.
        """
        if parts not in self._resolved:
            self._resolved[parts] = self._resolve(parts)
        return self._resolved[parts]

    def _resolve(self, parts: tuple[str, ...]) -> tuple[Definition, tuple[str, ...]] | None:
        current: Definition | None = None
        for end in range(len(parts), 0, -1):
            if self.module(".".join(parts[:end])) is not None:
                current = Definition(".".join(parts[:end]), "", "module")
                break
        if current is None:
            return None
        rest = parts[len(current.module.split(".")) :]
        while rest and current.kind == "module":
            if rest[0] == ANY_CLASS:
                owner = self.class_with(current.module, rest[1]) if len(rest) > 1 else None
                return (owner, rest[1:]) if owner else (current, ())
            found = self.define(current.module, rest[0])
            if found is None:
                break
            current, rest = found, rest[1:]
        return current, rest

    def names_in(self, module: str) -> set[str]:
        """What `dir(module)` names once its submodules are imported, read from this release:
        the modules right under it in the file listing and what it binds (classes, functions,
        other names); empty when neither is known."""
        prefix = f"{module}."
        names = (m[len(prefix) :] for m in self._namespace.module_names() if m.startswith(prefix))
        info = self.module(module)
        bound = {*info.classes, *info.functions, *info.bindings} if info is not None else set()
        return {name for name in names if name and "." not in name} | bound

    def listed(self, parts: tuple[str, ...]) -> set[str]:
        """What a downstream listing of `parts` names on this release: `dir()` of a module,
        the files of a package's folder (`parts` ending FILES), or the classes a module binds
        (CLASSES)."""
        module = ".".join(parts[:-1])
        if parts[-1] == FILES:
            return self._files(module)
        if parts[-1] == CLASSES:
            return self._classes(module)
        return self.names_in(".".join(parts))

    def _files(self, package: str) -> set[str]:
        """`os.listdir` of a package's folder: `__init__.py`, `NAME.py` of each module right
        under it, `NAME` of each package (a module with modules under it); empty when none."""
        prefix = f"{package}."
        under = [m[len(prefix) :] for m in self._namespace.module_names() if m.startswith(prefix)]
        folders = {name.split(".")[0] for name in under if "." in name}
        files = {f"{name}.py" for name in under if name and "." not in name} - {
            f"{name}.py" for name in folders
        }
        return files | folders | {"__init__.py"} if files or folders else set()

    def _classes(self, module: str) -> set[str]:
        """The names `module` binds to classes: its own, and those it imports."""
        info = self.module(module)
        if info is None:
            return set()
        imported = {
            name
            for name, bindings in info.bindings.items()
            if any(b.kind == "import" for b in bindings)
            and getattr(self.define(module, name), "kind", None) == "class"
        }
        return {*info.classes, *imported}

    def elsewhere(self, module: str, method: str) -> Definition | None:
        """The class of `module` that defines `method` on another release of the range, for
        a method no class of this release defines (None: none, or not looked for)."""
        name = self._elsewhere(module, method) if self._elsewhere else None
        return Definition(module, name, "class") if name else None

    def class_with(self, module: str, method: str) -> Definition | None:
        """The class of `module` that defines `method` itself (the first, in source order);
        else a stand-in left there for a class moved elsewhere that defines it (stand_ins.py)."""
        info = self.module(module)
        if info is None:
            return None
        for name, classes in info.classes.items():
            if any(method in c.methods for c in classes):
                return Definition(module, name, "class")
        for name, classes in info.classes.items():
            if len(classes) != 1 or not is_stand_in(info.segment(classes[0].span)):
                continue
            owner = self.method_owner(Definition(module, name, "class"), method)
            if owner is not None and owner.module != module:
                return Definition(module, name, "class")
        return None

    def method_owner(self, cls: Definition, method: str) -> Definition | None:
        """The class of `cls`'s hierarchy (itself first, then its bases) that defines method."""
        if (cls, method) not in self._owners:
            self._owners[cls, method] = self._method_owner(cls, method)
        return self._owners[cls, method]

    def _method_owner(self, cls: Definition, method: str) -> Definition | None:
        return next(
            (c for c, infos in self._lineage(cls) if any(method in i.methods for i in infos)),
            None,
        )

    def attribute_owner(self, cls: Definition, name: str) -> Definition | None:
        """The class of `cls`'s hierarchy whose body binds `name` as a class attribute (an
        assignment, an annotation, `__slots__`), not as a method."""
        for current, infos in self._lineage(cls):
            for info in infos:
                if (
                    name in info.assigned
                    or name in info.slots
                    or name in (f.name for f in info.fields)
                ):
                    return current
        return None

    def foreign_base(self, cls: Definition) -> str | None:
        """The dotted path of the first base in `cls`'s hierarchy that another package
        defines (`from gbase.trainer import BaseTrainer` as a base of a class here): the
        methods it brings are read on that package's releases, not on this one's."""
        root = cls.module.split(".")[0]
        for current, infos in self._lineage(cls):
            for base in (b for info in infos for b in info.bases):
                origin = self._imported(current.module, base)
                if origin and origin.split(".")[0] != root:
                    return origin
        return None

    def _lineage(self, cls: Definition) -> Iterator[tuple[Definition, list[ClassInfo]]]:
        """`cls` and the classes of its bases this release defines, breadth first, each
        with its definitions (one per `class` statement of that name)."""
        seen: set[tuple[str, str]] = set()
        queue = [cls]
        while queue and len(seen) < _MAX_BASES:
            current = queue.pop(0)
            if (current.module, current.name) in seen:
                continue
            seen.add((current.module, current.name))
            info = self.module(current.module)
            infos = info.classes.get(current.name, []) if info else []
            yield current, infos
            for base in (b for c in infos for b in c.bases):
                found = self._base(current.module, base)
                if found is not None and found.kind == "class":
                    queue.append(found)

    def _imported(self, module: str, base: str) -> str | None:
        """Where the import binding a base's first name in `module` takes it from, with the
        rest of the base's dotted name (`peft.PeftModel` for `peft.PeftModel` after `import
        peft`)."""
        info = self.module(module)
        head, *rest = base.split("[")[0].split(".")
        bindings = info.bindings.get(head, []) if info else []
        origin = next((b.origin for b in bindings if b.kind == "import" and b.origin), None)
        return ".".join([origin, *rest]) if origin else None

    def member(self, cls: Definition, name: str) -> FunctionInfo | bool | None:
        """What `name` is on class `cls` through its MRO, as the engine's `methods` and
        `attributes` read it: the method's def (the last variant), True for an attribute
        it binds (a field, a class attribute, a property, `self.name = ...` in a method),
        False when the class is not read or binds no such name, None when it may bind it
        through a base outside the upstream (`torch.nn.Module`), which is not read."""
        ref = self._class_ref(cls)
        if ref is None:
            return False
        hierarchy = self._engine_hierarchy()
        bound = attributes(hierarchy, ref).bound
        if name in bound and "property" in bound[name].how:
            return True
        order, unresolved = hierarchy.mro(ref)
        for owner in order:
            if functions := owner.methods(name):
                return functions[-1]
        return True if name in bound else None if unresolved else False

    def generated_init(self, cls: Definition) -> bool:
        """Whether a call of `cls` runs an `__init__` Python generates (a dataclass's, taking
        its fields and its bases'), as the engine's checks of `cls.__init__` read it. Not
        where a class of its hierarchy names a metaclass, which may wrap what `@dataclass`
        sets (transformers 5.24's ModelOutput takes the old `past_key_values` that way)."""
        if cls not in self._generated:
            ref = self._class_ref(cls)
            init = init_of(self._engine_hierarchy(), ref) if ref is not None else None
            self._generated[cls] = bool(init and init.generated) and not _metaclassed(self, cls)
        return self._generated[cls]

    def _class_ref(self, cls: Definition) -> ClassRef | None:
        info = self.module(cls.module)
        variants = tuple(info.classes.get(cls.name, ())) if info else ()
        return ClassRef(info, variants) if info is not None and variants else None

    def _engine_hierarchy(self) -> Hierarchy:
        if self._hierarchy is None:
            self._hierarchy = Hierarchy(self._namespace)
        return self._hierarchy

    def _base(self, module: str, base: str) -> Definition | None:
        """A base class expression (`Trainer`, `transformers.Trainer`) seen from `module`."""
        head, *rest = base.split("[")[0].split(".")
        found = self.define(module, head)
        for part in rest:
            if found is None or found.kind != "module":
                return None
            found = self.define(found.module, part)
        return found


def _metaclassed(view: UpstreamView, cls: Definition) -> bool:
    """Whether a class of `cls`'s hierarchy names a metaclass (`class X(Base, metaclass=M):`)."""
    for current, infos in view._lineage(cls):
        module = view.module(current.module)
        for info in infos if module is not None else ():
            header = _HEADER.search(module.segment(info.span)) if module else None
            if header is not None and "metaclass" in header[1]:
                return True
    return False
