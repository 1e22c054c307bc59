"""The benchmark's own pieces on tiny local fixtures (no timing is asserted anywhere)."""

from __future__ import annotations

import importlib.util
import io
import json
import struct
import sys
import zipfile
from datetime import datetime, timedelta, timezone

import pytest
import yaml
from campaign_upstream import PROJECT, locked_upstream, publish, wheel_name
from paths import FIXTURES, ROOT
from servers import FAST, make_wheel, serving, sha256


def _load_bench() -> None:
    """bench/ is a folder of the project, not an installed package: load it by path (putting
    the project root on sys.path would let pytest's plugin machinery see canary twice)."""
    init = ROOT / "bench" / "__init__.py"
    spec = importlib.util.spec_from_file_location(
        "bench", init, submodule_search_locations=[str(init.parent)]
    )
    if "bench" not in sys.modules:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        sys.modules["bench"] = module


_load_bench()

from bench.driver import main as drive  # noqa: E402
from bench.driver import spread  # noqa: E402
from bench.explain import ungated  # noqa: E402
from bench.floor import measure_floor  # noqa: E402
from bench.large import fraction  # noqa: E402
from bench.lead import Lead, table  # noqa: E402
from bench.nightly_requests import measure as measure_requests  # noqa: E402
from bench.proc import measure  # noqa: E402
from bench.recall import load as load_incidents  # noqa: E402
from bench.report import Row, Target, seconds  # noqa: E402
from bench.scan import main as bench_scan  # noqa: E402
from bench.strategies import STRATEGIES, runner_for  # noqa: E402
from bench.tally import main as tally  # noqa: E402
from canary.engine.runner import local_selector  # noqa: E402
from canary.matrix.model import load_matrix  # noqa: E402
from canary.sources.context import SourceContext  # noqa: E402
from canary.sources.index import IndexFile  # noqa: E402

CHECKOUT = FIXTURES / "checkout"
THREE_CHECKS_ON_ONE_MODULE = """upstream: fakeup
src: src
checks:
  - {id: a, module: fakeup.models.helpers, symbol: load_weights}
  - {id: b, module: fakeup.models.helpers, function: save_weights, params: [path]}
  - {id: c, module: fakeup.models.helpers, symbol: no_such_name}
"""


@pytest.mark.parametrize(
    ("strategy", "parses"), [("canary", 1), ("index-store", 1), ("no-store", 1), ("reparse", 3)]
)
def test_strategies_differ_only_in_how_often_they_parse(tmp_path, strategy, parses):
    path = tmp_path / "fakeup.yaml"
    path.write_text(THREE_CHECKS_ON_ONE_MODULE)
    runner = runner_for(strategy, select=local_selector(CHECKOUT), source_path=CHECKOUT)
    report = runner.run([load_matrix(path)], "releases")
    assert [(r.check, r.status.value) for r in report.results] == [
        ("a", "pass"),
        ("b", "pass"),
        ("c", "fail"),
    ]
    assert runner.modules.parses == parses


def test_unknown_strategy_is_refused():
    with pytest.raises(ValueError, match="reparse"):
        runner_for("sometimes", select=local_selector(CHECKOUT))
    assert set(STRATEGIES) == {"canary", "index-store", "no-store", "reparse"}


def test_spread_keeps_both_ends_and_the_count():
    items = list(range(143))
    assert spread(items, 10)[0] == 0 and spread(items, 10)[-1] == 142
    assert len(set(spread(items, 30))) == 30
    assert spread(items, None) == items
    assert spread(items, 500) == items


def test_measure_reports_exit_output_and_peak_memory():
    code = "import sys; b = bytearray(80_000_000); print('hi'); sys.exit(3)"
    measured = measure([sys.executable, "-c", code], env={})
    assert measured.returncode == 3
    assert measured.stdout == "hi\n"
    assert measured.peak_rss >= 80_000_000
    assert measured.wall > 0


def test_floor_is_the_directory_plus_the_members_read(tmp_path):
    sources = {
        "pkg/__init__.py": b"x = 1\n" * 50,
        "pkg/core.py": b"def run(m):\n    return m\n" * 80,
    }
    wheel = make_wheel("pkg", "1.0", sources)
    with serving() as server:
        server.add("/pkg-1.0-py3-none-any.whl", wheel)
        file = IndexFile(
            "pkg-1.0-py3-none-any.whl",
            server.url + "/pkg-1.0-py3-none-any.whl",
            len(wheel),
            sha256(wheel),
        )
        context = SourceContext(index_url=server.url + "/simple/", cache_dir=tmp_path, policy=FAST)
        assert (
            context.release_tree("pkg", "1.0", file).read("pkg/core.py") == sources["pkg/core.py"]
        )
    unread = IndexFile("other-1.0-py3-none-any.whl", "", 1000, "0" * 64)

    floor = measure_floor([("pkg", file), ("other", unread)], tmp_path)

    archive = zipfile.ZipFile(io.BytesIO(wheel))
    directory_offset = struct.unpack("<I", wheel[-6:-2])[0]  # the end record, no comment
    assert floor.whole == len(wheel) + 1000
    assert floor.directories == len(wheel) - directory_offset
    assert floor.members == archive.getinfo("pkg/core.py").compress_size
    assert floor.members_read == 1
    assert floor.record == archive.getinfo("pkg-1.0.dist-info/RECORD").compress_size
    assert floor.missing == ["other-1.0-py3-none-any.whl"]


