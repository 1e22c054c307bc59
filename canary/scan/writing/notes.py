"""What scan says beside its matrices, for `canary scan` and `canary init` to print."""

from __future__ import annotations

from canary.safety.untrusted import showable
from canary.scan.downstream.package import ScanResult


def notes(result: ScanResult | None, path: str, unused: list[str]) -> list[str]:
    """What scan says beside its matrices, as `#` comments: the files it could not read, how
    many it scanned and the rewrites it could place under no upstream (given `result`), and
    the upstreams in `unused` it saw no use of."""
    said = [f"# {problem}" for problem in result.problems] if result is not None else []
    if result is not None:
        left_out = f" (not scanned: {result.left_out})" if result.left_out else ""
        said.append(f"# scanned {result.files} files under {showable(path)}{left_out}")
        said += [f"# {result.unplaced}"] if result.unplaced else []
    return said + [f"# no uses of {upstream} found" for upstream in unused]
