"""Bad-matrix campaign: weird files and a property-based fuzz of the loader and `canary check`.

tests/unit/test_matrix.py holds the per-key corpus (one mistake per key, exact messages). Here: the
inputs nobody writes on purpose (binary junk, other encodings, YAML features such as complex
keys, tags, aliases and merge keys, deep nesting, huge files) and hypothesis-generated
documents, mutated matrices and raw bytes. The property: loading returns a Matrix or raises
MatrixError naming the file (and the line when there is one); `canary check` exits 0, 1 or 2,
2 exactly when loading failed, with the message on stderr and never a traceback.
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest
import yaml
from campaign_upstream import scaled
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from canary.cli.main import main as canary_main
from canary.matrix.model import CHECK_KEYS, TOP_KEYS, VERSION_KEYS, Matrix, MatrixError, load_matrix
from canary.matrix.yamlmarks import line_at

VALID = """\
upstream: trl
package: trl
github: huggingface/trl
versions:
  releases: ">=0.18.2"
  include: [main]
  exclude: ["0.20.1"]
  anchors: ["0.22.2"]
  broken:
    "0.19.0": known bad
checks:
  - id: disable-gc
    why: swapped for a no-op
    module: trl.models.utils
    symbol: disable_gradient_checkpointing
    since: "0.27.0"
  - id: trainer-methods
    module: trl.trainer
    class: GRPOTrainer
    methods: [train, compute_loss]
    bases: [Trainer]
  - id: params
    module: trl.core
    function: GRPOTrainer.compute_loss
    params: [self, model, inputs]
    matches: ['def \\w+\\(']
    severity: info
  - id: moved
    module: trl.a
    any_of:
      - {symbol: x}
      - {module: trl.b, symbol: x}
