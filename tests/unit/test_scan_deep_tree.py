"""A downstream tree is untrusted: a chain of more folders than Python's recursion limit (a
thousand, a few kB of names) is walked, not a RecursionError, in scan's selection and in what
it leaves out."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from canary.scan.downstream.selection import Selection

DEPTH = sys.getrecursionlimit() + 100


def chain(top: Path, name: str) -> Path:
    """`top/name/d/d/.../d` DEPTH folders deep, made one level at a time (os.makedirs recurses)."""
    folder = top / name
    folder.mkdir()
    for _ in range(DEPTH):
        folder = folder / "d"
        os.mkdir(folder)
    return folder


def test_a_chain_deeper_than_the_recursion_limit_is_walked(tmp_path):
    (tmp_path / ".git").mkdir()  # a repository: tests/ is left out by default
    deep = chain(tmp_path, "pkg")
    (deep / "patch.py").write_text("import trl\n")
    (tmp_path / "pkg" / "top.py").write_text("import trl\n")
    left = chain(tmp_path, "tests")
    (left / "test_x.py").write_text("import trl\n")
    selection = Selection(tmp_path)
    assert selection.files() == [deep / "patch.py", tmp_path / "pkg" / "top.py"]
    assert selection.left_out == {"tests/": 1}
