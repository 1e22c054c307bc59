"""Releases with only an sdist: downloaded whole (tar has no index), read in memory, cached."""

from __future__ import annotations

import io
import json
import tarfile
import threading
import zipfile

import pytest
from servers import FAST, make_sdist, publish_file, sha256

from canary.sources.context import SourceContext
from canary.sources.index import JSON_TYPE, IndexFile
from canary.sources.index_file import release_key
from canary.sources.limits import Limits
from canary.sources.tree import SourceError

FILES = {
    "src/pkg/__init__.py": b"__version__ = '0.5'\n",
    "src/pkg/core.py": b"def run():\n    pass\n",
    "pyproject.toml": b"[project]\nname = 'pkg'\n",
    "PKG-INFO": b"Metadata-Version: 2.1\nName: pkg\nVersion: 0.5\n",
}


def publish(server, name: str, data: bytes, *, with_hash: bool = True) -> IndexFile:
    return publish_file(server, f"/files/{name}", data, with_hash=with_hash)


def context(tmp_path, **limits) -> SourceContext:
    return SourceContext(cache_dir=tmp_path, policy=FAST, limits=Limits(**limits))


def test_src_layout_and_top_folder_are_stripped(server, tmp_path):
    file = publish(server, "pkg-0.5.tar.gz", make_sdist("pkg-0.5", FILES))
    ctx = context(tmp_path)
    tree = ctx.release_tree("pkg", "0.5", file)
    assert tree.read("pkg/core.py") == FILES["src/pkg/core.py"]
    assert tree.read("pkg/absent.py") is None
    assert tree.read_meta("pyproject.toml") == FILES["pyproject.toml"]
    assert ctx.stats.as_dict()["whole_downloads"] == 1
    assert ctx.stats.as_dict()["requests"] == 1


def test_flat_layout(server, tmp_path):
    flat = {path.removeprefix("src/"): data for path, data in FILES.items()}
    file = publish(server, "pkg-0.5.tar.gz", make_sdist("pkg-0.5", flat))
    tree = context(tmp_path).release_tree("pkg", "0.5", file)
    assert tree.read("pkg/__init__.py") == FILES["src/pkg/__init__.py"]


def test_a_warm_cache_needs_no_download(server, tmp_path):
    file = publish(server, "pkg-0.5.tar.gz", make_sdist("pkg-0.5", FILES))
    context(tmp_path).release_tree("pkg", "0.5", file).read("pkg/core.py")
    warm = context(tmp_path)
    tree = warm.release_tree("pkg", "0.5", file)
    assert tree.read("pkg/core.py") == FILES["src/pkg/core.py"]
    assert tree.read("pkg/missing.py") is None
    assert warm.stats.as_dict()["requests"] == 0


def test_links_are_refused_and_traversal_members_dropped(server, tmp_path):
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as archive:
        for name, data in [("pkg-0.5/pkg/core.py", b"ok\n"), ("pkg-0.5/../evil.py", b"no\n")]:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
        link = tarfile.TarInfo("pkg-0.5/pkg/link.py")
        link.type = tarfile.SYMTYPE
        link.linkname = "/etc/passwd"
        archive.addfile(link)
    file = publish(server, "pkg-0.5.tar.gz", out.getvalue())
    tree = context(tmp_path).release_tree("pkg", "0.5", file)
    assert tree.read("pkg/core.py") == b"ok\n"
    with pytest.raises(SourceError, match="is a link"):
        tree.read("pkg/link.py")
    with pytest.raises(SourceError, match="unsafe path"):
        tree.read("../evil.py")


def test_a_corrupt_download_is_an_error(server, tmp_path):
    good = make_sdist("pkg-0.5", FILES)
    file = publish(server, "pkg-0.5.tar.gz", good)
    server.routes["/files/pkg-0.5.tar.gz"].body = good[:-10] + b"0123456789"
    with pytest.raises(SourceError, match="sha256 of the download differs from the index"):
        context(tmp_path).release_tree("pkg", "0.5", file).read("pkg/core.py")


