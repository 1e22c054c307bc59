"""Where a missing name went (canary.engine.whereabouts), searched cheapest first: the file list,
then what is already read and where it points, and whole modules only when both fail, nearest
first and within a budget. A tree that records its reads shows what each search cost."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from canary.analysis import ModuleCache
from canary.engine import whereabouts
from canary.engine.became import explain
from canary.engine.judge import VersionRun
from canary.engine.outcomes import Place
from canary.matrix.model import Matrix, load_matrix
from canary.matrix.targets import Target
from canary.sources.local import LocalTree
from canary.sources.tree import SourceKind

#: modules that sort before the right one and define nothing of interest: a search in path
#: order would read them all first
FILLER = {f"up/aaa/filler_{i:02}.py": f"def other_{i}():\n    return {i}\n" for i in range(30)}


class Recording:
    """A LocalTree that records every file read."""

    kind = SourceKind.LOCAL

    def __init__(self, tree: LocalTree) -> None:
        self.tree = tree
        self.reads: list[str] = []

    def read(self, path: str) -> bytes | None:
        self.reads.append(path)
        return self.tree.read(path)

    def files(self) -> list[str] | None:
        return self.tree.files()

    def read_meta(self, path: str) -> bytes | None:
        return self.tree.read_meta(path)

    def prefetch(self, paths: Iterable[str]) -> None:
        pass


def _matrix(tmp_path: Path, check: str) -> Matrix:
    path = tmp_path / "up.yaml"
    path.write_text(f"upstream: up\nchecks:\n  - {check}\n", encoding="utf-8")
    return load_matrix(path)


def _run(tmp_path: Path, matrix: Matrix, version: str, files: dict[str, str]) -> VersionRun:
    root = tmp_path / version
    for name, text in {"up/__init__.py": "", **FILLER, **files}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    tree = Recording(LocalTree(root, "up", ""))
    return VersionRun(matrix, Target.parse(version), tree, ModuleCache())


def _reads(run: VersionRun) -> list[str]:
    assert isinstance(run.tree, Recording)
    return run.tree.reads


def _told(matrix: Matrix, old: VersionRun, new: VersionRun) -> Place:
    contract = matrix.checks[0].contract
    assert contract is not None
    became = explain(contract, old, new).became
    assert became is not None and became.what == "definition"
    assert len(became.places) == 1
    return became.places[0]


def test_a_name_is_sought_where_the_last_good_release_imported_it_from(tmp_path):
    matrix = _matrix(tmp_path, "{id: a, module: up.users.gfpo, symbol: helper}")
    util = "import os\n\n\ndef helper():\n    return os.sep\n"
    old = _run(
        tmp_path,
        matrix,
        "1.0",
        {"up/users/gfpo.py": "from up.zz.util import helper\n", "up/zz/util.py": util},
    )
    new = _run(tmp_path, matrix, "2.0", {"up/zz/util.py": util})  # gfpo.py is gone
    place = _told(matrix, old, new)
    assert (place.text, place.path, place.line) == ("up.zz.util.helper", "up/zz/util.py", 4)
    assert not any(path.startswith("up/aaa/") for path in _reads(new))


def test_a_name_is_followed_from_the_package_that_re_exports_it(tmp_path):
    matrix = _matrix(tmp_path, "{id: a, module: up.mapping, function: get_up_model}")
    defined = "def get_up_model(model):\n    return model\n"
    old = _run(tmp_path, matrix, "1.0", {"up/mapping.py": defined})
    new = _run(
        tmp_path,
        matrix,
        "2.0",
        {
            "up/__init__.py": "from .zz.func import get_up_model\n",
            "up/mapping.py": "MAPPING = {}\n",
            "up/zz/func.py": defined,
            # a short part of the name is no file name like it: `model` is not read first
            **{f"up/t{i}/model.py": "class Model:\n    pass\n" for i in range(5)},
        },
    )
    place = _told(matrix, old, new)
    assert (place.text, place.path) == ("up.zz.func.get_up_model", "up/zz/func.py")
    assert not any(path.endswith("/model.py") or "/aaa/" in path for path in _reads(new))


def test_whole_modules_are_read_last_nearest_first_within_the_budget(tmp_path, monkeypatch):
    monkeypatch.setattr(whereabouts, "MAX_FALLBACK_BYTES", 60)
    matrix = _matrix(tmp_path, "{id: a, module: up.zz.mod, class: Gone}")
    old = _run(tmp_path, matrix, "1.0", {"up/zz/mod.py": "class Gone:\n    pass\n"})
    near = {f"up/zz/near_{i}.py": f"X{i} = {i}\n" for i in range(3)}
    new = _run(tmp_path, matrix, "2.0", {"up/zz/mod.py": "KEPT = 1\n", **near})
    contract = matrix.checks[0].contract
    assert contract is not None
    became = explain(contract, old, new).became
    assert became is not None and became.places == ()
    fallback = [p for p in _reads(new) if p.startswith(("up/zz/near_", "up/aaa/"))]
    assert fallback[:3] == sorted(near)  # the check module's folder before the rest
    assert len(fallback) < len(near) + len(FILLER)  # the budget ended it
    assert became.searched >= 3


def test_a_name_found_only_by_reading_whole_modules_is_still_found(tmp_path):
    matrix = _matrix(tmp_path, "{id: a, module: up.zz.mod, class: Moved}")
    old = _run(tmp_path, matrix, "1.0", {"up/zz/mod.py": "class Moved:\n    pass\n"})
    new = _run(
        tmp_path, matrix, "2.0", {"up/zz/mod.py": "", "up/yy/x.py": "class Moved:\n    pass\n"}
    )
    place = _told(matrix, old, new)
    assert (place.text, place.path) == ("up.yy.x.Moved", "up/yy/x.py")
