"""A class reached by a module path scan knows only as a pattern (zoo's
`eval(f"{model_location}.{module}")`, the location `f"transformers.models.{t}.modeling_{t}"`):
what a `.replace` seeks in its method's source is proposed on each class of the upstream whose
method holds it, found on the newest release read that has it, else on a release between.

Downstream tests/fixtures/scan_wild (wildlib: the pattern, and its negatives); upstream
tests/fixtures/scan_wild_upstream (`mid` holds the text, `new` changed it).
"""

from __future__ import annotations

import yaml
from commands import canary
from paths import FIXTURES

from canary.analysis import ModuleCache
from canary.engine.judge import VersionRun
from canary.matrix.model import load_matrix
from canary.matrix.targets import Target as Release
from canary.scan.downstream.findings import Role, Use
from canary.scan.downstream.imports import Ref
from canary.scan.downstream.spelled import WILD
from canary.scan.upstream.places import Places
from canary.scan.upstream.releases import Reading
from canary.scan.upstream.wildcards import placed_wild
from canary.scan.writing.emit import Releases
from canary.sources.local import LocalTree
from canary.sources.tree import SourceError

DOWNSTREAM = FIXTURES / "scan_wild"
UPSTREAM = FIXTURES / "scan_wild_upstream"
QWEN = "transformers.models.qwen_x.modeling_qwen_x"


def scanned(monkeypatch, tmp_path) -> tuple[list[dict], str]:
    """`canary scan` of wildlib placed on the `mid` release, offline, in a cache of its own."""
    monkeypatch.setenv("CANARY_OFFLINE", "1")
    monkeypatch.setenv("CANARY_CACHE_DIR", str(tmp_path / "cache"))
    source = str(UPSTREAM / "mid")
    status, text = canary("scan", str(DOWNSTREAM), "--source", source, "--upstream", "transformers")
    assert status == 0
    return yaml.safe_load(text.split("---\n", 1)[1])["checks"], text


def test_a_replace_on_any_class_of_a_pattern_module_is_checked_on_the_class_holding_it(
    monkeypatch, tmp_path
):
    checks, _ = scanned(monkeypatch, tmp_path)
    assert [(c["module"], c["function"], c["contains"]) for c in checks] == [
        (QWEN, "QwenXVisionModel.forward", ["out = layer(x, mask=mask)"])
    ]  # not on llama, whose module holds the text outside any class's forward


def test_probes_texts_no_module_holds_and_unresolved_helpers_are_rewrites_not_placed(
    monkeypatch, tmp_path
):
    _, text = scanned(monkeypatch, tmp_path)
    notes, matrix = text.split("---\n", 1)
    # the `in` probe and the text no module holds (compiler.py): on a pattern of transformers,
    # listed in its matrix
    assert [line for line in matrix.splitlines() if "not placed" in line] == [
        "# 2 source rewrites not placed (of what, scan cannot tell): wildlib/compiler.py:18,21"
    ]
    # a helper defined twice called only from a third file binds nothing; a path whose
    # package is unknown: files that read no upstream, said once among scan's own lines
    assert [line for line in notes.splitlines() if "not placed" in line] == [
        "# 3 source rewrites not placed (of what, nor of which upstream, scan cannot tell):"
        " wildlib/rewrites_a.py:7, wildlib/rewrites_b.py:7, wildlib/wild_negatives.py:11"
    ]
    assert "for layer in self.blocks:" not in text.split("---\n", 1)[1].split("checks:")[1]


def _run(label: str, tmp_path, fault: SourceError | None = None) -> VersionRun:
    path = tmp_path / "transformers.yaml"
    path.write_text("upstream: transformers\nchecks: []\n", encoding="utf-8")
    matrix = load_matrix(path, checks_required=False)
    tree = fault or LocalTree(UPSTREAM / label, "transformers")
    return VersionRun(matrix, Release.parse(label), tree, ModuleCache())


def _sought(text: str) -> Use:
    ref = Ref(("transformers", "models", WILD, f"modeling_{WILD}", WILD, "forward"), 4)
    return Use(Role.CONTAINS, ref, "lib/c.py", 3, (text,))


def test_a_text_the_newest_release_lacks_is_placed_where_a_release_between_has_it(tmp_path):
    opened = []

    def open_run(label: str) -> VersionRun:
        opened.append(label)
        return _run(label, tmp_path)

    reading = Reading(Releases(), [_run("new", tmp_path)], probes=["mid"], opened=open_run)
    found = placed_wild([_sought("out = layer(x, mask=mask)")], {"transformers": reading})
    assert [(f.role, f.ref.parts) for f in found] == [
        (Role.CONTAINS, (*QWEN.split("."), "QwenXVisionModel", "forward"))
    ]
    assert opened == ["mid"]
    newest = placed_wild([_sought("layer(x, mask=mask, size=None)")], {"transformers": reading})
    assert [f.ref.parts[-2:] for f in newest] == [("QwenXVisionModel", "forward")]
    assert opened == ["mid"]  # held by the newest: no release between opened


def test_a_text_no_release_holds_is_a_rewrite_not_placed(tmp_path):
    reading = Reading(
        Releases(),
        [_run("new", tmp_path)],
        probes=["mid"],
        opened=lambda label: _run(label, tmp_path),
    )
    found = placed_wild([_sought("return self.never_there(x)")], {"transformers": reading})
    assert [f.role for f in found] == [Role.UNPLACED]


def test_what_a_release_holds_is_remembered_for_its_file_and_not_searched_again(tmp_path):
    memos: dict[str, Places] = {}
    found_text, absent = "out = layer(x, mask=mask)", "return self.never_there(x)"

    def reading(tree_of) -> Reading:
        runs = [tree_of("new")]
        return Reading(
            Releases(),
            runs,
            probes=["mid"],
            opened=tree_of,
            remembered=lambda label: memos.setdefault(label, Places()),
        )

    first = reading(lambda label: _run(label, tmp_path))
    placed_wild([_sought(found_text), _sought(absent)], {"transformers": first})
    assert sorted(v for memo in memos.values() for v in memo.known.values()) == [
        "",  # the absent text, on each release
        "",
        "",  # the found one, on the newest
        f"{QWEN}:QwenXVisionModel",
    ]
    unreadable = reading(lambda label: _run(label, tmp_path, SourceError("offline")))
    again = placed_wild([_sought(found_text), _sought(absent)], {"transformers": unreadable})
    assert [(f.role, f.ref.parts[-2:]) for f in again] == [
        (Role.CONTAINS, ("QwenXVisionModel", "forward")),
        (Role.UNPLACED, (WILD, "forward")),
    ]
