"""A method only releases between the ends define (renamed away before the newest, added after
the lowest) is placed on the class that defined it there, so its check shows where it went;
releases are probed by minor series, spread over the range."""

from __future__ import annotations

from paths import FIXTURES

from canary.analysis import ModuleCache
from canary.engine.judge import VersionRun
from canary.matrix.model import load_matrix
from canary.matrix.targets import Target as Release
from canary.scan.downstream.imports import Ref
from canary.scan.downstream.rewriters import ANY_CLASS
from canary.scan.proposing.subjects import Placement, place
from canary.scan.upstream.releases import MAX_PROBES, _probes
from canary.scan.upstream.view import UpstreamView
from canary.sources.local import LocalTree

TREES = FIXTURES / "scan_midrange"


def view(label: str, tmp_path, elsewhere=None) -> UpstreamView:
    path = tmp_path / "midup.yaml"
    path.write_text("upstream: midup\nchecks: []\n", encoding="utf-8")
    matrix = load_matrix(path, checks_required=False)
    tree = LocalTree(TREES / label, "midup")
    run = VersionRun(matrix, Release.parse("1.0.0"), tree, ModuleCache())
    return UpstreamView(run.module, label, run.hierarchy.namespace, elsewhere=elsewhere)


def rewritten(method: str) -> Ref:
    return Ref(("midup", "trainer", ANY_CLASS, method), 2)


def test_a_method_only_a_release_between_the_ends_has_is_placed_on_its_class(tmp_path):
    mid = view("mid", tmp_path)

    def elsewhere(module, method):
        owner = mid.class_with(module, method)
        return owner.name if owner else None

    ends = [view("new", tmp_path, elsewhere), view("old", tmp_path, elsewhere)]
    assert place(rewritten("_get_logps"), ends) == Placement(
        "midup.trainer", ("Trainer", "_get_logps"), "class"
    )


def test_without_a_release_between_or_with_an_end_defining_it_the_ends_place_it(tmp_path):
    ends = [view("new", tmp_path), view("old", tmp_path)]
    assert place(rewritten("_get_logps"), ends) == Placement("midup.trainer", (), "module")

    def never(module, method):
        raise AssertionError("the ends define it: no other release is opened")

    ends = [view("new", tmp_path, never), view("old", tmp_path, never)]
    placed = place(rewritten("_get_logps_and_entropies"), ends)
    assert placed == Placement("midup.trainer", ("Trainer", "_get_logps_and_entropies"), "class")


def test_a_method_gone_from_the_newest_release_is_placed_where_the_lowest_has_it(tmp_path):
    def never(module, method):
        raise AssertionError("an end defines it: no other release is opened")

    ends = [view("new", tmp_path, never), view("mid", tmp_path, never)]
    assert place(rewritten("_get_logps"), ends) == Placement(
        "midup.trainer", ("Trainer", "_get_logps"), "class"
    )


def test_probes_are_the_newest_of_each_minor_series_between_the_ends_spread_evenly():
    labels = ["0.1.0", "0.1.1", "0.2.0", "0.3.0", "0.3.2", "0.4.0"]
    assert _probes(labels, {"0.1.0", "0.4.0"}) == ["0.3.2", "0.2.0", "0.1.1"]
    many = [f"0.{minor}.0" for minor in range(100)]
    probes = _probes(many, {"0.0.0", "0.99.0"})
    assert len(probes) == MAX_PROBES and probes[0] == "0.98.0" and probes[-1] == "0.1.0"
