"""`python -m bench.driver`: one canary run in its own process, for the baseline and the scaling
rows, printing a JSON line (result count, statuses, fetch stats, parses).

It drives canary.engine.runner.Runner as `canary check` does (same parse pool); it only swaps the
parse strategy and may thin the locked releases to an evenly spread subset.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter

from bench.strategies import STRATEGIES, runner_for
from canary.analysis.pool import ParsePool
from canary.engine.runner import Runner
from canary.matrix.files import load_matrices
from canary.matrix.model import Matrix
from canary.matrix.targets import Target


def spread(items: list, count: int | None) -> list:
    """`count` items evenly spread over `items` (first and last included); all when None."""
    if count is None or count >= len(items):
        return list(items)
    if count <= 1:
        return items[:count]
    step = (len(items) - 1) / (count - 1)
    return [items[round(i * step)] for i in range(count)]


def subset(matrices: list[Matrix], count: int | None) -> dict[str, list[Target]]:
    """`count` locked releases over all matrices, spread evenly in every matrix's share."""
    runner = Runner()
    plan = [(m.upstream, t) for m in matrices for t in runner.targets(m, "releases")]
    runner.close()
    chosen: dict[str, list[Target]] = {m.upstream: [] for m in matrices}
    for upstream, target in spread(plan, count):
        chosen[upstream].append(target)
    return chosen


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.driver", description=__doc__)
    parser.add_argument("matrices", nargs="*", metavar="MATRIX")
    parser.add_argument("--strategy", choices=STRATEGIES, default="canary")
    parser.add_argument("--releases", type=int, help="only this many releases, spread evenly")
    parser.add_argument(
        "--no-stories",
        action="store_true",
        help="do not tell what failing subjects became (the cost of telling, by difference)",
    )
    args = parser.parse_args(argv)
    matrices = load_matrices(args.matrices)
    chosen = subset(matrices, args.releases)
    pool = ParsePool()  # as `canary check` parses
    runner = runner_for(args.strategy, pool, select=lambda m, _selection: chosen[m.upstream])
    runner.explains = not args.no_stories
    try:
        report = runner.run(matrices, "releases")
    finally:
        pool.close()
    statuses = Counter(r.status.value for r in report.results)
    line = {
        "results": len(report.results),
        "releases": sum(len(t) for t in chosen.values()),
        "summary": dict(statuses),
        "stats": report.stats,
        "parses": runner.modules.parses,
        # telling what failing subjects became (canary.engine.became), and for how many
        "explain_seconds": round(runner.explain_seconds, 3),
        "explained": sorted(
            f"{r.upstream}::{r.check}" for r in report.results if r.became is not None
        ),
    }
    json.dump(line, sys.stdout)
    sys.stdout.write("\n")
    return 1 if statuses.get("fail") or statuses.get("error") else 0


if __name__ == "__main__":
    sys.exit(main())
