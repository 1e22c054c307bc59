"""What Python binds once a module (or a class body) has run, judged on purpose-made upstreams:
each test is one class of wrong verdict found by comparing canary with CPython itself
(`python -m bench.runtime`), and fails without its fix."""

from __future__ import annotations

from judging import judge_inline

from canary.analysis import ModuleCache
from canary.analysis.bases import ClassRef, Hierarchy
from canary.analysis.indexer import index_text
from canary.analysis.namespace import Namespace
from canary.analysis.store import IndexStore
from canary.cache.stats import Stats
from canary.cache.store import Cache
from canary.engine.outcomes import Status


def test_attributes_do_not_count_self_of_a_class_nested_in_a_method(tmp_path):
    """Class 8: `self.x = ...` in a class nested in a method binds another object's x."""
    modules = {
        "up/__init__.py": "",
        "up/m.py": """
            class Outer:
                def build(self, y):
                    class Inner:
                        def __init__(self):
                            self.hidden = 1
                    def helper(self):
                        self.other = 2
                    def closure():
                        self.seen = 3
                    self.kept = y
                    return Inner
        """,
    }
    checks = """
        - {id: hidden, module: up.m, class: Outer, attributes: [hidden]}
        - {id: other, module: up.m, class: Outer, attributes: [other]}
        - {id: kept, module: up.m, class: Outer, attributes: [kept, seen]}
    """
    hidden, other, kept = judge_inline(tmp_path, "up", modules, checks, "1.0.0")
    assert hidden.status is Status.FAIL and "binds no attribute hidden" in hidden.detail
    assert other.status is Status.FAIL
    assert kept.status is Status.PASS, kept.detail


def test_a_method_only_under_type_checking_in_a_class_body_is_not_there(tmp_path):
    """Class 9: a class body's `if TYPE_CHECKING:` defines nothing at run time."""
    modules = {
        "up/__init__.py": "",
        "up/m.py": """
            from typing import TYPE_CHECKING

            class Base:
                if TYPE_CHECKING:
                    def typed(self): ...
                else:
                    def untyped(self): ...
                def plain(self): ...

            class Child(Base):
                pass
        """,
    }
    checks = """
        - {id: typed, module: up.m, class: Base, methods: [typed]}
        - {id: fn, module: up.m, function: Base.typed}
        - {id: inherited, module: up.m, class: Child, methods: [typed]}
        - {id: untyped, module: up.m, class: Child, methods: [untyped, plain]}
    """
    typed, fn, inherited, untyped = judge_inline(tmp_path, "up", modules, checks, "1.0.0")
    assert typed.status is Status.FAIL and "has no method typed" in typed.detail
    assert fn.status is Status.FAIL
    assert inherited.status is Status.FAIL
    assert untyped.status is Status.PASS, untyped.detail


class _Counting(Hierarchy):
    """Counts how often the order asks a class for its bases."""

    asked = 0

    def bases(self, ref):
        _Counting.asked += 1
        return super().bases(ref)


def test_the_mro_of_a_diamond_lattice_is_linearised_once_per_class(tmp_path):
    """Class 12: each layer of diamonds doubled the work (36 layers never finished)."""
    layers = 36
    lines = ["class L0A:\n    def hook(self): ...\n", "class L0B(L0A):\n    pass\n"]
    for i in range(1, layers):
        lines.append(f"class L{i}A(L{i - 1}A, L{i - 1}B):\n    pass\n")
        lines.append(f"class L{i}B(L{i - 1}A, L{i - 1}B):\n    pass\n")
    info = index_text("".join(lines), "up.m", "up/m.py", is_package=False)
    hierarchy = _Counting(Namespace(lambda name: info if name == "up.m" else None))
    top = ClassRef(info, tuple(info.classes[f"L{layers - 1}A"]))
    order, unresolved = hierarchy.mro(top)
    assert len(order) == 2 * layers - 1 and not unresolved
    assert hierarchy.method(top, "hook").owner.name == "L0A"
    assert _Counting.asked <= 2 * 2 * layers  # once per class (and per mro() asked)


def test_dunder_all_keeps_each_name_once_in_order():
    """Class 13: `__all__` deduplicated by a set, in order (a list's `in` was quadratic)."""
    names = [f"n{i}" for i in range(40_000)]
    text = f"__all__ = {names!r}\n__all__ += ['n5', 'extra', 'n7']\n"
    info = index_text(text, "up.m", "up/m.py", is_package=False)
    assert info.all_names == (*names, "extra")


