"""What judges a session's matrices and runs their items: loaded by the thin plugin module at
the first matrix file collected (a session without one never imports the engine).

A check item has no fixtures and its result is known before it runs (every version is judged
at once when collection ends), so it runs through a protocol of its own: the same hooks and
reports as pytest's (log start, setup, call and teardown reports, log finish: so the terminal
summary, -x, --lf and JUnit XML see what they always see) without the per-phase machinery that
sets up fixtures and captures output, which cost many times the check itself. Under xdist the
controller runs them and the workers the other tests (canary/pytest_plugin/xdist.py).
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import gc
import os
import warnings
from functools import cached_property
from itertools import islice
from pathlib import Path

import pluggy
import pytest

from canary.analysis import ModuleCache
from canary.analysis.pool import ParsePool
from canary.compat.pytest import SetupErrorText, node_relpath, phase_report, setup_stack
from canary.engine.interrupted import Interrupted
from canary.engine.outcomes import Result, Status
from canary.engine.runner import Runner, local_selector
from canary.errors import CanaryError, ExitCode
from canary.matrix.model import Check, Matrix, MatrixError, load_matrix
from canary.matrix.targets import Target
from canary.pytest_plugin.selection import CheckItemBase
from canary.pytest_plugin.xdist import collects_here
from canary.reports.transition import failure_lines, why_lines
from canary.settings import Settings

_JUDGING = pytest.StashKey["Judging"]()


class CanaryWarning(UserWarning):
    """A `severity: info` check that failed, or a keyword `accepts` found named before and
    only absorbed by **kwargs now: reported, never red."""


class CheckFailed(CanaryError):
    """The contract does not hold on this version."""

    exit_code = ExitCode.FAILED


class SourceUnavailable(CanaryError):
    """The version's source could not be obtained or parsed: a pytest error, never a pass."""

    exit_code = ExitCode.FAILED


def judging(config: pytest.Config) -> Judging:
    """The session's judge: made at the first matrix file collected, and registered as a
    plugin so that its hooks run from then on."""
    found = config.stash.get(_JUDGING, None)
    if found is None:
        found = config.stash[_JUDGING] = Judging(config)
        config.pluginmanager.register(found, "canary-judging")
    return found


class Judging:
    """The runner the session's matrices are judged with, and their results."""

    def __init__(self, config: pytest.Config) -> None:
        source = config.getoption("canary_source")
        self.environment = stack = contextlib.ExitStack()
        modules = ModuleCache()
        self.pool: ParsePool | None = None
        if "PYTEST_XDIST_WORKER" not in os.environ:  # xdist workers judge nothing
            self.pool = ParsePool()  # started only if something needs parsing
            modules = ModuleCache(parse=self.pool)
            stack.callback(self.pool.close)
        if source in ("auto", "index", "github"):
            settings = Settings.from_environment(offline=config.getoption("canary_offline"))
            self.runner = Runner(settings=settings, source=source, modules=modules)
            stack.callback(self.runner.close)
        else:
            folder = Path(source)
            self.runner = Runner(select=local_selector(folder), source_path=folder, modules=modules)
        #: The results of each judged version by check id, keyed by (matrix path, version).
        self.results: dict[tuple[str, str], dict[str, Result]] = {}

    def pytest_unconfigure(self) -> None:
        self.environment.close()

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """Judge every selected version before the first item runs, versions in parallel as
        `canary check` does (under xdist: in the controller, which runs the check items)."""
        if session.config.option.collectonly:
            return  # listing the items reads nothing
        plan: dict[tuple[str, str], tuple[Matrix, Target]] = {}
        for item in session.items:
            if isinstance(item, CheckItem):
                key = (str(item.matrix.path), item.target.label)
                plan.setdefault(key, (item.matrix, item.target))
        if not plan:
            return
        _freeze_at_exit()
        planned = list(plan.values())
        try:
            batches = self.runner.judge_all(planned)
            # read across versions as `canary check` reads them: hints, transitions
            concluded = iter(self.runner.conclude(planned, batches))
        except (Interrupted, KeyboardInterrupt) as caught:  # one line, not a traceback
            if self.pool is not None:
                self.pool.stop()
            # a bare KeyboardInterrupt: while telling what the failures became
            stopped = caught if isinstance(caught, Interrupted) else self.runner.interrupted()
            pytest.exit(str(stopped), returncode=int(stopped.exit_code))
        for key, batch in zip(plan, batches, strict=True):
            self.results[key] = {result.check: result for result in islice(concluded, len(batch))}

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None):
        if isinstance(item, CheckItem) and item.runs_alone(nextitem):
            item.run_protocol()
            return True
        return None  # pytest's own protocol


