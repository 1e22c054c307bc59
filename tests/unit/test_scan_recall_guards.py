"""Guards and attributes as real patches use them (issue 25). A hasattr guard is tolerance only
where the client has another path (item 7, incident transformers-replace-with-bnb-linear): a
bare `if hasattr(X, "n"): patch` silently stops applying where the name is gone, the stale
patch canary is for. An attribute read from an upstream instance the client holds
(`self.lora_config.NAME`, incident vllm-lora-extra-vocab-size) is one the class must bind."""

from __future__ import annotations

import yaml
from test_scan_recall_patterns import DOWNSTREAM, proposed

from canary.analysis.parselock import parse_locked
from canary.scan.downstream.patterns import scan_tree
from canary.scan.proposing.propose import propose
from canary.scan.writing.emit import merge_text

BNB = "transformers.integrations.bitsandbytes"
LLAMA = "transformers.models.llama.modeling_llama"


def severities(name: str) -> dict[tuple, str]:
    """(module, subject, assertion, values) -> severity of what scan proposes for one file."""
    return {c[:4]: c[5] for c in proposed(name, severity=True)}


def test_a_patch_under_hasattr_with_no_other_path_needs_the_name():
    found = severities("stale_patches.py")
    text = ("current_key_name.append(name)",)
    assert found[(BNB, "_replace_with_bnb_linear", "contains", text)] == "error"
    assert found[(LLAMA, "LlamaRMSNorm.forward", None, ())] == "error"  # else: pass
    assert found[(LLAMA, "LlamaMLP.forward", None, ())] == "error"  # else: raise


def test_a_hasattr_guard_with_a_fallback_or_no_patch_tolerates_the_name():
    found = severities("stale_patch_negatives.py")
    assert found[(LLAMA, "LlamaFlashAttention2.forward", None, ())] == "info"
    assert found[(LLAMA, "LlamaRotaryEmbedding.forward", None, ())] == "info"
    assert found[(LLAMA, "LlamaModel", "methods", ("forward",))] == "info"  # a read


GENERATION = "transformers.generation.configuration_utils"


def test_an_attribute_read_from_an_instance_held_by_self_is_proposed_on_its_class():
    found = proposed("instance_attributes.py")
    read = ("max_new_tokens", "top_k")  # top_k of the Optional[...] one
    assert (GENERATION, "GenerationConfig", "attributes", read, "") in found
    assert (GENERATION, "GenerationConfig", "methods", ("to_dict",), "") in found  # called


def test_attributes_the_client_sets_or_of_no_upstream_class_propose_nothing():
    found = proposed("instance_attribute_negatives.py")
    assert not [c for c in found if c[2] == "attributes"]


def test_a_users_attributes_check_gains_only_the_attributes_read_since():
    tree = parse_locked((DOWNSTREAM / "instance_attributes.py").read_text())
    scanner = scan_tree(tree, "recalllib/instance_attributes.py", frozenset({"transformers"}))
    mine = (
        "upstream: transformers\nchecks:\n  - id: mine\n    why: x\n"
        f"    module: {GENERATION}\n    class: GenerationConfig\n    attributes: [max_new_tokens]\n"
    )
    found = propose(scanner.findings, scanner.modules)["transformers"]
    added = yaml.safe_load(merge_text(mine, "m.yaml", found)[0])["checks"][1:]
    assert [c["attributes"] for c in added if "attributes" in c] == [["top_k"]]
