"""`call:`: a call of a known shape binds as `inspect.Signature.bind` would, on fixture trees
(each case beside the Python that decides it)."""

from __future__ import annotations

import textwrap

import pytest
from judging import judge_inline

from canary.engine.outcomes import Status


def judge(tmp_path, modules, checks_yaml):
    """The checks judged on an upstream `up` made of `modules`, as release 1.0.0."""
    return judge_inline(tmp_path, "up", modules, checks_yaml, "1.0.0")


MANAGER = """
    class LRUCacheWorkerLoRAManager:
        def create_lora_manager(self, model, max_num_seqs, max_num_batched_tokens,
                                vocab_size, lora_config, vllm_config, device):
            pass

        @staticmethod
        def helper(a, b=1):
            pass

        @classmethod
        def build(cls, a, *, b):
            pass

    def plain(a, /, b, *args, c=3, **kwargs):
        pass

    def strict(a, /, b):
        pass

    def renamed(x, cache=None, **kwargs):
        pass
"""
OLD_KEYWORDS = "[max_num_seqs, max_num_batched_tokens, vocab_size, lora_config, device]"

# (function, call as YAML, expected status, fragment of the detail, the same call in Python)
CASES = [
    (
        "LRUCacheWorkerLoRAManager.create_lora_manager",
        f"{{args: 1, keywords: {OLD_KEYWORDS}}}",
        Status.FAIL,
        "it requires vllm_config, which the call does not pass",
        "LRUCacheWorkerLoRAManager().create_lora_manager(0, max_num_seqs=0, "
        "max_num_batched_tokens=0, vocab_size=0, lora_config=0, device=0)",
    ),
    (
        "LRUCacheWorkerLoRAManager.create_lora_manager",
        f"{{args: 1, keywords: [vllm_config, {OLD_KEYWORDS[1:-1]}]}}",
        Status.PASS,
        "",
        "LRUCacheWorkerLoRAManager().create_lora_manager(0, vllm_config=0, max_num_seqs=0, "
        "max_num_batched_tokens=0, vocab_size=0, lora_config=0, device=0)",
    ),
    (
        "LRUCacheWorkerLoRAManager.create_lora_manager",
        "{args: 8}",
        Status.FAIL,
        "it takes 7 positional, the call passes 8",
        "LRUCacheWorkerLoRAManager().create_lora_manager(0, 1, 2, 3, 4, 5, 6, 7)",
    ),
    (
        "LRUCacheWorkerLoRAManager.create_lora_manager",
        "{args: 2, keywords: [model, max_num_batched_tokens, vocab_size, lora_config, "
        "vllm_config, device]}",
        Status.FAIL,
        "model is given twice",
        "LRUCacheWorkerLoRAManager().create_lora_manager(0, 1, model=0, "
        "max_num_batched_tokens=0, vocab_size=0, lora_config=0, vllm_config=0, device=0)",
    ),
    (
        "LRUCacheWorkerLoRAManager.helper",
        "{args: 1}",
        Status.PASS,
        "",
        "LRUCacheWorkerLoRAManager.helper(0)",
    ),
    (
        "LRUCacheWorkerLoRAManager.helper",
        "{args: 0}",
        Status.FAIL,
        "it requires a",
        "LRUCacheWorkerLoRAManager.helper()",
    ),
    (
        "LRUCacheWorkerLoRAManager.build",
        "{args: 1}",
        Status.FAIL,
        "it requires b",
        "LRUCacheWorkerLoRAManager.build(0)",
    ),
    (
        "LRUCacheWorkerLoRAManager.build",
        "{args: 1, keywords: [b]}",
        Status.PASS,
        "",
        "LRUCacheWorkerLoRAManager.build(0, b=0)",
    ),
    (
        "plain",
        "{args: 5, keywords: [c, d]}",
        Status.PASS,
        "d absorbed by **kwargs",
        "plain(0, 1, 2, 3, 4, c=0, d=0)",
    ),
    ("plain", "{args: 1}", Status.FAIL, "it requires b", "plain(0)"),
    (
        "plain",
        "{args: 1, keywords: [a, b]}",
        Status.PASS,
        "a absorbed by **kwargs",
        "plain(0, a=0, b=0)",
    ),
    (
        "strict",
        "{args: 1, keywords: [a, b]}",
        Status.FAIL,
        "does not accept a",
        "strict(0, a=0, b=0)",
    ),
    (
        "strict",
        "{args: 3}",
        Status.FAIL,
        "it takes 2 positional, the call passes 3",
        "strict(0, 1, 2)",
    ),
    (
        "renamed",
        "{args: 1, keywords: [cache, extra]}",
        Status.PASS,
        "extra absorbed by **kwargs",
        "renamed(0, cache=0, extra=0)",
    ),
]


