"""Function bodies blanked before parsing: the index must be exactly the whole parse's."""

from __future__ import annotations

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from paths import ROOT

from canary.analysis import ParseError, index_module
from canary.analysis import indexer as indexer_module
from canary.analysis import store as index_store
from canary.analysis.parselock import parse_locked
from canary.analysis.skeleton import blank_bodies


def _index(data: bytes) -> dict | str:
    try:
        return index_store.dump(index_module(data, "pkg.mod", "mod.py", is_package=False))
    except ParseError as exc:
        return str(exc)


def _same_as_whole(source: str | bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    data = source.encode() if isinstance(source, str) else source
    blanked = _index(data)
    with monkeypatch.context() as patch:
        patch.setattr(indexer_module, "blank_bodies", lambda text, masked=None: None)
        assert blanked == _index(data)


TRICKY = textwrap.dedent(
    '''\
    import os

    def no_init_weights():
        """
    A docstring whose lines sit at column 0.
    def not_a_function():
        """
        x = foo(
    1, 2)
        y = 1 + \\
    2
        return x  # it's a comment with a quote

    # a comment at column 0 inside nothing
    class Model(Base):
        """class docstring"""

        def one_line(self): return 1

        @property
        @other.deco(1, key=lambda v: v[1:2])
        def tp_plan(self) -> dict[str, str]:
            """
            The full tp plan for the model's modules
            """
            def nested():
                return "def fake(): pass"
            return {"a": (1, [2, {3: 4}])}

        async def run(self, *args, key: "x: y" = ")", **kwargs):
            await go()

    if os.name:
        def chosen():
            pass
    else:
        def chosen(a):
            pass

    def __getattr__(name):
        if name == "Lazy":
            from .lazy import Lazy
            return Lazy
        raise AttributeError(name)

    def last(a,
             b=(1,
    2)):
        s = f"{a!r:>10}" + rb'\\'' + """
    still a string"""
        return s'''
)


def test_tricky_module_indexes_as_the_whole_parse(monkeypatch):
    _same_as_whole(TRICKY, monkeypatch)
    info = index_module(TRICKY.encode(), "pkg.mod", "mod.py", is_package=False)
    last = TRICKY.split("\n").index("        await go()") + 1
    assert info.classes["Model"][0].span.end == last  # where its last (blanked) method ends
    skeleton = blank_bodies(TRICKY)
    assert skeleton is not None
    assert "A docstring" not in skeleton.text
    assert "from .lazy import Lazy" in skeleton.text  # a module's __getattr__ is read
    assert len(skeleton.text.split("\n")) == len(TRICKY.split("\n"))


@pytest.mark.parametrize(
    "source",
    [
        "def f():\n\treturn 1\n",  # tabs in indentation
        "def f():\r\n    return 1\r\n",  # carriage returns
        "def f():\n    return 'open\n",  # an unterminated string
    ],
)
def test_sources_it_cannot_read_exactly_are_parsed_whole(source):
    assert blank_bodies(source) is None


def test_a_syntax_error_is_reported_at_its_real_line():
    source = b"def f():\n    return (\n\ndef g():\n    pass\n"
    with pytest.raises(ParseError, match=r"mod\.py:2: does not parse"):
        index_module(source, "pkg.mod", "mod.py", is_package=False)


def test_a_syntax_error_inside_a_body_is_not_seen():
    # Documented: bodies are read as text, so only the statements canary indexes must parse.
    source = b"def f():\n    return 1 +\n\ndef g(x):\n    pass\n"
    info = index_module(source, "pkg.mod", "mod.py", is_package=False)
    assert [p.name for p in info.functions["g"][0].params] == ["x"]


def test_carriage_returns_are_read_as_python_reads_them(monkeypatch):
    # \r\n and a lone \r end lines for Python: the bodies are blanked all the same (a syntax
    # error inside one is not seen), on the same lines as the whole parse
    _same_as_whole(TRICKY.replace("\n", "\r\n"), monkeypatch)
    source = b"def f():\r\n    return 1 +\r\rclass C:\r    def g(self, x):\r        pass\r\n"
    info = index_module(source, "pkg.mod", "mod.py", is_package=False)
    assert info.classes["C"][0].span.start == 4
    assert info.classes["C"][0].span.end == 6
    assert info.text == source.decode()


@pytest.mark.slow  # every file of canary and its tests: an oracle sweep for the full run
def test_canary_own_sources_index_as_the_whole_parse(monkeypatch):
    files = sorted((ROOT / "canary").rglob("*.py")) + sorted((ROOT / "tests").rglob("*.py"))
    assert len(files) > 100
    for path in files:
        _same_as_whole(path.read_bytes(), monkeypatch)


_NAMES = st.sampled_from(["a", "b", "run", "Model", "__getattr__", "deco"])
_EXPRS = st.sampled_from(["1", "'s'", '"""x\ny"""', "(1,\n2)", "[\n]", "f(x)", "{'k': (1, 2)}"])


@st.composite
def _modules(draw, depth: int = 0, indent: str = "") -> str:
    lines = []
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["assign", "def", "class", "if"] if depth < 3 else ["assign"]))
        name = draw(_NAMES)
        if kind == "assign":
            lines.append(f"{indent}{name} = {draw(_EXPRS)}{draw(st.sampled_from(['', '  # c']))}")
        elif kind == "if":
            lines.append(f"{indent}if {draw(_EXPRS)}:")
            lines.append(draw(_modules(depth + 1, indent + "    ")))
        else:
            if draw(st.booleans()):
                lines.append(f"{indent}@{draw(_NAMES)}({draw(_EXPRS)})")
            header = "def" if kind == "def" else "class"
            args = f"(a={draw(_EXPRS)})" if kind == "def" else ""
            lines.append(f"{indent}{header} {name}{args}:")
            lines.append(draw(_modules(depth + 1, indent + draw(st.sampled_from(["  ", "    "])))))
        if draw(st.booleans()):
            lines.append(draw(st.sampled_from(["", "# note", f"{indent}# it's"])))
    return "\n".join(lines)


@pytest.mark.slow  # an oracle sweep: the full run has it, the engine loop the cases above
@settings(max_examples=300, deadline=None)
@given(_modules())
def test_generated_modules_index_as_the_whole_parse(source):
    try:
        parse_locked(source)
    except SyntaxError:
        return  # not a module: nothing to compare
    with pytest.MonkeyPatch.context() as monkeypatch:
        _same_as_whole(source, monkeypatch)
