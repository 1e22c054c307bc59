"""The nightly's steps: compare with the previous night, one issue on new breakage, one pull
request when the locks moved.

The previous night's results are the newest unexpired results artifact of an earlier run of
this workflow, made by this repository itself on the same branch (see `previous_results`); the
first night finds none and every failure counts as new. A contract that stays
broken is reported once: the issue is opened or updated only when something turned red.
"""

from __future__ import annotations

import io
import subprocess
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from canary.action.rest import GitHub
from canary.action.runner import (
    ActionError,
    add_summary,
    command,
    environment,
    set_output,
    text_input,
    work_dir,
)
from canary.action.steps import artifact_name, lock_files, matrix_files, render, results_path
from canary.engine.upcoming import carry_since
from canary.reports.command import read_report
from canary.reports.drift import drift
from canary.reports.jsonio import ReportError, to_json
from canary.reports.markdown import SUMMARY_LIMIT
from canary.settings import Settings
from canary.sources.limits import MiB

if TYPE_CHECKING:
    from canary.matrix.model import Matrix

ISSUE_TITLE = "canary: new upstream breakage"
PR_TITLE = "canary: refresh the version locks"
#: GitHub refuses issue bodies above 65,536 characters; the body is kept under as many bytes
#: (never fewer than its characters), cut at whole table rows and blocks, with a note
ISSUE_LIMIT = 65_536
BOT = ("github-actions[bot]", "41898282+github-actions[bot]@users.noreply.github.com")
#: the runs whose results may be the baseline: started by a push, the schedule or a person with
#: write access (*Run workflow*); never a pull request's, whose code and results its author wrote
TRUSTED_EVENTS = frozenset({"push", "schedule", "workflow_dispatch"})
#: artifacts looked at, newest first, before the night counts as having no baseline
MAX_CANDIDATES = 20
#: new breaks whose upstream commit is named in one night: each costs about four API
#: requests (two refs, a comparison page, the pull request) and log2(commits) raw reads
MAX_NAMED = 20
#: largest artifact zip downloaded, and largest results.json inflated from it
MAX_ARTIFACT = 64 * MiB
MAX_RESULTS = 256 * MiB


@dataclass(frozen=True)
class Baseline:
    """The previous night's results file and the run that uploaded it."""

    path: Path
    run: dict[str, Any]

    def named(self) -> str:
        """The run, as the job summary names it: number, event, branch, when, link."""
        run = self.run
        return (
            f"run {run.get('id')} (#{run.get('run_number')}, {run.get('event')} on "
            f"{run.get('head_branch')}, {run.get('created_at')}): {run.get('html_url')}"
        )


def github() -> GitHub:
    return GitHub(
        environment("GITHUB_API_URL"),
        environment("GITHUB_REPOSITORY"),
        text_input("token"),
        Settings.from_environment().retry_backoff,
    )


def run_url() -> str:
    return "{}/{}/actions/runs/{}".format(
        environment("GITHUB_SERVER_URL"),
        environment("GITHUB_REPOSITORY"),
        environment("GITHUB_RUN_ID"),
    )


def previous_results(api: GitHub, artifact: str) -> Baseline | None:
    """The newest unexpired `artifact` of an earlier run that this repository made itself.

    An artifact's name proves nothing: a fork's pull-request run can upload one named like the
    nightly's on a branch it calls `main`, and a baseline saying "already red" would hide
    tonight's breakage (and the night after compares with the poisoned night's own upload). So
    the run must be of this repository and its own head (`repository_id`, `head_repository_id`
    and `GITHUB_REPOSITORY_ID`), of this workflow (`workflow_id`, read from this run), on this
    branch, started by a push, the schedule or a person (`TRUSTED_EVENTS`).
    """
    repository = int(environment("GITHUB_REPOSITORY_ID"))
    this_run, branch = int(environment("GITHUB_RUN_ID")), environment("GITHUB_REF_NAME")
    workflow = api.call("GET", f"/actions/runs/{this_run}").get("workflow_id")
    if not isinstance(workflow, int):  # then a run lacking the field would be "this workflow"
        print(f"canary: no baseline: run {this_run} names no workflow_id to match runs with")
        return None
    listing = api.call("GET", "/actions/artifacts", params={"name": artifact, "per_page": 100})
    candidates = [
        a
        for a in listing.get("artifacts", [])
        if a.get("name") == artifact
        and not a.get("expired")
        and _own(a.get("workflow_run") or {}, repository, "repository_id", "head_repository_id")
        and a["workflow_run"].get("id") != this_run
        and a["workflow_run"].get("head_branch") == branch
    ]
    candidates.sort(key=lambda a: str(a.get("created_at", "")), reverse=True)
    for candidate in candidates[:MAX_CANDIDATES]:
        run = api.call("GET", f"/actions/runs/{int(candidate['workflow_run']['id'])}")
        why = _refused(run, repository, workflow, branch)
        if why:
            print(f"canary: not a baseline: run {run.get('id')}: {why}")
            continue
        return Baseline(_unpacked(api, candidate, artifact), run)
    return None


