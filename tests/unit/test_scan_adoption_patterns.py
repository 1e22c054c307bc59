"""The false alarms scan avoids by construction (issue: adoption you can merge), each pattern
with the look-alike that must still give a hard contract."""

from __future__ import annotations

import textwrap

from canary.analysis.parselock import parse_locked
from canary.scan.downstream.patterns import scan_tree
from canary.scan.proposing.propose import propose

UPSTREAMS = frozenset({"trl", "transformers"})


def proposed(code: str) -> list[tuple]:
    """(module, subject key, subject, assertion, values, severity) of every proposed check."""
    scanner = scan_tree(parse_locked(textwrap.dedent(code)), "pkg/mod.py", UPSTREAMS)
    result = propose(scanner.findings, scanner.modules)
    return [
        (p.subject.module, p.subject.key, p.subject.name, p.assertion, p.values, p.severity)
        for checks in result.values()
        for p in checks
    ]


SOURCE = "import inspect\nfrom trl import GRPOTrainer\nsrc = inspect.getsource(GRPOTrainer.step)\n"


def texts(code: str) -> list[str]:
    return [v for c in proposed(SOURCE + textwrap.dedent(code)) if c[3] == "contains" for v in c[4]]


def test_texts_that_are_both_missing_before_giving_up_are_alternatives():
    assert texts('if "old_a" not in src and "old_b" not in src:\n    raise RuntimeError\n') == []
    assert texts('if ("old_a" not in src) and ("old_b" not in src):\n    return\n') == []
    assert texts('if "old_a" in src or "old_b" in src:\n    pass\n') == []


def test_texts_that_must_all_be_there_stay_required():
    assert texts('if "old_a" not in src or "old_b" not in src:\n    raise RuntimeError\n') == [
        "old_a",
        "old_b",
    ]
    assert texts('if "old_a" in src and "old_b" in src:\n    pass\n') == ["old_a", "old_b"]


def severities(code: str) -> dict[tuple, str]:
    return {c[:4]: c[5] for c in proposed(textwrap.dedent(code))}


def test_an_import_the_function_gives_up_without_tolerates_every_later_use():
    code = """
    def patch():
        try:
            from transformers.integrations.mxfp4 import replace_linear
        except Exception as e:
            return print(e)
        replace_linear(model=1, config=2)
    """
    found = severities(code)
    assert found[("transformers.integrations.mxfp4", "function", "replace_linear", "call")] == (
        "info"
    )


def test_an_import_whose_handler_binds_a_stand_in_tolerates_later_uses():
    code = """
    try:
        from transformers.integrations.mxfp4 import replace_linear
    except ImportError:
        replace_linear = None
    def patch():
        replace_linear(model=1)
    """
    assert set(severities(code).values()) == {"info"}


def test_an_import_whose_handler_goes_on_keeps_later_uses_hard():
    code = """
    def patch():
        try:
            from transformers.integrations.mxfp4 import replace_linear
        except ImportError:
            print("no mxfp4")
        replace_linear(model=1)
    """
    found = severities(code)
    assert found[("transformers.integrations.mxfp4", "function", "replace_linear", "call")] == (
        "error"
    )


def test_the_guard_ends_with_the_function_that_gave_up():
    code = """
    def patch():
        try:
            from transformers.integrations.mxfp4 import replace_linear
        except ImportError:
            return
    def other():
        from transformers.integrations.mxfp4 import replace_linear
        replace_linear(model=1)
    """
    found = severities(code)
    assert found[("transformers.integrations.mxfp4", "function", "replace_linear", "call")] == (
        "error"
    )


def test_a_name_read_with_a_default_then_injected_is_no_contract_of_upstream():
    code = """
    import transformers.models.auto.modeling_auto as auto_mod
    def alias():
        existing = getattr(auto_mod, "OLD_MAPPING_NAMES", None)
        if existing is not None:
            return
        auto_mod.OLD_MAPPING_NAMES = auto_mod.NEW_MAPPING_NAMES
    """
    found = severities(code)
    assert found[
        ("transformers.models.auto.modeling_auto", "symbol", "OLD_MAPPING_NAMES", None)
    ] == ("info")
    assert found[
        ("transformers.models.auto.modeling_auto", "symbol", "NEW_MAPPING_NAMES", None)
    ] == ("error")


def test_a_patch_of_a_name_read_without_a_default_is_a_contract():
    code = """
    import transformers.models.auto.modeling_auto as auto_mod
    def alias():
        existing = auto_mod.OLD_MAPPING_NAMES
        auto_mod.OLD_MAPPING_NAMES = dict(existing)
    """
    assert severities(code) == {
        ("transformers.models.auto.modeling_auto", "symbol", "OLD_MAPPING_NAMES", None): "error"
    }


