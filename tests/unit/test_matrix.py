"""Malformed matrices: each names file, line, check id and key, and `canary check` exits 2."""

from __future__ import annotations

import datetime
import os
import subprocess
import sys
import textwrap

import pytest
from commands import canary

from canary.matrix.model import MatrixError, load_matrix
from canary.matrix.yamlmarks import line_at

HEAD = "upstream: trl\nchecks:\n"

# (case id, matrix text, expected line, fragments the message must contain)
BAD = [
    ("empty", "", None, ["the file is empty"]),
    ("not-mapping", "- a\n- b\n", 1, ["top level must be a mapping"]),
    ("yaml-syntax", "upstream: trl\nchecks: [\n", 3, ["invalid YAML"]),
    ("duplicate-key", "upstream: trl\nupstream: peft\nchecks: []\n", 2, ["duplicate key"]),
    (
        "unknown-top",
        "upstream: trl\nchekcs: []\n",
        1,
        ["checks: must be a list", ":2: chekcs: unknown key", "'checks'"],
    ),
    ("empty-checks", "upstream: trl\nchecks: []\n", 2, ["checks: is empty"]),
    (
        "since-after-until",
        HEAD + "  - id: c\n    module: trl\n    since: '1.2'\n    until: '1.2'\n",
        6,
        ["check 'c'", "until: 1.2 is not after since: 1.2; the check could never run"],
    ),
    ("no-upstream", "checks: []\n", 1, ["upstream: required"]),
    ("checks-not-list", "upstream: trl\nchecks: {a: 1}\n", 2, ["checks: must be a list"]),
    ("checks-missing", "upstream: trl\n", 1, ["checks: must be a list"]),
    ("check-not-mapping", HEAD + "  - just-a-string\n", 3, ["checks[0]: must be a mapping"]),
    ("no-id", HEAD + "  - module: trl\n", 3, ["check '#1'", "id: required"]),
    ("bad-id", HEAD + "  - {id: Bad_Id, module: trl}\n", 3, ["id: 'Bad_Id' is not a valid id"]),
    (
        "near-miss-key",
        HEAD + "  - id: c\n    module: trl\n    class: A\n    method: [x]\n",
        6,
        ["check 'c'", "method: unknown key", "did you mean 'methods'?"],
    ),
    ("no-module", HEAD + "  - id: c\n    symbol: x\n", 3, ["check 'c'", "module: required"]),
    (
        "two-subjects",
        HEAD + "  - id: c\n    module: trl\n    symbol: a\n    class: B\n",
        6,
        ["check 'c'", "class: a check has one subject"],
    ),
    (
        "methods-without-class",
        HEAD + "  - id: c\n    module: trl\n    methods: [a]\n",
        5,
        ["methods: needs `class`"],
    ),
    (
        "params-without-function",
        HEAD + "  - id: c\n    module: trl\n    params: [a]\n",
        5,
        ["params: needs `function`"],
    ),
    (
        "accepts-without-function",
        HEAD + "  - id: c\n    module: trl\n    class: A\n    accepts: [a]\n",
        6,
        ["check 'c'", "accepts: needs `function`"],
    ),
    (
        "accepts-not-a-name",
        HEAD + "  - id: c\n    module: trl\n    function: f\n    accepts: ['a b']\n",
        6,
        ["accepts: 'a b' is not a name"],
    ),
    (
        "signature-without-function",
        HEAD + "  - id: c\n    module: trl\n    signature: '(a)'\n",
        5,
        ["check 'c'", "signature: needs `function`"],
    ),
    (
        "signature-no-parenthesis",
        HEAD + "  - id: c\n    module: trl\n    function: f\n    signature: 'a, b'\n",
        6,
        ["signature: 'a, b' must start with '('"],
    ),
    (
        "signature-not-python",
        HEAD + "  - id: c\n    module: trl\n    function: f\n    signature: '(a, *, *, b)'\n",
        6,
        ["check 'c'", "is not a Python signature"],
    ),
    (
        "signature-injection",
        HEAD
        + "  - id: c\n    module: trl\n    function: f\n    signature: '(a): pass\\ndef g(b)'\n",
        6,
        ["is not a Python signature"],
    ),
    (
        "own-not-bool",
        HEAD + "  - id: c\n    module: trl\n    class: A\n    own: yes please\n",
        6,
        ["own: must be true or false"],
    ),
    (
        "own-without-class",
        HEAD + "  - id: c\n    module: trl\n    function: f\n    own: true\n",
        6,
        ["own: needs `class`"],
    ),
    (
        "broken-not-mapping",
        HEAD + "  - id: c\n    module: trl\n    broken: ['1.0']\n",
        5,
        ["check 'c'", "broken: must map a version or PEP 440 range to a reason"],
    ),
    (
        "broken-unquoted-version",
        HEAD + "  - id: c\n    module: trl\n    broken:\n      1.14: why\n",
        6,
        ["check 'c'", "version must be a quoted string"],
    ),
    (
        "broken-bad-version",
        HEAD + "  - id: c\n    module: trl\n    broken:\n      '1.x': why\n",
        6,
        ["'1.x' is not a PEP 440 version"],
    ),
    (
        "broken-bad-range",
        HEAD + "  - id: c\n    module: trl\n    broken:\n      '>=1.x': why\n",
        6,
        ["is not a PEP 440 specifier"],
    ),
    (
        "broken-no-reason",
        HEAD + "  - id: c\n    module: trl\n    broken:\n      '1.0': ''\n",
        6,
        ["broken: 1.0: must be a reason"],
    ),
    (
        "broken-unknown-key",
        HEAD
        + "  - id: c\n    module: trl\n    broken:\n      '1.0': {reason: x, until: 2027-01-01}\n",
        6,
        ["until: unknown key in broken: 1.0", "did you mean 'until_date'?"],
    ),
    (
        "broken-bad-date",
        HEAD
        + "  - id: c\n    module: trl\n    broken:\n      '1.0':\n"
        + "        reason: x\n        until_date: soon\n",
        8,
        ["until_date must be a date such as 2027-03-01"],
    ),
    (
        "bad-regex",
        HEAD + "  - id: c\n    module: trl\n    matches: ['(unclosed']\n",
        5,
        ["check 'c'", "matches: bad regex"],
    ),
    (
        "wrong-type-list",
        HEAD + "  - id: c\n    module: trl\n    contains: {a: 1}\n",
        5,
        ["contains: must be a list of strings"],
    ),
    ("wrong-type-module", HEAD + "  - id: c\n    module: 3\n", 4, ["module: must be a string"]),
    ("bad-module", HEAD + "  - id: c\n    module: trl..x\n", 4, ["module: 'trl..x' is not"]),
    (
        "bad-function",
        HEAD + "  - id: c\n    module: trl\n    function: A.b.c\n",
        5,
        ["function: 'A.b.c' must be NAME or Class.method"],
    ),
    (
        "float-version",
        HEAD + "  - id: c\n    module: trl\n    since: 0.20\n",
        5,
        ["since: version must be a quoted string"],
    ),
    (
        "bad-version",
        HEAD + "  - id: c\n    module: trl\n    until: 'one'\n",
        5,
        ["until: 'one' is not a PEP 440 version"],
    ),
    (
        "bad-specifier",
        HEAD + "  - id: c\n    module: trl\n    versions: '>>1'\n",
        5,
        ["versions: '>>1' is not a PEP 440 specifier"],
    ),
    (
        "bad-severity",
        HEAD + "  - id: c\n    module: trl\n    severity: fatal\n",
        5,
        ["severity: must be one of error, info"],
    ),
    (
        "duplicate-id",
        HEAD + "  - {id: c, module: trl}\n  - {id: c, module: trl.x}\n",
        4,
        ["check 'c'", "duplicate id (first used on line 3)"],
    ),
    ("any-of-one", HEAD + "  - id: c\n    any_of: [{module: a}]\n", 4, ["any_of: must be a list"]),
    (
        "any-of-unknown",
        HEAD + "  - id: c\n    any_of:\n      - {module: a}\n      - {modul: b}\n",
        6,
        ["modul: unknown key in an any_of alternative", "did you mean 'module'"],
    ),
    (
        "any-of-gate-inside",
        HEAD + "  - id: c\n    any_of:\n      - {module: a, since: '1.0'}\n      - {module: b}\n",
        5,
        ["since: unknown key in an any_of alternative"],
    ),
    (
        "any-of-no-module",
        HEAD + "  - id: c\n    any_of:\n      - {symbol: a}\n      - {module: b}\n",
        5,
        ["module: required"],
    ),
    (
        "versions-not-mapping",
        "upstream: trl\nversions: '>=1'\nchecks: []\n",
        2,
        ["versions: must be a mapping"],
    ),
    (
        "versions-unknown",
        "upstream: trl\nversions:\n  release: '>=1'\nchecks: []\n",
        3,
        ["release: unknown key in versions", "did you mean 'releases'"],
    ),
    (
        "releases-bad",
        "upstream: trl\nversions:\n  releases: '=>1'\nchecks: []\n",
        3,
        ["releases: '=>1' is not a PEP 440 specifier"],
    ),
    (
        "anchor-bad",
        "upstream: trl\nversions:\n  anchors: [x.y]\nchecks: []\n",
        3,
        ["versions.anchors: 'x.y' is not a PEP 440 version"],
    ),
    (
        "broken-not-mapping",
        "upstream: trl\nversions:\n  broken: [1.0]\nchecks: []\n",
        3,
        ["versions.broken: must map version -> reason"],
    ),
    (
        "prereleases-type",
        "upstream: trl\nversions:\n  prereleases: 'yes'\nchecks: []\n",
        3,
        ["prereleases: must be true or false"],
    ),
    (
        "next-type",
        "upstream: trl\nversions:\n  releases: '>=1'\n  next: 'off'\nchecks: []\n",
        4,
        ["versions.next: must be true or false"],
    ),
    (
        "next-misspelt",
        "upstream: trl\nversions:\n  nxt: false\nchecks: []\n",
        3,
        ["nxt: unknown key in versions", "did you mean 'next'"],
    ),
    ("tag-without-version", "upstream: trl\ntag: 'v1'\nchecks: []\n", 2, ["tag: must contain"]),
    ("github-bad", "upstream: trl\ngithub: 'not a repo'\nchecks: []\n", 2, ["github:"]),
    ("src-up", "upstream: trl\nsrc: '../..'\nchecks: []\n", 2, ["src: '../..' leaves"]),
    ("src-up-inside", "upstream: trl\nsrc: 'a/../../b'\nchecks: []\n", 2, ["leaves"]),
    ("src-up-backslash", "upstream: trl\nsrc: 'a\\..\\b'\nchecks: []\n", 2, ["leaves"]),
    ("src-absolute", "upstream: trl\nsrc: /etc\nchecks: []\n", 2, ["src: '/etc' is absolute"]),
    ("module-newline", 'upstream: trl\nchecks:\n- {id: a, module: "trl\\n"}\n', 3, ["module:"]),
    ("upstream-newline", 'upstream: "trl\\n"\nchecks: []\n', 1, ["upstream:"]),
    ("src-drive", "upstream: trl\nsrc: 'C:/x'\nchecks: []\n", 2, ["is absolute"]),
]


