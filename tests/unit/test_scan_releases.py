"""`canary scan` reads the upstream's releases from the package index (a loopback one here):
the newest and lowest in the declared range place and judge the proposals, and one holding on
only one end is bisected and gated where it starts or stops holding."""

from __future__ import annotations

import hashlib
import json
import shutil

import pytest
import yaml
from commands import canary
from paths import FIXTURES
from servers import make_wheel, serving

from canary.scan.downstream.requirements import declared_releases, searched_folders

JSON_TYPE = "application/vnd.pypi.simple.v1+json"
VERSIONS = ["1.0.0", "1.1.0", "1.2.0", "1.3.0", "2.0.0"]


def core(version: str) -> bytes:
    """new_api appears in 1.2.0, old_api is gone from 1.3.0; Engine.run is inherited."""
    major, minor = (int(p) for p in version.split(".")[:2])
    text = "class Base:\n    def run(self, model, **kwargs):\n        return model\n\n"
    text += "class Engine(Base):\n    pass\n\n"
    if (major, minor) < (1, 3):  # from 1.3.0 a dataclass: its fields are the constructor's
        text += "class Config:\n    def __init__(self, size=1):\n        self.size = size\n\n"
    else:
        text += "@dataclass\nclass Config:\n    size: int = 1\n\n"
    if (major, minor) >= (1, 2):
        text += "def new_api(model):\n    return model\n\n"
    if (major, minor) < (1, 3):
        text += "def old_api(model):\n    return model\n"
    if (1, 1) <= (major, minor) < (1, 3):  # on neither end of the range
        text += "def mid_api(model):\n    return model\n"
    if (major, minor) == (1, 2):  # on one release between the ends
        text += "def brief_api(model):\n    return model\n"
    return text.encode()


def loop(version: str) -> bytes:
    """Loop.step's source: `steady = 1` on every release, `has_images` only from 1.1 to 1.2."""
    major, minor = (int(p) for p in version.split(".")[:2])
    mid = "        has_images = 0\n" if (1, 1) <= (major, minor) < (1, 3) else ""
    return f"class Loop:\n    def step(self):\n        steady = 1\n{mid}        return 0\n".encode()


def grpo(version: str) -> bytes:
    """Grpo: _get_token_logps renamed _get_token_logps_and_entropies in 1.2, _move_model gone
    in 1.2, _score gone in 1.2 and _score_batch added in 1.3."""
    major, minor = (int(p) for p in version.split(".")[:2])
    old = (major, minor) < (1, 2)
    names = (
        ["_get_token_logps", "_move_model", "_score"] if old else ["_get_token_logps_and_entropies"]
    )
    names += ["_score_batch"] if (major, minor) >= (1, 3) else []
    body = "".join(f"    def {name}(self):\n        return 0\n" for name in names)
    return f"class Grpo:\n{body}".encode()


#: a kernel the mixer binds with `global` when it is built (transformers' lazily loaded ones)
MIXER = b"""class Mixer:
    def __init__(self):
        global kernel_fn
        kernel_fn = None
"""


@pytest.fixture
def index(tmp_path, monkeypatch):
    with serving() as server:
        files = []
        for version in VERSIONS:
            name = f"fakeup-{version}-py3-none-any.whl"
            wheel = make_wheel(
                "fakeup",
                version,
                {
                    "fakeup/__init__.py": b"from .core import Engine\n",
                    "fakeup/core.py": core(version),
                    "fakeup/loop.py": loop(version),
                    "fakeup/grpo.py": grpo(version),
                    "fakeup/mixer.py": MIXER,
                },
            )
            server.add(f"/files/{name}", wheel)
            digest = hashlib.sha256(wheel).hexdigest()
            url = f"../../files/{name}"
            files.append({"filename": name, "url": url, "hashes": {"sha256": digest}})
        page = {"meta": {"api-version": "1.1"}, "name": "fakeup", "versions": VERSIONS}
        page["files"] = files
        server.add("/simple/fakeup/", json.dumps(page).encode(), content_type=JSON_TYPE)
        monkeypatch.setenv("CANARY_INDEX_URL", server.url + "/simple/")
        monkeypatch.setenv("CANARY_CACHE_DIR", str(tmp_path / "cache"))
        monkeypatch.delenv("CANARY_OFFLINE", raising=False)
        yield server


