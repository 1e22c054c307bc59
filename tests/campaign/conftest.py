"""Fixtures the fault and concurrency campaigns share: one fake upstream, one fault server."""

import pytest
from campaign_faults import FaultServer
from campaign_upstream import build_upstream, scaled


@pytest.fixture(scope="module")
def upstream(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fake-upstream")
    return build_upstream(folder, releases=scaled(4, 10), modules=scaled(5, 20))


@pytest.fixture
def server():
    """A fault server; stalled "hang" responses are released before it stops."""
    running = FaultServer().start()
    try:
        yield running
    finally:
        running.release.set()
        running.stop()
