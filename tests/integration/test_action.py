"""The Action's steps, run as GitHub would run them, against a downstream repository whose
upstream is served on loopback: the summary, the annotations, the results and the verdict;
in nightly mode the lock pull request and the breakage issue, against a fake GitHub API."""

from __future__ import annotations

import io
import json
import re
import subprocess
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from action_runner import ACTION, ActionRunner, read_outputs
from adopter import publish, upstream_index
from test_workflows import readme_pair
from workflow_commands import acted_on, own

from canary.action import nightly as nightly_steps
from canary.action.rest import GitHub
from canary.action.runner import ActionError
from canary.cli.main import main
from canary.reports.markdown import SUMMARY_LIMIT
from canary.sources.limits import MiB

INSTALL = "Install canary"
MATRIX = """\
upstream: trl
versions:
  releases: ">=1.0"
checks:
  - id: compute-loss
    why: "patchwork wraps compute_loss and forwards num_items_in_batch"
    module: trl.trainer.grpo_trainer
    function: GRPOTrainer.compute_loss
    params: [model, inputs, num_items_in_batch]
  - id: disable-gradient-checkpointing
    why: "patchwork swaps it for a no-op"
    module: trl.models.utils
    function: disable_gradient_checkpointing
    params: [model, gradient_checkpointing_kwargs]
"""
FAILING_LINE = MATRIX.splitlines().index("  - id: disable-gradient-checkpointing") + 1


@pytest.fixture
def upstream(tmp_path, monkeypatch):
    """The package index serving trl, on loopback."""
    with upstream_index(monkeypatch, tmp_path / "cache") as server:
        yield server


@pytest.fixture
def repo(tmp_path, monkeypatch, upstream):
    """A downstream repository with canary/trl.yaml, locked while only trl 1.0.0 existed."""
    workspace = tmp_path / "repo"
    (workspace / "canary").mkdir(parents=True)
    (workspace / "canary" / "trl.yaml").write_text(MATRIX, encoding="utf-8")
    publish(upstream, ["1.0.0"])
    monkeypatch.chdir(workspace)
    assert main(["lock", "canary/trl.yaml"]) == 0
    publish(upstream, ["1.0.0", "1.1.0"])
    return workspace


def action(
    repo: Path,
    tmp_path: Path,
    env: dict[str, str] | None = None,
    skip: tuple[str, ...] = (),
    **inputs: str,
):
    """action.yml run in `repo`; the install, and the steps named in `skip`, count as done."""
    temp = tmp_path / "runner-temp"
    temp.mkdir(exist_ok=True)
    runner = ActionRunner(repo, temp, inputs, env or {})
    return runner, runner.execute(skip=(INSTALL, *skip))


def test_the_install_step_is_the_readme_install():
    """The install the harness skips is the README's, run in the action's own checkout."""
    install, _ = readme_pair(0)
    steps = {s.get("name"): s for s in yaml.safe_load(ACTION.read_text())["runs"]["steps"]}
    assert steps[INSTALL]["run"].split() == install
    assert steps[INSTALL]["working-directory"] == "${{ github.action_path }}"


