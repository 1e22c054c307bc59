"""Masking, spelled for speed (canary.analysis.skeleton.mask_text splits on one regex written
as ranges): it must give exactly what a walk over the characters gives, on generated tricky
texts."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from canary.analysis.skeleton import mask_text


def _string_end(text: str, start: int) -> int | None:
    """Where the string opening at `start` ends (a backslash escapes the next character; a
    one-line string ends at a newline, unterminated), or None."""
    quote = text[start]
    if text.startswith(quote * 3, start):
        at = start + 3
        while at < len(text):
            if text.startswith(quote * 3, at):
                return at + 3
            at += 2 if text[at] == "\\" else 1
    at = start + 1  # not a closed triple-quoted string: `'''` may open the empty string `''`
    while at < len(text) and text[at] not in (quote, "\n"):
        at += 2 if text[at] == "\\" else 1
    return at + 1 if at < len(text) and text[at] == quote else None


def _walk_mask(text: str) -> str | None:
    """mask_text read one character at a time."""
    if "\r" in text or "\0" in text:
        return None
    out, at = ["\n"], 0
    while at < len(text):
        if text[at] == "#":
            end = text.find("\n", at) % (len(text) + 1)
            out.append(" " * (end - at))
        elif text[at] in "'\"":
            end = _string_end(text, at)
            if end is None:
                return None  # a quote left unmasked: no sure reading
            out.extend(
                c if c == "\n" else "\0" if i > at and text[i - 1] == "\n" else "x"
                for i, c in enumerate(text[at:end], at)
            )
        else:
            end = at + 1
            out.append(text[at])
        at = end
    masked = "".join(out)
    if any(line.lstrip(" ")[:1] in ("\t", "\f") for line in masked.split("\n")):
        return None
    return masked


#: quotes, backslashes and what the token pattern's ranges end at
_CHARS = st.sampled_from(
    [*"a #'\"\\!&()[]{}\x0b\té\U0001f600\U0010ffff", "''", '""', "\\'", '\\"', "\\\\", "\\\n"]
)


@st.composite
def _tricky(draw) -> str:
    """Comments and strings holding quotes, '#', brackets and backslashes, among code (and now
    and then a lone character, which may leave a string open)."""
    pieces = []
    for _ in range(draw(st.integers(0, 12))):
        quote = draw(st.sampled_from(["'", '"']))
        line = "".join(draw(st.lists(_CHARS, max_size=6)))
        lines = "".join(draw(st.lists(st.one_of(_CHARS, st.just("\n")), max_size=8)))
        code = draw(st.sampled_from(["x = f(", ")", "\n", "\n    ", "\n\t", "\n\f"]))
        pieces.append(
            draw(
                st.sampled_from(
                    [
                        *("#" + line, quote + line + quote, quote * 3 + lines + quote * 3, code),
                        *(quote + line + quote, code, draw(_CHARS)),
                    ]
                )
            )
        )
    return "".join(pieces)


@settings(max_examples=400, deadline=None)
@given(_tricky())
def test_masking_is_the_walk_over_the_characters(text):
    assert mask_text(text) == _walk_mask(text)


def test_every_character_in_every_kind_of_token_masks_as_the_walk():
    # the token pattern lists a string's characters as ranges: each edge, before and after a
    # backslash, in each kind of string, and in a comment
    chars = [chr(c) for c in range(1, 128)] + ["é", "\U0001f600", "\U0010ffff"]
    tokens = [("'", "'"), ('"', '"'), ("'''", "\n'''"), ('"""', '\n"""'), ("#", "")]
    for (opening, closing), char in itertools.product(tokens, chars):
        text = f"x = {opening}a{char}b\\{char}{char}{char}{closing}\ny = 1\n"
        assert mask_text(text) == _walk_mask(text), text
