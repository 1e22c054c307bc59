"""Every check kind and trap against the fixture upstream tree (tests/fixtures/checkout)."""

from __future__ import annotations

from pathlib import Path

import pytest
from judging import judge_matrix
from paths import FIXTURES

from canary.analysis import ModuleCache
from canary.engine.judge import VersionRun
from canary.engine.outcomes import Result, Status
from canary.matrix.model import load_matrix
from canary.matrix.targets import Target

CHECKOUT = FIXTURES / "checkout"


def judge(tmp_path: Path, check_yaml: str, version: str = "2.0.0", header: str = ""):
    """Load a one-check matrix and judge it on the fixture tree as `version`."""
    (result,) = judge_matrix(
        tmp_path, CHECKOUT, "fakeup", check_yaml, version, "src: src\n" + header
    )
    return result


CASES = [
    # module alone: a .py file, a package __init__.py, absent
    ("module-file", "{module: fakeup.models.utils}", Status.PASS, ""),
    ("module-package", "{module: fakeup.pkg}", Status.PASS, ""),
    ("module-absent", "{module: fakeup.nope}", Status.FAIL, "module fakeup.nope not found"),
    # symbol: every kind of module-level binding
    (
        "sym-def",
        "{module: fakeup.models.utils, symbol: disable_gradient_checkpointing}",
        Status.PASS,
        "",
    ),
    ("sym-annotated", "{module: fakeup.models.utils, symbol: MAX_LENGTH}", Status.PASS, ""),
    ("sym-unpacked", "{module: fakeup.models.utils, symbol: third}", Status.PASS, ""),
    ("sym-augmented", "{module: fakeup.models.utils, symbol: counter}", Status.PASS, ""),
    ("sym-import-as", "{module: fakeup.models.utils, symbol: operating_system}", Status.PASS, ""),
    ("sym-from-import-as", "{module: fakeup.models.utils, symbol: ODict}", Status.PASS, ""),
    ("sym-in-if", "{module: fakeup.models.utils, symbol: fast_path}", Status.PASS, ""),
    ("sym-in-else", "{module: fakeup.models.utils, symbol: FAST_PATH_DISABLED}", Status.PASS, ""),
    (
        "sym-in-except",
        "{module: fakeup.models.utils, symbol: missing_optional_dependency}",
        Status.PASS,
        "",
    ),
    ("sym-in-finally", "{module: fakeup.models.utils, symbol: CLEANED_UP}", Status.PASS, ""),
    ("sym-in-with", "{module: fakeup.models.utils, symbol: SUPPRESSED_NAME}", Status.PASS, ""),
    (
        "sym-in-function",
        "{module: fakeup.models.utils, symbol: INNER_NAME}",
        Status.FAIL,
        "fakeup.models.utils has no symbol INNER_NAME",
    ),
    ("sym-star", "{module: fakeup.models.utils, symbol: RepeatSampler}", Status.PASS, ""),
    (
        "sym-star-missing",
        "{module: fakeup.models.utils, symbol: NoSuchName}",
        Status.FAIL,
        "star-imports fakeup.trainer.utils",
    ),
    (
        "sym-star-contains",
        "{module: fakeup.models.utils, symbol: selective_log_softmax, "
        "contains: ['def selective_log_softmax(logits, index)']}",
        Status.PASS,
        "",
    ),
    (
        "sym-star-private",
        "{module: fakeup.models.utils, symbol: _private_helper}",
        Status.FAIL,
        "has no symbol _private_helper",
    ),
    (
        "sym-similar",
        "{module: fakeup.models.utils, symbol: disable_gradient_checkpoint}",
        Status.FAIL,
        "similar: disable_gradient_checkpointing",
    ),
    (
        "sym-imported-by-name",
        "{module: fakeup.trainer.grpo_trainer, symbol: disable_gradient_checkpointing}",
        Status.PASS,
        "",
    ),
    # class: defined vs bound
    ("class-defined", "{module: fakeup.trainer.grpo_trainer, class: GRPOTrainer}", Status.PASS, ""),
    (
        "class-imported",
        "{module: fakeup.trainer.grpo_trainer, class: RepeatSampler}",
        Status.FAIL,
        "class RepeatSampler is imported here, defined in fakeup.trainer.utils",
    ),
    (
        "class-in-function",
        "{module: fakeup.trainer.grpo_trainer, class: LocalTrainer}",
        Status.FAIL,
        "has no class LocalTrainer",
    ),
    (
        "class-symbol-ok",
        "{module: fakeup.trainer.grpo_trainer, symbol: RepeatSampler}",
        Status.PASS,
        "",
    ),
    # methods
    (
        "methods-ok",
        "{module: fakeup.trainer.grpo_trainer, class: GRPOTrainer, "
        "methods: [compute_loss, is_training, _generate_async]}",
        Status.PASS,
        "",
    ),
    (  # a method only under `if TYPE_CHECKING:` in the class body is not there (issue 47's 9)
        "methods-typing-only",
        "{module: fakeup.trainer.grpo_trainer, class: GRPOTrainer, methods: [_typed_only]}",
        Status.FAIL,
        "GRPOTrainer has no method _typed_only",
    ),
    (
        "methods-renamed",
        "{module: fakeup.trainer.grpo_trainer, class: GRPOTrainer, "
        "methods: [_get_per_token_logps]}",
        Status.FAIL,
        "GRPOTrainer has no method _get_per_token_logps (has _get_per_token_logps_and_entropies)",
    ),
    (
        "methods-sibling",
        "{module: fakeup.trainer.grpo_trainer, class: GRPOTrainer, methods: [_prepare_inputs]}",
        Status.FAIL,
        "GRPOTrainer has no method _prepare_inputs",
    ),
    (
        "methods-inherited",
        "{module: fakeup.trainer.grpo_trainer, class: GRPOTrainer, methods: [training_step]}",
        Status.PASS,
        "training_step inherited from fakeup.trainer.base.Trainer",
    ),
    (
        "methods-own",
        "{module: fakeup.trainer.grpo_trainer, class: GRPOTrainer, methods: [training_step], "
        "own: true}",
        Status.FAIL,
        "GRPOTrainer does not define training_step in its own body "
        "(inherited from fakeup.trainer.base.Trainer)",
    ),
    # bases
    (
        "bases-private",
        "{module: fakeup.trainer.grpo_trainer, class: GRPOTrainer, bases: [_BaseTrainer]}",
        Status.PASS,
        "",
    ),
    (
        "bases-dotted",
        "{module: fakeup.trainer.grpo_trainer, class: GRPOTrainer, bases: [Generic]}",
        Status.PASS,
        "",
    ),
    (
        "bases-missing",
        "{module: fakeup.trainer.grpo_trainer, class: GRPOTrainer, bases: [Trainer]}",
        Status.FAIL,
        "bases of GRPOTrainer are (_BaseTrainer, typing.Generic",
    ),
    # function / method / params
    (
        "function-decorated",
        "{module: fakeup.models.utils, function: disable_gradient_checkpointing,"
        " params: [model, gradient_checkpointing_kwargs]}",
        Status.PASS,
        "",
    ),
    (
        "function-async-params",
        "{module: fakeup.models.utils, function: fetch, "
        "params: [url, retries, args, timeout, extra]}",
        Status.PASS,
        "",
    ),
    (
        "function-imported",
        "{module: fakeup.trainer.grpo_trainer, function: disable_gradient_checkpointing}",
        Status.FAIL,
        "function disable_gradient_checkpointing is imported here, defined in fakeup.models.utils",
    ),
    (
        "method-kwonly",
        "{module: fakeup.trainer.grpo_trainer, function: GRPOTrainer.__init__, "
        "params: [model, reward_funcs, kwargs]}",
        Status.PASS,
        "",
    ),
    (
        "method-redefined",
        "{module: fakeup.trainer.grpo_trainer, function: GRPOTrainer.compute_loss,"
        " params: [num_items_in_batch]}",
        Status.FAIL,
        "params of GRPOTrainer.compute_loss are (self, model, inputs, return_outputs)",
    ),
    (
        "method-async",
        "{module: fakeup.trainer.grpo_trainer, function: GRPOTrainer._generate_async}",
        Status.PASS,
        "",
    ),
    (
        "method-on-imported-class",
        "{module: fakeup.trainer.grpo_trainer, function: RepeatSampler.__iter__}",
        Status.FAIL,
        "class RepeatSampler is imported here",
    ),
    (
        "method-missing",
        "{module: fakeup.trainer.base, function: Trainer.prediction_step}",
        Status.FAIL,
        "Trainer has no method prediction_step",
    ),
    # source assertions on each subject
    (
        "contains-function",
        "{module: fakeup.trainer.grpo_trainer, "
        "function: GRPOTrainer._generate_and_score_completions, "
        "contains: ['disable_gradient_checkpointing(self.model']}",
        Status.PASS,
        "",
    ),
    (
        "contains-missing",
        "{module: fakeup.trainer.base, function: Trainer.training_step, "
        "contains: [unwrapped_model]}",
        Status.FAIL,
        "source of Trainer.training_step lacks 'unwrapped_model'",
    ),
    (
        "contains-class",
        "{module: fakeup.trainer.grpo_trainer, class: GRPOTrainer, "
        "contains: ['self.model_accepts_loss_kwargs = False']}",
        Status.PASS,
        "",
    ),
    ("contains-module", "{module: fakeup.models.utils, contains: ['__all__']}", Status.PASS, ""),
    (
        "contains-decorator",
        "{module: fakeup.models.utils, function: disable_gradient_checkpointing,"
        " contains: ['@contextlib.contextmanager']}",
        Status.PASS,
        "",
    ),
    (
        "contains-symbol",
        "{module: fakeup.models.utils, symbol: MAX_LENGTH, contains: ['512']}",
        Status.PASS,
        "",
    ),
    (
        "matches-ok",
        r"{module: fakeup.trainer.base, function: Trainer.training_step, "
        r"matches: ['^\s+loss = loss / self\.args\.gradient_accumulation_steps$']}",
        Status.PASS,
        "",
    ),
    (
        "matches-missing",
        r"{module: fakeup.trainer.base, function: Trainer.training_step, "
        r"matches: ['num_items_in_batch\s*\*']}",
        Status.FAIL,
        "no match for /num_items_in_batch",
    ),
    (
        "not-contains-ok",
        "{module: fakeup.trainer.base, function: Trainer.training_step, "
        "not_contains: [accelerator.backward]}",
        Status.PASS,
        "",
    ),
    (
        "not-contains-hit",
        "{module: fakeup.trainer.base, function: Trainer.training_step, "
        "not_contains: [gradient_accumulation_steps]}",
        Status.FAIL,
        "source of Trainer.training_step contains 'gradient_accumulation_steps' (its line 3)",
    ),
    # errors: a file that does not parse, bytes that do not decode
    (
        "syntax-error",
        "{module: fakeup.broken, symbol: fine}",
        Status.ERROR,
        "fakeup/broken.py:5: does not parse",
    ),
    ("undecodable", "{module: fakeup.latin, symbol: NAME}", Status.ERROR, "cannot decode"),
]


