"""What changed since a baseline run: the nightly's "new since yesterday".

Cells are matched on (upstream, check, version). A red cell (fail or error) is new when the
baseline has that cell not red or has no such cell (a new release, a new check). A fix is a
cell red in the baseline and present but not red now. Versions only one side has are listed.
Upcoming reds (red only ahead of the releases) are said apart: per upstream and version, how
many checks break there and since when, then those new tonight.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from canary.engine.outcomes import Result, RunReport
from canary.engine.upcoming import Key, upcoming_json, upcoming_keys
from canary.reports.faults import short_cause, split_faults
from canary.reports.grid import build_grids, order_versions, plural, spans_text
from canary.reports.markdown import code_span
from canary.reports.text import checks_line


@dataclass
class Drift:
    #: (now, before or None when the baseline has no such cell), released reds
    new_failures: list[tuple[Result, Result | None]] = field(default_factory=list)
    #: the same for upcoming reds (canary.engine.upcoming: red only ahead of the releases)
    new_upcoming: list[tuple[Result, Result | None]] = field(default_factory=list)
    #: every upcoming red of the new run, per upstream and version: "trl main breaks 2
    #: checks since 2026-12-05"
    ahead: list[str] = field(default_factory=list)
    #: (now, before)
    fixed: list[tuple[Result, Result]] = field(default_factory=list)
    new_versions: dict[str, list[str]] = field(default_factory=dict)
    gone_versions: dict[str, list[str]] = field(default_factory=dict)
    #: each upstream's version order in the new run, to compress versions into spans
    order: dict[str, list[str]] = field(default_factory=dict)


def _cells(report: RunReport) -> dict[Key, Result]:
    return {(r.upstream, r.check, r.version): r for r in report.results}


def _versions(report: RunReport) -> dict[str, list[str]]:
    return {grid.name: grid.versions for grid in build_grids(report)}


def drift(new: RunReport, baseline: RunReport) -> Drift:
    now, before = _cells(new), _cells(baseline)
    now_versions, old_versions = _versions(new), _versions(baseline)
    out = Drift(order=now_versions, ahead=ahead_lines(new))
    upcoming = upcoming_keys(new)
    for key, result in now.items():
        old = before.get(key)
        if result.status.is_red and (old is None or not old.status.is_red):
            (out.new_upcoming if key in upcoming else out.new_failures).append((result, old))
        elif old is not None and old.status.is_red and not result.status.is_red:
            out.fixed.append((result, old))
    for name in dict.fromkeys([*now_versions, *old_versions]):
        fresh, stale = now_versions.get(name, []), old_versions.get(name, [])
        if added := [v for v in fresh if v not in stale]:
            out.new_versions[name] = added
        if gone := [v for v in stale if v not in fresh]:
            out.gone_versions[name] = gone
    return out


def ahead_lines(report: RunReport) -> list[str]:
    """Per upstream and version ahead of the releases, how many checks break there and since
    when: "trl main breaks 2 checks since 2026-12-05" (the earliest date of them)."""
    groups: dict[tuple[str, str], list[str]] = {}
    for entry in upcoming_json(report):
        for version in entry["versions"]:
            groups.setdefault((entry["upstream"], version), []).append(entry["since"])
    return [
        f"{upstream} {version} breaks {plural(len(dates), 'check')}"
        + (f" since {min(dates)}" if any(dates) else "")
        for (upstream, version), dates in groups.items()
    ]


def drift_json(found: Drift) -> dict[str, object]:
    """The drift for automation: one entry per check x version, `was` the baseline's status
    ("absent" for a cell it did not have)."""

    def cells(pairs: list[tuple[Result, Result | None]]) -> list[dict[str, str]]:
        return [
            {**now.to_json(), "was": old.status.value if old else "absent"} for now, old in pairs
        ]

    return {
        "new_red": cells(found.new_failures),
        "new_upcoming": cells(found.new_upcoming),
        "recovered": cells(list(found.fixed)),
        "new_versions": found.new_versions,
        "gone_versions": found.gone_versions,
    }


def _red_side(now: Result, old: Result | None) -> Result:
    """What fails now, or what failed before a fix."""
    return now if now.status.is_red or old is None else old


def _grouped(pairs: list[tuple[Result, Result | None]], order: dict[str, list[str]]) -> list[str]:
    """One line per (upstream, check, before, now, detail), versions compressed into spans,
    the detail the red side's; then one line per source that could not be read (on the red
    side), as every report says it: its cause, the checks it left unjudged, the URL that failed
    (not urllib3's message again for each check)."""
    unread: list[Result] = []
    groups: dict[tuple[str, str, str, str, str], list[str]] = {}
    for now, old in pairs:
        red = _red_side(now, old)
        if short_cause(red):
            unread.append(red)
            continue
        detail = red.detail
        was = old.status.value if old else "absent"
        key = (now.upstream, now.check, was, now.status.value, detail)
        groups.setdefault(key, []).append(now.version)
    lines = []
    for (upstream, check, was, status, detail), versions in groups.items():
        where = spans_text(versions, order.get(upstream) or order_versions(versions))
        lines.append(f"{upstream}::{check}[{where}] {was} → {status}: {detail or '(no detail)'}")
    faults, _ = split_faults(RunReport(unread, {}, {}))
    return lines + [fault.line(order) for fault in faults]


def _sections(found: Drift) -> list[tuple[str, str, list[str]]]:
    """(title, count, lines): cells counted as checks and results apart, versions as such."""

    def listed(versions: dict[str, list[str]]) -> list[str]:
        return [f"{name}: {', '.join(vs)}" for name, vs in versions.items()]

    def counted(pairs: list[tuple[Result, Result | None]]) -> str:
        return checks_line(now for now, _ in pairs) or "none"

    def versions(listing: dict[str, list[str]]) -> str:
        return str(sum(map(len, listing.values())) or "none")

    ahead = [f"new: {line}" for line in _grouped(found.new_upcoming, found.order)]
    return [
        ("Newly failing", counted(found.new_failures), _grouped(found.new_failures, found.order)),
        ("Upcoming", "; ".join(found.ahead) or "none", ahead),
        ("Fixed", counted(list(found.fixed)), _grouped(list(found.fixed), found.order)),
        ("New versions", versions(found.new_versions), listed(found.new_versions)),
        ("Gone versions", versions(found.gone_versions), listed(found.gone_versions)),
    ]


def render_drift(found: Drift, fmt: str = "markdown") -> str:
    """The lists as markdown (job summary) or text (logs); empty lists are said, not hidden."""
    if fmt == "text":
        lines = ["canary: changes since the baseline"]
        for title, count, items in _sections(found):
            lines.append(f"{title}: {count}")
            lines += [f"  {item}" for item in items]
        return "\n".join(lines) + "\n"
    return "\n".join(drift_parts(found)) + "\n"


def drift_parts(found: Drift) -> list[str]:
    """The markdown rendering as parts, so `canary report` can cap it with the grid below it."""
    parts = ["## New since the baseline"]
    for title, count, items in _sections(found):
        parts.append(f"\n**{title}**: {count}\n")
        parts += [f"- {code_span(item)}" for item in items]
    return parts
