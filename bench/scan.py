"""`python -m bench.scan PATH`: what `canary scan PATH` costs the first time and again.

Scans PATH (a downstream package, e.g. an unpacked wheel of a library that patches
transformers) twice with `--output` into scratch folders, on the cache `--cache DIR` (default:
canary's own, so the releases it reads are usually cached already): the first run fills the
scan's own entries (each file's passes, the verdicts on each release), the second is the warm
scan. Prints wall time, CPU and peak memory of both, and whether they wrote the same matrices.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from bench.proc import Measured, measure


def _scan(path: Path, out: Path, env: dict[str, str]) -> Measured:
    argv = [sys.executable, "-m", "canary.cli.main", "scan", str(path), "--output", str(out)]
    measured = measure(argv, env)
    if measured.returncode != 0:
        tail = "\n".join(measured.stderr.strip().splitlines()[-5:])
        raise SystemExit(f"{' '.join(argv)} exited {measured.returncode}:\n{tail}")
    return measured


def _written(folder: Path) -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.yaml"))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.scan", description=__doc__)
    parser.add_argument("path", type=Path, help="the downstream package to scan")
    parser.add_argument("--cache", type=Path, help="the cache folder (default: canary's own)")
    args = parser.parse_args(argv)
    env = dict(os.environ)
    if args.cache is not None:
        env["CANARY_CACHE_DIR"] = str(args.cache)
    files = sum(1 for _ in args.path.rglob("*.py")) if args.path.is_dir() else 1
    with tempfile.TemporaryDirectory(prefix="canary-bench-scan-") as scratch:
        first = _scan(args.path, Path(scratch) / "first", env)
        again = _scan(args.path, Path(scratch) / "again", env)
        same = _written(Path(scratch) / "first") == _written(Path(scratch) / "again")
    print(f"canary scan {args.path} ({files} .py files)")
    for label, run in (("first", first), ("again (warm)", again)):
        mib = run.peak_rss / 2**20
        print(f"  {label:13} wall {run.wall:7.2f} s  cpu {run.cpu:7.2f} s  peak {mib:6.0f} MiB")
    print(f"  same matrices written: {'yes' if same else 'NO'}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
