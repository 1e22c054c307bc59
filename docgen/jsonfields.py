"""Every field of `--format json`: the object canary's own writer makes of a report whose
results carry every optional field, each field with what `json_fields.yaml` says of it.

The fields are read off the JSON `canary.reports.jsonio.to_json` writes (and the drift
`canary report --baseline` adds), not listed by hand, so a field the writer gains is on the page
at the next build, and one without an entry in json_fields.yaml stops it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from canary.engine.outcomes import (
    Became,
    BrokenBy,
    Place,
    Result,
    RunReport,
    Status,
    UpstreamInfo,
)
from canary.reports.drift import drift, drift_json
from canary.reports.jsonio import to_json

DESCRIPTIONS = Path(__file__).with_name("json_fields.yaml")
#: the sections of the page: (key in json_fields.yaml, heading)
SECTIONS = (
    ("top", "The object"),
    ("results", "results"),
    ("became", "closest and moved_to"),
    ("summary", "summary"),
    ("stats", "stats"),
    ("upstreams", "upstreams"),
    ("red", "red"),
    ("run", "run"),
    ("drift", "drift"),
)


class FieldsDrift(Exception):
    """json_fields.yaml and the JSON canary writes disagree."""


def sample_results() -> list[Result]:
    """A failure with every field a result can have (what its subject became: lines), and one
    whose subject moved (a definition elsewhere)."""
    lines = Became("line", (Place("x = 1", "pkg/a.py", 3), Place("x = 2", "pkg/a.py", 9)))
    moved = Became("definition", (Place("pkg.b.f", "pkg/b.py", 1),), searched=2)

    def failure(check: str, **optional: Any) -> Result:
        return Result("demo", check, "2.0", Status.FAIL, "gone", "index", **optional)

    return [
        failure("a", last_pass="1.0", first_fail="2.0"),
        failure(
            "b",
            last_pass="1.0",
            first_fail="2.0",
            became=lines,
            diff="--- pkg/a.py (1.0)\n+++ pkg/a.py (2.0)\n",
            why="our patch needs it",
            broken_by=BrokenBy("0" * 40, "2026-01-01T00:00:00Z", "a title", 1, "a pull", "u"),
        ),
        failure("c", became=moved),
    ]


def sample_json() -> dict[str, Any]:
    """What `canary report --baseline` writes for the sample against an empty baseline."""
    info = UpstreamInfo(
        versions=("1.0", "2.0", "main"),
        anchors=("1.0",),
        broken=("1.0",),
        branches=("main",),
        next=("3.0rc1",),
        declared=">=1.0,<2.0",
        matrix="canary/demo.yaml",
        lines={"a": 3},
        commits={"main": "0" * 40},
    )
    now = RunReport(sample_results(), {}, {"demo": info}, run={"date": "", "canary": ""})
    before = RunReport([], {}, {})
    data: dict[str, Any] = json.loads(to_json(now, {"drift": drift_json(drift(now, before))}))
    return data


def fields(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each section's fields in the order `data` (a JSON canary wrote) has them, with a value
    each (for its type)."""
    became: dict[str, Any] = {}
    for result in data.get("results", []):
        for key in ("closest", "moved_to"):
            became.update(result.get(key, {}))
    return {
        "top": data,
        "results": {k: v for result in data.get("results", []) for k, v in result.items()},
        "became": became,
        "summary": data.get("summary", {}),
        "stats": data.get("stats", {}),
        "upstreams": {k: v for info in data.get("upstreams", {}).values() for k, v in info.items()},
        "red": {k: v for row in data.get("red", []) for k, v in row.items()},
        "run": data.get("run", {}),
        "drift": data.get("drift", {}),
    }


def described() -> dict[str, dict[str, dict[str, str]]]:
    data: dict[str, dict[str, dict[str, str]]] = yaml.safe_load(
        DESCRIPTIONS.read_text(encoding="utf-8")
    )
    return data


def undocumented(data: dict[str, Any]) -> list[str]:
    """The fields of `data` (a JSON canary wrote) that json_fields.yaml does not describe."""
    said = described()
    return [
        f"{name}.{key}"
        for name, found in fields(data).items()
        for key in found
        if key not in said[name]
    ]


def type_of(value: Any) -> str:
    names = {str: "string", bool: "boolean", int: "integer", float: "number", list: "list"}
    return names.get(type(value), "object")


def section(name: str, found: dict[str, Any], entries: dict[str, dict[str, str]]) -> list[str]:
    missing = [key for key in found if key not in entries]
    if name != "run" and (stale := [key for key in entries if key not in found]):
        missing += [f"{key} (described, never written)" for key in stale]
    if missing:
        raise FieldsDrift(f"docgen/json_fields.yaml, {name}: {', '.join(missing)}")
    rows = ["| field | type | present | what it holds |", "| --- | --- | --- | --- |"]
    for key, entry in entries.items():
        kind = type_of(found[key]) if key in found else "string"
        present = entry.get("present", "always")
        rows.append(f"| `{key}` | {kind} | {present} | {entry['meaning']} |")
    return rows


def json_fields() -> str:
    """One table per object of the JSON, under a heading each."""
    said, found = described(), fields(sample_json())
    lines: list[str] = []
    for name, heading in SECTIONS:
        lines += [f"## {heading} {{#{name}}}", "", *section(name, found[name], said[name]), ""]
    return "\n".join(lines).rstrip("\n")
