"""Each downstream pattern `canary scan` recognises, and the look-alikes it must ignore."""

from __future__ import annotations

import textwrap

import pytest

from canary.analysis.parselock import parse_locked
from canary.scan.downstream.patterns import scan_tree
from canary.scan.proposing.propose import propose

UPSTREAMS = frozenset({"trl", "transformers", "peft"})


def proposed(code: str) -> list[tuple]:
    """(module, subject key, subject, assertion, values, severity) of every proposed check."""
    scanner = scan_tree(parse_locked(textwrap.dedent(code)), "pkg/mod.py", UPSTREAMS)
    result = propose(scanner.findings, scanner.modules)
    return [
        (p.subject.module, p.subject.key, p.subject.name, p.assertion, p.values, p.severity)
        for checks in result.values()
        for p in checks
    ]


def whys(code: str) -> list[str]:
    scanner = scan_tree(parse_locked(textwrap.dedent(code)), "pkg/mod.py", UPSTREAMS)
    return [p.why for checks in propose(scanner.findings, scanner.modules).values() for p in checks]


def test_from_import_names_a_symbol_of_the_module():
    assert proposed("from trl.models.utils import unwrap_model_for_generation") == [
        ("trl.models.utils", "symbol", "unwrap_model_for_generation", None, [], "error")
    ]


def test_import_as_alias_resolves_attribute_uses():
    code = """
    import trl.trainer.utils as tu
    tu.selective_log_softmax
    """
    assert proposed(code) == [
        ("trl.trainer.utils", "symbol", "selective_log_softmax", None, [], "error")
    ]


def test_from_import_of_a_submodule_then_class_method():
    code = """
    from transformers import trainer as tr
    tr.Trainer.training_step
    """
    assert proposed(code) == [
        ("transformers.trainer", "class", "Trainer", "methods", ["training_step"], "error")
    ]


def test_plain_import_then_dotted_path():
    code = """
    import trl
    trl.trainer.grpo_trainer.GRPOTrainer._prepare_inputs
    """
    assert proposed(code) == [
        (
            "trl.trainer.grpo_trainer",
            "class",
            "GRPOTrainer",
            "methods",
            ["_prepare_inputs"],
            "error",
        )
    ]


def test_methods_of_one_class_are_gathered_into_one_check():
    code = """
    from transformers.trainer import Trainer
    Trainer.training_step
    Trainer.compute_loss(None)
    """
    assert proposed(code) == [
        (
            "transformers.trainer",
            "class",
            "Trainer",
            "methods",
            ["training_step", "compute_loss"],
            "error",
        )
    ]


@pytest.mark.parametrize(
    "statement",
    [
        'setattr(trl.models.utils, "disable_gradient_checkpointing", noop)',
        "trl.models.utils.disable_gradient_checkpointing = noop",
        "trl.models.utils.disable_gradient_checkpointing: object = noop",
    ],
)
def test_module_attribute_patch_target_must_exist(statement):
    code = f"""
    import trl
    noop = object()
    {statement}
    """
    assert proposed(code) == [
        ("trl.models.utils", "symbol", "disable_gradient_checkpointing", None, [], "error")
    ]
    assert whys(code) == ["monkey-patched at pkg/mod.py:4"]


def test_class_method_patch_names_the_method_never_the_wrappers_signature():
    code = """
    from transformers import trainer as tr

    def fast_step(self, model, inputs, *args, num_items_in_batch=None, **kwargs):
        pass

    tr.Trainer.training_step = fast_step
    """
    assert proposed(code) == [
        (
            "transformers.trainer",
            "function",
            "Trainer.training_step",
            None,
            [],
            "error",
        )
    ]
    assert whys(code) == [
        "monkey-patched with a wrapper taking these parameters at pkg/mod.py:7"
        " (model, inputs, num_items_in_batch)"
    ]


def test_wrapper_taken_from_a_local_class_or_lambda():
    code = """
    from transformers.trainer import Trainer

    class Mine:
        def compute_loss(self, model, inputs):
            pass

    Trainer.compute_loss = Mine.compute_loss
    setattr(Trainer, "evaluate", lambda self, eval_dataset: None)
    """
    assert proposed(code) == [
        (
            "transformers.trainer",
            "function",
            "Trainer.compute_loss",
            None,
            [],
            "error",
        ),
        (
            "transformers.trainer",
            "function",
            "Trainer.evaluate",
            None,
            [],
            "error",
        ),
    ]
    assert "wrapper taking these parameters at pkg/mod.py:8 (model, inputs)" in whys(code)[0]


