"""A top-level class indexed with its methods parsed as they are read: the same records as a
whole parse (in the same order), and a method's signature parsed only when it is read."""

from __future__ import annotations

import textwrap

import pytest

from bench.oracle import differences
from canary.analysis import ParseError
from canary.analysis.indexer import index_text
from canary.analysis.sparse import sparse_module

CLASS = textwrap.dedent(
    '''\
    import dataclasses

    @decorator
    class Model(Base, metaclass=Meta):
        """Doc: def fake(self): not a method."""

        x: int = 1
        y = dataclasses.field(default=2)

        def __init_subclass__(cls, **kw):
            dataclasses.dataclass(cls, kw_only=True)

        def run(self, a):
            return a

        if HAS:
            def run(self, a, *, b=1): pass
            def extra(self): ...
        else:
            def run(self, a): pass

        @property
        def value(self) -> int:
            s = """
    def fake(self):
    """
            return 1

        def run(self, a, b=(1,
                2)):  # replaces the first `run` where it stood
            return b

        class Inner:
            def hidden(self): ...

        # a comment at the end

        async def last(self,
                       x): return x
    # a comment at column 0

    def after(): ...
    '''
)


def _whole_and_sparse(source: str):
    whole = index_text(source, "pkg.mod", "pkg/mod.py", is_package=False)
    sparse = sparse_module(source, "pkg.mod", "pkg/mod.py", is_package=False)
    assert sparse is not None
    return whole, sparse


@pytest.mark.parametrize(
    "source",
    [
        CLASS,
        "class C: x = 1\n",  # one line: indexed whole
        "class C:\n    def f(self, a=(\n1)): ...\n    def g(self): ...\n",  # a line indented less
        "class C:\n    def f(self): ...\n    def f(self, a): ...\n",
        "class C(\n    Base,\n):\n\n    # first\n    def f(self): ...\n",
    ],
)
def test_a_class_indexes_as_the_whole_parse(source):
    assert differences(source, "pkg.mod", "pkg/mod.py", is_package=False) == []
    whole, sparse = _whole_and_sparse(source)
    for name, records in whole.classes.items():
        assert [list(c.methods) for c in sparse.classes[name]] == [list(c.methods) for c in records]
        assert sparse.classes[name] == records
        assert sparse.bindings[name] == whole.bindings[name]


def test_the_class_records_are_the_whole_parse_s():
    _, sparse = _whole_and_sparse(CLASS)
    (model,) = sparse.classes["Model"]
    assert list(model.methods) == ["__init_subclass__", "run", "extra", "value", "last"]
    # the later class-level `run` stands where the first did; the branches' follow
    spans = [(f.span.start, f.span.end) for f in model.methods["run"]]
    assert spans == [(29, 31), (17, 17), (20, 20)]
    assert [len(f.params) for f in model.methods["run"]] == [3, 3, 2]
    assert (model.span.start, model.span.end) == (3, 39)
    assert model.subclass_generator is not None and model.subclass_generator.kw_only
    assert [f.name for f in model.fields] == ["x", "y"]


def test_a_method_is_parsed_when_it_is_read():
    source = "class C:\n    def bad(self, a b):\n        pass\n\n    def good(self, a): ...\n"
    with pytest.raises(ParseError):
        index_text(source, "pkg.mod", "pkg/mod.py", is_package=False)
    sparse = sparse_module(source, "pkg.mod", "pkg/mod.py", is_package=False)
    assert sparse is not None
    (cls,) = sparse.classes["C"]
    assert list(cls.methods) == ["bad", "good"]  # the names without a parse
    assert [p.name for p in cls.methods["good"][0].params] == ["self", "a"]
    with pytest.raises(ParseError, match=r"pkg/mod\.py:2: does not parse"):
        cls.methods["bad"]


def test_a_method_unchanged_in_a_new_text_of_its_file_is_not_parsed_again(monkeypatch):
    from canary.analysis import lazyclass

    parsed = []
    real = lazyclass.index_text

    def counting(text, *args, **kwargs):
        parsed.append(text)
        return real(text, *args, **kwargs)

    monkeypatch.setattr(lazyclass, "index_text", counting)
    method = "    def train(self, model, steps=1):\n        return model\n"
    last = "\n    def last(self): ...\n"  # a class's last statement is parsed with its shell
    old = "class Trainer:\n    x = 1\n\n" + method + last
    new = "import os\n\n\nclass Trainer:\n    x = 2\n\n    def other(self): ...\n\n" + method + last
    spans = []
    for text in (old, new):
        sparse = sparse_module(text, "up.t", "up/t.py", is_package=False)
        assert sparse is not None
        (function,) = sparse.classes["Trainer"][0].methods["train"]
        spans.append((function.span.start, function.span.end))
        assert [p.name for p in function.params] == ["self", "model", "steps"]
    whole = index_text(new, "up.t", "up/t.py", is_package=False)
    (expected,) = whole.classes["Trainer"][0].methods["train"]
    assert spans == [(4, 5), (expected.span.start, expected.span.end)] == [(4, 5), (9, 10)]
    # two class shells and one method: the second file's train is the first one's, moved
    assert sum("def train" in text for text in parsed) == 1
