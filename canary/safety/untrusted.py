"""Text from outside canary (upstream sources, index pages, file names, results files) made safe
to print: one line, shown rather than acted on by a terminal or by a CI runner's log.

A terminal acts on escape sequences; a GitHub runner acts on workflow commands: a line that
starts (after white space) with `::name::`, and the legacy `##[name]` anywhere in a line. Its
search for `##[` is culture-sensitive, so characters it ignores (format and control characters,
a soft hyphen, a zero-width space) between the three must not hide one.
"""

from __future__ import annotations

import re

#: characters a terminal acts on rather than shows: C0 controls but tab (newline and carriage
#: return too: they would start a line of the caller's choosing), DEL and C1 (escape
#: sequences), line and paragraph separators, bidirectional overrides; and lone surrogates
#: (valid in JSON's escapes, not encodable as UTF-8: every writer would fail on them)
_UNSHOWABLE = re.compile(
    "[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)
#: what a culture-sensitive search skips: format characters (soft hyphen, zero-width and
#: joiner characters, the byte-order mark...); control characters are escaped before
_IGNORED = "[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]*"
_SURROGATE = re.compile("[\ud800-\udfff]")
_LEGACY = re.compile(f"#{_IGNORED}#{_IGNORED}\\[")
_COMMAND = re.compile(r"^(\s*)::")


def showable(text: str) -> str:
    """`text` on one line, every character a terminal would act on written as its escape, and
    no workflow command: `##[` becomes `##\\x5b`, a leading `::` becomes `\\x3a:`."""
    if _UNSHOWABLE.search(text):
        text = _UNSHOWABLE.sub(lambda m: repr(m.group())[1:-1], text)
    if "#" in text:
        text = _LEGACY.sub(lambda m: m.group()[:-1] + "\\x5b", text)
    command = _COMMAND.match(text)  # a match, not a sub: a report makes ~50 calls per result
    return text if command is None else f"{command.group(1)}\\x3a:{text[command.end() :]}"


def showable_lines(text: str) -> str:
    """Several lines (a diff of upstream source), each made showable, the line ends kept."""
    if not text:
        return text
    return "\n".join(showable(line) for line in text.split("\n"))


def encodable(value: object) -> object:
    """Parsed JSON with every lone surrogate in its strings (keys too) written as its escape."""
    if isinstance(value, str):
        return _SURROGATE.sub(lambda m: repr(m.group())[1:-1], value)
    if isinstance(value, list):
        return [encodable(item) for item in value]
    if isinstance(value, dict):
        return {encodable(key): encodable(item) for key, item in value.items()}
    return value
