"""Scan places a name where a release defines it, also when only a lazy module serves it
(transformers 5's `define_import_structure` over its model folders): the engine's own lookup
finds the defining module, so the proposal is a check on the class there, not on the root."""

from __future__ import annotations

import pytest
from paths import FIXTURES

from canary.analysis import ModuleCache
from canary.cache.store import Cache
from canary.engine.judge import VersionRun
from canary.matrix.model import load_matrix
from canary.matrix.targets import Target
from canary.scan.upstream.places import Places
from canary.scan.upstream.view import Definition, UpstreamView
from canary.sources.local import LocalTree
from canary.sources.stats import Stats

TREE = FIXTURES / "semantics"
LAZY = "semup.lazy5"


@pytest.fixture
def view(tmp_path) -> UpstreamView:
    path = tmp_path / "semup.yaml"
    path.write_text("upstream: semup\nchecks: []\n", encoding="utf-8")
    matrix = load_matrix(path, checks_required=False)
    run = VersionRun(matrix, Target.parse("3.0.0"), LocalTree(TREE, "semup"), ModuleCache())
    return UpstreamView(run.module, "3.0.0", run.hierarchy.namespace)


def test_a_class_exported_lazily_from_a_model_folder_is_placed_where_it_is_defined(view):
    found = view.resolve((*LAZY.split("."), "AlphaModel", "forward"))
    model = Definition(f"{LAZY}.models.alpha.modeling_alpha", "AlphaModel", "class")
    assert found == (model, ("forward",))
    assert view.method_owner(model, "forward") == model


@pytest.mark.parametrize(
    "name",
    [
        "AlphaHelper",  # defined, but not in its module's __all__: not exported
        "ModularOnly",  # in a modular_ file, which the folder's structure leaves out
        "Nowhere",
    ],
)
def test_what_the_lazy_module_does_not_export_stays_unplaced(view, name):
    assert view.resolve((*LAZY.split("."), name)) == (Definition(LAZY, "", "module"), (name,))


def test_where_a_lazy_module_serves_a_name_from_is_remembered_per_release(view, tmp_path):
    cache = Cache(tmp_path / "cache", Stats())
    first = Places(cache, "semup/semup-3.0.0.whl/sha256:00")
    searched = UpstreamView(view.module, "3.0.0", places=first.known)
    model = searched.resolve((*LAZY.split("."), "AlphaModel"))
    assert searched.resolve((*LAZY.split("."), "Nowhere"))[1] == ("Nowhere",)
    first.keep()
    again = Places(cache, "semup/semup-3.0.0.whl/sha256:00")
    assert again.known == {f"{LAZY}:AlphaModel": model[0].module, f"{LAZY}:Nowhere": ""}
    read: list[str] = []

    def lookup(name: str):
        read.append(name)
        return view.module(name)

    remembered = UpstreamView(lookup, "3.0.0", places=again.known)
    assert remembered.resolve((*LAZY.split("."), "AlphaModel")) == model
    assert remembered.resolve((*LAZY.split("."), "Nowhere"))[1] == ("Nowhere",)
    assert f"{LAZY}.models.alpha.configuration_alpha" not in read  # no folder searched
    assert Places(cache, "semup/semup-3.0.1.whl/sha256:11").known == {}
