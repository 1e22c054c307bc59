"""Upstream names built at run time (issue 25 item 1): `eval`, `getattr` and
`importlib.import_module` over pieces the code supplies (literals, loop variables over literal
tuples, parameter defaults) are followed as the upstream object they name, and a piece scan
cannot know makes nothing up."""

from __future__ import annotations

import textwrap

from canary.analysis.parselock import parse_locked
from canary.scan.downstream.patterns import scan_tree
from canary.scan.proposing.propose import propose

UPSTREAMS = frozenset({"trl", "transformers"})


def proposed(code: str) -> set[tuple]:
    scanner = scan_tree(parse_locked(textwrap.dedent(code)), "pkg/mod.py", UPSTREAMS)
    return {
        (p.subject.module, p.subject.name, p.assertion, tuple(p.values))
        for checks in propose(scanner.findings, scanner.modules).values()
        for p in checks
    }


def test_eval_of_an_fstring_over_a_parameter_default_is_the_object_it_names():
    code = """
    import inspect
    import trl

    def patch(trainer_file="grpo_trainer"):
        trainer = eval(f"trl.trainer.{trainer_file}.GRPOTrainer")
        src = inspect.getsource(trainer.__init__)
        src = src.replace("if peft_config is None:", "if False:")
    """
    assert (
        "trl.trainer.grpo_trainer",
        "GRPOTrainer.__init__",
        "contains",
        ("if peft_config is None:",),
    ) in proposed(code)


def test_a_loop_over_literal_paths_follows_each_value():
    code = """
    import inspect
    import trl

    for path in ("sft_trainer.SFTTrainer", "dpo_trainer.DPOTrainer"):
        function_name, replacer = "train", "if resume_from_checkpoint is False:"
        function = inspect.getsource(eval(f"trl.trainer.{path}.{function_name}"))
        function = function.replace(replacer, replacer + "pass")
    """
    found = proposed(code)
    for module, cls in (("sft_trainer", "SFTTrainer"), ("dpo_trainer", "DPOTrainer")):
        wanted = ("if resume_from_checkpoint is False:",)
        assert (f"trl.trainer.{module}", f"{cls}.train", "contains", wanted) in found


def test_getattr_and_import_module_take_spelled_names():
    code = """
    import importlib
    import inspect
    import transformers

    def fast_rope(q, k, cos, sin):
        return q, k

    for name in ("llama", "gemma"):
        module = importlib.import_module("transformers.models." + name + ".modeling_" + name)
        module.apply_rotary_pos_emb = fast_rope
    method = "forward"
    src = inspect.getsource(getattr(transformers.LlamaModel, method))
    if "causal_mask = self._update_causal_mask(" in src:
        pass
    """
    found = proposed(code)
    for name in ("llama", "gemma"):
        module = f"transformers.models.{name}.modeling_{name}"
        assert (module, "apply_rotary_pos_emb", None, ()) in found
    assert (
        "transformers",
        "LlamaModel.forward",
        "contains",
        ("causal_mask = self._update_causal_mask(",),
    ) in found


def test_a_piece_scan_cannot_know_names_nothing():
    code = """
    import inspect
    import os
    import trl

    def patch(trainer_file):
        trainer = eval(f"trl.trainer.{trainer_file}.GRPOTrainer")
        src = inspect.getsource(trainer.__init__)
        src = src.replace("if peft_config is None:", "if False:")

    name = os.environ["TRAINER"]
    other = eval(f"trl.trainer.{name!r}")
    helper = eval("not a path")
    """
    assert proposed(code) == {("trl", None, None, ())}  # the import alone


def test_a_loop_body_is_walked_once_per_value_only_where_it_builds_a_name():
    code = """
    from transformers import Trainer

    for name in ("a", "b"):
        Trainer.training_step
    for name in ("train", "evaluate"):
        getattr(Trainer, name)
    """
    scanner = scan_tree(parse_locked(textwrap.dedent(code)), "pkg/mod.py", UPSTREAMS)
    (check,) = propose(scanner.findings, scanner.modules)["transformers"]
    assert check.values == ["training_step", "train", "evaluate"]
    assert "used at pkg/mod.py:5,7;" in check.why  # each line once, though walked twice
