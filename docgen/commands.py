"""Every command, argument and option of `canary`, from the argument parser the command line uses,
and the pytest plugin's options, from its `pytest_addoption`.

Each command module's `add_arguments` fills a parser of its own here, as `canary.cli.main` fills
the subcommand's, so a new option is on the page at the next build. An argument without help
text stops the build: the reference would have nothing to say of it.
"""

from __future__ import annotations

import argparse
import importlib
from typing import Any

from canary import pytest_plugin as plugin
from canary.cli.main import COMMANDS


class Undocumented(Exception):
    """Something the command line accepts has no text to put on the page."""


def fixed_width(prog: str) -> argparse.HelpFormatter:
    """Usage lines wrapped at 100 columns, whatever terminal builds the docs."""
    return argparse.HelpFormatter(prog, width=100)


def command_parser(name: str) -> argparse.ArgumentParser:
    """`canary NAME`'s parser, with the options `canary NAME` has."""
    parser = argparse.ArgumentParser(
        prog=f"canary {name}", add_help=False, formatter_class=fixed_width
    )
    importlib.import_module(COMMANDS[name].module).add_arguments(parser)
    return parser


def arguments(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """The parser's arguments in the order they were added (argparse keeps them in `_actions`,
    its one record of them; it has no public accessor)."""
    return list(parser._actions)


def spelling(action: argparse.Action) -> str:
    """How the argument is written: `--output FILE`, `-q`, `--quiet`, `MATRIX ...`."""
    if not action.option_strings:
        name = str(action.metavar or action.dest)
        if action.choices:
            name = " | ".join(str(choice) for choice in action.choices)
        return f"{name} ..." if action.nargs in ("*", "+") else name
    takes = action.nargs != 0
    metavar = action.metavar or (action.dest.upper() if takes else "")
    if action.choices:
        metavar = "|".join(str(choice) for choice in action.choices)
    return ", ".join(f"{flag} {metavar}".strip() for flag in action.option_strings)


def meaning(command: str, action: argparse.Action) -> str:
    """The help text, with the default when it is a fixed text (a machine's core count is not)."""
    if not action.help:
        raise Undocumented(
            f"`canary {command}` {spelling(action)} has no help text: give its add_argument a help="
        )
    text = action.help
    if isinstance(action.default, str) and action.default and "default" not in text:
        text += f" (default: `{action.default}`)"
    if not action.option_strings and action.nargs == "?":
        text += " (optional)"
    return text


def cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def command_section(name: str) -> str:
    parser = command_parser(name)
    usage = parser.format_usage().removeprefix("usage: ").strip()
    summary = COMMANDS[name].summary.capitalize() + "."
    lines = [f"## `canary {name}`", "", summary, "", "```text", usage, "```"]
    rows = [(spelling(a), meaning(name, a)) for a in arguments(parser)]
    if rows:
        lines += ["", "| argument | what it does |", "| --- | --- |"]
        lines += [f"| `{cell(spelling_)}` | {cell(text)} |" for spelling_, text in rows]
    if parser.epilog:
        lines += ["", "```text", parser.epilog.strip(), "```"]
    return "\n".join(lines)


def commands_page() -> str:
    """One section per command, in the order `canary --help` lists them."""
    return "\n\n".join(command_section(name) for name in COMMANDS)


class _OptionRecorder:
    """What `pytest_addoption` declares, recorded as pytest's parser would be handed it: the
    plugin's hook is called as pytest calls it, with this in place of pytest's parser."""

    def __init__(self) -> None:
        self.options: list[tuple[tuple[str, ...], dict[str, Any]]] = []

    def getgroup(self, name: str, description: str = "") -> _OptionRecorder:
        return self

    def addoption(self, *names: str, **settings: Any) -> None:
        self.options.append((names, settings))


def pytest_options() -> str:
    """The pytest plugin's options, from its `pytest_addoption` hook."""
    recorder = _OptionRecorder()
    plugin.pytest_addoption(recorder)  # type: ignore[arg-type]  # the recorder stands in
    rows = ["| option | what it does |", "| --- | --- |"]
    for names, settings in recorder.options:
        if not settings.get("help"):
            raise Undocumented(f"pytest {', '.join(names)} has no help text")
        takes = "" if settings.get("action") in ("store_true", "store_false") else " VALUE"
        flags = ", ".join(f"{name}{takes}" for name in names)
        rows.append(f"| `{flags}` | {cell(settings['help'])} |")
    return "\n".join(rows)
