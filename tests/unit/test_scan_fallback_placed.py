"""A use of a name whose import falls back (`try: from up.lora.models import LoRAModel` /
`except ImportError: from up.lora.lora_model import LoRAModel`) is checked where the releases
read have it, when none has the first place (issue 26: zoo's vllm.lora.models, gone before the
range, made `class: LoRAModel` there red on every release)."""

from __future__ import annotations

import textwrap

from canary.analysis import ModuleCache
from canary.analysis.parselock import parse_locked
from canary.engine.judge import VersionRun
from canary.matrix.model import load_matrix
from canary.matrix.targets import Target
from canary.scan.downstream.patterns import scan_tree
from canary.scan.proposing.propose import propose
from canary.scan.upstream.view import UpstreamView
from canary.sources.local import LocalTree

CLIENT = """
try:
    from fallup.lora.{first} import LoRAModel
except ImportError:
    from fallup.lora.lora_model import LoRAModel

def load(path):
    return LoRAModel.from_local_checkpoint
"""


def subjects(tmp_path, first: str) -> set[tuple]:
    tree = tmp_path / "tree" / "fallup" / "lora"
    tree.mkdir(parents=True)
    for folder in (tree.parent, tree):
        (folder / "__init__.py").write_text("")
    (tree / "lora_model.py").write_text(
        "class LoRAModel:\n    def from_local_checkpoint(self):\n        pass\n"
    )
    (tree / "other.py").write_text(
        "class LoRAModel:\n    def from_local_checkpoint(self):\n        pass\n"
    )
    matrix_path = tmp_path / "fallup.yaml"
    matrix_path.write_text("upstream: fallup\nchecks: []\n", encoding="utf-8")
    matrix = load_matrix(matrix_path, checks_required=False)
    run = VersionRun(
        matrix, Target.parse("1.0.0"), LocalTree(tmp_path / "tree", "fallup"), ModuleCache()
    )
    view = UpstreamView(run.module, "1.0.0", run.hierarchy.namespace)
    code = textwrap.dedent(CLIENT.format(first=first))
    scanner = scan_tree(parse_locked(code), "pkg/m.py", frozenset({"fallup"}))
    found = propose(scanner.findings, scanner.modules, {"fallup": [view]})
    return {(p.subject.module, p.subject.name) for checks in found.values() for p in checks}


def test_a_fallback_the_releases_have_is_checked_where_the_first_place_is_on_none(tmp_path):
    found = subjects(tmp_path, "models")
    assert ("fallup.lora.models", "LoRAModel.from_local_checkpoint") not in found
    assert ("fallup.lora.lora_model", "LoRAModel.from_local_checkpoint") in found


def test_a_first_place_the_releases_have_stays_first(tmp_path):
    found = subjects(tmp_path, "other")
    assert ("fallup.lora.other", "LoRAModel.from_local_checkpoint") in found
