"""A keyword that stopped doing anything: `accepts` found it named (or renamed by a decorator)
on one release and only absorbed by **kwargs on a later one, as transformers 4.52.0 did to
`num_logits_to_keep` on `LlamaForCausalLM.forward`. Fixture releases on a loopback index; the
report warns from the release that dropped it, and `named:` fails there."""

from __future__ import annotations

import json

import pytest
from campaign_upstream import PROJECT, locked_upstream

from canary.cli.main import main

FORWARD = {
    "1.0.0": "    def forward(self, input_ids, num_logits_to_keep=0):\n        return input_ids\n",
    "1.1.0": (
        '    @deprecate_kwarg("num_logits_to_keep", version="2.0", new_name="logits_to_keep")\n'
        "    def forward(self, input_ids, logits_to_keep=0):\n        return input_ids\n"
    ),
    "2.0.0": (
        "    def forward(self, input_ids, logits_to_keep=0, **kwargs):\n        return input_ids\n"
    ),
    "2.1.0": (
        "    def forward(self, input_ids, logits_to_keep=0, **kwargs):\n        return kwargs\n"
    ),
}
MATRIX = f"""\
upstream: {PROJECT}
versions:
  releases: ">=1.0"
checks:
  - id: keep
    module: {PROJECT}.modeling
    function: CausalLM.forward
    accepts: [input_ids, num_logits_to_keep]
  - id: keep-named
    module: {PROJECT}.modeling
    function: CausalLM.forward
    named: [num_logits_to_keep]
  - id: anything
    module: {PROJECT}.modeling
    function: CausalLM.forward
    accepts: [anything]
    since: "2.0.0"
"""


def release(version: str) -> dict[str, bytes]:
    modeling = (
        "from .utils import deprecate_kwarg\n\n\nclass CausalLM:\n" + FORWARD[version]
    ).encode()
    return {
        f"{PROJECT}/__init__.py": f'__version__ = "{version}"\n'.encode(),
        f"{PROJECT}/utils.py": b"def deprecate_kwarg(*args, **kwargs):\n    return lambda f: f\n",
        f"{PROJECT}/modeling.py": modeling,
    }


@pytest.fixture
def upstream(tmp_path, monkeypatch):
    with locked_upstream(tmp_path, monkeypatch, {v: release(v) for v in FORWARD}, MATRIX) as server:
        yield server


def rows(capsys) -> dict[tuple[str, str], dict]:
    assert main(["check", "--format", "json", "-q"]) == 1  # keep-named fails from 2.0.0
    return {(r["check"], r["version"]): r for r in json.loads(capsys.readouterr().out)["results"]}


def test_accepts_warns_from_the_release_that_left_a_keyword_to_kwargs(upstream, capsys):
    got = rows(capsys)
    assert [got["keep", v]["status"] for v in FORWARD] == ["pass", "pass", "warn", "warn"]
    assert got["keep", "1.1.0"]["detail"] == (
        "num_logits_to_keep renamed to logits_to_keep by @deprecate_kwarg"
    )
    for version in ("2.0.0", "2.1.0"):
        assert got["keep", version]["detail"] == (
            "num_logits_to_keep absorbed by **kwargs; num_logits_to_keep renamed to "
            "logits_to_keep by @deprecate_kwarg on 1.1.0: a value passed for it is likely "
            "ignored now"
        )
        assert (got["keep", version]["last_pass"], got["keep", version]["first_fail"]) == (
            "1.1.0",
            "2.0.0",
        )
    assert "+    def forward(self, input_ids, logits_to_keep=0, **kwargs):" in (
        got["keep", "2.0.0"]["diff"].splitlines()
    )
    # absorbed on every release it is accepted on: no release had it named, nothing to warn of
    assert [got["anything", v]["status"] for v in FORWARD] == ["skip", "skip", "pass", "pass"]
    assert [got["keep-named", v]["status"] for v in FORWARD] == ["pass", "pass", "fail", "fail"]


def test_the_warning_is_not_red(upstream, capsys, tmp_path):
    (tmp_path / "matrices" / f"{PROJECT}.yaml").write_text(MATRIX.split("  - id: keep-named")[0])
    assert main(["check", "-q"]) == 0
    out = capsys.readouterr().out
    assert f"{PROJECT}::keep[2.0.0" in out and " … (matrices/" in out  # the log's line is short
    assert "broke in 2.0.0 (held on 1.1.0)" in out
    assert main(["check", "-v"]) == 0
    assert "likely ignored now" in capsys.readouterr().out  # -v says all of the detail


def test_the_warning_follows_version_order_whatever_order_versions_lists(upstream, capsys):
    """Class 11: `--versions 2.0.0,1.1.0` judged 2.0.0 first and found nothing named before it."""
    for listed in ("1.1.0,2.0.0", "2.0.0,1.1.0"):
        main(["check", "--versions", listed, "--format", "json", "-q", "-k", "keep and not named"])
        got = {r["version"]: r for r in json.loads(capsys.readouterr().out)["results"]}
        assert (got["1.1.0"]["status"], got["2.0.0"]["status"]) == ("pass", "warn"), listed
        assert "renamed to logits_to_keep by @deprecate_kwarg on 1.1.0" in got["2.0.0"]["detail"]
