"""From red to fix: the transition, what a failing subject became, and `canary explain`, against
fixture releases of a fake upstream served by a loopback index (a moved class, a renamed
parameter, a rewritten line, a removed function with no successor)."""

from __future__ import annotations

import json
import shutil

import pytest
from campaign_upstream import PROJECT, locked_upstream

from canary.cli.main import main

pytest_plugins = ["pytester"]

OLD_LINE = "self.aux_loss_enabled = is_moe and args.router_aux_loss_coef != 0.0"
NEW_LINE = (
    'self.aux_loss_enabled = hasattr(text_config, "output_router_logits") and '
    "self.router_aux_loss_coef != 0.0"
)

GRPO_OLD = f"""class GRPOTrainer:
    def __init__(self, model, args):
        is_moe = getattr(model, "is_moe", False)
        {OLD_LINE}
        self.model = model

    def compute_loss(self, model, inputs):
        return 0.0
"""
GRPO_NEW = """class GRPOTrainer:
    def __init__(self, model, args):
        text_config = model.config
        self.router_aux_loss_coef = args.router_aux_loss_coef
        self.aux_loss_enabled = hasattr(text_config, "output_router_logits") \\
            and self.router_aux_loss_coef != 0.0
        self.model = model
"""
KTO = """class KTOTrainer:
    def __init__(self, model, beta=0.1):
        self.beta = beta
"""
DPO = "class DPOTrainer:\n    def __init__(self, model):\n        self.ref = None\n"
SHIM = (  # what a class that moved leaves behind: a subclass of the same name, warning
    "from .experimental.dpo import DPOTrainer as _DPOTrainer\n\n\n"
    "class DPOTrainer(_DPOTrainer):\n    def __init__(self, model):\n"
    "        warnings.warn('moved to fakepkg.experimental.dpo')\n        super().__init__(model)\n"
)
CORE_OLD = (
    "def run(model, eval_strategy=None):\n    return model\n\n\ndef helper(x):\n    return x\n"
)
CORE_NEW = "def run(model, evaluation_strategy=None):\n    return model\n"


def release(version: str) -> dict[str, bytes]:
    new = version.startswith("2.")
    files = {
        f"{PROJECT}/__init__.py": f'__version__ = "{version}"\n'.encode(),
        f"{PROJECT}/core.py": (CORE_NEW if new else CORE_OLD).encode(),
        f"{PROJECT}/grpo.py": (GRPO_NEW if new else GRPO_OLD).encode(),
        f"{PROJECT}/experimental/__init__.py": b"",
    }
    if new:  # GRPOTrainer.compute_loss became a function of its own module
        files[f"{PROJECT}/losses.py"] = b"def compute_loss(model, inputs):\n    return 0.0\n"
    if new:
        files[f"{PROJECT}/experimental/kto/__init__.py"] = b""
        files[f"{PROJECT}/experimental/kto/kto_trainer.py"] = (
            b"import os\n\n\n" + KTO.replace("0.1", "0.2").encode()
        )
        files[f"{PROJECT}/trainer.py"] = f"class Trainer:\n    pass\n\n\n{SHIM}".encode()
        files[f"{PROJECT}/experimental/dpo.py"] = f"import os\n\n\n{DPO}".encode()
    else:
        files[f"{PROJECT}/trainer.py"] = f"class Trainer:\n    pass\n\n\n{KTO}\n\n{DPO}".encode()
    return files


VERSIONS = ("1.0.0", "1.1.0", "2.0.0")
MATRIX = f"""\
upstream: {PROJECT}
github: owner/{PROJECT}
versions:
  releases: ">=1.0"
checks:
  - {{id: moved, module: {PROJECT}.trainer, class: KTOTrainer}}
  - {{id: renamed, module: {PROJECT}.core, function: run, params: [model, eval_strategy]}}
  - id: rewritten
    module: {PROJECT}.grpo
    function: GRPOTrainer.__init__
    contains: ["{OLD_LINE}"]
  - {{id: removed, module: {PROJECT}.core, function: helper}}
  - {{id: steady, module: {PROJECT}.core, function: run}}
  - {{id: method-gone, module: {PROJECT}.grpo, class: GRPOTrainer, methods: [compute_loss]}}
  - id: left-behind
    module: {PROJECT}.trainer
    function: DPOTrainer.__init__
    contains: ["self.ref = None"]
"""