def test_check_mode_summarizes_annotates_uploads_and_fails_on_red(repo, tmp_path):
    runner, run = action(repo, tmp_path, **{"matrices": "canary", "versions": "1.0.0,1.1.0"})
    assert run.failed == ["Verdict"], run.failed
    results = Path(run.outputs["plan"]["results"])
    data = json.loads(results.read_text())
    cells = {(r["check"], r["version"]): r["status"] for r in data["results"]}
    assert cells == {
        ("compute-loss", "1.0.0"): "pass",
        ("compute-loss", "1.1.0"): "pass",
        ("disable-gradient-checkpointing", "1.0.0"): "pass",
        ("disable-gradient-checkpointing", "1.1.0"): "fail",
    }
    assert run.outputs["check"] == {
        "fail-checks": "1",
        "fail-results": "1",
        "error-checks": "0",
        "error-results": "0",
        "fail": "1",
        "error": "0",
        "results": str(results),
    }
    summary = runner.summary.read_text()
    assert "disable-gradient-checkpointing" in summary and "1.1.0" in summary
    assert "::error::canary: 1 check red (1 check x version result); see the job" in run.stdout
    annotations = [line for line in run.stdout.splitlines() if line.startswith("::error file=")]
    assert len(annotations) == 1, run.stdout
    assert annotations[0].startswith(f"::error file=canary/trl.yaml,line={FAILING_LINE},")
    assert "disable-gradient-checkpointing[1.1.0]" in annotations[0]
    uploads = [w for uses, w in run.used if uses.startswith("actions/upload-artifact@")]
    assert uploads == [
        {
            "name": "canary-results",
            "path": str(results),
            "retention-days": "30",
            "if-no-files-found": "error",
        }
    ]
    restored = next(w for uses, w in run.used if uses.startswith("actions/cache/restore@"))
    saved = next(w for uses, w in run.used if uses.startswith("actions/cache/save@"))
    assert restored["key"] == saved["key"] == run.outputs["plan"]["cache-key"]
    assert restored["path"] == saved["path"] == str(tmp_path / "runner-temp" / "canary-cache")
    assert any((tmp_path / "runner-temp" / "canary-cache").iterdir()), "the cache was not used"


def test_cache_key_follows_the_lock_files(repo, tmp_path):
    """The plan's key, and the cache steps' conditions: nothing needs the check run."""
    _, first = action(repo, tmp_path, skip=("Check", "Verdict"), cache="false")
    assert not [uses for uses, _ in first.used if uses.startswith("actions/cache/")]
    assert main(["lock", "canary/trl.yaml"]) == 0  # now 1.1.0 is locked too
    _, second = action(repo, tmp_path, skip=("Check", "Verdict"), cache="false")
    assert first.outputs["plan"]["cache-key"] != second.outputs["plan"]["cache-key"]


def test_errors_fail_unless_told_not_to(repo, tmp_path, monkeypatch):
    monkeypatch.setenv("CANARY_OFFLINE", "1")  # an empty cache offline: every cell is error
    _, strict = action(repo, tmp_path, versions="1.0.0")
    assert strict.failed == ["Verdict"]
    _, lenient = action(repo, tmp_path, versions="1.0.0", **{"fail-on-error": "false"})
    assert lenient.failed == []
    said = "canary: 2 checks in error (2 check x version results); fail-on-error is off"
    assert f"::warning::{said}" in lenient.stdout


def test_bad_inputs_stop_at_the_plan(repo, tmp_path):
    _, run = action(repo, tmp_path, matrices="nowhere/*.yaml")
    assert run.failed == ["Plan"]
    assert "input matrices: 'nowhere/*.yaml' names no matrix file" in run.stdout
    assert run.outcomes["check"] == "skipped"


# -- nightly mode ---------------------------------------------------------------------------

REPOSITORY = "owner/downstream"
API = f"/repos/{REPOSITORY}"


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout


@pytest.fixture
def pushed(repo, tmp_path):
    """The repository committed on main and pushed to a bare `origin`."""
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", str(origin))
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-q", "-m", "init")
    git(repo, "remote", "add", "origin", str(origin))
    git(repo, "push", "-q", "origin", "main")
    return origin


def last_night(results: list[dict]) -> bytes:
    """The previous run's results artifact, as GitHub serves it: a zip holding results.json."""
    data = {"results": results, "summary": {}, "stats": {}}
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("results.json", json.dumps(data))
    return out.getvalue()


REPOSITORY_ID = 1234
WORKFLOW_ID = 77


def workflow_run(run: int, **changed: object) -> dict:
    """A run of the nightly workflow in this repository, as GET /actions/runs/RUN answers."""
    return {
        "id": run,
        "run_number": run - 30,
        "workflow_id": WORKFLOW_ID,
        "event": "schedule",
        "head_branch": "main",
        "created_at": f"2026-11-{run - 11}T04:30:00Z",
        "html_url": f"https://github.example/{REPOSITORY}/actions/runs/{run}",
        "repository": {"id": REPOSITORY_ID},
        "head_repository": {"id": REPOSITORY_ID},
        **changed,
    }


