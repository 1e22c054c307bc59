"""The nightly's steps: compare with the previous night, one issue on new breakage, one pull
request when the locks moved.

The previous night's results are the newest unexpired results artifact of another run on the
same branch; the first night finds none and every failure counts as new. A contract that stays
broken is reported once: the issue is opened or updated only when something turned red.
"""

from __future__ import annotations

import io
import subprocess
import zipfile
from pathlib import Path

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
from canary.reports.command import read_report
from canary.reports.drift import drift
from canary.reports.jsonio import ReportError

ISSUE_TITLE = "canary: new upstream breakage"
PR_TITLE = "canary: refresh the version locks"
BODY_LIMIT = 60_000  # GitHub refuses issue bodies above 65,536 characters
BOT = ("github-actions[bot]", "41898282+github-actions[bot]@users.noreply.github.com")


def github() -> GitHub:
    return GitHub(
        environment("GITHUB_API_URL"), environment("GITHUB_REPOSITORY"), text_input("token")
    )


def run_url() -> str:
    return "{}/{}/actions/runs/{}".format(
        environment("GITHUB_SERVER_URL"),
        environment("GITHUB_REPOSITORY"),
        environment("GITHUB_RUN_ID"),
    )


def previous_results(api: GitHub, artifact: str) -> Path | None:
    listing = api.call("GET", "/actions/artifacts", params={"name": artifact, "per_page": 100})
    this_run, branch = int(environment("GITHUB_RUN_ID")), environment("GITHUB_REF_NAME")
    earlier = [
        a
        for a in listing.get("artifacts", [])
        if not a.get("expired")
        and a.get("workflow_run", {}).get("id") != this_run
        and a.get("workflow_run", {}).get("head_branch") == branch
    ]
    if not earlier:
        return None
    newest = max(earlier, key=lambda a: a["created_at"])
    data = api.download(newest["archive_download_url"])
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            content = archive.read(results_path().name)
    except (zipfile.BadZipFile, KeyError) as exc:
        raise ActionError(
            f"artifact {artifact} of run {newest['workflow_run']['id']}: {exc}"
        ) from None
    target = work_dir() / "previous.json"
    target.write_bytes(content)
    print(f"canary: baseline: results of run {newest['workflow_run']['id']}")
    return target


def compare() -> None:
    """Write what changed and the grid to the summary; on new breakage, the issue."""
    api = github()
    baseline = previous_results(api, artifact_name())
    if baseline is None:
        command("notice", "No earlier nightly results: every failure tonight counts as new.")
    report = render(results_path(), "markdown", baseline)
    add_summary(report)
    new = new_breakage(baseline)
    set_output("new-breakage", "true" if new else "false")
    if new:
        open_or_update_issue(api, report)


def new_breakage(baseline: Path | None) -> bool:
    """Red tonight and not red in the baseline; without one, anything red."""
    try:
        now = read_report(str(results_path()))
        if baseline is None:
            return any(result.status.is_red for result in now.results)
        return bool(drift(now, read_report(str(baseline))).new_failures)
    except ReportError as exc:
        raise ActionError(str(exc)) from None


def open_or_update_issue(api: GitHub, report: str) -> None:
    label = text_input("issue-label", "canary-nightly")
    body = (
        f"The nightly canary run {run_url()} found contracts that broke since the run before.\n\n"
        + report[:BODY_LIMIT]
    )
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
