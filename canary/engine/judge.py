"""Judge every check of a matrix on one version: gates, contracts, broken, severity."""

from __future__ import annotations

import contextlib
import datetime

from packaging.version import Version

from canary.analysis import ModuleCache, ParseError
from canary.analysis.bases import Hierarchy
from canary.analysis.declared import UNRELEASED, Undeclared, VersionUnknown, declared_version
from canary.analysis.namespace import Namespace
from canary.engine.bounded_regex import RegexError
from canary.engine.contracts import Verdict, evaluate, evaluate_any, without_hints
from canary.engine.loader import ModuleLoader
from canary.engine.outcomes import Result, Status
from canary.engine.remembered import Verdicts
from canary.engine.reuse import VerdictReuse
from canary.matrix.model import Acknowledgement, Check, Matrix, Severity
from canary.matrix.targets import Target
from canary.sources.tree import SourceError, SourceKind, Tree


class VersionRun:
    """One matrix on one version; its modules are looked up once each by its loader."""

    def __init__(
        self,
        matrix: Matrix,
        target: Target,
        tree: Tree | SourceError,
        cache: ModuleCache,
        verdicts: Verdicts | None = None,
        reuse: VerdictReuse | None = None,
    ):
        self.matrix = matrix
        self.reuse = reuse
        self.verdicts = verdicts
        self.target = target
        self.tree = tree
        self.cache = cache
        self.modules = ModuleLoader(tree, cache)
        self.module = self.modules.module
        self._version: Version | VersionUnknown | None = target.version
        loader = self.modules
        lookups = (loader.module_names, loader.prefetch, loader.exports, loader.compile_error)
        self.namespace = Namespace(self.module, *lookups)
        self.hierarchy = Hierarchy(self.namespace)

    @property
    def source(self) -> str:
        return "" if isinstance(self.tree, SourceError) else SourceKind(self.tree.kind).value

    def gate_version(self) -> Version:
        """The release's own version, or what a branch's source declares; a branch read from
        GitHub that declares none is unreleased work, newer than every release (UNRELEASED)."""
        if self._version is None:
            if isinstance(self.tree, SourceError):
                self._version = VersionUnknown(str(self.tree))
            else:
                try:
                    self._version = declared_version(self.tree, self.matrix.package)
                except Undeclared as exc:
                    github = self.tree.kind == SourceKind.GITHUB and self.target.branch
                    self._version = UNRELEASED if github else exc
                except VersionUnknown as exc:
                    self._version = exc
        if isinstance(self._version, VersionUnknown):
            raise self._version
        return self._version

    def result(self, check: Check) -> Result:
        status, detail = self.judge(check)
        return Result(
            upstream=self.matrix.upstream,
            check=check.id,
            version=self.target.label,
            status=status,
            detail=detail,
            source=self.source,
            why=check.why if status is Status.FAIL else "",
        )

    def evaluate(self, check: Check, version: Version | None) -> Verdict:
        """Whether the check's contract holds on this version, and what is wrong if not (a
        verdict judged on the same module contents reused where there is one)."""
        if self.reuse is None:
            return _evaluate(check, self.hierarchy, version)
        return self.reuse.verdict(
            check, version, self.modules, lambda: self._afresh(check, version)
        )

    def _afresh(self, check: Check, version: Version | None) -> Verdict:
        """Judged on a hierarchy of its own: a base it resolved for an earlier check would hide
        the modules read to resolve it from the recording (the namespace keeps nothing that
        does: it asks for the module list each time it reads it)."""
        return _evaluate(check, Hierarchy(self.namespace), version)

    def judge(self, check: Check, hints: bool = True) -> tuple[Status, str]:
        """The check's status on this version and what it says. Without `hints` a failure's
        detail may lack its "did you mean" hints (contracts.without_hints): for a caller that
        keeps only the status, which is the same."""
        version = None
        if check.gate is not None or check.broken:
            try:
                version = self.gate_version()
            except VersionUnknown as exc:
                if check.gate is not None:
                    return Status.ERROR, f"gated check on {self.target.label}: {exc}"
        if check.gate is not None and version is not None and check.gated_out(version):
            if version == UNRELEASED:
                return Status.SKIP, (
                    f"{self.target.label} declares no version, so counts as newer than every "
                    f"release: outside {check.gate}"
                )
            return Status.SKIP, f"{version} is outside {check.gate}"
        try:
            at = version or self.target.version
            with contextlib.nullcontext() if hints else without_hints():
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
        if check.severity is Severity.INFO:
            return Status.WARN, detail
        if verdict.undecided:
            return Status.ERROR, detail  # turns on what canary does not read: said, not failed
        if verdict.runtime:
            return Status.WARN, detail  # holds or not as the upstream runs: said, not failed
        return Status.FAIL, detail


def _evaluate(check: Check, hierarchy: Hierarchy, version: Version | None) -> Verdict:
    if check.contract is not None:
        return evaluate(check.contract, hierarchy, version)
    return evaluate_any(check.any_of, hierarchy, version)


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
