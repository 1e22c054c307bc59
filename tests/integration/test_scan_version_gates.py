"""Version gates in every form a client writes them (issue 46): each fixture under
tests/fixtures/scan_gates is a small downstream gating its uses of `gup` one way, scanned
against a `gup` served on loopback (0.18.0 to 0.22.0; the clients declare
`gup>=0.18.0,<=0.21.0`). A use is gated to the releases its code runs on, a use reached on
no release in range is listed at the head, and no gate is written that no release satisfies.
"""

from __future__ import annotations

import io
import json
import shutil

import pytest
import yaml
from commands import canary
from paths import FIXTURES
from servers import make_wheel, publish_releases, serving

from canary.init.command import init_main

TREES = FIXTURES / "scan_gates"
RELEASES = ("0.18.0", "0.19.0", "0.20.0", "0.21.0", "0.22.0")


def release(version: str) -> dict[str, bytes]:
    """0.18-0.19: `old_helper` and the module `old_utils`; 0.20.0 alone: `only_020`; from
    0.20.0 on: `new_helper` and the module `fresh` (a class attribute `_registry`); up to
    0.21.0 (the clients' pin): `soon_gone`."""
    minor = int(version.split(".")[1])
    utils = "def stable():\n    return 1\n"
    files = {"gup/__init__.py": f'__version__ = "{version}"\n'.encode()}
    if minor < 20:
        utils += "def old_helper(name=None):\n    return name\n"
        files["gup/old_utils.py"] = b"def helper(name=None):\n    return name\n"
    else:
        utils += "def new_helper(name=None):\n    return name\n"
        files["gup/fresh.py"] = b"class Table:\n    _registry = {}\n"
    if minor == 20:
        utils += "def only_020():\n    return 3\n"
    if minor <= 21:
        utils += "def soon_gone():\n    return 4\n"
    files["gup/utils.py"] = utils.encode()
    files["gup/trainer.py"] = TRAINER
    return files


# gup's trainer subclasses a class of another package, gbase, which defines the method
TRAINER = b"from gbase.trainer import BaseTrainer\n\n\nclass GupTrainer(BaseTrainer):\n    pass\n"
BASE = b"class BaseTrainer:\n    def training_step(self, model, inputs):\n        return 0\n"


@pytest.fixture(scope="module")
def wheels() -> dict[str, bytes]:
    return {v: make_wheel("gup", v, release(v)) for v in RELEASES}


@pytest.fixture(scope="module")
def base_wheels() -> dict[str, bytes]:
    files = {"gbase/__init__.py": b"", "gbase/trainer.py": BASE}
    return {v: make_wheel("gbase", v, files) for v in ("1.0.0", "1.1.0")}


@pytest.fixture
def index(tmp_path, monkeypatch, wheels, base_wheels):
    with serving() as server:
        publish_releases(server, "gup", wheels)
        publish_releases(server, "gbase", base_wheels)
        monkeypatch.setenv("CANARY_INDEX_URL", server.url + "/simple/")
        monkeypatch.setenv("CANARY_CACHE_DIR", str(tmp_path / "cache"))
        monkeypatch.delenv("CANARY_OFFLINE", raising=False)
        yield server


def scanned(form: str) -> tuple[str, dict[str, set[str]]]:
    """The matrix scan proposes for fixture `form`: its text, and the gates of the checks
    on each subject (`module:name`)."""
    status, text = canary("scan", str(TREES / form / "client"), "--upstream", "gup")
    assert status == 0, text
    checks = yaml.safe_load(text.split("---\n", 1)[1])["checks"] or []
    gates: dict[str, set[str]] = {}
    for check in checks:
        name = check.get("symbol") or check.get("class") or check.get("function") or ""
        gates.setdefault(f"{check['module']}:{name}", set()).add(gate(check))
    return text, gates


def gate(check: dict) -> str:
    """The releases a check is gated to, as one specifier ("" for none)."""
    parts = [check.get("versions", "")]
    parts += [f">={check['since']}"] if "since" in check else []
    parts += [f"<{check['until']}"] if "until" in check else []
    return ",".join(p for p in parts if p)


def head(text: str) -> str:
    """What the matrix says above its checks (what scan left out, and why)."""
    return text.split("upstream: gup")[0]


def test_a_module_level_flag_over_a_variable_holding_the_version(index):
    _, checks = scanned("flag")
    assert checks["gup.utils:old_helper"] == {"<0.20.0"}
    assert checks["gup.utils:only_020"] == {">=0.20.0,<0.21.0"}
    assert checks["gup.utils:new_helper"] == {">=0.20.0"}


def test_an_equality_held_in_a_variable_then_an_early_return(index):
    text, checks = scanned("equality")
    assert checks["gup.utils:only_020"] == {"==0.20.0"}
    assert "gup.utils:gone_long_ago" not in checks
    assert "gup.utils.gone_long_ago (==0.15.0)" in head(text)  # reached on no release in range


def test_the_client_s_own_helper_wrapping_the_comparison(index):
    _, checks = scanned("helper")
    assert checks["gup.old_utils:helper"] == {"<0.20.0"}
    assert checks["gup.utils:new_helper"] == {">=0.20.0"}
    assert checks["gup.utils:old_helper"] == {"<0.20.0"}  # the else branch