@pytest.mark.parametrize(
    ("check", "status", "detail"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_check_kinds(tmp_path, check, status, detail):
    result = judge(tmp_path, "- {id: the-check, " + check.removeprefix("{"))
    assert result.status is status, result.detail
    assert detail in result.detail


def test_any_of_passes_when_one_alternative_holds(tmp_path):
    result = judge(
        tmp_path,
        """
        - id: logps
          module: fakeup.trainer.grpo_trainer
          any_of:
            - {function: GRPOTrainer._get_per_token_logps}
            - {function: GRPOTrainer._get_per_token_logps_and_entropies}
    """,
    )
    assert result.status is Status.PASS


def test_any_of_fails_with_every_alternative_detail(tmp_path):
    result = judge(
        tmp_path,
        """
        - id: kto
          any_of:
            - {module: fakeup.trainer.kto, function: KTOTrainer.get_batch_logps}
            - {module: fakeup.trainer.base, function: Trainer.get_batch_logps}
    """,
    )
    assert result.status is Status.FAIL
    assert result.detail.startswith("none of the alternatives holds: (1) module fakeup.trainer.kto")
    assert "(2) Trainer has no method get_batch_logps" in result.detail


GATED = """
    - id: gated
      module: fakeup.nope
      since: "1.0.0"
      until: "2.0.0"
"""


@pytest.mark.parametrize(
    ("version", "status"),
    [
        ("0.9.0", Status.SKIP),
        ("1.0.0", Status.FAIL),
        ("1.9.9", Status.FAIL),
        ("2.0.0", Status.SKIP),
    ],
)
def test_since_until_gate(tmp_path, version, status):
    assert judge(tmp_path, GATED, version).status is status


def test_versions_gate(tmp_path):
    check = "- {id: g, module: fakeup.nope, versions: '>=3,!=3.1.0'}"
    assert judge(tmp_path, check, "3.1.0").status is Status.SKIP
    assert judge(tmp_path, check, "3.2.0").status is Status.FAIL


def test_branch_gated_by_declared_version(tmp_path):
    """main declares 2.1.0.dev0 through its VERSION file: inside >=2.1.0.dev0, outside <2.1."""
    inside = judge(tmp_path, "- {id: g, module: fakeup.pkg, since: '2.0.0'}", "main")
    assert inside.status is Status.PASS
    outside = judge(tmp_path, "- {id: g, module: fakeup.pkg, until: '2.1.0.dev0'}", "main")
    assert outside.status is Status.SKIP
    assert "2.1.0.dev0" in outside.detail


BROKEN = 'versions:\n  broken:\n    "2.0.0": "known bad upload"\n'


def test_broken_version_fail_is_xfail_and_pass_is_xpass(tmp_path):
    failing = judge(tmp_path, "- {id: b, module: fakeup.nope, severity: info}", header=BROKEN)
    assert failing.status is Status.XFAIL
    assert "known bad upload" in failing.detail
    passing = judge(tmp_path, "- {id: b, module: fakeup.pkg}", header=BROKEN)
    assert passing.status is Status.XPASS


def test_gate_decides_before_broken(tmp_path):
    check = "- {id: b, module: fakeup.nope, since: '3.0.0'}"
    assert judge(tmp_path, check, header=BROKEN).status is Status.SKIP


def test_info_severity_is_warn(tmp_path):
    result = judge(tmp_path, "- {id: w, module: fakeup.nope, severity: info}")
    assert result.status is Status.WARN


def test_a_failure_carries_why_beside_its_detail(tmp_path):
    """The why is the result's own field (JSON `why`), not glued to the detail: a log line
    stays short; only a failure carries it."""
    result = judge(tmp_path, "- {id: w, module: fakeup.nope, why: 'the patch imports it'}")
    assert (result.detail, result.why) == ("module fakeup.nope not found", "the patch imports it")
    assert result.to_json()["why"] == "the patch imports it"
    assert Result.from_json(result.to_json()) == result
    held = judge(tmp_path, "- {id: w, module: fakeup.pkg, why: 'the patch imports it'}")
    assert held.why == "" and "why" not in held.to_json()


def test_unreadable_tree_is_error_for_every_check(tmp_path):
    from canary.sources.tree import SourceError

    path = tmp_path / "m.yaml"
    path.write_text("upstream: fakeup\nchecks:\n  - {id: a, module: fakeup.pkg}\n")
    matrix = load_matrix(path)
    error = SourceError("http://x/y.whl: reset")
    run = VersionRun(matrix, Target.parse("1.0.0"), error, ModuleCache())
    result = run.result(matrix.checks[0])
    assert result.status is Status.ERROR
    assert "http://x/y.whl: reset" in result.detail


def test_a_version_run_is_freed_by_reference_counting_alone(tmp_path):
    """The run's loader holds its modules and nothing that points back at the run, so dropping
    the run frees it and every module it read without a garbage collection."""
    import gc
    import weakref

    from canary.sources.local import LocalTree

    path = tmp_path / "fakeup.yaml"
    path.write_text(
        "upstream: fakeup\nsrc: src\nchecks:\n"
        "  - {id: base, module: fakeup.trainer.grpo_trainer, class: GRPOTrainer,"
        " methods: [train]}\n"
    )
    matrix = load_matrix(path)
    run = VersionRun(
        matrix, Target.parse("2.0.0"), LocalTree(CHECKOUT, "fakeup", "src"), ModuleCache(0)
    )
    run.result(matrix.checks[0])
    module = weakref.ref(run.module("fakeup.trainer.base"))
    freed = weakref.ref(run)
    gc.disable()
    try:
        del run
        assert freed() is None
        assert module() is None
    finally:
        gc.enable()


def test_an_interrupted_runner_judges_no_further_check(tmp_path):
    """Ctrl-C reaches the main thread only: the threads still judging versions stop at their
    next check instead of reading and parsing on while the process ends."""
    from canary.engine.runner import Runner, local_selector
    from canary.errors import Stopped

    path = tmp_path / "fakeup.yaml"
    path.write_text("upstream: fakeup\nsrc: src\nchecks:\n  - {id: a, module: fakeup.pkg}\n")
    matrix = load_matrix(path)
    runner = Runner(select=local_selector(CHECKOUT), source_path=CHECKOUT)
    (target,) = runner.targets(matrix, "all")
    ((judged,),) = runner.judge_all([(matrix, target)])
    assert judged.status is Status.PASS
    stopped = runner.interrupted()
    assert str(stopped) == "interrupted: 1 of 1 versions judged; what was read is cached"
    with pytest.raises(Stopped):
        runner.judge(matrix, target)


def test_one_thread_judges_at_a_time(tmp_path):
    """Judging is CPU-bound under the GIL: versions are read by several threads at once, but
    their checks are judged by one at a time (threads judging together only took turns, and
    paid for the switches)."""
    import threading
    import time

    from canary.engine.runner import Runner
    from canary.settings import Settings

    inside, most = [0], [0]
    lock = threading.Lock()

    class Watched(ModuleCache):
        def get(self, data, name, path, *, is_package, digest=None):
            with lock:
                inside[0] += 1
                most[0] = max(most[0], inside[0])
            time.sleep(0.05)  # long enough for another judging thread to come in
            try:
                return super().get(data, name, path, is_package=is_package, digest=digest)
            finally:
                with lock:
                    inside[0] -= 1

    path = tmp_path / "fakeup.yaml"
    path.write_text("upstream: fakeup\nsrc: src\nchecks:\n  - {id: a, module: fakeup.pkg}\n")
    matrix = load_matrix(path)
    labels = [f"1.{i}.0" for i in range(6)]
    runner = Runner(
        settings=Settings.from_environment(jobs=4),
        select=lambda _matrix, _selection: [Target(label) for label in labels],
        source_path=CHECKOUT,
        modules=Watched(),
    )
    batches = runner.judge_all([(matrix, target) for target in runner.targets(matrix, "all")])
    assert [r.status for batch in batches for r in batch] == [Status.PASS] * len(labels)
    assert most[0] == 1
