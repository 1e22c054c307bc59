"""`python -m bench.oracle [MATRIX...]`: the name-by-name index (canary.analysis.sparse) against
the whole index, on every module file the shipped matrices' checks read on their locked
releases (read from the cache, or fetched): for every name either index records, and words of
the text that neither binds, the same bindings, class and function records (a class's methods
in the same order), and the same exports. Prints the files compared and every difference;
exits 1 on any.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import sys
from collections.abc import Iterator

from canary.analysis import ModuleInfo, ParseError
from canary.analysis.indexer import decode, index_text
from canary.analysis.modules import ModuleCache
from canary.analysis.sparse import sparse_module

_TABLES = ("bindings", "classes", "functions")
_SKIPPED = {"name", "path", "text", *_TABLES}
_WORD = re.compile(r"[A-Za-z_]\w*")
#: Names looked up per file: the recorded ones (spread evenly when there are more), and words
#: of the text that none records (most are bound nowhere).
_RECORDED_NAMES = 300
_OTHER_WORDS = 40


def _lookups(whole: ModuleInfo, text: str) -> list[str]:
    recorded = sorted({name for table in _TABLES for name in getattr(whole, table)})
    step = max(1, len(recorded) // _RECORDED_NAMES)
    others = sorted(set(_WORD.findall(text)) - set(recorded))[:_OTHER_WORDS]
    return recorded[::step] + others


def _method_order(classes: list | None) -> list[list[str]]:
    """The method names of each class record, in order (record equality ignores it)."""
    return [list(cls.methods) for cls in classes or []]


def differences(text: str, name: str, path: str, *, is_package: bool) -> list[str]:
    """Where the sparse index of `text` differs from its whole index (empty: none)."""
    try:
        whole = index_text(text, name, path, is_package=is_package)
    except ParseError:
        return []  # a module that does not parse whole is judged on what a check reads
    try:
        sparse = sparse_module(text, name, path, is_package=is_package)
    except ParseError as exc:
        return [f"{path}: its exports do not parse alone: {exc}"]
    if sparse is None:
        return []  # indexed whole
    found = []
    for field in dataclasses.fields(ModuleInfo):
        compared = field.name not in _SKIPPED and field.compare
        if compared and getattr(sparse, field.name) != getattr(whole, field.name):
            found.append(f"{path}: {field.name} differs")
    for key in _lookups(whole, text):
        for table in _TABLES:
            try:
                mine = getattr(sparse, table).get(key)
            except ParseError as exc:
                found.append(f"{path}: {table}[{key}] does not parse alone: {exc}")
                continue
            theirs = getattr(whole, table).get(key)
            if mine != theirs:
                found.append(f"{path}: {table}[{key}] differs")
            elif table == "classes" and _method_order(mine) != _method_order(theirs):
                found.append(f"{path}: {table}[{key}] lists its methods in another order")
            if (key in getattr(sparse, table)) != (key in getattr(whole, table)):
                found.append(f"{path}: {key} in {table} differs")
    return found


class _Recording(ModuleCache):
    """A module cache that keeps every distinct file it is asked for."""

    def __init__(self) -> None:
        super().__init__()
        self.files: dict[tuple[bytes, str, bool], str] = {}

    def get(
        self, data: bytes, name: str, path: str, *, is_package: bool, digest: str | None = None
    ) -> ModuleInfo:
        self.files.setdefault((data, name, is_package), path)
        return super().get(data, name, path, is_package=is_package, digest=digest)


def read_files(paths: list[str]) -> Iterator[tuple[bytes, str, str, bool]]:
    """Every distinct module file the matrices' checks read on their locked releases."""
    from canary.engine.runner import Runner
    from canary.matrix.files import find_matrices, load_matrices

    matrices = load_matrices(find_matrices(paths))
    modules = _Recording()
    Runner(modules=modules, remember=False).run(matrices, "releases")  # the locked releases
    for (data, name, is_package), path in modules.files.items():
        yield data, name, path, is_package


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.oracle", description=__doc__)
    parser.add_argument("matrices", nargs="*", metavar="MATRIX")
    args = parser.parse_args(argv)
    compared = whole = 0
    found: list[str] = []
    for data, name, path, is_package in read_files(args.matrices):
        text = decode(data, path)
        compared += 1
        try:
            whole += sparse_module(text, name, path, is_package=is_package) is None
        except ParseError:
            whole += 1
        found.extend(differences(text, name, path, is_package=is_package))
    print(f"{compared} files compared ({whole} indexed whole), {len(found)} differences")
    for line in found[:50]:
        print(f"  {line}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
