"""`canary explain` reads the upstream's own advice: when a name is gone, what the last release
that had it said of it (a deprecation message, a deprecated decorator, a deprecate_kwarg entry,
a changelog line) comes before canary's guesses, against fixture releases on a loopback index."""

from __future__ import annotations

import json

import pytest
from campaign_upstream import PROJECT, locked_upstream

from canary.cli.main import main

UTILS_OLD = '''import warnings

from .deprecation import deprecate_kwarg, deprecated


def unwrap_model(model):
    warnings.warn(
        "`unwrap_model` will be removed in v2.0.0, "
        "use `fakepkg.models.unwrap` instead.",
        FutureWarning,
    )
    return model


def unwrap_models(models):
    return models


@deprecated("use `fakepkg.models.Loader` instead")
class OldLoader:
    pass


@deprecate_kwarg("eval_strategy", new_name="evaluation_strategy", version="2.0.0")
def train(model, eval_strategy=None, evaluation_strategy=None):
    return model


def prepare(model, padding_free=False):
    """Nothing here says where padding_free went."""
    return model


def unwrap_all(models):
    """Like unwrap_model, which is deprecated: a docstring describes, it does not advise."""
    warnings.warn("`unwrap_everything` is deprecated, use `unwrap_model` instead.")
    return models
'''
UTILS_NEW = """def unwrap_models(models):
    return models


def train(model, evaluation_strategy=None):
    return model


def prepare(model):
    return model
"""
DEPRECATION = """def deprecated(reason):
    return lambda thing: thing


def deprecate_kwarg(old, new_name, version):
    return lambda fn: fn
"""
CHANGELOG = """# Changes

## 1.1.0

- `fakepkg.legacy.collate` is deprecated: use `fakepkg.data.collate`.
"""
MATRIX = f"""\
upstream: {PROJECT}
versions:
  releases: ">=1.0"
checks:
  - {{id: unwrap, module: {PROJECT}.utils, function: unwrap_model}}
  - {{id: loader, module: {PROJECT}.utils, class: OldLoader}}
  - {{id: kwarg, module: {PROJECT}.utils, function: train, params: [eval_strategy]}}
  - {{id: silent, module: {PROJECT}.utils, function: prepare, params: [padding_free]}}
  - {{id: collate, module: {PROJECT}.legacy, symbol: collate}}
"""


def release(version: str) -> dict[str, bytes]:
    new = version.startswith("2.")
    files = {
        f"{PROJECT}/__init__.py": f'__version__ = "{version}"\n'.encode(),
        f"{PROJECT}/utils.py": (UTILS_NEW if new else UTILS_OLD).encode(),
        f"{PROJECT}/deprecation.py": DEPRECATION.encode(),
    }
    if not new:
        files[f"{PROJECT}/legacy.py"] = b"def collate(batch):\n    return batch\n"
        files[f"{PROJECT}/CHANGELOG.md"] = CHANGELOG.encode()
    return files


@pytest.fixture
def upstream(tmp_path, monkeypatch):
    releases = {v: release(v) for v in ("1.0.0", "1.1.0", "2.0.0")}
    with locked_upstream(tmp_path, monkeypatch, releases, MATRIX) as server:
        yield server


def explain(capsys, check: str) -> list[str]:
    assert main(["explain", f"{PROJECT}::{check}"]) == 0
    return capsys.readouterr().out.splitlines()


def test_a_deprecation_message_naming_the_gone_function_comes_before_the_guesses(upstream, capsys):
    """Not the docstring that names it, nor the message naming it as another's replacement."""
    out = explain(capsys, "unwrap")
    assert sum(line.startswith("upstream said:") for line in out) == 1
    said = out.index(
        "upstream said: `unwrap_model` will be removed in v2.0.0, use `fakepkg.models.unwrap` "
        f"instead. ({PROJECT}/utils.py:7, 1.1.0)"
    )
    assert out[said - 1] == "broke in 2.0.0 (held on 1.1.0)"
    assert out[said + 1].startswith("defined nowhere in 2.0.0 (")


def test_a_deprecated_decorator_on_the_gone_class_is_its_advice(upstream, capsys):
    out = explain(capsys, "loader")
    assert (
        f"upstream said: use `fakepkg.models.Loader` instead ({PROJECT}/utils.py:19, 1.1.0)"
    ) in out


def test_a_deprecate_kwarg_entry_names_the_parameter_that_went(upstream, capsys):
    out = explain(capsys, "kwarg")
    said = out.index(
        'upstream said: @deprecate_kwarg("eval_strategy", new_name="evaluation_strategy", '
        f'version="2.0.0") ({PROJECT}/utils.py:24, 1.1.0)'
    )
    assert out[said + 1] == "in 2.0.0 the subject has no new parameter that could be its rename"


def test_a_changelog_line_in_the_package_is_read_too(upstream, capsys):
    out = explain(capsys, "collate")
    assert (
        "upstream said: - `fakepkg.legacy.collate` is deprecated: use `fakepkg.data.collate`. "
        f"({PROJECT}/CHANGELOG.md:5, 1.1.0)"
    ) in out


def test_nothing_said_is_nothing_shown_and_json_carries_the_advice(upstream, capsys):
    assert not any(line.startswith("upstream said:") for line in explain(capsys, "silent"))
    assert main(["explain", f"{PROJECT}::unwrap", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["advice"] == [
        {
            "text": "`unwrap_model` will be removed in v2.0.0, use `fakepkg.models.unwrap` "
            "instead.",
            "path": f"{PROJECT}/utils.py",
            "line": 7,
            "version": "1.1.0",
        }
    ]
