"""Matrix YAML written by `canary scan`: valid SPEC files, unique ids, merges that keep the text."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest
import yaml

from canary.analysis.parselock import parse_locked
from canary.matrix.model import load_matrix
from canary.scan.downstream.patterns import scan_tree
from canary.scan.proposing.ids import assign_ids, kebab
from canary.scan.proposing.propose import Proposal, propose
from canary.scan.writing.emit import (
    MergeError,
    Releases,
    merge_text,
    quote,
    render_matrix,
)

SUBJECTS = ("symbol", "class", "function")
KEYS = {"id", "why", "module", *SUBJECTS, "methods", "params", "accepts", "contains", "matches"}
KEYS |= {"severity", "since", "until", "versions"}

CODE = """
import inspect, re
from transformers import trainer as tr
from trl.models.utils import unwrap_model_for_generation

def step(self, model, inputs):
    pass

tr.Trainer.training_step = step
tr.Trainer.training_step(None, model=None, inputs=None)
src = inspect.getsource(tr.Trainer.__init__)
src.replace('hasattr(unwrapped_model, "accepts_loss_kwargs")\\n\\t\\u00e9', "")
re.search(r"def \\w+\\(", src)
unwrap_model_for_generation(m, a, gather_deepspeed3_params=False)
if hasattr(tr, "TRAINER_STATE_NAME"):
    pass
"""


def proposals(code: str = CODE) -> dict[str, list[Proposal]]:
    scanner = scan_tree(
        parse_locked(textwrap.dedent(code)), "pkg/mod.py", frozenset({"trl", "transformers"})
    )
    return propose(scanner.findings, scanner.modules)


def assert_valid_matrix(text: str, folder: Path) -> dict:
    """The engine loads it (SPEC keys, types, regexes), and each check cites a file:line."""
    path = folder / "matrix.yaml"
    path.write_text(text)
    matrix = load_matrix(path)
    data = yaml.safe_load(text)
    assert [check.id for check in matrix.checks] == [check["id"] for check in data["checks"]]
    assert {"upstream", "versions", "checks"} <= set(data)
    ids = [check["id"] for check in data["checks"]]
    assert len(ids) == len(set(ids))
    for check in data["checks"]:
        assert set(check) <= KEYS, check
        assert re.fullmatch(r"[a-z0-9-]+", check["id"])
        assert re.search(r"\S+\.py:\d+", check["why"])
        assert len([k for k in SUBJECTS if k in check]) <= 1
        assert check.get("severity", "error") in ("error", "info")
        for key in ("methods", "accepts", "call", "contains", "matches"):
            assert all(isinstance(v, str) for v in check.get(key, []))
        for regex in check.get("matches", []):
            re.compile(regex, re.MULTILINE)
    return data


def test_rendered_matrix_is_spec_yaml_with_exact_literals(tmp_path):
    text = render_matrix("transformers", proposals()["transformers"], Releases())
    data = assert_valid_matrix(text, tmp_path)
    assert (data["upstream"], data["package"], data["pypi"]) == ("transformers",) * 3
    assert (data["github"], data["src"]) == ("huggingface/transformers", "src")
    assert data["versions"] == {"releases": ">=0", "include": ["main"]}
    by_id = {check["id"]: check for check in data["checks"]}
    assert by_id["trainer-init-source"]["contains"] == [
        'hasattr(unwrapped_model, "accepts_loss_kwargs")\n\t\u00e9'
    ]
    assert by_id["trainer-init-source-regex"]["matches"] == [r"def \w+\("]
    assert by_id["trainer-training-step-accepts"]["accepts"] == ["model", "inputs"]
    assert by_id["trainer-state-name"]["severity"] == "info"
    assert by_id["trainer-state-name"]["symbol"] == "TRAINER_STATE_NAME"


@pytest.mark.parametrize(
    ("upstream", "github", "src", "branch"),
    [
        ("trl", "huggingface/trl", "", "main"),
        ("peft", "huggingface/peft", "src", "main"),
        ("transformers", "huggingface/transformers", "src", "main"),
        ("accelerate", "huggingface/accelerate", "src", "main"),
        ("bitsandbytes", "bitsandbytes-foundation/bitsandbytes", "", "main"),
        ("sentence_transformers", "UKPLab/sentence-transformers", "", "master"),
        ("vllm", "vllm-project/vllm", "", "main"),
    ],
)
def test_every_known_upstream_gets_its_repository_and_branch(upstream, github, src, branch):
    data = yaml.safe_load(render_matrix(upstream, [], Releases(">=1.0", "from x")))
    assert (data["github"], data["src"]) == (github, src)
    assert data["versions"] == {"releases": ">=1.0", "include": [branch]}


def test_another_upstream_gets_the_repository_its_release_names_else_a_placeholder():
    text = render_matrix("mylib", [], Releases(">=1.0", "from x"), repository="acme/mylib")
    data = yaml.safe_load(text)
    assert (data["github"], data["src"]) == ("acme/mylib", "")
    assert data["versions"] == {"releases": ">=1.0", "include": ["main"]}
    text = render_matrix("mylib", [], Releases(">=1.0", "from x"))
    data = yaml.safe_load(text)
    assert "github" not in data and "# github: OWNER/REPO" in text
    assert data["versions"] == {"releases": ">=1.0"} and data["checks"] == []


@pytest.mark.parametrize(
    "text",
    [
        'a"b\\c',
        "\x00\x1f\x7f\x85",
        "line\nnext\ttab",
        "\U0001f600 ok",
        "a \u2028 b",  # YAML breaks a line there and folds the spaces around it
        "x = 1 \u2029  y",
    ],
)
def test_quote_round_trips_any_string(text):
    assert yaml.safe_load(quote(text)) == text


def test_ids_are_kebab_and_unique_against_taken_ones():
    assert kebab("GRPOTrainer._prepare_inputs") == "grpo-trainer-prepare-inputs"
    assert kebab("__init__") == "init"
    found = proposals()["transformers"]
    ids = assign_ids(found + found, taken=["trainer-training-step-accepts"])
    assert len(set(ids)) == len(ids) == 2 * len(found)
    assert "trainer-training-step-accepts" not in ids
    assert all(re.fullmatch(r"[a-z0-9-]+", i) for i in ids)


USER_MATRIX = """\
# hand-written; keep this comment
upstream: transformers
github: huggingface/transformers
src: src

