"""One canary run in its own process, for the campaigns that need real processes.

    python tests/campaign_worker.py MATRIX VERSIONS OUTPUT.json

Runs the real Runner over the comma-separated VERSIONS, reading the index and the cache the way
a user's run does (CANARY_INDEX_URL, CANARY_CACHE_DIR, GITHUB_TOKEN), and writes the results as
JSON with the process's peak resident memory. A lock beside the matrix lends its files, as in
`canary check --versions A,B`. Campaign knobs: CAMPAIGN_DEADLINE (seconds per request, the
campaigns' fast retry policy otherwise), CAMPAIGN_FILE_LIMIT (bytes any written file may reach:
a full disk, without filling one).
"""

from __future__ import annotations

import dataclasses
import json
import os
import resource
import signal
import sys
from pathlib import Path

from campaign_upstream import POLICY

from canary.engine.runner import Runner, explicit_targets
from canary.matrix.model import load_matrix
from canary.settings import Settings
from canary.sources.context import SourceContext


def run_to_file(matrix: str, selection: str, output: str) -> None:
    """Judge `matrix` on `selection` and write {results, stats, peak_rss_kib} to `output`."""
    limit = os.environ.get("CAMPAIGN_FILE_LIMIT")
    if limit:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # writes past it fail with EFBIG instead
        resource.setrlimit(resource.RLIMIT_FSIZE, (int(limit), resource.RLIM_INFINITY))
    policy = POLICY
    if os.environ.get("CAMPAIGN_DEADLINE"):
        policy = dataclasses.replace(POLICY, deadline=float(os.environ["CAMPAIGN_DEADLINE"]))
    locked = Path(matrix).with_suffix(".lock").exists()
    settings = Settings.from_environment(jobs=4)
    runner = Runner(
        settings=settings,
        select=None if locked else lambda _m, chosen: explicit_targets(chosen),
        sources=SourceContext(settings, policy=policy),
    )
    report = runner.run([load_matrix(matrix)], selection)
    if limit:
        resource.setrlimit(resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY,) * 2)
    results = [r.to_json() for r in report.results]
    Path(output).write_text(
        json.dumps({"results": results, "stats": report.stats, "peak_rss_kib": peak_rss_kib()})
    )


def peak_rss_kib() -> int:
    """This process's own peak: VmHWM, since ru_maxrss keeps the forking parent's across exec."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


if __name__ == "__main__":
    run_to_file(*sys.argv[1:4])
