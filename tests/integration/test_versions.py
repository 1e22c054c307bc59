"""Version resolution, locks and `--versions` selection against a loopback fake index.

The index is a real HTTP server on 127.0.0.1 serving PEP 691 JSON pages; canary reaches it
through its own index client, configured the way users configure it (CANARY_INDEX_URL).
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import zipfile
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer

from canary import api
from canary.engine.runner import Runner
from canary.matrix.lock import lock_path, read_lock
from canary.matrix.model import Matrix, MatrixError, load_matrix
from canary.matrix.targets import Target
from canary.matrix.versions import (
    SelectionError,
    needs_index,
    resolve,
    select_targets,
    version_listing,
)
from canary.reports.dispatch import render
from canary.reports.jsonio import load_json
from canary.settings import Settings
from canary.sources.context import SourceContext
from canary.sources.tree import SourceError


def run_lock(
    path: str, *, check: bool, out: io.StringIO, accept_changed: tuple[str, ...] = ()
) -> int:
    """`canary lock` through the library: its lines written to `out`, its exit status."""
    report = api.lock([path], check=check, accept_changed=accept_changed)
    out.writelines(f"{line}\n" for line in report.lines)
    return report.exit_code(check)


def run_versions(path: str, out: io.StringIO) -> None:
    """`canary versions` through the library: the listing written to `out`."""
    out.writelines(f"{line}\n" for line in version_listing(load_matrix(path), api.resolve(path)))


JSON_TYPE = "application/vnd.pypi.simple.v1+json"


def sha(filename: str) -> str:
    return hashlib.sha256(filename.encode()).hexdigest()


def dist(version: str, kind: str = "pure", yanked: bool | str = False) -> dict:
    """One file entry of a PEP 691 page; the URL is relative, as indexes may give it."""
    filename = {
        "pure": f"demo-{version}-py3-none-any.whl",
        "binary": f"demo-{version}-cp311-cp311-manylinux_2_17_x86_64.whl",
        "sdist": f"demo-{version}.tar.gz",
    }[kind]
    return {
        "filename": filename,
        "url": f"/files/{filename}",
        "hashes": {"sha256": sha(filename)},
        "size": 1000 + len(filename),
        "yanked": yanked,
    }


class FakeIndex:
    """The project page of `demo`, replaceable mid-test (a release appears, one is yanked)."""

    def __init__(self, server: HTTPServer):
        self.server = server

    def serve(self, versions: list[str], files: list[dict] | None = None) -> None:
        """`versions` exactly as listed (unsorted); by default one pure wheel per version.
        The page replaces the previous one and every file handler."""
        if files is None:
            files = [dist(v) for v in versions]
        page = {"meta": {"api-version": "1.1"}, "name": "demo", "versions": versions}
        self.server.clear_all_handlers()
        self.server.expect_request("/simple/demo/").respond_with_json(
            {**page, "files": files}, content_type=JSON_TYPE
        )

    @property
    def requests(self) -> int:
        return len(self.server.log)

    def url(self, filename: str) -> str:
        return self.server.url_for(f"/files/{filename}")


@pytest.fixture
def index(httpserver: HTTPServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    monkeypatch.setenv("CANARY_INDEX_URL", httpserver.url_for("/simple/"))
    monkeypatch.setenv("CANARY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("CANARY_OFFLINE", raising=False)
    yield FakeIndex(httpserver)


def matrix_file(folder: Path, versions: str, name: str = "demo") -> Matrix:
    """A matrix with `versions` given as the YAML body of its versions block."""
    path = folder / "matrices" / f"{name}.yaml"
    path.parent.mkdir(exist_ok=True)
    body = "".join(f"  {line}\n" for line in versions.strip().splitlines())
    path.write_text(
        f"upstream: {name}\npypi: demo\nversions:\n{body}checks:\n  - id: top\n    module: demo\n",
        encoding="utf-8",
    )
    return load_matrix(path)


def labels(targets: list[Target]) -> list[str]:
    return [t.label for t in targets]


def released(matrix: Matrix) -> list[str]:
    return [label for label, _ in resolve(matrix, SourceContext().index).releases]


# -- resolution ------------------------------------------------------------------------------


def test_final_releases_in_range_in_pep440_order(index, tmp_path):
    index.serve(["1.0.0", "0.9.0", "0.10.0", "0.8.0", "0.9.1", "2.0.0"])
    matrix = matrix_file(tmp_path, 'releases: ">=0.9,<2"')
    assert released(matrix) == ["0.9.0", "0.9.1", "0.10.0", "1.0.0"]


@pytest.mark.parametrize(
    ("prereleases", "expected"),
    [
        ("false", ["1.0.0", "1.0.0.post1", "1.1.0"]),
        (
            "true",
            ["1.0.0", "1.0.0.post1", "1.1.0.dev0", "1.1.0a1", "1.1.0rc1", "1.1.0", "1.2.0.dev3"],
        ),
    ],
)
def test_pre_dev_and_post_releases(index, tmp_path, prereleases, expected):
    index.serve(
        ["1.1.0rc1", "1.0.0.post1", "1.2.0.dev3", "1.1.0", "1.1.0a1", "1.0.0", "1.1.0.dev0"]
    )
    matrix = matrix_file(tmp_path, f'releases: ">=1.0"\nprereleases: {prereleases}')
    assert released(matrix) == expected


def test_yanked_releases_are_left_out_and_reported(index, tmp_path):
    index.serve(
        ["1.0.0", "1.1.0", "1.2.0", "1.3.0"],
        [
            dist("1.0.0"),
            dist("1.1.0", yanked="broken upload"),
            dist("1.1.0", "sdist", yanked=True),
            dist("1.2.0", yanked=True),  # one of two files yanked: the release stands
            dist("1.2.0", "sdist"),
            dist("1.3.0"),
        ],
    )
    resolution = resolve(matrix_file(tmp_path, 'releases: ">=1.0"'), SourceContext().index)
    assert [label for label, _ in resolution.releases] == ["1.0.0", "1.2.0", "1.3.0"]
    assert resolution.yanked == ["1.1.0"]
    assert resolution.files()["1.2.0"].filename == "demo-1.2.0.tar.gz"


def test_include_exclude_and_files(index, tmp_path):
    index.serve(
        ["0.5.0", "not a version", "1.0.0", "1.1.0", "1.2.0", "1.3.0", "0.6.0"],
        [
            dist("0.5.0"),
            dist("1.0.0", "sdist"),
            dist("1.0.0", "binary"),
            dist("1.0.0"),
            dist("1.1.0", "binary"),
            dist("1.1.0", "sdist"),
            dist("1.2.0"),
            dist("0.6.0", yanked=True),
            # 1.3.0 is listed without files: kept, to be read from GitHub
        ],
    )
    matrix = matrix_file(
        tmp_path,
        'releases: ">=1.0"\ninclude: [main, "0.5.0", "0.6.0", "0.7.0", dev]\nexclude: ["1.2.0"]',
    )
    resolution = resolve(matrix, SourceContext().index)
    files = resolution.files()
    assert list(files) == ["0.5.0", "0.6.0", "0.7.0", "1.0.0", "1.1.0", "1.3.0"]
    assert resolution.branches == ["main", "dev"]
    assert resolution.yanked == []  # 0.6.0 is pinned by include: taken although yanked
    assert files["1.0.0"].filename == "demo-1.0.0-py3-none-any.whl"  # pure wheel first
    assert files["1.1.0"].filename.endswith("manylinux_2_17_x86_64.whl")  # then any wheel
    assert files["1.0.0"].url == index.url("demo-1.0.0-py3-none-any.whl")
    assert files["1.0.0"].sha256 == sha("demo-1.0.0-py3-none-any.whl")
    assert files["0.7.0"] is None  # not on the index at all
    assert files["1.3.0"] is None  # listed without files


def test_without_releases_key(index, tmp_path):
    index.serve(["1.0.0", "0.1.0"])
    only_exact = matrix_file(tmp_path, 'include: ["0.1.0", main]')
    assert not needs_index(only_exact)
    everything = matrix_file(tmp_path, "include: [main]", name="other")
    assert needs_index(everything)
    assert released(everything) == ["0.1.0", "1.0.0"]


def test_missing_project_is_a_source_error(index, tmp_path):
    index.serve(["1.0.0"])
    index.server.expect_request("/simple/absent/").respond_with_data("gone", status=404)
    path = tmp_path / "absent.yaml"
    path.write_text("upstream: absent\nchecks:\n  - id: top\n    module: absent\n")
    with pytest.raises(SourceError, match="'absent' not found on the package index"):
        resolve(load_matrix(path), SourceContext().index)


# -- locks and selection ---------------------------------------------------------------------

TRL_LIKE = """\
releases: ">=0.9"
include: [main]
exclude: ["0.9.1"]
anchors: ["0.10.0", "1.0.0"]
broken:
  "0.9.2": "ships a bad import"
