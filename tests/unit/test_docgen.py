"""The reference pages are written from the code (docgen), and a page that stops naming a
command, an option, a key, a field, a variable or an exit status fails here.

Each page is expanded as the MkDocs hook expands it, then searched for what the code defines:
the commands and options of canary's parser, the keys the matrix loader accepts, the JSON
fields canary writes, the variables of Settings and the ExitCode members. The generators also
stop on what they cannot describe (an option without help, a key or field without an entry).
"""

from __future__ import annotations

import argparse
import ast
from pathlib import Path

import pytest
from paths import ROOT

from canary.analysis.parselock import parse_locked
from canary.cli.main import COMMANDS
from canary.errors import ExitCode
from canary.matrix import config, ignore, model
from docgen import commands, keys
from docgen.environment import environment_variables
from docgen.jsonfields import FieldsDrift, described, sample_json, section, undocumented
from docgen.parts import PARTS, UnknownPart, expand

DOCS = ROOT / "docs"


def page(name: str) -> str:
    return expand((DOCS / name).read_text(encoding="utf-8"), name)


def test_every_command_and_option_is_on_the_commands_page():
    text = page("reference/commands.md")
    for name in COMMANDS:
        assert f"## `canary {name}`" in text
        for action in commands.arguments(commands.command_parser(name)):
            for flag in action.option_strings or [str(action.metavar or action.dest)]:
                assert flag in text, f"canary {name} {flag} is not on the commands page"
    for code in ExitCode:
        assert f"| {int(code)} | `{code.name}` |" in text


def test_every_pytest_option_is_on_the_pytest_page():
    text = page("guides/pytest.md")
    for flag in ("--canary-versions VALUE", "--canary-offline", "--canary-source VALUE"):
        assert f"`{flag}`" in text


def test_an_option_without_help_stops_the_build():
    parser = argparse.ArgumentParser()
    action = parser.add_argument("--quietly", action="store_true")
    with pytest.raises(commands.Undocumented, match="--quietly has no help text"):
        commands.meaning("check", action)


def test_every_key_the_loader_accepts_is_on_the_reference_pages():
    matrix, configuration = page("reference/matrix.md"), page("reference/configuration.md")
    spelled = {
        "versions.{}": model.VERSION_KEYS,
        "call.{}": model.CALL_KEYS,
        "broken: VERSION: {}": model.ACK_KEYS,
        "ignore: - {}": ignore.KEYS,
        "{}": (*model.TOP_KEYS, *model.CHECK_KEYS),
    }
    for spelling, names in spelled.items():
        for name in names:
            assert f"| `{spelling.format(name)}` |" in matrix, f"{name} is not on the matrix page"
    for name in config.KEYS:
        assert f"| `{name}` |" in configuration, f"[tool.canary] {name} is not documented"


def test_a_key_without_an_entry_or_an_entry_without_a_key_stops_the_build():
    with pytest.raises(keys.KeysDrift, match="no entry for shiny"):
        keys.table("checks", "{}", (*model.CHECK_KEYS, "shiny"))
    with pytest.raises(keys.KeysDrift, match=r"entries for why, which canary\.matrix refuses"):
        keys.table("checks", "{}", tuple(k for k in model.CHECK_KEYS if k != "why"))


def test_every_field_of_the_json_is_on_the_json_page():
    text = page("reference/json.md")
    data = sample_json()
    assert not undocumented(data)
    for name, entries in described().items():
        for key in entries:
            assert f"| `{key}` |" in text, f"{name}.{key} is not on the JSON page"


def test_a_field_canary_writes_without_an_entry_stops_the_build():
    assert undocumented({"results": [{"check": "a", "shiny": 1}], "upstreams": {}}) == [
        "results.shiny"
    ]
    with pytest.raises(FieldsDrift, match="shiny"):
        section("stats", {"shiny": 1}, described()["stats"])


def variable_named(node: ast.AST) -> str:
    """ "X" when the node reads an environment variable by a literal name: `environ.get("X")`,
    `env.get("X")`, `os.getenv("X")` or `environ["X"]`; else ""."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
        reader, key = node.func, node.args[0]
        reads = reader.attr == "getenv" or (
            reader.attr == "get" and "env" in ast.unparse(reader.value)
        )
    elif isinstance(node, ast.Subscript):
        reads, key = "environ" in ast.unparse(node.value), node.slice
    else:
        return ""
    named = reads and isinstance(key, ast.Constant) and isinstance(key.value, str)
    return key.value if named and key.value.isupper() else ""  # type: ignore[union-attr]


def variables_read(folder: Path) -> set[str]:
    """Every environment variable the code under `folder` reads by a literal name."""
    nodes = (
        node
        for path in folder.rglob("*.py")
        for node in ast.walk(parse_locked(path.read_text(encoding="utf-8")))
    )
    return {name for node in nodes if (name := variable_named(node))}


def test_every_environment_variable_canary_reads_is_documented():
    documented = environment_variables() + "\n".join(
        path.read_text(encoding="utf-8") for path in DOCS.rglob("*.md")
    )
    read = variables_read(ROOT / "canary")
    assert {"CANARY_OFFLINE", "CANARY_CACHE_DIR", "GITHUB_TOKEN"} <= read
    missing = sorted(name for name in read if f"`{name}`" not in documented)
    assert not missing, f"read by canary, named in no page of docs/: {missing}"


def test_every_part_is_on_a_page_and_every_marker_names_a_part():
    pages = "\n".join(path.read_text(encoding="utf-8") for path in DOCS.rglob("*.md"))
    for name in PARTS:
        assert f"<!-- generated: {name} -->" in pages, f"no page shows the {name} part"
    with pytest.raises(UnknownPart, match="no generated part 'shiny'"):
        expand("<!-- generated: shiny -->\n")
