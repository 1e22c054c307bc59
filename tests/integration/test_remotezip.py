"""Wheels read by HTTP ranges from a loopback file host, with faults injected on the wire."""

from __future__ import annotations

import os
import random
import re
import shutil
import zipfile
from pathlib import Path

import pytest
from campaign_faults import directory_entry
from hypothesis import given
from hypothesis import strategies as st
from servers import (
    _RANGE,
    FAST,
    FileServer,
    loopback_certificate,
    make_wheel,
    make_zip64_wheel,
    publish_file,
    serving,
)

from canary.sources import remotezip
from canary.sources.context import SourceContext
from canary.sources.index import IndexFile
from canary.sources.limits import Limits
from canary.sources.tarball import first_unsafe, is_safe
from canary.sources.tree import SourceError

WHEEL_PATH = "/files/pkg-1.0-py3-none-any.whl"
SOURCES = {
    "pkg/__init__.py": b"from pkg.core import run\n__version__ = '1.0'\n",
    "pkg/core.py": b"def run(model, *, fast=False):\n    return model\n" * 20,
    "pkg/sub/__init__.py": b"",
}
#: incompressible padding so that the wheel is far larger than what a check needs
PADDING = {"pkg/data/blob.bin": random.Random(7).randbytes(300_000)}


def publish(server: FileServer, wheel: bytes, path: str = WHEEL_PATH, **options) -> IndexFile:
    return publish_file(server, path, wheel, **options)


def context(cache: Path, **limits: int) -> SourceContext:
    return SourceContext(
        index_url="http://127.0.0.1:9/unused/",
        cache_dir=cache,
        policy=FAST,
        limits=Limits(**limits),
    )


def test_reads_members_by_ranges_without_the_whole_wheel(server, tmp_path):
    wheel = make_wheel("pkg", "1.0", {**SOURCES, **PADDING})
    file = publish(server, wheel)
    ctx = context(tmp_path)
    tree = ctx.release_tree("pkg", "1.0", file)

    assert tree.read("pkg/core.py") == SOURCES["pkg/core.py"]
    assert tree.read("pkg/__init__.py") == SOURCES["pkg/__init__.py"]

    stats = ctx.stats.as_dict()
    assert stats["requests"] == 3  # tail (directory + RECORD), then one per member
    assert stats["bytes_downloaded"] < len(wheel) / 3
    assert stats["whole_downloads"] == 0
    for logged in server.requests_to(WHEEL_PATH):
        assert re.fullmatch(r"bytes=\d+-\d+", logged.headers["Range"])


def test_a_wheel_read_cold_makes_one_lock_file(server, tmp_path):
    """The listing and the members of one archive are fetched under one lock: a cold run
    creates a file per lock (a file system's dearest call here), and reads 275 wheels."""
    file = publish(server, make_wheel("pkg", "1.0", {**SOURCES, **PADDING}))
    tree = context(tmp_path).release_tree("pkg", "1.0", file)
    assert tree.read("pkg/core.py") == SOURCES["pkg/core.py"]
    assert tree.read("pkg/__init__.py") == SOURCES["pkg/__init__.py"]
    assert len(list(tmp_path.rglob("*.lock"))) == 1


def test_absent_members_are_decided_from_the_directory(server, tmp_path):
    file = publish(server, make_wheel("pkg", "1.0", {**SOURCES, **PADDING}))
    ctx = context(tmp_path)
    tree = ctx.release_tree("pkg", "1.0", file)
    assert tree.read("pkg/core.py") is not None
    before = ctx.stats.as_dict()["requests"]
    assert tree.read("pkg/missing.py") is None
    assert tree.read("pkg/sub/missing/__init__.py") is None
    assert tree.read_meta("pyproject.toml") is None
    assert ctx.stats.as_dict()["requests"] == before


def test_prefetch_brings_neighbouring_members_in_one_request(server, tmp_path):
    file = publish(server, make_wheel("pkg", "1.0", {**SOURCES, **PADDING}))
    ctx = context(tmp_path)
    tree = ctx.release_tree("pkg", "1.0", file)
    tree.prefetch(["pkg/__init__.py", "pkg/core.py", "pkg/sub/__init__.py", "pkg/absent.py"])
    assert ctx.stats.as_dict()["requests"] == 2
    assert {p: tree.read(p) for p in SOURCES} == SOURCES
    assert ctx.stats.as_dict()["requests"] == 2


