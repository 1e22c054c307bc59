"""`canary scan` end to end on the fake downstream library in fixtures/downstream."""

from __future__ import annotations

import importlib
import json
import re
import shutil
from pathlib import Path

import pytest
import yaml
from commands import canary, scan
from paths import FIXTURES

from canary.cli import main as cli
from canary.matrix.model import load_matrix

FIXTURE = FIXTURES / "downstream"
LOCATION = re.compile(r"(\S+\.py):((?:\d+(?: \([^)]*\))?,?)+)")


def places_in(why: str) -> list[tuple[str, str]]:
    """(file, line) of every use a why cites in its compact form `a.py:3,9 (x, y), b.py:4`."""
    return [
        (file, line)
        for file, lines in LOCATION.findall(why)
        for line in re.findall(r"(?:^|,)(\d+)", lines)
    ]


# (module, subject key, subject, assertion, values, severity) of every check the fixture yields
EXPECTED = {
    "peft": [
        ("peft", "symbol", "LoraConfig", None, None, "error"),
        (
            "peft",
            "function",
            "get_peft_model",
            "call",
            {"args": 2, "keywords": ["adapter_name"]},
            "error",
        ),
        ("peft.tuners.lora", "symbol", "LoraLayer", None, None, "error"),
    ],
    "transformers": [
        ("transformers", "symbol", "Trainer", None, None, "error"),
        ("transformers", "symbol", "__version__", None, None, "error"),
        (
            "transformers.modeling_utils",
            "class",
            "PreTrainedModel",
            "methods",
            ["gradient_checkpointing_enable"],
            "error",
        ),
        (
            "transformers.modeling_utils",
            "function",
            "PreTrainedModel.enable_input_require_grads",
            None,
            None,
            "info",
        ),
        (
            "transformers.trainer",
            "function",
            "Trainer.__init__",
            "accepts",
            ["model", "args", "processing_class"],
            "error",
        ),
        (
            "transformers.trainer",
            "function",
            "Trainer.__init__",
            "contains",
            ['hasattr(unwrapped_model, "accepts_loss_kwargs")'],
            "error",
        ),
        (
            "transformers.trainer",
            "function",
            "Trainer._inner_training_loop",
            None,
            None,
            "error",
        ),
        (
            "transformers.trainer",
            "function",
            "Trainer.compute_loss",
            None,
            None,
            "error",
        ),
        (
            "transformers.trainer",
            "function",
            "Trainer.training_step",
            None,
            None,
            "error",
        ),
    ],
    "trl": [
        ("trl", "symbol", "GRPOConfig", None, None, "error"),
        (
            "trl.models.utils",
            "function",
            "disable_gradient_checkpointing",
            None,
            None,
            "info",
        ),
        (
            "trl.models.utils",
            "function",
            "unwrap_model_for_generation",
            "call",
            {"args": 2, "keywords": ["gather_deepspeed3_params"]},
            "error",
        ),
        (
            "trl.trainer.grpo_trainer",
            "function",
            "GRPOTrainer._prepare_inputs",
            "contains",
            ["self._step += 1", "generate_every = self.args.steps_per_generation"],
            "error",
        ),
        (
            "trl.trainer.grpo_trainer",
            "function",
            "GRPOTrainer._prepare_inputs",
            "matches",
            [r"self\._buffered_inputs\s*=\s*\[", r"^\s+return inputs$"],
            "error",
        ),
    ],
}


# Nothing here reads the package index: without --source, scan places by names alone.
pytestmark = pytest.mark.usefixtures("no_index")


def summary(check: dict) -> tuple:
    key = next((k for k in ("symbol", "class", "function") if k in check), None)
    assertion = next(
        (k for k in ("methods", "accepts", "call", "contains", "matches") if k in check), None
    )
    return (
        check["module"],
        key,
        check.get(key),
        assertion,
        check.get(assertion),
        check.get("severity", "error"),
    )


def printed_matrices(text: str) -> dict[str, dict]:
    documents = [d for d in yaml.safe_load_all(text) if d]
    return {d["upstream"]: d for d in documents}


