"""The plugin under pytest-xdist: the controller runs the check items, the workers the other
tests, and a session reads the same as with one process (outcomes, ids, summaries, JUnit XML,
exit code, -x, --lf)."""

from __future__ import annotations

import re

import pytest
from test_plugin import CHECKOUT, junit, with_matrix

#: Each test starts pytest sessions with xdist workers: about a minute in all on two cores.
pytestmark = pytest.mark.slow

pytest_plugins = ["pytester"]

ORDINARY = """\
import pytest


def test_passes():
    pass


def test_fails():
    assert {expected} == 1, "ordinary failure"


@pytest.mark.skip(reason="ordinary skip")
def test_skipped():
    pass


@pytest.mark.xfail(reason="ordinary xfail")
def test_xfails():
    assert False
"""

#: The fixture matrix's items (test_plugin.py) on 1.0.0 and 2.0.0.
CHECKS = {"passed": 3, "failed": 1, "skipped": 1, "xfailed": 2, "xpassed": 1, "errors": 2}


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    return with_matrix(pytester)


@pytest.fixture
def mixed(project: pytest.Pytester) -> pytest.Pytester:
    """The fixture matrix beside a test module: a session the workers have work in."""
    project.makepyfile(test_ordinary=ORDINARY.format(expected=2))
    return project


def session(project: pytest.Pytester, workers: int, *args: str) -> pytest.RunResult:
    """A real pytest process, with `-n workers` (0: xdist not involved)."""
    xdist = ("-n", str(workers)) if workers else ()
    return project.runpytest_subprocess(
        # One word each: pytest would look for its configuration around a separate path.
        f"--rootdir={project.path}",
        f"--canary-source={CHECKOUT}",
        *("--canary-versions", "1.0.0,2.0.0", "-rA"),
        *xdist,
        *args,
    )


def summary(result: pytest.RunResult) -> list[str]:
    """The `-rA` short summary, in order of outcome and id (workers finish in any order)."""
    lines = result.stdout.lines
    start = next(i for i, line in enumerate(lines) if "short test summary info" in line)
    return sorted(line for line in lines[start + 1 :] if not line.startswith("="))


def same_session(one: pytest.RunResult, two: pytest.RunResult) -> None:
    """Same exit code, counts and summary. Deselections aside: xdist shows only the
    controller's (here: the check items'), never its workers'."""

    def outcomes(result: pytest.RunResult) -> dict[str, int]:
        return {k: v for k, v in result.parseoutcomes().items() if k != "deselected"}

    assert two.ret == one.ret
    assert outcomes(two) == outcomes(one)
    assert summary(two) == summary(one)


def test_workers_run_the_tests_and_the_controller_the_checks(mixed):
    one = session(mixed, 0, "--junitxml=one.xml", "-v", "-p", "no:cacheprovider")
    two = session(mixed, 2, "--junitxml=two.xml", "-v", "-p", "no:cacheprovider")
    one.assert_outcomes(**{**CHECKS, "passed": 4, "failed": 2, "skipped": 2, "xfailed": 3})
    assert one.ret == pytest.ExitCode.TESTS_FAILED
    same_session(one, two)
    assert sorted(junit(mixed, "two.xml")) == sorted(junit(mixed, "one.xml"))
    assert "2 workers [4 items]" in two.stdout.str()
    assert "canary: the check items run in this process" in two.stdout.str()
    # A worker's verbose line names it ([gw0], [gw1]); the controller's lines do not.
    lines = two.stdout.lines
    ordinary = [line for line in lines if re.match(r"\[gw\d\] \[ *\d+%\] \w+ test_ordin", line)]
    checks = [line for line in lines if line.startswith("matrices/") and line.endswith("%]")]
    assert len(ordinary) == 4 and len(checks) == 10


def test_matrices_alone_start_no_worker(project):
    one = session(project, 0, "matrices", "--junitxml=one.xml", "-p", "no:cacheprovider")
    two = session(project, 2, "matrices", "--junitxml=two.xml", "-p", "no:cacheprovider")
    one.assert_outcomes(**CHECKS, warnings=1)
    same_session(one, two)
    assert junit(project, "two.xml") == junit(project, "one.xml")
    assert "no xdist worker" in two.stdout.str() and "workers [" not in two.stdout.str()


def test_exit_first_stops_in_the_controller_and_among_the_workers(mixed):
    checks_first = session(mixed, 2, "-x", "-k", "not test_fails", "-p", "no:cacheprovider")
    # The workers' tests pass; among the checks 1.0.0 comes first, and its error stops the run.
    checks_first.assert_outcomes(passed=1, skipped=2, xfailed=3, xpassed=1, errors=1)
    assert checks_first.ret == pytest.ExitCode.TESTS_FAILED
    assert "stopping after 1 failures" in checks_first.stdout.str()
    tests_first = session(mixed, 2, "-x", "-p", "no:cacheprovider")
    outcomes = tests_first.parseoutcomes()
    assert outcomes["failed"] == 1 and "error" not in outcomes and "errors" not in outcomes
    assert "fakeup::" not in tests_first.stdout.str()  # no check item ran
    assert "stopping after 1 failures" in tests_first.stdout.str()


