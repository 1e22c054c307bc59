"""`python -m bench.recall MIRRORS`: had the client adopted canary, would it have told them?

Each incident in `incidents.yaml` is a commit of a client library that fixed breakage an
upstream release caused. For each, the fix's parent is extracted from its git folder under
MIRRORS (`OWNER+NAME/repo`, as a bare mirror holds it) into a scratch folder, `canary scan`
proposes its matrix for the upstream, and `canary check` judges that matrix on the last good
and the first broken release. An incident is caught when a proposed check that names the
incident's contract (its `needle`) holds on the last good release and fails on the first
broken one. `--confirm` first checks the incident's own contract on the two releases (it must
hold on one and fail on the other), so the data is verified against the upstream's sources.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import yaml

_DATA = Path(__file__).with_name("incidents.yaml")


@dataclass(frozen=True)
class Incident:
    id: str
    client: str  # owner/name
    fix: str  # the commit that fixed the breakage
    scan: str  # the package folder scanned, inside the client's tree
    upstream: str
    contract: dict  # the broken contract, as one canary check
    last_good: str
    first_broken: str
    needle: str  # what a catching check's text names

    @property
    def versions(self) -> str:
        return f"{self.last_good},{self.first_broken}"


def load(path: Path = _DATA) -> list[Incident]:
    with path.open() as handle:
        rows = yaml.safe_load(handle)["incidents"]
    return [Incident(**row) for row in rows]


def _canary(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "canary.cli.main", *args]
    return subprocess.run(argv, capture_output=True, text=True, cwd=cwd, check=False)


def _statuses(matrix: Path, versions: str) -> dict[tuple[str, str], str]:
    """(check id, version) -> status of `canary check` on `matrix` at `versions`."""
    done = _canary("check", str(matrix), "--versions", versions, "--format", "json", "-q")
    try:
        results = json.loads(done.stdout)["results"]
    except (ValueError, KeyError) as exc:
        raise RuntimeError(f"canary check {matrix}: {done.stderr.strip()[-400:]}") from exc
    return {(r["check"], r["version"]): r["status"] for r in results}


def confirm(incident: Incident, scratch: Path) -> str:
    """'ok' when the incident's contract holds on the last good and fails on the first
    broken release; otherwise what it did."""
    matrix = scratch / f"{incident.upstream}.yaml"
    check = {"id": "contract", **incident.contract}
    spec = {"upstream": incident.upstream, "package": incident.contract.get("package")}
    spec = {k: v for k, v in spec.items() if v}
    check.pop("package", None)
    spec["versions"] = {"releases": f">={incident.last_good}"}
    spec["checks"] = [check]
    matrix.write_text(yaml.safe_dump(spec, sort_keys=False))
    status = _statuses(matrix, incident.versions)
    seen = (
        status.get(("contract", incident.last_good)),
        status.get(("contract", incident.first_broken)),
    )
    return "ok" if seen == ("pass", "fail") else f"{seen[0]} -> {seen[1]}"


def _extract(mirrors: Path, incident: Incident, into: Path) -> None:
    git_dir = mirrors / incident.client.replace("/", "+") / "repo"
    archive = subprocess.run(
        ["git", "--git-dir", str(git_dir), "archive", f"{incident.fix}^"],
        capture_output=True,
        check=True,
    )
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)


def verdict(mirrors: Path, incident: Incident, scratch: Path) -> tuple[bool, str]:
    """(caught, what happened): scan on the fix's parent, check on the two releases."""
    tree = scratch / "tree"
    tree.mkdir()
    _extract(mirrors, incident, tree)
    out = scratch / "out"
    done = _canary(
        "scan", str(tree / incident.scan), "--upstream", incident.upstream, "--output", str(out)
    )
    matrix = out / f"{incident.upstream}.yaml"
    if not matrix.exists():
        return False, f"scan wrote no {incident.upstream} matrix: {done.stderr.strip()[-300:]}"
    checks = yaml.safe_load(matrix.read_text()).get("checks") or []
    named = [c["id"] for c in checks if incident.needle in json.dumps(c)]
    if not named:
        return False, f"no proposed check names {incident.needle}"
    status = _statuses(matrix, incident.versions)
    seen = {
        c: (status.get((c, incident.last_good)), status.get((c, incident.first_broken)))
        for c in named
    }
    caught = [c for c, s in seen.items() if s == ("pass", "fail")]
    if caught:
        return True, f"caught by {', '.join(caught)}"
    return False, "proposed but not red: " + "; ".join(
        f"{c}: {a} -> {b}" for c, (a, b) in seen.items()
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.recall", description=__doc__)
    parser.add_argument("mirrors", type=Path, help="folder holding OWNER+NAME/repo git folders")
    parser.add_argument("--only", action="append", default=[], help="incident id (repeatable)")
    parser.add_argument("--confirm", action="store_true", help="verify each contract first")
    parser.add_argument("--data", type=Path, default=_DATA)
    args = parser.parse_args(argv)
    incidents = [i for i in load(args.data) if not args.only or i.id in args.only]
    caught = 0
    for incident in incidents:
        with tempfile.TemporaryDirectory(prefix="canary-recall-") as scratch:
            if args.confirm:
                confirmed = confirm(incident, Path(scratch))
                if confirmed != "ok":
                    print(f"{incident.id}: contract not confirmed ({confirmed})", flush=True)
                    continue
            hit, how = verdict(args.mirrors, incident, Path(scratch))
        caught += hit
        print(f"{'CAUGHT' if hit else 'missed'}  {incident.id}: {how}", flush=True)
    share = f"{100 * caught / len(incidents):.0f}%" if incidents else "-"
    print(f"caught {caught} of {len(incidents)} ({share})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
