"""Module names a downstream reads from a filtered `dir()` of an upstream package (unsloth's
`[x for x in dir(trl.trainer) if x.islower() and x.endswith("_trainer")]`, each handed to a
function that builds `trl.trainer.{trainer_file}` from it): scan evaluates the filter over the
modules the upstream's own files have and follows each one (tests/fixtures/scan_listed beside
its negative case, the upstream tests/fixtures/scan_listed_upstream)."""

from __future__ import annotations

import pytest
import yaml
from commands import canary
from paths import FIXTURES

from canary.cache.store import Cache
from canary.scan.downstream.findings import Role
from canary.scan.downstream.package import scan_path
from canary.sources.stats import Stats

DOWNSTREAM = FIXTURES / "scan_listed" / "listedlib"
UPSTREAM = FIXTURES / "scan_listed_upstream"
PREPARE = "model = self._prepare_peft_model(model, peft_config, args)\n"
GET_PEFT = "get_peft_model(model, peft_config)"


pytestmark = pytest.mark.usefixtures("no_index")


def texts(*source: str) -> set[tuple[str, str | None, str]]:
    """(module, function, text) of every text check `canary scan` proposes."""
    status, out = canary("scan", str(DOWNSTREAM), "--upstream", "trl", *source)
    assert status == 0
    checks = next(d for d in yaml.safe_load_all(out) if d)["checks"]
    return {(c["module"], c.get("function"), t) for c in checks for t in c.get("contains", [])}


def test_each_module_the_filter_keeps_is_followed_into_the_function_it_is_handed_to():
    found = texts("--source", str(UPSTREAM))
    assert ("trl.trainer.sft_trainer", "SFTTrainer.__init__", PREPARE) in found
    assert ("trl.trainer.grpo_trainer", "GRPOTrainer.__init__", GET_PEFT) in found
    assert not [f for f in found if f[0] == "trl.trainer.base_trainer"]  # the filter drops it


def test_a_branch_taken_only_for_one_module_or_class_is_followed_in_its_walk_only():
    found = {f for f in texts("--source", str(UPSTREAM)) if f[1] is None}
    assert ("trl.trainer.sft_trainer", None, "return examples") in found
    assert ("trl.trainer.grpo_trainer", None, "if peft_config is not None:") in found
    assert ("trl.trainer.grpo_trainer", None, "return examples") not in found
    assert ("trl.trainer.sft_trainer", None, "if peft_config is not None:") not in found


def test_a_filter_scan_cannot_evaluate_or_an_unread_upstream_names_no_module():
    negatives = {f for f in texts("--source", str(UPSTREAM)) if f[2] == "self.ref_model = None"}
    assert negatives == {("trl.trainer.grpo_trainer", None, "self.ref_model = None")}
    offline = texts()  # the modules unknown: the default only
    assert offline and not [f for f in offline if "sft" in f"{f[0]}.{f[1]}".lower()]


def test_what_a_walk_over_listed_modules_finds_is_marked_as_such():
    modules = _modules("base_trainer", "grpo_trainer", "sft_trainer")
    found = scan_path(DOWNSTREAM, frozenset({"trl"}), names_in=modules).findings
    sought = {(u.ref.parts[2], u.items, u.listed) for u in found if u.role is Role.CONTAINS}
    assert ("sft_trainer", (PREPARE,), True) in sought
    assert ("grpo_trainer", ("self.ref_model = None",), False) in sought


def _modules(*names: str):
    return lambda parts: names if parts == ("trl", "trainer") else None


def test_a_remembered_scan_is_scanned_again_when_the_upstreams_modules_change(tmp_path):
    cache = Cache(tmp_path, Stats())
    trl = frozenset({"trl"})

    def modules(*names: str) -> set[str]:
        found = scan_path(DOWNSTREAM, trl, cache, names_in=_modules(*names)).findings
        return {u.ref.parts[2] for u in found if u.role is Role.CONTAINS}

    assert modules("grpo_trainer") == {"grpo_trainer"}
    assert modules("grpo_trainer", "sft_trainer") == {"grpo_trainer", "sft_trainer"}
    assert modules("grpo_trainer") == {"grpo_trainer"}
