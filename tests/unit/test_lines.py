"""Spans cut from a module's text: the lines `ast` counts, with their endings."""

from unittest import mock

from hypothesis import given
from hypothesis import strategies as st

from canary.analysis import lines as lines_module
from canary.analysis.lines import _LINE, Lines

texts = st.lists(st.sampled_from(["a", " ", "\n", "\r", "\r\n", "\f", "\x1c", "é"])).map("".join)


@given(texts, st.integers(1, 12), st.integers(0, 12))
def test_a_span_is_its_lines_with_their_endings(text, start, length):
    end = start + length
    expected = "".join(_LINE.findall(text)[start - 1 : end])  # the regex is the definition
    assert Lines(text).segment(start, end) == expected


@given(
    st.lists(st.sampled_from(["a", "bc", " ", "\n", "\n\n", "é", "\f"])).map("".join),
    st.integers(1, 40),
    st.integers(0, 40),
    st.integers(1, 7),
)
def test_a_span_is_its_lines_whatever_blocks_its_newlines_are_counted_in(
    text, start, length, block
):
    end = start + length
    expected = "".join(_LINE.findall(text)[start - 1 : end])
    with mock.patch.object(lines_module, "_BLOCK", block):
        lines = Lines(text)
        assert lines.segment(start, end) == expected
        assert lines.segment(1, start) == "".join(_LINE.findall(text)[:start])  # counted once


def test_the_last_line_keeps_no_ending_it_does_not_have():
    lines = Lines("a\nb\nc")
    assert lines.segment(2, 3) == "b\nc"
    assert lines.segment(1, 1) == "a\n"
    assert lines.segment(3, 9) == "c"
    assert lines.segment(4, 9) == ""
    assert Lines("a\n").segment(1, 5) == "a\n"
    assert Lines("a\n").segment(2, 5) == ""


def test_only_the_tokenizers_breaks_count():
    text = "x = 1\fy\x1cz\u2028\nsecond\r\nthird\rfourth"
    lines = Lines(text)
    assert lines.segment(2, 2) == "second\r\n"
    assert lines.segment(3, 4) == "third\rfourth"
    assert lines.segment(1, 1) == "x = 1\fy\x1cz\u2028\n"


@given(
    st.lists(st.sampled_from(["a", "bc", " ", "\n", "\n\n", "é"])).map("".join),
    st.lists(st.integers(0, 60), max_size=6),
    st.integers(1, 7),
)
def test_an_offset_s_line_is_the_newlines_before_it_counted_in_any_order(text, offsets, block):
    with mock.patch.object(lines_module, "_BLOCK", block):
        lines = Lines(text)
        for offset in offsets:
            offset = min(offset, len(text))
            assert lines.line_of(offset) == text.count("\n", 0, offset) + 1
            assert lines.segment(lines.line_of(offset), lines.line_of(offset)) in text