def test_a_transient_flip_heals(server, tmp_path):
    file = publish(server, "pkg-0.5.tar.gz", make_sdist("pkg-0.5", FILES))
    server.fault("/files/pkg-0.5.tar.gz", "flip")
    tree = context(tmp_path).release_tree("pkg", "0.5", file)
    assert tree.read("pkg/core.py") == FILES["src/pkg/core.py"]


def test_unpacked_size_is_capped(server, tmp_path):
    file = publish(server, "pkg-0.5.tar.gz", make_sdist("pkg-0.5", {"pkg/big.py": b"#" * 200_000}))
    with pytest.raises(SourceError, match="unpacks to over 100000 bytes"):
        context(tmp_path, max_unpacked=100_000).release_tree("pkg", "0.5", file).read("pkg/big.py")


def test_download_size_is_capped(server, tmp_path):
    data = make_sdist("pkg-0.5", FILES)
    file = publish(server, "pkg-0.5.tar.gz", data, with_hash=False)
    with pytest.raises(SourceError, match="exceeds the 100 byte limit"):
        context(tmp_path, max_download=100).release_tree("pkg", "0.5", file).read("pkg/core.py")


def test_not_a_tar_is_an_error(server, tmp_path):
    file = publish(server, "pkg-0.5.tar.gz", b"this is not gzip at all")
    with pytest.raises(SourceError, match="not a readable tar archive"):
        context(tmp_path).release_tree("pkg", "0.5", file).read("pkg/core.py")


def test_zip_sdists_are_read_by_ranges(server, tmp_path):
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, data in FILES.items():
            archive.writestr(f"pkg-0.5/{path}", data)
    file = publish(server, "pkg-0.5.zip", out.getvalue())
    ctx = context(tmp_path)
    tree = ctx.release_tree("pkg", "0.5", file)
    assert tree.read("pkg/core.py") == FILES["src/pkg/core.py"]
    assert tree.read_meta("PKG-INFO") == FILES["PKG-INFO"]
    assert ctx.stats.as_dict()["whole_downloads"] == 0


def serve_index(server, name: str, data: bytes) -> str:
    """A PEP 691 page for project `pkg` listing one file; the index URL."""
    page = {
        "meta": {"api-version": "1.1"},
        "name": "pkg",
        "files": [{"filename": name, "url": f"/files/{name}", "hashes": {"sha256": sha256(data)}}],
    }
    server.add("/simple/pkg/", json.dumps(page).encode(), content_type=JSON_TYPE)
    server.add(f"/files/{name}", data)
    return server.url + "/simple/"


def test_a_locked_sdist_only_release_is_read_without_hanging(server, tmp_path):
    """A lock records no URL: the index is asked for it while the download is under way.
    That used to re-enter the reader's lock and hang forever, holding the cache lock."""
    data = make_sdist("pkg-0.5", FILES)
    index_url = serve_index(server, "pkg-0.5.tar.gz", data)
    locked = IndexFile("pkg-0.5.tar.gz", "", len(data), sha256(data))
    ctx = SourceContext(index_url=index_url, cache_dir=tmp_path, policy=FAST)
    outcome: list[object] = []

    def read() -> None:
        try:
            outcome.append(ctx.release_tree("pkg", "0.5", locked).read("pkg/core.py"))
        except Exception as exc:  # reported below, whatever it is
            outcome.append(exc)

    worker = threading.Thread(target=read, daemon=True)
    worker.start()
    worker.join(timeout=120)
    assert not worker.is_alive(), "reading a locked sdist hangs"
    assert outcome == [FILES["src/pkg/core.py"]]


def special_sdist(kind: bytes) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as archive:
        ok = tarfile.TarInfo("pkg-0.5/pkg/__init__.py")
        archive.addfile(ok, io.BytesIO(b""))
        special = tarfile.TarInfo("pkg-0.5/pkg/core.py")
        special.type = kind
        archive.addfile(special)
    return out.getvalue()