def _own(run: dict[str, Any], repository: int, *keys: str) -> bool:
    return all(isinstance(run.get(k), int) and run[k] == repository for k in keys)


def _refused(run: dict[str, Any], repository: int, workflow: int, branch: str) -> str:
    """Why a run's results cannot be the baseline; empty when they can."""
    repos = {
        "repository": (run.get("repository") or {}).get("id"),
        "head repository": (run.get("head_repository") or {}).get("id"),
    }
    for what, found in repos.items():
        if found != repository:
            return f"its {what} is {found}, not this repository ({repository})"
    if not isinstance(run.get("workflow_id"), int) or run["workflow_id"] != workflow:
        return f"workflow {run.get('workflow_id')}, not this one ({workflow})"
    if run.get("event") not in TRUSTED_EVENTS:
        return f"started by {run.get('event')}"
    if run.get("head_branch") != branch:
        return f"branch {run.get('head_branch')}"
    return ""


def _unpacked(api: GitHub, artifact: dict[str, Any], name: str) -> Path:
    """results.json out of the artifact's zip, both capped (a small zip can inflate a lot)."""
    run = int(artifact["workflow_run"]["id"])
    data = api.download(artifact["archive_download_url"], MAX_ARTIFACT)
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            info = archive.getinfo(results_path().name)
            if info.file_size > MAX_RESULTS:
                raise ActionError(
                    f"artifact {name} of run {run}: results.json is {info.file_size} bytes "
                    f"inflated, above the {MAX_RESULTS} byte limit"
                )
            with archive.open(info) as member:
                content = member.read(MAX_RESULTS + 1)
    except (zipfile.BadZipFile, KeyError, NotImplementedError, OSError, EOFError) as exc:
        raise ActionError(f"artifact {name} of run {run}: {exc}") from None
    if len(content) > MAX_RESULTS:
        raise ActionError(
            f"artifact {name} of run {run}: results.json inflates above the {MAX_RESULTS} "
            "byte limit"
        )
    target = work_dir() / "previous.json"
    target.write_bytes(content)
    return target


def compare() -> None:
    """Write which run is the baseline, what changed and the grid to the summary; on new
    breakage, the issue."""
    api = github()
    baseline = previous_results(api, artifact_name())
    if baseline is None:
        command("notice", "No earlier nightly results: every failure tonight counts as new.")
        used = "Baseline: none (no earlier results of this workflow's own runs on this branch)."
    else:
        print(f"canary: baseline: results of {baseline.named()}")
        used = f"Baseline: the results of {baseline.named()}."
    path = baseline.path if baseline else None
    follow_up(path)
    head = f"{used}\n\n"
    report = render(results_path(), "markdown", path, limit=SUMMARY_LIMIT - len(head.encode()))
    add_summary(head + report)
    new = new_breakage(path)
    set_output("new-breakage", "true" if new else "false")
    if new:
        intro = issue_intro(used)
        room = ISSUE_LIMIT - len(intro.encode())
        open_or_update_issue(api, intro + render(results_path(), "markdown", path, limit=room))


def new_breakage(baseline: Path | None) -> bool:
    """Red tonight and not red in the baseline (released or upcoming); without one, anything
    red."""
    try:
        now = read_report(str(results_path()))
        if baseline is None:
            return any(result.status.is_red for result in now.results)
        found = drift(now, read_report(str(baseline)))
        return bool(found.new_failures or found.new_upcoming)
    except ReportError as exc:
        raise ActionError(str(exc)) from None