def markers() -> dict[str, str]:
    """`# scan: NAME` -> "fakesloth/file.py:LINE" in the fixture."""
    found = {}
    for path in sorted((FIXTURE / "fakesloth").glob("*.py")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if match := re.search(r"# scan: ([\w-]+)", line):
                found[match.group(1)] = f"{path.relative_to(FIXTURE).as_posix()}:{number}"
    return found


def test_fixture_yields_exactly_the_expected_checks():
    status, text = scan(str(FIXTURE), None, None, None)
    assert status == 0
    matrices = printed_matrices(text)
    assert {name: [summary(c) for c in m["checks"]] for name, m in matrices.items()} == EXPECTED
    assert matrices["trl"]["versions"]["releases"] == "!=0.23.0,>=0.22.2"
    assert matrices["transformers"]["versions"]["releases"] == ">=4.57.0"
    assert matrices["peft"]["versions"]["releases"] == ">=0"


def test_every_check_cites_real_uses_and_every_marked_use_is_cited():
    _, text = scan(str(FIXTURE), None, None, None)
    cited = set()
    for matrix in printed_matrices(text).values():
        for check in matrix["checks"]:
            places = places_in(check["why"])
            assert places, check
            words = {check["module"].split(".")[-1], *re.split(r"\.", summary(check)[2] or "")}
            words |= set(summary(check)[4] or [])
            for file, line in places:
                source = (FIXTURE / file).read_text().splitlines()[int(line) - 1]
                assert any(w and w in source for w in words), (check["id"], file, line)
                cited.add(f"{file}:{line}")
    assert set(markers().values()) <= cited
    assert not [place for place in cited if "negatives.py" in place]


def test_reexported_names_move_to_the_defining_module_with_source(tmp_path):
    package = tmp_path / "site" / "peft"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    pass\nelse:\n    from .mapping_func import get_peft_model\n"
    )
    (package / "mapping_func.py").write_text("from .star import *\n")
    (package / "star.py").write_text("from .core import build as get_peft_model\n")
    (package / "core.py").write_text(
        "def build(model, peft_config, adapter_name='default'):\n    pass\n"
    )
    status, text = scan(str(FIXTURE), ["peft"], None, None, source=str(tmp_path / "site"))
    assert status == 0
    checks = [summary(c) for c in printed_matrices(text)["peft"]["checks"]]
    build = ("peft.core", "function", "build", "call", {"args": 2, "keywords": ["adapter_name"]})
    assert (*build, "error") in checks
    assert ("peft", "symbol", "get_peft_model", None, None, "error") in checks
    status, text = scan(str(FIXTURE), ["peft"], None, None)
    assert "NOTE: the package root may only re-export it" in text


def test_output_writes_one_file_per_upstream_and_refuses_to_overwrite(tmp_path, capsys):
    status, text = scan(str(FIXTURE), ["trl", "peft", "accelerate"], str(tmp_path), None)
    assert status == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["peft.yaml", "trl.yaml"]
    assert "# no uses of accelerate found" in text
    written = yaml.safe_load((tmp_path / "trl.yaml").read_text())
    assert [c.id for c in load_matrix(tmp_path / "trl.yaml").checks] == [
        c["id"] for c in written["checks"]
    ]
    assert load_matrix(tmp_path / "peft.yaml").github == "huggingface/peft"
    assert [summary(c) for c in written["checks"]] == EXPECTED["trl"]
    before = (tmp_path / "trl.yaml").read_text()
    status, text = scan(str(FIXTURE), ["trl"], str(tmp_path), None)
    assert status == 2 and "use --merge" in capsys.readouterr().err
    assert (tmp_path / "trl.yaml").read_text() == before


def test_output_creates_its_folder(tmp_path):
    status, _ = scan(str(FIXTURE), ["trl"], str(tmp_path / "new" / "matrices"), None)
    assert status == 0 and (tmp_path / "new" / "matrices" / "trl.yaml").is_file()


def test_a_repeated_upstream_adds_to_the_first(tmp_path):
    argv = ["scan", str(FIXTURE), "--upstream", "trl", "--upstream", "peft,accelerate"]
    status, text = canary(*argv, "--output", str(tmp_path))
    assert status == 0 and "# no uses of accelerate found" in text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["peft.yaml", "trl.yaml"]


