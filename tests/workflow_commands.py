"""The GitHub runner's reading of a step's log, ported from actions/runner so tests can say
which lines it would act on.

`ActionCommand.TryParseV2` (src/Runner.Common/ActionCommand.cs): after trimming leading white
space the line starts with `::`; the command info runs to the next `::`; its name (up to a
space) must be registered (case-insensitive); `key=value` pairs split on `,`; the data is the
rest, unescaped. The legacy `TryParse`: `##[` anywhere in the line (a culture-sensitive search
in .NET, which skips format characters, so those are dropped before searching here), the info
up to the next `]`, properties split on `;`. `ActionCommandManager.TryProcessCommand`
(src/Runner.Worker/ActionCommandManager.cs) tries V2 then the legacy form; after
`stop-commands` with data TOKEN it acts on nothing until a command named TOKEN. The runner reads
the log line by line, splitting at `\\n`, `\\r\\n` and `\\r`.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

#: the command extensions the runner registers, and stop-commands itself
REGISTERED = frozenset(
    {
        "stop-commands",
        "set-env",
        "set-output",
        "save-state",
        "add-mask",
        "add-path",
        "add-matcher",
        "remove-matcher",
        "debug",
        "warning",
        "error",
        "notice",
        "group",
        "endgroup",
        "echo",
    }
)


@dataclass(frozen=True)
class Command:
    name: str
    properties: dict[str, str] = field(default_factory=dict)
    data: str = ""


def _unescape(text: str, pairs: list[tuple[str, str]]) -> str:
    for token, replacement in pairs:
        text = text.replace(replacement, token)
    return text


_DATA = [("\r", "%0D"), ("\n", "%0A"), ("%", "%25")]
_PROPERTY = [("\r", "%0D"), ("\n", "%0A"), (":", "%3A"), (",", "%2C"), ("%", "%25")]
_LEGACY = [(";", "%3B"), ("\r", "%0D"), ("\n", "%0A"), ("]", "%5D"), ("%", "%25")]
#: .NET's String.TrimStart(): Char.IsWhiteSpace
_WHITE = "".join(chr(c) for c in range(0x110000) if chr(c).isspace() or c in (0x85, 0xA0))


def try_parse_v2(message: str, registered: set[str]) -> Command | None:
    message = message.lstrip(_WHITE)
    if not message.startswith("::"):
        return None
    end = message.find("::", 2)
    if end < 0:
        return None
    info = message[2:end]
    space = info.find(" ")
    name = info if space < 0 else info[:space]
    if name.lower() not in registered:
        return None
    properties = {}
    if space > 0:
        for pair in filter(None, info[space + 1 :].strip().split(",")):
            key, _, value = pair.partition("=")
            if key and value:
                properties[key] = _unescape(value, _PROPERTY)
    return Command(name.lower(), properties, _unescape(message[end + 2 :], _DATA))


def _culture_blind(text: str) -> str:
    """What a culture-sensitive search sees: format and control characters are ignorable."""
    return "".join(c for c in text if unicodedata.category(c) not in ("Cf", "Cc"))


def try_parse_legacy(message: str, registered: set[str]) -> Command | None:
    message = _culture_blind(message)
    start = message.find("##[")
    if start < 0:
        return None
    close = message.find("]", start)
    if close < 0:
        return None
    info = message[start + 3 : close]
    space = info.find(" ")
    name = info if space < 0 else info[:space]
    if name.lower() not in registered:
        return None
    properties = {}
    if space > 0:
        for pair in filter(None, info[space + 1 :].split(";")):
            key, _, value = pair.partition("=")
            if key and value:
                properties[key] = _unescape(value, _LEGACY)
    return Command(name.lower(), properties, _unescape(message[close + 1 :], _LEGACY))


def log_lines(log: str) -> list[str]:
    return re.split(r"\r\n|\r|\n", log)


def acted_on(log: str) -> list[Command]:
    """Every command the runner would act on in `log`, in order, pauses honoured (the
    stop-commands and resume commands themselves included)."""
    registered, stop_token, done = set(REGISTERED), None, []
    for line in log_lines(log):
        found = try_parse_v2(line, registered) or try_parse_legacy(line, registered)
        if found is None:
            continue
        if stop_token is not None:
            if found.name == stop_token.lower():
                registered.discard(stop_token.lower())
                stop_token = None
                done.append(found)
            continue
        if found.name == "stop-commands":
            stop_token = found.data
            registered.add(stop_token.lower())
        done.append(found)
    return done


#: the tokens canary pauses with (canary.reports.workflow.paused)
CANARY_TOKEN = re.compile(r"canary-[0-9a-f]{32}")


def own(commands: list[Command]) -> list[Command]:
    """`commands` without canary's own pauses (its stop-commands and their resume); a pause
    with any other token stays, as the attack it is."""
    tokens = {
        c.data.lower()
        for c in commands
        if c.name == "stop-commands" and CANARY_TOKEN.fullmatch(c.data)
    }
    return [c for c in commands if c.data.lower() not in tokens and c.name not in tokens]
