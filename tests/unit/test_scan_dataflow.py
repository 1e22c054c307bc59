"""`canary scan` follows upstream objects and source text the way the downstream passes them,
places each proposal on the upstream itself (a local checkout here), and says what fails there.

The downstream is tests/fixtures/scan_dataflow (one file per pattern, each with its negative
case); the upstream tests/fixtures/scan_upstream (lazy root exports, a method found through a
base class, a dataclass, a module-level logger).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from commands import canary
from paths import FIXTURES

FIXTURES = FIXTURES
DOWNSTREAM = FIXTURES / "scan_dataflow"
UPSTREAM = FIXTURES / "scan_upstream"

TRAINER = "transformers.trainer"
EXPECTED = {
    "transformers": [
        ("transformers", "symbol", "Trainer", None, None, "error", None),
        (
            "any_of",
            (("transformers", "symbol", "TrainerV2"), (TRAINER, "symbol", "Trainer")),
            "error",
        ),
        ("transformers", "symbol", "__version__", None, None, "error", None),
        # a dataclass: its generated `__init__` takes the fields passed (issue 45 item 4)
        (
            "transformers.modeling_outputs",
            "function",
            "CausalLMOutput.__init__",
            "accepts",
            ["loss", "logits"],
            "error",
            None,
        ),
        (TRAINER, "symbol", "NEW_CONSTANT", None, None, "error", "since: 4.55.0"),
        (TRAINER, "symbol", "OLD_CONSTANT", None, None, "error", "until: 4.55.0"),
        (TRAINER, "symbol", "TRAINER_STATE_NAME", None, None, "info", None),
        (
            TRAINER,
            "function",
            "Trainer.__init__",
            "accepts",
            ["model", "args", "flow_extra"],
            "error",
            None,
        ),
        (
            TRAINER,
            "function",
            "Trainer.__init__",
            "contains",
            [
                'if hasattr(unwrapped_model, "accepts_loss_kwargs"):',
                "self.model_accepts_loss_kwargs",
            ],
            "error",
            None,
        ),
        (
            TRAINER,
            "function",
            "Trainer._inner_training_loop",
            "contains",
            [
                "total_batched_samples = 0",
                'logger.info("***** Running',
                "return total_batched_samples\n",
            ],
            "error",
            None,
        ),
        (
            TRAINER,
            "function",
            "Trainer._inner_training_loop",
            "matches",
            [r"total_batched_samples\s*="],
            "error",
            None,
        ),
        (TRAINER, "function", "Trainer.optional_hook", None, None, "info", None),
        (
            TRAINER,
            "function",
            "Trainer.training_step",
            "contains",
            [
                "def training_step(self, model",
                "return loss",
                "loss = self.compute_loss(model, inputs)",
                "self.compute_loss(model, inputs)",
                "    def training_step(self, model",
                "loss = loss / self.args.gradient_accumulation_steps",
            ],
            "error",
            None,
        ),
        (TRAINER, "symbol", "logger", None, None, "error", None),
        (
            "transformers.trainer_base",
            "function",
            "BaseTrainer._load_rng_state",
            "contains",
            ["torch.load(checkpoint)", "return torch.load"],
            "error",
            None,
        ),
        (
            "transformers.trainer_base",
            "function",
            "BaseTrainer.compute_loss",
            "contains",
            ["def compute_loss(self, model, inputs", "return loss", "loss = model(**inputs)"],
            "error",
            None,
        ),
    ],
    "trl": [
        (
            "trl.trainer.grpo_trainer",
            "function",
            "GRPOTrainer._generate_single_turn",
            "contains",
            ['self.llm.collective_rpc("reload_weights")'],
            "error",
            None,
        ),
        (
            "trl.trainer.grpo_trainer",
            "function",
            "GRPOTrainer._move_model_to_vllm",
            None,
            None,
            "error",
            None,
        ),
        (
            "trl.trainer.grpo_trainer",
            "function",
            "GRPOTrainer._prepare_inputs",
            "contains",
            ["with torch.inference_mode():"],
            "error",
            None,
        ),
        (
            "trl.trainer.grpo_trainer",
            "function",
            "GRPOTrainer.compute_loss",
            "contains",
            ["per_token_logps.mean()"],
            "error",
            None,
        ),
    ],
}


pytestmark = pytest.mark.usefixtures("no_index")


def scan(source: Path | None = UPSTREAM) -> str:
    status, text = canary("scan", str(DOWNSTREAM), *(["--source", str(source)] if source else []))
    assert status == 0
    return text


def summary(check: dict) -> tuple:
    if "any_of" in check:
        alternatives = tuple(summary(a)[:3] for a in check["any_of"])
        return ("any_of", alternatives, check.get("severity", "error"))
    key = next((k for k in ("symbol", "class", "function") if k in check), None)
    assertion = next(
        (k for k in ("methods", "accepts", "call", "contains", "matches") if k in check), None
    )
    gate = next((f"{k}: {check[k]}" for k in ("since", "until", "versions") if k in check), None)
    severity = check.get("severity", "error")
    return (check["module"], key, check.get(key), assertion, check.get(assertion), severity, gate)


def matrices(text: str) -> dict[str, dict]:
    return {d["upstream"]: d for d in yaml.safe_load_all(text) if d}


def test_every_pattern_yields_exactly_its_check_on_the_upstream_itself():
    found = matrices(scan())
    assert {name: [summary(c) for c in m["checks"]] for name, m in found.items()} == EXPECTED
    assert found["transformers"]["versions"]["releases"] == ">=4.50"  # the <5 pin dropped


def cited(why: str) -> set[str]:
    """file:line of every use a why cites (its compact form `a.py:3,9 (x, y), b.py:4`)."""
    found = set()
    for file, lines in re.findall(r"(\S+\.py):((?:\d+(?: \([^)]*\))?,?)+)", why):
        found |= {f"{file}:{n}" for n in re.findall(r"(?:^|,)(\d+)", lines)}
    return found


def test_every_marked_use_is_cited_and_no_negative_is():
    uses: set[str] = set()
    fingerprints: set[str] = set()
    for matrix in matrices(scan()).values():
        for check in matrix["checks"]:
            uses |= cited(check["why"])
            for part in check["why"].split("; "):
                if part.startswith(("a source rewrite", "a source regex")):
                    fingerprints |= cited(part)
    marked, negative, look_alikes = set(), set(), set()
    for path in sorted((DOWNSTREAM / "flowlib").glob("*.py")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            where = f"flowlib/{path.name}:{number}"
            if "# flow:" in line:
                marked.add(where)
            if "# negative" in line:
                negative.add(where)
            if path.name == "negatives.py":
                look_alikes.add(where)
    assert marked <= uses, sorted(marked - uses)
    assert marked & fingerprints
    assert not uses & negative, sorted(uses & negative)
    assert not fingerprints & look_alikes, sorted(fingerprints & look_alikes)


def test_what_the_downstream_attaches_is_never_proposed():
    text = scan()
    for name in ("_flowlib_patched", "_original_training_step", "flowlib_helper"):
        assert name not in text
    assert "evaluate_fast" not in text and "supports_feature" not in text
    assert "_flowlib_marker" not in text and "_flowlib_saved_loop" not in text
    assert "warning" not in text


def test_a_check_failing_on_the_upstream_read_carries_the_engines_detail():
    text = scan()
    comment = "  # FAILS on local: Trainer.__init__(self, model, args, processing_class) does not"
    assert comment + " accept flow_extra\n  - id: trainer-init-accepts\n" in text
    assert text.count("# FAILS") == 1
    assert "# placed and judged on local" in text


def test_without_the_upstream_scan_places_by_names_and_says_so():
    text = scan(source=None)
    assert "not read (releases not read: offline" in text and "placed by names only" in text
    trl = [summary(c) for c in matrices(text)["trl"]["checks"]]
    assert trl[0][:4] == ("trl.trainer.grpo_trainer", None, None, "contains")
    assert trl[0][4] == [
        'self.llm.collective_rpc("reload_weights")',
        "with torch.inference_mode():",
        "per_token_logps.mean()",
    ]
