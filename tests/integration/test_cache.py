"""The shared cache: verified entries, atomic writes, one fetch across processes, offline."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from servers import FAST, make_wheel, serving, sha256

from canary.cache.store import LAYOUT, Cache
from canary.cache.sweep import cache_clear, cache_info, cache_prune
from canary.settings import default_cache_dir
from canary.sources.context import SourceContext
from canary.sources.index import IndexFile
from canary.sources.stats import Stats
from canary.sources.tree import SourceError


def entry_files(root: Path) -> list[Path]:
    return [p for p in (root / LAYOUT).rglob("*") if p.is_file() and p.parent.name != "locks"]


def test_entries_round_trip_and_count_hits(tmp_path):
    cache = Cache(tmp_path, Stats())
    assert cache.get("k") is None
    cache.put("k", b"data")
    assert cache.get("k") == b"data"
    assert cache.stats.cache_hits == 1


@pytest.mark.parametrize("damage", ["flip", "truncate", "empty", "other-key"])
def test_a_corrupt_entry_is_deleted_and_refetched(tmp_path, damage):
    cache = Cache(tmp_path, Stats())
    cache.put("k", b"the real bytes")
    (path,) = [p for p in entry_files(tmp_path) if p.parent.parent.name == "release"]
    raw = path.read_bytes()
    if damage == "flip":
        raw = raw[:-3] + bytes([raw[-3] ^ 1]) + raw[-2:]
    elif damage == "truncate":
        raw = raw[:-2]
    elif damage == "empty":
        raw = b""
    else:
        cache.put("other", b"the real bytes")
        (raw,) = [
            p.read_bytes() for p in entry_files(tmp_path) if p != path and "release" in str(p)
        ]
    path.write_bytes(raw)
    assert cache.get("k") is None
    assert not path.exists()
    assert cache.get_or_fetch("k", "k", lambda: b"the real bytes") == b"the real bytes"
    assert cache.get("k") == b"the real bytes"


def test_writes_leave_no_temp_files(tmp_path):
    cache = Cache(tmp_path, Stats())
    for i in range(20):
        cache.put(f"k{i}", b"x" * i)
    assert not [p for p in (tmp_path / LAYOUT).rglob(".tmp-*")]
    assert len(entry_files(tmp_path)) == 20


def test_offline_miss_is_an_error_naming_what(tmp_path):
    cache = Cache(tmp_path, Stats(), offline=True)
    with pytest.raises(SourceError, match=r"^offline: pkg/x\.py of some wheel not in cache$"):
        cache.get_or_fetch("k", "pkg/x.py of some wheel", lambda: b"never")


def test_threads_fetch_a_key_once(tmp_path):
    cache = Cache(tmp_path, Stats())
    calls = []

    def fetch() -> bytes:
        calls.append(1)
        time.sleep(0.2)
        return b"once"

    results = []
    threads = [
        threading.Thread(target=lambda: results.append(cache.get_or_fetch("k", "k", fetch)))
        for _ in range(6)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [b"once"] * 6 and len(calls) == 1


def test_processes_fetch_a_key_once(tmp_path):
    """Four processes (as pytest-xdist workers would) ask for the same key at once."""
    script = textwrap.dedent(
        """
        import sys, time
        from pathlib import Path
        from canary.cache.store import Cache
        from canary.sources.stats import Stats

        root, log = Path(sys.argv[1]), Path(sys.argv[2])
        def fetch():
            with log.open("a") as handle:
                handle.write("fetched\\n")
            time.sleep(0.5)
            return b"shared bytes"
        sys.stdout.write(Cache(root, Stats()).get_or_fetch("key", "key", fetch).decode())
        """
    )
    log = tmp_path / "fetches.log"
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(tmp_path / "cache"), str(log)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    outputs = [worker.communicate(timeout=60)[0] for worker in workers]
    assert outputs == ["shared bytes"] * 4
    assert log.read_text() == "fetched\n"


def test_a_corrupt_release_member_is_refetched_never_believed(tmp_path):
    files = {"pkg/__init__.py": b"A = 1\n", "pkg/core.py": b"def run(): pass\n"}
    wheel = make_wheel("pkg", "1.0", files)
    with serving() as server:
        server.add("/w.whl", wheel)
        file = IndexFile(
            "pkg-1.0-py3-none-any.whl", server.url + "/w.whl", len(wheel), sha256(wheel)
        )
        SourceContext(cache_dir=tmp_path, policy=FAST).release_tree("pkg", "1.0", file).read(
            "pkg/core.py"
        )
        for path in entry_files(tmp_path):
            raw = path.read_bytes()
            if raw.endswith(files["pkg/core.py"]):
                path.write_bytes(raw[:-2] + b"X\n")
        again = SourceContext(cache_dir=tmp_path, policy=FAST)
        assert again.release_tree("pkg", "1.0", file).read("pkg/core.py") == files["pkg/core.py"]
        assert again.stats.as_dict()["requests"] == 1


def test_a_member_is_verified_by_its_check_alone_and_deleted_when_it_fails(tmp_path, monkeypatch):
    """A member read is checked by the CRC-32 and size its key names, not by a sha256 of its
    bytes too (the module's content key is that digest: one per read, not two)."""
    import canary.cache.store as store

    cache = Cache(tmp_path, Stats())
    cache.put_member("pkg/m.py@crc32:0:6:6", b"member")
    hashed: list[bytes] = []
    real = store.hashlib.sha256
    monkeypatch.setattr(
        store.hashlib, "sha256", lambda data=b"": hashed.append(bytes(data)) or real(data)
    )
    checked: list[bytes] = []
    assert cache.get_member("pkg/m.py@crc32:0:6:6", checked.append) is None  # check says no
    assert checked == [b"member"] and b"member" not in hashed
    assert not [p for p in entry_files(tmp_path) if p.parent.parent.name == "member"]
    cache.put_member("pkg/m.py@crc32:0:6:6", b"member")
    assert cache.get_member("pkg/m.py@crc32:0:6:6", lambda data: data == b"member") == b"member"
    assert cache.stats.cache_hits == 1


def test_info_and_clear_cover_every_kind_of_entry(tmp_path):
    cache = Cache(tmp_path, Stats())
    cache.put("a", b"x" * 2048)
    cache.put_fresh("b", b"y")
    cache.put_member("pkg/m.py@crc32:0:6:6", b"member")
    cache.store("index", "k", b"{}")
    cache.store("verdict", "k", b"{}")
    old = tmp_path / "module-index" / "ab" / "ab12.json"  # where an older canary kept indexes
    old.parent.mkdir(parents=True)
    old.write_text("{}")
    info = cache_info(tmp_path)
    assert f"cache folder: {tmp_path}" in info
    assert "release listings (kept until pruned): 1 entries, 2.1 KiB" in info
    assert "release members, by content (kept until pruned): 1 entries" in info
    assert "branch files and index pages: 1 entries" in info
    assert "parsed module indexes: 1 entries" in info
    assert "remembered verdicts per release: 1 entries" in info
    assert "left by older canary versions (`cache clear` removes them): 1 entries" in info
    assert "total: 6 entries" in info
    assert cache_clear(tmp_path).startswith("cleared 6 entries (")
    assert cache.get("a") is None and cache.load("index", "k") is None and not old.exists()
    assert "total: 0 entries, 0 B" in cache_info(tmp_path)


def test_prune_removes_entries_unused_for_days(tmp_path):
    cache = Cache(tmp_path, Stats())
    cache.put("old", b"o")
    cache.put("new", b"n")
    cache.put("read", b"r")
    month_ago = time.time() - 30 * 86400
    for path in entry_files(tmp_path):
        os.utime(path, (month_ago, month_ago))
    cache.put("new", b"n")
    assert cache.get("read") == b"r"  # a read marks the entry as in use
    assert cache_prune(7, tmp_path).startswith("pruned 1 entries (")
    assert cache.get("old") is None
    assert cache.get("new") == b"n" and cache.get("read") == b"r"


def test_cache_folder_comes_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("CANARY_CACHE_DIR", str(tmp_path / "here"))
    assert default_cache_dir() == tmp_path / "here"
    monkeypatch.delenv("CANARY_CACHE_DIR")
    assert default_cache_dir().name.lower() == "canary"


def test_cache_command_prunes_and_refuses_a_bad_age(tmp_path, monkeypatch, capsys):
    from canary.cli.main import main

    monkeypatch.setenv("CANARY_CACHE_DIR", str(tmp_path))
    Cache(tmp_path, Stats()).put("k", b"v")
    assert main(["cache", "prune", "--older-than", "0"]) == 0
    assert capsys.readouterr().out.startswith("pruned 1 entries (")
    for argv in (
        ["cache", "prune"],
        ["cache", "prune", "--older-than", "-1"],
        ["cache", "info", "--older-than", "3"],
    ):
        with pytest.raises(SystemExit) as exited:
            main(argv)
        assert exited.value.code == 2
    assert "DAYS" in capsys.readouterr().err


def test_a_thread_taking_a_key_it_holds_is_refused_at_once(tmp_path):
    """Another descriptor on the same lock file would wait on itself for the whole timeout."""
    cache = Cache(tmp_path, Stats(), lock_timeout=600)
    with (
        cache.lock("k"),
        pytest.raises(SourceError, match="taken twice by one thread"),
        cache.lock("k"),
    ):
        pass
    with cache.lock("k"):  # released: free again
        pass


def test_an_unusable_cache_folder_is_an_error_not_a_crash(tmp_path):
    (tmp_path / "a-file").write_text("not a folder")
    cache = Cache(tmp_path / "a-file" / "cache", Stats())
    with pytest.raises(SourceError, match="cannot write"):
        cache.put("k", b"data")
    with pytest.raises(SourceError, match="cannot lock"), cache.lock("k"):
        pass


def aged(path: Path, days: float = 30) -> None:
    """`path` (not what it links to) last written `days` ago."""
    when = time.time() - days * 86400
    os.utime(path, (when, when), follow_symlinks=False)


def outside_tree(tmp_path: Path) -> list[Path]:
    """Old files outside the cache, in the cache's own layout: what a link may lead to."""
    digest = "ab" + "0" * 62
    files = [
        tmp_path / "outside" / "release" / "ab" / digest,
        tmp_path / "outside" / "ab" / digest,
        tmp_path / "outside" / "notes.txt",
    ]
    for path in files:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"canary-cache 1\n{}\nnot the cache's")
        aged(path)
    return files