DOWNSTREAM = """\
import fakeup
from fakeup.core import new_api, old_api, gone_api

fakeup.Engine.run(None, model=1)
fakeup.core.Config(size=2)

try:
    from fakeup.core import ancient_api
except ImportError:
    ancient_api = None
"""


def scanned(tmp_path, downstream: str = DOWNSTREAM) -> str:
    """scan's output for a client declaring `fakeup>=1.0,!=2.0.0`."""
    project = tmp_path / "client"
    (project / "client").mkdir(parents=True, exist_ok=True)
    (project / "pyproject.toml").write_text('[project]\ndependencies = ["fakeup>=1.0,!=2.0.0"]\n')
    (project / "client" / "__init__.py").write_text(downstream)
    status, text = canary("scan", str(project / "client"), "--upstream", "fakeup")
    assert status == 0
    return text


def test_proposals_are_judged_on_the_range_and_gated_where_they_hold(index, tmp_path):
    text = scanned(tmp_path)
    checks = {c["id"]: c for c in yaml.safe_load(text.split("---\n", 1)[1])["checks"]}
    assert "# placed and judged on 1.3.0, 1.0.0;" in text
    assert checks["new-api"]["since"] == "1.2.0" and checks["new-api"]["module"] == "fakeup.core"
    assert "until" not in checks["old-api"]  # broke within the range: it stays red
    assert "# scan: holds from 1.2.0 on, not on 1.0.0 (lowest in range)" in text
    assert "# FAILS from 1.3.0 on (newest in range 1.3.0), held before: fakeup.core has no" in text
    # on no release in range: a warning on every run, never a red one (last_held.py)
    assert checks["gone-api"]["severity"] == "info"
    said = "# scan: broken on every release in range (1.0.0 to 1.3.0): fakeup.core has no symbol"
    assert f"{said} gone_api (similar: new_api); no earlier release on the index" in text
    run = checks["base-run-accepts"]
    assert (run["module"], run["function"], run["accepts"]) == (
        "fakeup.core",
        "Base.run",
        ["model"],
    )
    assert "2.0.0" not in text.split("checks:")[1]
    # a dataclass on the newest release: the `__init__` generated from its fields takes them
    config = checks["config-init-accepts"]
    assert (config["function"], config["accepts"]) == ("Config.__init__", ["size"])
    # guarded by the client and on neither end: left out, said at the head of the file
    head = "# left out: 1 use the client guards (try/except, hasattr) of names neither 1.3.0"
    assert head in text
    assert "#   fakeup.core.ancient_api -- imported at __init__.py:8 (severity info" in text
    assert "ancient-api" not in checks


def checks_of(text: str) -> dict[str, dict]:
    return {c["id"]: c for c in yaml.safe_load(text.split("---\n", 1)[1])["checks"] or []}


def test_a_check_holding_only_between_the_ends_is_gated_where_it_appears(index, tmp_path):
    text = scanned(tmp_path, "from fakeup.core import mid_api, gone_api\n")
    checks = checks_of(text)
    assert checks["mid-api"]["since"] == "1.1.0"
    assert "# scan: holds from 1.1.0 to 1.2.0, not on 1.0.0 (lowest in range)" in text
    assert "# FAILS from 1.3.0 on (newest in range 1.3.0), held before" in text
    assert "since" not in checks["gone-api"]  # holds nowhere: a warning, said where it fails
    assert "in range (1.0.0 to 1.3.0): fakeup.core has no symbol gone_api" in text


def test_a_check_holding_on_one_release_between_the_ends_says_so(index, tmp_path):
    text = scanned(tmp_path, "from fakeup.core import brief_api\n")
    assert checks_of(text)["brief-api"]["since"] == "1.2.0"
    assert "# scan: holds only on 1.2.0, not on 1.0.0 (lowest in range)" in text
    assert "# `scan: holds from V on` above a check: gated since V" in text