def artifact(httpserver, run: int, created: str, **changed: object) -> dict:
    """The results artifact of `run`, as the artifact listing gives it."""
    return {
        "name": "canary-nightly-results",
        "expired": False,
        "created_at": created,
        "archive_download_url": httpserver.url_for(f"/blob/{run}.zip"),
        "workflow_run": {
            "id": run,
            "head_branch": "main",
            "repository_id": REPOSITORY_ID,
            "head_repository_id": REPOSITORY_ID,
            **changed,
        },
    }


def serve_runs(httpserver, runs: list[dict], artifacts: list[dict]) -> None:
    for run in [workflow_run(42), *runs]:
        httpserver.expect_request(f"{API}/actions/runs/{run['id']}").respond_with_json(run)
    httpserver.expect_request(f"{API}/actions/artifacts").respond_with_json(
        {"total_count": len(artifacts), "artifacts": artifacts}
    )


def serve_github(httpserver, *, baseline: bytes, issue: int | None, pull: int | None) -> None:
    listing = [
        {**artifact(httpserver, 39, "2026-11-29T04:30:00Z"), "expired": True},
        artifact(httpserver, 41, "2026-11-30T04:30:00Z"),
        artifact(httpserver, 40, "2026-11-30T05:00:00Z", head_branch="feature"),
    ]
    serve_runs(httpserver, [workflow_run(41)], listing)
    httpserver.expect_request("/blob/41.zip").respond_with_data(baseline)
    serve_issues_and_pulls(httpserver, issue=issue, pull=pull)


def serve_issues_and_pulls(httpserver, *, issue: int | None, pull: int | None) -> None:
    httpserver.expect_request(f"{API}/labels", method="POST").respond_with_json(
        {"message": "Validation Failed"}, status=422
    )
    open_issues = [{"number": issue, "title": "canary: new upstream breakage"}] if issue else []
    httpserver.expect_request(f"{API}/issues", method="GET").respond_with_json(open_issues)
    httpserver.expect_request(f"{API}/issues", method="POST").respond_with_json({"number": 7})
    httpserver.expect_request(f"{API}/issues/{issue}", method="PATCH").respond_with_json({})
    httpserver.expect_request(f"{API}/issues/{issue}/comments", method="POST").respond_with_json({})
    httpserver.expect_request(f"{API}/pulls", method="GET").respond_with_json(
        [{"number": pull}] if pull else []
    )
    httpserver.expect_request(f"{API}/pulls", method="POST").respond_with_json({"number": 8})
    httpserver.expect_request(f"{API}/pulls/{pull}", method="PATCH").respond_with_json({})


def nightly_env(httpserver) -> dict[str, str]:
    """What GitHub sets for the nightly's run 42, its API served on loopback."""
    return {
        "GITHUB_API_URL": httpserver.url_for("/").rstrip("/"),
        "GITHUB_SERVER_URL": "https://github.example",
        "GITHUB_REPOSITORY": REPOSITORY,
        "GITHUB_REPOSITORY_ID": str(REPOSITORY_ID),
        "GITHUB_RUN_ID": "42",
        "GITHUB_REF_NAME": "main",
    }


def nightly(repo, tmp_path, httpserver):
    return action(repo, tmp_path, nightly_env(httpserver), mode="nightly")


def calls(httpserver) -> list[tuple[str, str, dict | None]]:
    return [
        (request.method, request.path, request.get_json(silent=True))
        for request, _ in httpserver.log
    ]


PASSED_LAST_NIGHT = [
    {"upstream": "trl", "check": check, "version": "1.0.0", "status": "pass"}
    for check in ("compute-loss", "disable-gradient-checkpointing")
]
#: what the check step finds in `repo` (1.0.0 locked, 1.1.0 new): one check red on 1.1.0
TONIGHT = [
    *PASSED_LAST_NIGHT,
    {**PASSED_LAST_NIGHT[0], "version": "1.1.0"},
    {**PASSED_LAST_NIGHT[1], "version": "1.1.0", "status": "fail", "detail": "gone"},
]