def test_calls_through_a_name_read_with_a_default_are_tolerated():
    code = """
    from transformers.models.modernbert import modeling_modernbert as mb
    def patch():
        original = getattr(mb.ModernBertModel, "_update_attention_mask", None)
        if original is None:
            return
        original(None, output_attentions=False)
    """
    assert set(severities(code).values()) == {"info"}


def test_uses_after_hasattr_in_the_same_and_are_guarded():
    code = """
    import transformers.integrations.bitsandbytes as bnb
    if bnb is not None and hasattr(bnb, "_replace") and bnb._replace.__name__ != "mine":
        pass
    """
    assert set(severities(code).values()) == {"info"}


def test_uses_before_hasattr_in_an_and_stay_hard():
    code = """
    import transformers.integrations.bitsandbytes as bnb
    if bnb._replace.__name__ != "mine" and hasattr(bnb, "_other"):
        pass
    """
    found = severities(code)
    assert found[("transformers.integrations.bitsandbytes", "symbol", "_replace", None)] == "error"


MODULE_REGEX = """
import re
from collections import defaultdict

RL_FUNCTIONS = defaultdict(list)  # canary: rewrites trl.trainer.{key}

def rewrite(function_name, function):
    if function_name not in ("_compute_logps", "compute_ref_log_probs"):
        return function
    return _LOGPS_RE.sub(_repl, function)

RL_FUNCTIONS["kto_trainer"].append(rewrite)

_LOGPS_RE = re.compile(
    r"shift_logits = completion_logits\\[:, :-1, :\\]\\.contiguous\\(\\)\\n"
    r"\\s*per_token_logps = selective_log_softmax\\(",
    re.DOTALL,
)
"""


def matches(code: str) -> list[tuple]:
    from canary.scan.downstream.callsites import CallSites
    from canary.scan.downstream.rewriters import declared_registries

    calls = CallSites()
    calls.registries = declared_registries(code)
    tree = parse_locked(textwrap.dedent(code))
    scan_tree(tree, "pkg/rl.py", UPSTREAMS, calls)  # the first pass registers the rewriters
    calls.frozen = True
    scanner = scan_tree(tree, "pkg/rl.py", UPSTREAMS, calls)
    result = propose(scanner.findings, scanner.modules)
    return [(p.subject.module, p.values) for c in result.values() for p in c if p.assertion]


def test_a_module_level_regex_compiled_after_its_use_is_a_matches_check():
    assert matches(MODULE_REGEX) == [
        (
            "trl.trainer.kto_trainer",
            [
                r"(?s)shift_logits = completion_logits\[:, :-1, :\]\.contiguous\(\)\n"
                r"\s*per_token_logps = selective_log_softmax\("
            ],
        )
    ]


def test_a_module_level_regex_applied_to_the_client_s_own_text_says_nothing():
    code = MODULE_REGEX.replace("_LOGPS_RE.sub(_repl, function)", '_LOGPS_RE.sub(_repl, "mine")')
    assert matches(code) == []


CLASS_REGEX = """
import inspect, re
from trl.trainer.kto_trainer import KTOTrainer

class Fixer:
    _RE = re.compile(r"per_token_logps\\[.+\\] = 0\\.0")

    def fix(self):
        src = inspect.getsource(KTOTrainer._compute_logps)
        return self._RE.sub("", src)
"""


def test_a_class_level_regex_applied_through_self_is_a_matches_check():
    found = [c for c in proposed(CLASS_REGEX) if c[3] == "matches"]
    assert found == [
        (
            "trl.trainer.kto_trainer",
            "function",
            "KTOTrainer._compute_logps",
            "matches",
            [r"per_token_logps\[.+\] = 0\.0"],
            "error",
        )
    ]


def test_a_class_level_regex_of_another_class_is_not_followed():
    code = CLASS_REGEX.replace("self._RE.sub", "Other._RE.sub")
    assert [c for c in proposed(code) if c[3] == "matches"] == []


def test_replacing_two_spellings_by_the_same_text_wants_either():
    code = """
    src = src.replace("is_torch_tpu_available()", "False")
    src = src.replace("is_torch_xla_available()", "False")
    """
    assert texts(code) == []


