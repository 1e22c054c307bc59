"""GitHub refs read from a fake raw-content host and a fake API host for tarballs."""

from __future__ import annotations

import pytest
from servers import FAST, make_sdist, serving

from canary.sources.context import SourceContext
from canary.sources.tree import SourceError

REPO_FILES = {
    "src/pkg/__init__.py": b"__version__ = '2.0.dev0'\n",
    "src/pkg/core.py": b"def run(model):\n    return model\n",
    "pyproject.toml": b"[project]\nname = 'pkg'\n",
}
MANY = {f"src/pkg/m{i}.py": f"X = {i}\n".encode() for i in range(45)}


@pytest.fixture
def github():
    with serving() as server:
        for path, data in REPO_FILES.items():
            server.add(f"/raw/owner/repo/main/{path}", data, etag=f'"{len(data)}"')  # core.py: "33"
        server.add("/raw/owner/repo/release/v2/src/pkg/core.py", b"branch with a slash\n")
        tarball = make_sdist("owner-repo-0123abc", {**REPO_FILES, **MANY}, {"src/pkg/ln.py": "x"})
        server.add("/api/repos/owner/repo/tarball/main", tarball)
        for ref in ("main", "release%2Fv2"):
            server.add(f"/api/repos/owner/repo/commits/{ref}", b"0123abc" * 5, etag='"sha"')
        yield server


def context(server, tmp_path, **options) -> SourceContext:
    return SourceContext(
        cache_dir=tmp_path,
        policy=FAST,
        github_raw_url=server.url + "/raw",
        github_api_url=server.url + "/api/",
        **options,
    )


def test_reads_files_under_src_and_meta_files_at_the_root(github, tmp_path):
    tree = context(github, tmp_path).github_tree("owner/repo", "main", "src")
    assert tree.kind == "github"
    assert tree.read("pkg/core.py") == REPO_FILES["src/pkg/core.py"]
    assert tree.read_meta("pyproject.toml") == REPO_FILES["pyproject.toml"]
    assert tree.read("pkg/absent.py") is None


def test_refs_with_slashes_are_kept_as_paths(github, tmp_path):
    tree = context(github, tmp_path).github_tree("owner/repo", "release/v2", "src")
    assert tree.read("pkg/core.py") == b"branch with a slash\n"


def test_fresh_entries_make_no_request_and_stale_ones_revalidate(github, tmp_path):
    first = context(github, tmp_path)
    first.github_tree("owner/repo", "main", "src").read("pkg/core.py")
    assert first.github_tree("owner/repo", "main", "src").read("pkg/absent.py") is None

    warm = context(github, tmp_path)
    tree = warm.github_tree("owner/repo", "main", "src")
    assert tree.read("pkg/core.py") == REPO_FILES["src/pkg/core.py"]
    assert tree.read("pkg/absent.py") is None  # absence is remembered too
    assert warm.stats.as_dict()["requests"] == 0

    stale = context(github, tmp_path, max_age=0)
    assert stale.github_tree("owner/repo", "main", "src").read("pkg/core.py") is not None
    assert github.log[-1].headers["If-None-Match"] == '"33"'
    assert stale.stats.as_dict()["bytes_downloaded"] < 200  # a 304 carries no body


def test_absence_at_a_missing_ref_is_an_error_not_a_fail(github, tmp_path):
    ctx = context(github, tmp_path)
    tree = ctx.github_tree("owner/repo", "v9.9.9", "src")
    with pytest.raises(SourceError, match=r"ref 'v9\.9\.9' not found in owner/repo"):
        tree.read("pkg/core.py")


def test_the_ref_is_confirmed_once_per_tree(github, tmp_path):
    ctx = context(github, tmp_path)
    tree = ctx.github_tree("owner/repo", "main", "src")
    assert tree.read("pkg/absent.py") is None
    assert tree.read("pkg/absent2.py") is None
    assert len(github.requests_to("/api/repos/owner/repo/commits/main")) == 1


def test_changed_files_replace_the_cached_ones(github, tmp_path):
    context(github, tmp_path).github_tree("owner/repo", "main", "src").read("pkg/core.py")
    github.add("/raw/owner/repo/main/src/pkg/core.py", b"def run(): pass\n", etag='"new"')
    tree = context(github, tmp_path, max_age=0).github_tree("owner/repo", "main", "src")
    assert tree.read("pkg/core.py") == b"def run(): pass\n"