def test_distant_members_are_fetched_at_once(server, tmp_path):
    """Members too far apart to share a request are asked for together: large platform wheels
    sit on hosts that take 100-200 ms per range."""
    blob = random.Random(3).randbytes
    files = {"pkg/a.py": b"A = 1\n", "pkg/pad1.bin": blob(100_000), "pkg/b.py": b"B = 2\n"}
    files |= {"pkg/pad2.bin": blob(100_000), "pkg/c.py": b"C = 3\n"}
    file = publish(server, make_wheel("pkg", "1.0", files))
    ctx = context(tmp_path)
    tree = ctx.release_tree("pkg", "1.0", file)
    assert tree.read("pkg/missing.py") is None  # the tail read, alone
    server.routes[WHEEL_PATH].delay = 0.3
    tree.prefetch(["pkg/a.py", "pkg/b.py", "pkg/c.py"])
    assert len(server.requests_to(WHEEL_PATH)) == 4  # the tail, then one range per member
    assert server.most_in_flight >= 2
    assert [tree.read(f"pkg/{n}.py") for n in "abc"] == [b"A = 1\n", b"B = 2\n", b"C = 3\n"]


def test_a_warm_cache_makes_no_request(server, tmp_path):
    file = publish(server, make_wheel("pkg", "1.0", {**SOURCES, **PADDING}))
    context(tmp_path).release_tree("pkg", "1.0", file).read("pkg/core.py")

    warm = context(tmp_path)
    tree = warm.release_tree("pkg", "1.0", file)
    assert tree.read("pkg/core.py") == SOURCES["pkg/core.py"]
    assert tree.read("pkg/nothing.py") is None
    assert warm.stats.as_dict()["requests"] == 0
    assert warm.stats.as_dict()["cache_hits"] == 2


def test_offline_reads_the_cache_and_misses_are_errors(server, tmp_path):
    file = publish(server, make_wheel("pkg", "1.0", {**SOURCES, **PADDING}))
    context(tmp_path).release_tree("pkg", "1.0", file).read("pkg/core.py")
    offline = SourceContext(offline=True, cache_dir=tmp_path, policy=FAST)
    tree = offline.release_tree("pkg", "1.0", file)
    assert tree.read("pkg/core.py") == SOURCES["pkg/core.py"]
    assert tree.read("pkg/absent.py") is None
    with pytest.raises(SourceError, match=r"offline: .*pkg/__init__\.py.* not in cache"):
        tree.read("pkg/__init__.py")
    assert offline.stats.as_dict()["requests"] == 0


def test_server_ignoring_range_costs_one_whole_download(server, tmp_path):
    file = publish(server, make_wheel("pkg", "1.0", {**SOURCES, **PADDING}))
    server.ignore_ranges = True
    ctx = context(tmp_path)
    tree = ctx.release_tree("pkg", "1.0", file)
    assert {p: tree.read(p) for p in SOURCES} == SOURCES
    assert ctx.stats.as_dict()["whole_downloads"] == 1
    assert ctx.stats.as_dict()["requests"] == 1


def test_mismatched_content_range_falls_back_to_a_whole_download(server, tmp_path):
    file = publish(server, make_wheel("pkg", "1.0", {**SOURCES, **PADDING}), bad_content_range=True)
    ctx = context(tmp_path)
    tree = ctx.release_tree("pkg", "1.0", file)
    assert tree.read("pkg/core.py") == SOURCES["pkg/core.py"]
    assert ctx.stats.as_dict()["whole_downloads"] == 1


@pytest.mark.parametrize("fault", ["reset", "503", "429:0", "truncate", "flip", "500"])
@pytest.mark.parametrize("when", ["directory", "member"])
def test_transient_faults_end_in_the_right_bytes(server, tmp_path, fault, when):
    file = publish(server, make_wheel("pkg", "1.0", {**SOURCES, **PADDING}))
    ctx = context(tmp_path)
    tree = ctx.release_tree("pkg", "1.0", file)
    if when == "member":
        assert tree.read("pkg/absent.py") is None  # loads the directory first
    server.fault(WHEEL_PATH, fault)
    assert tree.read("pkg/core.py") == SOURCES["pkg/core.py"]
    assert ctx.stats.as_dict()["whole_downloads"] == 0