def test_a_dataclass_chain_past_the_bound_says_its_init_is_incomplete(tmp_path):
    """Class 14: past 64 bases the first fields are dropped: the detail says the bound was hit."""
    chain = ["from dataclasses import dataclass\n\n@dataclass\nclass D0:\n    f0: int = 0\n"]
    for i in range(1, 70):
        chain.append(f"@dataclass\nclass D{i}(D{i - 1}):\n    f{i}: int = 0\n")
    modules = {"up/__init__.py": "", "up/m.py": "".join(chain)}
    checks = """
        - {id: last, module: up.m, function: D69.__init__, params: [f69]}
        - {id: first, module: up.m, function: D69.__init__, params: [f0]}
        - {id: near, module: up.m, function: D3.__init__, params: [f0, f3]}
    """
    last, first, near = judge_inline(tmp_path, "up", modules, checks, "1.0.0")
    bound = "its bases past 64 deep are not read: their fields are missing here"
    assert last.status is Status.PASS and bound in last.detail
    assert first.status is Status.ERROR  # undecided: the dropped fields are said unread
    assert first.detail.endswith("the fields of up.m.D5 (over 64 bases deep) are not read")
    assert near.status is Status.PASS and "past 64" not in near.detail


REBOUND = {
    "up/__init__.py": "",
    "up/other.py": """
        def f(a, b):
            return a

        class Trainer:
            def train(self): ...
    """,
    "up/m.py": """
        import functools

        def _other(x):
            return x

        def renamed(a, b):
            return a
        renamed = _other

        def imported(a, b):
            return a
        from .other import f as imported

        def gone(a, b):
            return a
        del gone

        def wrapped(a, b):
            return a
        wrapped = functools.lru_cache(wrapped)

        def computed(a, b):
            return a
        computed = functools.partial(_other, 1)

        def branch(a, b):
            return a
        if a_flag:
            branch = _other

        class _New:
            def step(self): ...

        class Trainer:
            def train(self): ...
        Trainer = _New

        if __name__ == "__main__":
            def main(): ...
    """,
}


def test_a_name_rebound_after_its_def_is_judged_by_its_last_binding(tmp_path):
    """Class 7: Python binds the last statement that ran, not the `def` above it."""
    checks = """
        - {id: renamed, module: up.m, function: renamed, params: [a, b]}
        - {id: renamed-to, module: up.m, function: renamed, params: [x]}
        - {id: imported, module: up.m, function: imported, params: [a]}
        - {id: gone, module: up.m, function: gone}
        - {id: gone-symbol, module: up.m, symbol: gone}
        - {id: wrapped, module: up.m, function: wrapped, params: [a, b]}
        - {id: computed, module: up.m, function: computed, params: [a]}
        - {id: branch, module: up.m, function: branch, params: [a]}
        - {id: trainer, module: up.m, function: Trainer.train}
        - {id: trainer-new, module: up.m, class: Trainer, methods: [step]}
        - {id: main, module: up.m, function: main}
        - {id: main-symbol, module: up.m, symbol: main}
    """
    got = judge_inline(tmp_path, "up", REBOUND, checks, "1.0.0")
    by_id = {r.check: r for r in got}
    assert by_id["renamed"].status is Status.FAIL
    assert by_id["renamed-to"].status is Status.PASS, by_id["renamed-to"].detail
    assert by_id["imported"].status is Status.FAIL
    assert by_id["imported"].detail == "function imported is imported here (from up.other.f)"
    assert by_id["gone"].status is Status.FAIL and "deleted at line 17" in by_id["gone"].detail
    assert by_id["gone-symbol"].status is Status.FAIL
    assert "gone is deleted at line 17 of up.m" in by_id["gone-symbol"].detail
    assert by_id["wrapped"].status is Status.PASS, by_id["wrapped"].detail
    assert by_id["computed"].status is Status.ERROR
    assert by_id["computed"].detail.endswith(
        "up/m.py:25: computed is bound last to a value computed at run time "
        "(`computed = functools.partial(_other, 1)`), which canary does not follow"
    )
    assert by_id["branch"].status is Status.PASS  # the def, or _other: either may stand
    assert by_id["trainer"].status is Status.FAIL
    assert by_id["trainer-new"].status is Status.PASS, by_id["trainer-new"].detail
    assert by_id["main"].status is Status.FAIL and by_id["main-symbol"].status is Status.FAIL


