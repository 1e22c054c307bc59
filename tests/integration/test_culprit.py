"""Naming the upstream commit that broke a check: GitHub's compare, bisection over file reads
at each commit, the pull request, against a loopback GitHub serving a real git repository."""

from __future__ import annotations

import contextlib
import json
import math
import re

import pytest
from gitrepo import Repo, githost_module
from servers import FAST, make_wheel, publish_releases, serving

from canary.action.nightly import follow_up
from canary.action.steps import results_path
from canary.cli.main import main
from canary.engine.culprit import Culprits, first_failing
from canary.engine.outcomes import Result, RunReport, Status, UpstreamInfo
from canary.matrix.model import load_matrix
from canary.reports.faults import short_cause
from canary.reports.jsonio import load_json, to_json
from canary.reports.markdown import render_markdown
from canary.settings import Settings
from canary.sources.context import SourceContext
from canary.sources.github import GitHubTree
from canary.sources.history import Commit, History
from canary.sources.tree import SourceError

MATRIX = """\
upstream: demo
github: o/demo
versions:
  releases: ">=1.0"
  include: [main]
checks:
  - id: train-params
    module: demo.core
    function: train
    params: [model, beta]
"""


def _core(params: str, extra: str = "") -> dict[str, str]:
    return {"demo/core.py": f"def train({params}):\n    return 1\n{extra}"}


@pytest.fixture
def upstream(tmp_path):
    """demo: 1.0 holds; 20 commits later, #41 drops `beta`; 1.1 and main fail."""
    repo = Repo(tmp_path / "demo")
    repo.commit("start", {"demo/__init__.py": '__version__ = "1.0.0"\n', **_core("model, beta")})
    repo.commit("release 1.0.0", {}, tag="v1.0.0")
    for n in range(12):
        repo.commit(f"docs {n} (#{n + 1})", {"README": f"{n}\n"})
    broke = repo.commit("Remove the deprecated beta (#41)", _core("model"))
    for n in range(7):
        repo.commit(f"tidy {n}", _core("model", f"# {n}\n"))
    repo.commit("release 1.1.0", {"demo/__init__.py": '__version__ = "1.1.0"\n'}, tag="v1.1.0")
    repo.commit("more", {"README": "more\n"})
    return repo, broke


@pytest.fixture
def served(upstream, tmp_path):
    repo, broke = upstream
    with githost_module().GitHost({"o/demo": repo.git_dir}) as host:
        yield host, broke


def _context(host, tmp_path, offline=False):
    return SourceContext(
        Settings.from_environment(offline=offline),
        cache_dir=tmp_path / "cache",
        policy=FAST,
        github_raw_url=host.raw_url,
        github_api_url=host.api_url,
    )


def _matrix(tmp_path):
    path = tmp_path / "demo.yaml"
    path.write_text(MATRIX, encoding="utf-8")
    matrix = load_matrix(path)
    return matrix, matrix.checks[0]


def test_the_commit_that_broke_the_check_is_named_with_its_pull_request(served, tmp_path):
    host, broke = served
    matrix, check = _matrix(tmp_path)
    with _context(host, tmp_path) as context:
        found = Culprits(context).name(matrix, check, "v1.0.0", "main")
    assert found.commit == broke
    assert (found.pull, found.pull_title) == (41, "Remove the deprecated beta")
    assert found.pull_url == "https://github.com/o/demo/pull/41"
    assert found.title == "Remove the deprecated beta (#41)"
    assert found.date.startswith("2026-07-15")
    assert found.between == 22 and found.unsure == 0
    assert found.judged <= math.ceil(math.log2(found.between))
    # API: the two refs, one page of the comparison, the pull request; files from raw content
    assert sum(host.api.values()) == 4 and host.api["pulls"] == 1


def test_a_release_range_is_bisected_between_its_tags(served, tmp_path):
    host, broke = served
    matrix, check = _matrix(tmp_path)
    with _context(host, tmp_path) as context:
        found = Culprits(context).name(matrix, check, "v1.0.0", "v1.1.0")
    assert found.commit == broke and found.between == 21


