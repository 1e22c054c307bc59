"""How many GitHub API requests the nightly's check of the shipped matrices' branches makes:
`python -m bench.nightly_requests MIRRORS` (MIRRORS holds OWNER+NAME/repo git directories, as
the `fetch` tool leaves them).

Each shipped matrix's branches (`include: [main]`, `master`) are read from a loopback GitHub
(bench.githost) serving the mirror's newest commit, three times: cold (an empty cache), warm
(the same cache within the hour: fresh entries answer) and the next night (the same cache,
every branch entry stale: revalidated). The releases come from the package index, never the
GitHub API, so they are not run. Printed: per matrix and in all, the API requests by kind
(a 304 apart, which GitHub does not count against the limit) and the raw-content requests.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import tempfile
from collections import Counter
from pathlib import Path

from bench.githost import GitHost
from canary.engine.runner import Runner
from canary.matrix.files import load_matrices
from canary.reports.grid import is_release
from canary.settings import Settings
from canary.sources.context import SourceContext

ROOT = Path(__file__).resolve().parent.parent
#: the runs measured, and the freshness limit each gives the cache (0: everything stale)
NIGHTS = (("cold", 3600.0), ("warm", 3600.0), ("next night", 0.0))


def measure(mirrors: Path) -> int:
    matrices = [m for m in load_matrices([str(ROOT / "matrices")]) if m.github]
    served = {
        m.github: mirrors / m.github.replace("/", "+") / "repo"
        for m in matrices
        if m.github and (mirrors / m.github.replace("/", "+") / "repo").is_dir()
    }
    branches = {m.upstream: [v for v in m.versions.include if not is_release(v)] for m in matrices}
    with tempfile.TemporaryDirectory() as cache, GitHost(served) as host:
        settings = dataclasses.replace(
            Settings.from_environment(),
            cache_dir=Path(cache),
            github_raw_url=host.raw_url,
            github_api_url=host.api_url,
            github_token=None,
        )
        totals: dict[str, Counter[str]] = {}
        for night, max_age in NIGHTS:
            before, not_modified, raw = Counter(host.api), host.not_modified, host.raw
            for matrix in matrices:
                if matrix.github not in served or not branches[matrix.upstream]:
                    continue
                with SourceContext(settings, max_age=max_age) as sources:
                    runner = Runner(settings=settings, sources=sources, explains=False)
                    report = runner.run([matrix], ",".join(branches[matrix.upstream]))
                red = sum(r.status.is_red for r in report.results)
                spent = Counter(host.api)
                spent.subtract(before)
                print(
                    f"{night:10} {matrix.upstream:22} {len(report.results):4} results "
                    f"({red} red); API so far {sum(spent.values())}"
                )
            spent = Counter(host.api)
            spent.subtract(before)
            spent["304 (not counted)"] = host.not_modified - not_modified
            spent["raw (not the API)"] = host.raw - raw
            totals[night] = spent
    missing = sorted(m.github for m in matrices if m.github not in served and m.github)
    print()
    for night, spent in totals.items():
        counted = sum(v for k, v in spent.items() if "(" not in k)
        kinds = ", ".join(f"{k} {v}" for k, v in sorted(spent.items()) if v)
        print(f"{night}: {counted} API requests counted by GitHub ({kinds})")
    if missing:
        print(f"not served (no mirror): {', '.join(missing)}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.nightly_requests")
    parser.add_argument("mirrors", type=Path, help="folder of OWNER+NAME/repo git mirrors")
    return measure(parser.parse_args(argv).mirrors)


if __name__ == "__main__":
    sys.exit(main())
