"""Every generated part by name, and `expand`, which writes them into a page in place of its
`<!-- generated: NAME -->` lines."""

from __future__ import annotations

import re
from collections.abc import Callable

from docgen.architecture import architecture
from docgen.commands import commands_page, pytest_options
from docgen.environment import environment_variables, exit_statuses
from docgen.jsonfields import json_fields
from docgen.keys import config_keys, matrix_keys

PARTS: dict[str, Callable[[], str]] = {
    "commands": commands_page,
    "pytest-options": pytest_options,
    "matrix-keys": matrix_keys,
    "config-keys": config_keys,
    "json-fields": json_fields,
    "environment": environment_variables,
    "exit-statuses": exit_statuses,
    "architecture": architecture,
}
MARKER = re.compile(r"^<!-- generated: ([a-z-]+) -->$", re.M)


class UnknownPart(Exception):
    """A page names a part no generator writes."""


def expand(markdown: str, where: str = "a page") -> str:
    """The page with each marker line replaced by the part it names."""

    def part(found: re.Match[str]) -> str:
        name = found.group(1)
        if name not in PARTS:
            raise UnknownPart(f"{where}: no generated part {name!r} (known: {', '.join(PARTS)})")
        return PARTS[name]()

    return MARKER.sub(part, markdown)