def test_last_failed_reruns_the_failures_wherever_they_ran(mixed):
    def rerun(cache: str, *first: str) -> pytest.RunResult:
        """`--lf` after a first run, with -n 2 and with one process (same cache)."""
        session(mixed, 0, "-o", f"cache_dir={cache}", *first)
        two = session(mixed, 2, "-o", f"cache_dir={cache}", "--lf")
        same_session(session(mixed, 0, "-o", f"cache_dir={cache}", "--lf"), two)
        return two

    both = rerun(".both")
    both.assert_outcomes(failed=2, errors=2)
    assert "run-last-failure: rerun previous 3 failures" in both.stdout.str()
    # A failure among the workers' tests only: the check items are not run again.
    rerun(".tests", "-k", "test_").assert_outcomes(failed=1)
    # Failures among the check items only: the workers' tests are not run again.
    mixed.makepyfile(test_ordinary=ORDINARY.format(expected=1))
    rerun(".checks").assert_outcomes(failed=1, errors=2)


def test_an_item_named_inside_a_matrix_runs_with_workers_about(mixed):
    item = "matrices/fakeup.yaml::fakeup::gone[2.0.0]"
    result = session(mixed, 2, "test_ordinary.py", item, "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=2, skipped=1, xfailed=1)
    assert f"FAILED {item}" in result.stdout.str()


def test_a_bad_matrix_stops_the_session(mixed):
    (mixed.path / "matrices" / "fakeup.yaml").write_text("upstream: fakeup\nchecks: 3\n")
    result = session(mixed, 2, "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*fakeup.yaml:2: checks: must be a list of checks*"])
    assert "Traceback" not in result.stdout.str()
    assert "test_ordinary" not in result.stdout.str()


def test_a_session_without_matrices_is_xdist_as_usual(pytester):
    pytester.makeini("[pytest]\n")
    (pytester.path / "suite").mkdir()
    (pytester.path / "suite" / "test_ordinary.py").write_text(ORDINARY.format(expected=1))
    result = session(pytester, 2, "suite", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, skipped=1, xfailed=1)
    assert "2 workers [4 items]" in result.stdout.str()
    assert "collected" not in result.stdout.str() and "canary:" not in result.stdout.str()


@pytest.mark.parametrize(
    ("extra", "workers"),
    [
        ({}, False),
        ({"matrices/notes.md": "a note"}, True),  # might be collected by some plugin
        ({"test_more.py": "def test_x(): pass\n"}, True),
    ],
)
def test_workers_start_unless_only_matrices_are_given(project, extra, workers):
    for name, text in extra.items():
        (project.path / name).write_text(text)
    args = ["matrices", *(name for name in extra if not name.startswith("matrices/"))]
    # What `-n 2` comes to (xdist's pytest_cmdline_main, which parseconfigure does not run).
    config = project.parseconfigure("-p", "xdist", "--dist", "load", "--tx", "2*popen", *args)
    assert config.pluginmanager.has_plugin("dsession") is workers
    assert config.pluginmanager.has_plugin("canary-no-workers") is not workers
    assert config.pluginmanager.has_plugin("canary-xdist-controller") is workers


def test_module_names_leave_the_check_items_to_the_workers(project):
    """With --pyargs only collection tells where matrices are: no split, the workers run the
    check items as any test."""
    project.makepyfile(test_ordinary=ORDINARY.format(expected=2))
    result = session(project, 2, "--pyargs", "test_ordinary", "matrices", "-p", "no:cacheprovider")
    result.assert_outcomes(**{**CHECKS, "passed": 4, "failed": 2, "skipped": 2, "xfailed": 3})
    assert "canary:" not in result.stdout.str() and "2 workers [14 items]" in result.stdout.str()


@pytest.mark.parametrize(
    "selection",
    [
        ("-k", "gone or test_passes"),
        ("-m", "not xfail"),  # the ordinary xfail test is marked; check items never are
        ("--deselect", "matrices/fakeup.yaml::fakeup::gone[2.0.0]"),
    ],
    ids=["k", "m", "deselect"],
)
def test_selection_is_the_same_with_workers(mixed, selection):
    one = session(mixed, 0, *selection, "-p", "no:cacheprovider")
    two = session(mixed, 2, *selection, "-p", "no:cacheprovider")
    same_session(one, two)
    assert one.parseoutcomes()["deselected"] > 0


def test_xdist_loadgroup_runs_the_same_items(project):
    """`--dist loadgroup`, recommended before the controller ran the check items, still works."""
    result = project.runpytest_subprocess(
        *("--canary-source", str(CHECKOUT), "--canary-versions", "1.0.0,2.0.0"),
        *("-n", "2", "--dist", "loadgroup", "-p", "xdist"),
    )
    result.assert_outcomes(**CHECKS, warnings=1)
