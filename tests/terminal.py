"""Run a command with its stderr on a real pseudo-terminal (or a pipe), for progress lines, or
its stdout on one of a given size, for the report a terminal gets."""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import termios


def run_with_stderr(command: list[str], env: dict[str, str], tty: bool) -> tuple[str, str]:
    """(stdout, stderr) of `command`; stderr is a pseudo-terminal when `tty`."""
    if not tty:
        done = subprocess.run(command, capture_output=True, text=True, env=env)
        return done.stdout, done.stderr
    master, slave = pty.openpty()
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=slave, env=env) as proc:
        os.close(slave)
        err = _read_all(master)
        out = proc.stdout.read().decode()
    os.close(master)
    return out, err.decode()


def run_on_terminal(command: list[str], env: dict[str, str], rows: int, columns: int) -> str:
    """What `command` prints with its stdout on a pseudo-terminal of `rows` x `columns` (the
    size it asks the terminal for, as a user's shell gives it), its line ends as written."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
    attrs = termios.tcgetattr(slave)
    attrs[1] &= ~termios.ONLCR  # keep "\n" as the program wrote it
    termios.tcsetattr(slave, termios.TCSANOW, attrs)
    with subprocess.Popen(command, stdout=slave, stderr=subprocess.DEVNULL, env=env) as proc:
        os.close(slave)
        out = _read_all(master)
        proc.wait()
    os.close(master)
    return out.decode()


def _read_all(master: int) -> bytes:
    """Everything written to the terminal until the child closes it."""
    data = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # the child closed the terminal
            return data
        if not chunk:
            return data
        data += chunk
