"""The runtime oracle's Python side (bench/probe.py) and its cells (bench/runtime.py) on a
purpose-made package: what CPython answers for each kind of contract, and what it leaves
undecided, said why. The two modules are loaded by their paths: the probe runs as a script in a
throwaway environment, and neither needs the rest of bench."""

from __future__ import annotations

import importlib.util
import sys
import textwrap

import pytest
from paths import ROOT


def _load(name: str):
    path = ROOT / "bench" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"bench_{name}_by_path", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses find their module
    spec.loader.exec_module(module)
    return module


probe = _load("probe")
Cell = _load("runtime").Cell


ORACLE_PACKAGE = {
    "oracle_up/__init__.py": "from .core import Trainer as Trainer\n",
    "oracle_up/core.py": """
        import functools

        def _other(x):
            return x

        def helper(a, b=1, *, c=None, **kwargs):
            return a

        helper = _other

        class Base:
            def hook(self): ...

        class Trainer(Base):
            def train(self, steps, *, resume=False):
                return steps

            @property
            def state(self):
                return 1

            @functools.wraps(_other)
            def wrapped(self, *args, **kwargs): ...

        Old = Trainer
    """,
    "oracle_up/broken.py": "def f(:\n    pass\n",
    "oracle_up/needs.py": "import not_installed_backend\n",
}


@pytest.fixture
def oracle_package(tmp_path, monkeypatch):
    for name, text in ORACLE_PACKAGE.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    monkeypatch.syspath_prepend(str(tmp_path))
    yield
    for name in [m for m in sys.modules if m.startswith("oracle_up")]:
        del sys.modules[name]


def _said(**contract) -> str:
    contract.setdefault("module", "oracle_up.core")
    return probe.judge({"key": "k", "alternatives": [contract]})["truth"]


def test_python_answers_each_kind_of_contract(oracle_package):
    assert _said(kind="symbol", name="helper") == probe.HOLDS
    assert _said(kind="function", name="helper", params=["a"]) == probe.FAILS  # _other's now
    assert _said(kind="function", name="helper", params=["x"]) == probe.HOLDS
    assert _said(kind="class", name="Old", methods=["train", "hook"], bases=["Base"]) == (
        probe.HOLDS
    )
    assert _said(kind="class", name="Trainer", methods=["hook"], own=True) == probe.FAILS
    call = {"args": 1, "keywords": ["resume"]}
    assert _said(kind="function", name="Trainer.train", call=call) == probe.HOLDS
    call = {"args": 2, "keywords": []}
    assert _said(kind="function", name="Trainer.train", call=call) == probe.FAILS
    assert _said(kind="function", name="Trainer.train", named=["steps", "resume"]) == probe.HOLDS
    assert _said(kind="function", name="Trainer.train", accepts=["other"]) == probe.FAILS
    pinned = [
        {"name": "self", "kind": "normal", "default": None},
        {"name": "steps", "kind": "normal", "default": None},
        {"name": "resume", "kind": "kwonly", "default": "False"},
    ]
    assert _said(kind="function", name="Trainer.train", signature=pinned) == probe.HOLDS
    pinned[-1]["default"] = "True"
    assert _said(kind="function", name="Trainer.train", signature=pinned) == probe.FAILS
    assert _said(kind="function", name="Trainer.state", contains=["return 1"]) == probe.HOLDS
    assert _said(kind="class", name="Trainer", contains=["def hook"]) == probe.FAILS
    assert _said(module="oracle_up.gone") == probe.FAILS
    assert _said(module="oracle_up.broken") == probe.FAILS


def test_what_python_cannot_answer_here_is_undecided_with_the_reason(oracle_package):
    check = {"key": "k", "alternatives": [{"module": "oracle_up.needs"}]}
    answer = probe.judge(check)
    assert answer["truth"] == probe.UNDECIDED
    assert "No module named 'not_installed_backend'" in answer["why"]
    # a wrapper (functools.wraps) may rename a keyword: not answered from the signature
    assert _said(kind="function", name="Trainer.wrapped", accepts=["y"]) == probe.UNDECIDED
    assert _said(kind="class", name="Trainer", attributes=["x"]) == probe.UNDECIDED
    assert _said(kind="symbol", name="Old", contains=["Old = Trainer"]) == probe.UNDECIDED


def test_a_cell_is_judged_against_python(oracle_package):
    def cell(status: str, truth: str, detail: str = "") -> str:
        return Cell("v", "shipped", "up", "c", "1.0", status, detail, truth, "").outcome

    assert cell("pass", "holds") == "agree"
    assert cell("pass", "fails") == "false pass"
    assert cell("fail", "holds") == "false fail"
    assert cell("warn", "holds", "x absorbed by **kwargs") == "agree"
    assert cell("warn", "holds", "a severity: info failure") == "false fail"
    assert cell("error", "fails", "not known for torch.nn.Module (outside up)") == (
        "said undecided"
    )
    assert cell("error", "holds", "timeout") == "canary error"
    assert cell("skip", "holds") == "gated"
