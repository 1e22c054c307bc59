"""Run a command with its stderr on a real pseudo-terminal (or a pipe), for progress lines."""

from __future__ import annotations

import os
import pty
import subprocess


def run_with_stderr(command: list[str], env: dict[str, str], tty: bool) -> tuple[str, str]:
    """(stdout, stderr) of `command`; stderr is a pseudo-terminal when `tty`."""
    if not tty:
        done = subprocess.run(command, capture_output=True, text=True, env=env)
        return done.stdout, done.stderr
    master, slave = pty.openpty()
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=slave, env=env) as proc:
        os.close(slave)
        err = b""
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            err += chunk
        out = proc.stdout.read().decode()
    os.close(master)
    return out, err.decode()
