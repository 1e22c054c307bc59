"""`python -m bench.large REPO`: what a large repository's maintainer meets first (issue 51):
`canary init` on a fresh checkout, then the first `canary check`, cold and warm, and how the
cost grows with the number of checks (25%, 50% and 100% of those init proposed).

REPO is cloned (`git clone`, then `--commit`) into a scratch folder, never into this project.
Each command is a subprocess measured from outside (bench.proc: wall, CPU of the process and
the parse workers it reaped, peak RSS); requests and bytes come from the check's JSON `stats`,
and for init from bench.tally. Every command runs on a cache folder of its own
(`CANARY_CACHE_DIR` in a scratch folder): cold is an empty one, so the shared cache is never
touched.

The steps, for this checkout's canary and, with `--before CHECKOUT`, an older one, interleaved:

1. init: `canary init --upstream ...` on a copy of the checkout, empty cache.
2. wider versions: each proposed matrix's `versions.releases` becomes the one of the matrix of
   the same upstream in `--releases-from` (the shipped matrices: transformers from 4.47.0, ...),
   then `canary lock`: the release range a project supporting older upstreams has, which makes
   ~38,000 results of axolotl's ~550 checks.
3. first check: `canary check --format json` on init's cache (what a new user runs next).
4. warm: the same again, `--warm-reps` times.
5. scale: at each `--fractions` percentage, the first that share of every matrix's checks, cold
   (an empty cache) then warm: the per-thousand columns say whether the cost is linear.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import yaml

from bench import report
from bench.proc import Measured
from bench.report import Row, Section, table
from bench.run import AFTER, BEFORE, Bench, BenchError, machine

#: what the proposed matrices are kept in (init's default --dir)
FOLDER = "canary"
INIT_CPU = report.Target(60.0, report.seconds)
FIRST_CPU = report.Target(40.0, report.seconds)
WARM = report.Target(1.5, report.seconds)
TALLY = Path(__file__).with_name("tally.py")
_RELEASES = re.compile(r"^  releases: .*$", re.MULTILINE)


@dataclass
class Adopted:
    """One code's run through steps 1 to 4."""

    init: Measured
    init_stats: dict[str, float]
    first: Measured
    first_out: dict
    warm: list[Measured]
    matrices: Path


class Large:
    """The scratch checkout and the commands of the benchmark, on `bench`'s codes."""

    def __init__(self, bench: Bench, repo: str, commit: str | None, upstreams: str) -> None:
        self.bench = bench
        self.upstreams = upstreams
        self.checkout = bench.scratch / "checkout"
        _git("clone", "--quiet", repo, str(self.checkout))
        if commit:
            _git("-C", str(self.checkout), "checkout", "--quiet", commit)
        self.commit = _git("-C", str(self.checkout), "rev-parse", "--short", "HEAD").strip()

    def copy(self, name: str) -> Path:
        tree = self.bench.scratch / name
        shutil.copytree(self.checkout, tree, symlinks=True, ignore=shutil.ignore_patterns(".git"))
        return tree

    def init(self, code: str, cache: Path) -> tuple[Measured, dict[str, float], Path]:
        tree = self.copy(f"tree-{code}")
        tallied = self.bench.scratch / f"init-{code}.json"
        # run as a file: an older checkout (--before) has no bench.tally of its own
        argv = [sys.executable, str(TALLY), str(tallied), "init", str(tree)]
        measured = self.bench.run([*argv, "--upstream", self.upstreams], cache, code)
        if measured.returncode != 0:
            raise BenchError(f"canary init exited {measured.returncode}:\n{measured.stderr[-800:]}")
        return measured, json.loads(tallied.read_text(encoding="utf-8")), tree / FOLDER

    def widen(self, matrices: Path, shipped: Path, code: str, cache: Path) -> None:
        """Each matrix's releases range as the shipped matrix of its upstream has it; relocked."""
        for path in sorted(matrices.glob("*.yaml")):
            theirs = shipped / path.name
            if not theirs.is_file():
                continue
            found = _RELEASES.search(theirs.read_text(encoding="utf-8"))
            if found is not None:
                text = path.read_text(encoding="utf-8")
                path.write_text(_RELEASES.sub(found.group(0), text, count=1), encoding="utf-8")
        argv = [sys.executable, "-m", "canary.cli.main", "lock", str(matrices)]
        locked = self.bench.run(argv, cache, code)
        if locked.returncode != 0:
            raise BenchError(f"canary lock exited {locked.returncode}:\n{locked.stderr[-800:]}")

    def check(self, matrices: Path, cache: Path, code: str) -> tuple[Measured, dict]:
        argv = [sys.executable, "-m", "canary.cli.main", "check", str(matrices), "-q"]
        measured = self.bench.run([*argv, "--format", "json"], cache, code)
        return measured, json.loads(measured.stdout)


