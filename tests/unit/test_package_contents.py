"""A package's docstring is its map: it names every module and sub-package it holds, one line
each (what it is for), and nothing it does not hold. A module added, moved or removed without
its line fails here; add a package to PACKAGES to hold it to the same rule."""

from __future__ import annotations

import ast
import re

import pytest
from paths import ROOT

from canary.analysis.parselock import parse_locked

#: packages whose docstring lists their contents (folders under the repository's root)
PACKAGES = (
    "canary/scan",
    "canary/scan/downstream",
    "canary/scan/upstream",
    "canary/scan/proposing",
    "canary/scan/writing",
)
# "- `name.py`: what it is for" (a module) or "- `name/`: ..." (a sub-package)
_LINE = re.compile(r"^- `(\w+(?:\.py|/))`: \S", re.MULTILINE)


def listed(package: str) -> list[str]:
    """The modules and sub-packages the package's docstring names, in its order."""
    tree = parse_locked((ROOT / package / "__init__.py").read_text(encoding="utf-8"))
    return _LINE.findall(ast.get_docstring(tree) or "")


def held(package: str) -> set[str]:
    """The modules (but `__init__.py`) and sub-packages the package's folder holds."""
    folder = ROOT / package
    modules = {p.name for p in folder.glob("*.py") if p.name != "__init__.py"}
    return modules | {f"{p.name}/" for p in folder.iterdir() if (p / "__init__.py").is_file()}


@pytest.mark.parametrize("package", PACKAGES)
def test_the_docstring_names_what_the_package_holds_once_each(package):
    names = listed(package)
    assert sorted(names) == sorted(held(package))  # nothing missing, nothing gone
    assert len(names) == len(set(names))


def test_the_rule_sees_a_module_added_without_its_line(tmp_path, monkeypatch):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text('"""A package.\n\n- `kept.py`: kept.\n"""\n')
    (package / "kept.py").write_text("")
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    assert sorted(listed("pkg")) == sorted(held("pkg"))
    (package / "added.py").write_text("")
    assert sorted(listed("pkg")) != sorted(held("pkg"))
