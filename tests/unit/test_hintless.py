"""Judging for a status alone (scan bisecting a range): the same statuses without the "did you
mean" hints that list a module's names, and failures so judged never shown as a user's."""

from __future__ import annotations

import pytest
from test_reuse import DictTree, matrix

from canary.analysis import ModuleCache
from canary.analysis.namespace import Namespace
from canary.cache.stats import Stats
from canary.cache.store import Cache
from canary.engine import contracts
from canary.engine.judge import VersionRun
from canary.engine.remembered import Verdicts
from canary.engine.reuse import VerdictReuse
from canary.matrix.targets import Target

FILES = {
    "up/__init__.py": "",
    "up/trainer.py": """
        class Trainer:
            def train(self, model):
                return model

        def helper():
            pass
    """,
}
CHECKS = """
- {id: cls, module: up.trainer, class: Trainr}
- {id: meth, module: up.trainer, class: Trainer, methods: [trian]}
- {id: mod, module: up.trainr, symbol: Trainer}
- {id: fn, module: up.trainer, function: helpr}
- {id: ok, module: up.trainer, function: Trainer.train, params: [model]}
"""
HINTS = {
    "cls": "(similar: Trainer)",
    "meth": "(has train)",
    "mod": "(did you mean up.trainer?)",
    "fn": "(similar: helper)",
}


def _run(up, verdicts=None, reuse=None) -> VersionRun:
    return VersionRun(up, Target.parse("1.0"), DictTree(FILES), ModuleCache(), verdicts, reuse)


def test_statuses_alone_are_the_same_and_no_near_name_is_sought(tmp_path, monkeypatch):
    up = matrix(tmp_path, CHECKS)
    full = {c.id: _run(up).judge(c) for c in up.checks}
    for check_id, hint in HINTS.items():
        assert hint in full[check_id][1]

    def refuse(*args, **kwargs):
        raise AssertionError("a hint was sought")

    monkeypatch.setattr(contracts, "close_matches", refuse)
    monkeypatch.setattr(Namespace, "similar_modules", refuse)
    monkeypatch.setattr(contracts.Hierarchy, "all_methods", refuse)
    bare = {c.id: _run(up).judge(c, hints=False) for c in up.checks}
    assert {k: s for k, (s, _) in bare.items()} == {k: s for k, (s, _) in full.items()}
    assert bare["ok"] == full["ok"]
    with pytest.raises(AssertionError, match="a hint was sought"):
        _run(up).judge(up.checks[0])  # outside the status-only judging, hints come back


def test_failures_judged_without_hints_are_remembered_apart(tmp_path):
    """Scan remembers the statuses it bisected, so a second scan keeps the release closed;
    `canary check` on the same release file judges the failures again, with their hints."""
    up = matrix(tmp_path, CHECKS)
    cache = Cache(tmp_path / "cache", Stats())
    version = Target.parse("1.0").version
    assert version is not None
    verdicts = Verdicts(cache, "up/1.0")
    run = _run(up, verdicts)
    bare = [run.judge(c, hints=False) for c in up.checks]
    verdicts.save()
    again = Verdicts(cache, "up/1.0")
    assert again.covers(up.checks, version, hints=False)
    assert not again.covers(up.checks, version)  # the failures' details are not whole
    assert [_run(up, again).judge(c, hints=False) for c in up.checks] == bare
    shown = [_run(up, again).judge(c) for c in up.checks]
    assert shown == [_run(up).judge(c) for c in up.checks]
    assert HINTS["cls"] in shown[0][1]


def test_a_failure_judged_without_hints_is_not_reused_for_one_with_them(tmp_path):
    up = matrix(tmp_path, CHECKS)
    reuse = VerdictReuse()
    [_run(up, reuse=reuse).judge(c, hints=False) for c in up.checks]
    shown = [_run(up, reuse=reuse).judge(c) for c in up.checks]
    assert shown == [_run(up).judge(c) for c in up.checks]
    assert HINTS["fn"] in shown[3][1]
