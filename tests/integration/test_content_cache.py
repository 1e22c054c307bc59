"""Members stored by content, listings by project and file, verdicts remembered per release:
fewer bytes and no wrong verdict, against a loopback file host."""

from __future__ import annotations

import hashlib
import json
import threading
import zipfile
import zlib
from pathlib import Path

import pytest
from servers import FAST, FileServer, make_wheel, publish_file

from canary.engine.runner import Runner
from canary.matrix.model import load_matrix
from canary.matrix.targets import Target
from canary.settings import Settings
from canary.sources.context import SourceContext
from canary.sources.index import IndexFile

SHARED = b"def run(model, *, fast=False):\n    return model\n" * 40
V1 = {"pkg/__init__.py": b"__version__ = '1.0'\n", "pkg/core.py": SHARED}
V2 = {"pkg/__init__.py": b"__version__ = '2.0'\n", "pkg/core.py": SHARED}


def publish(
    server: FileServer, name: str, version: str, files: dict[str, bytes], **options: int
) -> IndexFile:
    wheel = make_wheel(name, version, files, **options)
    return publish_file(server, f"/files/{name}-{version}-py3-none-any.whl", wheel)


def context(cache: Path) -> SourceContext:
    return SourceContext(index_url="http://127.0.0.1:9/unused/", cache_dir=cache, policy=FAST)


def test_a_file_unchanged_since_another_release_is_fetched_once(server, tmp_path):
    one, two = publish(server, "pkg", "1.0", V1), publish(server, "pkg", "2.0", V2)
    first = context(tmp_path)
    assert first.release_tree("pkg", "1.0", one).read("pkg/core.py") == SHARED
    ctx = context(tmp_path)
    tree = ctx.release_tree("pkg", "2.0", two)
    assert tree.read("pkg/core.py") == SHARED
    assert ctx.stats.as_dict()["requests"] == 1  # the listing: core.py is known by its CRC
    assert tree.read("pkg/__init__.py") == V2["pkg/__init__.py"]  # a changed file is fetched
    assert ctx.stats.as_dict()["requests"] == 2


