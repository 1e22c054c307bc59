"""`python -m bench`: cold and warm cost of `canary check` and pytest over the shipped matrices
and every locked release, the pytest path against `canary check` on one matrix, the parse
strategies side by side, and scaling with the release count; with `--before CHECKOUT`, the same
commands on an older canary, interleaved with these in one run.

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
from bench.explain import explain_section
from bench.floor import locked_files, measure_floor
from bench.proc import Measured, measure
from bench.report import Row, Section, table

SECTIONS = ("cold", "warm", "pytest-path", "strategies", "scaling", "explain")
#: pytest options of every measured pytest run: no cache folder written, and no plugin of
#: canary's own test tools (hypothesis's imports hypothesis at the end of every session, 0.3 s
#: here, which a user running the matrices does not have)
PYTEST_OPTIONS = ("-p", "no:cacheprovider", "-p", "no:hypothesispytest", "-q")
SCALES = (10, 30)
BESIDE = 8  # trivial tests beside the matrices in the warm section's session with workers
AFTER, BEFORE = "after", "before"


class BenchError(Exception):
    """A measured command did not run to completion: the numbers would mean nothing."""


class Bench:
    """Runs the measured commands of one benchmark in the project folder `root`, over the
    matrices in `folder`, with this checkout's canary and maybe an older one (`before`)."""

    def __init__(
        self,
        root: Path,
        warm_reps: int,
        cold_reps: int,
        slow_reps: int,
        folder: Path | None = None,
        before: Path | None = None,
    ) -> None:
        self.root = root
        self.warm_reps = warm_reps
        self.cold_reps = cold_reps
        self.slow_reps = slow_reps
        self.folder = (folder or root / "matrices").resolve()
        self.matrices = sorted(self.folder.glob("*.yaml"))
        if not self.matrices:
            raise BenchError(f"no *.yaml under {self.folder}: run from the project root")
        self.codes = {AFTER: root.resolve()}
        if before is not None:
            if not (before / "canary" / "cli" / "main.py").is_file():
                raise BenchError(f"--before {before}: not a canary checkout")
            self.codes[BEFORE] = before.resolve()
        self.scratch = Path(tempfile.mkdtemp(prefix="canary-bench-"))

    def env(self, cache: Path, code: str = AFTER) -> dict[str, str]:
        """The command's environment: its cache, and the canary of `code` first on the path.

        Bytecode is written and reused (as for any user): an environment that forbids it would
        recompile every module, and pytest's rewritten plugins, on every run."""
        drop = {"CANARY_OFFLINE", "PYTHONDONTWRITEBYTECODE", "PYTHONPATH"}
        env = {k: v for k, v in os.environ.items() if k not in drop}
        env["CANARY_CACHE_DIR"] = str(cache)
        env["PYTHONPATH"] = str(self.codes[code])
        env["PYTHONSAFEPATH"] = "1"  # not the working directory's canary: the one named here
        return env

    def fresh_cache(self) -> Path:
        return Path(tempfile.mkdtemp(prefix="cache-", dir=self.scratch))

    def run(self, argv: list[str], cache: Path, code: str = AFTER) -> Measured:
        """One measured run; exit 0 or 1 (red results) counts, anything else is a BenchError."""
        measured = measure(argv, self.env(cache, code), cwd=self.root)
        if measured.returncode not in (0, 1):
            tail = "\n".join(measured.stderr.strip().splitlines()[-5:])
            raise BenchError(f"{' '.join(argv)} exited {measured.returncode}:\n{tail}")
        return measured

    def check(
        self, cache: Path, code: str = AFTER, matrices: list[Path] | None = None
    ) -> tuple[Measured, dict]:
        """`canary check --format json` over the matrices (all of them by default)."""
        paths = [str(p) for p in (matrices or self.matrices)]
        argv = [sys.executable, "-m", "canary.cli.main", "check", "--format", "json", *paths]
        measured = self.run(argv, cache, code)
        return measured, json.loads(measured.stdout)

    def driver(self, cache: Path, *options: str) -> tuple[Measured, dict]:
        paths = [str(p) for p in self.matrices]
        measured = self.run([sys.executable, "-m", "bench.driver", *paths, *options], cache)
        return measured, json.loads(measured.stdout)

    def pytest(
        self, cache: Path, *options: str, code: str = AFTER, target: Path | None = None
    ) -> Measured:
        where = str(target or self.folder)
        argv = [sys.executable, "-m", "pytest", where, *PYTEST_OPTIONS]
        return self.run([*argv, *options], cache, code)

    def startup(self, code: str = AFTER) -> Measured:
        """The interpreter starting and importing the command line: what a warm run of one
        matrix pays before any work."""
        return self.run([sys.executable, "-c", "import canary.cli.main"], self.scratch, code)

    def trivial_tests(self, items: int) -> Path:
        """A test module of `items` trivial tests (three in eight skip, like the gated
        checks), written once per count."""
        module = self.scratch / f"trivial{items}" / "test_trivial.py"
        if not module.exists():
            module.parent.mkdir()
            module.write_text(
                "import pytest\n\n\n"
                f"@pytest.mark.parametrize('i', range({items}))\n"
                "def test_item(i):\n"
                "    if i % 8 < 3:\n"
                "        pytest.skip('outside the gate')\n"
            )
        return module

    def pytest_floor(self, items: int, *options: str) -> Measured:
        """pytest's own cost for `items` trivial tests: what no plugin can go below."""
        argv = [sys.executable, "-m", "pytest", str(self.trivial_tests(items)), *PYTEST_OPTIONS]
        return self.run([*argv, *options], self.scratch)

    def repeat(self, times: int, once: Callable[[], tuple[Measured, dict]]):
        runs = [once() for _ in range(times)]
        return [m for m, _ in runs], [d for _, d in runs]


