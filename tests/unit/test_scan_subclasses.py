"""A downstream class derived from an upstream class is a contract on that class (issue 45
item 1): the methods it overrides (and the signature it overrides them with), the methods it
calls on self or super(), the attributes it reads on self without setting them. Placed on the
class the code names, proposed only where a release read binds them, and judged red on the
release that broke them (tests/fixtures/scan_subclass: up_1 the client's, up_2 the break)."""

from __future__ import annotations

from paths import FIXTURES

from canary.analysis import ModuleCache
from canary.analysis.parselock import parse_locked
from canary.engine.judge import VersionRun
from canary.matrix.targets import Target
from canary.scan.downstream.patterns import scan_tree
from canary.scan.proposing.propose import Proposal, propose
from canary.scan.upstream.releases import load_text
from canary.scan.upstream.view import UpstreamView
from canary.scan.writing.emit import Releases, missing, render_matrix
from canary.sources.local import LocalTree

HERE = FIXTURES / "scan_subclass"
CLIENT = HERE / "client" / "subclient" / "trainers.py"


def run(label: str, text: str = "upstream: subup\nchecks: []\n") -> VersionRun:
    """The release `label` ("1.0": up_1) read from its folder, judging the matrix `text`."""
    tree = LocalTree(HERE / f"up_{label[0]}", "subup")
    return VersionRun(load_text("subup", text), Target.parse(label), tree, ModuleCache())


def proposed(labels: tuple[str, ...] = ("2.0", "1.0")) -> list[Proposal]:
    runs = [run(label) for label in labels]
    views = [UpstreamView(r.module, r.target.label, r.hierarchy.namespace) for r in runs]
    tree = parse_locked(CLIENT.read_text(encoding="utf-8"))
    scanner = scan_tree(tree, "subclient/trainers.py", frozenset({"subup"}))
    return propose(scanner.findings, scanner.modules, {"subup": views})["subup"]


def stated(proposals: list[Proposal]) -> set[tuple]:
    return {
        (p.subject.module, p.subject.key, p.subject.name, p.assertion, tuple(sorted(p.values)))
        for p in proposals
    }


def test_overrides_calls_and_reads_on_the_base_are_proposed_on_the_class_named():
    found = stated(proposed())
    # compute_loss and _save are also stated by their signature checks, which imply them
    methods = ("evaluate", "log", "training_step")
    assert ("subup.trainer", "class", "Trainer", "methods", methods) in found
    # `Trainer._table[...]`: a class attribute read on the class, not a method
    assert ("subup.trainer", "class", "Trainer", "attributes", ("_table", "model")) in found
    subjects = sorted(s[2] for s in found if s[1] != "symbol")
    assert subjects == [
        "Trainer",
        "Trainer",
        "Trainer._save",
        "Trainer._save_checkpoint",
        "Trainer.compute_loss",
    ]


def test_an_override_states_the_signature_it_was_written_against():
    found = stated(proposed())
    signature = ("(self, model, inputs, return_outputs=False)",)
    assert ("subup.trainer", "function", "Trainer.compute_loss", "signature", signature) in found
    # `(self, *args, **kwargs)` is no signature of upstream's: nothing stated for it
    assert not any(s[2] == "Trainer.training_step" and s[3] == "signature" for s in found)


def test_a_call_of_a_base_method_passing_keywords_states_them_unless_any_keyword_binds():
    found = stated(proposed())
    metrics = ("subup.trainer", "function", "Trainer._save_checkpoint", "accepts", ("metrics",))
    assert metrics in found
    assert not any(s[2] == "Trainer.evaluate" for s in found)  # (self, dataset=None, **kwargs)


def test_what_the_client_defines_or_a_base_of_its_own_may_bind_is_not_proposed():
    found = stated(proposed())
    text = repr(found)
    for own in ("my_helper", "my_other_helper", "counter", "mixin_value", "mixin_call", "run"):
        assert own not in text
    assert "__init__" not in text  # a dunder
    assert "Trainer.evaluate" not in text  # its override takes **kwargs: no signature
    assert "forward" not in text  # MyLayer's self.forward: maybe torch.nn.Module's
    assert ("subup.trainer", "symbol", "Layer", None, ()) in found  # the import alone
    assert "args" not in text.replace("*args", "")  # Mixed reads self.args beside its Mixin


def test_nothing_is_proposed_of_a_member_no_release_read_binds():
    # read on up_2 alone: _save and self.model are gone, so they could be the client's own
    found = stated(proposed(("2.0",)))
    methods = ("compute_loss", "evaluate", "training_step")
    assert ("subup.trainer", "class", "Trainer", "methods", methods) in found
    assert not any("model" in s[4] or "_save" in s[4] or "log" in s[4] for s in found)


def test_the_proposed_checks_hold_on_the_release_written_against_and_fail_on_the_break():
    proposals = [p for p in proposed() if p.assertion in ("methods", "attributes", "signature")]
    text = render_matrix("subup", proposals, Releases(">=1.0"))
    verdicts = {}
    for label in ("1.0", "2.0"):
        judging = run(label, text)
        verdicts[label] = {c.id: judging.judge(c)[0].value for c in judging.matrix.checks}
    assert set(verdicts["1.0"].values()) == {"pass"}
    assert set(verdicts["2.0"].values()) == {"fail"}


def replaced(labels: tuple[str, ...] = ("2.0", "1.0")) -> set[tuple]:
    runs = [run(label) for label in labels]
    views = [UpstreamView(r.module, r.target.label, r.hierarchy.namespace) for r in runs]
    text = (CLIENT.parent / "patches.py").read_text(encoding="utf-8")
    scanner = scan_tree(parse_locked(text), "subclient/patches.py", frozenset({"subup"}))
    return stated(propose(scanner.findings, scanner.modules, {"subup": views})["subup"])


def test_a_replacement_states_the_signature_it_replaces_and_what_it_reads_on_self():
    found = replaced()
    loss = ("subup.trainer", "function", "Trainer.compute_loss", "signature")
    assert (*loss, ("(self, model, inputs, return_outputs=False)",)) in found
    helper = ("subup.trainer", "function", "helper_fn", "signature", ("(x, y)",))
    assert helper in found
    assert ("subup.trainer", "class", "Trainer", "attributes", ("args", "model")) in found
    text = repr(found)
    assert "not_upstream" not in text and "scale" not in text
    assert not any(s[2] == "Trainer.training_step" and s[3] == "signature" for s in found)
    # replaced by functions of two parameter lists (one per release): no signature is a contract
    assert not any(s[2] == "Trainer._save_checkpoint" and s[3] == "signature" for s in found)


def test_a_merge_into_a_matrix_pinning_the_signature_adds_no_other_pin():
    signatures = [p for p in proposed() if p.assertion == "signature"]
    mine = {
        "id": "my-own-pin",
        "module": "subup.trainer",
        "function": "Trainer.compute_loss",
        "signature": "(self, model, inputs, return_outputs=True)",
    }
    left = missing(signatures, [mine], set())
    assert [p.subject.name for p in left] == ["Trainer._save"]
