"""Ways to turn source into indexes, to show what canary's per-file index saves.

- `canary`: canary as shipped (verdicts remembered per release file; indexes kept in memory per
  content hash and on disk across runs);
- `index-store`: the same without remembered or reused verdicts (every check is evaluated on the
  indexes);
- `no-store`: the in-memory index only, nothing persisted (every run parses each file once);
- `reparse`: the anchor suite's way, the file is parsed again for every single assertion.

`canary` and `no-store` parse in canary's process pool (as `canary check` does); `reparse` parses
in the main process, one file at a time, like the anchor suite.
"""

from __future__ import annotations

from canary.analysis import ModuleCache, ModuleInfo, index_module
from canary.analysis.modules import parse_here
from canary.engine.judge import VersionRun
from canary.engine.outcomes import Result
from canary.engine.runner import Runner
from canary.matrix.model import Check, Matrix
from canary.matrix.targets import Target

STRATEGIES = ("canary", "index-store", "no-store", "reparse")


class MemoryOnly(ModuleCache):
    """ModuleCache that refuses the on-disk store the runner hands it."""

    @property
    def store(self):
        return None

    @store.setter
    def store(self, _value) -> None:
        pass


class Reparsing(ModuleCache):
    """Parses on every request: no memory, no store."""

    def get(
        self, data: bytes, name: str, path: str, *, is_package: bool, digest: str | None = None
    ) -> ModuleInfo:
        with self._lock:
            self.parses += 1
        return index_module(data, name, path, is_package=is_package)


class _PerAssertion:
    """Judges each check on a fresh VersionRun, so no module is remembered between checks."""

    def __init__(self, run: VersionRun) -> None:
        self.run = run

    def result(self, check: Check) -> Result:
        run = self.run
        return VersionRun(run.matrix, run.target, run.tree, run.cache).result(check)


class ReparsingRunner(Runner):
    """The runner with the anchor suite's strategy: same fetching, a parse per assertion."""

    def version_run(self, matrix: Matrix, target: Target, verdicts=None) -> VersionRun:
        run = super().version_run(matrix, target, verdicts)
        return _PerAssertion(run)  # type: ignore[return-value]


def runner_for(strategy: str, parse=parse_here, **options) -> Runner:
    """A Runner using `strategy` (one of STRATEGIES); `parse` is how the first two parse (a
    canary.analysis.pool.ParsePool, as in `canary check`); options go to Runner."""
    if strategy == "canary":
        return Runner(modules=ModuleCache(parse=parse), **options)
    if strategy == "index-store":
        return Runner(modules=ModuleCache(parse=parse), remember=False, reuse=None, **options)
    if strategy == "no-store":
        return Runner(modules=MemoryOnly(parse=parse), remember=False, reuse=None, **options)
    if strategy == "reparse":
        return ReparsingRunner(modules=Reparsing(), remember=False, reuse=None, **options)
    raise ValueError(f"unknown strategy {strategy!r}; expected one of {STRATEGIES}")
