"""Every key of a matrix, a check and `[tool.canary]`: the keys canary.matrix accepts, in its
order, each with what `keys.yaml` says it takes and means.

The loader refuses a key it does not know, so its tuples are the whole language; a key added
there without an entry in keys.yaml, or an entry for a key it no longer accepts, stops the build.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from canary.matrix import config, ignore, model

#: each table: its name in keys.yaml, its heading, how a key is written, the keys in order
TABLES: tuple[tuple[str, str, str, tuple[str, ...]], ...] = (
    ("matrix", "A matrix", "{}", model.TOP_KEYS),
    ("versions", "versions", "versions.{}", model.VERSION_KEYS),
    ("checks", "checks", "{}", model.CHECK_KEYS),
    ("call", "call", "call.{}", model.CALL_KEYS),
    ("broken", "broken", "broken: VERSION: {}", model.ACK_KEYS),
    ("ignore", "ignore", "ignore: - {}", ignore.KEYS),
    ("tool.canary", "[tool.canary]", "{}", config.KEYS),
)
DESCRIPTIONS = Path(__file__).with_name("keys.yaml")


class KeysDrift(Exception):
    """keys.yaml and the keys the loader accepts disagree."""


def descriptions() -> dict[str, dict[str, dict[str, str]]]:
    data: dict[str, Any] = yaml.safe_load(DESCRIPTIONS.read_text(encoding="utf-8"))
    return data


def table(name: str, spelling: str, keys: tuple[str, ...]) -> list[str]:
    described = descriptions().get(name, {})
    missing = [key for key in keys if key not in described]
    stale = [key for key in described if key not in keys]
    if missing or stale:
        raise KeysDrift(
            f"docgen/keys.yaml, {name}: "
            + "; ".join(
                part
                for part in (
                    missing and f"no entry for {', '.join(missing)} (accepted by canary.matrix)",
                    stale and f"entries for {', '.join(stale)}, which canary.matrix refuses",
                )
                if part
            )
        )
    rows = ["| key | value | meaning |", "| --- | --- | --- |"]
    for key in dict.fromkeys(keys):
        entry = described[key]
        rows.append(f"| `{spelling.format(key)}` | {entry['value']} | {entry['meaning']} |")
    return rows


def keys_part(names: tuple[str, ...]) -> str:
    """The tables `names` picks, each under a heading of its own."""
    lines: list[str] = []
    for name, heading, spelling, keys in TABLES:
        if name in names:
            anchor = name.replace(".", "-")
            lines += [f"## {heading} {{#{anchor}}}", "", *table(name, spelling, keys), ""]
    return "\n".join(lines).rstrip("\n")


def matrix_keys() -> str:
    return keys_part(("matrix", "versions", "checks", "call", "broken", "ignore"))


def config_keys() -> str:
    return keys_part(("tool.canary",))