def test_a_name_no_release_defines_is_never_given_a_signature(index, tmp_path):
    text = scanned(tmp_path, "from fakeup.core import kernel_fn\nkernel_fn(x=1, weight=2)\n")
    checks = checks_of(text)
    assert [(c["module"], c.get("symbol")) for c in checks.values()] == [
        ("fakeup.core", "kernel_fn")
    ]
    assert "accepts" not in text.split("checks:")[1]


def test_a_name_bound_when_a_function_runs_is_kept_saying_it_warns(index, tmp_path):
    """It warns on both ends (bound only once Mixer() ran), which is no absence the client
    tolerates: the check stays, and says so."""
    text = scanned(tmp_path, "from fakeup.mixer import kernel_fn\n")
    assert list(checks_of(text)) == ["kernel-fn"]
    assert "# WARNS on 1.3.0 (newest in range): kernel_fn is not bound when fakeup.mixer" in text


def test_a_defined_name_keeps_its_signature_check(index, tmp_path):
    text = scanned(tmp_path, "from fakeup.core import new_api\nnew_api(model=1)\n")
    assert checks_of(text)["new-api-call"]["call"] == {"args": 0, "keywords": ["model"]}


def test_a_use_gated_outside_every_release_in_range_is_not_written(index, tmp_path):
    downstream = (
        "import fakeup\nfrom packaging.version import Version\n"
        "if Version(fakeup.__version__) < Version('0.5'):\n    fakeup.core.old_api(model=1)\n"
        "if Version(fakeup.__version__) >= Version('1.2'):\n    fakeup.core.new_api(model=1)\n"
    )
    text = scanned(tmp_path, downstream)
    checks = checks_of(text)
    assert "old-api-call" not in checks and checks["new-api-call"]["since"] == "1.2"
    assert "# left out: 1 use the client gates to releases outside the range" in text
    assert "#   fakeup.core.old_api (<0.5) -- used at __init__.py:4; called with keyword" in text


def test_a_use_the_client_gates_is_bisected_within_its_gate(index, tmp_path):
    downstream = (
        "import fakeup\nfrom packaging.version import Version\n"
        "if Version(fakeup.__version__) < Version('1.3'):\n    fakeup.core.new_api(model=1)\n"
        "if Version(fakeup.__version__) < Version('1.3'):\n    fakeup.core.old_api(model=1)\n"
    )
    text = scanned(tmp_path, downstream)
    checks = checks_of(text)
    # new_api appears in 1.2.0, beyond the lowest: gated there as well as by the client
    assert checks["new-api-call"]["versions"] == ">=1.2.0,<1.3"
    assert "# scan: holds from 1.2.0 on, not on 1.0.0 (lowest in range)" in text
    # old_api holds wherever the client's gate reaches: its gate stays the client's
    assert checks["old-api-call"]["until"] == "1.3" and "versions" not in checks["old-api-call"]


def test_a_second_scan_answers_from_remembered_verdicts_without_opening_releases(index, tmp_path):
    first = scanned(tmp_path)
    assert index.requests_to("/files/fakeup-1.2.0-py3-none-any.whl")  # bisected
    # keep only the verdicts: a release opened again would have to be fetched
    for kind in (tmp_path / "cache").glob("*/*"):
        if kind.is_dir() and kind.name != "verdict":
            shutil.rmtree(kind)
    index.log.clear()
    assert scanned(tmp_path) == first
    fetched = {entry.path for entry in index.log}
    assert "/files/fakeup-1.3.0-py3-none-any.whl" in fetched  # the newest places proposals
    assert not fetched & {f"/files/fakeup-{v}-py3-none-any.whl" for v in ("1.1.0", "1.2.0")}


