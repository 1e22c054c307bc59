"""The explain section: what telling a failure's story costs, side by side in one run.

- the share of a cold `canary check` spent telling what failing subjects became (the closest
  lines, the moved definitions, the added parameters, and the diffs), over the shipped matrices
  and over the same matrices with every check's gate (`since`, `until`, `versions`) taken out,
  so that checks break where their gates stood and there are failures to tell;
- `canary explain ID --offline` on the warm cache that second cold run filled.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import yaml

from bench import report
from bench.report import Row, Section

GATES = ("since", "until", "versions")
EXPLAIN_TARGET = report.Target(1.0, report.seconds)
SHARE_TARGET = report.Target(0.10, report.percent)


def ungated(matrices: list[Path], into: Path) -> list[Path]:
    """Copies of the matrices (and their locks) without any check's gate."""
    into.mkdir(parents=True, exist_ok=True)
    copies = []
    for path in matrices:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        for check in data.get("checks", []):
            for key in GATES:
                check.pop(key, None)
        copy = into / path.name
        copy.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
        lock = path.with_suffix(".lock")
        if lock.is_file():
            shutil.copy(lock, into / lock.name)
        copies.append(copy)
    return copies


def _cold(bench, matrices: list[Path]) -> tuple[float, dict, Path]:
    cache = bench.fresh_cache()
    argv = [sys.executable, "-m", "bench.driver", *map(str, matrices)]
    measured = bench.run(argv, cache)
    return measured.wall, json.loads(measured.stdout), cache


def explain_section(bench) -> Section:
    section = Section("Telling a failure's story: its share of a cold check, `canary explain`")
    shipped_wall, shipped, shipped_cache = _cold(bench, bench.matrices)
    copies = ungated(bench.matrices, bench.scratch / "ungated")
    wall, out, cache = _cold(bench, copies)
    for label, seconds, data, total in (
        ("shipped matrices", shipped["explain_seconds"], shipped, shipped_wall),
        ("gates taken out", out["explain_seconds"], out, wall),
    ):
        told = len(data["explained"])
        what = f"cold check, {label}: share spent telling what failures became"
        note = f"{told} checks told, {report.seconds(seconds)} of {report.seconds(total)}"
        section.rows.append(Row(what, [seconds / total], report.percent, SHARE_TARGET, note))
    wanted = out["explained"][0] if out["explained"] else None
    if wanted is not None:
        argv = [sys.executable, "-m", "canary.cli.main", "explain", wanted, *map(str, copies)]
        runs = [bench.run([*argv, "--offline"], cache) for _ in range(bench.warm_reps)]
        what = f"warm `canary explain {wanted} --offline`"
        section.rows.append(Row(what, [m.wall for m in runs], report.seconds, EXPLAIN_TARGET))
    shutil.rmtree(shipped_cache, ignore_errors=True)
    return section
