"""Builds RunReports from compact grids for the report tests (no tests of its own).

A row is a string with one glyph per version: . pass, F fail, s skip, x xfail, X xpass,
W warn, E error, and a space for "no result". Details are "<check> is <status>", so cells of
one status in one row share a detail (as real details often do).
"""

from __future__ import annotations

import dataclasses

from canary.engine.outcomes import Result, RunReport, Status, UpstreamInfo

GLYPHS = {
    ".": Status.PASS,
    "F": Status.FAIL,
    "s": Status.SKIP,
    "x": Status.XFAIL,
    "X": Status.XPASS,
    "W": Status.WARN,
    "E": Status.ERROR,
}


def row_results(upstream: str, check: str, versions: list[str], glyphs: str) -> list[Result]:
    assert len(glyphs) == len(versions), (check, glyphs, versions)
    out = []
    for version, glyph in zip(versions, glyphs, strict=True):
        if glyph == " ":
            continue
        status = GLYPHS[glyph]
        detail = "" if status in (Status.PASS, Status.SKIP) else f"{check} is {status.value}"
        out.append(Result(upstream, check, version, status, detail, "index"))
    return out


def build(
    grids: dict[str, tuple[list[str], dict[str, str]]],
    anchors: dict[str, tuple[str, ...]] | None = None,
    broken: dict[str, tuple[str, ...]] | None = None,
    stats: dict[str, float] | None = None,
) -> RunReport:
    """{upstream: (versions, {check: glyphs})} -> RunReport with matching UpstreamInfo."""
    results: list[Result] = []
    infos = {}
    for upstream, (versions, rows) in grids.items():
        for check, glyphs in rows.items():
            results += row_results(upstream, check, versions, glyphs)
        infos[upstream] = UpstreamInfo(
            versions=tuple(versions),
            anchors=(anchors or {}).get(upstream, ()),
            broken=(broken or {}).get(upstream, ()),
            branches=tuple(v for v in versions if not v[0].isdigit()),
            matrix=f"matrices/{upstream}.yaml",
            lines={check: 10 + 5 * n for n, check in enumerate(rows)},
        )
    default = {"requests": 7, "bytes_downloaded": 1234, "cache_hits": 2, "seconds": 0.5}
    return RunReport(results=results, stats=stats or default, upstreams=infos)


def releases(count: int) -> list[str]:
    """`count` ascending release labels 0.0.0, 0.0.1, ... 0.1.0, ..."""
    return [f"0.{i // 10}.{i % 10}" for i in range(count)]


#: urllib3's text for a GitHub file that could not be fetched: it names its connection pool's
#: URL, not the file's, and is as long as it is in real runs
UNREACHABLE = (
    "https://raw.githubusercontent.com/o/trl/main/trl/x.py: ConnectionError: "
    "HTTPSConnectionPool(host='raw.githubusercontent.com', port=443): Max retries "
    "exceeded with url: /o/trl/main/trl/other.py (Caused by NameResolutionError)"
)


def unreadable_main(checks: int) -> RunReport:
    """trl 1.0 judged, and `main` not read for any of `checks` checks (one source fault)."""
    report = build({"trl": (["1.0", "main"], {"a": "F."})})
    report.results = [r for r in report.results if r.version != "main"] + [
        dataclasses.replace(
            report.results[0],
            check=f"c{n}",
            version="main",
            status=Status.ERROR,
            detail=UNREACHABLE,
        )
        for n in range(checks)
    ]
    return report