def test_merge_adds_only_what_the_matrix_lacks(tmp_path):
    own = (
        "upstream: trl  # ours\n"
        "versions:\n  releases: '>=0.24'\n"
        "checks:\n"
        "  - id: config\n    why: ours.py:1\n    module: trl\n    symbol: GRPOConfig\n"
    )
    (tmp_path / "trl.yaml").write_text(own)
    status, text = scan(str(FIXTURE), None, None, str(tmp_path))
    assert status == 0
    assert "merged into" in text and "4 new checks of 5 proposed" in text
    merged = (tmp_path / "trl.yaml").read_text()
    assert merged.startswith(own)
    assert [summary(c) for c in yaml.safe_load(merged)["checks"]] == EXPECTED["trl"]
    assert len(load_matrix(tmp_path / "trl.yaml").checks) == 5
    assert (tmp_path / "peft.yaml").exists() and (tmp_path / "transformers.yaml").exists()
    status, text = scan(str(FIXTURE), None, None, str(tmp_path))
    assert "0 new checks of 5 proposed" in text and (tmp_path / "trl.yaml").read_text() == merged


def test_unparseable_files_and_environments_are_reported_or_skipped(tmp_path):
    tree = tmp_path / "proj"
    shutil.copytree(FIXTURE, tree)
    (tree / "fakesloth" / "broken.py").write_text("def broken(:\n")
    venv = tree / ".venv" / "lib" / "site-packages" / "x"
    venv.mkdir(parents=True)
    (venv / "y.py").write_text("import trl\ntrl.should_not_appear = 1\n")
    env = tree / "env"
    env.mkdir()
    (env / "pyvenv.cfg").write_text("home = x\n")
    (env / "z.py").write_text("import trl\ntrl.nor_this = 1\n")
    status, text = scan(str(tree), ["trl"], None, None)
    assert status == 0
    assert re.search(r"# fakesloth/broken\.py: not scanned: .*invalid syntax", text)
    assert "# scanned 5 files" in text
    assert "should_not_appear" not in text and "nor_this" not in text
    assert [summary(c) for c in printed_matrices(text)["trl"]["checks"]] == EXPECTED["trl"]


def test_links_are_not_followed_and_nothing_out_of_path_is_read(tmp_path):
    tree = tmp_path / "proj"
    shutil.copytree(FIXTURE, tree)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "y.py").write_text("import trl\ntrl.read_out_of_path = 1\n")
    (tree / "fakesloth" / "again").symlink_to(".")  # a loop: each file again, 40 deep
    (tree / "fakesloth" / "elsewhere").symlink_to(outside)
    (tree / "fakesloth" / "peek.py").symlink_to(outside / "y.py")
    (tree / "fakesloth" / "rl_again.py").symlink_to("rl.py")  # read once, where it is
    status, text = scan(str(tree), ["trl"], None, None)
    assert status == 0
    assert "read_out_of_path" not in text and "again" not in text
    assert "# fakesloth/elsewhere: not scanned: a symbolic link out of proj" in text
    assert "# fakesloth/peek.py: not scanned: a symbolic link out of proj" in text
    assert "# scanned 5 files" in text
    assert [summary(c) for c in printed_matrices(text)["trl"]["checks"]] == EXPECTED["trl"]


def test_the_trees_own_table_is_read_in_its_own_folders_and_never_through_a_link(tmp_path):
    """`[tool.canary] exclude` leaving out rl.py, first in a pyproject.toml above the scanned
    repository (not its own), then in one the tree links to out of itself: neither is read."""
    (tmp_path / "pyproject.toml").write_text('[tool.canary]\nexclude = ["rl.py"]\n')
    tree = tmp_path / "proj"
    shutil.copytree(FIXTURE, tree)
    assert "# scanned 5 files" in scan(str(tree), ["trl"], None, None)[1]
    (tmp_path / "pyproject.toml").rename(tmp_path / "theirs.toml")
    (tree / "pyproject.toml").rename(tree / "setup.cfg")  # still a repository
    (tree / "pyproject.toml").symlink_to(tmp_path / "theirs.toml")
    status, text = scan(str(tree), ["trl"], None, None)
    assert status == 0 and "# scanned 5 files under" in text and "--exclude" not in text
    (tree / "pyproject.toml").unlink()
    (tree / "pyproject.toml").write_text('[tool.canary]\nexclude = ["rl.py"]\n')  # its own
    assert "# scanned 4 files under" in scan(str(tree), ["trl"], None, None)[1]


