"""The explain section: what telling a failure's story costs, side by side in one run.

- the share of a cold `canary check` spent telling what failing subjects became (the closest
  lines, the moved definitions, the added parameters, and the diffs: timed in the process), over
  the shipped matrices and over the same matrices with every check's gate (`since`, `until`,
  `versions`) taken out, so that checks break where their gates stood and there are failures to
  tell;
- over those ungated matrices, the cold check telling the stories against the same check not
  telling them (`bench.driver --no-stories`), interleaved, as ratios of wall and CPU time: what
  telling adds, measured from outside;
- `canary explain ID --offline` on the warm cache a cold run filled.

Cold runs repeat `--cold-reps` times (at least 3: medians), warm ones `--warm-reps` times.
"""

from __future__ import annotations

import json
import shutil
import statistics
import sys
from pathlib import Path

import yaml

from bench import report
from bench.proc import Measured
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


COLD_REPS = 3
RATIO_TARGET = report.Target(1.10, report.ratio)


def _cold(bench, matrices: list[Path], *options: str) -> tuple[Measured, dict, Path]:
    cache = bench.fresh_cache()
    argv = [sys.executable, "-m", "bench.driver", *map(str, matrices), *options]
    measured = bench.run(argv, cache)
    return measured, json.loads(measured.stdout), cache


def _share_row(label: str, runs: list[tuple[Measured, dict]]) -> Row:
    told = len(runs[0][1]["explained"])
    spent = [data["explain_seconds"] for _, data in runs]
    walls = [measured.wall for measured, _ in runs]
    what = f"cold check, {label}: share spent telling what failures became"
    note = (
        f"{told} checks told, {report.seconds(statistics.median(spent))} of "
        f"{report.seconds(statistics.median(walls))} (medians)"
    )
    shares = [seconds / wall for seconds, wall in zip(spent, walls, strict=True)]
    return Row(what, shares, report.percent, SHARE_TARGET, note)


def explain_section(bench) -> Section:
    section = Section("Telling a failure's story: what it adds to a cold check, `canary explain`")
    reps = max(COLD_REPS, bench.cold_reps)
    copies = ungated(bench.matrices, bench.scratch / "ungated")
    shipped, told, untold = [], [], []
    warm_cache: Path | None = None
    for _ in range(reps):  # interleaved: a slow minute of the machine falls on all three
        measured, data, cache = _cold(bench, bench.matrices)
        shipped.append((measured, data))
        shutil.rmtree(cache, ignore_errors=True)
        measured, data, cache = _cold(bench, copies)
        told.append((measured, data))
        if warm_cache is not None:
            shutil.rmtree(warm_cache, ignore_errors=True)
        warm_cache = cache
        measured, data, cache = _cold(bench, copies, "--no-stories")
        untold.append((measured, data))
        shutil.rmtree(cache, ignore_errors=True)
    section.rows.append(_share_row("shipped matrices", shipped))
    section.rows.append(_share_row("gates taken out", told))
    pairs = list(zip(told, untold, strict=True))
    for what, value in (("wall", lambda m: m.wall), ("CPU", lambda m: m.cpu)):
        ratios = [value(on) / value(off) for (on, _), (off, _) in pairs]
        note = (
            f"{report.seconds(statistics.median(value(m) for m, _ in told))} telling, "
            f"{report.seconds(statistics.median(value(m) for m, _ in untold))} not (medians)"
        )
        row_what = f"cold check, gates taken out: {what} telling / not telling the stories"
        section.rows.append(Row(row_what, ratios, report.ratio, RATIO_TARGET, note))
    explained = told[-1][1]["explained"]
    if explained and warm_cache is not None:
        wanted = explained[0]
        argv = [sys.executable, "-m", "canary.cli.main", "explain", wanted, *map(str, copies)]
        runs = [bench.run([*argv, "--offline"], warm_cache) for _ in range(bench.warm_reps)]
        what = f"warm `canary explain {wanted} --offline`"
        section.rows.append(Row(what, [m.wall for m in runs], report.seconds, EXPLAIN_TARGET))
    if warm_cache is not None:
        shutil.rmtree(warm_cache, ignore_errors=True)
    return section