"""


@pytest.fixture
def locked(index, tmp_path) -> Matrix:
    """A matrix whose lock was written by `canary lock` from the fake index."""
    index.serve(["1.0.0", "0.9.2", "0.9.0", "0.9.1", "0.10.0", "1.1.0rc1", "0.8.0"])
    matrix = matrix_file(tmp_path, TRL_LIKE)
    assert run_lock(str(matrix.path), check=False, out=io.StringIO()) == 0
    index.server.clear_log()
    return matrix


def test_lock_is_written_beside_the_matrix(locked, index):
    path = locked.path.with_suffix(".lock")
    assert path.is_file()
    text = path.read_text()
    assert text.startswith("# generated by `canary lock`")
    filename = "demo-1.0.0-py3-none-any.whl"
    line = f"1.0.0 {filename} sha256={sha(filename)} size={1000 + len(filename)}"
    assert line in text.splitlines()
    assert text.splitlines()[-1] == "main branch"


def test_a_lock_records_no_url(locked, index):
    """The index gave every file an absolute URL; the lock written from it holds none."""
    assert "://" in index.url("demo-1.0.0-py3-none-any.whl")
    text = lock_path(locked).read_text(encoding="utf-8")
    assert "://" not in text
    assert "/files/" not in text
    assert len(text.splitlines()) == 2 + 4 + 1 + 1  # header, spec, 4 releases, next, main


@pytest.mark.parametrize(
    ("selection", "expected"),
    [
        ("releases", ["0.9.0", "0.9.2", "0.10.0", "1.0.0"]),
        ("all", ["0.9.0", "0.9.2", "0.10.0", "1.0.0", "1.1.0rc1", "main"]),
        ("anchors", ["0.10.0", "1.0.0"]),
        ("latest", ["1.0.0"]),
        (">=0.9.2,<1", ["0.9.2", "0.10.0"]),
        ("==0.9.*", ["0.9.0", "0.9.2"]),
        ("0.9.2,main,0.10.0", ["0.9.2", "main", "0.10.0"]),
    ],
)
def test_every_selection_reads_the_lock_and_never_the_index(locked, index, selection, expected):
    targets = select_targets(locked, selection, SourceContext())
    assert labels(targets) == expected
    assert index.requests == 0
    for target in targets:
        locked_release = target.label in ("0.9.0", "0.9.2", "0.10.0", "1.0.0", "1.1.0rc1")
        assert (target.file is not None) == locked_release
        assert target.branch == (target.label == "main")
        assert target.next == (target.label == "1.1.0rc1")
        if locked_release:
            filename = f"demo-{target.label}-py3-none-any.whl"
            assert target.file.filename == filename
            assert target.file.url == ""  # asked of the index only when bytes are needed
            assert target.file.sha256 == sha(filename)
            assert target.file.size == 1000 + len(filename)


def test_a_specifier_keeps_locked_prereleases(index, tmp_path):
    index.serve(["1.0.0", "1.1.0rc1", "0.9.0"])
    matrix = matrix_file(tmp_path, 'releases: ">=0.9"\nprereleases: true')
    assert run_lock(str(matrix.path), check=False, out=io.StringIO()) == 0
    assert labels(select_targets(matrix, ">=1.0", SourceContext())) == ["1.0.0", "1.1.0rc1"]


def test_a_list_matches_lock_entries_by_pep440(locked):
    (target,) = select_targets(locked, "1.0", SourceContext())
    assert target.label == "1.0"
    assert target.file is not None and target.file.filename == "demo-1.0.0-py3-none-any.whl"


def only_the_project_page(index: FakeIndex) -> bool:
    return all(request.path == "/simple/demo/" for request, _ in index.server.log)


def test_a_version_outside_the_lock_is_checked_against_the_index_once(locked, index):
    targets = select_targets(locked, "0.9.1,0.8.0", SourceContext())
    assert [(t.label, t.file) for t in targets] == [("0.9.1", None), ("0.8.0", None)]
    assert only_the_project_page(index)


def test_a_version_that_is_no_release_is_refused_before_any_fetch(locked, index):
    with pytest.raises(SelectionError) as refused:
        select_targets(locked, "1.0.0,9.9.9", SourceContext())
    assert str(refused.value).endswith(
        "--versions 9.9.9: not a release of demo on the package index (the newest is 1.1.0rc1)"
    )
    assert only_the_project_page(index)  # no file, no GitHub tag


@pytest.mark.parametrize(
    ("typo", "meant"), [("anchor", "anchors"), ("lastest", "latest"), ("mian", "main")]
)
def test_a_near_miss_of_a_keyword_or_branch_says_what_was_meant(locked, typo, meant):
    with pytest.raises(SelectionError, match=f"--versions {typo}: .*did you mean {meant}\\?"):
        select_targets(locked, typo, SourceContext())


def test_another_branch_may_be_named(locked):
    (target,) = select_targets(locked, "feature/new-loss", SourceContext())
    assert target.branch


def test_a_bad_specifier_is_a_usage_error(locked):
    with pytest.raises(SelectionError, match="--versions '>=x'"):
        select_targets(locked, ">=x", SourceContext())
    assert issubclass(SelectionError, MatrixError)


def test_without_a_lock_the_index_is_asked_and_the_output_says_so(index, tmp_path, capsys):
    index.serve(["1.0.0", "0.9.0"])
    matrix = matrix_file(tmp_path, 'releases: ">=0.9"')
    assert labels(select_targets(matrix, "releases", SourceContext())) == ["0.9.0", "1.0.0"]
    assert labels(select_targets(matrix, "all", SourceContext())) == ["0.9.0", "1.0.0"]
    err = capsys.readouterr().err
    assert err.count("no lock file; resolving versions from the package index") == 1
    assert str(matrix.path) in err
    assert index.requests >= 1


def test_a_lock_that_no_longer_matches_the_matrix_is_not_used(locked, index, capsys):
    changed = matrix_file(locked.path.parent.parent, TRL_LIKE.replace(">=0.9", ">=0.8"))
    assert labels(select_targets(changed, "releases", SourceContext())) == [
        "0.8.0",
        "0.9.0",
        "0.9.2",
        "0.10.0",
        "1.0.0",
    ]
    assert "the lock does not match `versions`" in capsys.readouterr().err


def test_exact_includes_need_no_index_and_no_lock(index, tmp_path):
    index.serve(["1.0.0"])
    matrix = matrix_file(tmp_path, 'include: ["1.0.0", "0.5", main]\nanchors: ["0.5"]')
    assert labels(select_targets(matrix, "all", SourceContext())) == ["0.5", "1.0.0", "main"]
    assert labels(select_targets(matrix, "anchors", SourceContext())) == ["0.5"]
    assert index.requests == 0


@pytest.mark.parametrize(
    ("versions", "key", "message"),
    [
        ('anchors: ["0.9.1"]', "anchors", "0.9.1 is also under `exclude`"),
        ('anchors: ["0.7.0"]', "anchors", "0.7.0 is not a resolved release"),
        ('anchors: ["1.0"]', "anchors", "1.0 is spelled '1.0.0'"),
        ('broken:\n  "1.1.0rc1": x', "broken", "1.1.0rc1 is not a resolved release"),
        ('anchors: ["0.9.5"]', "anchors", "0.9.5 is yanked on the package index"),
    ],
)
def test_anchors_and_broken_must_resolve(index, tmp_path, versions, key, message):
    index.serve(
        ["1.0.0", "0.9.1", "1.1.0rc1", "0.9.5"],
        [dist("1.0.0"), dist("0.9.1"), dist("1.1.0rc1"), dist("0.9.5", yanked=True)],
    )
    matrix = matrix_file(tmp_path, f'releases: ">=0.9"\nexclude: ["0.9.1"]\n{versions}')
    with pytest.raises(MatrixError) as caught:
        select_targets(matrix, "releases", SourceContext())
    line = matrix.line_of(f"versions.{key}")
    assert line > 1
    assert str(caught.value).startswith(f"{matrix.path}:{line}: versions.{key}: {message}")
    with pytest.raises(MatrixError, match=message):
        run_lock(str(matrix.path), check=False, out=io.StringIO())
    assert not lock_path(matrix).exists()


def test_a_corrupt_lock_names_its_line_and_lock_replaces_it(locked):
    path = lock_path(locked)
    lines = path.read_text().splitlines()
    lines[3] = "0.9.2 demo-0.9.2-py3-none-any.whl sha256=nothex size=1027"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(MatrixError) as caught:
        select_targets(locked, "releases", SourceContext())
    assert str(caught.value).startswith(f"{path}:4: ")
    out = io.StringIO()
    assert run_lock(str(locked.path), check=True, out=out) == 1
    assert f"{path}: the lock is corrupt ({path}:4: " in out.getvalue()
    assert run_lock(str(locked.path), check=False, out=io.StringIO()) == 0
    assert read_lock(path) is not None


# -- canary lock / canary versions -----------------------------------------------------------


def test_a_release_still_listed_but_outside_the_range_has_left_it(locked, index):
    """Narrowing `releases` is the maintainer's doing, not the index's: 0.9.0 and 0.9.2 are
    still on the index, so the lock says they left the range, and gone only for 0.9.2's
    deletion."""
    path = lock_path(locked)
    index.serve(["1.0.0", "0.9.0", "0.9.1", "0.10.0", "1.1.0rc1", "0.8.0"])
    narrowed = matrix_file(
        locked.path.parent.parent,
        TRL_LIKE.replace('">=0.9"', '">=0.10"')
        .replace('  "0.9.2": "ships a bad import"\n', "")
        .replace("broken:\n", ""),
    )
    out = io.StringIO()
    assert run_lock(str(narrowed.path), check=True, out=out) == 1
    report = out.getvalue()
    assert "1 left the range (0.9.0)" in report and "1 gone (0.9.2)" in report
    lines = version_listing(narrowed, api.resolve(narrowed.path))
    assert any(
        line.split() == ["0.9.0", "left", "the", "range", "since", "the", "lock"] for line in lines
    )
    assert any(line.split() == ["0.9.2", "gone", "since", "the", "lock"] for line in lines)
    assert path.exists()


def test_lock_refresh_reports_new_yanked_and_gone(locked, index):
    path = lock_path(locked)
    before = path.read_text()
    out = io.StringIO()
    assert run_lock(str(locked.path), check=True, out=out) == 0
    assert out.getvalue() == f"{path}: up to date (4 releases, 1 branch, next 1.1.0rc1)\n"

    # 1.2.0 is released, 0.10.0 yanked, 0.9.0 deleted from the index
    index.serve(
        ["1.0.0", "0.9.2", "0.10.0", "1.2.0"],
        [dist("1.0.0"), dist("0.9.2"), dist("0.10.0", yanked=True), dist("1.2.0")],
    )
    relaxed = matrix_file(locked.path.parent.parent, TRL_LIKE.replace('"0.10.0", ', ""))
    out = io.StringIO()
    assert run_lock(str(relaxed.path), check=True, out=out) == 1
    assert path.read_text() == before  # --check writes nothing
    report = out.getvalue()
    assert report.startswith(f"{path}: stale: ")
    assert "1 new (1.2.0)" in report
    assert "1 yanked (0.10.0)" in report
    assert "1 gone (0.9.0)" in report
    assert "1 pre-release dropped (1.1.0rc1)" in report

    out = io.StringIO()
    assert run_lock(str(relaxed.path), check=False, out=out) == 0
    assert out.getvalue().startswith(f"{path}: updated: ")
    lock = read_lock(path)
    assert lock is not None
    assert lock.resolution.labels() == ["0.9.2", "1.0.0", "1.2.0", "main"]
    assert lock.resolution.yanked == ["0.10.0"]
    assert run_lock(str(relaxed.path), check=True, out=io.StringIO()) == 0


LOCKED = ["1.0.0", "0.9.2", "0.9.0", "0.9.1", "0.10.0", "1.1.0rc1", "0.8.0"]


def test_one_new_release_is_only_new(locked, index):
    """The index gives URLs, the lock keeps none: that is no change of a locked file."""
    index.serve([*LOCKED, "1.0.1"])
    out = io.StringIO()
    assert run_lock(str(locked.path), check=True, out=out) == 1
    assert out.getvalue() == (
        f"{lock_path(locked)}: stale: 1 new (1.0.1) (5 releases, 1 branch, next 1.1.0rc1)\n"
    )


def test_a_locked_file_with_other_bytes_is_an_alarm(locked, index):
    files = [dist(v) for v in LOCKED]
    files[0] = {**files[0], "hashes": {"sha256": "f" * 64}, "size": 1}
    index.serve(LOCKED, files)
    path = lock_path(locked)
    for check in (True, False):  # an alarm fails `canary lock` too, not only --check
        out = io.StringIO()
        assert run_lock(str(locked.path), check=check, out=out) == 1
        lines = out.getvalue().splitlines()
        assert "1 changed (1.0.0)" in lines[0]
        assert lines[1].startswith(
            f"{path}: ALARM: 1.0.0: demo-1.0.0-py3-none-any.whl is not the file that was "
            f"locked (sha256 {sha('demo-1.0.0-py3-none-any.whl')} -> {'f' * 64}; size "
        )
        assert "A published file never changes" in lines[1]


def test_a_release_read_from_another_file_is_said_and_is_no_alarm(locked, index):
    files = [dist(v) for v in LOCKED]
    files[0] = dist("1.0.0", yanked="broken metadata")  # still listed, the same bytes
    files.append(dist("1.0.0", "binary"))  # a platform wheel, read now
    index.serve(LOCKED, files)
    out = io.StringIO()
    assert run_lock(str(locked.path), check=False, out=out) == 0
    assert "1 read from another file (1.0.0)" in out.getvalue()
    assert "ALARM" not in out.getvalue()


@pytest.mark.parametrize("listed", ["gone", "other bytes"])
def test_a_locked_file_replaced_by_one_of_another_name_is_an_alarm(locked, index, listed):
    """The locked wheel is gone from the index (or listed with other bytes) and a file of
    another name is read instead: what a lock exists to catch, as for a file of the same name."""
    files = [dist(v) for v in LOCKED]
    pure = "demo-1.0.0-py3-none-any.whl"
    if listed == "gone":
        files[0] = dist("1.0.0", "binary")
        said = "is gone from the index"
    else:
        files[0] = {**dist("1.0.0", yanked=True), "hashes": {"sha256": "e" * 64}}
        files.append(dist("1.0.0", "binary"))
        said = f"is listed with other bytes (sha256 {sha(pure)} -> {'e' * 64})"
    index.serve(LOCKED, files)
    path = lock_path(locked)
    before = path.read_text()
    out = io.StringIO()
    assert run_lock(str(locked.path), check=False, out=out) == 1
    lines = out.getvalue().splitlines()
    assert "1 replaced (1.0.0)" in lines[0]
    assert lines[1] == (
        f"{path}: ALARM: 1.0.0: {pure}, the file that was locked, {said}; "
        "demo-1.0.0-cp311-cp311-manylinux_2_17_x86_64.whl is read. A published file never "
        "changes: find out why (a compromised upload, a mirror serving other bytes) before you "
        "trust this release."
    )
    assert f"1.0.0 {pure} sha256={sha(pure)}" in path.read_text()  # the locked line is kept
    assert path.read_text() == before
    out = io.StringIO()
    assert run_lock(str(locked.path), check=False, out=out, accept_changed=("1.0.0",)) == 0
    assert "1.0.0: the changed file is accepted and locked" in out.getvalue()
    assert "1.0.0 demo-1.0.0-cp311-cp311-manylinux_2_17_x86_64.whl" in path.read_text()


def test_lock_check_without_a_lock_is_stale_and_writes_nothing(index, tmp_path):
    index.serve(["1.0.0"])
    matrix = matrix_file(tmp_path, 'releases: ">=1"')
    out = io.StringIO()
    assert run_lock(str(matrix.path), check=True, out=out) == 1
    assert "stale: 1 new (1.0.0)" in out.getvalue()
    assert not lock_path(matrix).exists()
    out = io.StringIO()
    assert run_lock(str(matrix.path), check=False, out=out) == 0
    assert "written: 1 new (1.0.0)" in out.getvalue()


def test_lock_asks_the_index_again_each_time(locked, index):
    """A cached index page must not hide a new release from `canary lock`."""
    index.serve(["1.0.0", "0.9.2", "0.9.0", "0.10.0", "1.0.1"])
    out = io.StringIO()
    assert run_lock(str(locked.path), check=True, out=out) == 1
    assert "1 new (1.0.1)" in out.getvalue()


def test_versions_command_marks_everything(locked, index):
    index.serve(
        ["1.0.0", "0.9.2", "0.9.0", "0.10.0", "1.2.0", "1.1.0"],
        [dist(v) for v in ("1.0.0", "0.9.2", "0.9.0", "0.10.0", "1.2.0")]
        + [dist("1.1.0", yanked=True)],
    )
    out = io.StringIO()
    run_versions(str(locked.path), out)
    lines = [line.rstrip() for line in out.getvalue().splitlines()]
    assert lines[0] == f"demo: 5 releases, 1 branch; lock {lock_path(locked)}"
    rows = {line.split()[0]: line.split(None, 1)[1:] for line in lines[1:]}
    assert rows["0.9.0"] == []
    assert rows["0.9.2"] == ["broken: ships a bad import"]
    assert rows["0.10.0"] == ["anchor"]
    assert rows["1.0.0"] == ["anchor"]
    assert rows["1.2.0"] == ["new since the lock"]
    assert rows["main"] == ["branch"]
    assert rows["1.1.0"] == ["yanked, left out"]
    assert [line.split()[0] for line in lines[1:6]] == [
        "0.9.0",
        "0.9.2",
        "0.10.0",
        "1.0.0",
        "1.2.0",
    ]


def test_versions_command_without_a_lock(index, tmp_path):
    index.serve(["1.0.0"])
    matrix = matrix_file(tmp_path, 'releases: ">=1"')
    out = io.StringIO()
    run_versions(str(matrix.path), out)
    assert out.getvalue().splitlines() == [
        "demo: 1 release, 0 branches; no lock file (`canary lock` writes one)",
        "1.0.0",
    ]


def wheel_bytes(version: str) -> bytes:
    """A minimal valid wheel: one module, METADATA and a RECORD with its hashes."""
    members = {
        "demo/__init__.py": f'__version__ = "{version}"\n'.encode(),
        f"demo-{version}.dist-info/METADATA": f"Name: demo\nVersion: {version}\n".encode(),
    }
    record = "".join(
        f"{name},sha256={base64.urlsafe_b64encode(hashlib.sha256(data).digest()).decode().rstrip('=')},"
        f"{len(data)}\n"
        for name, data in members.items()
    )
    members[f"demo-{version}.dist-info/RECORD"] = (
        f"{record}demo-{version}.dist-info/RECORD,,\n".encode()
    )
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in members.items():
            # A fixed timestamp: the same version is the same bytes whenever it is built (with
            # the clock's, a rebuild a second later got another sha256 than the lock's).
            archive.writestr(zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0)), data)
    return buffer.getvalue()


def publish(index: FakeIndex, versions: list[str], page: dict[str, dict] | None = None) -> None:
    """Real wheels of `versions` on the fake index; `page` replaces the page's entry of some."""
    files = []
    for version in versions:
        data = wheel_bytes(version)
        entry = dist(version)
        entry.update(hashes={"sha256": hashlib.sha256(data).hexdigest()}, size=len(data))
        files.append((page or {}).get(version, entry))
    index.serve(versions, files)
    for version in versions:
        name = dist(version)["filename"]
        index.server.expect_request(f"/files/{name}").respond_with_data(wheel_bytes(version))


