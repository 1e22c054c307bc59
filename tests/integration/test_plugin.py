"""The pytest plugin: ids, -k selection, outcome mapping, xdist."""

from __future__ import annotations

import re

import pytest
from paths import FIXTURES

pytest_plugins = ["pytester"]

CHECKOUT = FIXTURES / "checkout"

MATRIX = """\
upstream: fakeup
src: src
versions:
  broken:
    "1.0.0": "bad upload"
checks:
  - {id: pkg, module: fakeup.pkg}
  - {id: gone, module: fakeup.gone, why: "the patch imports it"}
  - {id: new-api, module: fakeup.pkg, since: "2.0.0"}
  - {id: optional, module: fakeup.gone, severity: info}
  - {id: broken-file, module: fakeup.broken}
"""


def with_matrix(pytester: pytest.Pytester) -> pytest.Pytester:
    """A project holding the fixture matrix (its sources: the checkout fixture)."""
    pytester.makeini("[pytest]\n")
    (pytester.path / "matrices").mkdir()
    (pytester.path / "matrices" / "fakeup.yaml").write_text(MATRIX)
    return pytester


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    return with_matrix(pytester)


def run(project: pytest.Pytester, *args: str) -> pytest.RunResult:
    # --rootdir: pytest would otherwise take the checkout's ancestors into account
    return project.runpytest(
        f"--rootdir={project.path}",
        *("--canary-source", str(CHECKOUT), "--canary-versions", "1.0.0,2.0.0", "-rA", *args),
    )


def test_ids_and_outcomes(project):
    result = run(project)
    result.assert_outcomes(
        passed=3, failed=1, skipped=1, xfailed=2, xpassed=1, errors=2, warnings=1
    )
    out = result.stdout.str()
    summary = {line.split(" ", 1)[0]: [] for line in result.stdout.lines}
    for line in result.stdout.lines:
        word, _, rest = line.partition(" ")
        summary[word].append(rest.split("matrices/fakeup.yaml::", 1)[-1].split(" ")[0])
    assert summary["PASSED"] == [
        "fakeup::pkg[2.0.0]",
        "fakeup::new-api[2.0.0]",
        "fakeup::optional[2.0.0]",
    ]
    assert summary["XFAIL"] == ["fakeup::gone[1.0.0]", "fakeup::optional[1.0.0]"]
    assert summary["XPASS"] == ["fakeup::pkg[1.0.0]"]
    assert summary["ERROR"] == ["fakeup::broken-file[1.0.0]", "fakeup::broken-file[2.0.0]"]
    assert summary["FAILED"] == ["fakeup::gone[2.0.0]"]
    assert "1.0.0 is outside >=2.0.0" in out
    lines = result.stdout.lines
    failed = next(i for i, line in enumerate(lines) if " fakeup::gone[2.0.0] _" in line)
    assert lines[failed + 1] == "module fakeup.gone not found"
    assert lines[failed + 2] == "why: the patch imports it"
    error = next(i for i, line in enumerate(lines) if "of fakeup::broken-file[2.0.0] _" in line)
    assert lines[error + 1].startswith("fakeup/broken.py:5: does not parse")
    assert "Traceback" not in out and "plugin.py:1" not in out
    assert "CanaryWarning" in out


def test_a_checks_own_acknowledged_break_is_xfail_and_a_stale_one_xpass(project):
    (project.path / "matrices" / "fakeup.yaml").write_text(
        """\
upstream: fakeup
src: src
checks:
  - id: gone
    module: fakeup.gone
    broken: {"2.0.0": "upstream dropped it for one release"}
  - id: pkg
    module: fakeup.pkg
    broken: {">=2.0": "thought it was gone"}
"""
    )
    result = run(project, "--canary-versions", "2.0.0")
    result.assert_outcomes(xfailed=1, xpassed=1)
    lines = {line.split(" ", 1)[0]: line for line in result.stdout.lines if "fakeup::" in line}
    assert "fakeup::gone[2.0.0]" in lines["XFAIL"]
    assert "[acknowledged: upstream dropped it for one release]" in lines["XFAIL"]
    assert "fakeup::pkg[2.0.0]" in lines["XPASS"] and "is stale" in lines["XPASS"]


def test_short_summary_line_gives_the_reason(project, monkeypatch):
    monkeypatch.setenv("COLUMNS", "150")
    result = run(project)
    summary = [line.split("::", 1)[-1] for line in result.stdout.lines]
    assert "fakeup::gone[2.0.0] - module fakeup.gone not found" in summary
    assert any(
        line.startswith("fakeup::broken-file[2.0.0] - fakeup/broken.py:5: does not parse")
        for line in summary
    )


def test_collect_only_reads_no_release(project, monkeypatch, tmp_path):
    monkeypatch.setenv("CANARY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CANARY_INDEX_URL", "http://127.0.0.1:9/unreachable/")
    (project.path / "matrices" / "fakeup.yaml").write_text(
        "upstream: fakeup\nversions:\n  include: ['1.0.0']\nchecks:\n"
        "  - {id: pkg, module: fakeup.pkg}\n"
    )
    result = project.runpytest("--collect-only", "-q")
    assert result.ret == 0
    assert "matrices/fakeup.yaml::fakeup::pkg[1.0.0]" in result.stdout.str()
    assert not (tmp_path / "cache").exists()


