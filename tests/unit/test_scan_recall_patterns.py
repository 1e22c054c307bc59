"""The patterns behind the incidents scan missed on real history (issue 25, bench/recall.py),
each read from a fixture downstream (tests/fixtures/scan_recall) beside its negative case."""

from __future__ import annotations

from paths import FIXTURES

from canary.analysis.parselock import parse_locked
from canary.scan.downstream.callsites import CallSites
from canary.scan.downstream.patterns import scan_tree
from canary.scan.proposing.propose import propose

DOWNSTREAM = FIXTURES / "scan_recall" / "recalllib"
UPSTREAMS = frozenset({"trl", "transformers"})


def proposed(name: str, severity: bool = False) -> set[tuple]:
    """(module, subject, assertion, values, gate[, severity]) of every check scan proposes for
    one file."""
    tree = parse_locked((DOWNSTREAM / name).read_text())
    calls = CallSites()
    scan_tree(tree, f"recalllib/{name}", UPSTREAMS, calls)  # the first pass learns the helpers
    calls.frozen = True
    scanner = scan_tree(tree, f"recalllib/{name}", UPSTREAMS, calls)
    return {
        (p.subject.module, p.subject.name, p.assertion, tuple(p.values), p.gate)
        + ((p.severity,) if severity else ())
        for checks in propose(scanner.findings, scanner.modules).values()
        for p in checks
    }


FP8 = "transformers.integrations.finegrained_fp8"
GENERATION = "transformers.generation.utils"


def test_keywords_put_in_a_dict_then_spread_count_as_passed_under_their_guards():
    found = proposed("spread_keywords.py")
    assert (FP8, "FP8Linear.__init__", "accepts", ("in_features", "bias", "dtype"), "") in found
    assert (FP8, "FP8Linear.__init__", "accepts", ("device",), "<5.0.0") in found
    call = ("1:input_ids,num_logits_to_keep",)
    assert (GENERATION, "prepare_inputs", "call", call, "") in found


def test_spread_keywords_bound_per_branch_dropped_or_unknown_say_only_what_is_known():
    found = {c for c in proposed("spread_negatives.py") if c[2] in ("accepts", "call")}
    assert found == {
        (FP8, "FP8Expert.__init__", "accepts", ("in_features",), ""),
        (FP8, "FP8Expert.__init__", "accepts", ("bias",), "<5.0.0"),
        (FP8, "FP8Expert.__init__", "accepts", ("has_bias",), ">=5.0.0"),
        (GENERATION, "prepare_cache", "accepts", ("batch_size",), ""),
    }


GPT_OSS = "transformers.models.gpt_oss.modeling_gpt_oss"
LLAMA = "transformers.models.llama.modeling_llama"


def test_a_helper_handed_the_target_and_its_name_installs_the_replacements_parameters():
    found = proposed("installers.py", severity=True)
    common = ("hidden_states", "attention_mask", "cache_position")  # in every variant
    assert (GPT_OSS, "GptOssAttention.forward", "params", common, "", "error") in found
    rope = ("q", "k", "cos", "sin")
    assert (LLAMA, "apply_rotary_pos_emb", "params", rope, "", "error") in found


def test_helpers_that_rebind_or_take_a_literal_name_and_a_replacement_class_give_no_params():
    found = proposed("installers_negatives.py")
    assert not [c for c in found if c[2] == "params"]
    assert not [c for c in found if (c[1] or "").endswith(".forward")]
    assert ("transformers.integrations.mxfp4", "Mxfp4GptOssExperts", None, (), "") in found


GRPO = "trl.trainer.grpo_trainer"
SFT = "trl.trainer.sft_trainer"


def test_a_source_formatted_into_a_template_is_still_that_source():
    found = proposed("formatted.py")
    peft = r"if is_peft_model\(model\) and args\.beta != 0\.0:"
    assert (GRPO, "GRPOTrainer.__init__", "matches", (peft,), "") in found
    prepare = "model = self._prepare_peft_model(model, peft_config, args)"
    assert (SFT, "SFTTrainer.__init__", "contains", (prepare,), "") in found


def test_a_templates_own_text_a_template_of_no_source_and_a_repr_seek_nothing_upstream():
    found = proposed("formatted_negatives.py")
    assert not [c for c in found if c[2] in ("contains", "matches")]


