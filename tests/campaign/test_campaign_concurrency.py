"""Concurrency campaign: processes sharing one cache, and processes killed mid-download.

Four pytest-xdist workers start together on one empty cache: their results must be identical
(and equal to a single process's), every cache entry must verify, and no byte range may be
downloaded twice. A process SIGKILLed while a download is half done must leave nothing a later
run believes: the next run gives the right verdicts and fetches the interrupted member again.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

import pytest
from campaign_faults import FaultServer, HangPlan
from campaign_upstream import publish, run_checks, scaled, tell, verdicts
from paths import TESTS

from canary.cache.stats import Stats
from canary.cache.store import Cache
from canary.engine.outcomes import Result

WORKER = TESTS / "campaign_worker.py"
WORKERS = 4


def environment(index_url: str, cache: Path) -> dict[str, str]:
    return {**os.environ, "CANARY_INDEX_URL": index_url, "CANARY_CACHE_DIR": str(cache)}


def downloads(server: FaultServer) -> Counter[tuple[str, str]]:
    """How many times each (path, Range) was requested."""
    return Counter((r.path, r.headers.get("Range", "")) for r in server.log)


def entry_files(root: Path, kind: str = "*") -> list[Path]:
    """Entry files of the cache at root (whatever its layout version folder), temp files aside."""
    found = root.glob(f"*/{kind}/*/*")
    return sorted(p for p in found if p.is_file() and not p.name.startswith(".tmp-"))


def assert_cache_sound(root: Path, *, killed: bool = False) -> int:
    """Every entry under root verifies through the Cache API; returns the number of entries.

    Only a killed writer may leave a temp file behind (nothing can clean up after SIGKILL);
    temp files are never read as entries.
    """
    cache = Cache(root, Stats(), offline=True)
    entries = entry_files(root, "release") + entry_files(root, "fresh")
    assert entries, f"no cache entries under {root}: has the cache layout changed?"
    if not killed:
        assert not list(root.rglob(".tmp-*")), "a temp file was left behind"
    for path in entries:
        key = json.loads(path.read_bytes().split(b"\n", 2)[1])["key"]
        sound = (
            cache.get(key) is not None
            if path.parent.parent.name == "release"
            else (cache.has_fresh(key))
        )
        assert sound, f"cache entry {path} ({key}) does not verify"
    return len(entries)


def results_of(output: Path) -> dict[tuple[str, str], tuple[str, str]]:
    data = json.loads(output.read_text())["results"]
    return verdicts([Result.from_json(r) for r in data])


def xdist_workers(upstream, env: dict[str, str], folder: Path) -> list[Path]:
    """`pytest -n 4 --dist each` over a test that waits for all workers, then runs canary."""
    out = folder / "out"
    out.mkdir(parents=True)
    (folder / "test_worker.py").write_text(
        textwrap.dedent(
            f"""
            import os, sys, time
            from pathlib import Path
            sys.path.insert(0, {str(TESTS)!r})
            from campaign_worker import run_to_file

            def test_run():
                me = os.environ["PYTEST_XDIST_WORKER"]
                ready = Path({str(out)!r}) / f"{{me}}.ready"
                ready.touch()
                deadline = time.monotonic() + 60
                while len(list(ready.parent.glob("*.ready"))) < {WORKERS}:
                    assert time.monotonic() < deadline, "the other workers never started"
                    time.sleep(0.005)
                run_to_file({str(upstream.matrix_path)!r}, {upstream.selection!r},
                            str(ready.with_suffix(".json")))
            """
        )
    )
    command = ["-n", str(WORKERS), "--dist", "each", "-q", "-p", "no:cacheprovider"]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", *command, "test_worker.py"],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return sorted(out.glob("*.json"))


def cli_processes(upstream, env: dict[str, str], folder: Path) -> list[Path]:
    """Four `canary check --format json` processes started at once."""
    folder.mkdir()
    outputs = [folder / f"run{i}.json" for i in range(WORKERS)]
    command = ["check", str(upstream.matrix_path), "--versions", upstream.selection]
    processes = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "canary.cli.main",
                *command,
                "--format",
                "json",
                "--output",
                str(o),
            ],
            cwd=folder,
            env=env,
            stderr=subprocess.PIPE,
            text=True,
        )
        for o in outputs
    ]
    for process in processes:
        _out, stderr = process.communicate(timeout=300)
        assert process.returncode == 1, stderr  # the fake upstream has failing checks
    return outputs


#: the nightly also runs the pytest-xdist form (its worker start-up costs seconds)
LAUNCHERS = {"canary-check": cli_processes, "pytest-xdist": xdist_workers}


@pytest.mark.parametrize("launcher", list(LAUNCHERS)[: scaled(1, 2)])
def test_four_processes_on_one_empty_cache(upstream, server, tmp_path, launcher, capsys):
    index_url = publish(server, upstream.files)
    expected = verdicts(run_checks(upstream, index_url, tmp_path / "alone"))
    single = downloads(server)
    server.log.clear()
    cache = tmp_path / "shared-cache"
    outputs = LAUNCHERS[launcher](upstream, environment(index_url, cache), tmp_path / "runs")
    assert len(outputs) == WORKERS
    for output in outputs:
        assert results_of(output) == expected, f"{output.name} differs from a lone run"
    entries = assert_cache_sound(cache)
    shared = downloads(server)
    twice = {key: n for key, n in shared.items() if n > 1}
    tell(
        capsys,
        f"concurrency ({launcher}): {WORKERS} processes, {len(expected)} verdicts each, identical; "
        f"{entries} cache entries sound; requests: {sum(shared.values())} shared "
        f"vs {sum(single.values())} for one process alone; ranges fetched twice: {len(twice)}",
    )
    assert not twice, f"downloaded more than once: {twice}"


def hang_then_kill(worker_args: list[str], env: dict[str, str], server: FaultServer) -> None:
    """Start a run, wait until its download hangs half done, then SIGKILL it."""
    server.hanging.clear()
    process = subprocess.Popen(worker_args, env=env, stderr=subprocess.PIPE)
    try:
        assert server.hanging.wait(timeout=60), "the run never reached the hanging download"
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        process.stderr.close()
    assert process.returncode == -signal.SIGKILL


@pytest.mark.parametrize("nth", range(scaled(1, 8)))
def test_a_process_killed_mid_download_leaves_nothing_believed(upstream, server, tmp_path, nth):
    """Kill a run at the nth request to one wheel (after its listing, so mid-member);
    then a healthy run on the same cache must give the fault-free verdicts."""
    index_url = publish(server, upstream.files)
    expected = verdicts(run_checks(upstream, index_url, tmp_path / "alone"))
    version = random.Random(nth).choice(upstream.versions)
    path = upstream.wheel_path(version)
    single = [r for r in server.log if r.path == path]
    cache, output = tmp_path / "cache", tmp_path / "results.json"
    server.log.clear()
    hang_at = 1 + nth % (len(single) - 1)
    server.arm(HangPlan(path, nth=hang_at))
    args = [sys.executable, str(WORKER), str(upstream.matrix_path), upstream.selection, str(output)]
    hang_then_kill(args, environment(index_url, cache), server)
    hung = [r for r in server.log if r.path == path][hang_at]
    server.arm(None)
    server.release.set()
    assert not output.exists(), "the killed run must not have finished"
    assert_cache_sound(cache, killed=True)
    server.log.clear()
    done = subprocess.run(
        args, env=environment(index_url, cache), capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert results_of(output) == expected
    again = [
        r
        for r in server.log
        if (r.path, r.headers.get("Range")) == (path, hung.headers.get("Range"))
    ]
    assert again, "the interrupted download must be fetched again, not served from a partial entry"
    assert_cache_sound(cache, killed=True)


def test_torn_and_leftover_cache_files_are_never_believed(upstream, server, tmp_path):
    """What a writer killed between write and rename (or a non-atomic one) could leave:
    truncated entries, flipped bytes and stray temp files. All are refetched."""
    index_url = publish(server, upstream.files)
    cache = tmp_path / "cache"
    expected = verdicts(run_checks(upstream, index_url, cache))
    entries = entry_files(cache, "release")
    rng = random.Random(3)
    damaged = rng.sample(entries, k=max(1, len(entries) // 3))
    for i, entry in enumerate(damaged):
        raw = entry.read_bytes()
        if i % 2:
            entry.write_bytes(raw[: len(raw) // 2])
        else:
            at = rng.randrange(len(raw))
            entry.write_bytes(raw[:at] + bytes([raw[at] ^ 0x10]) + raw[at + 1 :])
        (entry.parent / f".tmp-{entry.name[:8]}").write_bytes(raw[: len(raw) // 3])
    server.log.clear()
    assert verdicts(run_checks(upstream, index_url, cache)) == expected
    assert len(server.log) >= 1, "damaged entries must be fetched again"
