"""scan follows the client's own types to the upstream class (issue 45 item 3): an object built
in `__init__` and held in `self.x`, a parameter annotated with a string naming a class imported
under TYPE_CHECKING, the return of the package's own typed function, a dotted path assigned an
object, an isinstance narrowing; and a subclass of the client's own class (another file) whose
base derives from an upstream class. What each use states is placed on the class the code
names, with the call's shape through an instance (item 5); each is red on the release that
broke it (tests/fixtures/scan_instances: up_1 the client's, up_2 the break)."""

from __future__ import annotations

from paths import FIXTURES

from canary.analysis import ModuleCache
from canary.engine.judge import VersionRun
from canary.matrix.targets import Target
from canary.scan.downstream.package import scan_path
from canary.scan.proposing.propose import Proposal, propose
from canary.scan.upstream.releases import load_text
from canary.scan.upstream.view import UpstreamView
from canary.scan.writing.emit import Releases, render_matrix
from canary.sources.local import LocalTree

HERE = FIXTURES / "scan_instances"


def run(label: str, text: str = "upstream: instup\nchecks: []\n") -> VersionRun:
    """The release `label` ("1.0": up_1) read from its folder, judging the matrix `text`."""
    tree = LocalTree(HERE / f"up_{label[0]}", "instup")
    return VersionRun(load_text("instup", text), Target.parse(label), tree, ModuleCache())


def proposed() -> list[Proposal]:
    runs = [run(label) for label in ("2.0", "1.0")]
    views = [UpstreamView(r.module, r.target.label, r.hierarchy.namespace) for r in runs]
    result = scan_path(HERE / "client" / "instclient", frozenset({"instup"}))
    return propose(result.findings, result.modules, {"instup": views})["instup"]


def stated(proposals: list[Proposal]) -> set[tuple]:
    return {
        (p.subject.module, p.subject.key, p.subject.name, p.assertion, tuple(sorted(p.values)))
        for p in proposals
    }


def test_an_object_built_in_init_is_followed_into_the_other_methods_with_the_calls_shape():
    found = stated(proposed())
    shape = ("0:sampling,prompt_ids",)
    assert ("instup.engine", "function", "Engine.generate", "call", shape) in found
    # `self.other = make_other()` holds nothing scan knows: its generate call states nothing
    assert sum(s[2] == "Engine.generate" for s in found) == 1


def test_a_name_assigned_an_instance_holds_it_too():
    methods = [p for p in proposed() if p.subject.name == "Engine" and p.assertion == "methods"]
    assert "engines.py:11" in methods[0].why  # `engine = self.engine; engine.register_hooks()`


def test_a_string_annotation_names_a_class_imported_for_type_checking():
    found = stated(proposed())
    assert ("instup.engine", "class", "Engine", "methods", ("register_hooks",)) in found
    assert ("instup.engine", "class", "Engine", "attributes", ("model",)) in found
    assert "Engineer" not in repr(found)


def test_the_package_s_own_typed_function_returns_an_instance_of_the_class_named():
    found = stated(proposed())
    assert ("instup.modeling", "function", "Model.save", "call", ("0:directory,safe",)) in found
    assert not any(s[2].startswith("Mixin") for s in found)


def test_a_method_read_on_an_upstream_class_that_inherits_it_is_checked_on_that_class():
    proposals = proposed()
    # generate is Mixin's on up_1; on up_2 Model derives from torch.nn.Module alone, which
    # scan does not read (and does not define generate): the check is on Model all the same
    generate = [p for p in proposals if p.subject.name == "Model" and p.assertion == "methods"]
    assert generate[0].values == ["generate"]
    assert "generation.py:7" in generate[0].why
    assert not any((p.subject.name or "").startswith("Mixin") for p in proposals)
    save = [p.why for p in proposals if p.subject.name == "Model.save"]
    assert "generation.py:8" in save[0]  # defined on the class named: where it is


def test_a_dotted_path_assigned_an_object_and_an_isinstance_narrowing_hold_instances():
    found = stated(proposed())
    assert ("instup.modeling", "class", "Cache", "attributes", ("key_cache",)) in found
    assert "layers" not in repr(found)  # read past the narrowing


def test_a_subclass_of_the_client_s_own_class_reaches_the_upstream_base_in_another_file():
    found = stated(proposed())
    assert ("instup.trainer", "class", "Trainer", "methods", ("_nested_gather",)) in found
    text = repr(found)
    assert "create_card" not in text and "card" not in text  # the client's own base's


def test_a_replacement_defined_in_another_module_states_what_it_relies_on():
    found = stated(proposed())
    signature = ("(self, hidden, mask=None)",)
    assert ("instup.attention", "function", "Attention.forward", "signature", signature) in found
    assert ("instup.attention", "class", "Attention", "attributes", ("num_heads",)) in found
    assert "extra" not in repr(found)


def test_the_proposed_checks_hold_on_the_release_written_against_and_fail_on_the_break():
    proposals = [p for p in proposed() if p.assertion is not None]
    text = render_matrix("instup", proposals, Releases(">=1.0"))
    verdicts = {}
    for label in ("1.0", "2.0"):
        judging = run(label, text)
        verdicts[label] = {c.id: judging.judge(c)[0].value for c in judging.matrix.checks}
    assert set(verdicts["1.0"].values()) == {"pass"}
    # `model-methods` is an error there, not a fail: generate may come from torch.nn.Module,
    # which is not read (the engine says so rather than fail)
    assert verdicts["2.0"]["model-methods"] == "error"
    failing = {check for check, verdict in verdicts["2.0"].items() if verdict in ("fail", "error")}
    assert failing == set(verdicts["2.0"]) - {"engine-attributes"}  # Engine.model stays
