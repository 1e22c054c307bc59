"""The architecture page's map: canary's packages by layer, from the layer contract's table
(tests/unit/test_layers.py: `BASE` and `LAYERS`, read as literals, never imported) and each
package's docstring, which names its modules one line each (tests/unit/test_package_contents.py
keeps that true), so the map changes when the code does.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

from canary.analysis.parselock import parse_locked

ROOT = Path(__file__).resolve().parent.parent
LAYER_TEST = ROOT / "tests" / "unit" / "test_layers.py"
#: what each layer is, by its number in LAYERS (the base layer, BASE, is 0)
LAYER_NAMES = {
    0: "Base: imported from any layer, importing nothing of canary above it",
    1: "Layer 1: the cache",
    2: "Layer 2: the sources, which fetch into the cache",
    3: "Layer 3: the static analysis of what they fetch",
    4: "Layer 4: the matrices, which name what the analysis reads",
    5: "Layer 5: judging",
    6: "Layer 6: the front ends' work",
    7: "Layer 7: the command line",
}


def layer_table() -> dict[str, int]:
    """Each package or top-level module and its layer, as the layer contract states them."""
    found: dict[str, object] = {}
    for node in parse_locked(LAYER_TEST.read_text(encoding="utf-8")).body:
        target: ast.expr
        if isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        else:
            continue
        if isinstance(target, ast.Name) and target.id in ("BASE", "LAYERS"):
            found[target.id] = ast.literal_eval(value)
    base = found["BASE"]
    layers = found["LAYERS"]
    assert isinstance(base, tuple) and isinstance(layers, dict), "test_layers.py changed shape"
    return {**{name: 0 for name in base if name != "canary"}, **layers}


def docstring(name: str) -> str:
    """A package's or module's docstring, found without importing it."""
    module = importlib.util.find_spec(name)
    assert module is not None and module.origin is not None, name
    tree = parse_locked(Path(module.origin).read_text(encoding="utf-8"))
    return ast.get_docstring(tree) or ""


def architecture() -> str:
    lines: list[str] = []
    table = layer_table()
    for layer in sorted(set(table.values())):
        lines += [f"## {LAYER_NAMES.get(layer, f'Layer {layer}')}", ""]
        for name in sorted(n for n, at in table.items() if at == layer):
            path = name.replace(".", "/")
            is_package = (ROOT / path / "__init__.py").is_file()
            shown = f"{path}/" if is_package else f"{path}.py"
            lines += [f"### `{shown}`", "", docstring(name), ""]
    return "\n".join(lines).rstrip("\n")