def test_downstream_file_names_are_printed_escaped(tmp_path):
    tree = tmp_path / "proj"
    shutil.copytree(FIXTURE, tree)
    (tree / "fakesloth" / "x\x1b[2J.py").write_text("def broken(:\n")
    (tree / "fakesloth" / "p\n::add-mask::q.py").write_text("from trl import GRPOConfig\n")
    status, text = scan(str(tree), ["trl"], None, None)
    assert status == 0
    assert "# fakesloth/x\\x1b[2J.py: not scanned:" in text
    whys = [c["why"] for c in printed_matrices(text)["trl"]["checks"]]
    assert any("fakesloth/p\\n::add-mask::q.py:1" in why for why in whys)  # GRPOConfig's
    assert "\x1b" not in text and not any(line.startswith("::") for line in text.splitlines())


HOSTILE_KEY = "grpo_trainer\\n  - id: planted\\n    module: trl\\n    symbol: Planted\\n#"
HOSTILE_REGISTRY = f"""
from collections import defaultdict

REWRITERS = defaultdict(list)  # canary: rewrites trl.trainer.{{key}}


def fix(function_name, function):
    return function.replace("with torch.inference_mode():", "if True:")


REWRITERS["{HOSTILE_KEY}"].append(fix)
"""


def test_downstream_text_adds_no_check_to_a_matrix(tmp_path):
    """A registry key is downstream text: as a module it would have written YAML lines."""
    tree = tmp_path / "proj"
    shutil.copytree(FIXTURE, tree)
    (tree / "fakesloth" / "registry.py").write_text(HOSTILE_REGISTRY)
    (tree / "pyproject.toml").unlink()  # so that the range comes from:
    (tree / "requirements\n- id: x.txt").write_text("trl>=0.1\n")  # a comment of the head
    status, text = scan(str(tree), ["trl"], None, None)
    assert status == 0
    assert "Planted" not in str(printed_matrices(text)["trl"])
    assert '"  # what requirements\\n- id: x.txt requires\n' in text
    merged = tmp_path / "matrices"
    merged.mkdir()
    (merged / "trl.yaml").write_text("upstream: trl\nchecks:\n  - {id: mine, module: trl}\n")
    assert scan(str(tree), ["trl"], None, str(merged))[0] == 0
    assert len(load_matrix(merged / "trl.yaml").checks) > 1
    checks = yaml.safe_load((merged / "trl.yaml").read_text())["checks"]
    assert not any("Planted" in str(c) or c["id"] == "planted" for c in checks)


def test_a_downstream_file_over_the_parse_budget_is_not_scanned(tmp_path, monkeypatch):
    monkeypatch.setattr("canary.analysis.budget.MAX_TOKENS", 100_000)  # 8 MiB and more, real
    tree = tmp_path / "proj"
    shutil.copytree(FIXTURE, tree)
    scanning = importlib.import_module("canary.scan.downstream.package")
    monkeypatch.setattr(scanning, "MAX_SOURCE_BYTES", 1_000_000)  # 8 MiB, real
    (tree / "fakesloth" / "huge.py").write_text("import trl\n" + "x = 1\n" * 50_000)
    (tree / "fakesloth" / "big.py").write_text("import trl\n#" + " " * 1_000_000)
    status, text = scan(str(tree), ["trl"], None, None)
    assert status == 0
    assert "# fakesloth/huge.py: not scanned: over 100000 tokens, too costly to parse" in text
    assert "# fakesloth/big.py: not scanned: 1000012 bytes, over 1000000: too costly" in text
    assert [summary(c) for c in printed_matrices(text)["trl"]["checks"]] == EXPECTED["trl"]