@dataclass
class Compared:
    """What the compare step left: the job summary, its log and its outputs."""

    summary: str
    stdout: str
    outputs: dict[str, str]


def run_compare(tmp_path, httpserver, monkeypatch, capsys, results: str) -> Compared:
    """The nightly's compare step, in this process, over tonight's `results` (JSON text), with
    the environment a runner gives it: for the tests of what it chooses as the baseline, which
    need no lock, check or pull request around it (the nightly tests above run it as a step)."""
    summary, output = tmp_path / "summary.md", tmp_path / "output"
    for name, value in {
        **nightly_env(httpserver),
        "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_OUTPUT": str(output),
        "RUNNER_TEMP": str(tmp_path),
        "INPUT_MODE": "nightly",
    }.items():
        monkeypatch.setenv(name, value)
    (tmp_path / "canary-action").mkdir()
    (tmp_path / "canary-action" / "results.json").write_text(results)
    capsys.readouterr()
    nightly_steps.compare()
    return Compared(
        summary.read_text(encoding="utf-8"), capsys.readouterr().out, read_outputs(output)
    )


def tonight() -> str:
    return json.dumps({"results": TONIGHT, "summary": {}, "stats": {}})


def test_nightly_opens_the_issue_and_the_lock_pull_request(repo, pushed, tmp_path, httpserver):
    serve_github(httpserver, baseline=last_night(PASSED_LAST_NIGHT), issue=None, pull=None)
    runner, run = nightly(repo, tmp_path, httpserver)

    assert run.failed == ["Verdict"], run.failed
    assert "New upstream breakage since the previous nightly run" in run.stdout
    assert run.outputs["lock"]["locks-changed"] == "true"
    assert run.outputs["compare"]["new-breakage"] == "true"
    assert "canary: baseline: results of run 41 (#11, schedule on main" in run.stdout
    summary = runner.summary.read_text()
    assert summary.startswith("Baseline: the results of run 41 (#11, schedule on main")
    assert "disable-gradient-checkpointing" in summary and "1.1.0" in summary
    made = calls(httpserver)
    issue = next(body for method, path, body in made if (method, path) == ("POST", f"{API}/issues"))
    assert issue["title"] == "canary: new upstream breakage"
    assert issue["labels"] == ["canary-nightly"]
    assert "https://github.example/owner/downstream/actions/runs/42" in issue["body"]
    assert "disable-gradient-checkpointing" in issue["body"]
    pull = next(body for method, path, body in made if (method, path) == ("POST", f"{API}/pulls"))
    assert pull["head"] == "canary/refresh-locks" and pull["base"] == "main"
    assert "1.1.0" in pull["body"]
    pushed_lock = git(pushed, "show", "canary/refresh-locks:canary/trl.lock")
    assert "1.1.0" in pushed_lock
    assert git(pushed, "show", "main:canary/trl.lock") != pushed_lock
    uploads = [w["name"] for uses, w in run.used if uses.startswith("actions/upload-artifact@")]
    assert uploads == ["canary-nightly-results"]


def test_nightly_updates_what_is_open_and_stays_quiet_on_old_breakage(
    repo, pushed, tmp_path, httpserver
):
    broken = [
        {**PASSED_LAST_NIGHT[0], "version": "1.1.0"},
        {**PASSED_LAST_NIGHT[1], "version": "1.1.0", "status": "fail"},
    ]
    serve_github(httpserver, baseline=last_night(broken), issue=None, pull=5)
    _, quiet = nightly(repo, tmp_path, httpserver)
    assert quiet.failed == [], quiet.failed
    assert quiet.outputs["compare"]["new-breakage"] == "false"
    assert not [c for c in calls(httpserver) if c[1].startswith(f"{API}/issues")]
    assert ("PATCH", f"{API}/pulls/5") in [(m, p) for m, p, _ in calls(httpserver)]

    httpserver.clear()
    serve_github(httpserver, baseline=last_night(PASSED_LAST_NIGHT), issue=3, pull=5)
    _, loud = nightly(repo, tmp_path, httpserver)
    assert loud.failed == ["Verdict"]
    made = [(m, p) for m, p, _ in calls(httpserver)]
    assert ("PATCH", f"{API}/issues/3") in made and ("POST", f"{API}/issues/3/comments") in made
    assert ("POST", f"{API}/issues") not in made


