"""Writes into trees canary does not own: never through a symbolic link, never outside the
folder named, never half-written (canary/safety/writes.py), and a merge keeps the file's line
ends."""

from __future__ import annotations

import hashlib
import json
import os
import resource
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from adopter import downstream_copy, publish, upstream_index
from commands import scan
from paths import FIXTURES
from servers import make_wheel

from canary.cli.main import main
from canary.init.workflows import PR_WORKFLOW
from canary.sources.index import JSON_TYPE

DOWNSTREAM = FIXTURES / "downstream"
MATRIX = "upstream: trl\nversions:\n  releases: '>=1.0'\nchecks:\n  - id: top\n    module: trl\n"


@pytest.fixture
def index(tmp_path, monkeypatch):
    with upstream_index(monkeypatch, tmp_path / "cache") as server:
        yield server


def outside(tmp_path: Path) -> Path:
    victim = tmp_path / "outside"
    victim.mkdir()
    return victim


def test_init_writes_nothing_through_a_dangling_link_or_a_linked_folder(tmp_path, index, capsys):
    victim = outside(tmp_path)
    repo = downstream_copy(tmp_path / "patchwork")
    (repo / "canary").mkdir()
    (repo / "canary" / "trl.yaml").symlink_to(victim / "x.yaml")  # dangling
    (repo / "canary" / "mine.yaml").write_text(MATRIX)  # so that the workflows are written
    (repo / ".github").symlink_to(victim, target_is_directory=True)
    status = main(["init", str(repo), "--upstream", "trl"])
    out = capsys.readouterr().out
    assert list(victim.iterdir()) == [], out
    assert "canary/trl.yaml: not written: it is a symbolic link" in out
    assert f"{PR_WORKFLOW}: not written: {repo / '.github'} is a symbolic link" in out
    assert status == 2 or "not written" in out


def test_init_neither_waits_on_nor_replaces_a_fifo(tmp_path, index):
    """A FIFO where pyproject.toml and the workflow are: opening one to read waits for a writer
    forever, and a write would have put a file in its place. Both are said and left alone."""
    repo = downstream_copy(tmp_path / "patchwork")
    (repo / "pyproject.toml").unlink(missing_ok=True)
    os.mkfifo(repo / "pyproject.toml")
    (repo / ".github" / "workflows").mkdir(parents=True)
    os.mkfifo(repo / PR_WORKFLOW)
    done = subprocess.run(
        [sys.executable, "-m", "canary", "init", str(repo), "--upstream", "trl"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])},
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "pyproject.toml: not written: it is not a regular file" in done.stdout
    assert f"{PR_WORKFLOW}: not written: it is not a regular file" in done.stdout
    assert stat.S_ISFIFO(os.lstat(repo / "pyproject.toml").st_mode)
    assert stat.S_ISFIFO(os.lstat(repo / PR_WORKFLOW).st_mode)
    assert (repo / "canary" / "trl.lock").is_file()  # the rest is written


def test_init_locks_and_reads_nothing_through_a_linked_folder(tmp_path, index, capsys):
    """A linked matrices folder holding a matrix: its lock would have been written where the
    link leads. A linked workflows folder holding the workflow: it is not read (`kept`)."""
    victim = outside(tmp_path)
    (victim / "trl.yaml").write_text(MATRIX)
    (victim / "canary.yml").write_text("theirs\n")
    repo = downstream_copy(tmp_path / "patchwork")
    (repo / "canary").symlink_to(victim, target_is_directory=True)
    (repo / ".github").mkdir()
    (repo / ".github" / "workflows").symlink_to(victim, target_is_directory=True)
    assert main(["init", str(repo), "--upstream", "trl"]) == 1
    out = capsys.readouterr().out
    assert sorted(p.name for p in victim.iterdir()) == ["canary.yml", "trl.yaml"], out
    assert "canary/: not read: it is a symbolic link" in out
    assert "kept" not in out and "no matrix proposed" not in out


def test_scan_output_refuses_a_linked_file(tmp_path):
    victim = outside(tmp_path)
    folder = tmp_path / "matrices"
    folder.mkdir()
    (folder / "trl.yaml").symlink_to(victim / "new.yaml")  # dangling
    status, _ = scan(str(DOWNSTREAM), ["trl"], str(folder), None)
    assert status == 2
    assert list(victim.iterdir()) == []


