"""SPEC's JSON object, written and read back, so `canary report` renders without re-running.

The object is exactly SPEC's (`results`, `summary` with every status, `stats` with four keys)
plus additive keys: `upcoming` (the checks red only ahead of the releases, with the date each
was first seen), `run` (date, canary version, command) and `upstreams`, each
UpstreamInfo (anchors, broken, branches, the pre-release ahead (`next`, only when one was
checked), order, and where each check is written: the `matrix` file and the `lines` of its
check ids; the nightly adds `commits`, the commit each branch was judged at). Reading
tolerates a file without them (other producers, older runs): versions are then ordered by
PEP 440 with branch labels last.
"""

from __future__ import annotations

import json
from typing import Any

from canary.engine.outcomes import Result, RunReport, UpstreamInfo, summarize
from canary.engine.upcoming import upcoming_json
from canary.errors import CanaryError
from canary.reports.grid import is_release, order_versions
from canary.reports.standing import red_checks
from canary.safety.untrusted import encodable, showable
from canary.sources.history import SHA

STATS_KEYS = ("requests", "bytes_downloaded", "cache_hits", "seconds")
#: a result's text fields; `closest` or `moved_to` (what a failure became) is an object
TEXT_KEYS = (
    "upstream",
    "check",
    "version",
    "status",
    "detail",
    "source",
    "last_pass",
    "first_fail",
    "diff",
)
INFO_KEYS = ("versions", "anchors", "broken", "branches", "next")
#: texts every renderer already escapes as it writes them (a diff keeps its lines, a why may)
RENDERED_ESCAPED = frozenset({"detail", "why", "diff"})


class ReportError(CanaryError, ValueError):
    """A saved result cannot be read; the message says what is wrong where."""


def stats_of(report: RunReport) -> dict[str, float]:
    """SPEC's four counters, integers except `seconds`, absent ones as zero."""
    stats: dict[str, float] = {key: int(report.stats.get(key, 0)) for key in STATS_KEYS[:3]}
    stats["seconds"] = round(float(report.stats.get("seconds", 0.0)), 3)
    return stats


def to_json(report: RunReport, extra: dict[str, Any] | None = None) -> str:
    """One result per line: diffs of two nights read well, and each line goes through the C
    encoder (json's indent= switches the whole document to the pure-Python one). `extra`
    adds top-level keys (`canary report --baseline` adds `drift`)."""
    rest = {
        "summary": summarize(report.results),
        "stats": stats_of(report),
        "upstreams": {
            name: {
                **{
                    key: list(getattr(info, key))
                    for key in INFO_KEYS
                    if key != "next" or info.next  # only a run that judged one has it
                },
                "matrix": info.matrix,
                "lines": info.lines,
                **({"declared": info.declared} if info.declared else {}),
                **({"commits": info.commits} if info.commits else {}),
            }
            for name, info in report.upstreams.items()
        },
        **({"run": report.run} if report.run else {}),
        "upcoming": upcoming_json(report),
        # where a project declares its requirement: the red checks, those within it first
        **({"red": red_checks(report)} if _declares(report) else {}),
        **(extra or {}),
    }
    rows = ",\n ".join(json.dumps(r.to_json(), ensure_ascii=False) for r in report.results)
    tail = ",\n".join(
        f"{json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}" for k, v in rest.items()
    )
    return f'{{"results": [\n {rows}\n],\n{tail}}}\n'


def _declares(report: RunReport) -> bool:
    return any(info.declared for info in report.upstreams.values())


def _results(data: dict[str, Any]) -> list[Result]:
    raw = data.get("results")
    if not isinstance(raw, list):
        raise ReportError('no "results" list')
    results = []
    for index, item in enumerate(raw):
        if not isinstance(item, dict) or not all(
            isinstance(item.get(key, ""), str) for key in TEXT_KEYS
        ):
            raise ReportError(f"results[{index}] is not an object of strings")
        try:
            results.append(Result.from_json(item))
        except (KeyError, ValueError, TypeError, AttributeError) as exc:
            raise ReportError(f"results[{index}]: missing or bad {exc}") from None
    return results