def test_github_faults_are_retried_when_safe_and_reported_when_not(
    repo, pushed, tmp_path, httpserver
):
    """A 502 on the artifact listing is retried; a 502 on opening the issue is not (a second
    POST could open a second issue): the step fails naming the call and the status."""
    httpserver.expect_oneshot_request(f"{API}/actions/artifacts").respond_with_data(
        "bad gateway", status=502
    )
    httpserver.expect_oneshot_request(f"{API}/issues", method="POST").respond_with_json(
        {"message": "Server Error"}, status=502
    )
    serve_github(httpserver, baseline=last_night(PASSED_LAST_NIGHT), issue=None, pull=None)
    _, run = nightly(repo, tmp_path, httpserver)
    made = [(m, p) for m, p, _ in calls(httpserver)]
    assert made.count(("GET", f"{API}/actions/artifacts")) == 2
    assert made.count(("POST", f"{API}/issues")) == 1
    assert run.failed == ["Compare with the previous run", "Verdict"], run.failed  # still red
    assert (
        f"::error::canary: POST {httpserver.url_for(API + '/issues')}: HTTP 502 Server Error"
        in run.stdout
    )
    assert "New upstream breakage since the previous nightly run" in run.stdout


def test_the_baseline_is_only_this_repositorys_own_nightly(
    tmp_path, httpserver, monkeypatch, capsys
):
    """Artifacts named like the nightly's, on a branch called main, newer than last night's, each
    saying "already red": a fork's pull request, this repository's own pull request, another
    workflow's push, and a run whose head is another repository. None is the baseline."""
    poisoned = last_night(
        [
            {**PASSED_LAST_NIGHT[0], "version": "1.1.0"},
            {**PASSED_LAST_NIGHT[1], "version": "1.1.0", "status": "fail"},
        ]
    )
    listing = [
        artifact(httpserver, 50, "2026-11-30T06:00:00Z", head_repository_id=999),
        artifact(httpserver, 51, "2026-11-30T06:01:00Z"),
        artifact(httpserver, 52, "2026-11-30T06:02:00Z"),
        artifact(httpserver, 53, "2026-11-30T06:03:00Z"),
        artifact(httpserver, 41, "2026-11-30T04:30:00Z"),
    ]
    runs = [
        workflow_run(50, event="pull_request", head_repository={"id": 999}),
        workflow_run(51, event="pull_request"),
        workflow_run(52, event="push", workflow_id=WORKFLOW_ID + 1),
        workflow_run(53, head_repository={"id": 999}),
        workflow_run(41),
    ]
    serve_runs(httpserver, runs, listing)
    for run in (50, 51, 52, 53):
        httpserver.expect_request(f"/blob/{run}.zip").respond_with_data(poisoned)
    serve_github(httpserver, baseline=last_night(PASSED_LAST_NIGHT), issue=None, pull=None)
    run = run_compare(tmp_path, httpserver, monkeypatch, capsys, tonight())

    assert run.outputs["new-breakage"] == "true"
    assert run.summary.startswith(
        f"Baseline: the results of run 41 (#11, schedule on main, 2026-11-30T04:30:00Z): "
        f"https://github.example/{REPOSITORY}/actions/runs/41."
    )
    fetched = [path for _, path, _ in calls(httpserver)]
    assert "/blob/41.zip" in fetched
    assert not {"/blob/50.zip", "/blob/51.zip", "/blob/52.zip", "/blob/53.zip"} & set(fetched)
    assert f"{API}/actions/runs/50" not in fetched  # refused from the listing alone
    assert "canary: not a baseline: run 51: started by pull_request" in run.stdout
    assert f"not a baseline: run 52: workflow {WORKFLOW_ID + 1}, not this one" in run.stdout
    assert "not a baseline: run 53: its head repository is 999, not this repository" in run.stdout
    issue = next(b for m, p, b in calls(httpserver) if (m, p) == ("POST", f"{API}/issues"))
    assert issue["body"].count("Baseline: the results of run 41") == 1


