"""Version gates in every form a client writes them (issue 46): each fixture under
tests/fixtures/scan_gates is a small downstream gating its uses of `gup` one way, scanned
against a `gup` served on loopback (0.18.0 to 0.22.0; the clients declare
`gup>=0.18.0,<=0.21.0`). A use is gated to the releases its code runs on, a use reached on
no release in range is listed at the head, and no gate is written that no release satisfies.
"""

from __future__ import annotations

import io
import shutil

import pytest
from paths import FIXTURES
from servers import make_wheel, publish_releases, serving

from canary.init.command import init_main

TREES = FIXTURES / "scan_gates"
RELEASES = ("0.18.0", "0.19.0", "0.20.0", "0.21.0", "0.22.0")


def release(version: str) -> dict[str, bytes]:
    """0.18-0.19: `old_helper` and the module `old_utils`; 0.20.0 alone: `only_020`; from
    0.20.0 on: `new_helper` and the module `fresh` (a class attribute `_registry`)."""
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
