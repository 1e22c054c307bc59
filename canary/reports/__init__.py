"""Render a RunReport in the formats `canary check --format` and `canary report` offer."""

from __future__ import annotations

import json

from canary.outcomes import RunReport, Status, summarize

FORMATS = ("text", "json")


def to_json(report: RunReport) -> str:
    stats = {"requests": 0, "bytes_downloaded": 0, "cache_hits": 0, "seconds": 0.0}
    stats.update(report.stats)
    data = {
        "results": [r.to_json() for r in report.results],
        "summary": summarize(report.results),
        "stats": stats,
    }
    return json.dumps(data, indent=1)


def to_text(report: RunReport) -> str:
    lines = [
        f"{r.status.value.upper():5} {r.upstream}::{r.check}[{r.version}] {r.detail}".rstrip()
        for r in report.results
        if r.status is not Status.PASS
    ]
    counts = summarize(report.results)
    lines.append(", ".join(f"{n} {s}" for s, n in counts.items() if n) or "no results")
    return "\n".join(lines) + "\n"


def render(fmt: str, report: RunReport, *, width: int | None = None, color: bool = False) -> str:
    if fmt == "json":
        return to_json(report) + "\n"
    return to_text(report)