def lock_wheels(index: FakeIndex, tmp_path: Path, versions: list[str]) -> Matrix:
    """`canary lock` over real wheels; the log is cleared so a test counts only its run."""
    publish(index, versions)
    matrix = matrix_file(tmp_path, 'releases: ">=1"')
    assert run_lock(str(matrix.path), check=False, out=io.StringIO()) == 0
    index.server.clear_log()
    return matrix


def run_locked(matrix: Matrix) -> list[tuple[str, str, str]]:
    """A run of every locked release, as a fresh process would do it.

    max_age=0 makes the cached index page stale, as it is a day after `canary lock`: consulting
    the index at all is then a request the server sees.
    """
    with SourceContext(max_age=0) as context:
        runner = Runner(settings=Settings.from_environment(jobs=1), sources=context)
        report = runner.run([matrix], "releases")
    return [(r.version, r.status.value, r.detail) for r in report.results]


def wheel_path(version: str) -> str:
    return f"/files/demo-{version}-py3-none-any.whl"


def test_a_cold_locked_run_asks_the_index_page_once_and_reads_the_lock(index, tmp_path):
    """The index page once (for the URLs), then the locked wheels by range; the versions are
    the lock's, not the index's."""
    matrix = lock_wheels(index, tmp_path, ["1.0.0", "1.1.0"])
    publish(index, ["1.0.0", "1.1.0", "1.2.0"])  # released after the lock: not checked

    assert run_locked(matrix) == [("1.0.0", "pass", ""), ("1.1.0", "pass", "")]
    requests = [request for request, _ in index.server.log]
    assert [r.path for r in requests].count("/simple/demo/") == 1
    reads = [r for r in requests if r.path != "/simple/demo/"]
    assert {r.path for r in reads} == {wheel_path("1.0.0"), wheel_path("1.1.0")}
    assert all(r.headers.get("Range", "").startswith("bytes=") for r in reads)


