"""`canary scan --merge DIR`: the matrices already in DIR, whatever their upstream, and the
proposals appended to them.

Every matrix in the folder is merged into (not only those of the upstreams named), and what
any matrix of an upstream states or declines counts for all of them: a check moved from
`trl.yaml` to `trl-extra.yaml` is not proposed again.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from canary.scan.upstream.names import is_import_name, matrix_file
from canary.scan.writing.emit import check_ids, declined_ids


@dataclass(frozen=True)
class Existing:
    """A matrix file in the merge folder and the import name of its upstream."""

    path: Path
    package: str
    stated: frozenset[str]  # its check ids and the ids it ignores


def matrices_in(folder: Path) -> dict[str, list[Existing]]:
    """Import name -> the matrices of that upstream in `folder` (files that are no matrix,
    such as a lock or another YAML file, are passed over)."""
    found: dict[str, list[Existing]] = {}
    for path in sorted(folder.glob("*.yaml")):
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, yaml.YAMLError):
            continue  # merging into it reports why
        if not isinstance(data, dict) or not isinstance(data.get("upstream"), str):
            continue
        package = data.get("package") or data["upstream"]
        if not isinstance(package, str) or not is_import_name(package):
            continue
        ids = {*check_ids(data.get("checks")), *declined_ids(data)}
        found.setdefault(package, []).append(Existing(path, package, frozenset(ids)))
    return found


def merge_target(upstream: str, existing: list[Existing]) -> tuple[Existing, set[str]]:
    """The file to append to (`NAME.yaml` when there is one) and what the others state."""
    named = (f"{upstream}.yaml", matrix_file(upstream))
    target = next((e for e in existing if e.path.name in named), existing[0])
    others = {i for e in existing if e is not target for i in e.stated}
    return target, others
