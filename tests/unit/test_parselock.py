"""Every `ast` parse in canary, and in its tests, takes the one parse lock: CPython 3.11 fails a
parse (SystemError: AST constructor recursion depth mismatch) when another thread parses at the
same time, and a test's own unlocked parse beside a thread an earlier test left parsing fails
either one (seen: test_names, and a landing's parse_locked, each once under `-n 2`)."""

from __future__ import annotations

import ast
import threading

from paths import ROOT

from canary.analysis import parselock


def _unlocked_parses() -> list[str]:
    found = []
    for path in sorted([*(ROOT / "canary").rglob("*.py"), *(ROOT / "tests").rglob("*.py")]):
        if path.name == "parselock.py" or "fixtures" in path.parts:
            continue
        for node in ast.walk(parselock.parse_locked(path.read_text(encoding="utf-8"))):
            func = node.func if isinstance(node, ast.Call) else None
            if (
                isinstance(func, ast.Attribute)
                and func.attr == "parse"
                and isinstance(func.value, ast.Name)
                and func.value.id == "ast"
            ):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def test_no_module_nor_test_parses_outside_the_lock():
    assert _unlocked_parses() == []


def test_a_parse_waits_for_the_one_in_progress():
    parsed = threading.Event()

    def parse() -> None:
        parselock.parse_locked("x = 1\n")
        parsed.set()

    with parselock._PARSE_LOCK:  # another thread's parse in progress
        thread = threading.Thread(target=parse)
        thread.start()
        assert not parsed.wait(0.2)
    assert parsed.wait(5)
    thread.join()