def _one_and_two(
    bench: Bench, pytest: Callable[..., Measured]
) -> tuple[dict[str, list[Measured]], dict[str, list[Measured]]]:
    """`pytest(code)` and `pytest(code, "-n", "2")`, one right after the other, for every code
    and repetition: (1-worker runs, `-n 2` runs) by code."""
    pairs = _by_code(bench, bench.warm_reps, lambda code: (pytest(code), pytest(code, "-n", "2")))
    return (
        {code: [one for one, _two in runs] for code, runs in pairs.items()},
        {code: [two for _one, two in runs] for code, runs in pairs.items()},
    )


def _ratios(one: list[Measured], two: list[Measured]) -> list[float]:
    """Wall time of each second run over its first (runs taken side by side)."""
    return [b.wall / a.wall for a, b in zip(one, two, strict=True)]


def _red(summary: dict) -> str:
    red = {k: summary.get(k, 0) for k in ("fail", "error") if summary.get(k)}
    return f"; red results: {red}" if red else ""


def _by_code(bench: Bench, times: int, once: Callable[[str], object]) -> dict[str, list]:
    """`once(code)` `times` times for every code, interleaved (after, before, after, ...) so
    that a busy machine weighs on both alike."""
    samples: dict[str, list] = {code: [] for code in bench.codes}
    for _ in range(times):
        for code in bench.codes:
            samples[code].append(once(code))
    return samples


def _before(samples: dict[str, list], value: Callable[[object], float]) -> list[float] | None:
    return [value(s) for s in samples[BEFORE]] if BEFORE in samples else None


