"""`canary check` through every real part: a fake index, a range-capable file host and a fake
GitHub, all on loopback; releases by range from wheels, `main` and a file-less release from
GitHub, gated by the version the branch declares."""

from __future__ import annotations

import hashlib
import json
import os

import pytest
from servers import make_wheel, serving

from canary.cli.main import main
from docgen.jsonfields import undocumented

JSON_TYPE = "application/vnd.pypi.simple.v1+json"

MATRIX = """\
upstream: fakeup
github: owner/fakeup
src: src
versions:
  releases: ">=1.0"
  include: [main]
checks:
  - {id: run, module: fakeup.core, function: run, params: [model]}
  - {id: new-api, module: fakeup.core, function: run, params: [model, batch], since: "2.0.0.dev0"}
  - {id: legacy, module: fakeup.core, symbol: LEGACY, until: "2.0.0.dev0"}
"""

RELEASE = {
    "fakeup/__init__.py": b"",
    "fakeup/core.py": b"LEGACY = 1\n\ndef run(model):\n    return model\n",
}
MAIN = {  # the repository at `main`: src layout, version in a VERSION file pyproject reads
    "pyproject.toml": b'[project]\nname = "fakeup"\ndynamic = ["version"]\n'
    b'[tool.setuptools.dynamic]\nversion = {file = "VERSION"}\n',
    "VERSION": b"2.0.0.dev0\n",
    "src/fakeup/__init__.py": b"",
    "src/fakeup/core.py": b"def run(model, batch):\n    return model\n",
}
TAGGED = {  # v1.1.0 has no files on the index: read from its tag
    "src/fakeup/__init__.py": b"",
    "src/fakeup/core.py": b"LEGACY = 2\n\ndef run(model):\n    return model\n",
}


@pytest.fixture
def upstream(tmp_path, monkeypatch):
    with serving() as server:
        wheel = make_wheel("fakeup", "1.0.0", RELEASE)
        server.add("/files/fakeup-1.0.0-py3-none-any.whl", wheel)
        page = {
            "meta": {"api-version": "1.1"},
            "name": "fakeup",
            "versions": ["1.1.0", "1.0.0"],
            "files": [
                {
                    "filename": "fakeup-1.0.0-py3-none-any.whl",
                    "url": "../../files/fakeup-1.0.0-py3-none-any.whl",
                    "hashes": {"sha256": hashlib.sha256(wheel).hexdigest()},
                    "size": len(wheel),
                }
            ],
        }
        server.add("/simple/fakeup/", json.dumps(page).encode(), content_type=JSON_TYPE)
        for ref, files in (("main", MAIN), ("v1.1.0", TAGGED)):
            for path, data in files.items():
                server.add(f"/raw/owner/fakeup/{ref}/{path}", data)
            server.add(f"/api/repos/owner/fakeup/commits/{ref}", b"0" * 40)
        monkeypatch.setenv("CANARY_INDEX_URL", server.url + "/simple/")
        monkeypatch.setenv("CANARY_GITHUB_RAW_URL", server.url + "/raw")
        monkeypatch.setenv("CANARY_GITHUB_API_URL", server.url + "/api")
        monkeypatch.setenv("CANARY_CACHE_DIR", str(tmp_path / "cache"))
        monkeypatch.delenv("CANARY_OFFLINE", raising=False)
        (tmp_path / "fakeup.yaml").write_text(MATRIX)
        yield server


def run(tmp_path, *args: str) -> tuple[int, dict]:
    out = tmp_path / "out.json"
    code = main(
        ["check", str(tmp_path / "fakeup.yaml"), "--format", "json", "--output", str(out), *args]
    )
    return code, json.loads(out.read_text())


def cells(data: dict) -> dict[tuple[str, str], tuple[str, str]]:
    return {(r["check"], r["version"]): (r["status"], r["source"]) for r in data["results"]}


def test_releases_by_range_main_and_tags_from_github(upstream, tmp_path):
    code, data = run(tmp_path, "--versions", "all")
    assert code == 0, data["results"]
    assert cells(data) == {
        ("run", "1.0.0"): ("pass", "index"),
        ("new-api", "1.0.0"): ("skip", "index"),
        ("legacy", "1.0.0"): ("pass", "index"),
        ("run", "1.1.0"): ("pass", "github"),
        ("new-api", "1.1.0"): ("skip", "github"),
        ("legacy", "1.1.0"): ("pass", "github"),
        ("run", "main"): ("pass", "github"),
        ("new-api", "main"): ("pass", "github"),
        ("legacy", "main"): ("skip", "github"),
    }
    wheel_reads = [r for r in upstream.log if r.path.endswith(".whl")]
    assert wheel_reads and all(r.headers.get("Range", "").startswith("bytes=") for r in wheel_reads)