def test_a_class_alias_is_the_class_it_names(tmp_path):
    """Class 5: `OldName = NewName` is that class for `class:`, `function:` and `bases:`."""
    modules = {
        "up/__init__.py": "",
        "up/m.py": """
            class Base:
                pass

            class NewName(Base):
                def step(self, x): ...

            OldName = NewName
            Older = OldName
        """,
    }
    checks = """
        - {id: cls, module: up.m, class: OldName, methods: [step], bases: [Base]}
        - {id: fn, module: up.m, function: OldName.step, params: [x]}
        - {id: twice, module: up.m, function: Older.step, params: [x]}
        - {id: symbol, module: up.m, symbol: OldName}
    """
    results = judge_inline(tmp_path, "up", modules, checks, "1.0.0")
    assert [r.status for r in results] == [Status.PASS] * 4, [r.detail for r in results]


def test_names_a_getattr_made_by_a_factory_serves(tmp_path):
    """Class 1: transformers 5's `__getattr__ = deprecate_attr(__name__, rename={...})`
    serves each literal key; a `__getattr__` computed otherwise is said to be unfollowed."""
    modules = {
        "up/__init__.py": "",
        "up/utils.py": "def deprecate_attr(name, remove=None, rename=None): ...\n",
        "up/processing.py": """
            from .utils import deprecate_attr

            class ProcessingKwargs:
                pass

            __getattr__ = deprecate_attr(
                __name__,
                remove={"GoneKwargs": (ProcessingKwargs, "5.29.0")},
                rename={"OldKwargs": (ProcessingKwargs, "5.29.0")},
            )
        """,
        "up/other.py": """
            from .utils import make

            __getattr__ = make(__name__)
        """,
    }
    checks = """
        - {id: old, module: up.processing, symbol: OldKwargs}
        - {id: gone, module: up.processing, symbol: GoneKwargs}
        - {id: missing, module: up.processing, symbol: NeverKwargs}
        - {id: unread, module: up.other, symbol: Anything}
    """
    old, gone, missing, unread = judge_inline(tmp_path, "up", modules, checks, "1.0.0")
    assert old.status is Status.PASS
    assert old.detail == "OldKwargs is computed by up.processing.__getattr__"
    assert gone.status is Status.PASS
    assert missing.status is Status.FAIL
    assert unread.status is Status.ERROR
    assert unread.detail.endswith(
        "up/other.py:4: up.other binds no Anything, and its `__getattr__` is a value computed "
        "at run time, which canary does not follow"
    )


def test_a_class_body_is_a_namespace_of_its_own(tmp_path):
    """Class 4, and class 7 in a class body: an import in the body binds methods; a later
    binding in the body replaces a `def`; `g = f` is `f`'s method."""
    modules = {
        "up/__init__.py": "",
        "up/utils.py": """
            def log_metrics(self, split, metrics):
                pass

            def save_metrics(self, split, metrics, combined=True):
                pass
        """,
        "up/trainer.py": """
            import functools

            def _fast(self, x, y):
                return y

            class Trainer:
                from .utils import log_metrics, save_metrics

                def forward(self, x):
                    return x
                forward = _fast

                def step(self, a):
                    return a
                step_alias = step

                def cached(self, a):
                    return a
                cached = functools.lru_cache(cached)

                def gone(self):
                    pass
                del gone

                from os import getcwd
        """,
    }
    checks = """
        - {id: methods, module: up.trainer, class: Trainer, methods: [log_metrics, save_metrics]}
        - {id: log, module: up.trainer, function: Trainer.log_metrics, params: [split, metrics]}
        - {id: save, module: up.trainer, function: Trainer.save_metrics, params: [combined]}
        - {id: forward, module: up.trainer, function: Trainer.forward, params: [x]}
        - {id: forward-def, module: up.trainer, class: Trainer, methods: [forward]}
        - {id: forward-own, module: up.trainer, function: Trainer.forward, contains: [return x]}
        - {id: alias, module: up.trainer, function: Trainer.step_alias, params: [a]}
        - {id: cached, module: up.trainer, function: Trainer.cached, params: [a]}
        - {id: gone, module: up.trainer, class: Trainer, methods: [gone]}
        - {id: outside, module: up.trainer, function: Trainer.getcwd}
    """
    got = {r.check: r for r in judge_inline(tmp_path, "up", modules, checks, "1.0.0")}
    assert got["methods"].status is Status.PASS, got["methods"].detail
    assert "log_metrics is bound in the class body to up.utils.log_metrics" in (
        got["methods"].detail
    )
    assert got["log"].status is Status.PASS, got["log"].detail
    assert got["save"].status is Status.PASS, got["save"].detail
    assert got["forward"].status is Status.PASS  # Trainer.forward is _fast, rebound below
    assert got["forward"].detail == "forward is bound in the class body to up.trainer._fast"
    assert got["forward-def"].status is Status.PASS
    assert got["forward-own"].status is Status.FAIL  # _fast's source, not the def's
    assert got["alias"].status is Status.PASS, got["alias"].detail
    assert got["cached"].status is Status.PASS, got["cached"].detail
    assert got["gone"].status is Status.FAIL
    assert got["outside"].status is Status.ERROR
    assert (
        "Trainer.getcwd is bound to os.getcwd, which is no function canary reads in up"
        in got["outside"].detail
    )


