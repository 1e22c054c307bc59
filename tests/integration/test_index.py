"""The simple-API index client against a fake index speaking PEP 691 JSON and PEP 503 HTML."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from servers import FAST, make_wheel, serving, sha256

from canary.cache.stats import Stats
from canary.settings import Settings
from canary.sources.context import SourceContext
from canary.sources.http import Http
from canary.sources.index import IndexClient, IndexFile, Project, pip_index_url
from canary.sources.tree import SourceError

JSON_TYPE = "application/vnd.pypi.simple.v1+json"
WHEEL = make_wheel("pkg", "1.1", {"pkg/__init__.py": b"VALUE = 11\n"})


def json_page(files: list[dict], versions: list[str] | None = None) -> bytes:
    page: dict = {"meta": {"api-version": "1.1"}, "name": "pkg", "files": files}
    if versions is not None:
        page["versions"] = versions
    return json.dumps(page).encode()


def entry(filename: str, url: str, **extra) -> dict:
    return {"filename": filename, "url": url, "hashes": {"sha256": "ab" * 32}, **extra}


PKG_PAGE = json_page(
    [
        entry("pkg-1.0.tar.gz", "../../files/pkg-1.0.tar.gz", size=10),
        entry("pkg-1.0-cp311-cp311-manylinux_2_17_x86_64.whl", "/files/pkg-1.0-cp311.whl"),
        entry("pkg-1.0-py3-none-any.whl", "../../files/pkg-1.0-py3-none-any.whl", size=20),
        {
            **entry("pkg-1.1-py3-none-any.whl", "../../files/pkg-1.1-py3-none-any.whl"),
            "hashes": {"sha256": sha256(WHEEL)},
            "size": len(WHEEL),
            "requires-python": ">=3.10",
        },
        entry("pkg-0.9.tar.gz", "https://elsewhere.invalid/pkg-0.9.tar.gz", yanked="broken"),
        entry("pkg-0.9-py2-none-any.whl", "/f/pkg-0.9-py2-none-any.whl", yanked=True),
        entry("pkg-0.8.zip", "/f/pkg-0.8.zip"),
        entry("pkg-0.8-cp39-cp39-win_amd64.whl", "/f/pkg-0.8-cp39-cp39-win_amd64.whl"),
        entry("pkg-0.7.exe", "/f/pkg-0.7.exe"),
    ],
    versions=["1.0", "1.1", "0.9", "0.8", "0.7", "2.0"],
)

OLD_PAGE = b"""<!DOCTYPE html><html><body>
<a href="../../files/old-1.0.tar.gz#sha256=%s" data-requires-python="&gt;=3.8">old-1.0.tar.gz</a>
<a href="/files/old-1.1-py2.py3-none-any.whl" data-yanked="">old-1.1-py2.py3-none-any.whl</a>
<a href="https://mirror.invalid/x/old-1.1.tar.gz#md5=00">old-1.1.tar.gz</a>
</body></html>""" % (b"cd" * 32)


@pytest.fixture
def index():
    with serving() as server:
        server.add("/simple/pkg/", PKG_PAGE, content_type=JSON_TYPE, etag='"p1"')
        server.add("/simple/old/", OLD_PAGE, content_type="text/html; charset=utf-8")
        server.add("/simple/weird/", b"{}", content_type="application/json")
        server.add("/files/pkg-1.1-py3-none-any.whl", WHEEL)
        yield server


def client(server) -> IndexClient:
    return IndexClient(Http(Stats(), FAST), server.url + "/simple")


def test_json_page_files_versions_and_relative_urls(index):
    project = client(index).project("PKG")
    assert project.versions == ["1.0", "1.1", "0.9", "0.8", "0.7", "2.0"]
    assert index.log[0].headers["Accept"].startswith(JSON_TYPE)
    wheel = project.pick_file("1.1")
    assert wheel == IndexFile(
        "pkg-1.1-py3-none-any.whl",
        index.url + "/files/pkg-1.1-py3-none-any.whl",
        len(WHEEL),
        sha256(WHEEL),
        False,
        ">=3.10",
    )
    assert project.files("1.0")[0].url == index.url + "/files/pkg-1.0.tar.gz"
    assert project.files("1.0")[1].url == index.url + "/files/pkg-1.0-cp311.whl"


def test_pick_file_prefers_pure_wheels_then_wheels_then_sdists(index):
    project = client(index).project("pkg")
    assert project.pick_file("1.0").filename == "pkg-1.0-py3-none-any.whl"
    assert project.pick_file("1.0.0").filename == "pkg-1.0-py3-none-any.whl"
    assert project.pick_file("0.8").filename == "pkg-0.8-cp39-cp39-win_amd64.whl"
    picked = project.pick_file("0.9")
    assert picked.filename == "pkg-0.9-py2-none-any.whl" and picked.yanked
    assert all(f.yanked for f in project.files("0.9"))
    assert project.pick_file("0.7") is None  # only an installer nobody can read
    assert project.pick_file("2.0") is None  # listed, no files
    assert project.pick_file("not a version") is None


def test_pick_file_among_platform_wheels_is_linux_x86_64_whatever_the_listing_order():
    names = [
        "big-0.5-py3-none-macosx_14_0_arm64.whl",
        "big-0.5-py3-none-win_amd64.whl",
        "big-0.5-py3-none-manylinux_2_24_x86_64.whl",
        "big-0.5-py3-none-manylinux_2_24_aarch64.whl",
        "big-0.5.tar.gz",
    ]
    for order in (names, names[::-1]):
        files = [IndexFile(n, "/f/" + n, 1, None, False, None) for n in order]
        project = Project("big", ["0.5"], files)
        assert project.pick_file("0.5").filename == "big-0.5-py3-none-manylinux_2_24_x86_64.whl"
    others = [IndexFile(n, "/f/" + n, 1, None, False, None) for n in (names[1], names[0])]
    assert Project("big", ["0.5"], others).pick_file("0.5").filename == names[0]


def test_html_fallback_with_hashes_yanked_and_requires_python(index):
    project = client(index).project("old")
    assert project.versions == ["1.0", "1.1"]
    sdist = project.pick_file("1.0")
    assert sdist == IndexFile(
        "old-1.0.tar.gz", index.url + "/files/old-1.0.tar.gz", None, "cd" * 32, False, ">=3.8"
    )
    wheel, other = project.files("1.1")
    assert wheel.url == index.url + "/files/old-1.1-py2.py3-none-any.whl" and wheel.yanked
    assert other.sha256 is None and other.url == "https://mirror.invalid/x/old-1.1.tar.gz"
    assert project.pick_file("1.1") == other  # a file that is not yanked wins over a wheel


def test_unexpected_content_type_is_an_error(index):
    with pytest.raises(SourceError, match="unexpected content type 'application/json'"):
        client(index).project("weird")


def test_unknown_project_is_an_error_naming_it(index):
    with pytest.raises(SourceError, match=r"/simple/nothing/: project 'nothing' not found"):
        client(index).project("nothing")


def test_context_picks_and_reads_a_release_from_the_index(index, tmp_path):
    ctx = SourceContext(index_url=index.url + "/simple/", cache_dir=tmp_path, policy=FAST)
    tree = ctx.release_tree("pkg", "1.1")
    assert tree is not None and tree.read("pkg/__init__.py") == b"VALUE = 11\n"
    assert ctx.release_tree("pkg", "2.0") is None


def test_project_pages_are_cached_and_revalidated(index, tmp_path):
    ctx = SourceContext(index_url=index.url + "/simple/", cache_dir=tmp_path, policy=FAST)
    ctx.index.project("pkg")
    again = SourceContext(index_url=index.url + "/simple/", cache_dir=tmp_path, policy=FAST)
    assert again.index.project("pkg").versions[0] == "1.0"
    assert again.stats.as_dict()["requests"] == 0
    again.index.project("pkg", refresh=True)
    assert index.log[-1].headers["If-None-Match"] == '"p1"'
    offline = SourceContext(offline=True, index_url=index.url + "/simple/", cache_dir=tmp_path)
    assert offline.index.project("pkg").pick_file("1.1").filename.endswith(".whl")
    with pytest.raises(SourceError, match=r"offline: index page .*/simple/old/ not in cache"):
        offline.index.project("old")


def test_malformed_json_is_an_error(index):
    index.add("/simple/bad/", b"{not json", content_type=JSON_TYPE)
    with pytest.raises(SourceError, match="malformed index page"):
        client(index).project("bad")


def test_project_parses_versions_from_filenames_when_not_listed():
    files = [IndexFile("a-1.0-py3-none-any.whl", "u"), IndexFile("a-2.0.tar.gz", "v")]
    assert Project("a", ["1.0", "2.0"], files).files("2.0") == [files[1]]


def test_index_url_precedence(monkeypatch, tmp_path):
    config = tmp_path / "pip.conf"
    config.write_text("[global]\nindex-url = http://from-pip-config.invalid/simple\n")
    monkeypatch.setenv("PIP_CONFIG_FILE", str(config))
    monkeypatch.setenv("PIP_INDEX_URL", "http://from-pip-env.invalid/simple")
    monkeypatch.setenv("CANARY_INDEX_URL", "http://from-canary.invalid/simple")
    assert Settings.from_environment().index_url == "http://from-canary.invalid/simple"
    monkeypatch.delenv("CANARY_INDEX_URL")
    assert Settings.from_environment().index_url == "http://from-pip-env.invalid/simple"
    monkeypatch.delenv("PIP_INDEX_URL")
    assert Settings.from_environment().index_url is None  # then pip's files, then its default
    assert pip_index_url() == "http://from-pip-config.invalid/simple"


def test_index_url_defaults_to_pips_own(monkeypatch):
    for variable in ("CANARY_INDEX_URL", "PIP_INDEX_URL"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)  # pip then reads no configuration file
    code = "from pip._internal.models.index import PyPI; print(PyPI.simple_url)"
    expected = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert expected.startswith("https://")
    assert pip_index_url() == expected


def test_labels_that_would_break_a_lock_or_a_terminal_are_left_out(index):
    labels = ["1.0", "1.1\n2.0", "1.2\u2028", "1.3\x1b[31m", 4, "1.4 ", "1.5"]
    index.add("/simple/odd/", json_page([], versions=labels), content_type=JSON_TYPE)
    assert client(index).project("odd").versions == ["1.0", "1.5"]


@pytest.mark.parametrize(
    ("field", "value", "why"),
    [
        ("hashes", {"sha256": 12345}, "sha256 is int"),
        ("hashes", {"sha256": "not hex"}, "sha256 is not 64 hex digits"),
        ("hashes", [1], "hashes is list"),
        ("url", 7, "url is int"),
        ("url", "/files/\udc80.whl", "url is not valid Unicode"),
        ("requires-python", {"a": 1}, "requires-python is dict"),
    ],
)
def test_a_malformed_entry_is_an_error_for_its_release_only(index, tmp_path, field, value, why):
    good = entry("pkg-1.0-py3-none-any.whl", "/files/a.whl")
    bad = {**entry("pkg-1.1-py3-none-any.whl", "/files/b.whl"), field: value}
    index.add("/simple/pkg/", json_page([good, bad]), content_type=JSON_TYPE)
    ctx = SourceContext(index_url=index.url + "/simple/", cache_dir=tmp_path, policy=FAST)
    assert ctx.index.project("pkg").pick_file("1.0").url == index.url + "/files/a.whl"
    with pytest.raises(SourceError, match=f"pkg-1.1-py3-none-any.whl.*malformed: {why}"):
        ctx.release_tree("pkg", "1.1")


def test_a_deep_json_page_is_an_error_not_a_crash(index):
    index.add("/simple/deep/", b"[" * 100_000 + b"]" * 100_000, content_type=JSON_TYPE)
    with pytest.raises(SourceError, match="malformed index page: RecursionError"):
        client(index).project("deep")


def test_a_password_in_the_index_url_reaches_its_host_and_nothing_at_rest(index, tmp_path):
    secret_url = index.url.replace("http://", "http://user:hunter2@") + "/simple/"
    ctx = SourceContext(index_url=secret_url, cache_dir=tmp_path, policy=FAST)
    project = ctx.index.project("pkg")
    assert index.log[-1].headers["Authorization"].startswith("Basic ")
    same_host = project.pick_file("1.1").url
    assert same_host.startswith("http://user:hunter2@127.0.0.1:")  # sent to its own host
    elsewhere = [f.url for f in project.files("0.9") if "elsewhere" in f.url]
    assert elsewhere == ["https://elsewhere.invalid/pkg-0.9.tar.gz"]  # no password elsewhere
    assert ctx.release_tree("pkg", "1.1").read("pkg/__init__.py") == b"VALUE = 11\n"
    for path in tmp_path.rglob("*"):
        assert not path.is_file() or b"hunter2" not in path.read_bytes(), path
    index.routes["/simple/pkg/"].faults.extend(["503"] * 5)
    with pytest.raises(SourceError) as caught:
        ctx.index.project("pkg", refresh=True)
    assert "hunter2" not in str(caught.value)


def test_an_ill_typed_cached_page_is_fetched_again(index, tmp_path):
    from canary.sources.http import Reply

    ctx = SourceContext(index_url=index.url + "/simple/", cache_dir=tmp_path, policy=FAST)
    url = index.url + "/simple/pkg/"
    bad = Reply(url, 200, {"Content-Type": JSON_TYPE}, b'{"files": 7}')
    ctx.cache.revalidate(f"index:{url}", "page", lambda _etag: bad)
    assert ctx.index.project("pkg").versions[0] == "1.0"
