"""Verdicts reused across releases by the module contents their judging read
(canary.engine.reuse): reused on the same contents, judged again on any change to a file the
judging read, and never reused when the judging read what no file's content covers."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field
from pathlib import Path

from canary.analysis import ModuleCache
from canary.engine.judge import VersionRun
from canary.engine.outcomes import Result
from canary.engine.reuse import VerdictReuse
from canary.matrix.model import Matrix, load_matrix
from canary.matrix.targets import Target


@dataclass
class DictTree:
    """A release made of `files` (path -> source), listing them when asked."""

    files_: dict[str, str]
    kind: str = "index"
    reads: list[str] = field(default_factory=list)

    def read(self, path: str) -> bytes | None:
        self.reads.append(path)
        text = self.files_.get(path)
        return None if text is None else textwrap.dedent(text).encode()

    def read_meta(self, path: str) -> bytes | None:
        return None

    def files(self) -> list[str]:
        return sorted(self.files_)

    def prefetch(self, paths) -> None:
        pass


def matrix(tmp_path: Path, checks: str) -> Matrix:
    path = tmp_path / "up.yaml"
    path.write_text("upstream: up\nchecks:\n" + textwrap.indent(checks.strip(), "  ") + "\n")
    return load_matrix(path)


def judge(
    up: Matrix, reuse: VerdictReuse, cache: ModuleCache, version: str, files: dict[str, str]
) -> list[Result]:
    run = VersionRun(up, Target.parse(version), DictTree(files), cache, reuse=reuse)
    return [run.result(check) for check in up.checks]


TRAINER = """
    class Trainer:
        def train(self, model, steps):
            return model
"""


def test_same_contents_reuse_the_verdict_and_its_detail(tmp_path):
    up = matrix(
        tmp_path,
        "- {id: a, module: up.trainer, function: Trainer.train, params: [model, epochs]}\n"
        "- {id: b, module: up.trainer, class: Trainer, methods: [train]}",
    )
    reuse, cache = VerdictReuse(), ModuleCache()
    files = {"up/__init__.py": "", "up/trainer.py": TRAINER}
    first = judge(up, reuse, cache, "1.0", files)
    assert (reuse.judged, reuse.reused) == (2, 0)
    # another release: up/__init__.py changed, but no check reads it
    second = judge(up, reuse, cache, "1.1", {**files, "up/__init__.py": "X = 1\n"})
    assert (reuse.judged, reuse.reused) == (2, 2)
    assert [(r.status, r.detail) for r in second] == [(r.status, r.detail) for r in first]
    assert first[0].detail == "params of Trainer.train are (self, model, steps); missing epochs"


def test_a_changed_file_is_judged_again(tmp_path):
    up = matrix(tmp_path, "- {id: a, module: up.trainer, function: Trainer.train, params: [steps]}")
    reuse, cache = VerdictReuse(), ModuleCache()
    files = {"up/__init__.py": "", "up/trainer.py": TRAINER}
    assert judge(up, reuse, cache, "1.0", files)[0].status.value == "pass"
    renamed = TRAINER.replace("steps", "max_steps")
    later = judge(up, reuse, cache, "1.1", {**files, "up/trainer.py": renamed})
    assert (reuse.judged, reuse.reused) == (2, 0)
    assert later[0].status.value == "fail"
    # back to the first contents: the first verdict again, without judging
    assert judge(up, reuse, cache, "1.2", files)[0].status.value == "pass"
    assert (reuse.judged, reuse.reused) == (2, 1)


def test_a_base_in_another_module_is_part_of_the_key(tmp_path):
    up = matrix(tmp_path, "- {id: a, module: up.sft, class: SFTTrainer, methods: [train]}")
    reuse, cache = VerdictReuse(), ModuleCache()
    files = {
        "up/__init__.py": "",
        "up/trainer.py": TRAINER,
        "up/sft.py": "from up.trainer import Trainer\n\nclass SFTTrainer(Trainer):\n    pass\n",
    }
    assert judge(up, reuse, cache, "1.0", files)[0].status.value == "pass"
    assert judge(up, reuse, cache, "1.1", files)[0].status.value == "pass"
    assert (reuse.judged, reuse.reused) == (1, 1)
    # sft.py unchanged, the base's module changed: judged again
    gone = {**files, "up/trainer.py": "class Trainer:\n    pass\n"}
    assert judge(up, reuse, cache, "1.2", gone)[0].status.value == "fail"
    assert (reuse.judged, reuse.reused) == (2, 1)


def test_a_judging_that_read_the_module_list_is_never_reused(tmp_path):
    # a missing module's "did you mean" hint reads the release's module list, which no
    # file's content covers (a module added elsewhere changes the hint)
    up = matrix(tmp_path, "- {id: a, module: up.trainers, class: Trainer}")
    reuse, cache = VerdictReuse(), ModuleCache()
    files = {"up/__init__.py": "", "up/trainer.py": TRAINER}
    first = judge(up, reuse, cache, "1.0", files)
    second = judge(up, reuse, cache, "1.1", {**files, "up/trainers_old.py": ""})
    assert (reuse.judged, reuse.reused) == (2, 0)
    assert first[0].detail == "module up.trainers not found (did you mean up.trainer?)"
    assert "up.trainers_old" in second[0].detail


def test_a_check_binding_keywords_is_reused_on_its_own_version_only(tmp_path):
    # a renaming decorator accepts an old keyword up to a version: the version is in the key
    check = "- {id: a, module: up.trainer, function: Trainer.train, accepts: [model]}"
    up = matrix(tmp_path, check)
    reuse, cache = VerdictReuse(), ModuleCache()
    files = {"up/__init__.py": "", "up/trainer.py": TRAINER}
    judge(up, reuse, cache, "1.0", files)
    judge(up, reuse, cache, "1.1", files)
    assert (reuse.judged, reuse.reused) == (2, 0)
    judge(up, reuse, cache, "1.1", files)
    assert (reuse.judged, reuse.reused) == (2, 1)


def test_without_reuse_every_release_is_judged(tmp_path):
    up = matrix(tmp_path, "- {id: a, module: up.trainer, class: Trainer, methods: [train]}")
    cache = ModuleCache()
    files = {"up/__init__.py": "", "up/trainer.py": TRAINER}
    for version in ("1.0", "1.1"):
        tree = DictTree(files)
        run = VersionRun(up, Target.parse(version), tree, cache)
        assert run.result(up.checks[0]).status.value == "pass"
        assert "up/trainer.py" in tree.reads


def test_a_hint_from_the_module_list_an_earlier_check_read_is_not_reused(tmp_path):
    # the first check's hint reads the module list; the second's finds its hint among the
    # names the first one read: it read the list all the same, and is not reused
    up = matrix(
        tmp_path,
        "- {id: a, module: up.old.trainer, class: Trainer}\n"
        "- {id: b, module: up.older.trainer, class: Trainer}",
    )
    reuse, cache = VerdictReuse(), ModuleCache()
    files = {"up/__init__.py": "", "up/a/__init__.py": "", "up/a/trainer.py": TRAINER}
    first = judge(up, reuse, cache, "1.0", files)
    moved = {**files, "up/b/__init__.py": "", "up/b/trainer.py": TRAINER}
    second = judge(up, reuse, cache, "1.1", moved)
    assert first[1].detail == "module up.older.trainer not found (did you mean up.a.trainer?)"
    assert second[1].detail == (
        "module up.older.trainer not found (did you mean up.a.trainer, up.b.trainer?)"
    )
    assert reuse.reused == 0
