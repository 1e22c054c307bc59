"""A downstream tree is untrusted: a chain of folders deeper than Python's recursion limit
(a thousand by default, a few kB of names) is walked, not a RecursionError, in scan's
selection and in what it leaves out. The test lowers the limit rather than build a thousand
folders: pytest removes its temporary folders recursively and would fail on those."""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

from canary.scan.downstream.selection import Selection

DEPTH = 300


def chain(top: Path, name: str) -> Path:
    folder = top / name / "/".join(["d"] * DEPTH)
    folder.mkdir(parents=True)
    return folder


def test_a_chain_deeper_than_the_recursion_limit_is_walked(tmp_path):
    (tmp_path / ".git").mkdir()  # a repository: tests/ is left out by default
    deep = chain(tmp_path, "pkg")
    (deep / "patch.py").write_text("import trl\n")
    (tmp_path / "pkg" / "top.py").write_text("import trl\n")
    left = chain(tmp_path, "tests")
    (left / "test_x.py").write_text("import trl\n")
    selection = Selection(tmp_path)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(len(inspect.stack(0)) + DEPTH // 2)  # the chain is deeper than this
    try:
        files, left_out = selection.files(), dict(selection.left_out)
    finally:
        sys.setrecursionlimit(limit)
    assert files == [deep / "patch.py", tmp_path / "pkg" / "top.py"]
    assert left_out == {"tests/": 1}
