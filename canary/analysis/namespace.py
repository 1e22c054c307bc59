"""What `from M import X` finds at run time, decided statically across an upstream's modules.

A name is bound by M's own run-time statements (not those under `if TYPE_CHECKING:`), by a
star import (only `__all__` when the star-imported module defines it, else its public names),
or served lazily: by a lazy module that replaces M (then M's own globals are not what an import
sees), or by M's module-level `__getattr__`.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass

from canary.analysis.model import Binding, Exports, ModuleInfo, Unfollowed
from canary.analysis.similar import RememberedMatches
from canary.analysis.standing import deleted_at, standing, stars_below

#: Looks a dotted module name up; None when the module does not exist in this version.
ModuleLookup = Callable[[str], ModuleInfo | None]
#: The same module's exports alone (None when it does not exist): what a folder's walk reads.
ExportsLookup = Callable[[str], Exports | None]

#: Lazy modules served by lazy modules: past this many hops the chain is not followed.
_MAX_LAZY_HOPS = 32

#: A folder search that has not found its name in this many modules fetches as many again
#: together, and so on, doubling: a search that ends after 60 of 1,500 modules fetches (or
#: loads from the cache) 64, not the whole folder; one that reads all makes about 8 requests.
_PREFETCH_AFTER = 8

#: Modules define_import_structure leaves out of a folder's exports (transformers' rule).
_SKIPPED_PREFIXES = ("convert_", "modular_")

#: Near spellings of a missing module, shared by every version's Namespace: the same module is
#: missing from release after release of a bisection, over nearly the same module names.
_NEAR_MODULES = RememberedMatches(cutoff=0.8)


@dataclass(frozen=True)
class Found:
    """Where a name really lives: the module whose source binds it, and those bindings."""

    module: ModuleInfo
    bindings: tuple[Binding, ...]  # empty: the name is a submodule, its source the whole file
    note: str = ""  # how it was reached, when that is not plain: "exported lazily from ..."

    def sources(self) -> list[str]:
        if not self.bindings:
            return [self.module.text]
        return [self.module.segment(b.span) for b in self.bindings]


#: Said by a lazy module that replaces its module: the name is not there, look no further.
_STOP = Found(ModuleInfo("", "", ""), ())


class Namespace:
    """Name resolution over one version's modules (each module is looked up once by the run)."""

    def __init__(
        self,
        lookup: ModuleLookup,
        module_names: Callable[[], list[str]] = list,
        prefetch: Callable[[list[str]], None] = lambda names: None,
        exports: ExportsLookup | None = None,
        compile_error: Callable[[str], str | None] = lambda name: None,
    ):
        self.lookup = lookup
        #: why a module looked up cannot be imported because its file does not compile
        self.compile_error = compile_error
        self.exports = exports or self._exports_of_lookup
        self.module_names = module_names  # every module of the version, when known
        self.prefetch = prefetch  # modules about to be looked up, fetched together
        self._by_leaf: dict[str, list[str]] | None = None  # module names by their last part

    def _exports_of_lookup(self, name: str) -> Exports | None:
        info = self.lookup(name)
        return None if info is None else Exports.of(info)

    def similar_modules(self, name: str) -> list[str]:
        """Real module names close to `name`: the same last part elsewhere (a module that
        moved), else near spellings."""
        # asked on every call, though kept: a caller may record that the list was read
        # (canary.engine.reuse never reuses a verdict that read it)
        names = self.module_names()
        if self._by_leaf is None:  # once per version, not per lookup: thousands of names
            by_leaf: dict[str, list[str]] = {}
            for module in names:
                by_leaf.setdefault(module.rsplit(".", 1)[-1], []).append(module)
            self._by_leaf = by_leaf
        moved = [n for n in self._by_leaf.get(name.rsplit(".", 1)[-1], []) if n != name]
        if moved:
            return moved[:3]
        others = (n for n in names if n != name)
        return _NEAR_MODULES.close_matches(name, others, n=3)

    def find(self, module: ModuleInfo, name: str) -> Found | str:
        """Where `name` of `module` lives, or the detail of why an import would not find it."""
        found = self._find(module, name, set()) or self._submodule(module, name)
        if found is not None:
            return found
        unread = module.lazy.unread if module.lazy is not None else 0
        if unread:
            raise Unfollowed(
                f"{module.path}:{unread}: {module.name} binds no {name}, and its `__getattr__` "
                "is a value computed at run time, which canary does not follow"
            )
        return self._missing(module, name)

    def _submodule(self, module: ModuleInfo, name: str, how: str = "") -> Found | None:
        """`from package import sub` imports the submodule when the package binds no `sub`."""
        if not module.path.endswith("__init__.py"):
            return None
        target = self.lookup(f"{module.name}.{name}")
        if target is None:
            return None
        return Found(target, (), f"{name} is the submodule {target.name}{how}")

    def _find(
        self, module: ModuleInfo, name: str, seen: set[str], hops: int = _MAX_LAZY_HOPS
    ) -> Found | None:
        """Depth first through star imports, with a stack rather than recursion: an upstream
        may chain thousands of them."""
        pending = [module]
        while pending:
            current = pending.pop()
            if current.name in seen:
                continue
            seen.add(current.name)
            found = self._here(current, name, seen, hops)
            if found is _STOP:  # replaced by a lazy module: its own star imports do not count
                continue
            if found is not None:
                return found
            stars = [self.lookup(origin) for origin in current.star_imports]
            pending.extend(
                star
                for star in reversed(stars)
                if star is not None and star.name not in seen and self._star_exports(star, name)
            )
        return None

    def _here(self, module: ModuleInfo, name: str, seen: set[str], hops: int) -> Found | None:
        """The name as `module` itself binds or serves it; _STOP when a lazy module that
        replaces `module` decides it is not there."""
        lazy = module.lazy
        replaced(module)
        if lazy is not None and lazy.replaces:
            found = self._lazy(module, name, seen, hops)
            if found is not None or lazy.complete:
                return found or _STOP
        bindings = standing(module, name)  # the last binding made, and those that may follow
        if bindings:
            starred = self.star_rebinding(module, name, [b.span.start for b in bindings])
            return starred or Found(module, bindings)
        if lazy is not None and not lazy.replaces:
            return self._lazy(module, name, seen, hops)
        return None

    def star_rebinding(self, module: ModuleInfo, name: str, starts: list[int]) -> Found | None:
        """What a star import below the name's own bindings (starting on `starts`) binds it to
        once `module` has run, when one does (Python keeps the last binding); raises Unfollowed
        when that star import's module is outside the upstream (what it exports is unknown)."""
        upstream = module.name.split(".")[0]
        for origin, line in stars_below(module, starts):
            target = self.lookup(origin)
            if target is None:
                if origin.split(".")[0] == upstream:
                    continue  # no such module here: the import fails, it binds nothing
                raise Unfollowed(
                    f"{module.path}:{line}: `from {origin} import *` below the binding of "
                    f"{name} binds it again if {origin} exports it; canary does not read "
                    f"{origin} (outside {upstream})"
                )
            if not self._star_exports(target, name):
                continue
            found = self._find(target, name, {module.name})
            if found is not None:
                note = (
                    f"{name} is bound again at line {line} of {module.name} by `from {origin} "
                    f"import *`, below its own binding"
                )
                return Found(found.module, found.bindings, note)
        return None

    @staticmethod
    def _star_exports(module: ModuleInfo, name: str) -> bool:
        """Whether `from module import *` binds `name` (a lazy module's structure decides
        through its own `__all__`, which the lookup that follows verifies)."""
        if module.lazy is not None and module.lazy.replaces:
            return True
        if module.all_names is not None:
            return name in module.all_names
        return not name.startswith("_")

    def _lazy(self, module: ModuleInfo, name: str, seen: set[str], hops: int) -> Found | None:
        lazy = module.lazy
        if lazy is None or hops <= 0:
            return None
        how = "exported lazily" if lazy.replaces else f"served by {module.name}.__getattr__"
        if name in lazy.extra:
            own = tuple(b for b in module.bindings.get(name, []) if not b.typing_only)
            return Found(module, own, f"{name} is given to {module.name}'s lazy module")
        if name in lazy.computed:
            own = tuple(b for b in module.bindings.get("__getattr__", []) if not b.typing_only)
            return Found(module, own, f"{name} is computed by {module.name}.__getattr__")
        for origin in lazy.names.get(name, ()):
            origin, _, attr = origin.partition(":")
            attr = attr or name
            target = self.lookup(origin)
            if target is None:
                continue
            if origin == f"{module.name}.{attr}":  # a submodule served as an attribute
                return Found(target, (), f"{name} is the submodule {origin}, {how}")
            found = self._find(target, attr, set(seen), hops - 1) or self._submodule(target, attr)
            if found is not None:
                where = found.module.name if attr == name else f"{found.module.name}.{attr}"
                return Found(found.module, found.bindings, f"{how} from {where}")
        for folder in lazy.folders:
            found = self._in_folder(module, folder, name, hops - 1)
            if found is not None:
                return Found(found.module, found.bindings, f"{how} from {found.module.name}")
        return None

    def _in_folder(self, module: ModuleInfo, folder: str, name: str, hops: int) -> Found | None:
        """transformers' `define_import_structure(folder)`: every submodule of the folder
        exports its `__all__`. The submodules come from the version's file list when the
        source has one, and from the TYPE_CHECKING imports that mirror the structure; the
        likeliest are read first (where TYPE_CHECKING imports the name from, then a folder
        named in the name), and past a few the next are fetched together, more each time."""
        key = name.lower().replace("_", "")
        queue: list[tuple[int, int, str]] = []

        def push(candidate: str, rank: int | None = None) -> None:
            if candidate != folder and not candidate.startswith(f"{folder}."):
                return
            last = candidate.rsplit(".", 1)[-1].replace("_", "")
            if rank is None:
                rank = 1 if last and last in key else 2
            heapq.heappush(queue, (rank, len(queue), candidate))

        for binding in module.bindings.get(name, []):
            if binding.typing_only and binding.origin:
                push(binding.origin.rpartition(".")[0], 0)
        for origin in (*module.typing_star_imports, *module.star_imports):
            push(origin)
        for listed in self.module_names():
            push(listed)
        visited: set[str] = set()
        while queue:
            _, _, candidate = heapq.heappop(queue)
            if candidate in visited:
                continue
            visited.add(candidate)
            if len(visited) >= _PREFETCH_AFTER and len(visited) & (len(visited) - 1) == 0:
                self._prefetch_next(queue, visited, len(visited))
            info = self.exports(candidate)  # hundreds read: their exports, not their index
            if info is None:
                continue
            if info.path.endswith("__init__.py"):
                for origin in (*info.typing_star_imports, *info.star_imports):
                    push(origin)
                continue
            if info.name.rsplit(".", 1)[-1].startswith(_SKIPPED_PREFIXES):
                continue
            if info.all_names is not None and name in info.all_names:
                exporter = self.lookup(candidate)  # the same file: it exists
                found = self._find(exporter, name, set(), hops) if exporter else None
                if found is not None:
                    return found
        return None

    def _prefetch_next(
        self, queue: list[tuple[int, int, str]], visited: set[str], count: int
    ) -> None:
        """Fetch together the next `count` modules of a folder's search, in its order."""
        upcoming: dict[str, None] = {}
        for _, _, candidate in sorted(queue):
            if candidate not in visited:
                upcoming[candidate] = None
                if len(upcoming) == count:
                    break
        self.prefetch(sorted(upcoming))

    def _missing(self, module: ModuleInfo, name: str) -> str:
        bindings = module.bindings.get(name, [])
        lazy = module.lazy
        if lazy is not None and lazy.replaces and lazy.complete:
            if bindings and all(b.typing_only for b in bindings):
                return (
                    f"{name} is bound only under `if TYPE_CHECKING:` in {module.name}, "
                    "and its lazy module does not export it"
                )
            if bindings:
                return (
                    f"{name} is bound in {module.name}'s source, but {module.name} replaces "
                    "itself with a lazy module that does not export it"
                )
        elif bindings and all(b.typing_only for b in bindings):
            return (
                f"{name} is bound only under `if TYPE_CHECKING:` in {module.name}, not at run time"
            )
        line = deleted_at(module, name) if bindings else None
        if line is not None:
            return f"{name} is deleted at line {line} of {module.name} (`del {name}`)"
        return ""


def replaced(module: ModuleInfo) -> None:
    """Raises Unfollowed when `module` replaces itself in `sys.modules` with a value canary
    does not read (a shim): what an import finds is that value, whatever the module defines."""
    shim = module.lazy.shim if module.lazy is not None else 0
    if shim:
        raise Unfollowed(
            f"{module.path}:{shim}: {module.name} replaces itself in sys.modules "
            "(`sys.modules[__name__] = ...`) with a value computed at run time: an import "
            "finds that value, not the module's own names, and canary does not follow it"
        )
