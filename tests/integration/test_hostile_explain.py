"""`canary explain` quotes upstream source (the subject's diff, the closest line, the paths):
built here by a hostile release to reach the terminal and a CI log, it must be shown as every
other format shows it, escaped, in text and in JSON."""

from __future__ import annotations

import json
import re

from campaign_upstream import PROJECT, locked_upstream

from canary.cli.main import main

HELD = "self.mode = 'safe'"
#: a terminal's escape sequences (CSI, OSC with its string terminator, a lone C1 CSI), a
#: bidirectional override, and the two forms of a GitHub workflow command
HOSTILE = (
    "self.mode = '\x1b[2J\x1b]8;;https://evil.example/\x07link\x1b]8;;\x07'",
    "self.mode = '\x9b31m\u202eevil\u202c'",
    "##[warning]self.mode = 'safe-ish'",
)
CONTEXT = "::error file=setup.py::planted"


def release(version: str) -> dict[str, bytes]:
    body = [HELD] if version == "1.0.0" else list(HOSTILE)
    lines = "\n".join(f"        {line}" for line in body)
    source = (
        f'class Trainer:\n    def __init__(self):\n{lines}\n        """\n{CONTEXT}\n        """\n'
    )
    return {
        f"{PROJECT}/__init__.py": b"",
        f"{PROJECT}/trainer.py": source.encode(),
    }


MATRIX = f"""\
upstream: {PROJECT}
versions:
  releases: ">=1.0"
checks:
  - id: mode
    module: {PROJECT}.trainer
    function: Trainer.__init__
    contains: ["{HELD}"]
"""
RAW = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def assert_shown_not_acted_on(text: str) -> None:
    for line in text.split("\n"):
        assert not RAW.search(line), repr(line)
        assert not re.match(r"\s*::", line), repr(line)
        assert "##[" not in line, repr(line)


def test_explain_escapes_what_the_upstream_wrote(tmp_path, monkeypatch, capsys):
    releases = {v: release(v) for v in ("1.0.0", "2.0.0")}
    with locked_upstream(tmp_path, monkeypatch, releases, MATRIX):
        capsys.readouterr()
        assert main(["explain", f"{PROJECT}::mode"]) == 0
        text = capsys.readouterr().out
        assert main(["explain", f"{PROJECT}::mode", "--format", "json"]) == 0
        raw = capsys.readouterr().out
    assert "broke in 2.0.0 (held on 1.0.0)" in text
    assert "\\x1b[2J" in text and "\\u202e" in text and "\\x9b" in text  # shown, as escapes
    assert "closest in 2.0.0:" in text
    assert_shown_not_acted_on(text)
    assert_shown_not_acted_on(raw)
    data = json.loads(raw)
    assert "\\x1b[2J" in data["diff"] and "\\u202e" in data["diff"]
    assert_shown_not_acted_on(data["diff"])


def test_a_member_the_story_cannot_read_costs_no_story(tmp_path, monkeypatch, capsys):
    """An sdist whose new release holds members canary will not read (links: one to
    /etc/passwd, one climbing out) beside the module a removed function moved to: the search
    passes them by, and the story still names where the function went."""
    from campaign_upstream import publish
    from servers import make_sdist, serving

    old = {"fakepkg/__init__.py": b"", "fakepkg/core.py": b"def helper(x):\n    return x\n"}
    new = {
        "fakepkg/__init__.py": b"",
        "fakepkg/core.py": b"X = 1\n",
        "fakepkg/zz.py": old["fakepkg/core.py"],
    }
    links = {"fakepkg/aa.py": "/etc/passwd", "fakepkg/core_helpers.py": "../../x"}
    archives = {
        "fakepkg-1.0.0.tar.gz": make_sdist("fakepkg-1.0.0", old),
        "fakepkg-2.0.0.tar.gz": make_sdist("fakepkg-2.0.0", new, links),
    }
    matrix = (
        f'upstream: {PROJECT}\nversions:\n  releases: ">=1.0"\nchecks:\n'
        f"  - {{id: helper, module: {PROJECT}.core, function: helper}}\n"
    )
    with serving() as server:
        monkeypatch.setenv("CANARY_INDEX_URL", publish(server, archives))
        monkeypatch.setenv("CANARY_CACHE_DIR", str(tmp_path / "cache"))
        monkeypatch.chdir(tmp_path)
        (tmp_path / "matrices").mkdir()
        (tmp_path / "matrices" / f"{PROJECT}.yaml").write_text(matrix)
        assert main(["explain", f"{PROJECT}::helper"]) == 0
    text = capsys.readouterr().out
    assert "broke in 2.0.0 (held on 1.0.0)" in text
    assert "moved to fakepkg.zz.helper in 2.0.0 (fakepkg/zz.py:1)" in text, text