def test_a_single_file_can_be_scanned():
    status, text = scan(str(FIXTURE / "fakesloth" / "rl.py"), ["trl"], None, None)
    assert status == 0
    checks = printed_matrices(text)["trl"]["checks"]
    assert [summary(c) for c in checks] == EXPECTED["trl"]
    assert all("rl.py:" in c["why"] and "fakesloth/" not in c["why"] for c in checks)


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        (("no/such/dir", None, None, None), {}, "no such file or folder"),
        ((str(FIXTURE), None, "a", "b"), {}, "alternatives"),
        ((str(FIXTURE), ["trl", "x y"], None, None), {}, "import or distribution names"),
        ((str(FIXTURE), ["trl", "-x"], None, None), {}, "import or distribution names"),
        ((str(FIXTURE), None, None, "no/such/matrices"), {}, "not a folder"),
        ((str(FIXTURE), None, str(FIXTURE / "pyproject.toml"), None), {}, "cannot create"),
        ((str(FIXTURE), None, None, None), {"source": "no/such/site"}, "--source"),
    ],
)
def test_usage_errors_exit_2_with_a_message_on_stderr(args, kwargs, message, capsys):
    status, _ = scan(*args, **kwargs)
    assert status == 2 and message in capsys.readouterr().err


FAKE_TRL = {
    "trl/__init__.py": "from .trainer.grpo_config import GRPOConfig\n",
    "trl/models/__init__.py": "",
    "trl/models/utils.py": (
        "def unwrap_model_for_generation(model, accelerator, gather_deepspeed3_params=True):\n"
        "    pass\n"
    ),
    "trl/trainer/__init__.py": "",
    "trl/trainer/grpo_config.py": "class GRPOConfig:\n    beta: float = 0.0\n",
    "trl/trainer/grpo_trainer.py": (
        "class GRPOTrainer:\n"
        "    def _prepare_inputs(self, generation_batch):\n"
        "        generate_every = self.args.steps_per_generation * self.num_iterations\n"
        "        self._buffered_inputs = [b for b in generation_batch]\n"
        "        self._step += 1\n"
        "        return inputs\n"
    ),
}


def check_json(matrix: Path, upstream_tree: Path, tmp_path: Path) -> dict[str, str]:
    """`canary check` of the proposed matrix against a local upstream tree: check id -> status."""
    report = tmp_path / "report.json"
    args = ["check", str(matrix), "--source", str(upstream_tree), "--versions", "0.24.0"]
    cli.main([*args, "--format", "json", "--output", str(report)])
    return {r["check"]: r["status"] for r in json.loads(report.read_text())["results"]}


def test_proposed_checks_run_under_canary_check(tmp_path):
    """Scan then check: a conforming upstream passes, a changed rewrite target fails."""
    status, _ = scan(str(FIXTURE), ["trl"], str(tmp_path), None)
    assert status == 0
    upstream = tmp_path / "site"
    for name, text in FAKE_TRL.items():
        (upstream / name).parent.mkdir(parents=True, exist_ok=True)
        (upstream / name).write_text(text)
    assert check_json(tmp_path / "trl.yaml", upstream, tmp_path) == {
        "grpo-config": "pass",
        "disable-gradient-checkpointing": "warn",
        "unwrap-model-for-generation-call": "pass",
        "grpo-trainer-prepare-inputs-source": "pass",
        "grpo-trainer-prepare-inputs-source-regex": "pass",
    }
    trainer = upstream / "trl/trainer/grpo_trainer.py"
    trainer.write_text(trainer.read_text().replace("        self._step += 1\n", ""))
    statuses = check_json(tmp_path / "trl.yaml", upstream, tmp_path)
    assert statuses["grpo-trainer-prepare-inputs-source"] == "fail"
    assert statuses["grpo-trainer-prepare-inputs-source-regex"] == "pass"


