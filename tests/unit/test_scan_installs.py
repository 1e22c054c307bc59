"""What a replacement installed by the package's helper promises of upstream (issue 26 item
1), read from a fixture downstream (tests/fixtures/scan_recall) with a look-alike for each."""

from __future__ import annotations

from test_scan_recall_patterns import proposed

MOE = "transformers.models.qwen3_moe.modeling_qwen3_moe"
LLAMA = "transformers.models.llama.modeling_llama"


def params() -> dict[str, tuple[str, ...]]:
    found = proposed("installers_adoption.py")
    return {c[1]: c[3] for c in found if c[0] in (MOE, LLAMA) and c[2] == "params"}


def test_each_branch_s_variant_reaches_the_patch_below():
    # the `if old:` variant takes hidden_states only: the else one's names are not required
    assert params()["Qwen3MoeSparseMoeBlock.forward"] == ("hidden_states",)


def test_a_later_def_in_the_same_branch_replaces_the_earlier():
    assert params()["Qwen3MoeMLP.forward"] == ("x", "gate")


def test_a_forced_install_matches_no_names():
    found = params()
    assert "Qwen3MoeExperts.forward" not in found
    assert found["Qwen3MoeAttention.forward"] == ("hidden_states", "top_k_index")


def test_a_replacement_taking_anything_is_installed_whatever_names_upstream_has():
    found = proposed("installers_adoption.py", severity=True)
    names = ("input_ids", "cache_position")
    # a name of its own upstream dropped is worth a look (renamed?), no failure to install
    assert (LLAMA, "LlamaModel.forward", "params", names, "", "info") in found
    assert (LLAMA, "LlamaModel.forward", None, (), "", "error") in found  # it must be there
    assert (LLAMA, "LlamaDecoderLayer.forward", "params", names, "", "error") in found
