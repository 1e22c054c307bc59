"""GitHub Actions workflow commands, as the runner parses them (actions/runner, ActionCommand).

canary's own commands (annotations, groups) are written here with the runner's escapes. Text
canary did not write goes between `::stop-commands::TOKEN` and `::TOKEN::`: the runner acts on
no command in between, and the token is random, so that text cannot end the pause itself.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable


def data(text: str) -> str:
    """Escapes for a workflow command's message."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def prop(text: str) -> str:
    """Escapes for a workflow command's property value."""
    return data(text).replace(":", "%3A").replace(",", "%2C")


def command(name: str, message: str, **properties: str | int) -> str:
    """`::name key=value,...::message`, every part escaped."""
    props = ",".join(f"{key}={prop(str(value))}" for key, value in properties.items())
    return f"::{name} {props}::{data(message)}" if props else f"::{name}::{data(message)}"


def paused(lines: Iterable[str]) -> list[str]:
    """`lines` with the runner's command processing stopped around them (none when empty)."""
    lines = list(lines)
    if not lines:
        return []
    token = f"canary-{secrets.token_hex(16)}"
    return [f"::stop-commands::{token}", *lines, f"::{token}::"]
