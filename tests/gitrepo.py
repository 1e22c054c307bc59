"""A small upstream git repository built for a test, served by bench.githost's loopback GitHub
(no test has its own copy of an upstream's history; real mirrors are the bench's)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from paths import ROOT


def githost_module():
    """bench/githost.py, loaded by path (bench/ is a folder of the project, not a package
    pytest should import from the root)."""
    name = "canary_bench_githost"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / "githost.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def need_git() -> None:
    if shutil.which("git") is None:
        pytest.skip("needs git on PATH (install git: apt-get install git)")


class Repo:
    """A work tree whose commits get fixed dates one day apart, from 2026-07-01."""

    def __init__(self, path: Path) -> None:
        need_git()
        self.path = path
        self.day = 0
        path.mkdir(parents=True, exist_ok=True)
        self.run("init", "-q", "-b", "main")

    def run(self, *args: str) -> str:
        env = {
            **os.environ,
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@example.invalid",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@example.invalid",
            "GIT_AUTHOR_DATE": f"2026-07-{self.day + 1:02d}T12:00:00Z",
            "GIT_COMMITTER_DATE": f"2026-07-{self.day + 1:02d}T12:00:00Z",
        }
        done = subprocess.run(
            ["git", "-C", str(self.path), *args],
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
        return done.stdout.strip()

    def commit(self, message: str, files: dict[str, str], tag: str | None = None) -> str:
        for name, text in files.items():
            target = self.path / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        self.run("add", "-A")
        self.run("commit", "-q", "--allow-empty", "-m", message)
        self.day += 1
        if tag:
            self.run("tag", tag)
        return self.run("rev-parse", "HEAD")

    @property
    def git_dir(self) -> Path:
        return self.path / ".git"