@pytest.mark.parametrize("given", ["sentence_transformers", "sentence-transformers"])
def test_upstream_takes_import_and_distribution_names(given, tmp_path):
    """Either name of an upstream whose import name is no distribution name gives one matrix,
    named and keyed by the distribution, its package the import name, placed on the source."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "a.py").write_text(
        "from sentence_transformers import SentenceTransformer\n"
        "SentenceTransformer.encode = lambda self: 0\n"
    )
    site = tmp_path / "site" / "sentence_transformers"
    site.mkdir(parents=True)
    (site / "__init__.py").write_text("class SentenceTransformer:\n    def encode(self): ...\n")
    out = tmp_path / "out"
    status, _ = scan(str(package), [given], str(out), None, source=str(tmp_path / "site"))
    assert status == 0
    assert [p.name for p in out.iterdir()] == ["sentence-transformers.yaml"]
    matrix = load_matrix(out / "sentence-transformers.yaml")
    assert (matrix.upstream, matrix.package, matrix.pypi) == (
        "sentence-transformers",
        "sentence_transformers",
        "sentence-transformers",
    )
    assert [(c.id, c.contract and c.contract.module) for c in matrix.checks] == [
        ("sentence-transformer-encode", "sentence_transformers")
    ]


def test_rewrites_of_sources_scan_cannot_tell_are_listed_in_the_header(tmp_path):
    """Issue 25 item 11: `.replace`, `re.sub` and `in` on the source of something scan cannot
    tell (a function handed in) are listed by site; a rewrite of an upstream source is not."""
    package = tmp_path / "pkg"
    package.mkdir()
    shutil.copy(FIXTURES / "scan_recall" / "recalllib" / "unplaced.py", package / "a.py")
    trainer = tmp_path / "site" / "trl" / "trainer"
    trainer.mkdir(parents=True)
    (trainer.parent / "__init__.py").write_text("")
    (trainer / "__init__.py").write_text("")
    (trainer / "grpo_trainer.py").write_text(
        "class GRPOTrainer:\n    def compute_loss(self):\n"
        "        loss = loss / self.current_gradient_accumulation_steps\n"
    )
    out = tmp_path / "out"
    status, _ = scan(str(package), ["trl"], str(out), None, source=str(tmp_path / "site"))
    assert status == 0
    text = (out / "trl.yaml").read_text()
    sites = "3 source rewrites not placed (of what, scan cannot tell): a.py:12,13,14"
    assert [line for line in text.splitlines() if "not placed" in line] == [f"# {sites}"]
    checks = yaml.safe_load(text)["checks"]
    assert [(c.get("function"), c.get("contains")) for c in checks] == [
        ("GRPOTrainer.compute_loss", ["loss = loss / self.current_gradient_accumulation_steps"])
    ]


def test_each_matrix_lists_only_the_unplaced_sites_of_its_own_upstream(tmp_path):
    """A rewrite scan cannot place is listed in the matrix of the upstream its file reads (a.py
    reads trl, b.py peft), and one in a file that reads no upstream, or several, once in
    scan's own notes: never in every matrix."""
    package = tmp_path / "pkg"
    package.mkdir()
    shutil.copy(FIXTURES / "scan_recall" / "recalllib" / "unplaced.py", package / "a.py")
    (package / "b.py").write_text(
        "import inspect\n\nfrom peft.tuners.lora import LoraLayer\n\n\n"
        "def patched():\n"
        "    return inspect.getsource(LoraLayer.update_layer).replace('x = 1', 'x = 2')\n\n\n"
        "def rewrite(fn):\n"
        "    return inspect.getsource(fn).replace('return y', 'return y * 2')\n"
    )
    (package / "c.py").write_text(
        "import inspect\n\n\ndef rewrite(fn):\n"
        "    return inspect.getsource(fn).replace('scale = 1', 'scale = 2')\n"
    )
    site = tmp_path / "site"
    trainer = site / "trl" / "trainer"
    trainer.mkdir(parents=True)
    (trainer.parent / "__init__.py").write_text("")
    (trainer / "__init__.py").write_text("")
    (trainer / "grpo_trainer.py").write_text(
        "class GRPOTrainer:\n    def compute_loss(self):\n"
        "        loss = loss / self.current_gradient_accumulation_steps\n"
    )
    lora = site / "peft" / "tuners"
    lora.mkdir(parents=True)
    (lora.parent / "__init__.py").write_text("")
    (lora / "__init__.py").write_text("")
    (lora / "lora.py").write_text("class LoraLayer:\n    def update_layer(self):\n        x = 1\n")
    out = tmp_path / "out"
    status, printed = scan(str(package), ["trl", "peft"], str(out), None, source=str(site))
    assert status == 0, printed

    def unplaced(text: str) -> list[str]:
        return [line for line in text.splitlines() if "not placed" in line]

    assert unplaced((out / "trl.yaml").read_text()) == [
        "# 3 source rewrites not placed (of what, scan cannot tell): a.py:12,13,14"
    ]
    assert unplaced((out / "peft.yaml").read_text()) == [
        "# 1 source rewrite not placed (of what, scan cannot tell): b.py:11"
    ]
    assert unplaced(printed) == [
        "# 1 source rewrite not placed (of what, nor of which upstream, scan cannot tell): c.py:5"
    ]
