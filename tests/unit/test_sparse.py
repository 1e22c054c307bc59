"""Modules indexed name by name: every record must be exactly the whole parse's (the oracle
`bench.oracle.differences`, here on tricky and generated modules; `python -m bench.oracle` runs
it on the files the shipped matrices read)."""

from __future__ import annotations

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from paths import ROOT

from bench.oracle import differences
from canary.analysis import ParseError, decode
from canary.analysis import store as index_store
from canary.analysis.indexer import index_text
from canary.analysis.outline import outline
from canary.analysis.parselock import parse_locked
from canary.analysis.skeleton import mask_text
from canary.analysis.sparse import sparse_module


def _sparse(source: str):
    return sparse_module(source, "pkg.mod", "pkg/mod.py", is_package=False)


def _same_as_whole(source: str) -> None:
    assert differences(source, "pkg.mod", "pkg/mod.py", is_package=False) == []


TRICKY = textwrap.dedent(
    '''\
    """Docstring with class Fake: and def fake(): inside."""
    from __future__ import annotations
    import os, sys as system
    import a.b.c
    from typing import (
        TYPE_CHECKING,
        Any,
    )
    from .sibling import *
    from x import \\
        *

    if TYPE_CHECKING:
        from .types import Hidden
        class OnlyTyped: ...

    try:
        import torch
    except ImportError:
        torch = None
    else:
        HAS = True
    finally:
        DONE = 1

    __all__ = ["Model", "run"]
    __all__ += ["extra"]

    @decorator(
        1,
    )
    @other
    class Model(Base, metaclass=Meta):
        x: int = 1

        def __getattr__(self, name):
            return name

        if HAS:
            def run(self, a, *, b=1): pass
        else:
            def run(self, a): pass

        def run2(self) -> "Model":
            s = """
    class NotReal:
    """
            return s

    def run(a, /, b, *args, c: int = 2, **kw) -> None:
        x = (1 +
    2)
        return x

    run = wrap(run)
    a, (b, *rest) = 1, (2, 3)
    [c] = [1]
    (d) = 4
    e: int
    f += 1
    g = h = 5
    value = 1 + \\
        2
    class Model(Base): pass
    async def later(): ...
    with ctx() as bound:
        inside = 1
    '''
)


def test_tricky_module_indexes_as_the_whole_parse():
    _same_as_whole(TRICKY)
    info = _sparse(TRICKY)
    assert info is not None
    assert len(info.classes["Model"]) == 1  # the later class in the same block replaces it
    assert info.star_imports == ["pkg.sibling", "x"]
    assert info.all_names == ("Model", "run", "extra")


def test_carriage_returns_are_read_as_python_reads_them():
    # \r\n and a lone \r end a line for Python's tokenizer: the module is read name by name,
    # on the same lines as the whole parse (a lone \r ends the comment: `D = 2` is code)
    crlf = TRICKY.replace("\n", "\r\n")
    _same_as_whole(crlf)
    assert _sparse(crlf) is not None
    lone = "import os\rclass C:\r    x = '''a\r\nb'''\r# c\rD = 2\r\n\rdef f(a b):\n    pass\n"
    _same_as_whole(lone)
    info = _sparse(lone)
    assert info is not None
    assert info.bindings["D"][0].span.start == 6
    assert info.classes["C"][0].span == info.bindings["C"][0].span
    assert info.classes["C"][0].span.start == 2
    with pytest.raises(ParseError, match=r"pkg/mod\.py:8: does not parse"):
        info.functions.get("f")


def test_a_block_outline_reads_the_lines_of_its_indent_alone():
    # a line of code indented less, even inside brackets, means no outline; deeper lines, and
    # lines of its indent inside brackets, belong to the statement above
    assert outline("\n    x = 1\n    y = (\n   z)\n    w = 2\n", 4) is None
    block = (
        "\n    x = 1\n    @d\n    def f():\n        return (\n    1)\n        pass\n"
        "    w = [\n    2]\n      deeper = 3\n    if a:\n        pass\n    else:\n        pass\n"
    )
    shape = outline(block, 4)
    assert shape is not None
    assert shape.bounds == (0, 10, 67, 101, 147)
    assert shape.heads == (0, 17, 67, 101)


def test_only_the_statements_naming_a_name_are_parsed():
    source = "import os\n\ndef f(a):\n    return a\n\nclass C:\n    pass\n\nbroken = (\n"
    assert mask_text(source) is not None and outline(mask_text(source)) is None
    source = "import os\n\ndef f(a):\n    return a\n\ndef g(a b):\n    pass\n"
    info = _sparse(source)
    assert info is not None
    assert [p.name for p in info.functions["f"][0].params] == ["a"]
    with pytest.raises(ParseError, match=r"pkg/mod\.py:6: does not parse"):
        info.functions.get("g")
    with pytest.raises(ParseError, match=r"pkg/mod\.py:6: does not parse"):
        list(info.functions)  # listing every name takes the whole module