def test_keyword_selection(project):
    result = run(project, "-k", "fakeup and 2.0.0 and not broken", "--collect-only", "-q")
    collected = [line for line in result.stdout.lines if "::" in line]
    assert collected == [
        f"matrices/fakeup.yaml::fakeup::{check}[2.0.0]"
        for check in ("pkg", "gone", "new-api", "optional")
    ]


def test_bad_matrix_is_a_collection_error(project):
    (project.path / "matrices" / "fakeup.yaml").write_text("upstream: fakeup\nchecks: 3\n")
    result = run(project)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*fakeup.yaml:2: checks: must be a list of checks*"])
    assert "Traceback" not in result.stdout.str()


def test_offline_lasts_the_session(project, monkeypatch, tmp_path):
    import os

    monkeypatch.setenv("CANARY_CACHE_DIR", str(tmp_path / "empty-cache"))
    monkeypatch.delenv("CANARY_OFFLINE", raising=False)
    (project.path / "matrices" / "fakeup.yaml").write_text(
        "upstream: fakeup\nversions:\n  include: ['1.0.0']\nchecks:\n"
        "  - {id: pkg, module: fakeup.pkg}\n"
    )
    result = project.runpytest("--canary-offline")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*offline*"])
    assert "CANARY_OFFLINE" not in os.environ


GENERIC = """\
import pytest
from _pytest.runner import pytest_runtest_protocol as generic


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item, nextitem):
    return generic(item, nextitem)  # pytest's own protocol for every item
"""
SETUPS = """\
SETUPS = []


def pytest_runtest_setup(item):
    SETUPS.append(item.nodeid)


def pytest_terminal_summary(terminalreporter):
    terminalreporter.write_line(f"generic setups: {len(SETUPS)}")
"""


def junit(project: pytest.Pytester, name: str) -> list[str]:
    """The JUnit XML of a run, one element per line, with times and host left out."""
    xml = (project.path / name).read_text()
    xml = re.sub(r' (time|timestamp|hostname)="[^"]*"', "", xml)
    return [line for line in re.split(r"(?=<)", xml) if line.strip()]


def test_own_protocol_reports_what_pytests_own_does(project):
    """Outcomes, the -rA summary, warnings and the JUnit XML are the same through the check
    items' own protocol as through pytest's generic one (forced here by a conftest)."""
    (project.path / "conftest.py").write_text(SETUPS)
    own = run(project, "--junitxml=own.xml", "-p", "no:cacheprovider")
    (project.path / "conftest.py").write_text(GENERIC)
    generic = run(project, "--junitxml=generic.xml", "-p", "no:cacheprovider")
    own.assert_outcomes(passed=3, failed=1, skipped=1, xfailed=2, xpassed=1, errors=2, warnings=1)
    assert own.parseoutcomes() == generic.parseoutcomes()
    assert "generic setups: 1" in own.stdout.lines  # the last item only: nothing follows it

    def summary(result: pytest.RunResult) -> list[str]:
        lines = result.stdout.lines
        start = next(i for i, line in enumerate(lines) if "short test summary info" in line)
        return [line for line in lines[start + 1 :] if not line.startswith("=")]

    assert summary(own) == summary(generic) and len(summary(own)) == 10
    assert junit(project, "own.xml") == junit(project, "generic.xml")
    cases = [line for line in junit(project, "own.xml") if line.startswith("<testcase")]
    assert len(cases) == 10


def test_exit_first_and_last_failed(project):
    first = run(project, "-x")  # 1.0.0 comes first; its broken-file error stops the run
    first.assert_outcomes(skipped=1, errors=1, xfailed=2, xpassed=1)
    assert "stopping after 1 failures" in first.stdout.str()
    run(project)  # every item, so the cache knows every failure
    again = run(project, "--lf")
    again.assert_outcomes(failed=1, errors=2)
    assert "run-last-failure: rerun previous 3 failures" in again.stdout.str()


def test_keyword_selection_runs_only_the_selected_items(project):
    result = run(project, "-k", "gone and 2.0.0")
    result.assert_outcomes(failed=1)
    assert result.stdout.lines.count("FAILED matrices/fakeup.yaml::fakeup::gone[2.0.0]") == 0
    assert any("fakeup::gone[2.0.0]" in line for line in result.stdout.lines)


@pytest.mark.parametrize("selected", [(), ("-k", "optional and 2.0.0")], ids=["own", "pytests"])
def test_a_warning_made_an_error_fails_its_item_in_one_line(project, selected):
    """`-W error` (a project's `filterwarnings = error`) turns a `warn` result's warning into
    an exception raised in the plugin: the item fails with the failure's text, as `canary
    check` says it, never a traceback through the plugin or an INTERNALERROR (both were, by
    the plugin's own protocol and by pytest's, the last item run)."""
    result = run(project, "-W", "error", *selected)
    out = result.stdout.str()
    assert "INTERNALERROR" not in out and "Traceback" not in out and "items.py" not in out
    assert "FAILED matrices/fakeup.yaml::fakeup::optional[2.0.0] - module fakeup.gone not" in out
    lines = result.stdout.lines
    header = next(i for i, line in enumerate(lines) if " fakeup::optional[2.0.0] _" in line)
    assert lines[header + 1] == "module fakeup.gone not found"
