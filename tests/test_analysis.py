"""The module index: parsed once per content, persisted across runs, rebuilt when corrupt."""

from __future__ import annotations

from pathlib import Path

import pytest

from canary import index_store
from canary.analysis import ModuleCache, ParseError, index_module
from canary.index_store import IndexStore

SOURCE = Path(__file__).parent / "fixtures" / "checkout" / "src" / "fakeup"


def grpo_bytes() -> bytes:
    return (SOURCE / "trainer" / "grpo_trainer.py").read_bytes()


def test_identical_content_is_parsed_once():
    cache = ModuleCache()
    first = cache.get(grpo_bytes(), "fakeup.trainer.grpo_trainer", "a.py", is_package=False)
    again = cache.get(grpo_bytes(), "fakeup.trainer.grpo_trainer", "b.py", is_package=False)
    assert first is again
    assert cache.parses == 1


def test_relative_imports_depend_on_the_module_name():
    cache = ModuleCache()
    data = b"from .utils import X\n"
    here = cache.get(data, "pkg.sub.mod", "pkg/sub/mod.py", is_package=False)
    init = cache.get(data, "pkg.sub", "pkg/sub/__init__.py", is_package=True)
    assert here.bindings["X"][0].origin == "pkg.sub.utils.X"
    assert init.bindings["X"][0].origin == "pkg.sub.utils.X"
    up = cache.get(b"from ..base import Y\n", "pkg.sub.mod", "p", is_package=False)
    assert up.bindings["Y"][0].origin == "pkg.base.Y"
    assert cache.parses == 3


def test_store_round_trip_equals_a_fresh_parse(tmp_path):
    name = "fakeup.trainer.grpo_trainer"
    warm = ModuleCache(store=IndexStore(tmp_path))
    parsed = warm.get(grpo_bytes(), name, "g.py", is_package=False)
    assert warm.parses == 1
    cold_process = ModuleCache(store=IndexStore(tmp_path))
    loaded = cold_process.get(grpo_bytes(), name, "g.py", is_package=False)
    assert cold_process.parses == 0
    assert loaded == parsed


def test_corrupt_store_entry_is_rebuilt(tmp_path):
    name = "fakeup.trainer.grpo_trainer"
    ModuleCache(store=IndexStore(tmp_path)).get(grpo_bytes(), name, "g.py", is_package=False)
    (entry,) = tmp_path.rglob("*.json")
    entry.write_text('{"format": 1, "bindings": [')
    cache = ModuleCache(store=IndexStore(tmp_path))
    info = cache.get(grpo_bytes(), name, "g.py", is_package=False)
    assert cache.parses == 1
    assert "GRPOTrainer" in info.classes
    assert entry.read_text().startswith(f'{{"format":{index_store.FORMAT}')


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"(" * 5000 + b")" * 5000, "does not parse"),
        (b"x = 1\n\x00", "does not parse"),
        (b"# -*- coding: nonsense -*-\nx = 1\n", "cannot decode"),
    ],
)
def test_hostile_source_is_a_parse_error(data, message):
    with pytest.raises(ParseError, match=message):
        index_module(data, "m", "m.py", is_package=False)