def test_no_own_run_means_no_baseline(tmp_path, httpserver, monkeypatch, capsys):
    """Another repository's artifact (a listing never holds one, but were it to) is not read."""
    listing = [artifact(httpserver, 50, "2026-11-30T06:00:00Z", repository_id=5)]
    serve_runs(httpserver, [], listing)
    httpserver.expect_request("/blob/50.zip").respond_with_data(last_night(PASSED_LAST_NIGHT))
    serve_issues_and_pulls(httpserver, issue=None, pull=None)
    run = run_compare(tmp_path, httpserver, monkeypatch, capsys, tonight())
    assert "::notice::No earlier nightly results" in run.stdout
    assert run.summary.startswith("Baseline: none")
    assert "/blob/50.zip" not in [path for _, path, _ in calls(httpserver)]
    assert run.outputs["new-breakage"] == "true"


@pytest.mark.parametrize("this_run_says", [{}, {"workflow_id": None}, {"workflow_id": "7"}])
def test_a_run_lacking_its_workflow_id_proves_no_baseline(
    tmp_path, httpserver, monkeypatch, capsys, this_run_says
):
    """Were this run's answer to lack `workflow_id`, a poisoned run lacking it too would match
    (None == None): no run is the baseline then, and the log says why."""
    run42 = {key: value for key, value in workflow_run(42).items() if key != "workflow_id"}
    httpserver.expect_request(f"{API}/actions/runs/42").respond_with_json(
        {**run42, **this_run_says}
    )
    poisoned = {key: value for key, value in workflow_run(41).items() if key != "workflow_id"}
    httpserver.expect_request(f"{API}/actions/runs/41").respond_with_json(poisoned)
    listing = [artifact(httpserver, 41, "2026-11-30T04:30:00Z")]
    httpserver.expect_request(f"{API}/actions/artifacts").respond_with_json(
        {"total_count": 1, "artifacts": listing}
    )
    httpserver.expect_request("/blob/41.zip").respond_with_data(last_night(PASSED_LAST_NIGHT))
    serve_issues_and_pulls(httpserver, issue=None, pull=None)
    run = run_compare(tmp_path, httpserver, monkeypatch, capsys, tonight())
    assert "canary: no baseline: run 42 names no workflow_id to match runs with" in run.stdout
    assert run.summary.startswith("Baseline: none")
    assert "/blob/41.zip" not in [path for _, path, _ in calls(httpserver)]


def bomb(size: int) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("results.json", b" " * size)
    return out.getvalue()


@pytest.mark.parametrize(
    ("limits", "message"),
    [
        ({"MAX_RESULTS": MiB}, f"results.json is {2 * MiB} bytes inflated, above the {MiB} byte"),
        ({"MAX_ARTIFACT": 1024}, "larger than the 1024 byte limit"),
    ],
)
def test_the_baseline_artifact_is_capped(tmp_path, httpserver, monkeypatch, limits, message):
    """A 2 KiB zip inflating to 2 MiB, with the caps lowered to show them (the defaults are in
    docs/guides/ci.md): neither the download nor the inflated file passes its cap."""
    for name, value in limits.items():
        monkeypatch.setattr(nightly_steps, name, value)
    for name, value in {
        "GITHUB_REPOSITORY_ID": str(REPOSITORY_ID),
        "GITHUB_RUN_ID": "42",
        "GITHUB_REF_NAME": "main",
        "RUNNER_TEMP": str(tmp_path),
    }.items():
        monkeypatch.setenv(name, value)
    serve_runs(httpserver, [workflow_run(41)], [artifact(httpserver, 41, "2026-11-30T04:30:00Z")])
    httpserver.expect_request("/blob/41.zip").respond_with_data(bomb(2 * MiB))
    api = GitHub(httpserver.url_for("/").rstrip("/"), REPOSITORY, "token")
    with pytest.raises(ActionError, match=re.escape(message)):
        nightly_steps.previous_results(api, "canary-nightly-results")
    assert not (tmp_path / "canary-action" / "previous.json").exists()


