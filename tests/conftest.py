"""What every engine test assumes of its environment."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from servers import FileServer, serving

# Hypothesis's timing checks judge the machine, not the code: on a shared 2-core machine under
# load, a strategy that is quick alone is "too slow" (a train run failed on test_remotezip's
# name search: 2 inputs in 1.14 s) and a test fails for no fault of canary's. Every example is
# still generated and asserted; only the clock is not a verdict.
settings.register_profile("canary", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("canary")

_CAMPAIGN = Path(__file__).resolve().parent / "campaign"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every campaign test is `slow`: they replay hundreds of releases through hostile servers,
    so the engine loop (`-m "not slow"`) leaves them to the full run."""
    for item in items:
        if _CAMPAIGN in Path(item.path).parents:
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True)
def _not_under_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tests expect local defaults even when CI runs them: GitHub Actions sets
    GITHUB_ACTIONS=true, which switches canary's default report format to annotations, and
    pytest prints whole multi-line messages in its short summary when CI or BUILD_NUMBER is
    set, which the tests of the plugin's summary lines compare line by line."""
    for name in ("GITHUB_ACTIONS", "CI", "BUILD_NUMBER"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(autouse=True)
def _child_pytest_without_hypothesis(monkeypatch: pytest.MonkeyPatch) -> None:
    """A pytest a test starts (pytester's subprocesses, `pytest matrices/...`) runs no
    Hypothesis test, and Hypothesis's plugin imports the whole library at every session's end
    (about 0.7 s of CPU per child here): children are started without it."""
    monkeypatch.setenv("PYTEST_ADDOPTS", "-p no:hypothesispytest")


#: Refused at once on loopback: a test that forgets to name its index fails here, never on
#: the real one.
NO_INDEX_URL = "http://127.0.0.1:9/no-index-named-by-this-test/"
_CACHES = itertools.count()  # one per test in this process (an xdist worker has its basetemp)


@pytest.fixture(autouse=True)
def _hermetic_index_and_cache(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, tmp_path_factory
) -> None:
    """Every test names the index and cache it uses (tests marked `network` read the real
    index): unset, canary would read the package index a user's pip names and write the
    user's own cache, and it would start `pip config list` to find that index (about 0.4 s of
    CPU each, some fifty times in the engine loop)."""
    if request.node.get_closest_marker("network") is None:
        monkeypatch.setenv("CANARY_INDEX_URL", NO_INDEX_URL)
    # a path of its own, made by canary when it first writes there (most tests never do): not
    # ~1,200 empty folders per engine loop, each of which a later run deletes (3 ms apiece on
    # this machine's disk)
    cache = tmp_path_factory.getbasetemp() / "caches" / str(next(_CACHES))
    monkeypatch.setenv("CANARY_CACHE_DIR", str(cache))


@pytest.fixture(autouse=True)
def _no_wait_between_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    """Retries still happen, as many as ever, without the backoff between them (0.5 s doubling
    for the sources, 1 s for the Action's GitHub calls): a test that reaches the refused index
    above slept through about five seconds of waits before its `error`, in this process or in a
    `canary` it starts. Tests of the waits themselves pass their own RetryPolicy."""
    monkeypatch.setenv("CANARY_RETRY_BACKOFF", "0")


@pytest.fixture
def no_index(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Offline, on a fresh cache: a scan that must place by names alone, or read the sources
    it is given, never the package index (`pytestmark = pytest.mark.usefixtures("no_index")`)."""
    monkeypatch.setenv("CANARY_OFFLINE", "1")
    monkeypatch.setenv("CANARY_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))


@pytest.fixture
def server() -> Iterator[FileServer]:
    """A loopback file server for the test; tests that need routes add them."""
    with serving() as running:
        yield running