@pytest.mark.parametrize(
    ("kind", "why"),
    [(tarfile.CHRTYPE, "a device"), (tarfile.BLKTYPE, "a device"), (tarfile.FIFOTYPE, "a FIFO")],
)
def test_device_and_fifo_members_are_errors_not_absent_files(server, tmp_path, kind, why):
    file = publish(server, "pkg-0.5.tar.gz", special_sdist(kind))
    tree = context(tmp_path).release_tree("pkg", "0.5", file)
    with pytest.raises(SourceError, match=why):
        tree.read("pkg/core.py")
    assert tree.read("pkg/__init__.py") == b""


def test_a_member_over_the_source_cap_is_an_error_and_never_cached(server, tmp_path):
    files = {"pkg/core.py": b"x = 1\n" * 5000, "pkg/small.py": b"y = 2\n"}
    file = publish(server, "pkg-0.5.tar.gz", make_sdist("pkg-0.5", files))
    tree = context(tmp_path / "cache", max_member=10_000).release_tree("pkg", "0.5", file)
    with pytest.raises(SourceError, match="over the 10000 byte cap"):
        tree.read("pkg/core.py")
    assert tree.read("pkg/small.py") == b"y = 2\n"
    cached = sum(p.stat().st_size for p in (tmp_path / "cache").rglob("*") if p.is_file())
    assert cached < 10_000


def test_the_number_of_members_is_capped(server, tmp_path):
    files = {f"pkg/m{i}.py": b"" for i in range(50)}
    file = publish(server, "pkg-0.5.tar.gz", make_sdist("pkg-0.5", files))
    with pytest.raises(SourceError, match="over 20 members"):
        context(tmp_path, max_members=20).release_tree("pkg", "0.5", file).read("pkg/m1.py")


def test_an_archive_refused_once_is_not_unpacked_again_for_the_next_read(server, tmp_path):
    """Each check of the release reads the tree: the refusal is the same every time, and the
    archive is fetched and unpacked once (a 100,000-member sdist took ~4 s of CPU a time)."""
    files = {f"pkg/m{i}.py": b"" for i in range(50)}
    file = publish(server, "pkg-0.5.tar.gz", make_sdist("pkg-0.5", files))
    tree = context(tmp_path, max_members=20).release_tree("pkg", "0.5", file)
    refusals = []
    for name in ("pkg/m1.py", "pkg/m2.py", "pkg/m1.py"):
        with pytest.raises(SourceError, match="over 20 members") as refused:
            tree.read(name)
        refusals.append(str(refused.value))
    assert len(set(refusals)) == 1
    assert len(server.requests_to("/files/pkg-0.5.tar.gz")) == 1


def test_a_header_declaring_a_huge_long_name_is_refused(server, tmp_path):
    """A GNU long-name header makes tarfile read its whole declared size at once."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz", format=tarfile.GNU_FORMAT) as archive:
        long = tarfile.TarInfo("pkg-0.5/pkg/" + "n" * 200_000 + ".py")
        archive.addfile(long, io.BytesIO(b""))
    file = publish(server, "pkg-0.5.tar.gz", out.getvalue())
    tree = context(tmp_path, max_member=50_000).release_tree("pkg", "0.5", file)
    with pytest.raises(SourceError, match="asks for over"):
        tree.read("pkg/core.py")


def test_an_ill_typed_cached_listing_is_fetched_again(server, tmp_path):
    file = publish(server, "pkg-0.5.tar.gz", make_sdist("pkg-0.5", FILES))
    ctx = context(tmp_path)
    ctx.cache.put(f"{release_key('pkg', file)}#listing", b'{"files": [1, 2], "links": {}}')
    tree = ctx.release_tree("pkg", "0.5", file)
    assert tree.read("pkg/core.py") == FILES["src/pkg/core.py"]
