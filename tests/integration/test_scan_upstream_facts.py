"""What scan proposes once it reads the upstream itself (`--source`): no `accepts`/`call` on a
signature that takes anything, and gated comments that say where a check starts, briefly."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import yaml
from commands import scan

UPSTREAM = {
    "transformers/__init__.py": "",
    "transformers/layers.py": """
        def forward_anything(*args, **kwargs):
            return args, kwargs

        def forward_named(x, scale=1.0, **kwargs):
            return x

        def only_positionals(*args):
            return args

        class Wrapper:
            def __init__(self, *args, **kwargs):
                self.args = args

        class Layer:
            def __init__(self, in_features, bias=True, **kwargs):
                self.bias = bias
    """,
}
DOWNSTREAM = """
    from transformers.layers import Layer, Wrapper, forward_anything, forward_named
    from transformers.layers import only_positionals

    def build():
        forward_anything(1, scale=2.0)
        forward_named(1, scale=2.0)
        only_positionals(1, scale=2.0)
        Wrapper(hidden=4)
        return Layer(4, bias=False, device="cpu")
"""


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")


pytestmark = pytest.mark.usefixtures("no_index")


def proposals(tmp_path: Path, downstream: str) -> dict[str, dict]:
    write(tmp_path / "up", UPSTREAM)
    write(tmp_path / "down", {"pkg/__init__.py": "", "pkg/patch.py": downstream})
    status, text = scan(str(tmp_path / "down"), ["transformers"], None, None, str(tmp_path / "up"))
    assert status == 0
    return {check["id"]: check for check in yaml.safe_load(text)["checks"]}


def test_no_keyword_or_call_check_on_a_signature_that_takes_anything(tmp_path):
    checks = proposals(tmp_path, DOWNSTREAM)
    anything = checks["forward-anything"]
    assert "accepts" not in anything and "call" not in anything
    assert anything["function"] == "forward_anything"
    assert "called with keyword arguments at pkg/patch.py:6" in anything["why"]
    wrapper = [c for c in checks.values() if c.get("function") == "Wrapper.__init__"]
    assert wrapper and all("accepts" not in c for c in wrapper)


def test_a_signature_naming_a_parameter_or_without_kwargs_keeps_its_checks(tmp_path):
    checks = proposals(tmp_path, DOWNSTREAM)
    assert checks["forward-named-call"]["call"] == {"args": 1, "keywords": ["scale"]}
    assert checks["only-positionals-call"]["call"] == {"args": 1, "keywords": ["scale"]}
    assert checks["layer-init-accepts"]["accepts"] == ["bias", "device"]