checks:
- id: step   # mine
  why: patched in ours.py:3
  module: transformers.trainer
  function: Trainer.training_step
  params: [model]
# a trailing comment in the list

versions:
  releases: ">=4.50"
"""


def test_merge_appends_only_missing_checks_and_keeps_the_users_text(tmp_path):
    merged, added = merge_text(USER_MATRIX, "m.yaml", proposals()["transformers"])
    cut = USER_MATRIX.index("# a trailing comment")
    assert merged.startswith(USER_MATRIX[:cut])
    assert merged.endswith(USER_MATRIX[cut:])
    data = assert_valid_matrix(merged, tmp_path)
    assert data["versions"] == {"releases": ">=4.50"}
    new = data["checks"][1:]
    assert len(new) == added == 4
    params = [c for c in new if c.get("function") == "Trainer.training_step"]
    assert params == [
        {
            "id": "trainer-training-step-accepts",
            "why": "used at pkg/mod.py:10; called with keyword arguments at pkg/mod.py:10"
            " (model, inputs); monkey-patched with a wrapper taking these parameters at"
            " pkg/mod.py:9 (model, inputs)",
            "module": "transformers.trainer",
            "function": "Trainer.training_step",
            "accepts": ["inputs"],
        }
    ]
    again, added_again = merge_text(merged, "m.yaml", proposals()["transformers"])
    assert (again, added_again) == (merged, 0)


def test_merge_compares_content_not_ids():
    existing = (
        "upstream: trl\nchecks:\n  - id: whatever\n    why: x\n    module: trl.models.utils\n"
        "    function: unwrap_model_for_generation\n"
        "    params: [gather_deepspeed3_params, model]\n"
    )
    assert merge_text(existing, "m.yaml", proposals()["trl"]) == (existing, 0)


@pytest.mark.parametrize(
    "existing",
    [
        "upstream: trl\n",
        "upstream: trl",
        "upstream: trl\nchecks:\n",
        "upstream: trl\nchecks: []\n",
        "upstream: trl\nchecks: []  # none yet\nversions: {}\n",
        "upstream: trl\nchecks:\nversions: {}\n",
    ],
)
def test_merge_into_files_without_checks(existing):
    merged, added = merge_text(existing, "m.yaml", proposals()["trl"])
    data = yaml.safe_load(merged)
    assert added == 1 and [c["function"] for c in data["checks"]] == ["unwrap_model_for_generation"]
    assert data["upstream"] == "trl"
    assert merged.startswith(existing.split("checks")[0].rstrip("\n"))


@pytest.mark.parametrize(
    ("existing", "message"),
    [
        ("checks: [{id: a, module: b}]\n", "flow-style"),
        ("- a\n- b\n", "not a matrix"),
        ("checks: {a: 1}\n", "not a list"),
        ("checks: [\n", "not valid YAML"),
    ],
)
def test_merge_refuses_files_it_cannot_append_to(existing, message):
    with pytest.raises(MergeError, match=message) as caught:
        merge_text(existing, "matrices/trl.yaml", proposals()["trl"])
    assert "matrices/trl.yaml" in str(caught.value)


def test_merge_passes_over_a_matrix_whose_package_is_no_import_name(tmp_path):
    """`package: "trl\n"` is no import name (the old `^...$` match let the line end through)."""
    from canary.scan.writing.merging import matrices_in

    (tmp_path / "a.yaml").write_text('upstream: trl\npackage: "trl\\n"\nchecks: []\n')
    (tmp_path / "b.yaml").write_text("upstream: trl\nchecks: []\n")
    assert [e.path.name for e in matrices_in(tmp_path)["trl"]] == ["b.yaml"]
    assert "trl\n" not in matrices_in(tmp_path)


def test_a_note_shared_by_checks_is_written_once_in_full():
    """16 checks of a module added within the range share one detail: in full above the
    first, its head and "as for ID above" over the others; a different note stays whole."""
    checks = proposals()["transformers"][:3]
    gated = "scan: holds from 5.5.0 on, not on 4.51.3 (lowest in range): module m not found"
    checks[0].notes, checks[1].notes = [gated], [gated]
    checks[2].notes = [gated.replace("5.5.0", "5.6.0")]
    text = render_matrix("transformers", checks, Releases())
    first = yaml.safe_load(text)["checks"][0]["id"]
    notes = [line.strip() for line in text.splitlines() if line.strip().startswith("# scan:")]
    assert notes == [
        f"# {gated}",
        f"# scan: holds from 5.5.0 on, not on 4.51.3: as for {first} above",
        f"# {gated.replace('5.5.0', '5.6.0')}",
    ]
