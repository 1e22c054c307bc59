"""A hasattr guard is tolerance only where the client has another path (issue 25 item 7,
bench incident transformers-replace-with-bnb-linear): a bare `if hasattr(X, "n"): patch` is a
patch that silently stops applying where the name is gone, the stale patch canary is for."""

from __future__ import annotations

from test_scan_recall_patterns import proposed

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