def test_a_rename_exposed_in_the_signature_is_a_parameter(tmp_path):
    """Class 2: `@deprecate_kwarg(..., expose_in_signature=True)` puts the old name in the
    signature `inspect.signature` shows (keyword-only, default None, before **kwargs)."""
    modules = {
        "up/__init__.py": "",
        "up/masking.py": """
            from .utils import deprecate_kwarg

            @deprecate_kwarg("past_key_values", "5.40", new_name="cache", expose_in_signature=True)
            def create_mask(config, cache=None, **kwargs):
                pass

            @deprecate_kwarg("past_key_values", "5.40.0", new_name="cache")
            def hidden(config, cache=None):
                pass
        """,
        "up/utils.py": "def deprecate_kwarg(*args, **kwargs): ...\n",
    }
    checks = """
        - {id: params, module: up.masking, function: create_mask, params: [past_key_values]}
        - id: signature
          module: up.masking
          function: create_mask
          signature: "(config, cache=None, *, past_key_values=None, **kwargs)"
        - {id: hidden, module: up.masking, function: hidden, params: [past_key_values]}
        - {id: accepts, module: up.masking, function: hidden, accepts: [past_key_values]}
    """
    params, signature, hidden, accepts = judge_inline(tmp_path, "up", modules, checks, "1.0.0")
    assert params.status is Status.PASS, params.detail
    assert signature.status is Status.PASS, signature.detail
    assert hidden.status is Status.FAIL
    assert accepts.status is Status.PASS


OUTSIDE = {
    "up/__init__.py": "",
    "up/config.py": """
        from dataclasses import dataclass, field

        from transformers import TrainingArguments
        import torch

        @dataclass
        class SFTConfig(TrainingArguments):
            max_length: int = 1024
            packing: bool = field(default=False)

        class Layer(torch.nn.Module):
            def update(self): ...
    """,
}


def test_what_a_base_outside_the_upstream_may_bring_is_said_undecided(tmp_path):
    """Classes 3 and 6: a dataclass over a base in another package (trl's configs over
    transformers' TrainingArguments) has that base's fields too, and a method may come from a
    base outside (torch's Module): canary does not read them, so a failure that turns on them
    is an `error` saying so, never a `fail`."""
    checks = """
        - {id: own, module: up.config, function: SFTConfig.__init__, params: [max_length]}
        - {id: inherited, module: up.config, function: SFTConfig.__init__, params: [output_dir]}
        - {id: call, module: up.config, function: SFTConfig.__init__, call: {args: 1}}
        - id: signature
          module: up.config
          function: SFTConfig.__init__
          signature: "(self, max_length: int = 1024, packing: bool = False)"
        - {id: zero-grad, module: up.config, class: Layer, methods: [zero_grad]}
        - {id: own-method, module: up.config, class: Layer, methods: [update]}
    """
    got = {r.check: r for r in judge_inline(tmp_path, "up", OUTSIDE, checks, "1.0.0")}
    assert got["own"].status is Status.PASS
    unread = "the fields of transformers.TrainingArguments (outside up) are not read"
    for check in ("inherited", "call", "signature"):
        assert got[check].status is Status.ERROR, got[check].detail
        assert got[check].detail.endswith(unread), got[check].detail
    assert got["zero-grad"].status is Status.ERROR
    assert "not known for torch.nn.Module (outside up)" in got["zero-grad"].detail
    assert got["own-method"].status is Status.PASS