def test_a_warm_locked_run_makes_no_request(index, tmp_path):
    """With the bytes cached the index is not consulted at all: not even dropping the locked
    file from its page changes the outcome."""
    matrix = lock_wheels(index, tmp_path, ["1.0.0", "1.1.0"])
    expected = [("1.0.0", "pass", ""), ("1.1.0", "pass", "")]
    assert run_locked(matrix) == expected  # fills the cache
    publish(index, ["1.0.0", "1.1.0"], {"1.1.0": dist("1.1.0", "sdist")})
    index.server.clear_log()

    assert run_locked(matrix) == expected
    assert index.server.log == []


@pytest.mark.parametrize(
    ("page_entry", "message"),
    [
        (None, "locked, but the index no longer lists it for demo 1.1.0; re-run `canary lock`"),
        (
            {**dist("1.1.0"), "hashes": {"sha256": "cd" * 32}},
            f"the index now gives sha256 {'cd' * 32}, the lock ",
        ),
    ],
    ids=["gone", "other-sha256"],
)
def test_a_locked_file_the_index_no_longer_vouches_for_is_an_error(
    index, tmp_path, page_entry, message
):
    """The lock's file is never read unverified: the run says to re-run `canary lock`."""
    matrix = lock_wheels(index, tmp_path, ["1.0.0", "1.1.0"])
    locked_sha = hashlib.sha256(wheel_bytes("1.1.0")).hexdigest()
    if page_entry is None:  # 1.1.0 is still listed as a version, but without that file
        publish(index, ["1.0.0", "1.1.0"], {"1.1.0": dist("1.1.0", "sdist")})
    else:
        publish(index, ["1.0.0", "1.1.0"], {"1.1.0": page_entry})

    results = run_locked(matrix)
    assert results[0] == ("1.0.0", "pass", "")
    version, status, detail = results[1]
    assert (version, status) == ("1.1.0", "error")
    assert detail.startswith("demo-1.1.0-py3-none-any.whl: ")
    assert message in detail
    assert "re-run `canary lock`" in detail
    if page_entry is not None:
        assert locked_sha in detail
    assert wheel_path("1.1.0") not in [request.path for request, _ in index.server.log]