"""

SETTINGS = settings(
    max_examples=scaled(80, 3000),
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


def outcome(path: Path) -> MatrixError | Matrix:
    """What loading gives; any exception other than MatrixError fails the test with its type."""
    try:
        return load_matrix(path)
    except MatrixError as exc:
        return exc


def assert_well_reported(path: Path, error: MatrixError | Matrix) -> None:
    if isinstance(error, Matrix):
        return
    assert str(error).startswith(f"{path}:"), str(error)
    if error.line is not None:
        text = path.read_bytes().decode("utf-8", "replace")
        lines = line_at(text, len(text))  # as the YAML loader counts them: NEL is a break
        assert 1 <= error.line <= lines + 1, f"line {error.line} of a {lines}-line file"
        assert str(error).startswith(f"{path}:{error.line}: ")


def check_exit(path: Path, source: Path) -> tuple[int, str]:
    """`canary check PATH` against an empty local folder (never the network): (status, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = canary_main(["check", str(path), "--source", str(source), "--versions", "1.0"])
    return status, err.getvalue()


def assert_cli_agrees(path: Path, source: Path, loaded: MatrixError | Matrix) -> None:
    status, stderr = check_exit(path, source)
    assert "Traceback" not in stderr
    if isinstance(loaded, MatrixError):
        assert status == 2
        assert stderr == "".join(f"canary: {error}\n" for error in loaded.errors)
    else:
        assert status in (0, 1), stderr


# -- the corpus of weird inputs ----------------------------------------------------------------

HEAD = "upstream: trl\nchecks:\n  - {id: a, module: trl}\n"
#: libyaml reports its nesting limit with a mark; pure-Python PyYAML hits RecursionError (no mark)
DEEP_LINE = 2 if hasattr(yaml, "CSafeLoader") else None
#: (case id, file bytes, the line the error must name, or None when no line applies)
WEIRD = [
    ("binary-junk", bytes(range(256)) * 4, None),
    ("nul-bytes", b"upstream: trl\x00\nchecks: []\n", 1),
    (
        "latin-1",
        "upstream: trl\nchecks:\n  - {id: a, module: trl, why: caf\xe9}\n".encode("latin-1"),
        None,
    ),
    ("utf-16", HEAD.encode("utf-16"), None),
    ("whitespace-only", b"   \n\n  \n", None),
    ("comment-only", b"# nothing here\n", None),
    ("document-marker-only", b"---\n", None),
    ("two-documents", HEAD.encode() + b"---\n" + HEAD.encode(), 4),
    ("tabs", b"upstream: trl\nchecks:\n\t- {id: a, module: trl}\n", 3),
    ("complex-list-key", b"? [a, b]\n: 1\nupstream: trl\nchecks: []\n", 1),
    ("complex-map-key", b"upstream: trl\nchecks: []\nversions: {broken: {? {a: 1} : x}}\n", 3),
    ("python-tag", b'upstream: !!python/object/apply:os.system ["true"]\nchecks: []\n', 1),
    ("binary-tag", b"upstream: !!binary aGVsbG8=\nchecks: []\n", 1),
    ("set-tag", b"upstream: trl\nchecks: !!set {a, b}\n", 2),
    ("date-value", b"upstream: trl\nchecks: []\nversions: {broken: {2001-01-01: x}}\n", 3),
    ("null-key", b"upstream: trl\n~: x\nchecks: []\n", 2),
    ("bool-key", b"upstream: trl\ntrue: x\nchecks: []\n", 2),
    ("int-key", b"upstream: trl\n1: x\nchecks: []\n", 2),
    ("undefined-alias", HEAD.encode() + b"versions: {anchors: [*nope]}\n", 4),
    ("recursive-alias", b"upstream: trl\nchecks: &a [*a]\n", 2),
    ("alias-duplicate-check", b"upstream: trl\nchecks:\n  - &c {id: a, module: trl}\n  - *c\n", 3),
    ("merge-key-duplicate", b"upstream: trl\n<<: {upstream: x}\nchecks: []\n", 1),
    ("deep-nesting", b"upstream: trl\nchecks: " + b"[" * 1_500 + b"]" * 1_500 + b"\n", DEEP_LINE),
    ("deep-mapping", b"upstream: trl\nchecks: " + b"{a: " * 3_000 + b"1" + b"}" * 3_000, DEEP_LINE),
    ("anchor-not-a-version", HEAD.encode() + b"versions: {anchors: [main]}\n", 4),
    ("anchor-a-number", HEAD.encode() + b"versions: {anchors: [1.0]}\n", 4),
    ("broken-a-list", HEAD.encode() + b"versions: {broken: [0.19.0]}\n", 4),
    ("specifier-garbage", HEAD.encode() + b"versions: {releases: '>=1.0,,<'}\n", 4),
    (
        "gate-bad-version",
        b"upstream: trl\nchecks:\n  - {id: a, module: trl, since: 'v1-final'}\n",
        3,
    ),
    (
        "regex-bad-group",
        b"upstream: trl\nchecks:\n  - {id: a, module: trl, matches: ['(?P<x>a)(?P<x>b)']}\n",
        3,
    ),
    (
        "regex-lookbehind",
        b"upstream: trl\nchecks:\n  - {id: a, module: trl, matches: ['(?<=a+)b']}\n",
        3,
    ),
    ("regex-not-string", b"upstream: trl\nchecks:\n  - {id: a, module: trl, matches: [[1]]}\n", 3),
    ("id-unicode", "upstream: trl\nchecks:\n  - {id: caf\u00e9, module: trl}\n".encode(), 3),
    (
        "module-unicode-digits",
        "upstream: trl\nchecks:\n  - {id: a, module: trl.\u0661x}\n".encode(),
        3,
    ),
]


@pytest.mark.parametrize(
    ("data", "line"),
    [
        pytest.param(*c.values[1:], marks=c.marks, id=c.values[0])
        if hasattr(c, "values")
        else pytest.param(*c[1:], id=c[0])
        for c in WEIRD
    ],
)
def test_weird_matrix_files_are_load_errors_with_file_and_line(tmp_path, data, line):
    path = tmp_path / "weird.yaml"
    path.write_bytes(data)
    loaded = outcome(path)
    assert isinstance(loaded, MatrixError), "this input must not load"
    assert_well_reported(path, loaded)
    assert line in [error.line for error in loaded.errors], str(loaded)
    assert_cli_agrees(path, tmp_path, loaded)


def test_huge_files_load_or_fail_with_the_line(tmp_path):
    """Thousands of checks, the last one a duplicate; a multi-megabyte `why`."""
    count = scaled(1_500, 30_000)
    checks = "".join(f"  - {{id: c{i}, module: trl.m{i}, symbol: s{i}}}\n" for i in range(count))
    many = tmp_path / "many.yaml"
    many.write_text(f"upstream: trl\nchecks:\n{checks}  - {{id: c0, module: trl}}\n")
    error = outcome(many)
    assert isinstance(error, MatrixError) and error.line == count + 3, str(error)
    assert "duplicate id" in str(error)
    long = tmp_path / "long.yaml"
    long.write_text(
        "upstream: trl\nchecks:\n  - id: a\n    module: trl\n    why: " + "x" * 2_000_000
    )
    assert isinstance(outcome(long), Matrix)


def test_safe_loading_never_runs_yaml_tags(tmp_path):
    marker = tmp_path / "TAG-RAN"
    path = tmp_path / "tagged.yaml"
    path.write_text(
        f'upstream: !!python/object/apply:os.system ["touch {marker}"]\nchecks: []\n'
        f"package: !!python/object/new:pathlib.Path ['{marker}']\n"
    )
    assert isinstance(outcome(path), MatrixError)
    assert not marker.exists()


# -- property-based fuzz ------------------------------------------------------------------------

KEYS = st.sampled_from([*TOP_KEYS, *CHECK_KEYS, *VERSION_KEYS, "id", "class", "?", ""]) | st.text(
    max_size=8
)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True)
    | st.text(max_size=20)
    | st.sampled_from(["trl", "trl.core", "a", ">=1.0", "1.0", "main", "(", "v{version}", "x.y"])
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=5),
    max_leaves=20,
)
CHECK = st.dictionaries(st.sampled_from(CHECK_KEYS), VALUES, max_size=6).map(
    lambda check: {"id": "c", "module": "trl", **check}
)
DOCUMENTS = st.fixed_dictionaries(
    {"upstream": st.sampled_from(["trl", "Bad Name", 3])},
    optional={
        "checks": st.lists(CHECK, max_size=4) | VALUES,
        "versions": st.dictionaries(st.sampled_from(VERSION_KEYS), VALUES, max_size=4) | VALUES,
        "tag": VALUES,
        "github": VALUES,
        "package": VALUES,
    },
) | st.dictionaries(KEYS, VALUES, max_size=6)


