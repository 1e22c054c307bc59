"""Check ids that read: words of the subject, the module's last part on a clash, <= 60."""

from __future__ import annotations

import pytest

from canary.scan.proposing.ids import MAX_LENGTH, assign_ids, kebab
from canary.scan.proposing.propose import Proposal, ProposedSubject


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("LoRAModel", "lora-model"),
        ("Glm4MoeMoE", "glm4-moe-moe"),
        ("GRPOTrainer._prepare_inputs", "grpo-trainer-prepare-inputs"),
        ("Qwen2VLForConditionalGeneration", "qwen2-vl-for-conditional-generation"),
        ("LRUCacheWorkerLoRAManager", "lru-cache-worker-lora-manager"),
        ("MODEL_FOR_VISION_2_SEQ_MAPPING_NAMES", "model-for-vision-2-seq-mapping-names"),
        ("__init__", "init"),
        ("causal_conv1d_fn", "causal-conv1d-fn"),
        ("apply_4bit_weight", "apply-4bit-weight"),
    ],
)
def test_words_of_the_subject(name, expected):
    assert kebab(name) == expected


def proposal(module: str, name: str | None, assertion: str | None = None) -> Proposal:
    return Proposal(
        ProposedSubject(module, "class" if name else None, name), assertion, [], "error", []
    )


def test_a_clash_takes_the_module_s_last_part_said_once():
    first = proposal("transformers.trainer", "Trainer.training_step", "contains")
    second = proposal("trl.trainer.sft_trainer", "Trainer.training_step", "contains")
    assert assign_ids([first, second], ()) == [
        "trainer-training-step-source",
        "sft-trainer-training-step-source",
    ]


def test_a_module_subject_is_named_by_its_last_part():
    found = proposal("trl.trainer.kto_trainer", None, "matches")
    assert assign_ids([found], ()) == ["kto-trainer-source-regex"]


def test_long_names_are_cut_at_a_word_and_stay_unique():
    long = "Qwen3_5MoeMoeCausalLMOutputWithPastAndSomethingElseEntirelyTooLong"
    found = [
        proposal(f"transformers.models.qwen3_5_moe.modeling_qwen3_5_moe{n}", long) for n in "ab"
    ]
    ids = assign_ids(found + found, ())
    assert len(set(ids)) == 4 and all(len(i) <= MAX_LENGTH for i in ids), ids
    assert not any(i.endswith("-") or "--" in i for i in ids)
