"""Releases with only an sdist: downloaded whole (tar has no index), read in memory, cached."""

from __future__ import annotations

import io
import tarfile
import zipfile

import pytest
from servers import FAST, make_sdist, serving, sha256

from canary.sources.context import SourceContext
from canary.sources.index import IndexFile
from canary.sources.limits import Limits
from canary.sources.tree import SourceError

FILES = {
    "src/pkg/__init__.py": b"__version__ = '0.5'\n",
    "src/pkg/core.py": b"def run():\n    pass\n",
    "pyproject.toml": b"[project]\nname = 'pkg'\n",
    "PKG-INFO": b"Metadata-Version: 2.1\nName: pkg\nVersion: 0.5\n",
}


@pytest.fixture
def server():
    with serving() as running:
        yield running


def publish(server, name: str, data: bytes, *, with_hash: bool = True) -> IndexFile:
    server.add(f"/files/{name}", data)
    digest = sha256(data) if with_hash else None
    return IndexFile(name, f"{server.url}/files/{name}", len(data), digest)


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