def test_a_second_naming_reads_everything_from_the_cache(served, tmp_path):
    host, broke = served
    matrix, check = _matrix(tmp_path)
    with _context(host, tmp_path) as context:
        Culprits(context).name(matrix, check, "v1.0.0", "v1.1.0")
    before = sum(host.api.values()), host.raw
    with _context(host, tmp_path, offline=True) as context:
        assert Culprits(context).name(matrix, check, "v1.0.0", "v1.1.0").commit == broke
    assert (sum(host.api.values()), host.raw) == before


def test_a_rate_limit_is_an_error_naming_the_reset(served, tmp_path):
    host, _ = served
    host.limit = 1
    matrix, check = _matrix(tmp_path)
    with _context(host, tmp_path) as context, pytest.raises(SourceError) as caught:
        Culprits(context).name(matrix, check, "v1.0.0", "main")
    assert re.search(
        r"GitHub rate limit exhausted; it resets in \d+ s, at ..:..:.. UTC", str(caught.value)
    )
    # a run's fault line keeps when it resets
    fault = Result("demo", "c", "main", Status.ERROR, str(caught.value), "github")
    assert re.fullmatch(
        r"GitHub rate limit exhausted until ..:..:.. UTC \(set GITHUB_TOKEN or GH_TOKEN\)",
        short_cause(fault),
    )


def test_an_unknown_ref_is_an_error(served, tmp_path):
    host, _ = served
    matrix, check = _matrix(tmp_path)
    with _context(host, tmp_path) as context, pytest.raises(SourceError, match=r"v9\.9\.9"):
        Culprits(context).name(matrix, check, "v9.9.9", "main")


def test_main_read_from_its_tarball_is_still_resolved_to_its_commit(served, tmp_path):
    """A tarball proves the branch exists without saying its commit: naming a break on main
    after main was read that way asks GitHub for the commit, not a ref 'not found'."""
    host, broke = served
    matrix, check = _matrix(tmp_path)
    with _context(host, tmp_path) as context:
        c = context
        tree = GitHubTree(
            "o/demo",
            "main",
            "",
            c.http,
            c.cache,
            raw_url=host.raw_url,
            api_url=host.api_url,
            tarball_threshold=1,
        )
        tree.prefetch(["demo/core.py"])
        assert host.api["tarball"] == 1
        assert Culprits(context).name(matrix, check, "v1.0.0", "main").commit == broke


HOSTILE_ANSWERS = {
    "deep JSON": (b"[" * 100_000, "JSON nested too deep"),
    "not JSON": (b"<html>", "not JSON"),
    "no commits list": (b'{"commits": 3}', "not a comparison"),
    "a commit without sha": (b'{"total_commits": 1, "commits": [[[1]]]}', "has no sha: a list"),
}


@pytest.mark.parametrize("answer", HOSTILE_ANSWERS, ids=list(HOSTILE_ANSWERS))
def test_a_hostile_comparison_is_a_clear_error_and_is_not_kept(answer, tmp_path):
    body, said = HOSTILE_ANSWERS[answer]
    base, head = "a" * 40, "b" * 40
    with serving() as api:
        api.add(f"/repos/o/demo/compare/{base}...{head}", body)
        with SourceContext(
            Settings.from_environment(), cache_dir=tmp_path / "cache", policy=FAST
        ) as context:
            history = History("o/demo", context.http, context.cache, api.url)
            for _ in range(2):
                with pytest.raises(SourceError, match=re.escape(said)):
                    history.between(base, head)
    asked = len(api.requests_to(f"/repos/o/demo/compare/{base}...{head}"))
    # what is not JSON is asked again (never kept); a JSON answer of the wrong shape is kept
    assert asked == (2 if answer in ("deep JSON", "not JSON") else 1)