class _DriftingHints(remotezip.TailHints):
    """Predicts a different tail at each call, as other releases of a project teach the hints
    while one release's listing is being fetched; the first is `first` bytes."""

    first = 0

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def predict(self, project: str, size: int) -> int | None:
        self.calls += 1
        return self.first + 1000 * (self.calls - 1)


def test_a_listing_retried_asks_the_same_bytes_again(server, tmp_path, monkeypatch):
    """A listing whose bytes disagree is fetched once more with the very request of the first
    try, even when the project's tail hints moved in between (they did, by timing, in a fault
    campaign, and the retry met a fault of its own)."""
    wheel = make_wheel("pkg", "1.0", SOURCES)
    name_at = directory_entry(wheel, "pkg/core.py") + 46 + len("pkg/")
    # the server flips the middle byte of the first reply: here the `c` of pkg/core.py in the
    # central directory, which RECORD (read over plain HTTP) then disagrees with
    _DriftingHints.first = 2 * (len(wheel) - name_at)
    monkeypatch.setattr(remotezip, "TailHints", _DriftingHints)
    file = publish(server, wheel)
    server.fault(WHEEL_PATH, "flip")
    tree = context(tmp_path).release_tree("pkg", "1.0", file)
    assert tree.read("pkg/absent.py") is None  # the listing alone
    asked = [logged.headers["Range"] for logged in server.requests_to(WHEEL_PATH)]
    tries = len(asked) // 2  # the tail, then RECORD's bytes before it: each try asks both
    assert len(asked) == 2 * tries and asked[:tries] == asked[tries:], asked
    assert tree.read("pkg/core.py") == SOURCES["pkg/core.py"]


def test_faults_that_never_clear_are_errors_naming_the_url(server, tmp_path):
    file = publish(server, make_wheel("pkg", "1.0", {**SOURCES, **PADDING}))
    server.fault(WHEEL_PATH, *["503"] * 10)
    with pytest.raises(SourceError, match=r"127\.0\.0\.1.*pkg-1\.0.*HTTP 503.*4 attempts"):
        context(tmp_path).release_tree("pkg", "1.0", file).read("pkg/core.py")


def test_a_corrupt_member_is_an_error_never_wrong_bytes(server, tmp_path):
    wheel = bytearray(make_wheel("pkg", "1.0", {**SOURCES, **PADDING}))
    info = zipfile.ZipFile(_bytes_io(wheel)).getinfo("pkg/core.py")
    wheel[info.header_offset + 30 + len(info.filename) + 5] ^= 0x01
    file = publish(server, bytes(wheel))
    tree = context(tmp_path).release_tree("pkg", "1.0", file)
    assert tree.read("pkg/__init__.py") == SOURCES["pkg/__init__.py"]
    with pytest.raises(SourceError, match=r"pkg/core\.py"):
        tree.read("pkg/core.py")
    with pytest.raises(SourceError):  # never cached as good
        context(tmp_path).release_tree("pkg", "1.0", file).read("pkg/core.py")


@pytest.mark.slow
def test_every_single_byte_flip_gives_the_right_bytes_or_an_error(server, tmp_path):
    """Flip each byte of a small wheel in turn: directory, RECORD, headers and data."""
    wheel = make_wheel("pkg", "1.0", SOURCES)
    file = publish(server, wheel)
    wanted = [*SOURCES, "pkg/absent.py", "pkg/core/__init__.py"]
    outcomes = {"right": 0, "error": 0}
    for offset in range(len(wheel)):
        corrupt = bytearray(wheel)
        corrupt[offset] ^= 0x04
        server.routes[WHEEL_PATH].body = bytes(corrupt)
        tree = context(tmp_path / str(offset)).release_tree("pkg", "1.0", file)
        for path in wanted:
            try:
                got = tree.read(path)
            except SourceError:
                outcomes["error"] += 1
                continue
            assert got == SOURCES.get(path), f"flip at {offset} gave wrong bytes for {path}"
            outcomes["right"] += 1
    assert outcomes["error"] > 0 and outcomes["right"] > 0