def fraction(matrices: Path, percent: int, into: Path) -> Path:
    """A copy of the matrix folder with the first `percent`% of each matrix's checks (at least
    one), the locks as they are."""
    into.mkdir()
    for path in sorted(matrices.iterdir()):
        if path.suffix != ".yaml":
            shutil.copy2(path, into / path.name)
            continue
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        checks = data.get("checks") or []
        data["checks"] = checks[: max(1, math.ceil(len(checks) * percent / 100))]
        text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
        (into / path.name).write_text(text, encoding="utf-8")
    return into


def adopt(large: Large, shipped: Path, warm_reps: int) -> dict[str, Adopted]:
    """Steps 1 to 4 for every code, each step interleaved across the codes."""
    bench = large.bench
    caches = {code: bench.fresh_cache() for code in bench.codes}
    inits = {code: large.init(code, caches[code]) for code in bench.codes}
    for code, (_m, _s, matrices) in inits.items():
        large.widen(matrices, shipped, code, caches[code])
    firsts = {code: large.check(inits[code][2], caches[code], code) for code in bench.codes}
    warms: dict[str, list[Measured]] = {code: [] for code in bench.codes}
    for _ in range(warm_reps):
        for code in bench.codes:
            warms[code].append(large.check(inits[code][2], caches[code], code)[0])
    return {
        code: Adopted(
            init=inits[code][0],
            init_stats=inits[code][1],
            first=firsts[code][0],
            first_out=firsts[code][1],
            warm=warms[code],
            matrices=inits[code][2],
        )
        for code in bench.codes
    }


def adoption_section(runs: dict[str, Adopted]) -> Section:
    after = runs[AFTER]
    checks = sum(len(_checks(p)) for p in after.matrices.glob("*.yaml"))
    results = len(after.first_out["results"])
    section = Section(
        f"`canary init`, then the first `canary check`: {checks} checks, {results:,} results"
    )

    def row(
        what: str,
        value: Callable[[Adopted], list[float]],
        render: Callable[[float], str],
        target: report.Target | None = None,
        note: str = "",
    ) -> Row:
        before = value(runs[BEFORE]) if BEFORE in runs else None
        return Row(what, value(after), render, target, note, before=before)

    def first_stats(key: str) -> Callable[[Adopted], list[float]]:
        return lambda a: [float(a.first_out["stats"][key])]

    section.rows = [
        row("init CPU", lambda a: [a.init.cpu], report.seconds, INIT_CPU, "empty cache"),
        row("init wall", lambda a: [a.init.wall], report.seconds),
        row("init requests", lambda a: [a.init_stats["requests"]], report.count),
        row("init bytes", lambda a: [a.init_stats["bytes_downloaded"]], report.megabytes),
        row("init peak RSS", lambda a: [a.init.peak_rss], report.mebibytes, report.PEAK_RSS),
        row(
            "first check CPU",
            lambda a: [a.first.cpu],
            report.seconds,
            FIRST_CPU,
            "on init's cache, after `canary lock` of the wider ranges",
        ),
        row("first check wall", lambda a: [a.first.wall], report.seconds),
        row("first check requests", first_stats("requests"), report.count),
        row("first check bytes", first_stats("bytes_downloaded"), report.megabytes),
        row(
            "first check peak RSS",
            lambda a: [a.first.peak_rss],
            report.mebibytes,
            report.PEAK_RSS,
            _red(after.first_out),
        ),
        row("warm check wall", lambda a: [m.wall for m in a.warm], report.seconds, WARM),
        row("warm check CPU", lambda a: [m.cpu for m in a.warm], report.seconds),
        row("warm check peak RSS", lambda a: [m.peak_rss for m in a.warm], report.mebibytes),
    ]
    if BEFORE in runs:
        same = _results(runs[BEFORE].first_out) == _results(after.first_out)
        section.title += f"; results before and after {'identical' if same else 'DIFFER'}"
    return section


def _results(output: dict) -> list[tuple[str, ...]]:
    keys = ("upstream", "check", "version", "status", "detail")
    return [tuple(r[k] for k in keys) for r in output["results"]]


def scale_section(large: Large, runs: dict[str, Adopted], percents: list[int], reps: int) -> str:
    """Cold and warm `canary check` at each share of the checks, on this checkout's canary
    (a cold run downloads everything again: the older one's growth is not measured)."""
    bench = large.bench
    rows = []
    for percent in percents:
        for code in (AFTER,):
            folder = fraction(
                runs[code].matrices, percent, bench.scratch / f"part-{code}-{percent}"
            )
            cache = bench.fresh_cache()
            cold, out = large.check(folder, cache, code)
            warm = [large.check(folder, cache, code)[0] for _ in range(reps)]
            shutil.rmtree(cache, ignore_errors=True)
            rows.append(_scale_row(code, percent, folder, cold, out, warm))
    header = [
        "canary",
        "checks",
        "results",
        "cold CPU",
        "cold wall",
        "requests",
        "bytes",
        "cold peak RSS",
        "warm CPU",
        "warm wall",
        "warm peak RSS",
        "cold CPU / 1k results",
        "requests / 1k",
        "bytes / 1k",
        "cold RSS / 1k",
        "warm CPU / 1k",
    ]
    return "### Cost by the number of checks (each share cold, then warm)\n\n" + table(header, rows)