def test_hostile_pulls_are_a_clear_error(tmp_path):
    sha = "c" * 40
    with serving() as api:
        api.add(f"/repos/o/demo/commits/{sha}/pulls", b'{"a": ' * 50_000)
        with SourceContext(
            Settings.from_environment(), cache_dir=tmp_path / "cache", policy=FAST
        ) as context:
            history = History("o/demo", context.http, context.cache, api.url)
            with pytest.raises(SourceError, match="pulls: JSON nested too deep"):
                history.pull_request(sha)


def _commits(count):
    return [Commit(f"{n:040x}", "", f"c{n}") for n in range(count)]


@pytest.mark.parametrize("count", [1, 2, 3, 10, 100, 1000])
def test_bisection_finds_each_first_failing_commit_in_log2_judgings(count):
    for bad in range(0, count, max(1, count // 50)):
        asked: list[Commit] = []

        def holds(commit, bad=bad, asked=asked):
            asked.append(commit)
            return int(commit.title[1:]) < bad

        assert first_failing(_commits(count), holds) == (bad, 0)
        assert len(asked) <= max(0, math.ceil(math.log2(count)))


def test_commits_that_cannot_be_judged_are_stepped_over_and_counted():
    def holds(commit):
        n = int(commit.title[1:])
        return None if n in (5, 6) else n < 7

    assert first_failing(_commits(10), holds) == (7, 2)


def test_explain_names_the_commit_on_main(served, tmp_path, monkeypatch, capsys):
    host, broke = served
    stack = contextlib.ExitStack()
    with stack:
        _explain(host, broke, stack, tmp_path, monkeypatch, capsys)


def _explain(host, broke, stack, tmp_path, monkeypatch, capsys):
    matrix_path = tmp_path / "demo.yaml"
    matrix_path.write_text(
        MATRIX.replace('releases: ">=1.0"\n  include: [main]', 'include: ["1.0.0", main]'), "utf-8"
    )
    monkeypatch.setenv("CANARY_CACHE_DIR", str(tmp_path / "cache"))
    index = stack.enter_context(serving())
    files = {"demo/__init__.py": b'__version__ = "1.0.0"\n'}
    files.update({k: v.encode() for k, v in _core("model, beta").items()})
    publish_releases(index, "demo", {"1.0.0": make_wheel("demo", "1.0.0", files)})
    monkeypatch.setenv("CANARY_INDEX_URL", f"{index.url}/simple/")
    monkeypatch.setenv("CANARY_GITHUB_RAW_URL", host.raw_url)
    monkeypatch.setenv("CANARY_GITHUB_API_URL", host.api_url)
    monkeypatch.setenv("CANARY_RETRY_BACKOFF", "0")
    args = ["explain", "demo::train-params", str(matrix_path), "--versions", "all", "--commit"]
    assert main(args) == 0
    out = capsys.readouterr().out.splitlines()
    assert "broke in main (held on 1.0.0)" in out
    at = out.index("broke in main (held on 1.0.0)")
    assert out[at + 1] == (
        f"broken on demo main by {broke[:7]} (#41 'Remove the deprecated beta'), 2026-07-15"
    )
    assert main([*args, "--format", "json", "--offline"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["broken_by"]["commit"] == broke and data["broken_by"]["pull"]["number"] == 41


def _night(date: str, main_status: Status) -> RunReport:
    failing = main_status is Status.FAIL
    main = Result(
        "demo",
        "train-params",
        "main",
        main_status,
        "params of train are (model); missing beta" if failing else "",
        "github",
        last_pass="1.0.0" if failing else "",
        first_fail="main" if failing else "",
    )
    return RunReport(
        [Result("demo", "train-params", "1.0.0", Status.PASS, "", "index"), main],
        {},
        {"demo": UpstreamInfo(versions=("1.0.0", "main"), branches=("main",))},
        run={"date": date},
    )


def _nightly_env(host, tmp_path, monkeypatch):
    matrix_path = tmp_path / "demo.yaml"
    matrix_path.write_text(MATRIX, "utf-8")
    for name, value in {
        "RUNNER_TEMP": str(tmp_path / "runner"),
        "INPUT_MATRICES": str(matrix_path),
        "CANARY_CACHE_DIR": str(tmp_path / "cache"),
        "CANARY_GITHUB_RAW_URL": host.raw_url,
        "CANARY_GITHUB_API_URL": host.api_url,
        "CANARY_RETRY_BACKOFF": "0",
    }.items():
        monkeypatch.setenv(name, value)


def test_the_nightly_names_the_commit_of_a_new_break_and_keeps_it(served, tmp_path, monkeypatch):
    host, broke = served
    _nightly_env(host, tmp_path, monkeypatch)
    before = tmp_path / "before.json"
    before.write_text(to_json(_night("2026-12-06 05:00 UTC", Status.PASS)), "utf-8")
    results_path().write_text(to_json(_night("2026-12-07 05:00 UTC", Status.FAIL)), "utf-8")
    follow_up(before)
    tonight = json.loads(results_path().read_text("utf-8"))
    named = tonight["results"][1]["broken_by"]
    assert (named["commit"], named["pull"]["number"]) == (broke, 41)
    assert tonight["upcoming"][0]["since"] == "2026-12-07"
    spent = sum(host.api.values())
    # the next night: still broken the same way; the name and the date are carried, no request
    before.write_text(results_path().read_text("utf-8"), "utf-8")
    results_path().write_text(to_json(_night("2026-12-08 05:00 UTC", Status.FAIL)), "utf-8")
    follow_up(before)
    later = json.loads(results_path().read_text("utf-8"))
    assert later["results"][1]["broken_by"] == named
    assert later["upcoming"][0]["since"] == "2026-12-07"
    assert sum(host.api.values()) == spent
    assert "broken on demo main by" in render_markdown(load_json(json.dumps(later)))


@pytest.mark.parametrize("race", [False, True], ids=["held", "moved-before-recorded"])
def test_the_nightly_bisects_from_the_commit_it_judged_main_at(
    race, upstream, served, tmp_path, monkeypatch
):
    """Each night records the commit main was judged at; when main turns red, the break is
    bisected from last night's commit (the night's 10 commits, not the 22 since v1.0.0). If
    that commit does not hold after all (main moved between the judging and the recording),
    the release's tag is the start again."""
    repo, _ = upstream
    host, broke = served
    _nightly_env(host, tmp_path, monkeypatch)
    # raced: the commit recorded is already the break's, though main held when judged
    last_night = broke if race else repo.run("rev-parse", f"{broke}^")
    host.branches["o/demo", "main"] = last_night
    results_path().write_text(to_json(_night("2026-12-06 05:00 UTC", Status.PASS)), "utf-8")
    follow_up(None)  # the first night: no baseline, main's commit recorded all the same
    first = json.loads(results_path().read_text("utf-8"))
    assert first["upstreams"]["demo"]["commits"] == {"main": last_night}
    before = tmp_path / "before.json"
    before.write_text(results_path().read_text("utf-8"), "utf-8")
    del host.branches["o/demo", "main"]  # main moves on, over the break
    # a night later what the cache holds of main is stale: a cache of its own stands for that
    monkeypatch.setenv("CANARY_CACHE_DIR", str(tmp_path / "next-night"))
    results_path().write_text(to_json(_night("2026-12-07 05:00 UTC", Status.FAIL)), "utf-8")
    follow_up(before)
    tonight = json.loads(results_path().read_text("utf-8"))
    head = repo.run("rev-parse", "HEAD")
    assert tonight["upstreams"]["demo"]["commits"] == {"main": head}
    named = tonight["results"][1]["broken_by"]
    assert named["commit"] == broke
    assert named["between"] == (22 if race else 10)
    assert named["judged"] <= math.ceil(math.log2(named["between"]))