def test_prune_follows_no_link_out_of_the_cache(tmp_path):
    """Links planted in the cache (at `v1`, at a kind folder, at a fan folder, at an entry)
    lead to old files: prune deletes the cache's own old entries and nothing behind a link."""
    cache_root = tmp_path / "cache"
    cache = Cache(cache_root, Stats())
    cache.put("mine", b"old")
    (mine,) = entry_files(cache_root)
    aged(mine)
    outside = outside_tree(tmp_path)
    (cache_root / "v1").symlink_to(tmp_path / "outside")
    (cache_root / LAYOUT / "index").symlink_to(tmp_path / "outside")
    (cache_root / LAYOUT / "verdict" / "ab").mkdir(parents=True)
    (cache_root / LAYOUT / "verdict" / "cd").symlink_to(tmp_path / "outside" / "ab")
    planted = cache_root / LAYOUT / "verdict" / "ab" / outside[1].name
    planted.symlink_to(outside[1])
    aged(planted)
    said = cache_prune(7, cache_root)
    assert said.startswith("pruned 1 entries (")
    assert f"; left 4 that canary did not write: {LAYOUT}/index (a symbolic link), " in said
    assert all(path.read_bytes().endswith(b"not the cache's") for path in outside)
    assert not mine.exists()
    assert planted.is_symlink()  # left as it is: not canary's


