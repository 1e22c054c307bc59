"""The import-layer contract: the infrastructure below the engine in order (cache/ below
sources/ below analysis/ below matrix/, what a maintainer writes), the engine below the front
ends, no import circle anywhere (function-level imports included), and nothing but `python -m
canary` imports the command line."""

from __future__ import annotations

import ast
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest
from paths import ROOT

from canary.analysis.parselock import parse_locked

PACKAGE = ROOT / "canary"
#: imported from any layer; they import nothing of canary's above them
BASE = (
    "canary",
    "canary._version",
    "canary.errors",
    "canary.settings",
    "canary.compat",
    "canary.safety",  # how untrusted text is shown, and no write through a link
)
#: the modules directly in canary/; everything else lives in a package of its layer
TOP_LEVEL = {"__init__", "__main__", "_version", "api", "errors", "settings"}
#: layer 1 in order: the cache (files on disk), the sources (which fetch into it), the analysis
#: (which parses what they fetch), the matrix (which names what the analysis reads)
LAYERS = {
    "canary.cache": 1,
    "canary.sources": 2,
    "canary.analysis": 3,
    "canary.matrix": 4,
    "canary.engine": 5,
    "canary.reports": 6,
    "canary.scan": 6,
    "canary.init": 6,
    "canary.action": 6,
    "canary.pytest_plugin": 6,
    "canary.api": 6,
    "canary.cli": 7,
    "canary.__main__": 7,
}
#: the command line's layer: nothing below it imports it
COMMAND_LINE = LAYERS["canary.cli"]


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(path): path for path in PACKAGE.rglob("*.py")}


def imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The canary modules `name` imports anywhere in its body (lazy imports too)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    tree = parse_locked(path.read_text(encoding="utf-8"))
    typing_only = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If)
        and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING")
        for inner in ast.walk(node)
    }
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue  # names for annotations only: no import at run time
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, *([base] if base else [])])
            targets = [f"{base}.{alias.name}" for alias in node.names] + [base]
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    """Every module's canary imports, read once for the module's four tests (0.6 s each)."""
    found = modules()
    return {name: imports(name, path, set(found)) for name, path in found.items()}


def layer(name: str) -> int | None:
    if any(name == base or name.startswith(f"{base}.") for base in BASE if base != "canary"):
        return 0
    if name == "canary":
        return 0
    for prefix, level in LAYERS.items():
        if name == prefix or name.startswith(f"{prefix}."):
            return level
    return None


def test_every_module_has_a_layer():
    assert [name for name in modules() if layer(name) is None] == []


def test_no_module_imports_a_layer_above_its_own(graph):
    upward = [
        f"{name} -> {target}"
        for name, targets in graph.items()
        for target in targets
        if (layer(target) or 0) > (layer(name) or 0)
    ]
    assert upward == []


def test_canary_holds_only_its_few_top_level_modules():
    assert {path.stem for path in PACKAGE.glob("*.py")} <= TOP_LEVEL


def test_safety_imports_nothing_of_canary_but_errors(graph):
    outside = sorted(
        f"{name} -> {target}"
        for name, targets in graph.items()
        if name == "canary.safety" or name.startswith("canary.safety.")
        for target in targets
        if target != "canary.errors" and not target.startswith("canary.safety")
    )
    assert outside == []


def test_nothing_imports_the_command_line(graph):
    users = sorted(
        name
        for name, targets in graph.items()
        if any(t.startswith("canary.cli") for t in targets) and layer(name) != COMMAND_LINE
    )
    assert users == []


def test_there_is_no_import_circle(graph):
    circles: list[list[str]] = []
    state: dict[str, int] = defaultdict(int)  # 0 new, 1 on the path, 2 done
    path: list[str] = []

    def visit(name: str) -> None:
        state[name] = 1
        path.append(name)
        for target in sorted(graph.get(name, ())):
            if target == "canary":
                continue  # the package itself: its names load lazily, on first use
            if state[target] == 1:
                circles.append([*path[path.index(target) :], target])
            elif state[target] == 0:
                visit(target)
        path.pop()
        state[name] = 2

    for name in sorted(graph):
        if state[name] == 0:
            visit(name)
    assert circles == []


def test_loading_a_matrix_loads_no_indexer_cache_or_source():
    """`load_matrix` is the pre-commit hook's path (`canary validate`): it reads signatures
    (`canary.analysis.parameters`) and nothing of the engine's machinery (16 analysis modules
    and the cache's memo came along with `canary.analysis` before its names loaded lazily)."""
    code = (
        "import sys; from canary.matrix.model import load_matrix; "
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('canary.'))))"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    loaded = set(run.stdout.split())
    analysis = {m for m in loaded if m.startswith("canary.analysis.")}
    assert analysis <= {
        f"canary.analysis.{m}" for m in ("model", "parameters", "lines", "parselock")
    }
    assert not [
        m for m in loaded if m.startswith(("canary.cache", "canary.sources", "canary.engine"))
    ]
