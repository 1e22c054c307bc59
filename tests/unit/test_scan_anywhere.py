"""A rewrite table applied to a class chosen at run time (issue 45 item 6: axolotl's LoRA
kernels rewrite the forward of whatever attention class the config names; unsloth-zoo and
unsloth the source of whatever class they are handed): each text is looked for in every module
of the newest release and proposed on the class holding it, or the site is listed as a rewrite
not placed, never left silent.

Downstream tests/fixtures/scan_anywhere (anylib); its upstream's newest release
tests/fixtures/scan_anywhere_upstream.
"""

from __future__ import annotations

import yaml
from commands import canary
from paths import FIXTURES

DOWNSTREAM = FIXTURES / "scan_anywhere"
UPSTREAM = FIXTURES / "scan_anywhere_upstream"


def scanned(monkeypatch, tmp_path) -> tuple[list[dict], str, str]:
    """`canary scan` of anylib read against its upstream's folder, offline, in a cache of its
    own: the checks, scan's own lines and the matrix's text."""
    monkeypatch.setenv("CANARY_OFFLINE", "1")
    monkeypatch.setenv("CANARY_CACHE_DIR", str(tmp_path / "cache"))
    source = str(UPSTREAM)
    status, text = canary("scan", str(DOWNSTREAM), "--source", source, "--upstream", "transformers")
    assert status == 0
    notes, matrix = text.split("---\n", 1)
    return yaml.safe_load(matrix)["checks"], notes, matrix


def test_a_text_one_class_of_the_newest_release_holds_is_proposed_on_that_class(
    monkeypatch, tmp_path
):
    checks, _, _ = scanned(monkeypatch, tmp_path)
    texts = [(c["module"], c.get("class"), c["contains"]) for c in checks if "contains" in c]
    assert texts == [
        (
            "transformers.models.llama.modeling_llama",
            "LlamaAttention",
            ["    query_states = self.q_proj(hidden_states).view(shape)\n"],
        )
    ]


def test_texts_no_class_or_too_many_classes_hold_leave_their_sites_listed(monkeypatch, tmp_path):
    checks, notes, matrix = scanned(monkeypatch, tmp_path)
    # the second row (held by none) at the `in` test and the `.replace`, the output projection
    # (held by four attention classes: the one the client meets is chosen at run time)
    assert [line for line in matrix.splitlines() if "not placed" in line] == [
        "# 3 source rewrites not placed (of what, scan cannot tell): anylib/lora.py:26,27,28"
    ]
    assert "o_proj" not in repr(checks) and "qkv_fused" not in repr(checks)
    # a file that reads no upstream: not searched, said among scan's own lines
    assert [line for line in notes.splitlines() if "not placed" in line] == [
        "# 1 source rewrite not placed (of what, nor of which upstream, scan cannot tell):"
        " anylib/plain.py:6"
    ]
