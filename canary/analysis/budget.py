"""What parsing one source may cost: `ast` holds about 900 bytes per token, so a file well
under the byte cap (8 MiB of `x = 1` lines) took 3.5 GiB and two minutes to index. Files past a
size have their tokens counted (one pass of a regex, no objects kept) before they are parsed."""

from __future__ import annotations

import re
from itertools import islice

from canary.analysis.model import ParseError

#: most tokens one file may have; real modules have tens of thousands (~550 MB of `ast` here)
MAX_TOKENS = 600_000
#: files this small cannot reach the budget's memory: they are not counted
_COUNT_FROM = 256 * 1024
#: a name, a number or one punctuation character: close to Python's tokens, counted in C
_TOKEN = re.compile(rb"\w+|[^\w\s]")
_TEXT_TOKEN = re.compile(_TOKEN.pattern.decode())


def over_budget(data: bytes | str) -> str | None:
    """Why parsing `data` would cost more than the budget allows, if it would."""
    # a token is at least one character: a text of at most MAX_TOKENS characters (or bytes)
    # cannot hold more tokens than the budget, and most files past _COUNT_FROM are that short
    if len(data) <= max(_COUNT_FROM, MAX_TOKENS):
        return None
    tokens = _TOKEN.finditer(data) if isinstance(data, bytes) else _TEXT_TOKEN.finditer(data)
    # the token after the budget's last, skipped to in C (a Python loop over each cost seconds)
    if next(islice(tokens, MAX_TOKENS, None), None) is not None:
        return f"over {MAX_TOKENS} tokens, too costly to parse"
    return None


def check_cost(data: bytes | str, path: str) -> None:
    """Raise ParseError when parsing `data` would cost more than the budget allows."""
    reason = over_budget(data)
    if reason is not None:
        raise ParseError(f"{path}: {reason}")