def test_wrapper_with_only_wildcards_gives_an_existence_check():
    code = """
    from transformers.trainer import Trainer
    def anything(*args, **kwargs):
        pass
    Trainer.training_step = anything
    """
    assert proposed(code) == [
        ("transformers.trainer", "function", "Trainer.training_step", None, [], "error")
    ]


def test_getsource_flows_through_variables_into_replace_and_in():
    code = """
    import inspect, textwrap
    from transformers import trainer

    def patch():
        src = inspect.getsource(trainer.Trainer.__init__)
        body = textwrap.dedent(src)
        if "unwrapped_model" not in body:
            return
        body = body.replace("model_accepts_loss_kwargs", "FAST")
        body = body.replace("FAST = ", "x")
        return body.find("def __init__")
    """
    assert proposed(code) == [
        (
            "transformers.trainer",
            "function",
            "Trainer.__init__",
            "contains",
            ["unwrapped_model", "model_accepts_loss_kwargs", "def __init__"],
            "error",
        )
    ]


def test_getsource_chained_call_and_module_source():
    code = """
    import inspect
    import trl.trainer.grpo_trainer as grpo
    inspect.getsource(grpo.GRPOTrainer).replace("class GRPOTrainer(", "")
    inspect.getsource(grpo).replace("import torch", "")
    """
    assert proposed(code) == [
        ("trl.trainer.grpo_trainer", None, None, "contains", ["import torch"], "error"),
        (
            "trl.trainer.grpo_trainer",
            "class",
            "GRPOTrainer",
            "contains",
            ["class GRPOTrainer("],
            "error",
        ),
    ]


def test_regexes_on_upstream_source_become_matches_with_inline_flags():
    code = r"""
    import re
    from inspect import getsource
    from trl.trainer.grpo_trainer import GRPOTrainer
    src = getsource(GRPOTrainer._prepare_inputs)
    src = re.sub(r"self\._step\s*\+=\s*1", "pass", src)
    re.search("^ +return inputs$", src, re.M | re.S)
    pattern = re.compile(r"generate_every\s*=", flags=re.IGNORECASE)
    pattern.search(src)
    re.findall("pass", src)
    """
    (check,) = proposed(code)
    assert check[:4] == (
        "trl.trainer.grpo_trainer",
        "function",
        "GRPOTrainer._prepare_inputs",
        "matches",
    )
    assert check[4] == [
        r"self\._step\s*\+=\s*1",
        "(?s)^ +return inputs$",
        r"(?i)generate_every\s*=",
    ]


def test_keyword_arguments_become_accepts():
    code = """
    from trl.models.utils import unwrap_model_for_generation
    from transformers import trainer as tr
    from peft import LoraConfig
    unwrap_model_for_generation(m, a, gather_deepspeed3_params=False)
    tr.Trainer(model=m, processing_class=p, **extra)
    tr.Trainer.training_step(t, model=m, inputs=i)
    LoraConfig(r=8)
    """
    assert proposed(code) == [
        ("peft", "symbol", "LoraConfig", None, [], "error"),
        (
            "transformers.trainer",
            "function",
            "Trainer.__init__",
            "accepts",
            ["model", "processing_class"],
            "error",
        ),
        (
            "transformers.trainer",
            "function",
            "Trainer.training_step",
            "accepts",
            ["model", "inputs"],
            "error",
        ),
        (
            "trl.models.utils",
            "function",
            "unwrap_model_for_generation",
            "call",  # a module-level function called with a shape nothing is spread into
            ["2:gather_deepspeed3_params"],
            "error",
        ),
    ]