def test_deleting_two_texts_wants_both():
    code = """
    src = src.replace("old_line_a", "")
    src = src.replace("old_line_b", "")
    src = src.replace("old_line_c", "new_c").replace("old_line_d", "new_d")
    """
    assert sorted(texts(code)) == ["old_line_a", "old_line_b", "old_line_c", "old_line_d"]


def test_a_text_the_client_inserted_by_a_computed_string_is_not_sought():
    code = '''
    extra = """debug_info = \\\\
        logger.warning(debug_info)"""
    extra = extra.split("\\\\n")
    extra = "\\\\n".join([extra[0]] + ["    " + x for x in extra[1:]])
    src = src.replace("original_debug_text", extra)
    src = src.replace("debug_info =", "patched =")
    '''
    assert texts(code) == ["original_debug_text"]


def test_a_text_not_inserted_before_is_still_sought():
    code = """
    extra = "unrelated text here"
    src = src.replace("original_debug_text", extra.upper())
    src = src.replace("debug_info =", "patched =")
    """
    assert sorted(texts(code)) == ["debug_info =", "original_debug_text"]


def test_a_replacement_scan_cannot_read_inserts_nothing_known():
    code = """
    def fix(new_text):
        out = src.replace("original_debug_text", new_text)
        out = out.replace("another_text", compute())
        return out.replace("third_text", "x")
    """
    assert sorted(texts(code)) == ["another_text", "original_debug_text", "third_text"]


def test_a_fallback_replace_run_when_the_first_changed_nothing_wants_either():
    code = """
    new = src.replace("old_a", "new_a")
    if new == src:
        new = src.replace("old_b", "new_b")
    """
    assert texts(code) == []
    returned = """
    def fix(function):
        new_function = function.replace("old_a", f"new_a{x}")
        if new_function != function:
            return new_function
        return function.replace("old_b", f"new_b{x}")
    """
    assert texts(returned.replace("function)", "function=src)", 1)) == []


def test_a_chain_of_fallback_replaces_wants_any_of_them():
    code = """
    new = src.replace("old_a", "new_a")
    if new == src:
        new = src.replace("old_b", "new_b")
    if new == src:
        new = src.replace("old_c", "new_c")
    """
    assert texts(code) == []


def test_texts_tested_in_an_if_and_its_else_are_alternatives():
    elif_chain = """
    if "old_a" in src:
        src = src.replace("old_a", "new_a")
    elif "old_b" in src:
        src = src.replace("old_b", "new_b")
    """
    found = proposed(SOURCE + textwrap.dedent(elif_chain))
    assert [c[4:] for c in found if c[3] == "contains"] == [(["old_b"], "info")]
    # the method itself, read unguarded, stays a hard check
    assert ("GRPOTrainer.step", None, [], "error") in [c[2:] for c in found]


def test_a_text_tested_without_an_else_or_before_giving_up_is_a_contract():
    no_else = """
    if "old_a" in src:
        src = src.replace("old_a", "new_a")
        src = src.replace("old_c", "new_c")
    """
    assert texts(no_else) == ["old_a", "old_c"]
    gives_up = """
    if "old_a" in src:
        src = src.replace("old_a", "new_a")
    else:
        raise RuntimeError("unsupported trl")
    """
    assert texts(gives_up) == ["old_a"]


def test_two_rewrites_filling_one_template_differently_want_either_spelling():
    code = """
    import re
    body = "prompts_text = []\\nfor x in __INPUTS__:"
    src = src.replace("old_for_inputs", body.replace("__INPUTS__", "inputs"))
    src = re.sub(r"old_for_prompts\\s+", body.replace("__INPUTS__", "prompts"), src)
    """
    found = proposed(SOURCE + textwrap.dedent(code))
    assert [c for c in found if c[3] in ("contains", "matches")] == []


def test_rewrites_filling_different_templates_or_none_each_want_their_text():
    code = """
    import re
    body, other = "new_body __X__", "other_body __X__"
    src = src.replace("old_a", body.replace("__X__", "a"))
    src = re.sub(r"old_b\\s+", other.replace("__X__", "b"), src)
    src = src.replace("old_c", body)
    """
    found = proposed(SOURCE + textwrap.dedent(code))
    assert [c[3:5] for c in found if c[3] in ("contains", "matches")] == [
        ("contains", ["old_a", "old_c"]),
        ("matches", ["old_b\\s+"]),
    ]


def test_replaces_not_compared_with_the_original_each_want_their_text():
    code = """
    new = src.replace("old_a", "new_a")
    if new == "something else":
        new = src.replace("old_b", "new_b")
    other = new.replace("old_c", "new_c")
    """
    assert texts(code) == ["old_a", "old_b", "old_c"]