def test_clear_removes_only_what_canary_wrote(tmp_path, monkeypatch, capsys):
    """CANARY_CACHE_DIR mistyped as a project folder holding `v1/`, `v2/` and `module-index/`
    of its own: clear removes nothing of it, and says what it left."""
    from canary.cli.main import main

    project = tmp_path / "project"
    theirs = [
        project / "v1" / "notes.md",
        project / "v2" / "src" / "app.py",
        project / "v2" / "release" / "ab" / "draft.txt",
        project / "module-index" / "ab" / "ab12.json.bak",
        project / "module-index" / "readme.json",
    ]
    for path in theirs:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("the project's own")
    monkeypatch.setenv("CANARY_CACHE_DIR", str(project))
    assert main(["cache", "clear"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"cleared 0 entries (0 B) from {project}; left 5 that canary did not")
    assert all(path.read_text() == "the project's own" for path in theirs)


def test_clear_through_a_linked_layout_folder_removes_and_counts_nothing(tmp_path):
    """A `v3` that is a link to another cache: not followed, not counted as cleared."""
    elsewhere = tmp_path / "elsewhere"
    Cache(elsewhere, Stats()).put("k", b"v")
    root = tmp_path / "cache"
    root.mkdir()
    (root / LAYOUT).symlink_to(elsewhere / LAYOUT)
    left = f"; left 1 that canary did not write: {LAYOUT} (a symbolic link)"
    assert cache_info(root).endswith(f"total: 0 entries, 0 B{left}")
    assert cache_clear(root) == f"cleared 0 entries (0 B) from {root}{left}"
    assert Cache(elsewhere, Stats()).get("k") == b"v"
    assert (root / LAYOUT).is_symlink()


def test_clear_removes_entries_locks_and_the_folders_it_empties(tmp_path):
    cache = Cache(tmp_path, Stats())
    cache.put("k", b"v")
    with cache.lock("k"):
        pass
    (tmp_path / LAYOUT / "release" / "stray.txt").write_text("not canary's")
    assert cache_clear(tmp_path) == (
        f"cleared 1 entries (107 B) from {tmp_path}; left 1 that canary did not write: "
        f"{LAYOUT}/release/stray.txt"
    )
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == [
        LAYOUT,
        f"{LAYOUT}/release",
        f"{LAYOUT}/release/stray.txt",
    ]


def test_a_cache_folder_that_is_a_file_holds_nothing(tmp_path):
    root = tmp_path / "a-file"
    root.write_text("not a folder")
    assert cache_info(root).endswith("total: 0 entries, 0 B")
    assert cache_clear(root) == f"cleared 0 entries (0 B) from {root}"
    assert cache_prune(1, root).startswith("pruned 0 entries (0 B)")
    assert root.read_text() == "not a folder"
