"""`python -m bench.stories [--before CHECKOUT]`: what telling failures' stories downloads,
against what judging them downloads, on the matrices of bench/stories/ (real releases of trl,
peft and transformers with red checks: a name that moved, a text rewritten, names gone).

Each code runs a cold check (`bench.driver`, a fresh cache each) without the stories, then one
telling them; the bytes and requests of the two are the judging's and the judging's plus the
stories'. A warm `canary check --format json` on the second cache then prints what each story
says, so a cheaper search is seen to tell the same. With `--before`, an older checkout's runs
are interleaved with this one's, in one run (bytes do not depend on the machine's load; the
seconds are printed only as a note).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

from bench import report
from bench.run import AFTER, BEFORE, Bench

FOLDER = Path(__file__).parent / "stories"
TARGET = 1.2  # issue 51: the stories at most 1.2x the judging's bytes


def _cold(bench: Bench, code: str, *options: str) -> tuple[dict, Path]:
    cache = bench.fresh_cache()
    argv = [sys.executable, "-m", "bench.driver", *map(str, bench.matrices), *options]
    measured = bench.run(argv, cache, code)
    return json.loads(measured.stdout), cache


def _told(bench: Bench, code: str, cache: Path) -> dict[str, str]:
    """What each first failure says it became, from the warm cache the stories filled."""
    _, data = bench.check(cache, code)
    told = {}
    for result in data["results"]:
        became = result.get("moved_to") or result.get("closest")
        if became is None:
            continue
        where = f"{became['path']}:{became['line']}" if became["path"] else "nowhere"
        searched = f", {became['searched']} modules read" if "searched" in became else ""
        told[f"{result['check']}@{result['version']}"] = f"{became['what']}: {where}{searched}"
    return told


def measure_code(bench: Bench, code: str) -> tuple[list[str], dict[str, str]]:
    """One code's row (judging bytes, with stories, ratio, requests) and its stories."""
    judging, cache = _cold(bench, code, "--no-stories")
    shutil.rmtree(cache, ignore_errors=True)
    telling, cache = _cold(bench, code)
    told = _told(bench, code, cache)
    shutil.rmtree(cache, ignore_errors=True)
    alone, both = judging["stats"], telling["stats"]
    ratio = both["bytes_downloaded"] / alone["bytes_downloaded"]
    row = [
        code,
        report.megabytes(alone["bytes_downloaded"]),
        report.megabytes(both["bytes_downloaded"]),
        f"{ratio:.2f}x",
        f"{alone['requests']:.0f} / {both['requests']:.0f}",
        str(len(told)),
    ]
    return row, told


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.stories", description=__doc__)
    parser.add_argument("--before", type=Path, help="an older canary checkout, side by side")
    args = parser.parse_args(argv)
    bench = Bench(Path.cwd(), 1, 1, 1, folder=FOLDER, before=args.before)
    codes = [BEFORE, AFTER] if args.before else [AFTER]
    rows, stories = [], {}
    try:
        for code in codes:
            row, stories[code] = measure_code(bench, code)
            rows.append(row)
    finally:
        shutil.rmtree(bench.scratch, ignore_errors=True)
    header = ["code", "judging", "judging + stories", "ratio", "requests", "stories"]
    print(report.table(header, rows))
    print()
    keys = sorted({key for told in stories.values() for key in told})
    print(
        report.table(
            ["first failure", *codes],
            [[k, *(s.get(k, "") for s in stories.values())] for k in keys],
        )
    )
    worst = max(float(row[3].rstrip("x")) for row in rows if row[0] == AFTER)
    return 0 if worst <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
