"""Upstream source compiled with an upstream module's names (issue 25, peft-variant-kwarg-keys):
a downstream lists the modules of an upstream package's folder (`os.listdir` of the folder of
`pkg.__file__`), the classes each binds (`dir()` filtered), returns them as rows, and compiles
each class's `forward` with the names of the module it was listed from. Scan evaluates the
listing over the upstream's own files and proposes `globals_bound` on each (module, function)
(tests/fixtures/scan_globals beside its negatives, the upstream tests/fixtures/
scan_globals_upstream, where `inc` imports `layer.Linear` but not the global its forward reads).
"""

from __future__ import annotations

import ast

import pytest
import yaml
from commands import canary
from paths import FIXTURES

from canary.analysis.parselock import parse_locked
from canary.cache.store import Cache
from canary.scan.downstream.findings import Role
from canary.scan.downstream.namespaces import imported
from canary.scan.downstream.package import scan_path
from canary.scan.downstream.spelled import CLASSES, FILES, FileEntry, Texts, spelled
from canary.sources.stats import Stats

DOWNSTREAM = FIXTURES / "scan_globals" / "globlib"
UPSTREAM = FIXTURES / "scan_globals_upstream"
LORA = "peft.tuners.lora"


pytestmark = pytest.mark.usefixtures("no_index")


def scanned(path=DOWNSTREAM, *source: str) -> tuple[str, list[dict]]:
    """The matrix text `canary scan` writes for peft, and its checks."""
    status, out = canary("scan", str(path), "--upstream", "peft", *source)
    assert status == 0, out
    return out, next(d for d in yaml.safe_load_all(out) if d)["checks"]


def bound(checks: list[dict]) -> dict[tuple[str, str], dict]:
    return {(c["module"], c["function"]): c for c in checks if c.get("globals_bound")}


def test_each_listed_class_is_checked_in_the_module_it_was_listed_from():
    text, checks = scanned(DOWNSTREAM, "--source", str(UPSTREAM))
    found = bound(checks)
    assert set(found) == {
        (f"{LORA}.inc", "Linear.forward"),
        (f"{LORA}.layer", "Linear.forward"),
        (f"{LORA}.bnb", "Linear8bitLt.forward"),  # also compiled so by fixed.py
    }  # config's LoraConfig (filtered out) and LinearScaling (a function) are not classes
    inc = found[f"{LORA}.inc", "Linear.forward"]
    assert inc["id"] == "linear-forward-globals"
    assert "compiled" in inc["why"] and "compiler.py:25" in inc["why"]
    assert "given.py:14" in inc["why"]
    assert "globals_given" not in inc  # compiler.py gives math only, given.py the key only
    above = text.split(f"- id: {inc['id']}")[0].rstrip().splitlines()[-1]
    assert "FAILS" in above and "VARIANT_KWARG_KEYS" in above
    layer = found[f"{LORA}.layer", "Linear.forward"]
    assert "compiler.py:25" in layer["why"] and "paths.py:25" in layer["why"]
    assert "globals_given" not in layer  # math, given at compiler.py:25 only


def test_a_folder_listed_through_pathlib_is_evaluated_alike():
    _, checks = scanned(DOWNSTREAM / "paths.py", "--source", str(UPSTREAM))
    assert set(bound(checks)) == {
        (f"{LORA}.inc", "Linear.forward"),
        (f"{LORA}.layer", "Linear.forward"),
    }


def test_a_name_an_import_in_the_clients_text_binds_is_given():
    _, checks = scanned(DOWNSTREAM / "given.py", "--source", str(UPSTREAM))
    assert [c.get("globals_given") for c in bound(checks).values()] == [["VARIANT_KWARG_KEYS"]]
    assert sorted(imported("from a.b import (X, y as Z)\nimport m.n, p as q\nx = 'import'")) == [
        "X",
        "Z",
        "m",
        "q",
    ]


def test_source_compiled_without_an_upstream_modules_names_asks_nothing():
    _, checks = scanned(DOWNSTREAM / "compiled_negatives.py", "--source", str(UPSTREAM))
    assert checks and not bound(checks)


def test_an_upstream_not_read_lists_no_class():
    _, checks = scanned(DOWNSTREAM)  # offline: the folder's modules are unknown
    assert set(bound(checks)) == {  # fixed.py's and given.py's, named in their imports
        (f"{LORA}.bnb", "Linear8bitLt.forward"),
        (f"{LORA}.inc", "Linear.forward"),
    }


def _upstream(*files: str):
    classes = {"inc": ("Linear",), "layer": ("Linear", "LoraLayer"), "bnb": ("Linear8bitLt",)}

    def names_in(parts: tuple[str, ...]) -> tuple[str, ...] | None:
        module = ".".join(parts[:-1])
        if parts[-1] == FILES:
            return files if module == LORA else None
        if parts[-1] == CLASSES and module.startswith(f"{LORA}."):
            return classes.get(module.rsplit(".", 1)[1])
        return None

    return names_in


def test_a_remembered_scan_is_scanned_again_when_the_folders_modules_change(tmp_path):
    cache = Cache(tmp_path, Stats())
    peft = frozenset({"peft"})

    def compiled(*files: str) -> set[str]:
        found = scan_path(DOWNSTREAM, peft, cache, names_in=_upstream(*files)).findings
        return {u.ref.parts[3] for u in found if u.role is Role.GLOBALS and u.file == "compiler.py"}

    assert compiled("__init__.py", "inc.py") == {"inc"}
    assert compiled("__init__.py", "inc.py", "layer.py") == {"inc", "layer"}
    assert compiled("__init__.py", "inc.py") == {"inc"}


@pytest.mark.parametrize(
    ("code", "spelled_as"),
    [
        ('f"pkg.{n[:-3]}"', ("pkg.inc",)),
        ('"pkg." + n[:-len(".py")]', ("pkg.inc",)),
        ("n.removesuffix('.py')", ("inc",)),
        ("n[:-x]", ()),  # a cut scan cannot count
        ("n[1:-3]", ()),
        ("p.stem + p.suffix", ("inc.py",)),
    ],
)
def test_a_file_name_cut_to_a_module_name_is_spelled(code, spelled_as):
    bound = {"n": Texts(("inc.py",)), "p": FileEntry("inc.py")}
    expression = parse_locked(code).body[0]
    assert isinstance(expression, ast.Expr)
    assert spelled(expression.value, bound.get) == spelled_as