def _infos(data: dict[str, Any], results: list[Result]) -> dict[str, UpstreamInfo]:
    raw = data.get("upstreams")
    if raw is None:
        names = dict.fromkeys(r.upstream for r in results)
        infos = {}
        for name in names:
            versions = order_versions(r.version for r in results if r.upstream == name)
            branches = tuple(v for v in versions if not is_release(v))
            infos[name] = UpstreamInfo(versions=tuple(versions), branches=branches)
        return infos
    if not isinstance(raw, dict):
        raise ReportError('"upstreams" is not an object')
    infos = {}
    for name, info in raw.items():
        if not isinstance(info, dict) or not all(
            isinstance(info.get(key, []), list) for key in INFO_KEYS
        ):
            raise ReportError(f'upstreams["{name}"] is not an object of lists')
        matrix, lines = info.get("matrix", ""), info.get("lines", {})
        declared = info.get("declared", "")
        if not all(isinstance(text, str) for text in (matrix, declared)) or not isinstance(
            lines, dict
        ):
            raise ReportError(
                f'upstreams["{name}"]: "matrix", "declared" or "lines" has the wrong type'
            )
        if not all(isinstance(line, int) for line in lines.values()):
            raise ReportError(f'upstreams["{name}"]["lines"] is not an object of line numbers')
        commits = info.get("commits", {})
        if not isinstance(commits, dict) or not all(
            isinstance(sha, str) and SHA.fullmatch(sha) for sha in commits.values()
        ):
            raise ReportError(f'upstreams["{name}"]["commits"] is not an object of commit shas')
        infos[name] = UpstreamInfo(
            **{key: tuple(map(str, info.get(key, []))) for key in INFO_KEYS},
            matrix=matrix,
            lines=lines,
            declared=declared,
            commits=commits,
        )
    return infos


def _shown(value: Any, key: str = "") -> Any:
    """Parsed JSON with every other text on one line and no workflow command in it: a results
    file is untrusted (an artifact, a colleague's file), and its names, versions, sources and
    run fields reach logs that a runner reads commands from."""
    if isinstance(value, str):
        return value if key in RENDERED_ESCAPED else showable(value)
    if isinstance(value, list):
        return [_shown(item, key) for item in value]
    if isinstance(value, dict):
        return {showable(name): _shown(item, name) for name, item in value.items()}
    return value


def load_json(text: str) -> RunReport:
    """Parse SPEC's object; ReportError with a clear message on anything malformed."""
    try:
        data = _shown(encodable(json.loads(text)))
    except json.JSONDecodeError as exc:
        raise ReportError(f"not JSON: {exc}") from None
    except RecursionError:
        raise ReportError("not a result file: JSON nested too deeply") from None
    if not isinstance(data, dict):
        raise ReportError("not a JSON object")
    results = _results(data)
    stats = data.get("stats", {})
    if not isinstance(stats, dict) or not all(
        isinstance(stats.get(key, 0), (int, float)) for key in STATS_KEYS
    ):
        raise ReportError('"stats" is not an object of numbers')
    run = data.get("run", {})
    if not isinstance(run, dict) or not all(isinstance(v, str) for v in run.values()):
        raise ReportError('"run" is not an object of strings')
    return RunReport(
        results=results,
        stats={key: stats.get(key, 0) for key in STATS_KEYS},
        upstreams=_infos(data, results),
        run=run,
        since=_since(data),
    )


def _since(data: dict[str, Any]) -> dict[tuple[str, str], str]:
    """When each upcoming red was first seen, from the `upcoming` list (absent in a file
    written before it: every upcoming red is then as new as its run)."""
    raw = data.get("upcoming", [])
    if not isinstance(raw, list) or not all(isinstance(item, dict) for item in raw):
        raise ReportError('"upcoming" is not a list of objects')
    since = {}
    for index, item in enumerate(raw):
        fields = [item.get(name) for name in ("upstream", "check", "since")]
        if not all(isinstance(value, str) for value in fields):
            raise ReportError(f"upcoming[{index}]: upstream, check or since is not a string")
        since[fields[0], fields[1]] = fields[2]
    return since