def _scale_row(
    code: str, percent: int, folder: Path, cold: Measured, out: dict, warm: list[Measured]
) -> list[str]:
    results = len(out["results"])
    per = 1000 / results if results else 0.0
    checks = sum(len(_checks(p)) for p in folder.glob("*.yaml"))
    warm_cpu = statistics.median(m.cpu for m in warm)
    stats = out["stats"]
    return [
        f"{code} ({percent}%)",
        report.count(checks),
        report.count(results),
        report.seconds(cold.cpu),
        report.seconds(cold.wall),
        report.count(stats["requests"]),
        report.megabytes(stats["bytes_downloaded"]),
        report.mebibytes(cold.peak_rss),
        report.seconds(warm_cpu),
        report.seconds(statistics.median(m.wall for m in warm)),
        report.mebibytes(statistics.median(m.peak_rss for m in warm)),
        report.seconds(cold.cpu * per),
        report.count(stats["requests"] * per),
        report.megabytes(stats["bytes_downloaded"] * per),
        report.mebibytes(cold.peak_rss * per),
        f"{warm_cpu * per * 1000:.0f} ms",
    ]


def _checks(path: Path) -> list:
    return (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("checks") or []


def _red(output: dict) -> str:
    summary = output["summary"]
    return ", ".join(f"{summary[k]:,} {k}" for k in summary if summary[k])


def _git(*args: str) -> str:
    try:
        done = subprocess.run(["git", *args], check=True, capture_output=True, text=True)
    except subprocess.CalledProcessError as exc:
        raise BenchError(f"git {' '.join(args)}: {exc.stderr.strip()}") from None
    return done.stdout


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.large", description=__doc__)
    parser.add_argument("repo", help="the repository to adopt canary in (a path or git URL)")
    parser.add_argument("--commit", help="check this commit out first (default: the clone's)")
    parser.add_argument(
        "--upstream",
        default="transformers,trl,peft,vllm,accelerate",
        help="init's --upstream (default: transformers,trl,peft,vllm,accelerate)",
    )
    parser.add_argument(
        "--releases-from",
        type=Path,
        default=Path("matrices"),
        metavar="FOLDER",
        help="take each upstream's `versions.releases` from FOLDER/NAME.yaml (default: matrices)",
    )
    parser.add_argument(
        "--fractions",
        default="25,50,100",
        help="percentages of the checks measured cold and warm (default 25,50,100; '' none)",
    )
    parser.add_argument("--warm-reps", type=int, default=3, help="repetitions of warm runs (3)")
    parser.add_argument(
        "--before", metavar="CHECKOUT", type=Path, help="also measure an older canary"
    )
    parser.add_argument("--output", metavar="FILE", help="also write the tables to FILE")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder")
    args = parser.parse_args(argv)
    try:
        args.fractions = [int(p) for p in args.fractions.split(",") if p.strip()]
    except ValueError:
        parser.error(f"--fractions {args.fractions}: whole percentages, comma-separated")
    if any(not 0 < p <= 100 for p in args.fractions) or args.warm_reps < 1:
        parser.error("fractions must be within 1..100 and --warm-reps >= 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        bench = Bench(
            Path.cwd(),
            args.warm_reps,
            1,
            1,
            folder=args.releases_from,
            before=args.before,
        )
        large = Large(bench, args.repo, args.commit, args.upstream)
    except BenchError as exc:
        print(f"bench: {exc}", file=sys.stderr)
        return 2
    parts = [
        f"## canary adopted by {args.repo} ({large.commit}), upstreams {args.upstream}\n\n"
        f"Machine: {_machine()}; releases as in {args.releases_from}/; "
        f"warm runs {args.warm_reps}, medians."
    ]
    try:
        runs = adopt(large, bench.folder, args.warm_reps)
        parts.append(adoption_section(runs).render())
        print(parts[-1] + "\n", file=sys.stderr, flush=True)
        if args.fractions:
            parts.append(scale_section(large, runs, args.fractions, args.warm_reps))
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


def _machine() -> str:
    load = ", ".join(f"{v:.1f}" for v in os.getloadavg())
    return f"{machine()}, load average {load} at the start"


if __name__ == "__main__":
    sys.exit(main())