@functools.cache
def _freeze_at_exit() -> None:
    """pytest keeps a session alive until the interpreter exits (its assertion-rewriting import
    hook, the loader of plugin modules such as this one, holds the config), and the collections
    at exit walk all of it several times: for thousands of check items that cost more than
    running them. Objects frozen at exit are not walked; Python promises no finalizer at exit
    anyway, and the memory goes back with the process."""
    atexit.register(gc.freeze)


class MatrixFile(pytest.File):
    def collect(self):
        if not collects_here(self.config, self.path):
            return
        selection = self.config.getoption("canary_versions")
        try:
            matrix = load_matrix(self.path)
            targets = judging(self.config).runner.targets(matrix, selection)
        except MatrixError as exc:
            raise self.CollectError(str(exc)) from None
        yield UpstreamNode.from_parent(self, name=matrix.upstream, matrix=matrix, targets=targets)


class UpstreamNode(pytest.Collector):
    def __init__(self, *, matrix: Matrix, targets: list[Target], **kwargs):
        super().__init__(**kwargs)
        self.matrix = matrix
        self.targets = targets

    @cached_property
    def hooks(self) -> pluggy.HookRelay:
        """The hooks for this file (pytest finds them per item and path otherwise)."""
        return self.ihook

    @cached_property
    def where(self) -> str:
        """The matrix file as reports name it (relative to the rootdir), found once: pytest
        resolves each item's path again."""
        return node_relpath(self.session, self.path)

    def collect(self):
        for target in self.targets:
            for check in self.matrix.checks:
                name = f"{check.id}[{target.label}]"
                # The id as text, parsed like the ids --lf reads back: pytest 9 gives a child
                # named `a[b]` an id that differs from the parse of its own text.
                nodeid = f"{self.nodeid}::{name}"
                yield CheckItem.from_parent(
                    self, name=name, nodeid=nodeid, check=check, target=target
                )


