"""One name per concept (issue 24): no public class or type alias is defined in two modules of
canary, so a name read anywhere means one thing, and an import cannot pick the wrong one."""

from __future__ import annotations

import ast
from collections import defaultdict

from paths import ROOT

from canary.analysis.parselock import parse_locked


def _public_types(tree: ast.Module) -> list[str]:
    """Classes, and CamelCase names assigned at module level (aliases, unions, Protocols)."""
    names = [node.name for node in tree.body if isinstance(node, ast.ClassDef)]
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AnnAssign):
            targets = [node.target]
        names += [t.id for t in targets if isinstance(t, ast.Name) and t.id[:1].isupper()]
    return [name for name in names if not name.startswith("_") and not name.isupper()]


def test_no_public_type_name_is_defined_twice():
    where: dict[str, list[str]] = defaultdict(list)
    for path in sorted((ROOT / "canary").rglob("*.py")):
        for name in _public_types(parse_locked(path.read_text(encoding="utf-8"))):
            where[name].append(str(path.relative_to(ROOT)))
    assert {name: paths for name, paths in where.items() if len(paths) > 1} == {}
