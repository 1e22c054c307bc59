"""Masking and outlining, spelled for speed (canary.analysis.skeleton.mask_text splits on one
regex written as ranges, canary.analysis.outline counts every bracket as a round one): each
must give exactly what a walk over the characters gives, on generated tricky texts."""

from __future__ import annotations

import itertools
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from canary.analysis.outline import outline
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


_WORD = re.compile(r"\w*")
_CLAUSES = ("else", "elif", "except", "finally")  # they continue the statement above


def _walk_outline(masked: str, indent: int = 0) -> tuple[tuple[int, ...], ...] | None:
    """outline()'s bounds and heads, the bracket depth counted one character at a time, then
    each line of code outside brackets read by its first word."""
    depth, lines = 0, []  # the newline before each line of code outside brackets
    for at, char in enumerate(masked):
        if char == "\n":
            start = masked[at + 1 : at + 2 + indent]  # its indent, and one character more
            code = start.lstrip(" ")[:1]
            if code and not code.isspace() and code != "\0":
                if len(start) - len(start.lstrip(" ")) < indent or depth < 0:
                    return None
                if depth == 0 and (at == 0 or masked[at - 1] != "\\"):
                    lines.append(at)
        depth += (char in "([{") - (char in ")]}")
    if depth:
        return None
    bounds, heads, decorated = [0], [0], False
    for at in lines:
        if at and _WORD.match(masked, at + 1 + indent).group() in _CLAUSES:
            continue  # the statement above goes on
        if at and not decorated:
            bounds.append(at)
            heads.append(at)
        heads[-1] = at
        decorated = masked[at + 1 + indent] == "@"
    return (*bounds, len(masked) - 1), tuple(heads)


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
    # backslash, in each kind of string, and in a comment; then code, strings and a comment
    chars = [chr(c) for c in range(1, 128)] + ["é", "\U0001f600", "\U0010ffff"]
    tokens = [("'", "'"), ('"', '"'), ("'''", "\n'''"), ('"""', '\n"""'), ("#", "")]
    for (opening, closing), char in itertools.product(tokens, chars):
        text = f"x = {opening}a{char}b\\{char}{char}{char}{closing}\ny = 'c' + \"d\"  # e\n"
        assert mask_text(text) == _walk_mask(text), text


#: lines of code, with brackets of each kind left open or closed at column 0
_LINES = st.one_of(
    st.sampled_from(["x = (", "x = [", "y = {", ")", "]", "}", "(1,", "2)", "{4: (5,", "6)}"]),
    st.sampled_from(["@deco", "@d(", "def f():", "class C(", "else:", "elif x:", "except E:"]),
    st.sampled_from(["finally:", "elsewhere = 1", "y = 1 \\", "'(' + x", '"]"', "# (", "pass"]),
    st.sampled_from(['"""a\n(\n"""', "f(''')\n[''')", ""]),
)


@settings(max_examples=400, deadline=None)
@given(
    st.sampled_from([0, 4]),
    st.lists(st.tuples(st.sampled_from(["", "", " ", "    ", "      "]), _LINES), max_size=12),
)
def test_outlining_is_the_walk_over_the_characters(indent, lines):
    masked = mask_text("\n".join(" " * indent + deeper + line for deeper, line in lines))
    assert masked is not None
    for block in {0, indent}:
        shape = outline(masked, block)
        assert (shape and (shape.bounds, shape.heads)) == _walk_outline(masked, block)