@pytest.fixture
def upstream(tmp_path, monkeypatch):
    releases = {v: release(v) for v in VERSIONS}
    with locked_upstream(tmp_path, monkeypatch, releases, MATRIX) as server:
        yield server


def check_json(capsys) -> dict[str, dict]:
    assert main(["check", "--format", "json", "-q"]) == 1
    data = json.loads(capsys.readouterr().out)
    return {(r["check"], r["version"]): r for r in data["results"]}


def test_check_json_carries_the_transition_and_what_each_subject_became(upstream, capsys):
    rows = check_json(capsys)
    for check in ("moved", "renamed", "rewritten", "removed"):
        assert rows[check, "2.0.0"]["last_pass"] == "1.1.0"
        assert rows[check, "2.0.0"]["first_fail"] == "2.0.0"
        assert "last_pass" not in rows[check, "1.1.0"]
    assert "first_fail" not in rows["steady", "2.0.0"]

    moved = rows["moved", "2.0.0"]["moved_to"]
    assert moved["text"] == f"{PROJECT}.experimental.kto.kto_trainer.KTOTrainer"
    assert (moved["path"], moved["line"]) == (f"{PROJECT}/experimental/kto/kto_trainer.py", 4)

    renamed = rows["renamed", "2.0.0"]["closest"]
    assert (renamed["what"], renamed["text"]) == ("parameter", "evaluation_strategy")
    assert (renamed["path"], renamed["line"]) == (f"{PROJECT}/core.py", 1)

    closest = rows["rewritten", "2.0.0"]["closest"]
    assert closest["what"] == "line"
    assert closest["text"] == NEW_LINE  # the two physical lines as one logical line
    assert (closest["path"], closest["line"]) == (f"{PROJECT}/grpo.py", 5)

    behind = rows["left-behind", "2.0.0"]["moved_to"]
    assert behind["text"] == f"{PROJECT}.experimental.dpo.DPOTrainer.__init__"
    assert (behind["path"], behind["line"]) == (f"{PROJECT}/experimental/dpo.py", 5)
    assert "diff" not in rows["left-behind", "2.0.0"]  # the same text: only the move is news

    method = rows["method-gone", "2.0.0"]["moved_to"]
    assert (method["text"], method["path"]) == (
        f"{PROJECT}.losses.compute_loss",
        f"{PROJECT}/losses.py",
    )

    removed = rows["removed", "2.0.0"]["moved_to"]
    assert removed["text"] == "" and removed["searched"] >= 5


def test_the_diff_has_upstream_paths_and_real_line_numbers(upstream, capsys):
    diff = check_json(capsys)["rewritten", "2.0.0"]["diff"].splitlines()
    assert diff[0] == f"--- {PROJECT}/grpo.py (1.1.0)"
    assert diff[1] == f"+++ {PROJECT}/grpo.py (2.0.0)"
    assert diff[2].startswith("@@ -2,4 +2,6 @@")
    assert f"-        {OLD_LINE}" in diff
    moved = check_json(capsys)["moved", "2.0.0"]["diff"].splitlines()
    assert moved[:2] == [
        f"--- {PROJECT}/trainer.py (1.1.0)",
        f"+++ {PROJECT}/experimental/kto/kto_trainer.py (2.0.0)",
    ]
    assert moved[2].startswith("@@ -5,3 +4,3 @@")