def test_a_name_imported_on_both_branches_is_a_contract_where_each_is_reached(index):
    text, checks = scanned("both")
    assert checks["gup.utils:new_helper"] == {">=0.20.0"}
    assert checks["gup.old_utils:helper"] == {"<0.20.0"}
    assert "FAILS" not in text


def test_early_exits_gate_the_rest_of_their_block(index):
    text, checks = scanned("exits")
    assert checks["gup.utils:new_helper"] == {">=0.20.0"}  # after `raise`
    assert checks["gup.utils:old_helper"] == {"<0.20.0"}  # after `continue`
    assert "gup.utils:gone_long_ago" not in checks  # `or` of two rays outside the range
    assert "gup.utils.gone_long_ago" in head(text)


def test_a_gate_no_release_satisfies_is_never_written(index):
    text, checks = scanned("contradiction")
    # the client's own gate, not `<0.20,>=0.20.0`
    assert checks["gup.utils:new_helper"] == {"<0.20"}
    assert ">=0.20.0" not in text
    assert "FAILS on every release your code gates it to" in text


def adopt(tmp_path, form: str, dry_run: bool) -> tuple[int, str]:
    tree = tmp_path / ("dry" if dry_run else "real")
    shutil.copytree(TREES / form, tree)
    out = io.StringIO()
    status = init_main(str(tree), "canary", ["gup"], "o/r@v1", dry_run, out)
    return status, out.getvalue()


def test_init_writes_what_it_can_run_and_the_dry_run_agrees(index, tmp_path, monkeypatch):
    status, said = adopt(tmp_path, "contradiction", dry_run=False)
    assert status == 0, said
    assert (tmp_path / "real" / "canary" / "gup.lock").is_file()
    dry, said = adopt(tmp_path, "contradiction", dry_run=True)
    assert dry == status == 0, said
    monkeypatch.chdir(tmp_path / "real")
    checked, report = canary("check", "--format", "json")
    red = {
        (r["check"], r["version"]) for r in json.loads(report)["results"] if r["status"] == "fail"
    }
    assert red == {("new-helper", "0.18.0"), ("new-helper", "0.19.0")}  # real: it breaks there
    assert checked == 1


def test_a_class_attribute_of_a_module_added_mid_range(index):
    status, text = canary("scan", str(TREES / "attribute" / "client"), "--upstream", "gup")
    assert status == 0, text
    checks = yaml.safe_load(text.split("---\n", 1)[1])["checks"]
    (table,) = [check for check in checks if check.get("class") == "Table"]
    assert table.get("attributes") == ["_registry"] and "methods" not in table
    assert table["since"] == "0.20.0"
    assert "FAILS" not in text


def test_a_method_inherited_from_a_class_of_another_package(index):
    status, text = canary("scan", str(TREES / "inherited" / "client"), "--upstream", "gup,gbase")
    assert status == 0, text
    matrices = {m["upstream"]: m for m in map(yaml.safe_load, text.split("---\n")[1:])}
    (step,) = [c for c in matrices["gbase"]["checks"] if "training_step" in str(c)]
    assert (step["module"], step["function"]) == ("gbase.trainer", "BaseTrainer.training_step")
    assert "FAILS" not in text


def test_a_method_inherited_from_a_package_not_read_is_no_red(index):
    """gbase not read: nothing claims the method on gup's class (it would fail everywhere)."""
    status, text = canary("scan", str(TREES / "inherited" / "client"), "--upstream", "gup")
    assert status == 0, text
    assert "training_step" not in text and "FAILS" not in text


def test_the_dry_run_fails_where_init_fails_and_says_the_same(index, tmp_path):
    """A matrix of the repository's own whose gate admits no release: init cannot lock it,
    and its dry run says so too (it used to promise the lock)."""
    said = {}
    for dry_run in (False, True):
        tree = tmp_path / str(dry_run)
        shutil.copytree(TREES / "helper", tree)
        (tree / "canary").mkdir()
        (tree / "canary" / "gup.yaml").write_text(
            "upstream: gup\nversions:\n  releases: '>=0.18.0'\nchecks:\n"
            "  - {id: never, module: gup, versions: '<0.20,>=0.20.0'}\n"
        )
        out = io.StringIO()
        assert init_main(str(tree), "canary", ["gup"], "o/r@v1", dry_run, out) == 1
        said[dry_run] = out.getvalue().replace(str(tree), "REPO")
        assert not (tree / "canary" / "gup.lock").exists()
    problem = "canary init: canary/gup.lock: not written: REPO/canary/gup.yaml:5: check 'never'"
    assert problem in said[False] and problem in said[True]


def test_reds_beyond_the_declared_pin_are_listed_after_those_within(index, tmp_path, monkeypatch):
    status, said = adopt(tmp_path, "pinned", dry_run=False)
    assert status == 0, said
    matrix = yaml.safe_load((tmp_path / "real" / "canary" / "gup.yaml").read_text())
    assert matrix["versions"]["declared"] == "<=0.21.0,>=0.18.0"
    monkeypatch.chdir(tmp_path / "real")
    checked, text = canary("check")
    lines = [line for line in text.splitlines() if line.startswith("FAIL")]
    assert checked == 1
    assert lines[0].startswith("FAIL  gup::old-helper[0.20.0\u20130.22.0] gup.utils has no")
    assert lines[1].startswith("FAIL  gup::soon-gone[0.22.0] beyond your pin <=0.21.0: gup.utils")