def cold_section(bench: Bench) -> tuple[Section, dict[str, Path], dict]:
    """Cold `canary check`; returns the section, the last filled cache per code and the JSON
    output of this checkout's last cold run."""
    caches: dict[str, list[Path]] = {code: [] for code in bench.codes}

    def once(code: str) -> tuple[Measured, dict]:
        caches[code].append(bench.fresh_cache())
        return bench.check(caches[code][-1], code)

    runs = _by_code(bench, bench.cold_reps, once)
    after = runs[AFTER]
    stats = [o["stats"] for _m, o in after]
    output = after[-1][1]
    floor = measure_floor(locked_files(bench.matrices), caches[AFTER][-1])
    fetched = [float(s["bytes_downloaded"]) for s in stats]
    results = len(output["results"])
    section = Section(f"Cold: `canary check`, empty cache, {results:,} results")
    section.rows = [
        Row(
            "wall",
            [m.wall for m, _o in after],
            report.seconds,
            report.COLD_WALL,
            before=_before(runs, lambda r: r[0].wall),
        ),
        Row(
            "CPU (user + sys)",
            [m.cpu for m, _o in after],
            report.seconds,
            before=_before(runs, lambda r: r[0].cpu),
        ),
        Row(
            "requests",
            [float(s["requests"]) for s in stats],
            report.count,
            before=_before(runs, lambda r: float(r[1]["stats"]["requests"])),
        ),
        Row(
            "bytes downloaded",
            fetched,
            report.megabytes,
            note="index pages included",
            before=_before(runs, lambda r: float(r[1]["stats"]["bytes_downloaded"])),
        ),
        Row(
            "bytes / whole wheels",
            [b / floor.whole for b in fetched],
            report.percent,
            report.SHARE_OF_WHEELS,
            f"{floor.wheels} locked wheels = {report.megabytes(floor.whole)}; the floor "
            f"itself is {report.percent(floor.floor / floor.whole)} of them",
            before=_before(runs, lambda r: r[1]["stats"]["bytes_downloaded"] / floor.whole),
        ),
        Row(
            "bytes / floor",
            [b / floor.floor for b in fetched],
            report.ratio,
            report.OVER_FLOOR,
            f"floor {report.megabytes(floor.floor)} = central directories "
            f"{report.megabytes(floor.directories)} + {floor.members_read:,} distinct members "
            f"read {report.megabytes(floor.members)} ({floor.shared:,} more were files an "
            f"earlier wheel already brought: {report.megabytes(floor.shared_bytes)}); RECORD "
            f"(read only over plain HTTP) would add {report.megabytes(floor.record)}"
            + (f"; no listing for {len(floor.missing)} files" if floor.missing else ""),
            before=_before(runs, lambda r: r[1]["stats"]["bytes_downloaded"] / floor.floor),
        ),
        Row(
            "peak RSS",
            [m.peak_rss for m, _o in after],
            report.mebibytes,
            note=_red(output["summary"]),
            before=_before(runs, lambda r: r[0].peak_rss),
        ),
    ]
    for folders in caches.values():
        for cache in folders[:-1]:
            shutil.rmtree(cache, ignore_errors=True)
    return section, {code: folders[-1] for code, folders in caches.items()}, output