@pytest.mark.parametrize("fault", ["reset", "503", "truncate", "429:0"])
def test_transient_faults_end_in_the_right_bytes(github, tmp_path, fault):
    github.fault("/raw/owner/repo/main/src/pkg/core.py", fault)
    tree = context(github, tmp_path).github_tree("owner/repo", "main", "src")
    assert tree.read("pkg/core.py") == REPO_FILES["src/pkg/core.py"]


def test_persistent_failures_are_errors_with_the_url(github, tmp_path):
    github.fault("/raw/owner/repo/main/src/pkg/core.py", *["500"] * 5)
    tree = context(github, tmp_path).github_tree("owner/repo", "main", "src")
    with pytest.raises(SourceError, match=r"/raw/owner/repo/main/src/pkg/core\.py: HTTP 500"):
        tree.read("pkg/core.py")


def test_many_files_come_as_one_tarball(github, tmp_path):
    ctx = context(github, tmp_path)
    tree = ctx.github_tree("owner/repo", "main", "src")
    wanted = [p.removeprefix("src/") for p in MANY] + ["pkg/absent.py"]
    tree.prefetch(wanted, meta=["pyproject.toml"])
    assert ctx.stats.as_dict()["requests"] == 1
    assert tree.read("pkg/m7.py") == b"X = 7\n"
    assert tree.read("pkg/absent.py") is None
    assert tree.read_meta("pyproject.toml") == REPO_FILES["pyproject.toml"]
    with pytest.raises(SourceError, match="is a link"):
        tree.read("pkg/ln.py")
    assert ctx.stats.as_dict()["requests"] == 1

    warm = context(github, tmp_path)
    assert warm.github_tree("owner/repo", "main", "src").read("pkg/m9.py") == b"X = 9\n"
    assert warm.github_tree("owner/repo", "main", "src").read("pkg/absent.py") is None
    assert warm.stats.as_dict()["requests"] == 0


def test_few_files_are_fetched_one_by_one(github, tmp_path):
    ctx = context(github, tmp_path)
    tree = ctx.github_tree("owner/repo", "main", "src")
    tree.prefetch(["pkg/core.py"])
    assert ctx.stats.as_dict()["requests"] == 0
    tree.read("pkg/core.py")
    assert github.log[-1].path == "/raw/owner/repo/main/src/pkg/core.py"


def test_offline_uses_stale_entries_and_misses_are_errors(github, tmp_path):
    context(github, tmp_path).github_tree("owner/repo", "main", "src").read("pkg/core.py")
    offline = context(github, tmp_path, offline=True, max_age=0)
    tree = offline.github_tree("owner/repo", "main", "src")
    assert tree.read("pkg/core.py") == REPO_FILES["src/pkg/core.py"]
    with pytest.raises(SourceError, match=r"offline: .*__init__\.py not in cache"):
        tree.read("pkg/__init__.py")
    assert offline.stats.as_dict()["requests"] == 0


def test_token_is_sent_to_the_github_hosts(github, tmp_path, monkeypatch):
    monkeypatch.setenv("GITHUB_TOKEN", "gh-secret")
    context(github, tmp_path).github_tree("owner/repo", "main", "src").read("pkg/core.py")
    assert github.log[-1].headers["Authorization"] == "Bearer gh-secret"


def test_base_urls_come_from_the_environment(github, tmp_path, monkeypatch):
    monkeypatch.setenv("CANARY_GITHUB_RAW_URL", github.url + "/raw/")
    ctx = SourceContext(cache_dir=tmp_path, policy=FAST)
    assert ctx.github_tree("owner/repo", "main", "").read("pyproject.toml") is not None


@pytest.mark.parametrize(
    ("repo", "ref", "src", "path"),
    [
        ("owner", "main", "", "a.py"),
        ("owner/repo/extra", "main", "", "a.py"),
        ("owner/repo", "../main", "", "a.py"),
        ("owner/repo", "main", "../src", "a.py"),
        ("owner/repo", "main", "src", "../secrets.py"),
    ],
)
def test_malformed_names_are_refused(github, tmp_path, repo, ref, src, path):
    with pytest.raises(SourceError):
        context(github, tmp_path).github_tree(repo, ref, src).read(path)