def test_the_declared_range_is_found_above_the_path_and_in_a_wheels_metadata(tmp_path):
    (tmp_path / "repo" / "src" / "lib").mkdir(parents=True)
    (tmp_path / "repo" / "setup.cfg").write_text("[options]\ninstall_requires =\n    trl>=0.20\n")
    (tmp_path / "repo" / "requirements-dev.txt").write_text("peft>=0.15  # pinned\n")
    found = declared_releases(tmp_path / "repo" / "src" / "lib", "trl")
    assert (found.spec, found.comment) == (">=0.20", "what setup.cfg requires (repo/)")
    assert declared_releases(tmp_path / "repo" / "src" / "lib", "peft").spec == ">=0.15"
    wheel = tmp_path / "unpacked"
    (wheel / "lib").mkdir(parents=True)
    (wheel / "lib-1.0.dist-info").mkdir()
    (wheel / "lib-1.0.dist-info" / "METADATA").write_text(
        "Name: lib\nRequires-Dist: trl!=0.19.0,<=1.15.0,>=0.18.2\n"
        'Requires-Dist: trl>=0.1; extra == "old"\n'
    )
    found = declared_releases(wheel / "lib", "trl")
    assert found.spec == "!=0.19.0,>=0.18.2"
    assert found.comment == (
        "what lib-1.0.dist-info/METADATA requires; upper pin <=1.15.0 dropped: the releases"
        " after it are what to watch (unpacked/)"
    )


def _repository(tmp_path):
    """outer/ declares trl>=0.5 (above the repository), repo/ is the repository (setup.cfg
    declaring nothing), repo/src/lib the package scanned; the attacker's files live in
    elsewhere/."""
    (tmp_path / "outer" / "repo" / "src" / "lib").mkdir(parents=True)
    (tmp_path / "outer" / "requirements.txt").write_text("trl>=0.5\n")
    (tmp_path / "outer" / "repo" / "setup.cfg").write_text("[metadata]\nname = lib\n")
    (tmp_path / "elsewhere" / "x-1.0.dist-info").mkdir(parents=True)
    (tmp_path / "elsewhere" / "reqs.txt").write_text("trl>=0.7\n")
    (tmp_path / "elsewhere" / "x-1.0.dist-info" / "METADATA").write_text(
        "Requires-Dist: trl>=0.9\n"
    )
    return tmp_path / "outer" / "repo"


def test_the_declared_range_is_not_looked_for_above_the_repository(tmp_path):
    repo = _repository(tmp_path)
    assert declared_releases(repo / "src" / "lib", "trl") is None
    (repo / "src" / "requirements.txt").write_text("trl>=0.6\n")
    assert declared_releases(repo / "src" / "lib", "trl").spec == ">=0.6"