def test_rows_report_the_median_and_the_verdict():
    row = Row("wall", [3.0, 1.0, 2.0], seconds, Target(2.5, seconds))
    assert row.cells() == ["wall", "2.00 s (1.00 s to 3.00 s)", "3", "<= 2.50 s", "pass", ""]
    assert Row("wall", [3.0], seconds, Target(2.5, seconds)).cells()[4] == "**MISS**"


def test_scan_bench_scans_twice_and_compares_what_it_wrote(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("CANARY_OFFLINE", "1")  # placed by names: nothing to fetch
    downstream = ROOT / "tests" / "fixtures" / "scan_dataflow"
    assert bench_scan([str(downstream), "--cache", str(tmp_path / "cache")]) == 0
    printed = capsys.readouterr().out
    assert "first" in printed and "again (warm)" in printed
    assert "same matrices written: yes" in printed
    assert list((tmp_path / "cache").rglob("*"))  # the scan's own entries were kept there


def test_the_explain_workload_is_the_matrices_without_their_gates(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "up.yaml").write_text(
        "upstream: up\nchecks:\n  - {id: a, module: m, since: '1.0'}\n"
        "  - {id: b, module: m, until: '2.0', why: kept}\n"
    )
    (folder / "up.lock").write_text("# lock\n")
    (copy,) = ungated([folder / "up.yaml"], tmp_path / "out")
    assert load_matrix(copy).checks[0].gate is None
    assert [c.why for c in load_matrix(copy).checks] == ["", "kept"]
    assert (tmp_path / "out" / "up.lock").read_text() == "# lock\n"


def test_the_driver_tells_stories_unless_asked_not_to(tmp_path, monkeypatch, capsys):
    def release(version: str, body: str) -> bytes:
        files = {f"{PROJECT}/__init__.py": body.encode()}
        return make_wheel(PROJECT, version, files)

    matrix = tmp_path / f"{PROJECT}.yaml"
    matrix.write_text(
        f"upstream: {PROJECT}\nchecks:\n  - {{id: gone, module: {PROJECT}, symbol: f}}\n"
    )
    with serving() as server:
        wheels = {
            wheel_name("1.0.0"): release("1.0.0", "def f():\n    pass\n"),
            wheel_name("2.0.0"): release("2.0.0", "def g():\n    pass\n"),
        }
        monkeypatch.setenv("CANARY_INDEX_URL", publish(server, wheels))
        monkeypatch.setenv("CANARY_CACHE_DIR", str(tmp_path / "cache"))
        told = {}
        for options in ((), ("--no-stories",)):
            assert drive([str(matrix), *options]) == 1  # `gone` fails on 2.0.0
            told[options] = json.loads(capsys.readouterr().out)["explained"]
    assert told == {(): [f"{PROJECT}::gone"], ("--no-stories",): []}


def test_the_lead_table_gives_each_route_its_median_and_count():
    incident = load_incidents()[0]
    fix = datetime(2026, 7, 10, tzinfo=timezone.utc)

    def lead(main, pre, final):
        red = {
            "main": main and fix - timedelta(days=main),
            "first pre-release": pre and fix - timedelta(days=pre),
            "first final release": final and fix - timedelta(days=final),
        }
        return Lead(incident, fix, red)

    out = table([lead(10, None, 2), lead(20, 30, None), lead(4, None, None), lead(None, None, 1)])
    assert out.splitlines()[2:] == [
        "| main | +10.0 days | 3/4 |",
        "| first pre-release | +30.0 days | 1/4 |",
        "| first final release | +1.5 days | 2/4 |",
        "| all three | +7.0 days | 4/4 |",
    ]


def test_the_nightly_request_count_names_the_repositories_it_has_no_mirror_of(tmp_path, capsys):
    assert measure_requests(tmp_path) == 0
    out = capsys.readouterr().out
    assert "cold: 0 API requests counted by GitHub" in out
    assert "not served (no mirror): UKPLab/sentence-transformers, " in out


def test_a_share_of_the_checks_is_the_first_of_each_matrix_beside_its_lock(tmp_path):
    folder = tmp_path / "proposed"
    folder.mkdir()
    checks = "".join(f"  - {{id: c{i}, module: pkg}}\n" for i in range(8))
    (folder / "pkg.yaml").write_text(f"upstream: pkg\nchecks:\n{checks}")
    (folder / "pkg.lock").write_text("1.0 pkg-1.0-py3-none-any.whl\n")
    part = fraction(folder, 25, tmp_path / "part")
    kept = yaml.safe_load((part / "pkg.yaml").read_text())["checks"]
    assert [c["id"] for c in kept] == ["c0", "c1"]
    assert (part / "pkg.lock").read_text() == (folder / "pkg.lock").read_text()
    assert (
        len(
            yaml.safe_load(fraction(folder, 1, tmp_path / "one").joinpath("pkg.yaml").read_text())[
                "checks"
            ]
        )
        == 1
    )


def test_the_tally_counts_what_a_command_without_stats_fetched(tmp_path, monkeypatch):
    releases = {"1.0.0": {f"{PROJECT}/__init__.py": b"x = 1\n"}}
    matrix = f"upstream: {PROJECT}\nchecks:\n  - {{id: a, module: {PROJECT}}}\n"
    with locked_upstream(tmp_path, monkeypatch, releases, matrix) as server:
        out = tmp_path / "tally.json"
        assert tally([str(out), "lock", "--check"]) == 0
        asked = len(server.requests_to(f"/simple/{PROJECT}/"))
    counted = json.loads(out.read_text())
    assert counted["requests"] >= 1 and counted["bytes_downloaded"] > 0
    assert asked >= 1