def test_a_replace_putting_back_the_text_it_seeks_needs_nothing():
    assert texts('src = src.replace("same_text", "same_text")\n') == []
    assert texts('src = src.replace("same_text", "same_text()")\n') == ["same_text"]


def test_a_text_whose_absence_the_client_handles_is_no_contract():
    code = """
    if "gradient_checkpointing" not in src:
        GRPOTrainer.layer = object
    """
    assert texts(code) == []
    both = 'if "old_a" not in src and "old_b" not in src:\n    GRPOTrainer.x = 1\n'
    assert texts(both) == []


def test_a_text_without_which_the_client_gives_up_is_a_contract():
    for ending in ("return", "raise RuntimeError", "print(1)\n        return"):
        code = f'def f():\n    if "must_be_there" not in src:\n        {ending}\n'
        assert texts(code) == ["must_be_there"], ending
    present = 'if "old_a" in src:\n    GRPOTrainer.x = 1\n'
    assert texts(present) == ["old_a"]


def test_an_import_for_type_checkers_only_is_no_contract():
    code = """
    from typing import TYPE_CHECKING
    import typing
    if TYPE_CHECKING:
        from transformers import PreTrainedModel
    if typing.TYPE_CHECKING:
        from trl import GRPOTrainer
    else:
        from trl import SFTTrainer
    """
    assert [c[:3] for c in proposed(code)] == [("trl", "symbol", "SFTTrainer")]
    runtime = "if RUNTIME_CHECK:\n    from transformers import PreTrainedModel\n"
    assert [c[:3] for c in proposed(runtime)] == [("transformers", "symbol", "PreTrainedModel")]


def gates(code: str) -> dict[str, str]:
    scanner = scan_tree(parse_locked(textwrap.dedent(code)), "pkg/mod.py", UPSTREAMS)
    result = propose(scanner.findings, scanner.modules)
    return {p.subject.name or "": p.gate for checks in result.values() for p in checks}


def test_a_chained_version_comparison_gates_to_its_interval():
    code = """
    import trl
    from packaging.version import Version
    if Version("0.20.0") <= Version(trl.__version__) < Version("0.24.0"):
        from trl.trainer.utils import mid_helper
    else:
        from trl.trainer.utils import other_helper
    """
    found = gates(code)
    assert found["mid_helper"] == ">=0.20.0,<0.24.0"
    # either side of the interval, until the range read says which one (ranges.narrowed)
    assert found["other_helper"] == "<0.20.0||>=0.24.0"


def test_a_chain_that_compares_no_upstream_version_gates_nothing():
    code = """
    if 0 <= level < 3:
        from trl.trainer.utils import mid_helper
    """
    assert gates(code) == {"mid_helper": ""}


def test_require_version_gates_the_rest_of_its_block():
    code = """
    from transformers.utils.versions import require_version
    def patch():
        from trl.trainer.utils import before
        require_version("trl>=0.20.0,<2", "this patch needs a newer trl")
        from trl.trainer.utils import after
    def other():
        from trl.trainer.utils import elsewhere
    """
    found = gates(code)
    assert found["after"] == "<2,>=0.20.0"
    assert found["before"] == found["elsewhere"] == found["require_version"] == ""


def test_require_version_of_another_package_or_no_literal_gates_nothing():
    code = """
    from transformers.utils.versions import require_version
    def patch(spec):
        require_version("torch>=2.4")
        require_version(spec)
        require_version("trl")
        from trl.trainer.utils import after
    """
    assert gates(code)["after"] == ""


def test_the_else_of_hasattr_is_a_fallback_the_client_tolerates_failing():
    code = """
    import transformers.models.gemma3.modeling_gemma3 as g
    from transformers.models.gemma3.modeling_gemma3 import Gemma3ForConditionalGeneration
    def _mask(self, attention_mask):
        return attention_mask
    if hasattr(g, "Gemma3Model"):
        g.Gemma3Model._update_causal_mask = _mask
    else:
        g.Gemma3ForConditionalGeneration._update_causal_mask = _mask
    """
    found = severities(code)
    method = "Gemma3ForConditionalGeneration._update_causal_mask"
    assert found[("transformers.models.gemma3.modeling_gemma3", "function", method, None)] == (
        "info"
    )
    # the class, imported unguarded, stays a hard check of its own
    name = "Gemma3ForConditionalGeneration"
    assert found[("transformers.models.gemma3.modeling_gemma3", "symbol", name, None)] == "error"