def test_a_release_listed_only_by_a_malformed_entry_says_why(index, tmp_path):
    broken = {**dist("1.2.0"), "hashes": {"sha256": 7}}  # an entry of the wrong JSON type
    index.server.expect_request("/simple/demo/").respond_with_json(  # no `versions` list
        {"meta": {"api-version": "1.1"}, "name": "demo", "files": [dist("1.0.0"), broken]},
        content_type=JSON_TYPE,
    )
    matrix = matrix_file(tmp_path, 'releases: ">=1.0"')
    with pytest.raises(SelectionError) as refused:
        select_targets(matrix, "1.2.0", SourceContext())
    assert "--versions 1.2.0: demo 1.2.0 is on the package index, but none of its file" in str(
        refused.value
    )
    assert "demo-1.2.0-py3-none-any.whl' is malformed" in str(refused.value)
    assert "not a release of" not in str(refused.value)


def test_a_lock_of_nothing_is_not_written_and_says_why(index, tmp_path):
    index.serve(["1.0.0", "1.1.0"])
    matrix = matrix_file(tmp_path, 'releases: ">=9"')
    out = io.StringIO()
    assert run_lock(str(matrix.path), check=False, out=out) == 1
    assert not lock_path(matrix).exists()
    assert out.getvalue().count("not written: no version of demo to lock") == 1
    assert "the package index lists 2 versions, none in versions.releases (>=9)" in out.getvalue()


