"""The command table: every command is one module with `add_arguments` and `run`, listed by
`canary --help`, and only the command that runs is imported."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import pytest
from paths import ROOT

from canary.cli.main import COMMANDS, build_parser


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_each_command_is_a_module_with_its_options_and_its_run(name):
    module = importlib.import_module(COMMANDS[name].module)
    assert callable(module.add_arguments) and callable(module.run)
    assert module.__doc__.startswith(f"`canary {name}")


def test_help_lists_every_command_with_its_summary():
    words = " ".join(build_parser().format_help().split())  # wrapped lines joined again
    for name, command in COMMANDS.items():
        assert f"{name} {command.summary}" in words


def test_only_the_command_that_runs_is_imported(tmp_path):
    probe = (
        "import json, sys\n"
        "from canary.cli.main import main\n"
        "main(['cache', 'info'])\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('canary.'))))\n"
    )
    env = {"PYTHONPATH": str(ROOT), "CANARY_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True
    )
    loaded = json.loads(done.stdout.splitlines()[-1])
    assert "canary.cli.cache" in loaded
    others = {c.module for n, c in COMMANDS.items() if n != "cache"}
    assert [m for m in loaded if m in others or m.startswith("canary.engine")] == []


def test_a_command_runs_the_cycle_collector_seldom():
    # reference counting frees a command's garbage: the default 700-container threshold ran
    # the collector 1,100 times (1.8 s of CPU) in a re-judge of the shipped matrices
    import gc

    from canary.cli.main import main

    before = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        with pytest.raises(SystemExit):
            main(["--version"])
        assert gc.get_threshold() == (20_000, 20, 20)
    finally:
        gc.set_threshold(*before)
