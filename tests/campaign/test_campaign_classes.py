"""Campaign over the classes of hostile input and fault of issue 19, one real run per class.

Each class (tests/campaign_classes.py) changes what the fake index serves or the run's
environment; the run happens in its own process (tests/campaign_worker.py), which reports its
peak resident memory. The promise: the verdicts the fault touches are `error` (or what the class
demands), every other verdict is the fault-free one, the run ends, and nothing leaks. Each test
prints `faults injected: N, verdicts wrong: 0` and the peak memory of its run.
CANARY_CAMPAIGN_SIZE=large runs more releases, modules, members and chain links (the nightly).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import campaign_classes as classes
import pytest
from campaign_upstream import (
    PROJECT,
    build_upstream,
    publish,
    run_checks,
    scaled,
    tell,
    verdicts,
)
from paths import TESTS
from servers import FileServer, serving, sha256

from canary.cli.main import main as canary_main
from canary.matrix.lock import Resolution, render_lock
from canary.matrix.model import load_matrix
from canary.sources.index import IndexFile

WORKER = TESTS / "campaign_worker.py"


@pytest.fixture(scope="module")
def upstream(tmp_path_factory):
    folder = tmp_path_factory.mktemp("classes-upstream")
    return build_upstream(folder, releases=scaled(2, 4), modules=scaled(2, 8))


@pytest.fixture(scope="module")
def baseline(upstream, tmp_path_factory):
    """The fault-free verdicts, from the same runner in this process."""
    with serving() as server:
        index_url = publish(server, upstream.files, classes.default_page, {})
        return verdicts(run_checks(upstream, index_url, tmp_path_factory.mktemp("baseline")))


def run_case(upstream, case: classes.Case, folder: Path, server: FileServer) -> tuple[list, int]:
    """Serve the case, run the worker on every release; (results, peak RSS in KiB)."""
    index_url = publish(server, case.files, case.page or classes.default_page, case.page_headers)
    for name, options in case.routes.items():
        for key, value in options.items():
            setattr(server.routes[f"/files/{name}"], key, value)
    for name in case.gone:
        del server.routes[f"/files/{name}"]
    matrix = folder / f"{PROJECT}.yaml"
    matrix.write_text(upstream.matrix_path.read_text() + case.extra_checks)
    if case.lock is not None:
        releases = [
            (v, IndexFile(name, "", len(data), sha256(data)))
            for v, (name, data) in sorted(case.lock.items())
        ]
        matrix.with_suffix(".lock").write_text(
            render_lock(load_matrix(matrix), Resolution(releases=releases))
        )
    cache = folder / "cache"
    if case.cache_under_a_file:
        (folder / "a-file").write_text("not a folder")
        cache = folder / "a-file" / "cache"
    if case.prepare is not None:
        case.prepare(cache, index_url)
    env = {
        **os.environ,
        "CANARY_INDEX_URL": case.index_url(index_url) if case.index_url else index_url,
        "CANARY_CACHE_DIR": str(cache),
        **case.env,
    }
    output = folder / "results.json"
    done = subprocess.run(
        [sys.executable, str(WORKER), str(matrix), upstream.selection, str(output)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-3000:]
    report = json.loads(output.read_text())
    return report["results"], report["peak_rss_kib"]


def wrong_verdicts(case: classes.Case, baseline: dict, results: list[dict]) -> list[str]:
    wrong = []
    got = {(r["check"], r["version"]): (r["status"], r["detail"]) for r in results}
    if not set(baseline) <= set(got):
        wrong.append(f"verdicts missing: {sorted(set(baseline) - set(got))[:3]}")
    for key, (status, detail) in got.items():
        check, version = key
        if key in case.demands:
            ok = status == case.demands[key]
        elif key not in baseline:
            ok = False
        elif version in case.versions or key in case.pairs:
            ok = status == ("skip" if baseline[key][0] == "skip" else "error")
        else:
            ok = (status, detail) == baseline[key]
        if not ok:
            wrong.append(f"{check}[{version}]: {status} {detail[:160]!r}")
    return wrong


BUILDERS: dict[str, Callable] = {
    "1 token to the wrong host": None,  # needs a second server: built in the test
    "2 locked sdist-only release": classes.locked_sdist,
    "5 catastrophic regex": classes.catastrophic_regex,
    "6 deep JSON page": classes.deep_json_page,
    "6 number for a sha256": classes.number_for_sha256,
    "6 lone surrogate in a URL": classes.surrogate_in_url,
    "6 number for a file name": classes.number_for_filename,
    "6 long star-import chain": lambda up: classes.star_import_chain(up, scaled(1200, 3000)),
    "6 full cache disk": classes.full_disk,
    "6 unusable cache folder": classes.unusable_cache,
    "6 ill-typed cached index page": classes.ill_typed_cached_page,
    "7 gzip bomb index page": classes.gzip_bomb_page,
    "7 costly source under the cap": classes.costly_source,
    "7 source just under the parse budget": classes.source_under_budget,
    "7 many zip members": lambda up: classes.many_zip_members(up, scaled(110_000, 300_000)),
    "7 many tar members": lambda up: classes.many_tar_members(up, scaled(110_000, 300_000)),
    "7 parallel sdists": lambda up: classes.parallel_sdists(up, scaled(8, 40)),
    "8 byte-dripping server": classes.dripping_server,
    "9 index credentials": classes.index_credentials,
    "12 escape codes from the index": classes.escape_codes,
    "12 device and FIFO members": classes.special_members,
    "12 member over the source cap": classes.oversized_member,
    "12 end record in a zip comment": classes.comment_end_record,
}


@pytest.mark.parametrize("name", list(BUILDERS))
def test_each_class_touches_only_its_verdicts(upstream, baseline, tmp_path, capsys, name):
    with serving() as server, serving() as github:
        builder = BUILDERS[name]
        case = classes.token_host(upstream, github) if builder is None else builder(upstream)
        results, peak_kib = run_case(upstream, case, tmp_path, server)
        wrong = wrong_verdicts(case, baseline, results)
        if case.after is not None:
            wrong += case.after(server, tmp_path, results)
    tell(
        capsys,
        f"campaign class {name}: faults injected: 1, verdicts: {len(results)}, "
        f"verdicts wrong: {len(wrong)}, peak RSS: {peak_kib / 1024:.0f} MiB",
    )
    assert not wrong, "\n".join(wrong[:10])


def test_deep_json_given_to_canary_report_is_a_clear_error(tmp_path, capsys):
    saved = tmp_path / "deep.json"
    saved.write_text("[" * 100_000 + "]" * 100_000)
    assert canary_main(["report", str(saved)]) == 2
    err = capsys.readouterr().err
    assert "nested too deeply" in err and "Traceback" not in err
    tell(capsys, "campaign class 6 deep JSON report: faults injected: 1, verdicts wrong: 0")
