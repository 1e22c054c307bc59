"""`python -m bench.recall MIRRORS`: had the client adopted canary, would it have told them?

Each incident in `incidents.yaml` is a commit of a client library that fixed breakage an
upstream release caused. For each, the fix's parent is extracted from its git folder under
MIRRORS (`OWNER+NAME/repo`, as a bare mirror holds it) into a scratch folder, `canary scan`
proposes its matrix for the upstream, and `canary check` judges that matrix on the last good
and the first broken release. An incident is caught when a proposed check that names the
incident's contract (its `needle`) holds on the last good release and fails on the first
broken one. `--confirm` first checks the incident's own contract on the two releases (it must
hold on one and fail on the other), so the data is verified against the upstream's sources;
`--confirm-only` does just that, without scanning. The run ends with recall per client and
per class of contract (`CLASSES`), then overall.
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

# What kind of contract broke, as issue 45 splits them: a name that moved or went away; the
# parameters of a function the client calls, replaces or passes keywords to; a method a client's
# subclass overrides or calls on its upstream base (`self.m()`, `super().m()`) or on an upstream
# object; an attribute read or written on an upstream object; source text a rewrite expects; a
# class's bases.
CLASSES = ("imports", "signatures", "methods", "attributes", "fingerprints", "bases")


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
    class_: str  # one of CLASSES (`class` in the data)

    @property
    def versions(self) -> str:
        return f"{self.last_good},{self.first_broken}"


def load(path: Path = _DATA) -> list[Incident]:
    with path.open() as handle:
        rows = yaml.safe_load(handle)["incidents"]
    incidents = [Incident(class_=row.pop("class"), **row) for row in rows]
    for incident in incidents:
        if incident.class_ not in CLASSES:
            raise ValueError(f"{path}: {incident.id}: class {incident.class_!r} not in {CLASSES}")
    return incidents


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
    parent = f"{incident.fix}^"
    git = ["git", "--git-dir", str(git_dir)]
    archive = subprocess.run([*git, "archive", parent], capture_output=True, check=False)
    if archive.returncode:
        # A mirror lacks a client's files of 4 MiB and more (images, data): take the scanned
        # folder and the files at the top (pyproject.toml and the like, which scan reads).
        listed = subprocess.run(
            [*git, "ls-tree", "--name-only", parent], capture_output=True, text=True, check=True
        )
        top = [name for name in listed.stdout.splitlines() if name != incident.scan.split("/")[0]]
        blobs = subprocess.run(
            [*git, "ls-tree", parent, "--", *top], capture_output=True, text=True, check=True
        )
        files = [line.split("\t", 1)[1] for line in blobs.stdout.splitlines() if " blob " in line]
        archive = subprocess.run(
            [*git, "archive", parent, incident.scan, *files], capture_output=True, check=True
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


def _share(hits: int, total: int) -> str:
    return f"{hits}/{total} ({100 * hits / total:.0f}%)" if total else "-"


def _cell(hits: list[bool]) -> str:
    return f"{sum(hits)}/{len(hits)}" if hits else "-"


def table(outcomes: list[tuple[Incident, bool]]) -> str:
    """Recall per client (rows) and per class (columns), with each row's, each column's and the
    overall share, as a Markdown table."""
    classes = [c for c in CLASSES if any(i.class_ == c for i, _ in outcomes)]
    clients = sorted({incident.client for incident, _ in outcomes})

    def row(name: str, chosen: list[tuple[Incident, bool]]) -> str:
        cells = [_cell([hit for i, hit in chosen if i.class_ == c]) for c in classes]
        hits = [hit for _, hit in chosen]
        return f"| {name} | " + " | ".join(cells) + f" | {_share(sum(hits), len(hits))} |"

    lines = [
        "| client | " + " | ".join(classes) + " | all |",
        "| --- |" + " --- |" * (len(classes) + 1),
    ]
    lines += [row(client, [o for o in outcomes if o[0].client == client]) for client in clients]
    lines.append(row("**all**", outcomes))
    shares = [
        _share(
            sum(h for i, h in outcomes if i.class_ == c), sum(i.class_ == c for i, _ in outcomes)
        )
        for c in classes
    ]
    lines.append("| **share** | " + " | ".join(shares) + " | |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.recall", description=__doc__)
    parser.add_argument("mirrors", type=Path, help="folder holding OWNER+NAME/repo git folders")
    parser.add_argument("--only", action="append", default=[], help="incident id (repeatable)")
    parser.add_argument("--confirm", action="store_true", help="verify each contract first")
    parser.add_argument(
        "--confirm-only", action="store_true", help="verify each contract, do not scan"
    )
    parser.add_argument("--data", type=Path, default=_DATA)
    args = parser.parse_args(argv)
    incidents = [i for i in load(args.data) if not args.only or i.id in args.only]
    outcomes: list[tuple[Incident, bool]] = []
    unconfirmed = 0
    for incident in incidents:
        with tempfile.TemporaryDirectory(prefix="canary-recall-") as scratch:
            if args.confirm or args.confirm_only:
                confirmed = confirm(incident, Path(scratch))
                if confirmed != "ok":
                    unconfirmed += 1
                    outcomes.append((incident, False))
                    print(f"{incident.id}: contract not confirmed ({confirmed})", flush=True)
                    continue
                if args.confirm_only:
                    print(f"confirmed  {incident.id}", flush=True)
                    continue
            hit, how = verdict(args.mirrors, incident, Path(scratch))
        outcomes.append((incident, hit))
        print(f"{'CAUGHT' if hit else 'missed'}  {incident.id}: {how}", flush=True)
    if args.confirm_only:
        print(f"confirmed {len(incidents) - unconfirmed} of {len(incidents)}")
        return 1 if unconfirmed else 0
    print(table(outcomes))
    caught = sum(hit for _, hit in outcomes)
    print(f"caught {_share(caught, len(outcomes))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