def test_hasattr_guard_is_informational_and_marks_the_patch_too():
    code = """
    import trl
    if hasattr(trl.models.utils, "disable_gradient_checkpointing"):
        trl.models.utils.disable_gradient_checkpointing = None
    else:  # the client handles the name's absence (bare, the patch needs it: stale.py)
        print("no gradient checkpointing to disable")
    hasattr(trl.trainer.grpo_trainer.GRPOTrainer, "_get_per_token_logps")
    """
    assert proposed(code) == [
        ("trl.models.utils", "symbol", "disable_gradient_checkpointing", None, [], "info"),
        (
            "trl.trainer.grpo_trainer",
            "function",
            "GRPOTrainer._get_per_token_logps",
            None,
            [],
            "info",
        ),
    ]
    assert whys(code)[0] == (
        "monkey-patched at pkg/mod.py:4; guarded by hasattr at pkg/mod.py:3"
        " (severity info: the downstream tolerates its absence)"
    )


def test_implied_checks_fold_into_the_more_specific_one():
    code = """
    import trl.trainer
    from trl.trainer.grpo_trainer import GRPOTrainer
    GRPOTrainer._prepare_inputs = lambda self, inputs: inputs
    """
    assert proposed(code) == [
        (
            "trl.trainer.grpo_trainer",
            "function",
            "GRPOTrainer._prepare_inputs",
            None,
            [],
            "error",
        )
    ]
    assert whys(code) == [
        "imported at pkg/mod.py:3; monkey-patched with a wrapper taking these parameters at"
        " pkg/mod.py:4 (inputs)"
    ]


NEGATIVES = [
    # string work on a local function's source
    """
    import inspect
    def helper(): return 1
    inspect.getsource(helper).replace("return 1", "return 2")
    """,
    # string work on a file's text that merely mentions upstream names
    """
    import re
    text = open("x.py").read()
    text = text.replace("trl.trainer", "trl.experimental")
    "GRPOTrainer" in text
    re.sub(r"Trainer", "X", text)
    """,
    # a variable that held upstream source is reassigned to something else
    """
    import inspect
    import trl
    src = inspect.getsource(trl.foo)
    src = "local text"
    src.replace("def foo", "")
    """,
    # a parameter shadows the upstream alias
    """
    import trl
    def f(trl):
        trl.models.utils.x = None
        setattr(trl, "y", None)
        hasattr(trl, "z")
        trl.Thing(keyword=1)
    """,
    # setattr/hasattr on objects that are not upstream, and relative imports
    """
    from .trl import patched
    setattr(obj, "training_step", None)
    hasattr(obj, "accepts_loss_kwargs")
    patched.x = 1
    """,
    # replacement text the downstream inserted itself is not expected upstream
    """
    import inspect
    import trl
    src = inspect.getsource(trl.foo)
    src = src.replace("a", "INSERTED")
    src.replace("INSERTED", "b")
    " " in src
    """,
]


@pytest.mark.parametrize("code", NEGATIVES)
def test_look_alikes_produce_no_source_or_patch_checks(code):
    checks = proposed(code)
    assert [c for c in checks if c[3] in ("contains", "matches") and c[4] != ["a"]] == []
    assert [c for c in checks if c[2] and c[2].split(".")[-1] in ("x", "y", "z", "Thing")] == []
    assert [c for c in checks if c[2] in ("training_step", "accepts_loss_kwargs", "patched")] == []


def test_inserted_text_is_not_expected_but_the_original_is():
    code = """
    import inspect
    import trl
    src = inspect.getsource(trl.foo)
    src = src.replace("alpha", "INSERTED")
    src.replace("INSERTED", "beta")
    """
    assert proposed(code) == [("trl", "function", "foo", "contains", ["alpha"], "error")]


def test_constants_and_enum_members_are_not_modules_or_methods():
    code = """
    from transformers.training_args import OptimizerNames
    import transformers.models.auto.modeling_auto as auto
    OptimizerNames.LOMO
    auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES.keys()
    """
    assert proposed(code) == [
        (
            "transformers.models.auto.modeling_auto",
            "symbol",
            "MODEL_FOR_CAUSAL_LM_MAPPING_NAMES",
            None,
            [],
            "error",
        ),
        ("transformers.training_args", "symbol", "OptimizerNames", None, [], "error"),
    ]


def fallbacks(code: str) -> list[tuple]:
    """(subject, its fallback or None, severity) of every proposed check."""
    scanner = scan_tree(parse_locked(textwrap.dedent(code)), "pkg/mod.py", UPSTREAMS)
    return [
        (
            p.subject.name,
            p.subject.alternatives[0].name if p.subject.alternatives else None,
            p.severity,
        )
        for checks in propose(scanner.findings, scanner.modules).values()
        for p in checks
    ]