def test_zip64_archives_are_read(server, tmp_path):
    wheel = make_zip64_wheel("pkg", "1.0", SOURCES)
    assert b"PK\x06\x06" in wheel and b"PK\x06\x07" in wheel
    file = publish(server, wheel)
    tree = context(tmp_path).release_tree("pkg", "1.0", file)
    assert {p: tree.read(p) for p in SOURCES} == SOURCES
    assert tree.read("pkg/nothing.py") is None


def test_zip64_with_a_short_first_read_fetches_the_rest(server, tmp_path):
    files = {f"pkg/m{i}.py": f"value = {i}\n".encode() * 30 for i in range(40)}
    file = publish(server, make_zip64_wheel("pkg", "1.0", files))
    ctx = context(tmp_path, tail_share=0, tail_extra=64)
    tree = ctx.release_tree("pkg", "1.0", file)
    assert tree.read("pkg/m7.py") == files["pkg/m7.py"]
    assert ctx.stats.as_dict()["requests"] >= 3


def test_unknown_size_uses_a_suffix_range(server, tmp_path):
    wheel = make_wheel("pkg", "1.0", {**SOURCES, **PADDING})
    server.add(WHEEL_PATH, wheel)
    file = IndexFile("pkg-1.0-py3-none-any.whl", server.url + WHEEL_PATH)
    ctx = context(tmp_path)
    assert ctx.release_tree("pkg", "1.0", file).read("pkg/core.py") == SOURCES["pkg/core.py"]
    assert server.requests_to(WHEEL_PATH)[0].headers["Range"].startswith("bytes=-")
    assert ctx.stats.as_dict()["whole_downloads"] == 0


@pytest.mark.parametrize("path", ["../pkg/core.py", "/etc/passwd", "pkg/../x.py", "pkg\\core.py"])
def test_unsafe_paths_are_refused(server, tmp_path, path):
    file = publish(server, make_wheel("pkg", "1.0", SOURCES))
    with pytest.raises(SourceError, match="unsafe path"):
        context(tmp_path).release_tree("pkg", "1.0", file).read(path)


def test_an_archive_with_dot_dot_members_is_an_error_with_the_reason(server, tmp_path):
    evil = {**SOURCES, "../evil.py": b"boom = 1\n"}
    file = publish(server, make_wheel("pkg", "1.0", evil))
    tree = context(tmp_path).release_tree("pkg", "1.0", file)
    with pytest.raises(SourceError, match=re.escape("unsafe member name '../evil.py'")):
        tree.read("pkg/core.py")
    with pytest.raises(SourceError, match="unsafe path"):
        tree.read("../evil.py")
    assert not (tmp_path.parent / "evil.py").exists()


def test_an_archive_naming_a_member_twice_is_an_error(server, tmp_path):
    wheel = make_wheel("pkg", "1.0", {**SOURCES, "pkg/aa.py": b"a = 1\n", "pkg/bb.py": b"b = 2\n"})
    file = publish(server, wheel.replace(b"pkg/bb.py", b"pkg/aa.py"))  # headers and directory
    with pytest.raises(SourceError, match=re.escape("member 'pkg/aa.py' appears twice")):
        context(tmp_path).release_tree("pkg", "1.0", file).read("pkg/core.py")


@given(st.lists(st.lists(st.sampled_from(["a", ".", "..", "/", "\\", "\x00", "\n"])).map("".join)))
def test_one_search_over_all_names_finds_what_asking_each_name_finds(names):
    expected = next((name for name in names if not is_safe(name.removesuffix("/"))), None)
    assert first_unsafe(names) == expected


def test_a_zip_bomb_member_is_refused_with_the_reason(server, tmp_path):
    bomb = {**SOURCES, "pkg/huge.py": b"\0" * 5_000_000}
    file = publish(server, make_wheel("pkg", "1.0", bomb))
    tree = context(tmp_path, max_member=1_000_000).release_tree("pkg", "1.0", file)
    assert tree.read("pkg/core.py") == SOURCES["pkg/core.py"]
    with pytest.raises(SourceError, match="5000000 bytes, over the 1000000 byte cap"):
        tree.read("pkg/huge.py")


@pytest.fixture
def tls_server(tmp_path_factory, monkeypatch):
    if shutil.which("openssl") is None:
        why = "needs the openssl command for a loopback certificate: apt-get install openssl"
        if os.environ.get("CANARY_REQUIRE_OPENSSL") == "1":  # set by .ci/run
            pytest.fail(f"CANARY_REQUIRE_OPENSSL=1 and {why}")
        pytest.skip(why)
    tls, cert = loopback_certificate(tmp_path_factory.mktemp("tls"))
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(cert))
    with serving(tls) as running:
        yield running


