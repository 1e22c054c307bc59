"""Small units: no function of canary over 80 lines, no class over 300 (issue 24's bound), so
a reader takes in each at once."""

from __future__ import annotations

import ast

from paths import ROOT

from canary.analysis.parselock import parse_locked

MAX_FUNCTION, MAX_CLASS = 80, 300


def test_no_function_over_80_lines_and_no_class_over_300():
    found = []
    for path in sorted((ROOT / "canary").rglob("*.py")):
        for node in ast.walk(parse_locked(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                continue
            size = (node.end_lineno or node.lineno) - node.lineno + 1
            limit = MAX_CLASS if isinstance(node, ast.ClassDef) else MAX_FUNCTION
            if size > limit:
                found.append(f"{path.relative_to(ROOT)}: {node.name}: {size} lines")
    assert found == []