def test_a_helper_rewriting_its_local_in_place_still_returns_the_source():
    found = proposed("rebound_helpers.py")
    texts = ("class GRPOTrainer", "self._prepare_peft_model(")  # the helper's, the caller's
    assert (GRPO, "GRPOTrainer", "contains", texts, "") in found


def test_a_helper_whose_local_is_rebound_to_other_text_returns_no_source():
    found = proposed("rebound_negatives.py")
    assert not [c for c in found if c[2] in ("contains", "matches")]


def test_a_class_chosen_from_a_modules_dir_is_any_class_of_that_module():
    found = proposed("listed_names.py")
    peft = r"if is_peft_model\(model\) and args\.beta != 0\.0:"
    assert (GRPO, None, "matches", (peft,), "") in found
    text = ("dataset_text_field: str = ",)
    assert ("trl.trainer.sft_config", None, "contains", text, "") in found


def test_lowercase_names_and_a_name_looked_up_in_another_module_are_no_class():
    found = proposed("listed_negatives.py")
    assert not [c for c in found if c[2] in ("contains", "matches")]


def test_a_probe_that_only_supplies_what_the_text_calls_for_is_no_contract():
    found = proposed("supplied_texts.py")
    assert not [c for c in found if c[2] in ("contains", "matches")]


def test_a_probe_reading_the_source_flagging_patching_or_giving_up_needs_its_text():
    found = proposed("supplied_negatives.py")
    texts = {t for c in found if c[2] == "contains" for t in c[3]}
    assert texts == {"reads_source", "sets_flag", "patches", "gives_up"}


LLAMA = "transformers.models.llama.modeling_llama"


def test_a_probe_of_every_text_of_a_list_needs_each_text():
    found = proposed("probed_lists.py")
    texts = {t for c in found if c[:3] == (LLAMA, "LlamaModel.forward", "contains") for t in c[3]}
    needed = {"past_key_values", "cache_position", "position_ids", "attention_mask"}
    assert texts == needed | {"output_hidden_states"}


def test_a_probe_of_any_text_or_one_whose_failure_is_handled_needs_none():
    found = proposed("probed_lists_negatives.py")
    assert not [c for c in found if c[2] in ("contains", "matches")]


def test_keys_put_in_on_a_branch_go_only_to_the_callee_bound_on_that_branch():
    found = {c for c in proposed("spread_branch_callee.py") if c[2] in ("accepts", "call")}
    chosen = ("bias", "checkpoint_dir", "device", "vocab_size")  # never `tensors`
    assert (FP8, "FP8Linear.from_checkpoint", "accepts", chosen, "") in found
    assert not [c for c in found if c[1] == "FP8Linear.from_checkpoint" and "tensors" in c[3]]
    either = ("checkpoint_dir", "weights")  # the callee bound before the branch takes both
    assert (FP8, "FP8Expert.from_checkpoint", "accepts", either, "") in found


INIT = "SFTTrainer.__init__"


def test_a_text_sharing_a_short_word_with_an_insertion_is_still_expected():
    peft = "model = self._prepare_peft_model(model, peft_config, args)\n"
    found = {c[3] for c in proposed("inserted_words.py") if c[2] == "contains"}
    assert found == {("get_peft_model(model, peft_config)", peft)}


def test_a_text_within_or_telling_of_an_insertion_is_not_expected():
    found = {c for c in proposed("inserted_words_negatives.py") if c[2] == "contains"}
    upstream = ("self.model_init = model_init", "if peft_config is not None:")
    assert found == {(SFT, INIT, "contains", upstream, "")}


def test_two_spellings_replaced_by_one_statement_whitespace_aside_want_either():
    assert not [c for c in proposed("spellings.py") if c[2] == "contains"]


def test_texts_replaced_by_different_statements_or_deleted_are_each_wanted():
    found = {c for c in proposed("spellings_negatives.py") if c[2] == "contains"}
    wanted = (
        "self.model_init = model_init\n",
        "self.ref_model = None",
        "old_line_a\n",
        "old_line_b",
    )
    assert found == {(SFT, INIT, "contains", wanted, "")}