@pytest.mark.parametrize("scheme", ["https", "http"])
def test_record_is_read_only_where_a_byte_could_change_in_transit(
    server, tls_server, tmp_path, scheme
):
    """Over TLS the directory's names arrive as sent: RECORD, which only guards them against a
    flipped byte, is not fetched (a wheel whose RECORD forgets files still reads). Over plain
    HTTP it is fetched and must name exactly the archive's files."""
    files = {f"pkg/m{i}.py": f"value = {i}\n".encode() * 20 for i in range(60)}
    right = make_wheel("pkg", "1.0", files)
    wrong = make_wheel("pkg", "1.0", files, record_rows=["pkg/m0.py,,"])
    host = tls_server if scheme == "https" else server
    ctx = context(tmp_path, tail_share=0, tail_extra=64)  # no read reaches RECORD by chance
    read = ctx.release_tree("pkg", "1.0", publish(host, right)).read("pkg/m7.py")
    assert read == files["pkg/m7.py"]
    info = zipfile.ZipFile(_bytes_io(right)).getinfo("pkg-1.0.dist-info/RECORD")
    asked = [_RANGE.fullmatch(r.headers["Range"]) for r in host.requests_to(WHEEL_PATH)]
    fetched_record = any(int(a[1]) <= info.header_offset <= int(a[2]) for a in asked)
    assert fetched_record == (scheme == "http")
    other = publish(host, wrong, "/files/other/pkg-1.0-py3-none-any.whl")
    tree = context(tmp_path / "wrong").release_tree("pkg", "1.0", other)
    if scheme == "https":
        assert tree.read("pkg/m7.py") == files["pkg/m7.py"]
    else:
        with pytest.raises(SourceError, match="central directory and RECORD disagree"):
            tree.read("pkg/m7.py")


def test_bytes_redirected_from_https_to_plain_http_have_record_checked(
    server, tls_server, tmp_path
):
    files = {f"pkg/m{i}.py": f"value = {i}\n".encode() for i in range(10)}
    wrong = make_wheel("pkg", "1.0", files, record_rows=["pkg/m0.py,,"])
    server.add(WHEEL_PATH, wrong)
    tls_server.add(WHEEL_PATH, b"", redirect=server.url + WHEEL_PATH)
    file = IndexFile(WHEEL_PATH.rsplit("/", 1)[1], tls_server.url + WHEEL_PATH, len(wrong))
    with pytest.raises(SourceError, match="central directory and RECORD disagree"):
        context(tmp_path).release_tree("pkg", "1.0", file).read("pkg/m7.py")


def test_stored_and_bzip2_members_are_read(server, tmp_path):
    for method in (zipfile.ZIP_STORED, zipfile.ZIP_BZIP2):
        path = f"/files/m{method}/pkg-1.0-py3-none-any.whl"
        file = publish(server, make_wheel("pkg", "1.0", SOURCES, compression=method), path)
        tree = context(tmp_path / str(method)).release_tree("pkg", "1.0", file)
        assert {p: tree.read(p) for p in SOURCES} == SOURCES


def _bytes_io(data: bytes | bytearray):
    import io

    return io.BytesIO(bytes(data))


@pytest.mark.network
def test_live_wheel_is_read_by_ranges(tmp_path):
    """One small real wheel from the real index: a known module, far fewer bytes than the file."""
    ctx = SourceContext(cache_dir=tmp_path)  # the index the environment and pip name
    file = ctx.index.project("trl").pick_file("0.12.0")
    assert file is not None and file.filename == "trl-0.12.0-py3-none-any.whl"
    before = ctx.stats.as_dict()["bytes_downloaded"]
    source = ctx.release_tree("trl", "0.12.0", file).read("trl/models/utils.py")
    assert source is not None and b"def setup_chat_format(" in source
    assert ctx.stats.as_dict()["bytes_downloaded"] - before < file.size
    assert ctx.stats.as_dict()["whole_downloads"] == 0
    assert os.environ.get("CANARY_OFFLINE", "") in ("", "0")
