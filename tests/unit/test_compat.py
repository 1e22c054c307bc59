"""Each private part of another project canary uses (canary/compat/), pinned: the installed
version is one pyproject.toml allows, and the part is there with the shape canary relies on.
A release that moves one fails here, naming it, before the plugin or the sources break."""

from __future__ import annotations

import importlib.metadata
import inspect
import re
import sys

import pytest
from packaging.requirements import Requirement
from packaging.version import Version
from paths import ROOT

if sys.version_info >= (3, 11):
    import tomllib
else:  # what canary itself reads pyproject.toml with there
    import tomli as tomllib


def allowed(distribution: str) -> Requirement:
    """The requirement pyproject.toml states for `distribution` (dependencies or extras)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    stated = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        stated += extra
    for text in stated:
        requirement = Requirement(text)
        if requirement.name == distribution:
            return requirement
    raise AssertionError(f"pyproject.toml does not require {distribution}")


def installed_is_allowed(distribution: str) -> None:
    version = Version(importlib.metadata.version(distribution))
    assert allowed(distribution).specifier.contains(version, prereleases=True)


def test_pytest_session_relpath_and_setup_stack(request):
    installed_is_allowed("pytest")
    from canary.compat.pytest import node_relpath, setup_stack

    session = request.session
    assert node_relpath(session, session.config.rootpath / "sub" / "m.yaml") == "sub/m.yaml"
    held = setup_stack(session)
    assert held is not None and request.node in held  # this test's own setup is held


def test_pytest_report_and_setup_error_rendering():
    from canary.compat.pytest import SetupErrorText, phase_report

    report = phase_report("m.yaml::c[1.0]", ("m.yaml", 3, "c"), {"c": 1}, "failed", "why", "call")
    assert (report.nodeid, report.outcome, report.when, report.longrepr) == (
        "m.yaml::c[1.0]",
        "failed",
        "call",
        "why",
    )
    assert report.location == ("m.yaml", 3, "c") and report.sections == []
    parameters = inspect.signature(pytest.Item._repr_failure_py).parameters
    assert list(parameters)[:3] == ["self", "excinfo", "style"]
    assert "_repr_failure_py" in vars(SetupErrorText)


def test_xdist_public_helpers():
    installed_is_allowed("pytest-xdist")
    import xdist

    from canary.compat.xdist import is_worker

    assert callable(xdist.is_xdist_worker) and callable(xdist.is_xdist_controller)

    class Config:
        def __init__(self) -> None:
            self.workerinput = {"workerid": "gw0"}

    assert is_worker(Config()) is True  # type: ignore[arg-type]
    assert is_worker(object()) is False  # type: ignore[arg-type]


def test_urllib3_make_request_takes_the_connection_first():
    installed_is_allowed("urllib3")
    from urllib3 import HTTPConnectionPool

    from canary.compat.urllib3 import BeforeRequest

    assert list(inspect.signature(HTTPConnectionPool._make_request).parameters)[:2] == [
        "self",
        "conn",
    ]
    seen = []

    class Pool(BeforeRequest, HTTPConnectionPool):
        def before_request(self, conn):
            seen.append(conn)

    with pytest.raises(Exception):  # noqa: B017 - nothing listens on port 9; the hook ran first
        Pool("127.0.0.1", 9, timeout=0.5, retries=False).urlopen("GET", "/")
    assert len(seen) == 1


def test_pip_default_index_url():
    from canary.compat.pip import default_index_url

    url = default_index_url()
    assert url is not None and re.match(r"^https://[^/]+/simple/?$", url)
