"""How many GitHub API requests the nightly's check of the shipped matrices' branches makes:
`python -m bench.nightly_requests MIRRORS` (MIRRORS holds OWNER+NAME/repo git directories, as
the `fetch` tool leaves them).

Each shipped matrix's branches (`include: [main]`, `master`) are read from a loopback GitHub
(bench.githost) serving the mirror's newest commit, three times: cold (an empty cache), warm
(the same cache within the hour: fresh entries answer) and the next night (the same cache,
every branch entry stale: revalidated); after each run the nightly's follow-up records the
commit each branch was judged at (canary.engine.culprit.record_commits), as the Action does.
The releases come from the package index, never the GitHub API, so they are not run. Printed:
per matrix and in all, the API requests by kind (a 304 apart, which GitHub does not count
against the limit) and the raw-content requests.

`--stand-in UPSTREAM` (repeatable) serves, for a shipped upstream whose history cannot be
mirrored (transformers: over the mirror's size limit), a one-commit repository made of its
newest release's wheel (downloaded with pip, its package put under the matrix's `src`), so its
branch is read as the nightly reads it: the same files, in the same number, as `main` has
near a release. The wheel and the repository live in a scratch folder and are thrown away.
"""

from __future__ import annotations

import argparse
import dataclasses
import subprocess
import sys
import tempfile
import zipfile
from collections import Counter
from pathlib import Path

from bench.githost import GitHost
from canary.engine.culprit import Culprits, record_commits
from canary.engine.runner import Runner
from canary.matrix.files import load_matrices
from canary.matrix.model import Matrix
from canary.reports.grid import is_release
from canary.settings import Settings
from canary.sources.context import SourceContext

ROOT = Path(__file__).resolve().parent.parent
#: the runs measured, and the freshness limit each gives the cache (0: everything stale)
NIGHTS = (("cold", 3600.0), ("warm", 3600.0), ("next night", 0.0))


def stand_in(matrix: Matrix, scratch: Path) -> Path:
    """A git repository of one commit holding `matrix`'s upstream as its newest release's
    wheel has it, its package under the matrix's `src`, on each of the matrix's branches."""
    wheels = scratch / "wheels"
    pip = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:"]
    subprocess.run([*pip, "-q", "-d", str(wheels), matrix.pypi], check=True)
    (wheel,) = wheels.glob("*.whl")
    tree = scratch / matrix.upstream
    top = matrix.package.split(".")[0]
    with zipfile.ZipFile(wheel) as archive:
        inside = [n for n in archive.namelist() if n.split("/")[0] in (top, f"{top}.py")]
        archive.extractall(tree / matrix.src, inside)
    branch = next(v for v in matrix.versions.include if not is_release(v))
    git = ["git", "-C", str(tree), "-c", "user.name=bench", "-c", "user.email=bench@invalid"]
    subprocess.run([*git, "init", "-q", "-b", branch], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", f"{wheel.name} as a stand-in"], check=True)
    return tree / ".git"


def measure(mirrors: Path, stand_ins: tuple[str, ...] = ()) -> int:
    matrices = [m for m in load_matrices([str(ROOT / "matrices")]) if m.github]
    served = {
        m.github: mirrors / m.github.replace("/", "+") / "repo"
        for m in matrices
        if m.github and (mirrors / m.github.replace("/", "+") / "repo").is_dir()
    }
    branches = {m.upstream: [v for v in m.versions.include if not is_release(v)] for m in matrices}
    with tempfile.TemporaryDirectory() as scratch:
        for matrix in (m for m in matrices if m.upstream in stand_ins and m.github):
            served[str(matrix.github)] = stand_in(matrix, Path(scratch))
            print(f"{matrix.upstream}: a stand-in of its newest release's wheel", flush=True)
        return _nights(matrices, served, branches)


def _nights(matrices: list[Matrix], served: dict[str, Path], branches: dict[str, list[str]]) -> int:
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
                    for line in record_commits(report, [matrix], Culprits(sources)):
                        print(f"  {line}")
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
    parser.add_argument(
        "--stand-in",
        action="append",
        default=[],
        metavar="UPSTREAM",
        help="serve this shipped upstream's branch from its newest release's wheel (repeatable)",
    )
    args = parser.parse_args(argv)
    return measure(args.mirrors, tuple(args.stand_in))


if __name__ == "__main__":
    sys.exit(main())