def test_releases_read_at_once_share_a_file_fetch(server, tmp_path):
    files = [
        publish(server, "pkg", f"1.{n}", {**V1, "pkg/n.py": b"N = %d\n" % n}) for n in range(6)
    ]
    ctx = context(tmp_path)
    trees = [ctx.release_tree("pkg", f"1.{n}", file) for n, file in enumerate(files)]
    for tree in trees:
        tree.read("pkg/n.py")  # the listings, so only member requests follow
    member_requests = ctx.stats.as_dict()["requests"]
    read = []
    threads = [
        threading.Thread(target=lambda t=t: read.append(t.read("pkg/core.py"))) for t in trees
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert read == [SHARED] * 6
    assert ctx.stats.as_dict()["requests"] == member_requests + 1


def test_a_hostile_index_cannot_poison_another_projects_entries(server, tmp_path):
    genuine = publish(server, "pkg", "1.0", V1)
    forged = publish(server, "evil", "1.0", {"pkg/core.py": b"def run(): pass\n"})
    # the other project's index claims the genuine wheel's hash and file name for its bytes
    claimed = IndexFile(genuine.filename, forged.url, forged.size, genuine.sha256)
    assert context(tmp_path).release_tree("evil", "1.0", claimed).read("pkg/core.py") != SHARED
    assert context(tmp_path).release_tree("pkg", "1.0", genuine).read("pkg/core.py") == SHARED


def forge_crc(data: bytes, crc: int) -> bytes:
    """`data` with its last 4 bytes chosen so its CRC-32 is `crc`: CRC-32 is affine over GF(2),
    so the 32 bits solve a linear system (what an attacker does in microseconds)."""
    head = data[:-4]
    base = zlib.crc32(head + bytes(4))
    columns = [zlib.crc32(head + (1 << bit).to_bytes(4, "little")) ^ base for bit in range(32)]
    rows = [(columns[bit], 1 << bit) for bit in range(32)]  # (what it flips, which bits)
    want, chosen = crc ^ base, 0
    for pivot in range(32):
        at = next(i for i in range(pivot, 32) if rows[i][0] >> pivot & 1)
        rows[pivot], rows[at] = rows[at], rows[pivot]
        rows = [
            (f ^ rows[pivot][0], b ^ rows[pivot][1]) if i != pivot and f >> pivot & 1 else (f, b)
            for i, (f, b) in enumerate(rows)
        ]
    for pivot in range(32):
        if want >> pivot & 1:
            chosen ^= rows[pivot][1]
    return head + chosen.to_bytes(4, "little")


def test_a_hostile_project_cannot_poison_another_with_a_crc_collision(server, tmp_path):
    """Members are keyed by what the directory says (path, CRC-32, sizes), which a release can
    forge: the key holds the project, so only the forger's own entries could be affected."""
    forged = forge_crc(b"def run(): pass\n".ljust(len(SHARED), b"#"), zlib.crc32(SHARED))
    assert len(forged) == len(SHARED) and zlib.crc32(forged) == zlib.crc32(SHARED)
    stored = {"compression": zipfile.ZIP_STORED}  # equal compressed sizes too
    evil = publish(server, "evil", "1.0", {"pkg/core.py": forged}, **stored)
    genuine = publish(server, "pkg", "1.0", V1, **stored)
    assert context(tmp_path).release_tree("evil", "1.0", evil).read("pkg/core.py") == forged
    assert context(tmp_path).release_tree("pkg", "1.0", genuine).read("pkg/core.py") == SHARED


def test_a_cached_member_that_fails_its_crc_is_fetched_again(server, tmp_path):
    """A member entry rewritten with a valid header (the cache's own check passes) but other
    bytes: its key's CRC-32 refuses it, and the member is fetched again."""
    one = publish(server, "pkg", "1.0", V1)
    assert context(tmp_path).release_tree("pkg", "1.0", one).read("pkg/core.py") == SHARED
    for path in tmp_path.rglob("*"):
        if path.is_file() and "member" in path.parts and path.read_bytes().endswith(SHARED):
            magic, header, data = path.read_bytes().split(b"\n", 2)
            other = data.replace(b"fast", b"slow")
            meta = {**json.loads(header), "sha256": hashlib.sha256(other).hexdigest()}
            path.write_bytes(b"\n".join([magic, json.dumps(meta).encode(), other]))
    ctx = context(tmp_path)
    assert ctx.release_tree("pkg", "1.0", one).read("pkg/core.py") == SHARED
    assert ctx.stats.as_dict()["requests"] == 1  # the member again; the listing was cached


MATRIX = """\
upstream: pkg
versions:
  include: ["1.0", "2.0"]
checks:
  - {id: run-fast, module: pkg.core, function: run, params: [model, fast]}
  - {id: gone, module: pkg.gone}
  - {id: new, module: pkg.core, since: "3.0"}
"""


def judge(matrix_path: Path, files: dict[str, IndexFile], offline: bool = False) -> dict:
    matrix = load_matrix(matrix_path)
    runner = Runner(
        settings=Settings.from_environment(offline=offline),
        select=lambda m, _s: [Target(v, file=f) for v, f in files.items()],
    )
    report = runner.run([matrix], "releases")
    runner.close()
    return {(r.check, r.version): (r.status.value, r.detail) for r in report.results}


@pytest.fixture
def project(server, tmp_path, monkeypatch):
    monkeypatch.setenv("CANARY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CANARY_INDEX_URL", "http://127.0.0.1:9/unused/")
    monkeypatch.delenv("CANARY_OFFLINE", raising=False)
    path = tmp_path / "pkg.yaml"
    path.write_text(MATRIX)
    files = {"1.0": publish(server, "pkg", "1.0", V1), "2.0": publish(server, "pkg", "2.0", V2)}
    yield path, files, tmp_path / "cache"


def verdict_entries(cache: Path) -> list[Path]:
    return [p for p in cache.rglob("*") if p.is_file() and "verdict" in p.parts]


def test_a_warm_run_answers_from_verdicts_without_opening_a_release(project, server):
    path, files, cache = project
    cold = judge(path, files)
    assert cold[("run-fast", "1.0")] == ("pass", "")
    assert cold[("gone", "2.0")][0] == "fail" and cold[("new", "1.0")][0] == "skip"
    assert len(verdict_entries(cache)) == 2
    for route in list(server.routes):
        server.routes.pop(route)  # the host is gone: only the verdicts can answer
    for entry in cache.rglob("*"):
        if entry.is_file() and not {"verdict", "locks"} & set(entry.parts):
            entry.unlink()
    assert judge(path, files, offline=True) == cold


def test_a_release_judged_cold_makes_one_lock_file(project):
    """Its listing, its members and its verdicts are written under one lock: a cold run
    creates a file per lock, one of the dearer calls of storing what it fetched."""
    path, files, cache = project
    judge(path, files)
    assert len(verdict_entries(cache)) == 2
    assert len(list(cache.rglob("*.lock"))) == len(files)


def test_an_edited_verdict_is_refused_and_the_check_judged_again(project):
    path, files, cache = project
    cold = judge(path, files)
    for entry in verdict_entries(cache):
        magic, meta, data = entry.read_bytes().split(b"\n", 2)
        edited = json.dumps({key: [True, ""] for key in json.loads(data)})  # all "hold"
        entry.write_bytes(b"\n".join([magic, meta, edited.encode()]))
    assert judge(path, files) == cold


def test_a_changed_check_is_judged_not_taken_from_the_verdicts(project):
    path, files, _cache = project
    assert judge(path, files)[("run-fast", "1.0")] == ("pass", "")
    path.write_text(MATRIX.replace("params: [model, fast]", "params: [model, slow]"))
    status, detail = judge(path, files)[("run-fast", "1.0")]
    assert status == "fail" and "slow" in detail


def test_errors_are_never_remembered(project, server):
    path, files, _cache = project
    server.routes.pop(f"/files/{files['2.0'].filename}")
    assert judge(path, files)[("run-fast", "2.0")][0] == "error"
    publish(server, "pkg", "2.0", V2)
    assert judge(path, files)[("run-fast", "2.0")] == ("pass", "")


def test_an_offline_run_judges_every_version_in_its_own_thread(project, monkeypatch):
    # offline, nothing waits on the network: threads opening releases at once only took turns
    # on the GIL, at the cost of the switches
    path, files, cache = project
    cold = judge(path, files)
    for entry in verdict_entries(cache):
        entry.unlink()  # both versions judged again, from the cached sources

    def no_pool(*_args: object) -> None:
        raise AssertionError("an offline run started a thread pool")

    monkeypatch.setattr("canary.engine.runner.DaemonPool", no_pool)
    assert judge(path, files, offline=True) == cold