def test_an_import_with_an_import_fallback_needs_one_of_the_two():
    code = """
    try:
        from transformers import AutoModelForImageTextToText as Auto
    except ImportError:
        from transformers import AutoModelForVision2Seq as Auto
    """
    assert fallbacks(code) == [("AutoModelForImageTextToText", "AutoModelForVision2Seq", "error")]


def test_a_fallback_under_an_outer_guard_stays_tolerated():
    code = """
    try:
        try:
            from transformers import PreTrainedConfig
        except ImportError:
            from transformers import PretrainedConfig as PreTrainedConfig
    except Exception:
        PreTrainedConfig = None
    """
    assert fallbacks(code) == [("PreTrainedConfig", "PretrainedConfig", "info")]


@pytest.mark.parametrize(
    "handler",
    [
        "PeftModel = None",  # no import to fall back on: tolerated
        "from peft import PeftModel",  # the same import again: nothing else to try
    ],
)
def test_no_fallback_import_leaves_the_import_tolerated(handler):
    code = f"""
    try:
        from peft import PeftModel
    except ImportError:
        {handler}
    """
    assert fallbacks(code)[0] == ("PeftModel", None, "info")


def test_fallbacks_across_upstreams_or_under_other_handlers_are_not_alternatives():
    across = """
    try:
        from trl import SFTConfig as Arguments
    except ImportError:
        from transformers import TrainingArguments as Arguments
    """
    assert fallbacks(across) == [("TrainingArguments", None, "info"), ("SFTConfig", None, "info")]
    other = """
    try:
        from transformers import AutoModelForImageTextToText as Auto
    except ValueError:
        from transformers import AutoModelForVision2Seq as Auto
    """
    assert [f[1] for f in fallbacks(other)] == [None, None]


def test_an_attribute_set_from_an_upstream_default_is_that_class_in_every_method():
    code = """
    from transformers.trainer import Trainer

    class Manager:
        def load(self):
            return self._trainer_cls.from_pretrained("x", revision="main")

    def old_init(self, trainer_cls=Trainer):
        self._trainer_cls = trainer_cls
    """
    assert (
        "transformers.trainer",
        "function",
        "Trainer.from_pretrained",
        "accepts",
        ["revision"],
        "error",
    ) in proposed(code)


def test_an_attribute_set_from_two_defaults_or_only_assigned_is_nothing_upstream():
    code = """
    from transformers.trainer import Trainer
    from trl import SFTTrainer

    class Manager:
        def __init__(self, trainer_cls=Trainer):
            self._trainer_cls = trainer_cls

        def other(self, trainer_cls=SFTTrainer):
            self._trainer_cls = trainer_cls

        def load(self):
            return self._trainer_cls.from_pretrained("x", revision="main")

    class Holder:
        def __init__(self, trainer_cls=Trainer):
            self._cls = trainer_cls
    """
    found = proposed(code)
    assert not [p for p in found if p[3] == "accepts"]
    assert not [p for p in found if "from_pretrained" in str(p[2])]


def test_a_method_named_as_an_imported_function_calls_the_import():
    code = """
    from trl.trainer.utils import selective_log_softmax

    class Fast:
        def selective_log_softmax(self, logits, index):
            return selective_log_softmax(logits, index, temperature=1.0)
    """
    assert (
        "trl.trainer.utils",
        "function",
        "selective_log_softmax",
        "call",
        ["2:temperature"],
        "error",
    ) in proposed(code)


def test_calls_with_a_known_shape_of_functions_propose_call_and_of_methods_accepts():
    code = """
    from trl.models.utils import unwrap_model_for_generation
    from transformers.trainer import Trainer
    unwrap_model_for_generation(m, a, gather_deepspeed3_params=False)
    unwrap_model_for_generation(m, gather_deepspeed3_params=True)
    unwrap_model_for_generation(*parts, gather_deepspeed3_params=True)
    Trainer.training_step(t, model=m, inputs=i)
    """
    found = [p[2:5] for p in proposed(code) if p[3] in ("call", "accepts")]
    unwrap = "unwrap_model_for_generation"
    assert found == [
        ("Trainer.training_step", "accepts", ["model", "inputs"]),  # a method: accepts
        (unwrap, "accepts", ["gather_deepspeed3_params"]),  # the call spreading *parts
        (unwrap, "call", ["2:gather_deepspeed3_params"]),  # one check per shape
        (unwrap, "call", ["1:gather_deepspeed3_params"]),
    ]


