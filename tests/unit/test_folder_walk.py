"""A folder's walk (transformers' define_import_structure) reads hundreds of modules for one
name: it reads their exports, kept by content, not their indexes, and fetches them a batch at
a time, more each time, not the whole folder at once."""

from __future__ import annotations

import gc
from collections.abc import Iterable

from canary.analysis import ModuleCache
from canary.analysis.namespace import Found, Namespace
from canary.engine.loader import ModuleLoader

LAZY_INIT = """
from typing import TYPE_CHECKING

from .utils import _LazyModule, define_import_structure

if not TYPE_CHECKING:
    import sys

    _file = globals()["__file__"]
    sys.modules[__name__] = _LazyModule(__name__, _file, define_import_structure(_file))
"""
MODULES = 300


class _Tree:
    """An upstream release in memory; remembers what was fetched together."""

    kind = "local"

    def __init__(self, files: dict[str, str]):
        self._files = {path: text.encode() for path, text in files.items()}
        self.prefetched: list[list[str]] = []

    def read(self, path: str) -> bytes | None:
        return self._files.get(path)

    def files(self) -> list[str]:
        return sorted(self._files)

    def read_meta(self, path: str) -> bytes | None:
        return None

    def prefetch(self, paths: Iterable[str]) -> None:
        self.prefetched.append(list(paths))


def _release() -> _Tree:
    files = {"pkg/__init__.py": LAZY_INIT, "pkg/utils.py": "def define_import_structure(f): ...\n"}
    for i in range(MODULES):
        files[f"pkg/m{i:03}.py"] = f'__all__ = ["Name{i:03}"]\n\nclass Name{i:03}:\n    pass\n'
    return _Tree(files)


def _namespace(tree: _Tree, cache: ModuleCache) -> Namespace:
    loader = ModuleLoader(tree, cache)
    return Namespace(loader.module, loader.module_names, loader.prefetch, loader.exports)


def _find(namespace: Namespace, name: str) -> Found | str:
    package = namespace.lookup("pkg")
    assert package is not None and package.lazy is not None and package.lazy.folders
    return namespace.find(package, name)


def test_the_walk_finds_the_module_exporting_the_name():
    found = _find(_namespace(_release(), ModuleCache()), "Name150")
    assert isinstance(found, Found)
    assert found.module.name == "pkg.m150"
    assert "exported lazily from pkg.m150" in found.note
    assert _find(_namespace(_release(), ModuleCache()), "Nowhere") == ""


def test_a_release_with_the_same_files_indexes_none_of_them_again():
    cache = ModuleCache()
    _find(_namespace(_release(), cache), "Name250")
    gc.collect()  # that release is let go, as a bisection's are
    before = cache.parses
    found = _find(_namespace(_release(), cache), "Name250")
    assert isinstance(found, Found) and found.module.name == "pkg.m250"
    # the package and the module found at most; 250 modules walked past are read by content
    assert cache.parses - before <= 2


def test_a_walk_fetches_a_batch_at_a_time():
    tree = _release()
    _find(_namespace(tree, ModuleCache()), "Name020")
    fetched = [len(batch) for batch in tree.prefetched]
    # a search over 300 modules that ends at the 21st fetched 8, then 16 more: not 300
    assert sum(fetched) <= 2 * (8 + 16)
    tree = _release()
    _find(_namespace(tree, ModuleCache()), "Nowhere")
    walked = {path for batch in tree.prefetched for path in batch}
    assert len(walked) >= 2 * (MODULES - 16)  # each module's two files, a few batches
    assert len(tree.prefetched) <= 8


def test_the_modules_of_a_package_named_like_the_name_are_read_before_the_rest():
    """transformers' models/llama4/ for Llama4Config: its modules follow its __init__ at once,
    not after the 1,500 other files (0.43 s a walk on every release of axolotl's matrix)."""
    files = {"pkg/__init__.py": LAZY_INIT, "pkg/utils.py": "def define_import_structure(f): ...\n"}
    for i in range(MODULES):
        files[f"pkg/aa{i:03}.py"] = f'__all__ = ["Other{i:03}"]\n'
    files["pkg/zeta/__init__.py"] = "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
    files["pkg/zeta/__init__.py"] += "    from .configuration_zeta import *\n"
    files["pkg/zeta/configuration_zeta.py"] = '__all__ = ["ZetaConfig"]\n\nclass ZetaConfig: ...\n'
    tree = _Tree(files)
    found = _find(_namespace(tree, ModuleCache()), "ZetaConfig")
    assert isinstance(found, Found) and found.module.name == "pkg.zeta.configuration_zeta"
    assert not tree.prefetched  # found among the first 8 read: no batch of the other 300
