"""What a GitHub runner gives a step and takes back: inputs, outputs, the job summary.

Inputs arrive as `INPUT_<NAME>` variables (the convention of JavaScript actions; action.yml
passes them so), outputs go to the file `GITHUB_OUTPUT` names, the summary to
`GITHUB_STEP_SUMMARY`. Outside a runner the same calls print, so a step can be run by hand.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

from canary.errors import CanaryError, ExitCode
from canary.reports import workflow
from canary.safety.untrusted import showable


class ActionError(CanaryError):
    """A step cannot do its job: reported as a workflow error, the step exits non-zero."""

    def __init__(self, message: str, status: int = ExitCode.USAGE_ERROR) -> None:
        super().__init__(message)
        self.exit_code = status


def text_input(name: str, default: str = "") -> str:
    value = os.environ.get(f"INPUT_{name.upper().replace('-', '_')}", "").strip()
    return value or default


def flag_input(name: str, default: bool) -> bool:
    value = text_input(name, "true" if default else "false").lower()
    if value not in ("true", "false"):
        raise ActionError(f"input {name}: expected true or false, got {value!r}")
    return value == "true"


def environment(name: str) -> str:
    value = os.environ.get(name, "")
    if not value:
        raise ActionError(f"{name} is not set; this step runs inside a GitHub Actions job")
    return value


def set_output(name: str, value: str) -> None:
    """One step output; a multi-line value is written with a fresh heredoc delimiter."""
    path = os.environ.get("GITHUB_OUTPUT")
    if not path:
        print(f"output {name}={value}")
        return
    if "\n" in value:
        delimiter = f"canary_{uuid.uuid4().hex}"
        line = f"{name}<<{delimiter}\n{value}\n{delimiter}\n"
    else:
        line = f"{name}={value}\n"
    with open(path, "a", encoding="utf-8") as out:
        out.write(line)


def add_summary(markdown: str) -> None:
    path = os.environ.get("GITHUB_STEP_SUMMARY")
    if not path:
        sys.stdout.write(markdown)
        return
    with open(path, "a", encoding="utf-8") as out:
        out.write(markdown if markdown.endswith("\n") else markdown + "\n")


def work_dir() -> Path:
    """Where the steps of one job keep their files: under the runner's temp, outside the
    checkout, so nothing of theirs can end up in the lock pull request."""
    base = os.environ.get("RUNNER_TEMP") or tempfile.gettempdir()
    folder = Path(base) / "canary-action"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def command(name: str, message: str) -> None:
    """A workflow command (`::error::`, `::notice::`) on stdout, where the runner reads them."""
    print(workflow.command(name, message), flush=True)


def echo(text: str) -> None:
    """Text canary did not write (what a command printed, quoting upstream or index text) in
    the log: each line made showable, with the runner's commands stopped around them."""
    lines = [showable(line) for line in text.splitlines()]
    for line in workflow.paused(lines):
        print(line)
    sys.stdout.flush()


@contextlib.contextmanager
def quoted_stderr() -> Iterator[None]:
    """What canary says on stderr meanwhile (notes quoting the index) goes to `echo`."""
    said = io.StringIO()
    try:
        with contextlib.redirect_stderr(said):
            yield
    finally:
        echo(said.getvalue())