# -- the pre-release ahead of the releases (`versions.next`) ----------------------------------


def next_of(matrix: Matrix) -> str | None:
    """What `canary lock` records as the pre-release ahead, read back from the lock."""
    assert run_lock(str(matrix.path), check=False, out=io.StringIO()) == 0
    lock = read_lock(lock_path(matrix))
    assert lock is not None
    return lock.resolution.next[0] if lock.resolution.next else None


@pytest.mark.parametrize(
    ("listed", "versions", "expected"),
    [
        (["0.9.0", "1.0.0", "1.1.0a1", "1.1.0rc1", "1.0.1rc1"], "", "1.1.0rc1"),
        (["0.9.0", "1.0.0rc1", "1.0.0", "0.9.1rc1"], "", None),  # every rc is older than 1.0.0
        (["1.0.0", "1.1.0.dev0"], "", "1.1.0.dev0"),  # a dev release is a pre-release too
        (["1.0.0", "1.1.0rc1", "1.1.0rc2"], 'exclude: ["1.1.0rc2"]', "1.1.0rc1"),
        (["1.0.0", "2.0.0rc1"], 'releases: ">=0.9,<2"', None),  # outside the range
        (["1.0.0", "1.1.0rc1"], "next: false", None),  # the matrix opts out
        (["1.0.0", "1.1.0rc1"], "prereleases: true", None),  # already a release
        (["1.0.0", "1.1.0rc1"], 'include: ["1.1.0rc1"]', None),  # already a release
        (["1.0.0", "1.1.0rc1"], 'include: ["1.1.0"]', None),  # not ahead of an include
    ],
)
def test_lock_records_the_newest_prerelease_only_when_newer_than_every_final(
    index, tmp_path, listed, versions, expected
):
    index.serve(listed)
    body = versions if versions.startswith("releases") else f'releases: ">=0.9"\n{versions}'
    matrix = matrix_file(tmp_path, body)
    assert next_of(matrix) == expected
    text = lock_path(matrix).read_text(encoding="utf-8")
    assert (" next " in text) == (expected is not None)
    assert ("next=false" in text.splitlines()[1]) == (versions == "next: false")


