"""A warm run imports only what it uses: start-up is most of what a warm `canary check` of one
matrix costs, so the HTTP client, file locks, the parse pool's process machinery, the bounded
regex engine, the wheel and GitHub readers and the renderers of other formats stay unloaded
until something needs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from campaign_upstream import PROJECT, publish
from paths import ROOT
from servers import make_wheel, serving

from canary.cli.main import main

MATRIX = """\
upstream: fakepkg
versions:
  releases: ">=1.0"
checks:
  - {id: run, module: fakepkg.core, function: run, params: [model]}
  - {id: pattern, module: fakepkg.core, matches: ["def run\\\\("]}
  - {id: gone, module: fakepkg.gone}
"""
CORE = b"def run(model):\n    return model\n"
#: modules a warm run answered from remembered verdicts has no use for
UNUSED_WHEN_WARM = (
    "requests",
    "urllib3",
    "canary.sources.http",
    "canary.sources.index",
    "canary.sources.wheel",
    "canary.sources.github",
    "packaging.tags",
    "filelock",
    "multiprocessing",
    "regex",
    "canary.reports.html",
    "canary.reports.junit",
    "canary.scan",
    "canary.init.command",
)
PROBE = """\
import json, sys
from canary.cli.main import main
code = main(sys.argv[1:])
with open({out!r}, "w") as out:
    json.dump({{"code": code, "loaded": sorted(sys.modules)}}, out)
"""


@pytest.fixture
def project(tmp_path, monkeypatch):
    with serving() as server:
        wheel = make_wheel(PROJECT, "1.0", {"fakepkg/__init__.py": b"", "fakepkg/core.py": CORE})
        index_url = publish(server, {f"{PROJECT}-1.0-py3-none-any.whl": wheel})
        monkeypatch.setenv("CANARY_INDEX_URL", index_url)
        monkeypatch.setenv("CANARY_CACHE_DIR", str(tmp_path / "cache"))
        monkeypatch.delenv("CANARY_OFFLINE", raising=False)
        matrix = tmp_path / "fakepkg.yaml"
        matrix.write_text(MATRIX)
        assert main(["lock", str(matrix)]) == 0
        yield matrix


def probe(tmp_path: Path, *argv: str) -> tuple[int, set[str]]:
    """`canary ARGV` in a fresh interpreter: its exit status and every module it loaded."""
    out = tmp_path / "probe.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-c", PROBE.format(out=str(out)), *argv]
    subprocess.run(command, env=env, cwd=tmp_path, check=True, capture_output=True)
    found = json.loads(out.read_text())
    return found["code"], set(found["loaded"])


def test_a_warm_run_loads_no_http_client_lock_pool_or_other_renderer(project, tmp_path):
    assert main(["check", str(project), "-q"]) == 1  # cold: fetches, parses, remembers
    code, loaded = probe(tmp_path, "check", str(project), "-q")
    assert code == 1  # the same verdicts (`gone` fails), answered from the cache
    assert "canary.reports.text" in loaded
    assert [name for name in UNUSED_WHEN_WARM if name in loaded] == []


def test_a_cold_run_loads_what_it_needs(project, tmp_path):
    code, loaded = probe(tmp_path, "check", str(project), "-q", "--format", "junit")
    assert code == 1
    assert {"requests", "canary.sources.http", "regex", "canary.reports.junit"} <= loaded
