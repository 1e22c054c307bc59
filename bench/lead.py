"""`python -m bench.lead MIRRORS`: how far ahead of a client's own fix canary would have gone red,
on upstream `main`, on the first pre-release and on the first final release.

For each incident of `incidents.yaml` whose upstream and client histories are under MIRRORS
(`OWNER+NAME/repo` git directories, as the `fetch` tool leaves them), the incident's contract
(the one a check scan proposes must name, see bench.recall) is judged as the nightly would:

- `main`: upstream `main` is replayed from the mirror through a loopback GitHub (bench.githost):
  main as it stood when the first broken release was uploaded (else when the client fixed it)
  is judged, and when the contract fails there, the commit that broke it is named as the
  nightly names it (canary.engine.culprit: compare, bisection over file reads, the pull
  request). Red on main from that commit's date (the next nightly after it).
- the first pre-release: every pre-release on the package index between the last good and the
  first broken release, oldest first, judged from its wheel; red from the upload of the first
  that fails.
- the first final release: red from the upload of the first broken release.

With `--proposed`, the check judged is the one `canary scan` proposes on the client's tree
before the fix that names the contract and catches it (bench.recall's), not the contract.

The lead of a route is the client's fix (its commit date in the client's mirror) minus when the
route went red, in days: positive, canary was ahead. Printed per incident, then per route the
median lead and how many were red before the fix, as the issue's table.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import subprocess
import sys
import tempfile
from datetime import datetime
from pathlib import Path

import yaml
from packaging.version import InvalidVersion, Version

from bench.githost import GitHost
from bench.recall import Incident, load, verdict
from canary import api
from canary.engine.culprit import Culprits
from canary.matrix.model import Matrix, load_matrix
from canary.settings import Settings
from canary.sources.context import SourceContext
from canary.sources.index_file import canonical_name
from canary.sources.tree import SourceError

ROOT = Path(__file__).resolve().parent.parent
#: where each upstream's repository is, for upstreams without a shipped matrix
REPOSITORIES = {"deepspeed": ("deepspeedai/DeepSpeed", "", "v{version}")}
ROUTES = ("main", "first pre-release", "first final release")


@dataclasses.dataclass
class Lead:
    incident: Incident
    fix: datetime
    red: dict[str, datetime | None]  # route -> when it went red (None: not before the fix)
    note: str = ""

    def days(self, route: str) -> float | None:
        red = self.red.get(route)
        return None if red is None else (self.fix - red).total_seconds() / 86400


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", f"--git-dir={repo}", *args], capture_output=True, text=True, check=False
    )
    return done.stdout.strip() if done.returncode == 0 else ""


def _when(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def proposed_check(mirrors: Path, incident: Incident, scratch: Path) -> dict | str:
    """The check `canary scan` proposes on the client's tree before the fix that names the
    incident's contract and catches it (holds on the last good release, fails on the first
    broken one), as bench.recall finds it; else why not, as recall says it (no proposed check
    names it; one does but is not pass -> fail, with what it was; the tree is not whole)."""
    try:
        caught, said = verdict(mirrors, incident, scratch)
    except subprocess.CalledProcessError:  # a mirror without some of the tree's blobs
        return "the client's tree before the fix is not whole in its mirror"
    if not caught:
        return f"scan: {said}"
    ids = said.removeprefix("caught by ").split(", ")
    written = yaml.safe_load((scratch / "out" / f"{incident.upstream}.yaml").read_text())
    check = next(c for c in written["checks"] if c["id"] == ids[0])
    return {key: value for key, value in check.items() if key not in ("id", "why")}


def _matrix(incident: Incident, folder: Path, check: dict | None = None) -> Matrix:
    """A one-check matrix of the incident's contract (or `check`), with its upstream's
    repository facts."""
    shipped = ROOT / "matrices" / f"{incident.upstream}.yaml"
    if shipped.is_file():
        head = load_matrix(shipped)
        github, src, tag, pypi = head.github, head.src, head.tag, head.pypi
        package = head.package
    else:
        github, src, tag = REPOSITORIES[incident.upstream]
        pypi = package = incident.upstream
    data = {
        "upstream": incident.upstream,
        "package": package,
        "pypi": pypi,
        "github": github,
        "src": src,
        "tag": tag,
        "versions": {"releases": f">={incident.last_good}"},
        "checks": [{"id": "contract", **(check or incident.contract)}],
    }
    path = folder / f"{incident.id}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return load_matrix(path)


def _uploads(context: SourceContext, pypi: str) -> dict[str, datetime]:
    """Each version's first upload on the package index (its PEP 691 page's upload-time)."""
    reply = context.http.get(
        f"{context.index.index_url}{canonical_name(pypi)}/",
        {"Accept": "application/vnd.pypi.simple.v1+json"},
        allow=(),
    )
    page = json.loads(reply.content)
    found: dict[str, datetime] = {}
    for item in page.get("files", []):
        version = _file_version(item.get("filename", ""), pypi)
        when = item.get("upload-time")
        if version and when:
            stamp = _when(when)
            found[version] = min(found.get(version, stamp), stamp)
    return found


def _file_version(filename: str, pypi: str) -> str | None:
    stem = filename.removesuffix(".tar.gz").removesuffix(".zip").removesuffix(".whl")
    parts = stem.split("-")
    if len(parts) < 2:
        return None
    try:
        return str(Version(parts[1]))
    except InvalidVersion:
        return None


def _fails(matrix: Matrix, version: str, settings: Settings) -> bool | None:
    """Whether the contract fails on a release from the index (None: it could not be read)."""
    report = api.check([str(matrix.path)], versions=version, settings=settings)
    status = report.results[0].status.value if report.results else "error"
    return None if status in ("error", "skip") else status in ("fail", "warn")


def measure(
    mirrors: Path, incident: Incident, settings: Settings, scratch: Path, proposed: bool = False
) -> Lead | None:
    matrix = _matrix(incident, scratch)
    upstream = mirrors / str(matrix.github).replace("/", "+") / "repo"
    client = mirrors / incident.client.replace("/", "+") / "repo"
    fixed = _git(client, "log", "-1", "--format=%cI", incident.fix)
    if not upstream.is_dir() or not fixed:
        return None
    lead = Lead(incident, _when(fixed), dict.fromkeys(ROUTES))
    if proposed:
        check = proposed_check(mirrors, incident, Path(tempfile.mkdtemp(dir=scratch)))
        if isinstance(check, str):
            lead.note = check
            return lead
        matrix = _matrix(incident, scratch, check)
    with SourceContext(settings) as context:
        uploads = _uploads(context, matrix.pypi)
    final = uploads.get(str(Version(incident.first_broken)))
    if final is not None and final < lead.fix:
        lead.red["first final release"] = final
    low, high = Version(incident.last_good), Version(incident.first_broken)
    ahead = sorted((v for v in uploads if Version(v).is_prerelease), key=Version)
    for version in (v for v in ahead if low < Version(v) < high):
        if uploads[version] >= lead.fix:
            break
        if _fails(matrix, version, settings):
            lead.red["first pre-release"] = uploads[version]
            break
    until = min(final, lead.fix) if final is not None else lead.fix
    head = _git(
        upstream, "rev-list", "-1", "--first-parent", f"--before={until.isoformat()}", "HEAD"
    )
    good = matrix.tag.format(version=incident.last_good)
    with GitHost({str(matrix.github): upstream}) as host:
        host.branches[str(matrix.github), "main"] = head
        here = dataclasses.replace(
            settings, github_raw_url=host.raw_url, github_api_url=host.api_url, github_token=None
        )
        with SourceContext(here) as context:
            culprits = Culprits(context)
            try:
                held = culprits.holds(matrix, matrix.checks[0], head)
                if held is not False:
                    told = "holds" if held else "is an error (undecided), not a fail,"
                    lead.note = f"{told} on main at {until:%Y-%m-%d}"
                    return lead
                found = culprits.name(matrix, matrix.checks[0], good, "main")
            except SourceError as exc:
                lead.note = f"main not replayed: {exc}"
                return lead
    lead.red["main"] = _when(found.date)
    pull = f" (#{found.pull} {found.pull_title!r})" if found.pull else ""
    lead.note = (
        f"broken on {incident.upstream} main by {found.commit[:9]}{pull}, {found.date[:10]}; "
        f"{found.judged} judgings over {found.between} commits"
    )
    return lead


def _median(values: list[float]) -> str:
    return f"{statistics.median(values):+.1f} days" if values else "-"


def table(leads: list[Lead]) -> str:
    lines = [
        "| route | median lead over the client's fix | red before the fix |",
        "| --- | --- | --- |",
    ]
    for route in ROUTES:
        days = [d for lead in leads if (d := lead.days(route)) is not None]
        lines.append(f"| {route} | {_median(days)} | {len(days)}/{len(leads)} |")
    every = [
        max(d for route in ROUTES if (d := lead.days(route)) is not None)
        for lead in leads
        if any(lead.days(route) is not None for route in ROUTES)
    ]
    lines.append(f"| all three | {_median(every)} | {len(every)}/{len(leads)} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.lead")
    parser.add_argument("mirrors", type=Path, help="folder of OWNER+NAME/repo git mirrors")
    parser.add_argument("-k", dest="only", help="only incidents whose id contains this")
    parser.add_argument(
        "--proposed",
        action="store_true",
        help="judge the check canary scan proposes on the client's tree before the fix (the "
        "one naming the contract that catches it), not the incident's contract",
    )
    args = parser.parse_args(argv)
    leads: list[Lead] = []
    skipped: list[str] = []
    with tempfile.TemporaryDirectory() as scratch:
        settings = Settings.from_environment()
        for incident in load():
            if args.only and args.only not in incident.id:
                continue
            lead = measure(args.mirrors, incident, settings, Path(scratch), args.proposed)
            if lead is None:
                skipped.append(incident.id)
                continue
            leads.append(lead)
            days = ", ".join(
                f"{route} {d:+.1f}" if (d := lead.days(route)) is not None else f"{route} -"
                for route in ROUTES
            )
            print(f"{incident.id}: fix {lead.fix:%Y-%m-%d}; {days}; {lead.note}", flush=True)
    print(f"\n{len(leads)} incidents with traceable history ({len(skipped)} without a mirror)\n")
    print(table(leads))
    return 0


if __name__ == "__main__":
    sys.exit(main())