def test_a_name_bound_in_the_class_body_is_seen_from_the_class_body():
    code = """
    from trl.trainer.utils import selective_log_softmax

    class Fast:
        selective_log_softmax = staticmethod(lambda *a, **k: None)
        value = selective_log_softmax(1, 2, temperature=1.0)
    """
    assert not [p for p in proposed(code) if p[3] == "accepts"]


REGISTRY = """
import importlib

FIXES = {}

def run(trainer_file):
    module = importlib.import_module("trl.trainer." + trainer_file)
    fixes = FIXES.get(trainer_file, [])
    for fix in fixes:
        source = fix("train", source)
"""


def test_a_registry_applied_as_rewriters_is_found_by_the_path_its_key_names():
    from canary.scan.downstream.rewriters import inferred_registries

    assert inferred_registries(parse_locked(REGISTRY)) == {"FIXES": "trl.trainer.{key}"}
    formatted = REGISTRY.replace('"trl.trainer." + trainer_file', 'f"trl.models.{trainer_file}"')
    assert inferred_registries(parse_locked(formatted)) == {"FIXES": "trl.models.{key}"}


@pytest.mark.parametrize(
    "change",
    [
        ('fix("train", source)', "fix(source)"),  # entries called with one argument
        ('"trl.trainer." + trainer_file', "trainer_file"),  # the key names no module path
        ("FIXES.get(trainer_file, [])", "FIXES.get(other, [])"),  # looked up by another name
        ('"trl.trainer."', '"trl trainer "'),  # not a dotted path
    ],
)
def test_no_registry_where_the_lookup_or_the_application_is_not_a_rewriters(change):
    from canary.scan.downstream.rewriters import inferred_registries

    assert inferred_registries(parse_locked(REGISTRY.replace(*change))) == {}


def test_a_key_formatted_into_two_different_paths_names_no_registry():
    from canary.scan.downstream.rewriters import inferred_registries

    code = REGISTRY + '\ndef other(trainer_file):\n    eval(f"peft.tuners.{trainer_file}")\n'
    assert inferred_registries(parse_locked(code)) == {}


def test_a_module_imported_by_name_then_patched_needs_its_class():
    code = """
    import importlib

    def forward(self, hidden_states, mask=None):
        return hidden_states

    m = importlib.import_module("transformers.models.llama.modeling_llama")
    m.LlamaAttention.forward = forward
    """
    assert proposed(code) == [
        (
            "transformers.models.llama.modeling_llama",
            "function",
            "LlamaAttention.forward",
            None,
            [],
            "error",
        )
    ]


def test_mock_patch_and_patch_object_of_upstream_names_are_patches():
    code = """
    from unittest import mock
    from unittest.mock import patch
    from transformers.trainer import Trainer

    def step(self, model, inputs):
        return 0

    with mock.patch("transformers.trainer.Trainer.training_step", step):
        pass

    @patch.object(Trainer, "compute_loss", step)
    def run():
        pass
    """
    patched = {p[2] for p in proposed(code) if p[0] == "transformers.trainer"}
    assert {"Trainer.training_step", "Trainer.compute_loss"} <= patched


def test_augmented_assignment_into_an_upstream_namespace_needs_the_name():
    code = """
    import transformers.trainer as tr
    tr.TRAINER_STATE_NAME += ".bak"
    """
    assert ("transformers.trainer", "symbol", "TRAINER_STATE_NAME", None, [], "error") in proposed(
        code
    )


