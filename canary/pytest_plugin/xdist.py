"""Check items under pytest-xdist (`pytest -n N`): the controller runs them, the workers run
the other tests.

A check item's verdict comes from the engine, which already reads versions in parallel (threads
and a parse process pool), and reporting one costs less than the messages xdist sends for every
item it hands to a worker (log start, three reports, log finish, protocol complete: each
serialized by the worker, then read and reported again by the controller). So:

- the controller collects the matrix files and runs their items itself, after the workers are
  done: their reports go straight to its hooks (terminal, JUnit XML, `--lf`'s cache), as in a
  session of one process;
- the workers skip the matrix files and run the ordinary tests;
- a session of matrices alone starts no worker at all.

Public hooks, options and helpers only (canary.compat.xdist). xdist's controller plugin
collects nothing and runs the workers' loop; this module collects the matrices before it
(`pytest_collection`, tryfirst) and runs their items after its loop (`pytest_runtestloop`,
wrapper).
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Generator, Iterable
from pathlib import Path

import pytest

from canary.compat.xdist import is_controller, is_worker
from canary.pytest_plugin.selection import CheckItemBase, is_lock_beside_matrix, is_matrix

#: On an xdist worker: the matrix files it collects, or True for all of them.
_WORKER_COLLECTS = pytest.StashKey[frozenset[Path] | bool]()


def configure_xdist(config: pytest.Config) -> None:
    """Decide where this process runs check items (called at `pytest_configure`, before
    xdist's own, which is trylast)."""
    if config.getoption("pyargs", False):
        return  # module names: which hold matrices only collection tells; workers run all
    if is_worker(config):
        config.stash[_WORKER_COLLECTS] = bool(_failed_checks(config)) or _named_inside(config)
        config.pluginmanager.register(WorkerSide(), "canary-xdist-worker")
    elif config.getoption("dist", "no") != "no" and config.getoption("tx", None):
        if config.getoption("collectonly"):
            return  # xdist lists items in this process itself
        if _only_matrices(config):
            # What `-n 0` does: xdist reads these options at its (trylast) pytest_configure,
            # and with nothing for a worker to run, starting them only costs their start-up.
            config.option.dist = "no"
            config.option.tx = []
            config.pluginmanager.register(_NoWorkers(), "canary-no-workers")
        else:
            config.pluginmanager.register(ControllerSide(), "canary-xdist-controller")


def collects_here(config: pytest.Config, matrix: Path) -> bool:
    """Whether this process makes items of this matrix file. Not an xdist worker (the
    controller runs them), unless the arguments name items inside it, which the worker must
    then find, or `--lf` must see failed check items to decide as one process would (rerun
    only the failures, or everything when none was selected); the worker drops them after."""
    collects = config.stash.get(_WORKER_COLLECTS, True)
    return collects if isinstance(collects, bool) else matrix in collects


def _failed_checks(config: pytest.Config) -> list[str]:
    """The check items `--lf` knows as failed (none without `--lf`)."""
    cache = getattr(config, "cache", None)
    if cache is None or not config.getoption("lf", False):
        return []
    failed = cache.get("cache/lastfailed", {})
    root = config.rootpath
    return [nodeid for nodeid in failed if is_matrix(config, root / nodeid.partition("::")[0])]


def _paths(config: pytest.Config) -> Iterable[tuple[str, Path, bool]]:
    """(argument, its path, whether it names something inside the path) of every collection
    argument; the path absolute but not resolved, as pytest makes the collectors' paths."""
    base = config.invocation_params.dir
    for arg in config.args:
        path, sep, _inside = arg.partition("::")
        yield arg, Path(os.path.abspath(base / path)), bool(sep)


def _named_inside(config: pytest.Config) -> frozenset[Path]:
    return frozenset(
        path for _arg, path, inside in _paths(config) if inside and is_matrix(config, path)
    )


def _only_matrices(config: pytest.Config) -> bool:
    """Whether every argument is a matrix file (or items in one) or a folder holding nothing
    but matrix folders: then no xdist worker would get a test. Anything else may hold tests,
    and the workers start."""
    if not config.args:
        return False
    for _arg, path, _inside in _paths(config):
        if path.is_file():
            if not is_matrix(config, path):
                return False
        elif not path.is_dir() or not _holds_only_matrices(path, config):
            return False
    return True


def _holds_only_matrices(folder: Path, config: pytest.Config) -> bool:
    """Every file under the folder is a matrix or a lock beside it (`__pycache__` aside)."""
    for root, dirs, files in os.walk(folder):
        dirs[:] = [name for name in dirs if name != "__pycache__"]
        here = Path(root)
        for name in files:
            path = here / name
            if not (is_matrix(config, path) or is_lock_beside_matrix(config, path)):
                return False
    return True


def _may_hold_matrices(folder: Path, config: pytest.Config) -> bool:
    """Whether pytest's walk of the folder may meet a matrix file. The walk leaves out only the
    folders pytest never enters unless told to (`norecursedirs`, virtual environments), so it
    finds whatever pytest would; a session without matrices then collects nothing here (and
    prints no "collected 0 items" beside the workers' count)."""
    skip = config.getini("norecursedirs")
    venvs = not config.getoption("collect_in_virtualenv", False)
    seen: set[Path] = set()
    for root, dirs, files in os.walk(folder, followlinks=True):  # pytest follows links too
        here = Path(root)
        if here.resolve() in seen:
            dirs.clear()
            continue
        seen.add(here.resolve())
        if any(is_matrix(config, here / name) for name in files):
            return True
        dirs[:] = [
            name
            for name in dirs
            if not any(fnmatch.fnmatch(name, pattern) for pattern in skip)
            and not (venvs and _is_venv(here / name))
        ]
    return False


def _is_venv(folder: Path) -> bool:
    return (folder / "pyvenv.cfg").is_file() or (folder / "conda-meta" / "history").is_file()


class WorkerSide:
    """An xdist worker: it reports no check item to the controller."""

    @pytest.hookimpl(tryfirst=True)  # before xdist's worker sends the ids it collected
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        session.items[:] = [item for item in session.items if not isinstance(item, CheckItemBase)]


class _NoWorkers:
    @staticmethod
    def pytest_report_header(config: pytest.Config) -> str:
        return "canary: only matrices to run: their checks run in this process, no xdist worker"


class ControllerSide:
    """The xdist controller: it collects the matrix files and runs their items once the
    workers are done (a failure among the workers' tests with `-x` stops before them, as it
    would in one process that ran the tests first)."""

    def __init__(self) -> None:
        self.collecting = False
        self.items: list[pytest.Item] | None = None
        self.session: pytest.Session | None = None
        self.counted = False
        self.worker_ids: set[str] = set()

    @pytest.hookimpl(tryfirst=True)  # xdist's controller collects nothing (it returns True)
    def pytest_collection(self, session: pytest.Session) -> bool | None:
        if not is_controller(session):
            return None  # xdist runs nothing distributed after all
        config = session.config
        args = [
            arg
            for arg, path, _inside in _paths(config)
            if is_matrix(config, path) or (path.is_dir() and _may_hold_matrices(path, config))
        ]
        if not args:
            return None  # nothing for this process: xdist as usual
        self.collecting = True
        try:
            session.perform_collect(args)
        finally:
            self.collecting = False
        self.items = list(session.items)
        self.session = session
        return True

    def pytest_ignore_collect(self, collection_path: Path, config: pytest.Config) -> bool | None:
        """While the controller collects, only matrix files (the workers take the rest)."""
        if (
            self.collecting
            and not is_matrix(config, collection_path)
            and not collection_path.is_dir()
        ):
            return True
        return None

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        if self.collecting:  # another plugin's items from a matrix file: a worker runs them
            items[:] = [item for item in items if isinstance(item, CheckItemBase)]

    def pytest_report_collectionfinish(
        self, config: pytest.Config, items: list[pytest.Item]
    ) -> str | None:
        if not self.collecting or not items or config.getoption("verbose") < 0:
            return None
        return "canary: the check items run in this process, xdist workers run the other tests"

    def pytest_xdist_node_collection_finished(self, ids: list[str]) -> None:
        self.worker_ids.update(ids)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logstart(self) -> None:
        """Count the check items in once the workers' items are counted (xdist sets the count
        to theirs as their collections arrive, before any item starts), so the progress shown
        covers both."""
        if self.session is not None and not self.counted:
            self.counted = True
            self.session.testscollected += len(self.items or ())

    def _deselect_for_last_failed(self, config: pytest.Config) -> None:
        """`--lf` with failures known only among the workers' tests: one process would rerun
        just those, so the check items (none of which failed) are deselected."""
        failed = getattr(config, "cache", None) and config.cache.get("cache/lastfailed", {})
        if not failed or not config.getoption("lf", False) or not self.items:
            return
        if any(item.nodeid in failed for item in self.items):
            return  # pytest's --lf already kept only those
        if any(nodeid in failed for nodeid in self.worker_ids):
            config.hook.pytest_deselected(items=self.items)
            if self.counted and self.session is not None:
                self.session.testscollected -= len(self.items)
            self.items = []

    @pytest.hookimpl(wrapper=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, object, object]:
        if self.items is None:
            return (yield)
        if session.testsfailed and not session.config.option.continue_on_collection_errors:
            # pytest's own loop stops here: a malformed matrix runs nothing.
            failed = session.testsfailed
            raise session.Interrupted(
                f"{failed} error{'s' if failed != 1 else ''} during collection"
            )
        done = yield  # xdist: the workers run the other tests
        self.pytest_runtest_logstart()  # when no worker ran an item
        self._deselect_for_last_failed(session.config)
        for at, item in enumerate(self.items):
            nextitem = self.items[at + 1] if at + 1 < len(self.items) else None
            item.ihook.pytest_runtest_protocol(item=item, nextitem=nextitem)
            if session.shouldfail:
                raise session.Failed(session.shouldfail)
            if session.shouldstop:
                raise session.Interrupted(session.shouldstop)
        return done