def fuzz_one(folder: Path, data: bytes) -> None:
    path = folder / "fuzz.yaml"
    path.write_bytes(data)
    loaded = outcome(path)
    assert_well_reported(path, loaded)
    assert_cli_agrees(path, folder, loaded)


@SETTINGS
@given(document=DOCUMENTS)
def test_fuzzed_documents(tmp_path, document):
    fuzz_one(tmp_path, yaml.safe_dump(document, allow_unicode=True).encode())


@st.composite
def mutated(draw) -> bytes:
    """The valid matrix with a few bytes deleted, inserted or replaced."""
    text = bytearray(VALID.encode())
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(text)))
        action = draw(st.sampled_from(["delete", "insert", "replace"]))
        piece = draw(
            st.sampled_from(
                [
                    b":",
                    b"-",
                    b" ",
                    b"\n",
                    b"[",
                    b"{",
                    b"'",
                    b'"',
                    b"&a",
                    b"*a",
                    b"!",
                    b"|",
                    b"#",
                    b"\t",
                    b"\xff",
                    b"x",
                ]
            )
        )
        if action == "delete":
            del text[at : at + draw(st.integers(1, 10))]
        elif action == "insert":
            text[at:at] = piece
        else:
            text[at : at + len(piece)] = piece
    return bytes(text)


@SETTINGS
@given(data=mutated())
def test_mutated_matrices(tmp_path, data):
    fuzz_one(tmp_path, data)


@SETTINGS
@given(data=st.binary(max_size=300) | st.text(max_size=300).map(str.encode))
def test_raw_bytes(tmp_path, data):
    fuzz_one(tmp_path, data)


def test_the_valid_matrix_loads(tmp_path):
    """The mutation fuzz starts from a matrix that loads, so every mutation is a real change."""
    path = tmp_path / "valid.yaml"
    path.write_text(VALID)
    assert isinstance(outcome(path), Matrix)
