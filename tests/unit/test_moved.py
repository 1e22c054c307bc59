"""Statements indexed once from line 1 and moved to where they stand (canary.analysis.moved): a
class, a class's shell or a statement met again on other lines, in another text of its file,
has the records the whole parse of that text gives, and a syntax error names its real line."""

from __future__ import annotations

import textwrap

import pytest

from bench.oracle import differences
from canary.analysis import ParseError, lazyclass, sparse
from canary.analysis.indexer import index_text
from canary.analysis.sparse import sparse_module

MODEL = textwrap.dedent(
    """\
    @decorator
    class Model(Base):
        x: int = 1

        def run(self, a):
            return a
    {grown}
        y = 2
        w: list = field(default_factory=list, init=False)
        if HAS:
            def extra(self): ...
            z: str = "z"

        def last(self,
                 b): return b
    """
)


def _same_as_whole(text: str, name: str) -> None:
    assert differences(text, name, f"{name.replace('.', '/')}.py", is_package=False) == []


def _counting(monkeypatch, module, function: str) -> list[str]:
    """The texts `module.function` is called with, from now on."""
    texts: list[str] = []
    real = getattr(module, function)

    def counting(text, *args, **kwargs):
        texts.append(text)
        return real(text, *args, **kwargs)

    monkeypatch.setattr(module, function, counting)
    return texts


def test_a_class_met_again_on_other_lines_has_the_records_of_its_new_place(monkeypatch):
    classes = _counting(monkeypatch, sparse, "class_statement")
    model = MODEL.format(grown="")
    old = "import os\n\n" + model
    new = "import os\nimport sys\n\n\nA = 1\n\n" + model + "\ndef after(): ...\n"
    for text in (old, new):
        _same_as_whole(text, "up.moved_class")
    assert len(classes) == 1  # indexed once, from its first line


def test_a_shell_met_again_is_relined_where_the_methods_between_grew(monkeypatch):
    shells = _counting(monkeypatch, lazyclass, "index_text")
    old = "import os\n\n" + MODEL.format(grown="")
    new = "import os\n\n\n" + MODEL.format(grown="\n        # grown\n        pass\n")
    for text in (old, new):
        _same_as_whole(text, "up.moved_shell")
    # `y`, `extra` and `last` stand three lines lower in the class, `Model` one lower
    (model,) = sparse_module(new, "up.moved_shell", "up/moved_shell.py", is_package=False).classes[
        "Model"
    ]
    assert (model.span.start, model.span.end, model.assigned) == (4, 21, {"x": 6, "y": 14, "w": 15})
    assert [f.span.start for fs in model.methods.values() for f in fs] == [8, 17, 20]
    assert [(f.name, f.line, f.default, f.init) for f in model.fields] == [
        ("x", 6, "1", True),
        ("w", 15, "<factory>", False),
    ]
    assert sum(text.startswith("@decorator") for text in shells) == 1  # one shell parsed


def test_a_statement_met_again_on_other_lines_has_the_records_of_its_new_place(monkeypatch):
    parsed = _counting(monkeypatch, sparse, "index_text")
    function = "def run(a, *, b=(1,\n        2)) -> int:\n    return a\n"
    old = "import os\n\n" + function + "\n__all__ = ['run']\n"
    new = "import os\n\n\nX = 1\n\n" + function + "\n\n__all__ = ['run']\n"
    for text in (old, new):
        _same_as_whole(text, "up.moved_def")
    assert sum(text.startswith("def run") for text in parsed) == 1


@pytest.mark.parametrize(
    ("statement", "name", "table"),
    [
        ("class C:\n    x = (1,\n         2]\n\n    def f(self): ...\n", "C", "classes"),
        ("def f(a,\n      b c): ...\n", "f", "functions"),
        # cut after its last line of code, but not before a character Python does not skip
        ("def f(): ...\n  # a comment\n\x1c\n\nX = 1\n", "f", "functions"),
    ],
)
def test_a_syntax_error_names_the_line_the_statement_stands_on(statement, name, table):
    for above in ("", "import os\n\n\n"):
        text = above + statement
        with pytest.raises(ParseError) as whole:
            index_text(text, "up.bad", "up/bad.py", is_package=False)
        module = sparse_module(text, "up.bad", "up/bad.py", is_package=False)
        assert module is not None
        with pytest.raises(ParseError) as alone:
            getattr(module, table).get(name)
        assert str(alone.value) == str(whole.value)


def test_a_method_s_syntax_error_names_the_line_its_class_stands_on():
    method = "    def bad(self, a b):\n        pass\n"
    for above, line in (("", 2), ("import os\n\n\n\n", 6)):
        text = above + "class C:\n" + method + "\n    def good(self): ...\n"
        module = sparse_module(text, "up.bad_method", "up/bad_method.py", is_package=False)
        assert module is not None
        (cls,) = module.classes["C"]
        with pytest.raises(ParseError, match=rf"up/bad_method\.py:{line}: does not parse"):
            cls.methods["bad"]
