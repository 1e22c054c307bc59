"""The lines every renderer prints under a failure that broke a check which held before: the
transition (`broke in 1.14.0 (held on 1.13.0)`), what the subject became there, and the
subject's diff, bounded for the formats that are read in a browser or an issue.

Renderers hand over the results of one finding (a check's versions that share a status and
detail) and format what comes back their own way; the words are said here once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from canary.engine.outcomes import Became, Place, Result
from canary.reports.grid import is_release

#: the diff lines a markdown summary or an issue shows of one transition
SHORT_DIFF_LINES = 60


@dataclass(frozen=True)
class Explained:
    """What one transition adds to a finding."""

    result: Result  # the first failing result, which carries it

    @property
    def transition(self) -> str:
        return transition_line(self.result)

    @property
    def became(self) -> list[str]:
        if self.result.became is None:
            return []
        return became_lines(self.result.became, self.result.first_fail)

    @property
    def lines(self) -> list[str]:
        culprit = [broken_by_line(self.result)] if self.result.broken_by else []
        return [self.transition, *culprit, *self.became]

    @property
    def diff_title(self) -> str:
        count = len(self.result.diff.splitlines())
        last, first = self.result.last_pass, self.result.first_fail
        return f"diff of the subject, {last} to {first} ({count} lines)"


def explained(results: Iterable[Result]) -> list[Explained]:
    """The transitions that start among `results` (a finding's), in their order."""
    return [Explained(r) for r in results if r.first_fail and r.first_fail == r.version]


def failure_lines(result: Result, told: Result | None) -> list[str]:
    """What a report of one result (a pytest failure) says under its detail: the transition
    it belongs to, what the subject became as `told` (the run's first failing result) says,
    and where the diff is."""
    if not result.first_fail:
        return []
    lines = [transition_line(result)]
    if told is not None and told.became is not None:
        lines += became_lines(told.became, told.first_fail)
    if told is not None and told.diff:
        lines.append(f"the diff: canary explain {result.upstream}::{result.check}")
    return lines


def why_lines(why: str) -> list[str]:
    """A failure's `why` (what of the downstream needs the contract), as its own line."""
    return [f"why: {why}"] if why else []


def transition_line(result: Result) -> str:
    return f"broke in {result.first_fail} (held on {result.last_pass})"


def broken_by_line(result: Result) -> str:
    """The upstream change that broke it: `broken on trl main by 1a2b3c4 (#1234 'Remove
    deprecated ...'), 2026-07-02` (`broken in 1.14.0 by ...` for a release)."""
    found = result.broken_by
    if found is None:
        return ""
    where = (
        f"in {result.first_fail}"
        if is_release(result.first_fail)
        else f"on {result.upstream} {result.first_fail}"
    )
    carried = f"#{found.pull} {found.pull_title!r}" if found.pull else repr(found.title)
    line = f"broken {where} by {found.commit[:7]} ({carried}), {found.date[:10]}"
    if found.unsure:
        line += f" (or one of the {found.unsure} commits before it that could not be judged)"
    return line


def _at(place: Place) -> str:
    return f"{place.path}:{place.line}" if place.path else ""


def became_lines(became: Became, version: str) -> list[str]:
    """What the subject became on `version`, one line per place found."""
    places = became.places
    if became.what == "line":
        if not places:
            return [f"closest in {version}: the subject's source no longer has anything like it"]
        return [f"closest in {version}: {_at(p)}: {p.text}" for p in places]
    if became.what == "parameter":
        if not places:
            return [f"in {version} the subject has no new parameter that could be its rename"]
        added = ", ".join(f"{p.text} ({_at(p)})" for p in places)
        return [f"parameters added in {version} (the likely rename): {added}"]
    if not places:
        return [f"defined nowhere in {version} ({became.searched} modules read): no successor"]
    return [f"moved to {p.text} in {version} ({_at(p)})" for p in places]


def short_diff(diff: str, limit: int = SHORT_DIFF_LINES) -> tuple[str, str]:
    """At most `limit` lines of a diff, and a note saying what was cut ("" when nothing)."""
    lines = diff.splitlines()
    if len(lines) <= limit:
        return diff, ""
    note = f"diff cut at {limit} of {len(lines)} lines; `canary explain` shows all of it"
    return "\n".join(lines[:limit]), note


def fence(text: str) -> str:
    """A markdown code fence longer than any run of backticks in `text`."""
    longest, run = 0, 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    return "`" * max(3, longest + 1)


def markdown_notes(results: Iterable[Result], escape: Callable[[str], str]) -> list[str]:
    """Sub-items of a markdown finding: the transition, what it became, the diff folded
    (at most SHORT_DIFF_LINES lines, with a note when cut)."""
    lines = []
    for item in explained(results):
        lines += [f"  - {escape(line)}" for line in item.lines]
        if item.result.diff:
            diff, note = short_diff(item.result.diff)
            mark = fence(diff)
            lines += [
                f"\n  <details><summary>{escape(item.diff_title)}</summary>\n",
                f"  {mark}diff",
                *(f"  {line}" for line in diff.splitlines()),
                f"  {mark}",
                *([f"\n  {escape(note)}"] if note else []),
                "\n  </details>\n",
            ]
    return lines


def html_diff(item: Explained, escape: Callable[[str], str]) -> str:
    """The diff of one transition, folded (`canary explain` shows it unbounded)."""
    if not item.result.diff:
        return ""
    return (
        f"<details><summary>{escape(item.diff_title)}</summary>"
        f"<pre>{escape(item.result.diff)}</pre></details>"
    )