def test_lock_refuses_a_linked_lock(tmp_path, index):
    publish(index, ["1.0.0"])
    victim = outside(tmp_path)
    (victim / "precious").write_text("theirs\n")
    (tmp_path / "trl.yaml").write_text(MATRIX)
    (tmp_path / "trl.lock").symlink_to(victim / "precious")
    assert main(["lock", str(tmp_path / "trl.yaml")]) == 2
    assert (victim / "precious").read_text() == "theirs\n"


def _limited(limit: int) -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


@pytest.mark.skipif(not hasattr(resource, "RLIMIT_FSIZE"), reason="needs RLIMIT_FSIZE (POSIX)")
def test_a_lock_cut_off_mid_write_leaves_the_old_one(tmp_path, index):
    """The write is cut off 20 bytes past the old size (a full disk, a file size limit): the
    lock on disk is still the old one, whole, and the command says why it failed."""
    publish(index, ["1.0.0"])
    (tmp_path / "trl.yaml").write_text(MATRIX)
    assert main(["lock", str(tmp_path / "trl.yaml")]) == 0
    old = (tmp_path / "trl.lock").read_bytes()
    publish(index, ["1.0.0", "1.1.0"])
    assert main(["versions", str(tmp_path / "trl.yaml")]) == 0  # the page cached: only the lock
    done = subprocess.run(
        [sys.executable, "-m", "canary", "lock", str(tmp_path / "trl.yaml")],
        preexec_fn=lambda: _limited(len(old) + 20),
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2]), "CANARY_OFFLINE": "1"},
    )
    assert done.returncode == 2, done.stderr
    assert "trl.lock: not written: File too large" in done.stdout + done.stderr
    assert (tmp_path / "trl.lock").read_bytes() == old
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".tmp-")] == []


def test_merge_keeps_a_crlf_matrix_crlf(tmp_path):
    own = b"upstream: trl\r\nversions:\r\n  releases: '>=0.24'\r\nchecks:\r\n"
    own += b"  - id: config\r\n    module: trl\r\n    symbol: GRPOConfig\r\n"
    (tmp_path / "trl.yaml").write_bytes(own)
    status, text = scan(str(DOWNSTREAM), ["trl"], None, str(tmp_path))
    assert status == 0 and "new checks" in text
    merged = (tmp_path / "trl.yaml").read_bytes()
    assert merged.startswith(own)
    assert merged.count(b"\n") == merged.count(b"\r\n") > own.count(b"\n")
    assert len(yaml.safe_load(merged)["checks"]) > 1


def test_the_alarm_repeats_until_a_person_accepts_the_changed_file(tmp_path, index, capsys):
    """trl 1.0.0's wheel is swapped on the index under the same name. Every refresh raises the
    ALARM and keeps the locked line, until `--accept-changed 1.0.0`."""
    publish(index, ["1.0.0"])
    (tmp_path / "trl.yaml").write_text(MATRIX)
    assert main(["lock", str(tmp_path / "trl.yaml")]) == 0
    locked = (tmp_path / "trl.lock").read_text()
    swapped = make_wheel("trl", "1.0.0", {"trl/__init__.py": b"evil = 1\n"})
    page = json.loads(index.routes["/simple/trl/"].body)
    index.add("/files/trl-1.0.0-py3-none-any.whl", swapped)
    page["files"][0]["hashes"]["sha256"] = hashlib.sha256(swapped).hexdigest()
    page["files"][0]["size"] = len(swapped)
    index.add("/simple/trl/", json.dumps(page).encode(), content_type=JSON_TYPE)
    capsys.readouterr()
    for _ in range(2):
        assert main(["lock", str(tmp_path / "trl.yaml")]) == 1
        out = capsys.readouterr().out
        assert "ALARM: 1.0.0: trl-1.0.0-py3-none-any.whl is not the file that was locked" in out
        assert "`canary lock --accept-changed VERSION` locks it" in out
        assert (tmp_path / "trl.lock").read_text() == locked
    assert main(["lock", str(tmp_path / "trl.yaml"), "--accept-changed", "1.0.0"]) == 0
    assert "1.0.0: the changed file is accepted and locked" in capsys.readouterr().out
    assert hashlib.sha256(swapped).hexdigest() in (tmp_path / "trl.lock").read_text()
    assert main(["lock", str(tmp_path / "trl.yaml")]) == 0
    assert "up to date" in capsys.readouterr().out