def test_text_says_where_it_broke_and_what_it_became_on_the_next_lines(upstream, capsys):
    assert main(["check", "-q"]) == 1
    lines = capsys.readouterr().out.splitlines()
    at = next(i for i, line in enumerate(lines) if f"{PROJECT}::rewritten[2.0.0]" in line)
    assert lines[at + 1] == "      broke in 2.0.0 (held on 1.1.0)"
    assert lines[at + 2] == f"      closest in 2.0.0: {PROJECT}/grpo.py:5: {NEW_LINE}"
    at = next(i for i, line in enumerate(lines) if f"{PROJECT}::moved[2.0.0]" in line)
    assert lines[at + 2] == (
        f"      moved to {PROJECT}.experimental.kto.kto_trainer.KTOTrainer in 2.0.0 "
        f"({PROJECT}/experimental/kto/kto_trainer.py:4)"
    )
    at = next(i for i, line in enumerate(lines) if f"{PROJECT}::renamed[2.0.0]" in line)
    assert lines[at + 2] == (
        "      parameters added in 2.0.0 (the likely rename): "
        f"evaluation_strategy ({PROJECT}/core.py:1)"
    )
    at = next(i for i, line in enumerate(lines) if f"{PROJECT}::removed[2.0.0]" in line)
    assert lines[at + 2].startswith("      defined nowhere in 2.0.0 (")
    assert lines[at + 2].endswith(" modules read): no successor")


def test_saved_json_renders_the_transition_in_markdown_and_html(upstream, capsys, tmp_path):
    assert main(["check", "--format", "json", "-q", "--output", str(tmp_path / "r.json")]) == 1
    capsys.readouterr()
    assert main(["report", str(tmp_path / "r.json"), "--format", "markdown"]) == 1
    markdown = capsys.readouterr().out
    assert "  - broke in 2.0.0 (held on 1.1.0)" in markdown
    assert (
        f"  - closest in 2.0.0: {PROJECT}/grpo.py:5: self.aux_loss_enabled = hasattr(" in markdown
    )
    assert "<details><summary>diff of the subject, 1.1.0 to 2.0.0 (" in markdown
    assert f"  -        {OLD_LINE}" in markdown
    assert main(["report", str(tmp_path / "r.json"), "--format", "html"]) == 1
    page = capsys.readouterr().out
    assert "<br>      broke in 2.0.0 (held on 1.1.0)" in page
    assert f"<pre>--- {PROJECT}/grpo.py (1.1.0)\n+++ {PROJECT}/grpo.py (2.0.0)\n@@ -2,4" in page


