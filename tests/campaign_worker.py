"""One canary run in its own process, for the campaigns that need real processes.

    python tests/campaign_worker.py MATRIX VERSIONS OUTPUT.json

Runs the real Runner over the comma-separated VERSIONS, reading the index and the cache the way
a user's run does (CANARY_INDEX_URL, CANARY_CACHE_DIR), and writes the results as JSON.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from canary.matrix import load_matrix
from canary.run import Runner, explicit_targets


def run_to_file(matrix: str, selection: str, output: str) -> None:
    """Judge `matrix` on `selection` and write [result, ...] as JSON to `output`."""
    runner = Runner(select=lambda _matrix, chosen: explicit_targets(chosen), jobs=4)
    report = runner.run([load_matrix(matrix)], selection)
    results = [r.to_json() for r in report.results]
    Path(output).write_text(json.dumps({"results": results, "stats": report.stats}))


if __name__ == "__main__":
    run_to_file(*sys.argv[1:4])