def test_a_yanked_prerelease_is_passed_over(index, tmp_path):
    index.serve(
        ["1.0.0", "1.1.0rc1", "1.1.0rc2"],
        [dist("1.0.0"), dist("1.1.0rc1"), dist("1.1.0rc2", yanked="bad upload")],
    )
    assert next_of(matrix_file(tmp_path, 'releases: ">=1"')) == "1.1.0rc1"


def test_the_lock_line_names_the_prereleases_file(index, tmp_path):
    index.serve(["1.0.0", "1.1.0rc1"])
    matrix = matrix_file(tmp_path, 'releases: ">=1"')
    assert next_of(matrix) == "1.1.0rc1"
    filename = "demo-1.1.0rc1-py3-none-any.whl"
    assert lock_path(matrix).read_text().splitlines()[2:] == [
        f"1.0.0 demo-1.0.0-py3-none-any.whl sha256={sha('demo-1.0.0-py3-none-any.whl')} size=1027",
        f"1.1.0rc1 next {filename} sha256={sha(filename)} size={1000 + len(filename)}",
    ]


def test_the_prerelease_moves_then_goes_when_the_final_is_out(index, tmp_path):
    index.serve(["1.0.0", "1.1.0rc1"])
    matrix = matrix_file(tmp_path, 'releases: ">=1"')
    path = lock_path(matrix)
    assert next_of(matrix) == "1.1.0rc1"

    index.serve(["1.0.0", "1.1.0rc1", "1.1.0rc2"])
    out = io.StringIO()
    assert run_lock(str(matrix.path), check=True, out=out) == 1  # stale: --check says so
    assert out.getvalue() == (
        f"{path}: stale: 1 new pre-release (1.1.0rc2); 1 pre-release dropped (1.1.0rc1) "
        "(1 release, 0 branches, next 1.1.0rc2)\n"
    )
    assert next_of(matrix) == "1.1.0rc2"

    index.serve(["1.0.0", "1.1.0rc1", "1.1.0rc2", "1.1.0"])
    out = io.StringIO()
    assert run_lock(str(matrix.path), check=False, out=out) == 0
    assert out.getvalue() == (
        f"{path}: updated: 1 new (1.1.0); 1 pre-release dropped (1.1.0rc2) "
        "(2 releases, 0 branches)\n"
    )
    assert " next " not in path.read_text()
    assert labels(select_targets(matrix, "all", SourceContext())) == ["1.0.0", "1.1.0"]