@pytest.mark.parametrize(
    "link",
    [
        "requirements.txt",  # a file linked out of the repository
        "requirements",  # a folder of requirements linked out
        "x-1.0.dist-info",  # an unpacked wheel's metadata linked out
        "setup.py",
    ],
)
def test_the_declared_range_is_never_read_through_a_link(tmp_path, link):
    repo = _repository(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    target = {
        "requirements.txt": elsewhere / "reqs.txt",
        "requirements": elsewhere,
        "x-1.0.dist-info": elsewhere / "x-1.0.dist-info",
        "setup.py": elsewhere / "reqs.txt",
    }[link]
    (repo / "src" / "lib" / link).symlink_to(target)
    assert declared_releases(repo / "src" / "lib", "trl") is None


def test_a_path_reached_through_a_link_is_walked_up_where_the_link_is(tmp_path):
    """The folders above PATH are those above the name the user gave, not above where a link
    in it leads (repo/'s declaration is above the link's target, not above the link)."""
    repo = _repository(tmp_path)
    (repo / "setup.cfg").write_text("[options]\ninstall_requires =\n    trl>=0.20\n")
    (repo / "src" / "lib" / "pkg").mkdir()
    (tmp_path / "view").mkdir()
    (tmp_path / "view" / "lib").symlink_to(repo / "src" / "lib")
    assert declared_releases(repo / "src" / "lib" / "pkg", "trl").spec == ">=0.20"
    assert declared_releases(tmp_path / "view" / "lib" / "pkg", "trl") is None


@pytest.mark.parametrize("below", ["", "sub"])
def test_a_parent_folder_that_is_a_link_is_not_read_through(tmp_path, below):
    """PATH lies under view/lib, a link to another tree's folder holding requirements.txt,
    setup.cfg and a wheel's METADATA (trl>=0.9): none of them is read through it (a parent
    at the link, or between the link and PATH), and what is above the link is walked up as
    written."""
    repo = _repository(tmp_path)
    other = tmp_path / "elsewhere"
    (other / "requirements.txt").write_text("trl>=0.7\n")
    (other / "setup.cfg").write_text("[options]\ninstall_requires =\n    peft>=0.9\n")
    (other / "sub" / "pkg").mkdir(parents=True)
    (repo / "view").mkdir()
    (repo / "view" / "lib").symlink_to(other)
    path = repo / "view" / "lib" / below / "pkg" if below else repo / "view" / "lib" / "sub"
    assert searched_folders(path) == [path, repo / "view", repo]
    assert declared_releases(path, "trl") is None
    assert declared_releases(path, "peft") is None


def test_a_declaration_file_that_is_no_regular_file_or_too_big_is_not_read(tmp_path):
    import os
    import threading

    from canary.analysis import MAX_SOURCE_BYTES

    repo = _repository(tmp_path)
    big = repo / "requirements.txt"
    big.write_text("trl>=0.20\n")
    os.truncate(big, MAX_SOURCE_BYTES + 1)  # sparse: costs no disk
    assert declared_releases(repo / "src" / "lib", "trl") is None
    big.unlink()
    fifo = repo / "src" / "requirements-dev.txt"
    os.mkfifo(fifo)
    found: list = []
    reader = threading.Thread(target=lambda: found.append(declared_releases(fifo.parent, "trl")))
    reader.start()
    reader.join(30)
    try:
        assert found == [None], "a FIFO was opened and blocked the scan"
    finally:
        if reader.is_alive():  # release the blocked open of the old code
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            reader.join()


@pytest.mark.parametrize(
    ("declared", "spec", "dropped"),
    [
        ("trl>=0.20,<0.25", ">=0.20", "<0.25"),
        ("trl~=0.20.1", ">=0.20.1", "~=0.20.1"),
        ("trl==0.21.0", ">=0.21.0", "==0.21.0"),
        ("trl<1", ">=0", "<1"),
        ("trl>=0.20,!=0.22.0", "!=0.22.0,>=0.20", None),
        ("trl==0.21.*", "==0.21.*", None),  # a wildcard is a series, kept as the client says
    ],
)
def test_the_range_keeps_lower_bounds_and_exclusions_but_not_upper_pins(
    tmp_path, declared, spec, dropped
):
    (tmp_path / "requirements").mkdir()
    (tmp_path / "requirements" / "base.txt").write_text(f"{declared}\n")
    found = declared_releases(tmp_path, "trl")
    assert found.spec == spec
    assert (
        (f"upper pin {dropped} dropped" in found.comment)
        if dropped
        else ("dropped" not in found.comment)
    )
    assert found.comment.startswith("what base.txt requires")


def test_the_release_after_an_upper_pin_is_read(index, tmp_path):
    project = tmp_path / "client"
    (project / "client").mkdir(parents=True)
    (project / "pyproject.toml").write_text('[project]\ndependencies = ["fakeup>=1.0,<1.3"]\n')
    (project / "client" / "__init__.py").write_text("from fakeup.core import old_api\n")
    status, text = canary("scan", str(project / "client"), "--upstream", "fakeup")
    assert status == 0
    assert "# placed and judged on 2.0.0, 1.0.0;" in text
    assert 'releases: ">=1.0"  # what pyproject.toml requires; upper pin <1.3 dropped' in text
    assert "# FAILS from 1.3.0 on" in text  # the break right after the pin


REWRITER = """\
import inspect
from fakeup.loop import Loop

def rewrite():
    src = inspect.getsource(Loop.step)
    if "{wanted}" not in src:
        raise RuntimeError("unsupported release")
    return src.replace("steady = 1", "steady = 2")
"""


def test_a_text_that_breaks_alone_is_a_source_check_of_its_own(index, tmp_path):
    """A rewriter's texts are judged apart: `has_images` (1.1.0 to 1.2.0 only) is gated and
    red where it goes; were it one check with `steady = 1`, it would fail on both ends."""
    text = scanned(tmp_path, REWRITER.format(wanted="has_images"))
    sources = {i: c for i, c in checks_of(text).items() if "contains" in c}
    assert sorted(c["contains"] for c in sources.values()) == [["has_images"], ["steady = 1"]]
    mid = next(c for c in sources.values() if c["contains"] == ["has_images"])
    assert mid["since"] == "1.1.0" and mid["function"] == "Loop.step"
    assert "lacks 'has_images'" in text.split("FAILS from 1.3.0 on", 1)[1].split("\n", 1)[0]


def test_texts_holding_on_every_end_stay_one_check(index, tmp_path):
    text = scanned(tmp_path, REWRITER.format(wanted="return 0"))
    sources = [c for c in checks_of(text).values() if "contains" in c]
    assert [sorted(c["contains"]) for c in sources] == [["return 0", "steady = 1"]]
    assert "since" not in sources[0]


def test_a_text_no_release_in_the_range_holds_is_a_warning_with_the_closest_line(index, tmp_path):
    """A rewrite of a text no release in range has (`steady = 0`) does nothing on every one:
    a check of its own, `severity: info`, saying what is closest to it now."""
    text = scanned(tmp_path, REWRITER.format(wanted="steady = 0"))
    sources = [c for c in checks_of(text).values() if "contains" in c]
    assert sorted((c["contains"], c.get("severity", "")) for c in sources) == [
        (["steady = 0"], "info"),
        (["steady = 1"], ""),
    ]
    said = "# scan: broken on every release in range (1.0.0 to 1.3.0): source of Loop.step lacks"
    assert said in text and "closest now on 1.3.0: `steady = 1` (fakeup/loop.py:3)" in text
    assert "left out" not in text and "`scan: broken on every release in range` above" in text


def test_a_method_renamed_where_the_client_uses_the_new_name_is_gated_until_there(index, tmp_path):
    downstream = (FIXTURES / "scan_renamed" / "client.py").read_text()
    text = scanned(tmp_path, downstream)
    checks = checks_of(text)
    assert checks["grpo-get-token-logps"]["until"] == "1.2.0"
    assert checks["grpo-get-token-logps-and-entropies"]["since"] == "1.2.0"
    said = (
        "# scan: holds until 1.1.0; from 1.2.0 on the class has Grpo._get_token_logps_and_entropies"
    )
    assert said in text
    # gone with nothing in its place, or its near name appearing on another release: red
    for gone in ("grpo-move-model", "grpo-score"):
        assert "until" not in checks[gone]
    assert text.count("# FAILS from 1.2.0 on (newest in range 1.3.0), held before") == 2


def test_a_public_import_is_one_line_of_the_review_and_a_notice(index, tmp_path):
    """A name the package root exports on both ends, imported unguarded, is a notice (issue
    46, item 6): one line, `severity: info`; its id as it was."""
    text = scanned(tmp_path, "from fakeup import Engine\nfrom fakeup.core import Config\n")
    one = '  - {id: engine, why: "imported at __init__.py:1", module: "fakeup", symbol: "Engine"'
    assert f'{one}, severity: "info"}}\n' in text
    checks = checks_of(text)
    assert checks["engine"]["severity"] == "info" and checks["engine"]["symbol"] == "Engine"
    assert "severity" not in checks["config"]  # a module below the root: a check as ever
    assert "# a check on one line: a public name (the package root exports it" in text
    # patched, or gone from a release read: no notice
    text = scanned(tmp_path, "import fakeup\n\nfakeup.Engine = object\nfrom fakeup import gone\n")
    assert "{id:" not in text