def warm_section(bench: Bench, caches: dict[str, Path]) -> Section:
    checks = _by_code(bench, bench.warm_reps, lambda code: bench.check(caches[code], code))
    output = checks[AFTER][-1][1]
    results = len(output["results"])
    enough = "enough" if results >= report.MIN_RESULTS else "TOO FEW"
    # Each `-n 2` run right after its 1-worker run, so that their ratio is taken side by side.
    one, two = _one_and_two(
        bench, lambda code, *options: bench.pytest(caches[code], *options, code=code)
    )
    # Beside a test module the xdist workers start (they run its tests; the matrices' items
    # run in the controller): the same session with 1 worker and with `-n 2`.
    beside = str(bench.trivial_tests(BESIDE))
    one_beside, two_beside = _one_and_two(
        bench, lambda code, *options: bench.pytest(caches[code], beside, *options, code=code)
    )
    pairs = [
        (bench.pytest_floor(results), bench.pytest_floor(results, "-n", "2"))
        for _ in range(bench.warm_reps)
    ]
    floor_one, floor_two = [a for a, _b in pairs], [b for _a, b in pairs]
    ratio = {code: _ratios(one[code], two[code]) for code in bench.codes}
    ratio_beside = {code: _ratios(one_beside[code], two_beside[code]) for code in bench.codes}
    section = Section("Warm: cache filled by the cold run")
    section.rows = [
        Row(
            "`canary check` wall",
            [m.wall for m, _o in checks[AFTER]],
            report.seconds,
            report.WARM_CHECK,
            f"{results:,} results (target needs >= {report.MIN_RESULTS:,}: {enough}); "
            f"in-process {output['stats']['seconds']:.2f} s{_red(output['summary'])}",
            before=_before(checks, lambda r: r[0].wall),
        ),
        Row(
            "`canary check` peak RSS",
            [m.peak_rss for m, _o in checks[AFTER]],
            report.mebibytes,
            report.PEAK_RSS,
            before=_before(checks, lambda r: r[0].peak_rss),
        ),
        Row(
            "`pytest` 1 worker wall",
            [m.wall for m in one[AFTER]],
            report.seconds,
            report.WARM_PYTEST_1,
            before=_before(one, lambda m: m.wall),
        ),
        Row(
            f"pytest's own floor: {results:,} trivial tests, 1 worker",
            [m.wall for m in floor_one],
            report.seconds,
            note="no plugin: what pytest itself costs per item on this machine",
        ),
        Row(
            "`pytest` 1 worker peak RSS",
            [m.peak_rss for m in one[AFTER]],
            report.mebibytes,
            report.PEAK_RSS,
            before=_before(one, lambda m: m.peak_rss),
        ),
        Row(
            "`pytest -n 2` wall",
            [m.wall for m in two[AFTER]],
            report.seconds,
            before=_before(two, lambda m: m.wall),
        ),
        Row(
            "`pytest -n 2` / 1 worker",
            ratio[AFTER],
            report.ratio,
            report.NO_SLOWER,
            before=ratio.get(BEFORE),
        ),
        Row(
            f"`pytest -n 2` / 1 worker, beside {BESIDE} trivial tests",
            ratio_beside[AFTER],
            report.ratio,
            note="the workers start and run the tests; 1 worker wall "
            + report.seconds(statistics.median(m.wall for m in one_beside[AFTER])),
            before=ratio_beside.get(BEFORE),
        ),
        Row(
            f"pytest's own floor: {results:,} trivial tests, `-n 2` / 1 worker",
            _ratios(floor_one, floor_two),
            report.ratio,
            note=f"`-n 2` wall {report.seconds(statistics.median(m.wall for m in floor_two))}",
        ),
        Row(
            "`pytest -n 2` peak RSS, largest process",
            [m.peak_rss for m in two[AFTER]],
            report.mebibytes,
            report.PEAK_RSS,
            before=_before(two, lambda m: m.peak_rss),
        ),
        Row(
            "`pytest -n 2` peak RSS, all processes",
            [m.tree_rss for m in two[AFTER]],
            report.mebibytes,
            note="controller + 2 workers, sampled every 50 ms",
            before=_before(two, lambda m: m.tree_rss),
        ),
    ]
    return section


