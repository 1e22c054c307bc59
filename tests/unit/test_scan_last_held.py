"""A use no release in the client's range satisfies is a warning, never a comment or a red
check: `severity: info`, its comment naming the last release before the range it held on
(the newest of each minor series walked down, then bisection) and, for a text, the closest
line on the newest release (issue 46, item 4)."""

from __future__ import annotations

import json

import pytest
import yaml
from commands import canary
from servers import index_of, make_wheel

#: 1.2.1 drops `legacy_api` and the `mask = pad(x)` line; the client declares oldup>=1.3
VERSIONS = ["1.0.0", "1.1.0", "1.1.1", "1.2.0", "1.2.1", "1.3.0", "1.4.0"]


def core(version: str) -> bytes:
    old = tuple(int(p) for p in version.split(".")) < (1, 2, 1)
    text = "def current_api(x):\n    return x\n\n"
    text += "def legacy_api(x):\n    return x\n\nLEGACY_FLAG = False\n\n" if old else ""
    line = "        mask = pad(x)\n" if old else "        mask = pad(x, value=0)\n"
    return (
        text + f"class Collator:\n    def collate(self, x):\n{line}        return mask\n"
    ).encode()


@pytest.fixture
def index(tmp_path, monkeypatch):
    wheels = {
        v: make_wheel("oldup", v, {"oldup/__init__.py": b"", "oldup/core.py": core(v)})
        for v in VERSIONS
    }
    with index_of("oldup", wheels, monkeypatch, tmp_path / "cache") as server:
        yield server


CLIENT = """\
import inspect
import oldup.core
from oldup.core import Collator, current_api, legacy_api, never_api

oldup.core.LEGACY_FLAG = True  # read by 1.2.0 and before: does nothing since
oldup.core._client_marker = 1  # the client's own name
try:
    oldup.core._guarded_marker = 2  # its own too, never "dead code"
except AttributeError:
    pass

def patch():
    src = inspect.getsource(Collator.collate)
    return src.replace("mask = pad(x)", "mask = pad(x) * 2")
"""


def scanned(tmp_path, requirement: str) -> tuple[str, dict[str, dict]]:
    project = tmp_path / "client"
    (project / "client").mkdir(parents=True, exist_ok=True)
    (project / "pyproject.toml").write_text(f'[project]\ndependencies = ["{requirement}"]\n')
    (project / "client" / "__init__.py").write_text(CLIENT)
    status, text = canary("scan", str(project / "client"), "--upstream", "oldup")
    assert status == 0
    checks = yaml.safe_load(text.split("---\n", 1)[1])["checks"]
    return text, {c["id"]: c for c in checks}


def comment_above(text: str, check_id: str) -> str:
    lines = text.splitlines()
    return lines[lines.index(f"  - id: {check_id}") - 1]


def test_a_name_gone_before_the_range_warns_naming_the_last_release_it_held_on(index, tmp_path):
    text, checks = scanned(tmp_path, "oldup>=1.3")
    assert checks["legacy-api"]["severity"] == "info" and "since" not in checks["legacy-api"]
    said = comment_above(text, "legacy-api")
    assert said.startswith(
        "  # scan: broken on every release in range (1.3.0 to 1.4.0): oldup.core has no symbol"
        " legacy_api"
    )
    # 1.2.1 failing, 1.1.1 holding (the newest of each series), then bisected: 1.2.0
    assert "; last held on 1.2.0 (gone from 1.2.1 on) -- severity info" in said
    assert "held on none of 3 earlier releases read (1.0.0 to 1.2.1)" in comment_above(
        text, "never-api"
    )
    assert "severity" not in checks["current-api"]  # holds: an error check as ever


def test_a_text_gone_before_the_range_warns_with_the_closest_line_now(index, tmp_path):
    text, checks = scanned(tmp_path, "oldup>=1.3")
    (source,) = [c for c in checks.values() if "contains" in c]
    assert source["contains"] == ["mask = pad(x)"] and source["severity"] == "info"
    said = comment_above(text, next(i for i, c in checks.items() if c is source))
    assert "last held on 1.2.0 (gone from 1.2.1 on)" in said
    assert "closest now on 1.4.0: `mask = pad(x, value=0)` (oldup/core.py:" in said
    assert "mask = pad(x)" not in text.split("upstream: oldup")[0]  # not only at the head


def test_one_release_in_range_is_every_release_in_range(index, tmp_path):
    text, checks = scanned(tmp_path, "oldup>=1.4")
    assert checks["legacy-api"]["severity"] == "info"
    assert "broken on every release in range (1.4.0): oldup.core has no symbol" in text
    assert "last held on 1.2.0 (gone from 1.2.1 on)" in comment_above(text, "legacy-api")


def test_a_check_on_the_range_then_warns_and_never_fails(index, tmp_path):
    scanned(tmp_path, "oldup>=1.3")
    project = tmp_path / "client"
    out = str(tmp_path / "m")
    status, _ = canary("scan", str(project / "client"), "--upstream", "oldup", "--output", out)
    assert status == 0
    status, out = canary("check", str(tmp_path / "m" / "oldup.yaml"), "--format", "json")
    results = json.loads(out)["results"]
    legacy = {r["status"] for r in results if r["check"] == "legacy-api"}
    assert legacy == {"warn"} and status == 0


def test_a_module_global_the_client_sets_is_a_check_where_an_older_release_had_it(index, tmp_path):
    """`m.NAME = x` of a name no release in range binds: a setting upstream stopped reading
    (a warning, where it last held) or the client's own name (left out, said at the head)."""
    text, checks = scanned(tmp_path, "oldup>=1.3")
    flag = checks["legacy-flag"]
    assert (flag["symbol"], flag["severity"]) == ("LEGACY_FLAG", "info")
    assert flag["why"] == "monkey-patched at __init__.py:5"
    assert "last held on 1.2.0 (gone from 1.2.1 on)" in comment_above(text, "legacy-flag")
    assert "client_marker" not in "".join(checks)
    head = "# left out: 2 names your code sets on an upstream module that no release read binds"
    assert head in text
    assert "#   oldup.core._client_marker -- monkey-patched at __init__.py:6" in text
    assert "#   oldup.core._guarded_marker -- monkey-patched at __init__.py:8 (severity" in text
    assert "guards (try/except, hasattr)" not in text
