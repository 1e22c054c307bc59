"""`canary scan PATH`: scan the downstream files, propose checks, print or write the matrices."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from canary.scan.emit import MergeError, Releases, merge_text, render_matrix
from canary.scan.findings import Finding
from canary.scan.patterns import scan_tree
from canary.scan.propose import Proposal, propose
from canary.scan.reexports import Reexports
from canary.scan.requirements import declared_releases

DEFAULT_UPSTREAMS = ("trl", "peft", "transformers")
_PACKAGE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass
class ScanResult:
    """What a scan of a downstream tree saw; `problems` are files it could not read."""

    findings: list[Finding] = field(default_factory=list)
    modules: set[str] = field(default_factory=set)
    files: int = 0
    problems: list[str] = field(default_factory=list)


def _skipped(folder: Path) -> bool:
    """Hidden folders, caches and virtual environments are not the downstream's code."""
    return (
        folder.name.startswith(".")
        or folder.name in ("__pycache__", "site-packages", "node_modules")
        or (folder / "pyvenv.cfg").exists()
    )


def python_files(root: Path) -> list[Path]:
    """The .py files under `root` (or `root` itself), in a stable order."""
    if root.is_file():
        return [root]
    found = []
    for path in sorted(root.iterdir()):
        if path.is_dir() and not _skipped(path):
            found += python_files(path)
        elif path.suffix == ".py" and path.is_file():
            found.append(path)
    return found


def scan_path(root: Path, upstreams: frozenset[str]) -> ScanResult:
    """Parse every downstream file (never import it) and collect the upstream uses."""
    result = ScanResult()
    base = root.parent if root.is_file() else root
    for path in python_files(root):
        name = path.relative_to(base).as_posix()
        try:
            scanner = scan_tree(ast.parse(path.read_bytes(), filename=name), name, upstreams)
        except (SyntaxError, ValueError, RecursionError, OSError) as exc:
            result.problems.append(f"{name}: not scanned: {exc}")
            continue
        result.findings += scanner.findings
        result.modules |= scanner.modules
        result.files += 1
    return result


def _releases(root: Path, upstream: str) -> Releases:
    folder = root if root.is_dir() else root.parent
    return declared_releases(folder, upstream) or Releases()


def _write_new(
    folder: Path, upstream: str, proposals: list[Proposal], releases: Releases, out: TextIO
) -> None:
    target = folder / f"{upstream}.yaml"
    target.write_text(render_matrix(upstream, proposals, releases), encoding="utf-8")
    out.write(f"wrote {target}: {len(proposals)} checks\n")


def _merge(folder: Path, upstream: str, proposals: list[Proposal], out: TextIO) -> None:
    target = folder / f"{upstream}.yaml"
    text = target.read_text(encoding="utf-8")
    merged, added = merge_text(text, str(target), proposals)
    if added:
        target.write_text(merged, encoding="utf-8")
    out.write(f"merged into {target}: {added} new checks of {len(proposals)} proposed\n")


def _usage_error(out: TextIO, message: str) -> int:
    out.write(f"canary scan: {message}\n")
    return 2


def scan_main(
    path: str,
    upstreams: list[str] | None,
    output: str | None,
    merge: str | None,
    out: TextIO,
    source: str | None = None,
) -> int:
    """Run `canary scan`; returns the exit status (0 done, 2 usage or file problem).

    `source` is a folder holding the upstream packages (a site-packages or a checkout), read
    statically to name the module that defines a re-exported class or function.
    """
    root = Path(path)
    if not root.exists():
        return _usage_error(out, f"{path}: no such file or folder")
    if output and merge:
        return _usage_error(out, "--output and --merge are alternatives; give one")
    names = [n.strip() for n in upstreams or DEFAULT_UPSTREAMS if n.strip()]
    if not names or any(not _PACKAGE_NAME.match(n) for n in names):
        return _usage_error(out, f"--upstream wants top-level package names, got {names}")
    folder = Path(output or merge or ".")
    if (output or merge) and not folder.is_dir():
        return _usage_error(out, f"{folder}: not a folder")
    if source and not Path(source).is_dir():
        return _usage_error(out, f"--source {source}: not a folder")
    result = scan_path(root, frozenset(names))
    defining = Reexports(Path(source)).defining if source else None
    proposed = propose(result.findings, result.modules, defining)
    for problem in result.problems:
        out.write(f"# {problem}\n")
    out.write(f"# scanned {result.files} files under {path}\n")
    status = 0
    for upstream in sorted(names):
        proposals = proposed.get(upstream, [])
        if not proposals:
            out.write(f"# no uses of {upstream} found\n")
        elif output:
            if (folder / f"{upstream}.yaml").exists():
                out.write(f"canary scan: {folder / upstream}.yaml exists; use --merge\n")
                status = 2
                continue
            _write_new(folder, upstream, proposals, _releases(root, upstream), out)
        elif merge and (folder / f"{upstream}.yaml").exists():
            try:
                _merge(folder, upstream, proposals, out)
            except MergeError as exc:
                out.write(f"canary scan: {exc}\n")
                status = 2
        elif merge:
            _write_new(folder, upstream, proposals, _releases(root, upstream), out)
        else:
            out.write(f"---\n# matrices/{upstream}.yaml\n")
            out.write(render_matrix(upstream, proposals, _releases(root, upstream)))
    return status