def test_a_prereleases_file_with_other_bytes_is_an_alarm(index, tmp_path):
    index.serve(["1.0.0", "1.1.0rc1"])
    matrix = matrix_file(tmp_path, 'releases: ">=1"')
    assert next_of(matrix) == "1.1.0rc1"
    index.serve(["1.0.0", "1.1.0rc1"], [dist("1.0.0"), {**dist("1.1.0rc1"), "size": 1}])
    out = io.StringIO()
    assert run_lock(str(matrix.path), check=False, out=out) == 1
    assert "1 changed (1.1.0rc1)" in out.getvalue()
    assert f"{lock_path(matrix)}: ALARM: 1.1.0rc1: " in out.getvalue()
    assert "1.1.0rc1 next demo-1.1.0rc1-py3-none-any.whl" in lock_path(matrix).read_text()
    lock = read_lock(lock_path(matrix))
    assert lock is not None and lock.resolution.next is not None
    assert lock.resolution.next[1].size == 1000 + len("demo-1.1.0rc1-py3-none-any.whl")


@pytest.mark.parametrize(
    ("selection", "expected"),
    [
        ("releases", ["0.9.0", "0.9.2", "0.10.0", "1.0.0"]),
        ("latest", ["1.0.0"]),
        (">=1", ["1.0.0"]),
        ("anchors", ["0.10.0", "1.0.0"]),
        ("all", ["0.9.0", "0.9.2", "0.10.0", "1.0.0", "1.1.0rc1", "main"]),
        ("1.1.0rc1", ["1.1.0rc1"]),
    ],
)
def test_only_versions_all_adds_the_prerelease(locked, index, selection, expected):
    """PR runs (the default) stay on the locked releases; the nightly's `all` judges the
    pre-release too, from the lock's file, without asking the index."""
    targets = select_targets(locked, selection, SourceContext())
    assert labels(targets) == expected
    assert index.requests == 0
    rc = [t for t in targets if t.label == "1.1.0rc1"]
    assert all(t.file is not None and t.file.filename.startswith("demo-1.1.0rc1") for t in rc)


def test_versions_command_marks_the_prerelease(locked, index):
    index.serve([*LOCKED, "1.1.0rc2"])
    out = io.StringIO()
    run_versions(str(locked.path), out)
    lines = out.getvalue().splitlines()
    assert lines[0].endswith(f"4 releases, 1 branch, next 1.1.0rc2; lock {lock_path(locked)}")
    rows = {line.split()[0]: line.split(None, 1)[1] for line in lines[1:] if " " in line}
    assert rows["1.1.0rc2"] == (
        "next: a pre-release newer than every final release (only `--versions all`), "
        "new since the lock"
    )
    assert [line.split()[0] for line in lines[1:]][-2:] == ["1.1.0rc2", "main"]


def test_the_nightly_judges_the_prerelease_as_its_own_column(index, tmp_path):
    """A run of `--versions all` reads the pre-release's wheel and gates it by PEP 440
    (1.2.0rc1 is below 1.2.0, so `until: 1.2.0` skips it, and only a gate that names a
    pre-release, `since: 1.2.0.dev0`, admits it; such a gate is let be although it admits no
    final release, as for a branch); every report format says the column is a pre-release."""
    publish(index, ["1.0.0", "1.1.0", "1.2.0rc1"])
    path = tmp_path / "demo.yaml"
    path.write_text(
        "upstream: demo\nversions:\n  releases: '>=1'\nchecks:\n"
        "  - {id: top, module: demo, symbol: __version__}\n"
        "  - {id: old, module: demo, until: '1.2.0'}\n"
        "  - {id: new, module: demo, since: '1.1.0'}\n"
        "  - {id: ahead, module: demo, since: '1.2.0.dev0'}\n",
        encoding="utf-8",
    )
    matrix = load_matrix(path)
    assert next_of(matrix) == "1.2.0rc1"
    with SourceContext(max_age=0) as context:
        runner = Runner(settings=Settings.from_environment(jobs=1), sources=context)
        nightly = runner.run([matrix], "all")
        pr = runner.run([matrix], "releases")
    cells = {(r.check, r.version): r.status.value for r in nightly.results}
    assert cells[("top", "1.2.0rc1")] == cells[("new", "1.2.0rc1")] == "pass"
    assert cells[("old", "1.2.0rc1")] == cells[("new", "1.0.0")] == "skip"
    assert cells[("ahead", "1.2.0rc1")] == "pass"
    assert cells[("ahead", "1.0.0")] == cells[("ahead", "1.1.0")] == "skip"
    assert {r.version for r in pr.results} == {"1.0.0", "1.1.0"}
    assert nightly.upstreams["demo"].next == ("1.2.0rc1",)
    assert nightly.upstreams["demo"].versions[-1] == "1.2.0rc1"
    assert pr.upstreams["demo"].next == ()
    shown = {fmt: render(fmt, nightly, width=100) for fmt in ("text", "markdown", "html")}
    assert "; next 1.2.0rc1 (a pre-release)" in shown["text"]
    assert "next 1.2.0rc1 (a pre-release, newer than every final release)" in shown["markdown"]
    assert "1.2.0rc1 (next, pre-release)" in shown["markdown"]
    assert '<div class="v next" title="1.2.0rc1 (next: a pre-release' in shown["html"]
    data = json.loads(render("json", nightly))
    assert data["upstreams"]["demo"]["next"] == ["1.2.0rc1"]
    assert "next" not in json.loads(render("json", pr))["upstreams"]["demo"]
    assert load_json(render("json", nightly)).upstreams["demo"].next == ("1.2.0rc1",)