def test_syntax_newer_than_this_python_is_read_as_the_python_that_runs_it(tmp_path):
    """Class 10's other half: PEP 695 (3.12) and PEP 758 (3.14) are valid where the client runs
    the upstream: not an `error` because canary's own Python is older."""
    modules = {
        "up/__init__.py": "",
        "up/m.py": """
            type Alias[T] = list[T]

            def first[T](items: list[T], default: T | None = None) -> T:
                try:
                    return items[0]
                except IndexError, TypeError:
                    return default

            class Box[T](Base):
                def get[U](self, key: U) -> T:
                    self.last = key
                    return self.value
        """,
    }
    checks = """
        - {id: alias, module: up.m, symbol: Alias, contains: ["type Alias[T]"]}
        - id: first
          module: up.m
          function: first
          signature: "(items: list[T], default: T | None = None) -> T"
          contains: ["except IndexError, TypeError:"]
        - {id: box, module: up.m, class: Box, methods: [get], bases: [Base], attributes: [last]}
        - {id: get, module: up.m, function: Box.get, params: [key], globals_bound: true}
    """
    results = judge_inline(tmp_path, "up", modules, checks, "1.0.0")
    assert [r.status for r in results] == [Status.PASS] * 4, [r.detail for r in results]


STARRED = {
    "up/__init__.py": "",
    "up/other.py": """
        __all__ = ["f", "Trainer"]

        def f(x): ...

        class Trainer:
            def step(self): ...
    """,
    "up/m.py": """
        def f(a, b): ...

        class Trainer:
            def train(self): ...

        def kept(a): ...

        from up.other import *

        def g(a): ...
    """,
    "up/n.py": """
        def kept(a): ...

        from torch.nn import *
    """,
    "up/shim.py": """
        import sys

        def f(a): ...

        class Shim:
            pass

        sys.modules[__name__] = Shim()
    """,
}


def test_a_star_import_below_a_def_binds_the_name_again(tmp_path):
    """Class 7: `from x import *` below a def rebinds the names x exports (followed
    statically); below a def when x is not read, what stands is undecided; a module that
    replaces itself in sys.modules is judged by no def of its own."""
    checks = """
        - {id: f, module: up.m, function: f, params: [a, b]}
        - {id: f-symbol, module: up.m, symbol: f, contains: ["def f(x)"]}
        - {id: trainer, module: up.m, function: Trainer.train}
        - {id: trainer-followed, module: up.m, function: Trainer.step, globals_bound: true}
        - {id: kept, module: up.m, function: kept, params: [a]}
        - {id: g, module: up.m, function: g, params: [a]}
        - {id: unread, module: up.n, function: kept}
        - {id: unread-symbol, module: up.n, symbol: kept}
        - {id: shim, module: up.shim, function: f}
        - {id: shim-symbol, module: up.shim, symbol: Shim}
        - {id: shim-module, module: up.shim}
    """
    got = {r.check: r for r in judge_inline(tmp_path, "up", STARRED, checks, "1.0.0")}
    assert got["f"].status is Status.FAIL
    assert got["f"].detail == (
        "function f of up.m is not what an import finds: f is bound again at line 9 of up.m "
        "by `from up.other import *`, below its own binding"
    )
    assert got["f-symbol"].status is Status.PASS, got["f-symbol"].detail
    assert got["trainer"].status is Status.FAIL, got["trainer"].detail
    assert got["trainer-followed"].status is Status.PASS, got["trainer-followed"].detail
    assert got["kept"].status is Status.PASS  # up.other does not export it
    assert got["g"].status is Status.PASS  # defined below the star import
    assert got["unread"].status is Status.ERROR
    assert got["unread"].detail.endswith(
        "up/n.py:4: `from torch.nn import *` below the binding of kept binds it again if "
        "torch.nn exports it; canary does not read torch.nn (outside up)"
    )
    assert got["unread-symbol"].status is Status.ERROR
    assert got["shim"].status is Status.ERROR and got["shim-symbol"].status is Status.ERROR
    assert got["shim"].detail.endswith(
        "up/shim.py:9: up.shim replaces itself in sys.modules (`sys.modules[__name__] = ...`) "
        "with a value computed at run time: an import finds that value, not the module's own "
        "names, and canary does not follow it"
    )
    assert got["shim-module"].status is Status.PASS  # the module is there: it imports


