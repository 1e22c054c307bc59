"""One measured subprocess: wall time, CPU time and peak memory, without psutil.

Peak RSS comes from `os.wait4`, which on Linux reports the largest resident set of the child
and of every descendant it reaped (so an xdist run reports its largest worker or controller).
A sampler also sums the resident sets of the whole process tree every few milliseconds, which
is what the machine actually had to hold at once.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

MB = 1024 * 1024
_SAMPLE_EVERY = 0.05


@dataclass(frozen=True)
class Measured:
    """What one subprocess run cost; `tree_rss` is the sampled peak sum over its process tree."""

    wall: float
    cpu: float
    peak_rss: int
    tree_rss: int
    returncode: int
    stdout: str
    stderr: str


def _children() -> dict[int, list[int]]:
    """Parent pid -> child pids, read from /proc."""
    tree: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        tree.setdefault(ppid, []).append(int(entry.name))
    return tree


def _rss(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def tree_rss(root: int) -> int:
    """The summed resident set of `root` and all its descendants right now."""
    children = _children()
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += _rss(pid)
        todo.extend(children.get(pid, []))
    return total


class _Sampler(threading.Thread):
    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.peak = 0
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(_SAMPLE_EVERY):
            self.peak = max(self.peak, tree_rss(self.pid))


def measure(argv: list[str], env: dict[str, str], cwd: Path | None = None) -> Measured:
    """Run `argv` to completion and say what it cost (output captured via temp files, so a
    chatty child never blocks on a full pipe)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        child = subprocess.Popen(argv, env=env, cwd=cwd, stdout=out, stderr=err)
        sampler = _Sampler(child.pid)
        sampler.start()
        _pid, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - started
        sampler.done.set()
        sampler.join()
        child.returncode = os.waitstatus_to_exitcode(status)  # Popen must not wait again
        out.seek(0)
        err.seek(0)
        return Measured(
            wall=wall,
            cpu=usage.ru_utime + usage.ru_stime,
            peak_rss=usage.ru_maxrss * 1024,  # kilobytes on Linux
            tree_rss=sampler.peak,
            returncode=child.returncode,
            stdout=out.read().decode("utf-8", "replace"),
            stderr=err.read().decode("utf-8", "replace"),
        )