class CheckItem(CheckItemBase, SetupErrorText):
    def __init__(self, *, check: Check, target: Target, **kwargs):
        super().__init__(**kwargs)
        self.check = check
        self.target = target

    @property
    def upstream(self) -> UpstreamNode:
        """The node of the matrix this item is a check of (its parent)."""
        assert isinstance(self.parent, UpstreamNode)
        return self.parent

    @property
    def matrix(self) -> Matrix:
        return self.upstream.matrix

    def judged(self) -> Result:
        key = (str(self.matrix.path), self.target.label)
        return judging(self.config).results[key][self.check.id]

    def failure_text(self, result: Result) -> str:
        """The detail, the check's `why`, then where the check broke and what its subject
        became there (told on the result of the version it first failed on)."""
        first = judging(self.config).results.get((str(self.matrix.path), result.first_fail))
        told = first.get(self.check.id) if first else None
        return "\n".join([result.detail, *why_lines(result.why), *failure_lines(result, told)])

    def runs_alone(self, nextitem: pytest.Item | None) -> bool:
        """Whether the item's own protocol may run it: pytest's is needed to tear down what
        other tests set up before the next one (or the session's end), and for --pdb."""
        if nextitem is None or self.config.option.usepdb:
            return False
        held = setup_stack(self.session)
        if held is None:
            return False  # a pytest whose setup state this plugin does not know
        return not held or set(held) <= set(nextitem.listchain())

    def run_protocol(self) -> None:
        """pytest's reports for this item, from its result: what pytest's own protocol
        (runner, skipping) would report, without the fixture and capture machinery."""
        hooks = self.upstream.hooks
        nodeid, location = self.nodeid, self.location
        hooks.pytest_runtest_logstart(nodeid=nodeid, location=location)
        keywords = dict.fromkeys(self.keywords, 1)

        def report(when: str, outcome: str = "passed", longrepr=None, **extra: str) -> None:
            made = phase_report(nodeid, location, keywords, outcome, longrepr, when, **extra)
            hooks.pytest_runtest_logreport(report=made)

        result = self.judged()
        if result.status is Status.ERROR:
            report("setup", "failed", result.detail)
        else:
            report("setup")
            outcome, longrepr, extra = self.call(result)
            report("call", outcome, longrepr, **extra)
        report("teardown")
        hooks.pytest_runtest_logfinish(nodeid=nodeid, location=location)

    def call(self, result: Result) -> tuple[str, object, dict[str, str]]:
        """The call phase: (outcome, longrepr, extra fields) of its report, as pytest's
        runner and skipping plugin make them from runtest() and the xfail marker."""
        status, detail = result.status, result.detail
        xfail = status in (Status.XFAIL, Status.XPASS) and not self.config.option.runxfail
        if status is Status.SKIP:
            return "skipped", (str(self.path), self.check.line, f"Skipped: {detail}"), {}
        if status is Status.FAIL:
            return "failed", self.failure_text(result), {}
        if status is Status.XFAIL:
            return ("skipped", detail, {"wasxfail": detail}) if xfail else ("failed", detail, {})
        if status is Status.WARN and (raised := self.warned(result)) is not None:
            return "failed", raised, {}
        return "passed", None, {"wasxfail": detail} if xfail else {}

    def warned(self, result: Result) -> str | None:
        """A warn result: a warning pointing at the check in the matrix. When the session's
        filters make it an error (`-W error`, `filterwarnings = error`), the item fails with
        the text a failure shows (None otherwise), not a traceback through this plugin."""
        text = self.failure_text(result)
        try:
            warnings.warn_explicit(
                CanaryWarning(f"{self.matrix.upstream}::{self.name}: {text}"),
                category=CanaryWarning,
                filename=str(self.path),
                lineno=self.check.line,
            )
        except CanaryWarning:
            return text
        return None

    def setup(self) -> None:
        self.result = self.judged()
        if self.result.status is Status.ERROR:
            raise SourceUnavailable(self.result.detail)
        if self.result.status in (Status.XFAIL, Status.XPASS):
            # A known-broken release or a check's own acknowledgement: the engine decided it,
            # and its detail carries the reason.
            self.add_marker(
                pytest.mark.xfail(reason=self.result.detail, raises=CheckFailed, strict=False)
            )

    def runtest(self) -> None:
        status, detail = self.result.status, self.result.detail
        if status is Status.SKIP:
            # Point the skip at the check in the matrix, not at this line of the plugin.
            raise pytest.skip.Exception(detail, _use_item_location=True)
        elif status is Status.FAIL:
            raise CheckFailed(self.failure_text(self.result))
        elif status is Status.XFAIL:
            raise CheckFailed(detail)
        elif status is Status.WARN and (raised := self.warned(self.result)) is not None:
            raise CheckFailed(raised)

    def repr_failure(self, excinfo, style=None):
        # The reason alone: pytest prints the item's id above it and before it in the short
        # summary line, so repeating the id would only push the reason off a narrow line.
        if isinstance(excinfo.value, CheckFailed | SourceUnavailable):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)

    def setup_error_text(self, excinfo: pytest.ExceptionInfo[BaseException]) -> str | None:
        # an unavailable source is a message for the maintainer, not a canary traceback
        return str(excinfo.value) if isinstance(excinfo.value, SourceUnavailable) else None

    def reportinfo(self):
        return self.path, self.check.line - 1, f"{self.matrix.upstream}::{self.name}"

    @cached_property
    def location(self) -> tuple[str, int | None, str]:
        return self.upstream.where, self.check.line - 1, f"{self.matrix.upstream}::{self.name}"