@pytest.mark.parametrize(("function", "call", "status", "detail", "python"), CASES)
def test_a_call_binds_as_python_binds_it(tmp_path, function, call, status, detail, python):
    (result,) = judge(
        tmp_path,
        {"up/__init__.py": MANAGER},
        f"- {{id: c, module: up, function: {function}, call: {call}}}",
    )
    assert result.status is status, result.detail
    assert detail in result.detail
    namespace: dict[str, object] = {}
    exec(textwrap.dedent(MANAGER), namespace)  # the fixture is ours: Python's own answer
    try:
        eval(python, namespace)
        binds = True
    except TypeError:
        binds = False
    assert binds is (status is Status.PASS)


def test_the_detail_names_the_call_and_the_parameters(tmp_path):
    (result,) = judge(
        tmp_path,
        {"up/__init__.py": MANAGER},
        f"- {{id: c, module: up, function: LRUCacheWorkerLoRAManager.create_lora_manager, "
        f"call: {{args: 1, keywords: {OLD_KEYWORDS}}}}}",
    )
    assert result.detail == (
        "a call (1 positional, max_num_seqs=, max_num_batched_tokens=, vocab_size=, lora_config=, "
        "device=) of LRUCacheWorkerLoRAManager.create_lora_manager(self, model, max_num_seqs, "
        "max_num_batched_tokens, vocab_size, lora_config, vllm_config, device) fails: it requires "
        "vllm_config, which the call does not pass"
    )


def test_a_deprecation_rename_fills_its_target(tmp_path):
    source = """
        def deprecate_kwarg(*a, **k):
            return lambda f: f

        @deprecate_kwarg("num_logits_to_keep", "4.50", new_name="logits_to_keep")
        def forward(x, logits_to_keep=0):
            pass

        @deprecate_kwarg("past", "4.50", new_name="cache")
        def required(x, cache):
            pass
    """
    results = judge(
        tmp_path,
        {"up/__init__.py": source},
        """
        - {id: a, module: up, function: forward, call: {args: 1, keywords: [num_logits_to_keep]}}
        - {id: b, module: up, function: required, call: {args: 1, keywords: [past]}}
        - {id: c, module: up, function: required, call: {args: 2, keywords: [past]}}
        """,
    )
    assert [r.status for r in results] == [Status.PASS, Status.PASS, Status.FAIL]
    assert results[0].detail == "num_logits_to_keep renamed to logits_to_keep by @deprecate_kwarg"
    assert "cache is given twice (positionally and as past=)" in results[2].detail


@pytest.mark.parametrize(
    ("call", "message"),
    [
        ("call: 1", "call: must be a mapping such as {args: 1, keywords: [a]}, not a number"),
        ("call: {args: -1}", "call: args: must be a count (0 or more), not -1"),
        ("call: {args: true}", "call: args: must be a count (0 or more), not True"),
        ("call: {arg: 1}", "arg: unknown key in call; did you mean 'args'?"),
        ("call: {keywords: ['a b']}", "call: keywords: 'a b' is not a name"),
        ("call: {keywords: [a, a]}", "call: keywords: a keyword is given twice"),
    ],
)
def test_a_bad_call_is_a_load_error(tmp_path, call, message):
    from canary.matrix.model import MatrixError, load_matrix

    path = tmp_path / "m.yaml"
    path.write_text(
        f"upstream: up\nchecks:\n  - id: c\n    module: up\n    function: f\n    {call}\n"
    )
    with pytest.raises(MatrixError) as caught:
        load_matrix(path)
    assert str(caught.value) == f"{path}:6: check 'c': {message}"


def test_call_needs_a_function(tmp_path):
    from canary.matrix.model import MatrixError, load_matrix

    path = tmp_path / "m.yaml"
    path.write_text(
        "upstream: up\nchecks:\n  - id: c\n    module: up\n    class: A\n    call: {args: 1}\n"
    )
    with pytest.raises(MatrixError, match="call: needs `function` in the same check"):
        load_matrix(path)
