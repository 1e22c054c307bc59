"""`canary explain`'s output: one check's verdicts per version as ranges, where it broke, what
its subject became, the upstream's compare link and the subject's unified diff, as text or JSON.

The diff and the subject's name and path are upstream text: shown escaped, as every report
shows a result's diff (canary.safety.untrusted), so none of it acts on a terminal or a CI log.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from canary.engine.became import Explanation, SubjectText
from canary.engine.outcomes import Place, Result, Status
from canary.reports.grid import runs, span_text
from canary.reports.text import label
from canary.reports.transition import became_lines, transition_line
from canary.safety.untrusted import showable, showable_lines


@dataclass(frozen=True)
class CheckStory:
    """Everything `canary explain` says of one check."""

    id: str  # upstream::check
    matrix: str
    line: int
    why: str
    row: list[Result]  # in version order
    transition: Result | None  # the latest transition's first failing result
    explanation: Explanation | None
    compare: str  # the upstream's compare link, "" without `github`
    #: why the commit that broke it was asked for (`--commit`) and not named; the commit
    #: itself is the transition's `broken_by`
    unnamed: str = ""


def verdict_runs(row: list[Result]) -> list[dict]:
    """Consecutive versions sharing a status, each with the detail of its first version."""
    out = []
    at = 0
    for run in runs(row):
        first = row[at]
        at += len(run.versions)
        out.append(
            {
                "status": run.status.value,
                "first": run.first,
                "last": run.last,
                "versions": len(run.versions),
                "detail": first.detail,
            }
        )
    return out


def _never(story: CheckStory) -> str:
    statuses = {r.status for r in story.row}
    unread = sum(r.status is Status.ERROR for r in story.row)
    if unread:
        versions = "1 version" if unread == 1 else f"{unread} versions"
        return f"{versions} could not be read: where it broke is not known"
    if statuses & {Status.FAIL, Status.WARN} and not statuses & {Status.PASS, Status.XPASS}:
        return "it never held on a version checked: there is no last good version to compare"
    if not statuses & {Status.FAIL, Status.WARN}:
        return "it never failed on a version checked"
    return "it failed only where no earlier version held it"


def _subject(subject: SubjectText | None) -> dict | None:
    if subject is None:
        return None
    end = subject.start + max(0, len(subject.text.splitlines()) - 1)
    name, path = showable(subject.name), showable(subject.path)
    return {"name": name, "path": path, "start": subject.start, "end": end}


def story_json(story: CheckStory) -> str:
    data: dict = {
        "check": story.id,
        "matrix": story.matrix,
        "line": story.line,
        "why": story.why,
        "verdicts": verdict_runs(story.row),
        "transition": None,
    }
    if story.transition is None:
        data["note"] = _never(story)
    else:
        found = story.transition
        data["transition"] = {"last_pass": found.last_pass, "first_fail": found.first_fail}
        if found.broken_by is not None:
            data["broken_by"] = found.broken_by.to_json()
        if story.unnamed:
            data["broken_by_error"] = story.unnamed
        explanation = story.explanation
        if explanation is not None:
            if explanation.became is not None:
                data[explanation.became.key] = explanation.became.to_json()
            data["advice"] = [
                {**place.to_json(), "version": found.last_pass} for place in explanation.advice
            ]
            data["old"] = _subject(explanation.old)
            data["new"] = _subject(explanation.new)
            data["diff"] = showable_lines(explanation.diff)
        data["compare"] = story.compare
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def advice_line(place: Place, version: str) -> str:
    """`upstream said: MESSAGE (PATH:LINE, VERSION)`: the message as upstream wrote it."""
    return f"upstream said: {place.text} ({place.path}:{place.line}, {version})"


def _side(subject: SubjectText | None, version: str) -> str:
    if subject is None:
        return f"nothing ({version})"
    where = _subject(subject)
    assert where is not None
    return f"{where['path']}:{where['start']}-{where['end']} ({version})"


def story_text(story: CheckStory) -> str:
    lines = [f"{story.id}  ({story.matrix}:{story.line})"]
    if story.why:
        lines.append(f"  why: {story.why}")
    lines.append("verdicts:")
    for run in verdict_runs(story.row):
        span = span_text((run["first"], run["last"]))
        text = f"  {label(Status(run['status']))} {span}"
        lines.append(f"{text}  {run['detail']}" if run["detail"] else text)
    found = story.transition
    if found is None:
        lines.append(_never(story))
        return "\n".join(lines) + "\n"
    lines.append(transition_line(found))
    if found.broken_by is not None:  # named on request (`--commit`)
        from canary.reports.transition import broken_by_line

        lines.append(broken_by_line(found))
    if story.unnamed:
        lines.append(f"broken by: not named: {story.unnamed}")
    explanation = story.explanation
    if explanation is not None:  # upstream's own word first, then canary's guesses
        lines += [advice_line(place, found.last_pass) for place in explanation.advice]
    if explanation is not None and explanation.became is not None:
        lines += became_lines(explanation.became, found.first_fail)
    lines.append(
        f"compare: {story.compare}" if story.compare else "compare: the matrix names no `github`"
    )
    if explanation is not None:
        name = (explanation.old or explanation.new or SubjectText("the subject", "", 1, "")).name
        lines.append(
            f"diff of {showable(name)}: {_side(explanation.old, found.last_pass)} -> "
            f"{_side(explanation.new, found.first_fail)}"
        )
        lines.append(
            showable_lines(explanation.diff) or "(the subject's source is the same in both)"
        )
    return "\n".join(lines) + "\n"