def test_every_field_a_real_run_writes_is_in_the_json_reference(upstream, tmp_path):
    """The reference's fields come from a sample report; a real run (its `run` fields too)
    writes none the reference lacks."""
    _, data = run(tmp_path, "--versions", "all")
    assert data["run"] and not undocumented(data)


def test_default_selection_never_touches_a_branch(upstream, tmp_path):
    code, data = run(tmp_path)
    assert code == 0
    assert {r["version"] for r in data["results"]} == {"1.0.0", "1.1.0"}
    assert not [r for r in upstream.log if "/main/" in r.path]


def test_offline_after_a_run_answers_from_the_cache_and_misses_are_errors(upstream, tmp_path):
    assert run(tmp_path, "--versions", "1.0.0")[0] == 0
    before = len(upstream.log)
    code, data = run(tmp_path, "--versions", "1.0.0,main", "--offline")
    assert len(upstream.log) == before, "offline made a request"
    assert code == 1
    statuses = cells(data)
    assert statuses[("run", "1.0.0")] == ("pass", "index")
    assert statuses[("run", "main")][0] == "error"
    assert all(
        "offline" in r["detail"]
        for r in data["results"]
        if r["version"] == "main" and r["status"] == "error"
    )


def test_offline_lasts_one_command(upstream, tmp_path):
    run(tmp_path, "--versions", "1.0.0", "--offline")
    assert "CANARY_OFFLINE" not in os.environ


def test_source_github_reads_releases_from_their_tags(upstream, tmp_path):
    upstream.add("/raw/owner/fakeup/v1.0.0/src/fakeup/__init__.py", b"")
    upstream.add("/raw/owner/fakeup/v1.0.0/src/fakeup/core.py", b"def run(data):\n    pass\n")
    upstream.add("/api/repos/owner/fakeup/commits/v1.0.0", b"0" * 40)
    code, data = run(tmp_path, "--versions", "1.0.0", "--source", "github")
    assert code == 1
    assert cells(data)[("run", "1.0.0")] == ("fail", "github")
    assert not [r for r in upstream.log if r.path.endswith(".whl")]


def test_source_index_never_falls_back_to_github(upstream, tmp_path):
    code, data = run(tmp_path, "--versions", "1.1.0,main", "--source", "index")
    assert code == 1
    details = {r["version"]: r["detail"] for r in data["results"] if r["check"] == "run"}
    assert details["1.1.0"] == "fakeup 1.1.0: no readable file on the package index"
    assert details["main"] == "fakeup main: a branch is read from GitHub, and --source is index"
    assert not [r for r in upstream.log if r.path.startswith("/raw/")]


def test_a_src_layout_read_without_src_is_one_error_with_the_fix(upstream, tmp_path, capsys):
    (tmp_path / "fakeup.yaml").write_text(MATRIX.replace("src: src\n", ""))
    code = main(["check", str(tmp_path / "fakeup.yaml"), "--versions", "main"])
    assert code == 1
    assert capsys.readouterr().out == (
        "ERROR fakeup[main] owner/fakeup keeps the package under src/ and the matrix has no "
        "`src:`; set src: src; 3 checks not run\n"
    )


UNVERSIONED = {  # a development branch whose version is written at build time (vLLM's main)
    "pyproject.toml": b'[project]\nname = "fakeup"\ndynamic = ["version"]\n',
    "src/fakeup/__init__.py": b"from fakeup.version import __version__\n",
    "src/fakeup/version.py": b"try:\n    from fakeup._version import __version__\n"
    b'except ImportError:\n    __version__ = "dev"\n',
    "src/fakeup/core.py": b"def run(model, batch):\n    return model\n",
}


def test_a_branch_declaring_no_version_is_newer_than_every_release(upstream, tmp_path):
    """Gated checks on it are judged as on a version after the newest release, not `error`:
    `since` admits it, `until` leaves it out, saying why."""
    for path, data in UNVERSIONED.items():
        upstream.add(f"/raw/owner/fakeup/dev/{path}", data)
    upstream.add("/api/repos/owner/fakeup/commits/dev", b"1" * 40)
    (tmp_path / "fakeup.yaml").write_text(MATRIX.replace("[main]", "[dev]"))
    code, data = run(tmp_path, "--versions", "dev")
    assert code == 0, data["results"]
    on_dev = {r["check"]: (r["status"], r["detail"]) for r in data["results"]}
    assert on_dev["run"][0] == on_dev["new-api"][0] == "pass"
    assert on_dev["legacy"] == (
        "skip",
        "dev declares no version, so counts as newer than every release: outside <2.0.0.dev0",
    )