def test_a_name_a_function_binds_with_global_is_there_once_it_runs(tmp_path):
    """axolotl's false reds: transformers binds lazily loaded kernels with `global` in a
    mixer's `__init__`: not there on import, there once it ran, so `warn` saying so; and an
    attribute a class's `__getattr__` may serve is not said missing."""
    modules = {
        "up/__init__.py": "",
        "up/m.py": '''
            """A docstring naming global nowhere_bound in passing."""

            def lazy_load_kernel(name): ...

            class Mixer:
                def __init__(self):
                    global conv_fn, fast_path
                    kernel = lazy_load_kernel("conv")
                    conv_fn = getattr(kernel, "conv_fn", None)
                    fast_path = conv_fn is not None

            class Tokenizer:
                SPECIAL = ["bos_token"]

                def __getattr__(self, key):
                    return self.__dict__[key.removesuffix("_id")]

            class Fast(Tokenizer):
                def __init__(self):
                    self.vocab = {}

            class Plain:
                def __init__(self):
                    self.vocab = {}
        ''',
    }
    checks = """
        - {id: symbol, module: up.m, symbol: fast_path}
        - {id: call, module: up.m, function: conv_fn, call: {args: 0, keywords: [x]}}
        - {id: docstring, module: up.m, symbol: nowhere_bound}
        - {id: served, module: up.m, class: Fast, attributes: [vocab, bos_token_id]}
        - {id: own, module: up.m, class: Fast, attributes: [bos_token_id], own: true}
        - {id: plain, module: up.m, class: Plain, attributes: [bos_token_id]}
    """
    got = {r.check: r for r in judge_inline(tmp_path, "up", modules, checks, "1.0.0")}
    assert got["symbol"].status is Status.WARN
    assert got["symbol"].detail == (
        "fast_path is not bound when up.m is imported: Mixer.__init__ binds it (`global "
        "fast_path` at line 8) once it runs, to a value canary does not follow"
    )
    assert got["call"].status is Status.WARN and "Mixer.__init__ binds it" in got["call"].detail
    assert got["docstring"].status is Status.FAIL
    assert got["served"].status is Status.WARN
    assert got["served"].detail == (
        "Fast binds no attribute bos_token_id; up.m.Tokenizer.__getattr__ (line 16) serves "
        "the attributes an instance does not bind, which canary does not evaluate"
    )
    assert got["own"].status is Status.FAIL and got["plain"].status is Status.FAIL


def test_a_module_no_python_can_compile_is_an_error_whatever_a_check_reads(tmp_path):
    """Class 10: a syntax error in a statement no check reads (a function body, nesting past
    the parser's limit) still makes the module unimportable: `error` with the line, never
    `pass`; the answer is kept by the file's digest, so a second run compiles nothing."""
    deep = "(" * 250 + "1" + ")" * 250
    modules = {
        "up/__init__.py": "",
        "up/m.py": """
            def f(a, b): ...

            def broken(x):
                return x +

            class Trainer:
                def train(self): ...
        """,
        "up/deep.py": f"""
            def f(a): ...

            LIMIT = {deep}
        """,
        "up/fine.py": """
            def f(a): ...

            def g[T](x: T) -> T:
                return f"{x!r:>{10}}"
        """,
    }
    checks = """
        - {id: f, module: up.m, function: f, params: [a, b]}
        - {id: symbol, module: up.m, symbol: Trainer}
        - {id: deep, module: up.deep, function: f}
        - {id: fine, module: up.fine, function: f}
    """
    got = {r.check: r for r in judge_inline(tmp_path, "up", modules, checks, "1.0.0")}
    assert got["f"].status is Status.ERROR and got["symbol"].status is Status.ERROR
    assert got["f"].detail == (
        "up/m.py:5: does not compile, so it cannot be imported: invalid syntax"
    )
    assert got["deep"].status is Status.ERROR
    assert got["deep"].detail.startswith("up/deep.py:4: does not compile")
    assert got["fine"].status is Status.PASS, got["fine"].detail


def test_whether_a_file_compiles_is_remembered_by_its_digest(tmp_path):
    """The store keeps the answer: a run with an empty memory asks the compiler nothing."""
    store = IndexStore(Cache(tmp_path / "cache", Stats()))
    first = ModuleCache(store=store)
    assert first.compile_error("d1", "x = (\n") == (1, "'(' was never closed")
    assert first.compile_error("d2", "x = 1\n") is None
    again = ModuleCache(store=store)
    # the texts differ from what was compiled: only the digests decide, as remembered
    assert again.compile_error("d1", "x = 1\n") == (1, "'(' was never closed")
    assert again.compile_error("d2", "x = (\n") is None
