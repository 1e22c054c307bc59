"""Scanning a package again answers each unchanged file from canary's cache, and re-scans
exactly what changed: a file edited, or a file whose functions other files now pass
something else."""

from __future__ import annotations

import gc
import textwrap
import weakref
from collections import Counter
from pathlib import Path

from canary.cache.store import Cache
from canary.scan.downstream import package as reading
from canary.scan.downstream.callsites import CallSites
from canary.scan.downstream.file_scans import FileScans
from canary.scan.downstream.findings import Role
from canary.scan.downstream.package import scan_path
from canary.sources.stats import Stats

UPSTREAMS = frozenset({"transformers"})

FIXER = """
    import inspect

    def patch_init(trainer_class):
        source = inspect.getsource(trainer_class.__init__)
        return source.replace("self.model = model", "self.model = wrap(model)")
"""
CALLER = """
    from transformers import {name}
    from pkg.fixer import patch_init

    patch_init({name})
"""
OTHER = """
    from transformers import AutoConfig

    AutoConfig.from_pretrained("x", trust_remote_code=True)
"""


def _package(root: Path, caller: str = "Trainer") -> Path:
    files = {"fixer.py": FIXER, "caller.py": CALLER.format(name=caller), "other.py": OTHER}
    (root / "pkg").mkdir(exist_ok=True)
    (root / "pkg" / "__init__.py").write_text("")
    for name, text in files.items():
        (root / "pkg" / name).write_text(textwrap.dedent(text))
    return root / "pkg"


def _entries(cache: Cache) -> set[Path]:
    return {p for p in cache.root.rglob("*") if p.is_file() and p.parent.parent.name == "scan"}


def _contains(result) -> set[tuple[str, ...]]:
    return {(*f.ref.parts, *f.items) for f in result.findings if f.role is Role.CONTAINS}


def test_a_second_scan_is_answered_from_the_cache_and_equal(tmp_path):
    cache = Cache(tmp_path / "cache", Stats())
    package = _package(tmp_path)
    first = scan_path(package, UPSTREAMS, cache)
    stored = _entries(cache)
    assert len(stored) == 2 * 4  # both passes of each file (the empty __init__ included)
    again = scan_path(package, UPSTREAMS, cache)
    assert again == first
    assert _entries(cache) == stored
    assert ("transformers", "Trainer", "__init__", "self.model = model") in _contains(first)


def test_a_changed_call_site_rescans_the_function_it_reaches(tmp_path):
    cache = Cache(tmp_path / "cache", Stats())
    package = _package(tmp_path)
    scan_path(package, UPSTREAMS, cache)
    before = _entries(cache)
    _package(tmp_path, caller="TrainingArguments")
    changed = scan_path(package, UPSTREAMS, cache)
    fresh = scan_path(package, UPSTREAMS, None)
    assert changed == fresh
    assert _contains(changed) == {
        ("transformers", "TrainingArguments", "__init__", "self.model = model")
    }
    # caller.py: both passes anew; fixer.py: its second pass (what reaches it changed);
    # other.py and __init__.py: nothing
    assert len(_entries(cache) - before) == 3


def test_damaged_or_malformed_entries_are_scanned_again(tmp_path):
    cache = Cache(tmp_path / "cache", Stats())
    package = _package(tmp_path)
    first = scan_path(package, UPSTREAMS, cache)
    for entry in _entries(cache):
        entry.write_bytes(entry.read_bytes()[:-3] + b"!!!")
    assert scan_path(package, UPSTREAMS, cache) == first
    scans = FileScans(cache, UPSTREAMS, frozenset(), {})
    data = (package / "other.py").read_bytes()
    scans.keep_first(data, [["record", "f"]])  # a record event has five fields
    assert scans.first(data) is None
    scans.keep_first(data, [["define", "f"]])
    assert scans.first(data) == [["define", "f"]]
    state = [["f", 1, None, []]]
    scans.keep_second("pkg/other.py", data, state, [], {"transformers"})
    assert scans.second("pkg/other.py", data, state) == ([], {"transformers"})
    assert scans.second("pkg/other.py", data, [["f", 2, None, []]]) is None


def test_without_a_cache_nothing_is_kept(tmp_path):
    package = _package(tmp_path)
    scans = FileScans(None, UPSTREAMS, frozenset(), {})
    data = (package / "other.py").read_bytes()
    scans.keep_first(data, [["define", "f"]])
    assert scans.first(data) is None
    assert scan_path(package, UPSTREAMS, None).findings


def test_a_file_the_first_passes_tell_nothing_new_is_scanned_once(tmp_path, monkeypatch):
    """Its second pass would ask the package's functions what its first asked, and get the
    same answer (none): the first pass's findings are the second's."""
    package = _package(tmp_path)
    scans: Counter[str] = Counter()
    real = reading.scan_tree

    def counting(tree, file, *args):
        scans[file] += 1
        return real(tree, file, *args)

    monkeypatch.setattr(reading, "scan_tree", counting)
    once = scan_path(package, UPSTREAMS, None)
    # fixer.py: what caller.py passes binds its parameter; the others learn nothing
    assert scans == {"__init__.py": 1, "caller.py": 1, "other.py": 1, "fixer.py": 2}
    monkeypatch.setattr(CallSites, "tells_nothing", lambda self, file, asked: False)
    assert scan_path(package, UPSTREAMS, None) == once
    assert scans == {"__init__.py": 3, "caller.py": 3, "other.py": 3, "fixer.py": 4}  # 2 each


def test_a_files_tree_is_let_go_after_its_first_pass(tmp_path, monkeypatch):
    """A package's trees are many times its bytes: the second pass holds only the tree of the
    file it scans again (parsed again), none kept from the first."""
    package = _package(tmp_path)
    trees: list[weakref.ref] = []
    parse = reading.parse_locked

    def parsing(*args):
        tree = parse(*args)
        trees.append(weakref.ref(tree))
        return tree

    alive: list[int] = []
    real = reading.scan_tree

    def scanning(tree, file, upstreams, calls, *args):
        if calls.frozen:
            gc.collect()
            alive.append(sum(ref() is not None for ref in trees))
        return real(tree, file, upstreams, calls, *args)

    monkeypatch.setattr(reading, "parse_locked", parsing)
    monkeypatch.setattr(reading, "scan_tree", scanning)
    assert scan_path(package, UPSTREAMS, None) == scan_path(package, UPSTREAMS, None)
    assert alive == [1, 1]  # fixer.py's own, in each of the two scans