def test_explain_tells_one_check_from_red_to_fix(upstream, capsys):
    assert main(["explain", f"{PROJECT}::rewritten"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"{PROJECT}::rewritten  (matrices/{PROJECT}.yaml:8)"
    assert out[1:4] == [
        "verdicts:",
        "  PASS  1.0.0\u20131.1.0",
        f"  FAIL  2.0.0  source of GRPOTrainer.__init__ lacks {OLD_LINE!r}",
    ]
    assert out[4] == "broke in 2.0.0 (held on 1.1.0)"
    assert out[5] == f"closest in 2.0.0: {PROJECT}/grpo.py:5: {NEW_LINE}"
    assert out[6] == f"compare: https://github.com/owner/{PROJECT}/compare/v1.1.0...v2.0.0"
    assert out[7] == (
        f"diff of GRPOTrainer.__init__: {PROJECT}/grpo.py:2-5 (1.1.0) -> "
        f"{PROJECT}/grpo.py:2-7 (2.0.0)"
    )
    assert out[8:11] == [
        f"--- {PROJECT}/grpo.py (1.1.0)",
        f"+++ {PROJECT}/grpo.py (2.0.0)",
        "@@ -2,4 +2,6 @@",
    ]


def test_explain_json_is_the_same_as_data_and_works_offline_from_the_cache(upstream, capsys):
    assert main(["explain", f"{PROJECT}::moved", "--format", "json"]) == 0
    online = json.loads(capsys.readouterr().out)
    upstream.stop()  # nothing answers any more: the cache alone
    assert main(["explain", f"{PROJECT}::moved", "--format", "json", "--offline"]) == 0
    assert json.loads(capsys.readouterr().out) == online
    assert online["transition"] == {"last_pass": "1.1.0", "first_fail": "2.0.0"}
    assert online["moved_to"]["text"] == f"{PROJECT}.experimental.kto.kto_trainer.KTOTrainer"
    assert online["old"] == {
        "name": "class KTOTrainer",
        "path": f"{PROJECT}/trainer.py",
        "start": 5,
        "end": 7,
    }
    assert online["new"]["path"] == f"{PROJECT}/experimental/kto/kto_trainer.py"
    assert "-    def __init__(self, model, beta=0.1):" in online["diff"].splitlines()
    assert [v["status"] for v in online["verdicts"]] == ["pass", "fail"]


def test_explain_says_when_a_check_never_broke(upstream, capsys):
    assert main(["explain", "steady"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "it never failed on a version checked"


def test_an_unknown_check_is_exit_2_with_a_did_you_mean(upstream, capsys):
    assert main(["explain", f"{PROJECT}::rewriten"]) == 2
    err = capsys.readouterr().err
    assert f"no check {PROJECT}::rewriten in matrices/{PROJECT}.yaml" in err
    assert f"(did you mean {PROJECT}::rewritten?)" in err
    assert "Traceback" not in err


def test_explain_on_a_release_that_cannot_be_read_names_the_cause(upstream, capsys, tmp_path):
    assert main(["check", "-q"]) == 1  # the verdicts are remembered
    capsys.readouterr()
    for members in [*(tmp_path / "cache").rglob("member")]:  # the files read are not
        shutil.rmtree(members)
    upstream.stop()
    assert main(["explain", f"{PROJECT}::rewritten", "--offline"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("canary: offline: ") and "not in cache" in err


def test_explain_of_a_check_its_versions_could_not_be_read_for_is_an_error(upstream, capsys):
    upstream.stop()
    assert main(["explain", f"{PROJECT}::rewritten", "--offline"]) == 1
    out = capsys.readouterr().out
    assert "  ERROR 1.0.0\u20132.0.0  offline: " in out
    assert out.splitlines()[-1] == "3 versions could not be read: where it broke is not known"


def test_an_annotation_carries_the_transition_on_its_next_lines(upstream, capsys):
    assert main(["check", "-q", "--format", "github"]) == 1
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if f"title=canary {PROJECT}%3A%3Arewritten" in x)
    assert line.endswith(
        f"%0Abroke in 2.0.0 (held on 1.1.0)%0Aclosest in 2.0.0: {PROJECT}/grpo.py:5: {NEW_LINE}"
    )


def test_a_warm_run_tells_the_story_again_without_reading_the_releases(upstream, capsys, tmp_path):
    told = check_json(capsys)
    for members in [*(tmp_path / "cache").rglob("member")]:  # nothing left to read them from
        shutil.rmtree(members)
    upstream.stop()
    assert main(["check", "--format", "json", "-q", "--offline"]) == 1
    again = {(r["check"], r["version"]): r for r in json.loads(capsys.readouterr().out)["results"]}
    assert again == told


def test_a_pytest_failure_says_where_it_broke_and_what_it_became(upstream, pytester, tmp_path):
    shutil.copytree(tmp_path / "matrices", pytester.path / "matrices")
    pytester.makeini("[pytest]\n")
    result = pytester.runpytest(f"--rootdir={pytester.path}", "-k", "rewritten or renamed")
    result.assert_outcomes(passed=4, failed=2)
    lines = result.stdout.lines
    at = next(i for i, line in enumerate(lines) if f" {PROJECT}::rewritten[2.0.0] _" in line)
    assert lines[at + 1 : at + 5] == [
        f"source of GRPOTrainer.__init__ lacks {OLD_LINE!r}",
        "broke in 2.0.0 (held on 1.1.0)",
        f"closest in 2.0.0: {PROJECT}/grpo.py:5: {NEW_LINE}",
        f"the diff: canary explain {PROJECT}::rewritten",
    ]
    at = next(i for i, line in enumerate(lines) if f" {PROJECT}::renamed[2.0.0] _" in line)
    assert lines[at + 2 : at + 4] == [
        "broke in 2.0.0 (held on 1.1.0)",
        f"parameters added in 2.0.0 (the likely rename): evaluation_strategy ({PROJECT}/core.py:1)",
    ]
