"""A module `__getattr__` wherever module-level code defines it, the tables it reads, and the
alias modules a function puts in `sys.modules` (fixture trees: each case and its near miss)."""

from __future__ import annotations

from judging import judge_inline

from canary.engine.outcomes import Status


def judge(tmp_path, modules, checks_yaml):
    """The checks judged on an upstream `up` made of `modules`, as release 1.0.0."""
    return judge_inline(tmp_path, "up", modules, checks_yaml, "1.0.0")


VLLM_INIT = """
    import typing

    MODULE_ATTRS = {
        "LLM": ".entrypoints.llm:LLM",
        "Params": ".params:SamplingParams",
        "Engine": (".engine", "Engine"),
        "Gone": ".gone:Gone",
    }

    if typing.TYPE_CHECKING:
        from up.entrypoints.llm import LLM
        from up.params import SamplingParams as Params
        from up.checking import OnlyForTypes
    else:

        def __getattr__(name: str) -> typing.Any:
            from importlib import import_module

            if name in MODULE_ATTRS:
                module_name, attr_name = MODULE_ATTRS[name].split(":")
                module = import_module(module_name, __package__)
                return getattr(module, attr_name)
            else:
                raise AttributeError(name)
"""
TREE = {
    "up/__init__.py": VLLM_INIT,
    "up/entrypoints/__init__.py": "",
    "up/entrypoints/llm.py": "class LLM:\n    def generate(self, prompts):\n        pass\n",
    "up/params.py": "class SamplingParams:\n    temperature: float = 1.0\n",
    "up/engine.py": "class Engine:\n    pass\n",
    "up/checking.py": "class OnlyForTypes:\n    pass\n",
}


def statuses(results):
    return [(r.status, r.detail) for r in results]


def test_getattr_in_the_else_of_type_checking_serves_its_table(tmp_path):
    results = judge(
        tmp_path,
        TREE,
        """
        - {id: a, module: up, symbol: LLM, contains: ['def generate(self, prompts)']}
        - {id: b, module: up, symbol: Params}
        - {id: c, module: up, symbol: Engine}
        - {id: d, module: up, symbol: Gone}
        - {id: e, module: up, symbol: OnlyForTypes}
        """,
    )
    assert statuses(results) == [
        (Status.PASS, "served by up.__getattr__ from up.entrypoints.llm"),
        (Status.PASS, "served by up.__getattr__ from up.params.SamplingParams"),
        (Status.PASS, "served by up.__getattr__ from up.engine"),
        (Status.FAIL, "up has no symbol Gone"),
        (
            Status.FAIL,
            "OnlyForTypes is bound only under `if TYPE_CHECKING:` in up, not at run time",
        ),
    ]


def test_getattr_only_under_type_checking_still_fails(tmp_path):
    init = """
        import typing

        MODULE_ATTRS = {"LLM": ".entrypoints.llm:LLM"}

        if typing.TYPE_CHECKING:
            from up.entrypoints.llm import LLM

            def __getattr__(name: str) -> typing.Any:
                from importlib import import_module

                if name in MODULE_ATTRS:
                    module_name, attr_name = MODULE_ATTRS[name].split(":")
                    return getattr(import_module(module_name, __package__), attr_name)
    """
    results = judge(
        tmp_path, {**TREE, "up/__init__.py": init}, "- {id: a, module: up, symbol: LLM}"
    )
    assert statuses(results) == [
        (Status.FAIL, "LLM is bound only under `if TYPE_CHECKING:` in up, not at run time")
    ]


def test_getattr_in_a_try_and_a_computed_name(tmp_path):
    init = """
        from typing import TYPE_CHECKING

        _current = None

        if TYPE_CHECKING:
            current_platform: object

        try:
            import fast_thing
        except ImportError:

            def __getattr__(name):
                if name == "current_platform":
                    global _current
                    if _current is None:
                        _current = object()
                    return _current
                elif name == "nothing":
                    raise AttributeError(name)
                elif name in globals():
                    return globals()[name]
                raise AttributeError(name)
    """
    results = judge(
        tmp_path,
        {"up/__init__.py": init},
        """
        - {id: a, module: up, symbol: current_platform, contains: ['_current = object()']}
        - {id: b, module: up, symbol: nothing}
        """,
    )
    assert statuses(results) == [
        (Status.PASS, "current_platform is computed by up.__getattr__"),
        (Status.FAIL, "up has no symbol nothing"),
    ]


ALIASES = """
    import importlib
    import sys
    import types

    def _create_module_alias(alias: str, target: str) -> None:
        module = types.ModuleType(alias)

        def _get_target():
            return importlib.import_module(target, __name__)

        module.__getattr__ = lambda name: getattr(_get_target(), name)
        sys.modules[alias] = module

    def _not_an_alias(alias: str, target: str) -> None:
        print(alias, target)

    _create_module_alias(f"{__name__}.tokenization_utils", ".tokenization_sentencepiece")
    _not_an_alias(f"{__name__}.tokenization_utils_fast", ".tokenization_tokenizers")
    _name = "dynamic"
    _create_module_alias(f"{__name__}.{_name}", ".tokenization_tokenizers")
"""


def test_a_module_alias_made_by_a_function_is_its_target(tmp_path):
    tree = {
        "up/__init__.py": ALIASES,
        "up/tokenization_sentencepiece.py": "class PreTrainedTokenizer:\n    pass\n",
        "up/tokenization_tokenizers.py": "class PreTrainedTokenizerFast:\n    pass\n",
    }
    results = judge(
        tmp_path,
        tree,
        """
        - {id: a, module: up.tokenization_utils, symbol: PreTrainedTokenizer}
        - {id: b, module: up.tokenization_utils_fast, symbol: PreTrainedTokenizerFast}
        - {id: c, module: up.dynamic}
        """,
    )
    assert statuses(results)[0] == (
        Status.PASS,
        "up.tokenization_utils is an alias of up.tokenization_sentencepiece",
    )
    assert [r.status for r in results[1:]] == [Status.FAIL, Status.FAIL]
    assert results[1].detail.startswith("module up.tokenization_utils_fast not found")
