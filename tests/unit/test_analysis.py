"""The module index: parsed once per content, persisted across runs, rebuilt when corrupt."""

from __future__ import annotations

import sys
import threading
import time

import pytest
from paths import FIXTURES

from canary.analysis import ModuleCache, ParseError, index_module
from canary.analysis.store import IndexStore
from canary.cache.store import Cache
from canary.sources.stats import Stats

SOURCE = FIXTURES / "checkout" / "src" / "fakeup"


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
    warm = ModuleCache(store=IndexStore(Cache(tmp_path, Stats())), sparse=False)
    parsed = warm.get(grpo_bytes(), name, "g.py", is_package=False)
    assert warm.parses == 1
    cold_process = ModuleCache(store=IndexStore(Cache(tmp_path, Stats())), sparse=False)
    loaded = cold_process.get(grpo_bytes(), name, "g.py", is_package=False)
    assert cold_process.parses == 0
    assert loaded == parsed


def test_corrupt_store_entry_is_rebuilt(tmp_path):
    name = "fakeup.trainer.grpo_trainer"
    store = IndexStore(Cache(tmp_path, Stats()))
    ModuleCache(store=store, sparse=False).get(grpo_bytes(), name, "g.py", is_package=False)
    (entry,) = [p for p in tmp_path.rglob("*") if p.is_file() and "index" in p.parts]
    entry.write_bytes(entry.read_bytes().replace(b'"bindings":{', b'"bindings":['))
    cache = ModuleCache(store=IndexStore(Cache(tmp_path, Stats())), sparse=False)
    info = cache.get(grpo_bytes(), name, "g.py", is_package=False)
    assert cache.parses == 1
    assert "GRPOTrainer" in info.classes
    assert b'"bindings":{' in entry.read_bytes()


def test_an_edited_index_field_is_refused_not_believed(tmp_path):
    """A well-formed edit (a method renamed in the stored index) must not flip a verdict."""
    name = "fakeup.trainer.grpo_trainer"
    parsed = ModuleCache(store=IndexStore(Cache(tmp_path, Stats())), sparse=False).get(
        grpo_bytes(), name, "g.py", is_package=False
    )
    (entry,) = [p for p in tmp_path.rglob("*") if p.is_file() and "index" in p.parts]
    entry.write_bytes(entry.read_bytes().replace(b'"GRPOTrainer"', b'"GRPOTrainex"'))
    cache = ModuleCache(store=IndexStore(Cache(tmp_path, Stats())), sparse=False)
    assert cache.get(grpo_bytes(), name, "g.py", is_package=False) == parsed
    assert cache.parses == 1


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"(" * 5000 + b")" * 5000, "does not parse"),
        (b"x = 1\n\x00", r"^m\.py:2: does not parse: source code string cannot contain null"),
        (b"# -*- coding: nonsense -*-\nx = 1\n", "cannot decode"),
    ],
)
def test_hostile_source_is_a_parse_error(data, message):
    with pytest.raises(ParseError, match=message):
        index_module(data, "m", "m.py", is_package=False)


def test_modules_indexed_on_several_threads_at_once_all_parse():
    # A finalizer run by the collector mid-parse lets another thread parse at the same time, which
    # CPython 3.11 reports as "SystemError: AST constructor recursion depth mismatch".
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    source = "\n".join(
        f"class C{i}:\n    def f(self, a, b={{'k': [1, (2, {{3}})]}}):\n"
        f"        return [x for x in ((a, b), {{b: a}}) if x and (a or b) and not (a and b)]\n"
        for i in range(20)
    ).encode()

    class Cycle:
        def __del__(self):
            sum(range(50))

    failures: list[BaseException] = []

    def work() -> None:
        for _ in range(25):
            a, b = Cycle(), Cycle()
            a.other, b.other = b, a
            try:
                index_module(source, "m", "m.py", is_package=False)
            except Exception as exc:  # any failure is the finding
                failures.append(exc)

    try:
        threads = [threading.Thread(target=work) for _ in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert failures == []


def test_parse_pool_workers_give_the_index_parsed_in_place():
    from canary.analysis import store as index_store
    from canary.analysis.pool import MIN_POOLED_BYTES, ParsePool

    data = grpo_bytes() * (MIN_POOLED_BYTES // len(grpo_bytes()) + 1)  # large enough to ship
    pool = ParsePool(workers=2)
    try:
        shipped, encoded = pool(data, "fakeup.trainer.big", "big.py", is_package=False)
    finally:
        pool.close()
    here = index_module(data, "fakeup.trainer.big", "big.py", is_package=False)
    assert shipped.text == here.text
    assert index_store.dump(shipped) == index_store.dump(here)
    assert encoded == index_store.encode(here)  # the stored form, made in the worker
    assert shipped.classes  # a real index, not an empty one


def test_a_stopped_parse_pool_parses_nothing_more():
    """After Ctrl-C (`stop`) a parse in flight and every later one raise Stopped: parsing in
    place instead, or in a new pool, kept the judging threads busy while the session ended."""
    import multiprocessing

    from canary.analysis.pool import MIN_POOLED_BYTES, ParsePool
    from canary.errors import Stopped

    big = grpo_bytes() * (3_000_000 // len(grpo_bytes()))  # seconds of parsing in a worker
    pool = ParsePool(workers=2)
    raised: list[BaseException] = []

    def parse() -> None:
        try:
            pool(big, "fakeup.trainer.big", "big.py", is_package=False)
        except BaseException as exc:
            raised.append(exc)

    thread = threading.Thread(target=parse)
    thread.start()
    for _ in range(600):  # until the worker processes are up
        if multiprocessing.active_children():
            break
        time.sleep(0.05)
    time.sleep(0.2)
    pool.stop()
    thread.join(timeout=30)
    assert [type(exc) for exc in raised] == [Stopped]
    small = grpo_bytes()[: MIN_POOLED_BYTES // 2]
    for data in (big, small):
        with pytest.raises(Stopped):
            pool(data, "fakeup.trainer.grpo_trainer", "grpo.py", is_package=False)
    assert not multiprocessing.active_children()