@pytest.mark.parametrize(
    "code",
    [
        "import importlib\nm = importlib.import_module(name)\nm.Cls.forward = f",  # no literal
        'from unittest import mock\nmock.patch("os.path.join", f)',  # not an upstream
        'from unittest import mock\nmock.patch.object(helper, "compute_loss", f)',  # not upstream
        "import transformers.trainer as tr\nx = tr.TRAINER_STATE_NAME\nx += 'a'",  # a local name
    ],
)
def test_look_alikes_of_those_patches_propose_no_patch(code):
    assert not [p for p in proposed(code) if p[2] and p[2].endswith(("forward", "join", "loss"))]
    assert not [p for p in proposed(code) if "TRAINER_STATE_NAME" in str(p[2]) and p[3]]


@pytest.mark.parametrize(
    ("handler", "severity"),
    [
        ('    raise ImportError("this needs trl") from e\n', "error"),  # re-raised: no tolerance
        ("    raise\n", "error"),
        ("    if strict:\n        raise\n    unwrap = None\n", "info"),  # gives up only sometimes
        ("    unwrap = None\n", "info"),
    ],
)
def test_a_handler_that_raises_again_tolerates_nothing(handler, severity):
    code = "try:\n    from trl.models.utils import unwrap\nexcept ImportError as e:\n" + handler
    assert [p[5] for p in proposed(code)] == [severity]


def test_a_module_level_version_flag_gates_as_its_comparison():
    code = """
    import trl
    from packaging.version import Version

    IS_NEW_TRL = Version(trl.__version__) >= Version("0.20.0")

    def patch():
        if IS_NEW_TRL:
            from trl.trainer.utils import new_helper
        if not IS_NEW_TRL:
            from trl.trainer.utils import old_helper
    """
    gates = {p[2]: p for p in proposed_with_gates(code)}
    assert gates["new_helper"][-1] == ">=0.20.0" and gates["old_helper"][-1] == "<0.20.0"


def test_a_flag_that_compares_no_version_gates_nothing():
    code = """
    import os
    USE_FAST = os.environ.get("FAST") == "1"
    if USE_FAST:
        from trl.trainer.utils import new_helper
    """
    assert [p[-1] for p in proposed_with_gates(code)] == [""]


def proposed_with_gates(code: str) -> list[tuple]:
    scanner = scan_tree(parse_locked(textwrap.dedent(code)), "pkg/mod.py", UPSTREAMS)
    result = propose(scanner.findings, scanner.modules)
    return [
        (p.subject.module, p.subject.key, p.subject.name, p.gate)
        for c in result.values()
        for p in c
    ]


def test_a_fallback_in_a_try_of_its_own_is_one_check_of_either():
    """vLLM's version: `from vllm import __version__`, else from `vllm.version`, else a
    dummy; one check of either, tolerated (it was two, `version` and `version-2`)."""
    code = """
    try:
        from transformers import __version__ as version
    except ImportError:
        try:
            from transformers.version import __version__ as version
        except ImportError:
            version = "0.0.0"
    """
    assert fallbacks(code) == [("__version__", "__version__", "info")]
    unguarded = code.replace('version = "0.0.0"', "raise")
    assert fallbacks(unguarded) == [("__version__", "__version__", "error")]


def test_a_name_the_try_body_assigns_from_its_import_pairs_with_the_handler_import():
    """`from transformers import PreTrainedConfig; PretrainedConfig = PreTrainedConfig`,
    else `from transformers import PretrainedConfig`: either spelling will do."""
    code = """
    try:
        from transformers import PreTrainedConfig
        PretrainedConfig = PreTrainedConfig
    except ImportError:
        from transformers import PretrainedConfig
    """
    assert fallbacks(code) == [("PreTrainedConfig", "PretrainedConfig", "error")]
    unrelated = code.replace("PretrainedConfig = PreTrainedConfig", "PretrainedConfig = 1")
    assert ("PreTrainedConfig", None, "info") in fallbacks(unrelated)


def test_a_why_says_the_names_passed_once_for_the_lines_that_pass_the_same():
    code = """
    from transformers.integrations.finegrained_fp8 import FP8Linear

    def a(n, b):
        FP8Linear(in_features=n, bias=b)
        FP8Linear(in_features=n, bias=None)
        FP8Linear(in_features=n, dtype=b)
        FP8Linear(in_features=1, bias=b)
    """
    said = [w for w in whys(code) if "keyword" in w]
    assert said
    assert all("pkg/mod.py:5,6,8 (in_features, bias),7 (in_features, dtype)" in w for w in said)