def pytest_path_section(bench: Bench, name: str) -> Section:
    """One matrix through `canary check` and through pytest, cold (each on an empty cache)
    and warm: the pytest path should cost no more than the command."""
    matrix = bench.folder / f"{name}.yaml"
    if matrix not in bench.matrices:
        matrix = bench.matrices[-1]
    caches: dict[str, Path] = {}

    def cold_check(code: str) -> Measured:
        caches[code] = bench.fresh_cache()
        return bench.check(caches[code], code, [matrix])[0]

    def cold_pytest(code: str) -> Measured:
        return bench.pytest(bench.fresh_cache(), code=code, target=matrix)

    check_cold = _by_code(bench, bench.cold_reps, cold_check)
    pytest_cold = _by_code(bench, bench.cold_reps, cold_pytest)
    check_warm = _by_code(
        bench, bench.warm_reps, lambda code: bench.check(caches[code], code, [matrix])[0]
    )
    pytest_warm = _by_code(
        bench, bench.warm_reps, lambda code: bench.pytest(caches[code], code=code, target=matrix)
    )
    startup = _by_code(bench, bench.warm_reps, bench.startup)

    def ratio(slow: dict[str, list], fast: dict[str, list], code: str) -> list[float]:
        return [s.wall / f.wall for s, f in zip(slow[code], fast[code], strict=True)]

    def rows(label: str, check: dict, pytest: dict, target: report.Target | None) -> list[Row]:
        wall = report.seconds
        return [
            Row(
                f"{label} `canary check`",
                [m.wall for m in check[AFTER]],
                wall,
                target,
                before=_before(check, lambda m: m.wall),
            ),
            Row(
                f"{label} `pytest`, 1 worker",
                [m.wall for m in pytest[AFTER]],
                wall,
                before=_before(pytest, lambda m: m.wall),
            ),
            Row(
                f"{label} `pytest` / `canary check`",
                ratio(pytest, check, AFTER),
                report.ratio,
                report.PYTEST_VS_CHECK,
                before=ratio(pytest, check, BEFORE) if BEFORE in bench.codes else None,
            ),
        ]

    section = Section(f"The pytest path: one matrix ({matrix.stem}), every locked release")
    section.rows = [
        *rows("cold", check_cold, pytest_cold, None),
        *rows("warm", check_warm, pytest_warm, report.WARM_ONE_MATRIX),
        Row(
            "start-up: `python -c 'import canary.cli.main'`",
            [m.wall for m in startup[AFTER]],
            report.seconds,
            note="part of the warm `canary check` above: interpreter and imports",
            before=_before(startup, lambda m: m.wall),
        ),
    ]
    return section


def strategies_section(bench: Bench, cache: Path) -> str:
    """The same warm run with each parse strategy (bench.strategies)."""
    plan = [
        ("canary", bench.warm_reps, "canary: verdicts per release file, indexes per content"),
        ("index-store", bench.warm_reps, "index-store: every check evaluated on stored indexes"),
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
    compared = (
        f"\nBefore: canary from {bench.codes[BEFORE]}, run interleaved with this checkout's "
        "(after) on the same workload."
        if BEFORE in bench.codes
        else ""
    )
    return (
        f"## canary benchmark, {when}\n\n"
        f"Machine: {machine()}, load average {_load()} at the start.\n"
        f"Workload: matrices {names}; every locked release ({len(files)} wheels).\n"
        f"Repetitions: warm {bench.warm_reps}, cold {bench.cold_reps} (each cold run downloads "
        f"tens of MB), slow strategies {bench.slow_reps}; numbers are medians.{compared}"
    )


def _load() -> str:
    try:
        return ", ".join(f"{v:.1f}" for v in os.getloadavg())
    except OSError:
        return "unknown"


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
    parser.add_argument(
        "--matrices", metavar="FOLDER", type=Path, help="the workload (default: ./matrices)"
    )
    parser.add_argument(
        "--before",
        metavar="CHECKOUT",
        type=Path,
        help="also measure the canary of this older checkout, side by side",
    )
    parser.add_argument(
        "--one", default="trl", metavar="NAME", help="the matrix of the pytest-path section"
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
        bench = Bench(
            Path.cwd(),
            args.warm_reps,
            args.cold_reps,
            args.slow_reps,
            folder=args.matrices,
            before=args.before,
        )
    except BenchError as exc:
        print(f"bench: {exc}", file=sys.stderr)
        return 2
    parts = [header(bench)]
    try:
        cold, caches, output = cold_section(bench)
        cache = caches[AFTER]
        parts.append(cold.render())
        _emit(parts[-1])
        if "warm" in args.sections:
            parts.append(warm_section(bench, caches).render())
            _emit(parts[-1])
        if "pytest-path" in args.sections:
            parts.append(pytest_path_section(bench, args.one).render())
            _emit(parts[-1])
        if "strategies" in args.sections:
            parts.append(strategies_section(bench, cache))
            _emit(parts[-1])
        if "scaling" in args.sections:
            cold_all = (cold.rows[0].median, output["stats"])
            parts.append(scaling_section(bench, cold_all, cache))
            _emit(parts[-1])
        if "explain" in args.sections:
            parts.append(explain_section(bench).render())
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