def test_what_follows_an_if_hasattr_without_else_stays_hard():
    code = """
    import transformers.models.gemma3.modeling_gemma3 as g
    def _mask(self, attention_mask):
        return attention_mask
    if hasattr(g, "Gemma3Model"):
        g.Gemma3Model._update_causal_mask = _mask
    g.Gemma3ForConditionalGeneration._update_causal_mask = _mask
    """
    found = severities(code)
    method = "Gemma3ForConditionalGeneration._update_causal_mask"
    assert found[("transformers.models.gemma3.modeling_gemma3", "function", method, None)] == (
        "error"
    )


def either(code: str) -> set[tuple]:
    """(subject, its alternatives, assertion) of every proposed check."""
    scanner = scan_tree(parse_locked(textwrap.dedent(code)), "pkg/mod.py", UPSTREAMS)
    return {
        (p.subject.name, tuple(a.name for a in p.subject.alternatives), p.assertion)
        for checks in propose(scanner.findings, scanner.modules).values()
        for p in checks
    }


def test_later_uses_of_a_name_a_try_and_its_handler_bind_differently_want_either():
    code = """
    try:
        from transformers import AutoModelForImageTextToText
        AutoModelForVision2Seq = AutoModelForImageTextToText
    except ImportError:
        from transformers import AutoModelForVision2Seq
    def load(path):
        return AutoModelForVision2Seq.from_pretrained(path, token=None)
    """
    found = either(code)
    new, old = "AutoModelForImageTextToText", "AutoModelForVision2Seq"
    assert (f"{new}.from_pretrained", (f"{old}.from_pretrained",), "accepts") in found
    assert not [c for c in found if c[0].startswith(old)]  # never the old name alone


def test_later_uses_of_a_name_bound_one_way_stay_of_that_object():
    code = """
    try:
        from transformers import AutoModelForVision2Seq
    except ImportError:
        AutoModelForVision2Seq = None
    from transformers import AutoModelForCausalLM
    def load(path):
        return AutoModelForCausalLM.from_pretrained(path, token=None)
    """
    found = either(code)
    assert ("AutoModelForCausalLM.from_pretrained", (), "accepts") in found


def test_an_else_after_a_test_of_no_upstream_source_stays_hard():
    code = """
    from transformers.integrations.fbgemm_fp8 import FbgemmFp8Linear
    def load(state_dict, name):
        if f"{name}.bias" in state_dict:
            bias = True
        else:
            FbgemmFp8Linear(in_features=0, weight_dtype=None)
    """
    found = severities(code)
    accepts = ("transformers.integrations.fbgemm_fp8", "function", "FbgemmFp8Linear.__init__")
    assert found[(*accepts, "accepts")] == "error"


def test_keywords_passed_by_what_the_signature_takes_are_tolerated():
    code = """
    import inspect
    from transformers.integrations.fbgemm_fp8 import FbgemmFp8Linear
    def build(size):
        kwargs = {"in_features": size}
        if "weight_dtype" in inspect.signature(FbgemmFp8Linear.__init__).parameters:
            kwargs["weight_dtype"] = None
        else:
            kwargs["dtype"] = None
        return FbgemmFp8Linear(**kwargs)
    """
    scanner = scan_tree(parse_locked(textwrap.dedent(code)), "pkg/mod.py", UPSTREAMS)
    accepts = {
        tuple(p.values): p.severity
        for checks in propose(scanner.findings, scanner.modules).values()
        for p in checks
        if p.assertion == "accepts"
    }
    assert accepts == {("in_features",): "error", ("weight_dtype",): "info", ("dtype",): "info"}


def test_keywords_passed_to_a_name_a_try_and_its_handler_bind_are_one_check_of_either():
    """Whichever import won, that one object takes every keyword: one any_of check with all
    of them, not one per keyword (zoo's LoRAModel.from_local_checkpoint made eight)."""
    code = """
    try:
        from transformers import AutoModelForImageTextToText as Auto
    except ImportError:
        from transformers import AutoModelForVision2Seq as Auto
    def load(path):
        return Auto.from_pretrained(path, token=None, revision="main")
    """
    scanner = scan_tree(parse_locked(textwrap.dedent(code)), "pkg/mod.py", UPSTREAMS)
    found = [
        (p.subject.name, len(p.subject.alternatives), sorted(p.values))
        for checks in propose(scanner.findings, scanner.modules).values()
        for p in checks
        if p.assertion == "accepts"
    ]
    assert found == [("AutoModelForImageTextToText.from_pretrained", 1, ["revision", "token"])]
