"""scan and init on a terminal: the first line says what a first scan reads, then the same
status line as `canary check`, erased at the end; nothing of it in a log."""

from __future__ import annotations

import json
import os
import sys

import pytest
from servers import make_wheel, publish_file, serving
from terminal import run_with_stderr

VERSIONS = ["1.0.0", "1.1.0", "1.2.0"]


@pytest.fixture
def index():
    with serving() as server:
        files = []
        for version in VERSIONS:
            body = b"def api(model):\n    return model\n"
            if version == "1.1.0":
                body += b"def mid(model):\n    return model\n"
            wheel = make_wheel("fakeup", version, {"fakeup/__init__.py": body})
            name = f"fakeup-{version}-py3-none-any.whl"
            published = publish_file(server, f"/files/{name}", wheel)
            url = f"../../files/{name}"
            files.append({"filename": name, "url": url, "hashes": {"sha256": published.sha256}})
        page = {"meta": {"api-version": "1.1"}, "name": "fakeup", "versions": VERSIONS}
        page["files"] = files
        content_type = "application/vnd.pypi.simple.v1+json"
        server.add("/simple/fakeup/", json.dumps(page).encode(), content_type=content_type)
        yield server


def scan_on(tmp_path, index, tty: bool, *command: str) -> tuple[str, str]:
    client = tmp_path / "client"
    (client / "client").mkdir(parents=True, exist_ok=True)
    (client / "pyproject.toml").write_text('[project]\ndependencies = ["fakeup>=1.0"]\n')
    (client / "client" / "__init__.py").write_text("from fakeup import api, mid\napi(model=1)\n")
    env = {
        **os.environ,
        "CANARY_CACHE_DIR": str(tmp_path / "cache"),
        "CANARY_INDEX_URL": index.url + "/simple/",
    }
    env.pop("CANARY_OFFLINE", None)
    argv = [sys.executable, "-m", "canary.cli.main", *command, str(client)]
    if command[0] == "scan":
        argv[-1] = str(client / "client")
    return run_with_stderr([*argv, "--upstream", "fakeup"], env, tty)


def test_a_first_scan_on_a_terminal_says_what_it_reads_then_counts(tmp_path, index):
    out, err = scan_on(tmp_path, index, True, "scan")
    assert "mid" in out
    reading = "canary: scan: reading the files of client"  # from the first second
    assert err.startswith(f"\r{reading}\r{' ' * len(reading)}\rcanary: first scan: reading")
    assert "canary: first scan: reading 2 releases of fakeup from the package index" in err
    assert "\rcanary: reading releases: 2/2, " in err  # the ends of the range
    # then where `mid` starts holding, between them: a count that ends, the release it opens
    # counted beside (the count never grows past its total, as "3/3 versions read" did)
    assert "\rcanary: fakeup: bisecting 1 check: 0/1 placed, " in err
    assert "\rcanary: fakeup: bisecting 1 check: 1/1 placed, 1 more release read, " in err
    assert err.endswith("\r")  # the status line is erased
    _, again = scan_on(tmp_path, index, True, "scan")
    assert "first scan" not in again and "fakeup: bisecting 1 check: 1/1 placed" in again


def test_init_shows_the_same_line(tmp_path, index):
    out, err = scan_on(tmp_path, index, True, "init", "--dry-run")
    assert "would write canary/fakeup.yaml" in out
    assert "canary: first scan: reading 2 releases of fakeup" in err


def test_a_log_gets_no_status_line(tmp_path, index):
    out, err = scan_on(tmp_path, index, False, "scan")
    assert "mid" in out and "placed" not in err and "first scan" not in err
