"""`canary check -k EXPR` against a loopback index: it judges the check x versions pytest's `-k`
would select from the same matrix, reads only the versions they need, and a mistake in the
expression is a usage error naming the column."""

from __future__ import annotations

import json

import pytest
from campaign_upstream import PROJECT, locked_upstream, wheel_name

from canary.cli.main import main

pytest_plugins = ["pytester"]

VERSIONS = ("1.0.0", "1.1.0", "2.0.0")
MATRIX = f"""\
upstream: {PROJECT}
checks:
  - {{id: grpo-trainer, module: {PROJECT}.grpo, class: GRPOTrainer}}
  - {{id: grpo-loss, module: {PROJECT}.grpo, function: compute_loss}}
  - {{id: core-run, module: {PROJECT}.core, function: run, accepts: [eval_strategy]}}
"""


def release(version: str) -> dict[str, bytes]:
    return {
        f"{PROJECT}/__init__.py": f'__version__ = "{version}"\n'.encode(),
        f"{PROJECT}/grpo.py": b"class GRPOTrainer:\n    pass\n\n\ndef compute_loss(x):\n    pass\n",
        f"{PROJECT}/core.py": b"def run(model, eval_strategy=None):\n    return model\n",
    }


@pytest.fixture
def upstream(tmp_path, monkeypatch):
    releases = {version: release(version) for version in VERSIONS}
    with locked_upstream(tmp_path, monkeypatch, releases, MATRIX) as server:
        yield server


def judged(tmp_path, expression: str) -> list[str]:
    """The `CHECK[VERSION]` of every result `canary check -k expression` reports."""
    out = tmp_path / f"k{len(list(tmp_path.glob('k*.json')))}.json"
    assert main(["check", "-k", expression, "--format", "json", "--output", str(out)]) == 0
    return [f"{r['check']}[{r['version']}]" for r in json.loads(out.read_text())["results"]]


def collected(pytester: pytest.Pytester, expression: str) -> list[str]:
    """The `CHECK[VERSION]` of every item `pytest -k expression` collects from the same matrix
    (the working folder's): pytest's own selection, run in this process, as a child pytest ran
    it for ~0.6 s of CPU per expression."""
    run = pytester.inline_run("--collect-only", "-p", "no:cacheprovider", "-k", expression)
    items = run.getcall("pytest_collection_finish").session.items  # what -k kept
    return [item.nodeid.rpartition("::")[2] for item in items]


@pytest.mark.parametrize(
    "expression",
    [
        "grpo",
        f"{PROJECT} and 1.1.0",
        "GRPO and not 2.0",
        "(loss or core) and not 1.0.0",
        "trainer[2.0.0] or run[1.0",
        "matrices and yaml and 1.",
    ],
)
def test_selects_what_pytest_k_selects(upstream, tmp_path, pytester, monkeypatch, expression):
    monkeypatch.chdir(tmp_path)  # the matrix's folder again: pytester moved to its own
    chosen = judged(tmp_path, expression)
    assert chosen
    assert sorted(chosen) == sorted(collected(pytester, expression))


def test_reads_only_the_versions_selected(upstream, tmp_path):
    assert judged(tmp_path, "core and 1.1.0") == ["core-run[1.1.0]"]
    read = {v for v in VERSIONS if upstream.requests_to(f"/files/{wheel_name(v)}")}
    assert read == {"1.1.0"}


@pytest.mark.parametrize(
    ("expression", "told"),
    [
        ("grpo and", "-k 'grpo and': column 9: expected a name, `not` or `(`; got the end"),
        ("(grpo", "-k '(grpo': column 6: expected `)`; got the end"),
        ("grpo & core", "-k 'grpo & core': column 6: unexpected character \"&\""),
        ("grpo core", "-k 'grpo core': column 6: expected `and`, `or` or the end; got 'core'"),
        ("nothing-like-it", "-k selects no check x version of the matrices given"),
        (
            "(" * 5000 + "grpo" + ")" * 5000,
            f"-k '{'(' * 80}...': column 101: nested deeper than 100 levels of `not` and "
            "parentheses",
        ),
        (
            "not " * 5000 + "grpo",
            f"-k '{'not ' * 20}...': column 401: nested deeper than 100 levels of `not` and "
            "parentheses",
        ),
    ],
)
def test_a_bad_expression_is_a_usage_error(upstream, capsys, expression, told):
    capsys.readouterr()
    assert main(["check", "-k", expression]) == 2
    assert capsys.readouterr().err == f"canary: {told}\n"


def test_a_warm_run_names_its_cache_and_how_to_trim_it(upstream, tmp_path, capsys):
    """Judged from remembered verdicts, a warm run hits no cache entry: its summary says where
    the cache is and which command trims it, not "0 cache hits"."""
    out = tmp_path / "warm.md"
    for _ in range(2):
        assert main(["check", "--output", str(out)]) == 0
    said = capsys.readouterr().out
    assert said.splitlines()[-2].endswith(
        f"; cache: {tmp_path / 'cache'} (`canary cache info` sizes it, "
        "`canary cache prune --older-than DAYS` trims it))"
    )
    assert "cache hits" not in said + out.read_text()


def test_nesting_up_to_the_bound_is_read():
    from canary.matrix.keywords import MAX_DEPTH, Keywords

    deepest = Keywords.compile("(" * (MAX_DEPTH - 2) + "not not grpo" + ")" * (MAX_DEPTH - 2))
    assert deepest.holds(lambda part: part == "grpo")
    even = Keywords.compile("not " * MAX_DEPTH + "x").holds(lambda part: part == "x")
    assert even is (MAX_DEPTH % 2 == 0)
