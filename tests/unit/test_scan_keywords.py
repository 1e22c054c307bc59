"""Keyword arguments to upstream constructors and configs are contracts on the `__init__` that
takes them (issue 45 item 4): a dataclass's generated one, and the one an upstream function
passes its `**kwargs` on to; written out, or put into a dict the client spreads (its own
`**kwargs` included). Judged red on the release that dropped a keyword
(tests/fixtures/scan_keywords: up_1 the client's, up_2 the break)."""

from __future__ import annotations

from paths import FIXTURES

from canary.analysis import ModuleCache
from canary.analysis.parselock import parse_locked
from canary.engine.judge import VersionRun
from canary.matrix.targets import Target
from canary.scan.downstream.findings import Role
from canary.scan.downstream.patterns import FileScanner, scan_tree
from canary.scan.proposing.propose import Proposal, propose
from canary.scan.upstream.releases import load_text
from canary.scan.upstream.view import UpstreamView
from canary.scan.writing.emit import Releases, render_matrix
from canary.sources.local import LocalTree

HERE = FIXTURES / "scan_keywords"
CLIENT = HERE / "client" / "kwclient" / "engines.py"


def run(label: str, text: str = "upstream: kwup\nchecks: []\n") -> VersionRun:
    """The release `label` ("1.0": up_1) read from its folder, judging the matrix `text`."""
    tree = LocalTree(HERE / f"up_{label[0]}", "kwup")
    return VersionRun(load_text("kwup", text), Target.parse(label), tree, ModuleCache())


def scanned() -> FileScanner:
    tree = parse_locked(CLIENT.read_text(encoding="utf-8"))
    return scan_tree(tree, "kwclient/engines.py", frozenset({"kwup"}))


def proposed(labels: tuple[str, ...] = ("2.0", "1.0")) -> list[Proposal]:
    runs = [run(label) for label in labels]
    views = [UpstreamView(r.module, r.target.label, r.hierarchy.namespace) for r in runs]
    scanner = scanned()
    return propose(scanner.findings, scanner.modules, {"kwup": views})["kwup"]


def stated(proposals: list[Proposal]) -> set[tuple]:
    return {
        (p.subject.module, p.subject.key, p.subject.name, p.assertion, tuple(sorted(p.values)))
        for p in proposals
    }


def test_keys_put_into_a_functions_own_kwargs_are_passed_where_it_spreads_them():
    calls = {(f.role, ".".join(f.ref.parts), f.items) for f in scanned().findings}
    assert (Role.KWARGS, "kwup.engine.LLM", ("use_ray",)) in calls  # own_flag popped
    # the dict is updated from a dict of unknown keys: the keywords are known, the shape not
    logs = ("model", "log_requests", "max_seqs")
    assert (Role.KWARGS, "kwup.args.AsyncEngineArgs", logs) in calls


def test_keywords_to_a_dataclass_are_stated_on_its_generated_init():
    found = stated(proposed())
    logs = ("log_requests", "max_seqs", "model")
    assert ("kwup.args", "function", "AsyncEngineArgs.__init__", "accepts", logs) in found
    written = ("kwup.args", "function", "EngineArgs.__init__", "accepts")
    assert (*written, ("max_seqs", "model", "use_ray")) in found


def test_a_keyword_an_upstream_function_passes_on_is_stated_on_the_callee_it_lands_in():
    forwarded = [p for p in proposed() if any(u.role is Role.FORWARDED for u in p.uses)]
    assert [(p.subject.name, p.values) for p in forwarded] == [
        ("EngineArgs.__init__", ["model", "max_seqs", "use_ray"])
    ]
    assert "passed on through an upstream callee's **kwargs" in forwarded[0].why


def test_the_look_alikes_state_nothing_on_a_callee():
    found = stated(proposed())
    by_subject = {s[2]: s for s in found if s[3] == "accepts"}
    # popped by LLM, named by it: no keyword of EngineArgs's; spread into two callees: none;
    # PlainConfig's own `__init__` spreads its **kwargs nowhere: stated there, as before
    subjects = {"AsyncEngineArgs.__init__", "EngineArgs.__init__", "LLM.__init__"}
    assert set(by_subject) == {*subjects, "PlainConfig.__init__"}
    assert not {"local_only", "tokenizer"} & set(by_subject["EngineArgs.__init__"][4])
    # `Server.__init__(self, **kwargs)` binds anything: it exists, and Other is not named
    assert ("kwup.engine", "function", "Server.__init__", None, ()) in found
    assert "Other" not in repr(found)
    # a metaclass in LossOutput's hierarchy may wrap its generated `__init__`: the call stays a
    # use of the `__init__` its base writes out, which takes anything
    assert ("kwup.args", "function", "Output.__init__", None, ()) in found
    assert "LossOutput.__init__" not in repr(found) and "past" not in repr(found)


def test_the_proposed_checks_hold_on_the_release_written_against_and_fail_on_the_break():
    proposals = [p for p in proposed() if p.subject.name in ("EngineArgs.__init__",)]
    proposals += [p for p in proposed() if p.subject.name == "AsyncEngineArgs.__init__"]
    text = render_matrix("kwup", proposals, Releases(">=1.0"))
    verdicts = {}
    for label in ("1.0", "2.0"):
        judging = run(label, text)
        verdicts[label] = {c.id: judging.judge(c)[0].value for c in judging.matrix.checks}
    assert len(verdicts["1.0"]) == 2
    assert set(verdicts["1.0"].values()) == {"pass"}
    assert set(verdicts["2.0"].values()) == {"fail"}
