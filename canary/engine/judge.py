"""Judge every check of a matrix on one version: gates, contracts, broken, severity."""

from __future__ import annotations

import datetime
import threading

from packaging.version import Version

from canary.analysis import ModuleCache, ModuleInfo, ParseError
from canary.analysis.bases import Hierarchy
from canary.analysis.namespace import Namespace
from canary.engine.bounded_regex import RegexError
from canary.engine.contracts import Verdict, evaluate, evaluate_any
from canary.engine.outcomes import Result, Status
from canary.engine.remembered import Verdicts
from canary.matrix.model import Acknowledgement, Check, Matrix
from canary.matrix.targets import Target
from canary.sources.declared import VersionUnknown, declared_version
from canary.sources.tree import SourceError, Tree


def module_files(name: str) -> tuple[tuple[str, bool], ...]:
    """Where a dotted module may live, in Python's lookup order, and whether that file is a
    package: a package `m/__init__.py` wins over a module `m.py` beside it."""
    base = name.replace(".", "/")
    return (f"{base}/__init__.py", True), (f"{base}.py", False)


class VersionRun:
    """One matrix on one version; modules are looked up (and parsed) once each."""

    def __init__(
        self,
        matrix: Matrix,
        target: Target,
        tree: Tree | SourceError,
        cache: ModuleCache,
        verdicts: Verdicts | None = None,
    ):
        self.matrix = matrix
        self.verdicts = verdicts
        self.target = target
        self.tree = tree
        self.cache = cache
        self._modules: dict[str, ModuleInfo | Exception | None] = {}
        self._lock = threading.RLock()  # an alias is looked up while its name is loading
        self._version: Version | VersionUnknown | None = target.version
        namespace = Namespace(self.module, self.module_names, self.prefetch_modules)
        self.hierarchy = Hierarchy(namespace)
        self._module_names: list[str] | None = None

    def close(self) -> None:
        """Let go of what the run read. Its namespace holds the run's own methods, so the run,
        its release's listing and its modules form a cycle only the garbage collector frees:
        a cold run then kept every release until a full collection, which scanned them all
        again (a tenth of the run's CPU) and held most of its memory."""
        del self.hierarchy
        self._modules.clear()

    @property
    def source(self) -> str:
        return "" if isinstance(self.tree, SourceError) else self.tree.kind

    def gate_version(self) -> Version:
        """The release's own version, or what a branch's source declares."""
        if self._version is None:
            if isinstance(self.tree, SourceError):
                self._version = VersionUnknown(str(self.tree))
            else:
                try:
                    self._version = declared_version(self.tree, self.matrix.package)
                except VersionUnknown as exc:
                    self._version = exc
        if isinstance(self._version, VersionUnknown):
            raise self._version
        return self._version

    def module_names(self) -> list[str]:
        """The dotted names of the version's modules, when its source lists them for free
        (for "did you mean" hints only); empty when it cannot."""
        if self._module_names is None:
            files = getattr(self.tree, "files", None)
            try:
                listed = files() if files is not None else None
            except SourceError:
                listed = None
            names = {
                path[: -len(".py")].replace("/", ".").removesuffix(".__init__")
                for path in listed or ()
                if path.endswith(".py")
            }
            self._module_names = sorted(names)
        return self._module_names

    def prefetch_modules(self, names: list[str]) -> None:
        """Modules about to be looked up, fetched together where the source can (a wheel
        merges neighbouring members into one request); best effort, as in Runner."""
        prefetch = getattr(self.tree, "prefetch", None)
        with self._lock:
            wanted = [n for n in names if n not in self._modules]
        if prefetch is None or not wanted:
            return
        try:
            prefetch([path for name in wanted for path, _ in module_files(name)])
        except SourceError:
            return  # each module's own read reports its own fault

    def module(self, name: str) -> ModuleInfo | None:
        with self._lock:
            if name not in self._modules:
                self._modules[name] = self._load(name)
            found = self._modules[name]
        if isinstance(found, Exception):
            raise found
        return found

    def _load(self, name: str) -> ModuleInfo | Exception | None:
        if isinstance(self.tree, SourceError):
            return self.tree
        try:
            for path, is_package in module_files(name):
                data = self.tree.read(path)
                if data is not None:
                    return self.cache.get(data, name, path, is_package=is_package)
        except (SourceError, ParseError) as exc:
            return exc
        return self._alias(name)

    def _alias(self, name: str) -> ModuleInfo | Exception | None:
        """A module that exists only in an alias table an ancestor package serves through an
        import hook (transformers 5's legacy module paths): the target module stands in."""
        parts = name.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            try:
                package = self.module(".".join(parts[:cut]))
            except (SourceError, ParseError):
                return None
            target = package.aliases.get(name) if package is not None else None
            if target is not None and target != name:
                try:
                    return self.module(target)
                except (SourceError, ParseError) as exc:
                    return exc
        return None

    def result(self, check: Check) -> Result:
        status, detail = self.judge(check)
        return Result(
            upstream=self.matrix.upstream,
            check=check.id,
            version=self.target.label,
            status=status,
            detail=detail,
            source=self.source,
        )

    def evaluate(self, check: Check, version: Version | None) -> Verdict:
        """Whether the check's contract holds on this version, and what is wrong if not."""
        if check.contract is not None:
            return evaluate(check.contract, self.hierarchy, version)
        return evaluate_any(check.any_of, self.hierarchy, version)

    def judge(self, check: Check) -> tuple[Status, str]:
        version = None
        if check.gate is not None or check.broken:
            try:
                version = self.gate_version()
            except VersionUnknown as exc:
                if check.gate is not None:
                    return Status.ERROR, f"gated check on {self.target.label}: {exc}"
        if check.gate is not None and check.gated_out(version):
            return Status.SKIP, f"{version} is outside {check.gate}"
        try:
            at = version or self.target.version
            if self.verdicts is None:
                verdict = self.evaluate(check, at)
            else:
                verdict = self.verdicts.verdict(check, lambda: self.evaluate(check, at))
        except (SourceError, ParseError, RegexError) as exc:
            return Status.ERROR, str(exc)
        detail = None if verdict.holds else verdict.detail
        acknowledged = check.acknowledgement(version) if version is not None else None
        if acknowledged is not None:
            return _acknowledged(acknowledged, detail)
        broken = self.matrix.versions.broken.get(self.target.label)
        if broken is not None:
            if detail is None:
                return Status.XPASS, f"known broken ({broken}) but the contract holds"
            return Status.XFAIL, f"{detail} [known broken: {broken}]"
        if detail is None:
            return Status.PASS, verdict.detail
        if check.severity == "info":
            return Status.WARN, detail
        return Status.FAIL, f"{detail} -- {check.why}" if check.why else detail


def _acknowledged(ack: Acknowledgement, detail: str | None) -> tuple[Status, str]:
    """A per-check `broken` entry: expected to fail, stale when it passes, red once expired."""
    if detail is None:
        return Status.XPASS, (
            f"acknowledged broken ({ack.reason}) but the contract holds: "
            f"the acknowledgement for {ack.versions} is stale"
        )
    today = datetime.datetime.now(datetime.timezone.utc).date()
    if ack.expired(today):
        return Status.ERROR, f"acknowledgement expired on {ack.until_date}: {ack.reason} ({detail})"
    return Status.XFAIL, f"{detail} [acknowledged: {ack.reason}]"