@pytest.mark.parametrize(
    ("text", "line", "fragments"), [b[1:] for b in BAD], ids=[b[0] for b in BAD]
)
def test_bad_matrix_names_file_line_check_key(tmp_path, text, line, fragments):
    path = tmp_path / "trl.yaml"
    path.write_text(text)
    with pytest.raises(MatrixError) as caught:
        load_matrix(path)
    message = str(caught.value)
    where = f"{path}:{line}:" if line else f"{path}:"
    assert message.startswith(where), message
    for fragment in fragments:
        assert fragment in message


def test_every_error_of_a_file_is_reported_at_once(tmp_path):
    path = tmp_path / "trl.yaml"
    path.write_text(
        "upstream: trl\n"
        "tag: release\n"
        "checks:\n"
        "  - {id: a, module: trl, method: [x]}\n"
        "  - {id: b, module: trl, since: '2', until: '1'}\n"
        "  - {id: a, module: trl}\n"
        "  - {id: ok, module: trl}\n"
    )
    with pytest.raises(MatrixError) as caught:
        load_matrix(path)
    lines = str(caught.value).splitlines()
    assert [line.split(": ", 1)[0] for line in lines] == [f"{path}:{n}" for n in (2, 4, 5, 6)]
    assert "tag: must contain {version}" in lines[0]
    assert "check 'a': method: unknown key" in lines[1]
    assert "check 'b': until: 1 is not after since: 2" in lines[2]
    assert "check 'a': id: duplicate id (first used on line 4)" in lines[3]
    proc = subprocess.run(
        [sys.executable, "-m", "canary.cli.main", "check", str(path), "--source", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [f"canary: {line}" for line in lines]


def test_source_dir_is_never_left_through_src(tmp_path, capsys):
    outside = tmp_path / "outside" / "trl"
    outside.mkdir(parents=True)
    (outside / "__init__.py").write_text("SECRET = 1\n")
    (tmp_path / "site").mkdir()
    path = tmp_path / "trl.yaml"
    path.write_text(
        "upstream: trl\nsrc: ../outside\nchecks:\n  - {id: s, module: trl, symbol: SECRET}\n"
    )
    status, out = canary("check", str(path), "--source", str(tmp_path / "site"), "--format", "json")
    assert status == 2 and out == ""
    assert f"{path}:2: src: '../outside' leaves the repository" in capsys.readouterr().err


def test_good_matrix_loads_every_key(tmp_path):
    path = tmp_path / "trl.yaml"
    path.write_text(
        textwrap.dedent("""\
        upstream: trl
        package: trl
        pypi: trl
        github: huggingface/trl
        src: ""
        tag: "v{version}"
        versions:
          releases: ">=0.18.2"
          prereleases: false
          include: [main, "0.17.0"]
          exclude: ["0.20.1"]
          anchors: ["0.22.2", "1.0.0"]
          broken:
            "0.19.0": "bad upload"
        checks:
          - id: dgc
            why: "PatchFastRL swaps it"
            module: trl.models.utils
            symbol: disable_gradient_checkpointing
            since: "0.27.0"
          - id: grpo
            module: trl.trainer.grpo_trainer
            class: GRPOTrainer
            methods: [compute_loss]
            bases: [Trainer]
            contains: ["x"]
            matches: ["^y"]
            not_contains: ["z"]
            severity: info
            versions: "<2"
            broken:
              "0.20.0": "a typo in that release"
              ">=0.21,<0.22":
                reason: "reverted upstream"
                until_date: 2027-03-01
          - id: pin
            module: trl.trainer.grpo_trainer
            function: GRPOTrainer.compute_loss
            accepts: [num_items_in_batch]
            signature: "(self, model, inputs, return_outputs=False, num_items_in_batch=None)"
            own: true
        """)
    )
    matrix = load_matrix(path)
    assert matrix.versions.broken == {"0.19.0": "bad upload"}
    assert matrix.versions.include == ("main", "0.17.0")
    assert matrix.line_of("versions.anchors") == 12
    assert [c.id for c in matrix.checks] == ["dgc", "grpo", "pin"]
    assert matrix.checks[0].line == 16
    assert str(matrix.checks[0].gate) == ">=0.27.0"
    assert matrix.checks[1].contract.matches[0].pattern == "^y"
    assert matrix.package == "trl" and matrix.src == ""
    acks = matrix.checks[1].broken
    assert [(a.versions, a.reason, a.until_date) for a in acks] == [
        ("0.20.0", "a typo in that release", None),
        (">=0.21,<0.22", "reverted upstream", datetime.date(2027, 3, 1)),
    ]
    assert acks[1].line == 33
    pin = matrix.checks[2].contract
    assert pin.accepts == ("num_items_in_batch",) and pin.own
    assert [p.name for p in pin.signature.params][-1] == "num_items_in_batch"


def test_cli_exits_2_without_traceback(tmp_path):
    path = tmp_path / "trl.yaml"
    path.write_text(HEAD + "  - id: c\n    module: trl\n    class: A\n    method: [x]\n")
    proc = subprocess.run(
        [sys.executable, "-m", "canary.cli.main", "check", str(path), "--source", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert f"{path}:6: check 'c': method: unknown key in a check; did you mean 'methods'?" in (
        proc.stderr
    )


INCLUDE_ONLY = """\
upstream: up
versions:
  include: ["1.0.0", "2.0.0"]
checks:
  - id: gated
    module: up
    versions: "{gate}"
  - id: plain
    module: up
"""


def run_cli(tmp_path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "CANARY_CACHE_DIR": str(tmp_path / "cache")}
    return subprocess.run(
        [sys.executable, "-m", "canary.cli.main", "check", *args, "--offline"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
    )


def test_a_gate_that_admits_no_release_is_refused(tmp_path):
    (tmp_path / "up.yaml").write_text(INCLUDE_ONLY.format(gate=">=3"))
    proc = run_cli(tmp_path, "up.yaml")
    assert proc.returncode == 2
    assert proc.stderr == (
        "canary: up.yaml:7: check 'gated': versions: '>=3' admits none of the 2 releases "
        "(1.0.0 to 2.0.0); the check would never run\n"
    )


def test_an_acknowledgement_that_covers_no_release_is_refused(tmp_path):
    text = INCLUDE_ONLY.format(gate=">=1") + '    broken: {"1.5.0": "typo", ">=2": "real"}\n'
    (tmp_path / "up.yaml").write_text(text)
    proc = run_cli(tmp_path, "up.yaml")
    assert proc.returncode == 2
    assert proc.stderr == (
        "canary: up.yaml:10: check 'plain': broken: '1.5.0' covers none of the 2 releases "
        "(1.0.0 to 2.0.0); it acknowledges nothing\n"
    )


def test_a_selection_of_no_version_exits_2(tmp_path):
    (tmp_path / "up.yaml").write_text(INCLUDE_ONLY.format(gate=">=2"))
    proc = run_cli(tmp_path, "up.yaml", "--versions", "anchors")
    assert proc.returncode == 2
    assert proc.stderr == "canary: up.yaml: --versions anchors: selects no version to check\n"


@pytest.mark.parametrize("brk", ["\x85", "\u2028", "\u2029", "\r"])
def test_a_line_is_what_the_yaml_loader_calls_one(tmp_path, brk):
    """NEL and the Unicode separators break lines for YAML: errors, marked or not, and the
    line count agree with the loader."""
    text = f"upstream: trl{brk}checks:{brk}  - {{id: a, module: trl, bogus: 1}}{brk}"
    path = tmp_path / "m.yaml"
    path.write_text(text, encoding="utf-8", newline="")
    with pytest.raises(MatrixError) as marked:
        load_matrix(path)
    assert marked.value.line == 3 == line_at(text, text.index("bogus"))
    control = f"upstream: trl{brk}checks: []{brk}why: \x07{brk}"
    path.write_text(control, encoding="utf-8", newline="")
    with pytest.raises(MatrixError) as unmarked:  # a reader error carries only a position
        load_matrix(path)
    assert unmarked.value.line == 3


SINCE_UNTIL = """\
upstream: up
versions:
  include: ["0.25.1", "0.30.0"{branch}]
checks:
  - id: old
    module: up
    until: "0.11.0"
  - id: future
    module: up
    since: "1.0.0"
  - id: fine
    module: up
    since: "0.26.0"
"""


def test_since_and_until_that_admit_no_release_are_refused(tmp_path):
    (tmp_path / "up.yaml").write_text(SINCE_UNTIL.format(branch=""))
    for command in ("check", "validate"):
        proc = (
            run_cli(tmp_path, "up.yaml")
            if command == "check"
            else subprocess.run(
                [sys.executable, "-m", "canary.cli.main", "validate", "up.yaml"],
                capture_output=True,
                text=True,
                cwd=tmp_path,
            )
        )
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr == (
            "canary: up.yaml:7: check 'old': until: '<0.11.0' admits none of the 2 releases "
            "(0.25.1 to 0.30.0); the check would never run\n"
            "canary: up.yaml:10: check 'future': since: '>=1.0.0' admits none of the 2 releases "
            "(0.25.1 to 0.30.0); the check would never run\n"
        )


def test_a_branch_may_run_what_no_release_admits(tmp_path):
    (tmp_path / "up.yaml").write_text(SINCE_UNTIL.format(branch=", main"))
    proc = subprocess.run(
        [sys.executable, "-m", "canary.cli.main", "validate", "up.yaml"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