def huge_run(checks: int) -> str:
    """A night where `checks` checks broke on trl 1.1.0: markdown well above 1 MiB in parts of
    about 100 bytes, fewer than the baseline's line above the report."""
    results = [
        {"upstream": "trl", "check": f"c{n:05}", "version": version, "status": status}
        | ({"detail": "gone"} if status == "fail" else {})
        for n in range(checks)
        for version, status in (("1.0.0", "pass"), ("1.1.0", "fail"))
    ]
    return json.dumps({"results": results, "summary": {}, "stats": {}})


def test_the_nightly_summary_and_issue_stay_under_githubs_limits(
    tmp_path, httpserver, monkeypatch, capsys
):
    """Issue 29 item 3: the job summary (the baseline's line, then the report) under 1 MiB and
    the issue body under 65,536 characters, each cut at whole parts with a note naming where the
    full report is; no `<details>` left open, no word cut."""
    serve_github(httpserver, baseline=last_night(PASSED_LAST_NIGHT), issue=None, pull=None)
    written = run_compare(tmp_path, httpserver, monkeypatch, capsys, huge_run(10_000)).summary
    made = calls(httpserver)
    body = next(b for method, path, b in made if (method, path) == ("POST", f"{API}/issues"))
    assert written.startswith("Baseline: the results of run 41")
    assert len(written.encode()) <= SUMMARY_LIMIT
    assert len(body["body"]) <= nightly_steps.ISSUE_LIMIT
    for text in (written, body["body"]):
        assert text.count("<details>") == text.count("</details>")
        kept, note = text.rsplit("\n\n> **Truncated**: the last ", 1)
        assert "The full report is the run's uploaded results artifact" in note
        assert kept.rstrip().endswith(("</details>", "|", "`"))  # a whole row, item or block


HOSTILE_TYPE = "text/x; ##[stop-commands]pwn"


def test_index_text_is_no_workflow_command_in_the_log(repo, upstream, tmp_path):
    """The project page's Content-Type carries the legacy command form; a matrix file's name
    carries a new line and a command. The runner (a port of its parser) acts on canary's own
    commands only: the annotations, its group, its pauses."""
    page = upstream.routes["/simple/trl/"].body
    upstream.add("/simple/trl/", page, content_type=HOSTILE_TYPE)
    (repo / "canary" / "trl.yaml").rename(repo / "canary" / "x\n::add-mask::secret.yaml")
    _, run = action(repo, tmp_path, matrices="canary", versions="1.1.0")
    assert "unexpected content type" in run.stdout
    assert "x\\n::add-mask::secret.yaml" in run.stdout  # the plan's list, escaped
    acted = own(acted_on(run.stdout))
    assert acted and {c.name for c in acted} == {"error", "group", "endgroup"}, acted
    assert all(c.data.startswith(("canary", "error: ")) or c.name != "error" for c in acted)


def test_the_outputs_count_checks_and_results_apart(repo, tmp_path):
    """compute-loss asks for a parameter no release has (red on both), and
    disable-gradient-checkpointing breaks in 1.1.0: 2 checks red over 3 results."""
    matrix = repo / "canary" / "trl.yaml"
    matrix.write_text(MATRIX.replace("num_items_in_batch]", "num_items_in_batch, no_such]"))
    _, run = action(repo, tmp_path, **{"matrices": "canary", "versions": "1.0.0,1.1.0"})
    outputs = run.outputs["check"]
    assert (outputs["fail-checks"], outputs["fail-results"], outputs["fail"]) == ("2", "3", "3")
    assert (outputs["error-checks"], outputs["error-results"], outputs["error"]) == ("0", "0", "0")
    declared = yaml.safe_load(ACTION.read_text())["outputs"]
    for name in ("fail-checks", "fail-results", "error-checks", "error-results"):
        assert declared[name]["value"] == f"${{{{ steps.check.outputs.{name} }}}}"