def test_a_class_or_def_of_another_name_is_not_parsed_for_a_name():
    # `name` follows `(` and `,` in both: each may bind it, until its head says it defines
    # another name (a class or def binds its own name alone); both would fail to parse
    source = (
        "from pkg import name\n\n"
        "class Other(Base, name):\n    x = 1 2\n\n"
        "async def helper(a, name, b c):\n    return a\n"
    )
    info = _sparse(source)
    assert info is not None
    assert [b.kind for b in info.bindings["name"]] == ["import"]
    shape = outline(mask_text(source) or "")
    assert shape is not None
    assert [shape.defined(i) for i in range(len(shape.bounds) - 1)] == [None, "Other", "helper"]


@pytest.mark.parametrize(
    "source",
    [
        "def __getattr__(name):\n    return name\n",  # PEP 562: served lazily
        "if True:\n    def __getattr__(name):\n        return 1\n",
        "import sys\nsys.modules[__name__] = _LazyModule(__name__, {})\n",
        "import sys\nsys.meta_path.append(Finder())\n",
        "import sys\ndef alias(a, t):\n    sys.modules[a] = import_module(t)\nalias('x', 'y')\n",
        "def f():\n\treturn 1\n",  # tabs: the outline cannot be sure of the lines
    ],
)
def test_modules_with_lazy_exports_are_indexed_whole(source):
    assert _sparse(source) is None


def test_a_class_of_its_own_getattr_is_read_name_by_name():
    assert _sparse("class C:\n    def __getattr__(self, name):\n        return 1\n") is not None


@pytest.mark.slow  # every file of canary and its tests: an oracle sweep for the full run
def test_canary_own_sources_index_as_the_whole_parse():
    for path in sorted((ROOT / "canary").rglob("*.py")):
        try:
            text = decode(path.read_bytes(), str(path))
        except ParseError:
            continue  # a fixture that does not decode: no index either way
        _same_as_whole(text)


_NAMES = st.sampled_from(["a", "b", "run", "Model", "__all__", "deco", "x"])
_EXPRS = st.sampled_from(
    ["1", "'s'", '"""x\ny"""', "(1,\n2)", "[\n]", "f(x)", "{'k': (1, 2)}", "['a', 'b']", "a.b"]
)


def _target(draw) -> str:
    name = draw(_NAMES)
    return draw(
        st.sampled_from(
            [name, f"{name}, other", f"({name})", f"[{name}]", f"*{name}, c", f"{name}: int"]
        )
    )


def _statement(draw, depth: int, indent: str) -> list[str]:
    kinds = ["assign", "aug", "import", "from", "star", "def", "class", "if", "try", "with"]
    kind = draw(st.sampled_from(kinds if depth < 3 else kinds[:5]))
    name = draw(_NAMES)
    inner = indent + draw(st.sampled_from(["  ", "    "]))
    if kind == "assign":
        return [f"{indent}{_target(draw)} = {draw(_EXPRS)}"]
    if kind == "aug":
        return [f"{indent}{name} {draw(st.sampled_from(['+', '//', '|']))}= {draw(_EXPRS)}"]
    if kind == "import":
        return [f"{indent}import {draw(st.sampled_from(['os', 'a.b', 'q as ' + name]))}"]
    if kind == "from":
        return [f"{indent}from {draw(st.sampled_from(['.', 'm', '..p']))} import ({name},\n)"]
    if kind == "star":
        return [f"{indent}from .{name} import \\\n    *"]
    if kind in ("if", "try", "with"):
        head = {
            "if": f"if {draw(st.sampled_from(['TYPE_CHECKING', 'not TYPE_CHECKING', 'x']))}:",
            "try": "try:",
            "with": f"with ctx() as {name}:",
        }[kind]
        lines = [f"{indent}{head}", *_block(draw, depth + 1, inner)]
        if kind in ("if", "try") and draw(st.booleans()):
            lines += [f"{indent}{'else' if kind == 'if' else 'except E'}:"]
            lines += _block(draw, depth + 1, inner)
        return lines
    lines = [f"{indent}@{draw(_NAMES)}({draw(_EXPRS)})"] if draw(st.booleans()) else []
    if kind == "def":
        return [*lines, f"{indent}def {name}(a={draw(_EXPRS)}):", *_block(draw, depth + 1, inner)]
    return [*lines, f"{indent}class {name}({draw(_NAMES)}):", *_block(draw, depth + 1, inner)]


def _block(draw, depth: int, indent: str) -> list[str]:
    lines = []
    for _ in range(draw(st.integers(1, 4))):
        lines += _statement(draw, depth, indent)
        if draw(st.booleans()):
            lines.append(draw(st.sampled_from(["", "# note", f"{indent}# it's"])))
    return lines


@st.composite
def _modules(draw) -> str:
    return "\n".join(_block(draw, 0, ""))


@pytest.mark.slow  # an oracle sweep: the full run has it, the engine loop the cases above
@settings(max_examples=200, deadline=None)
@given(_modules())
def test_generated_modules_index_as_the_whole_parse(source):
    try:
        parse_locked(source)
    except SyntaxError:
        return  # not a module: nothing to compare
    _same_as_whole(source)
    crlf = source.replace("\n", "\r\n")  # read as Python reads it: the same records
    _same_as_whole(crlf)
    whole = index_text(crlf, "pkg.mod", "pkg/mod.py", is_package=False)
    assert index_store.dump(whole) == index_store.dump(
        index_text(source, "pkg.mod", "pkg/mod.py", is_package=False)
    )
