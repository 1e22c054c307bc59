"""The environment variables a run reads (the fields of `canary.settings.Settings`, each with the
variables its `#:` comment names) and the exit statuses (`canary.errors.ExitCode`, each with its
`#:` comment): the comments the code keeps beside each are what the page says.
"""

from __future__ import annotations

import dataclasses
import inspect
import re

from canary.errors import ExitCode
from canary.settings import Settings

VARIABLE = re.compile(r"\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b")


class CommentMissing(Exception):
    """A setting or an exit status has no `#:` comment to put on the page."""


def comments(cls: type) -> dict[str, str]:
    """Each attribute's `#:` comment (the lines above it joined; an attribute right under
    another shares the comment above both, as `github_raw_url` and `github_api_url` do)."""
    found: dict[str, str] = {}
    pending: list[str] = []
    shared = ""
    for line in inspect.getsource(cls).splitlines():
        stripped = line.strip()
        if stripped.startswith("#:"):
            pending.append(stripped[2:].strip())
            continue
        name = re.match(r"([A-Za-z_]\w*)\s*[:=]", stripped)
        if name and line.startswith("    ") and not line.startswith("     "):
            shared = " ".join(pending) or shared
            found[name.group(1)] = shared
        else:
            shared = ""
        pending = []
    return found


def environment_variables() -> str:
    """One row per variable a setting reads, in the order of Settings' fields."""
    said = comments(Settings)
    found: dict[str, tuple[list[str], str]] = {}
    for setting in dataclasses.fields(Settings):
        text = said.get(setting.name, "")
        if not text:
            raise CommentMissing(f"Settings.{setting.name} has no #: comment")
        for variable in VARIABLE.findall(text):
            names, _ = found.setdefault(variable, ([], text))
            if f"`{setting.name}`" not in names:
                names.append(f"`{setting.name}`")
    rows = ["| variable | setting | what it sets |", "| --- | --- | --- |"]
    rows += [f"| `{var}` | {', '.join(names)} | {text} |" for var, (names, text) in found.items()]
    return "\n".join(rows)


def exit_statuses() -> str:
    said = comments(ExitCode)
    rows = ["| status | name | when |", "| --- | --- | --- |"]
    for code in ExitCode:
        if not said.get(code.name):
            raise CommentMissing(f"ExitCode.{code.name} has no #: comment")
        rows.append(f"| {int(code)} | `{code.name}` | {said[code.name]} |")
    return "\n".join(rows)
