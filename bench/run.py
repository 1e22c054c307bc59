"""`python -m bench`: cold and warm cost of `canary check` and pytest over the shipped matrices
and every locked release, the parse strategies side by side, and scaling with the release count.

Every number is a subprocess measured from outside (wall, CPU, peak RSS), on its own cache
folder: cold runs start from an empty one, warm runs reuse the one the cold run filled.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench import report
from bench.floor import locked_files, measure_floor
from bench.proc import Measured, measure
from bench.report import Row, Section, table

SECTIONS = ("cold", "warm", "strategies", "scaling")
SCALES = (10, 30)


class BenchError(Exception):
    """A measured command did not run to completion: the numbers would mean nothing."""


class Bench:
    """Runs the measured commands of one benchmark in the project folder `root`."""

    def __init__(self, root: Path, warm_reps: int, cold_reps: int, slow_reps: int) -> None:
        self.root = root
        self.warm_reps = warm_reps
        self.cold_reps = cold_reps
        self.slow_reps = slow_reps
        self.matrices = sorted(root.glob("matrices/*.yaml"))
        if not self.matrices:
            raise BenchError(f"no matrices/*.yaml under {root}: run from the project root")
        self.scratch = Path(tempfile.mkdtemp(prefix="canary-bench-"))

    def env(self, cache: Path) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k != "CANARY_OFFLINE"}
        env["CANARY_CACHE_DIR"] = str(cache)
        return env

    def fresh_cache(self) -> Path:
        return Path(tempfile.mkdtemp(prefix="cache-", dir=self.scratch))

    def run(self, argv: list[str], cache: Path) -> Measured:
        """One measured run; exit 0 or 1 (red results) counts, anything else is a BenchError."""
        measured = measure(argv, self.env(cache), cwd=self.root)
        if measured.returncode not in (0, 1):
            tail = "\n".join(measured.stderr.strip().splitlines()[-5:])
            raise BenchError(f"{' '.join(argv)} exited {measured.returncode}:\n{tail}")
        return measured

    def check(self, cache: Path) -> tuple[Measured, dict]:
        """`canary check --format json` over every matrix and locked release."""
        argv = [sys.executable, "-m", "canary.cli", "check", "--format", "json"]
        measured = self.run(argv, cache)
        return measured, json.loads(measured.stdout)

    def driver(self, cache: Path, *options: str) -> tuple[Measured, dict]:
        measured = self.run([sys.executable, "-m", "bench.driver", *options], cache)
        return measured, json.loads(measured.stdout)

    def pytest(self, cache: Path, *options: str) -> Measured:
        argv = [sys.executable, "-m", "pytest", "matrices", "-p", "no:cacheprovider", "-q"]
        return self.run([*argv, *options], cache)

    def repeat(self, times: int, once: Callable[[], tuple[Measured, dict]]):
        runs = [once() for _ in range(times)]
        return [m for m, _ in runs], [d for _, d in runs]


def _red(summary: dict) -> str:
    red = {k: summary.get(k, 0) for k in ("fail", "error") if summary.get(k)}
    return f"; red results: {red}" if red else ""


def cold_section(bench: Bench) -> tuple[Section, Path, dict]:
    """Cold `canary check`; returns the section, the last filled cache and its JSON output."""
    caches, runs, outputs = [], [], []
    for _ in range(bench.cold_reps):
        caches.append(bench.fresh_cache())
        measured, output = bench.check(caches[-1])
        runs.append(measured)
        outputs.append(output)
    stats = [o["stats"] for o in outputs]
    floor = measure_floor(locked_files(bench.matrices), caches[-1])
    fetched = [float(s["bytes_downloaded"]) for s in stats]
    results = len(outputs[-1]["results"])
    section = Section(f"Cold: `canary check`, empty cache, {results:,} results")
    section.rows = [
        Row("wall", [m.wall for m in runs], report.seconds, report.COLD_WALL),
        Row("CPU (user + sys)", [m.cpu for m in runs], report.seconds),
        Row("requests", [float(s["requests"]) for s in stats], report.count),
        Row("bytes downloaded", fetched, report.megabytes, note="index pages included"),
        Row(
            "bytes / whole wheels",
            [b / floor.whole for b in fetched],
            report.percent,
            report.SHARE_OF_WHEELS,
            f"{floor.wheels} locked wheels = {report.megabytes(floor.whole)}; the floor "
            f"itself is {report.percent(floor.floor / floor.whole)} of them",
        ),
        Row(
            "bytes / floor",
            [b / floor.floor for b in fetched],
            report.ratio,
            report.OVER_FLOOR,
            f"floor {report.megabytes(floor.floor)} = central directories "
            f"{report.megabytes(floor.directories)} + {floor.members_read:,} members read "
            f"{report.megabytes(floor.members)}; RECORD (read to verify) adds "
            f"{report.megabytes(floor.record)}"
            + (f"; no listing for {len(floor.missing)} files" if floor.missing else ""),
        ),
        Row(
            "peak RSS",
            [m.peak_rss for m in runs],
            report.mebibytes,
            note=_red(outputs[-1]["summary"]),
        ),
    ]
    for cache in caches[:-1]:
        shutil.rmtree(cache, ignore_errors=True)
    return section, caches[-1], outputs[-1]


def warm_section(bench: Bench, cache: Path) -> Section:
    checks, outputs = bench.repeat(bench.warm_reps, lambda: bench.check(cache))
    results = len(outputs[-1]["results"])
    enough = "enough" if results >= report.MIN_RESULTS else "TOO FEW"
    one = [bench.pytest(cache) for _ in range(bench.warm_reps)]
    two = [bench.pytest(cache, "-n", "2", "--dist", "loadgroup") for _ in range(bench.warm_reps)]
    section = Section("Warm: cache filled by the cold run")
    section.rows = [
        Row(
            "`canary check` wall",
            [m.wall for m in checks],
            report.seconds,
            report.WARM_CHECK,
            f"{results:,} results (target needs >= {report.MIN_RESULTS:,}: {enough}); "
            f"in-process {outputs[-1]['stats']['seconds']:.2f} s{_red(outputs[-1]['summary'])}",
        ),
        Row(
            "`canary check` peak RSS",
            [m.peak_rss for m in checks],
            report.mebibytes,
            report.PEAK_RSS,
        ),
        Row("`pytest` 1 worker wall", [m.wall for m in one], report.seconds),
        Row(
            "`pytest` 1 worker peak RSS",
            [m.peak_rss for m in one],
            report.mebibytes,
            report.PEAK_RSS,
        ),
        Row("`pytest -n 2` wall", [m.wall for m in two], report.seconds, report.WARM_PYTEST_2),
        Row(
            "`pytest -n 2` peak RSS, largest process",
            [m.peak_rss for m in two],
            report.mebibytes,
            report.PEAK_RSS,
        ),
        Row(
            "`pytest -n 2` peak RSS, all processes",
            [m.tree_rss for m in two],
            report.mebibytes,
            note="controller + 2 workers, sampled every 50 ms",
        ),
    ]
    return section


def strategies_section(bench: Bench, cache: Path) -> str:
    """The same warm run with each parse strategy (bench.strategies)."""
    plan = [
        ("canary", bench.warm_reps, "canary: index per content hash, in memory and on disk"),
        ("no-store", bench.slow_reps, "no-store: in memory only, each file parsed once per run"),
        ("reparse", bench.slow_reps, "reparse: parsed again for every assertion (baseline)"),
    ]
    rows, base = [], None
    for strategy, reps, label in plan:
        runs, outputs = bench.repeat(reps, lambda s=strategy: bench.driver(cache, "--strategy", s))
        wall = statistics.median(m.wall for m in runs)
        base = base or wall
        rows.append(
            [
                label,
                str(reps),
                report.seconds(wall),
                report.seconds(statistics.median(o["stats"]["seconds"] for o in outputs)),
                report.count(outputs[-1]["parses"]),
                report.mebibytes(statistics.median(m.peak_rss for m in runs)),
                f"{wall / base:.1f}x",
            ]
        )
    header = ["strategy", "runs", "wall", "in-process", "parses", "peak RSS", "vs canary"]
    return "### Warm `canary check`, parse strategies side by side\n\n" + table(header, rows)


def scaling_section(bench: Bench, cold_all: tuple[float, dict], cache_all: Path) -> str:
    """Cold and warm cost at 10, 30 and all locked releases (spread evenly over the matrices)."""
    rows = []
    total = len(locked_files(bench.matrices))
    for scale in (*(s for s in SCALES if s < total), None):
        options = ["--releases", str(scale)] if scale else []
        if scale:
            cache = bench.fresh_cache()
            colds, cold_out = bench.repeat(
                bench.cold_reps, lambda c=cache, o=options: _cold_driver(bench, c, o)
            )
            cold_wall = statistics.median(m.wall for m in colds)
            cold_stats = cold_out[-1]["stats"]
        else:
            cache, (cold_wall, cold_stats) = cache_all, cold_all
        warms, warm_out = bench.repeat(
            bench.warm_reps, lambda c=cache, o=options: bench.driver(c, *o)
        )
        releases = warm_out[-1]["releases"]
        in_process = statistics.median(o["stats"]["seconds"] for o in warm_out)
        rows.append(
            [
                str(releases),
                report.count(warm_out[-1]["results"]),
                report.seconds(cold_wall),
                report.count(cold_stats["requests"]),
                report.megabytes(cold_stats["bytes_downloaded"]),
                f"{cold_wall / releases:.3f} s",
                f"{cold_stats['bytes_downloaded'] / releases / 1e6:.2f} MB",
                report.seconds(statistics.median(m.wall for m in warms)),
                report.seconds(in_process),
                f"{in_process / releases * 1000:.1f} ms",
            ]
        )
        if scale:
            shutil.rmtree(cache, ignore_errors=True)
    header = [
        "releases",
        "results",
        "cold wall",
        "cold requests",
        "cold bytes",
        "cold s/release",
        "cold bytes/release",
        "warm wall",
        "warm in-process",
        "warm in-process/release",
    ]
    return "### Scaling with the number of releases\n\n" + table(header, rows)


def _cold_driver(bench: Bench, cache: Path, options: list[str]) -> tuple[Measured, dict]:
    """One cold driver run: the cache is emptied first, so every repetition starts cold."""
    shutil.rmtree(cache, ignore_errors=True)
    cache.mkdir()
    return bench.driver(cache, *options)


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (
        f"{os.cpu_count()} CPUs ({cpu}), {platform.system()} {platform.release()}, "
        f"Python {platform.python_version()}"
    )


def header(bench: Bench) -> str:
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    files = locked_files(bench.matrices)
    names = ", ".join(p.stem for p in bench.matrices)
    return (
        f"## canary benchmark, {when}\n\n"
        f"Machine: {machine()}.\n"
        f"Workload: matrices {names}; every locked release ({len(files)} wheels).\n"
        f"Repetitions: warm {bench.warm_reps}, cold {bench.cold_reps} (each cold run downloads "
        f"tens of MB), slow strategies {bench.slow_reps}; numbers are medians."
    )


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--warm-reps", type=int, default=3, help="repetitions of warm runs (3)")
    parser.add_argument("--cold-reps", type=int, default=1, help="repetitions of cold runs (1)")
    parser.add_argument(
        "--slow-reps", type=int, default=1, help="repetitions of the no-store/reparse runs (1)"
    )
    parser.add_argument(
        "--sections",
        default=",".join(SECTIONS),
        help=f"subset of {','.join(SECTIONS)} (cold always runs: it fills the cache)",
    )
    parser.add_argument("--output", metavar="FILE", help="also write the tables to FILE")
    parser.add_argument("--keep", action="store_true", help="keep the scratch caches")
    args = parser.parse_args(argv)
    args.sections = {s.strip() for s in args.sections.split(",") if s.strip()}
    unknown = args.sections - set(SECTIONS)
    if unknown or min(args.warm_reps, args.cold_reps, args.slow_reps) < 1:
        why = f"unknown sections {sorted(unknown)}" if unknown else "repetitions must be >= 1"
        parser.error(why)
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        bench = Bench(Path.cwd(), args.warm_reps, args.cold_reps, args.slow_reps)
    except BenchError as exc:
        print(f"bench: {exc}", file=sys.stderr)
        return 2
    parts = [header(bench)]
    try:
        cold, cache, output = cold_section(bench)
        parts.append(cold.render())
        _emit(parts[-1])
        if "warm" in args.sections:
            parts.append(warm_section(bench, cache).render())
            _emit(parts[-1])
        if "strategies" in args.sections:
            parts.append(strategies_section(bench, cache))
            _emit(parts[-1])
        if "scaling" in args.sections:
            cold_all = (cold.rows[0].median, output["stats"])
            parts.append(scaling_section(bench, cold_all, cache))
            _emit(parts[-1])
    except BenchError as exc:
        print(f"bench: {exc}", file=sys.stderr)
        return 1
    finally:
        if not args.keep:
            shutil.rmtree(bench.scratch, ignore_errors=True)
    text = "\n\n".join(parts) + "\n"
    print(text)
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    return 0


def _emit(part: str) -> None:
    """Progress on stderr, so a long run shows each section as soon as it is measured."""
    print(part + "\n", file=sys.stderr, flush=True)