def follow_up(baseline: Path | None) -> None:
    """Tonight's results, before they are uploaded, get the commit each branch was judged at
    (so a break on it tomorrow is bisected from there), and what the baseline knew and what is
    new tonight: the date each upcoming red was first seen (so the issue says "since" the night
    it turned red, and the next night reads it back), the commits named for transitions that
    are still the same, and the upstream commit of each new break (canary.engine.culprit), at
    most MAX_NAMED a night; one that cannot be named or recorded is a warning saying why."""
    from canary.engine.culprit import Culprits, carry_broken_by, name_breaks, record_commits
    from canary.engine.upcoming import key
    from canary.sources.context import SourceContext

    try:
        now = read_report(str(results_path()))
        before = read_report(str(baseline)) if baseline is not None else None
    except ReportError as exc:
        raise ActionError(str(exc)) from None
    new: set[tuple[str, str, str]] = set()
    if before is not None:
        carry_since(now, before)
        carry_broken_by(now, before)
        found = drift(now, before)
        new = {key(result) for result, _ in [*found.new_failures, *found.new_upcoming]}
    if new or any(info.branches for info in now.upstreams.values()):
        matrices = _matrices("branches' commits not recorded, new breaks' changes not named")
        with SourceContext() as context:
            culprits = Culprits(context)
            for line in record_commits(now, matrices, culprits):
                command("warning", f"canary: {line}")
            unnamed = name_breaks(
                now,
                matrices,
                culprits,
                lambda result: key(result) in new and result.broken_by is None,
                MAX_NAMED,
                before,
            )
        for line in unnamed:
            command("warning", f"canary: the upstream change that broke {line}")
    results_path().write_text(to_json(now), encoding="utf-8")


def _matrices(otherwise: str) -> list[Matrix]:
    """The run's matrices; none (with a warning saying `otherwise`) when one cannot be read."""
    from canary.matrix.model import MatrixError, load_matrix

    try:
        return [load_matrix(path) for path in matrix_files()]
    except (ActionError, MatrixError) as exc:
        command("warning", f"canary: {otherwise}: {exc}")
        return []


def issue_intro(used: str) -> str:
    """The issue's first lines: which run found it, against which baseline."""
    return (
        f"The nightly canary run {run_url()} found contracts that broke since the run before."
        f"\n\n{used}\n\n"
    )


def open_or_update_issue(api: GitHub, body: str) -> None:
    label = text_input("issue-label", "canary-nightly")
    api.call(
        "POST",
        "/labels",
        ok=(422,),  # it exists already
        json={
            "name": label,
            "color": "D93F0B",
            "description": "Upstream contract broken, found by the nightly canary",
        },
    )
    issues = api.call("GET", "/issues", params={"labels": label, "state": "open", "per_page": 100})
    mine = [i for i in issues if i["title"] == ISSUE_TITLE and "pull_request" not in i]
    if mine:
        number = mine[0]["number"]
        api.call("PATCH", f"/issues/{number}", json={"body": body})
        api.call(
            "POST",
            f"/issues/{number}/comments",
            json={"body": f"New breakage again in {run_url()}; the issue text now lists it."},
        )
        print(f"canary: updated issue #{number}")
    else:
        created = api.call(
            "POST", "/issues", json={"title": ISSUE_TITLE, "body": body, "labels": [label]}
        )
        print(f"canary: opened issue #{created['number']}")


def git(*args: str) -> str:
    done = subprocess.run(["git", *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise ActionError(f"git {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout


def propose_locks() -> None:
    """Commit the moved locks on one branch, force-push it, open or update one pull request."""
    api = github()
    branch = text_input("locks-branch", "canary/refresh-locks")
    base = environment("GITHUB_REF_NAME")
    summary = (work_dir() / "lock-summary.md").read_text(encoding="utf-8")
    locks = [str(path) for path in lock_files(matrix_files()) if path.is_file()]
    git("switch", "-C", branch)
    git("add", "--", *locks)
    git(
        "-c",
        f"user.name={BOT[0]}",
        "-c",
        f"user.email={BOT[1]}",
        "commit",
        "-q",
        "-m",
        f"{PR_TITLE}\n\n{summary}",
    )
    git("push", "--force", "origin", f"HEAD:refs/heads/{branch}")
    owner = environment("GITHUB_REPOSITORY").split("/")[0]
    pulls = api.call("GET", "/pulls", params={"head": f"{owner}:{branch}", "state": "open"})
    if pulls:
        api.call("PATCH", f"/pulls/{pulls[0]['number']}", json={"body": summary})
        print(f"canary: updated pull request #{pulls[0]['number']}")
    else:
        created = api.call(
            "POST",
            "/pulls",
            json={"title": PR_TITLE, "head": branch, "base": base, "body": summary},
        )
        print(f"canary: opened pull request #{created['number']}")
