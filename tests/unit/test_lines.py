"""Spans cut from a module's text: the lines `ast` counts, with their endings."""

from hypothesis import given
from hypothesis import strategies as st

from canary.analysis.lines import _LINE, Lines

texts = st.lists(st.sampled_from(["a", " ", "\n", "\r", "\r\n", "\f", "\x1c", "é"])).map("".join)


@given(texts, st.integers(1, 12), st.integers(0, 12))
def test_a_span_is_its_lines_with_their_endings(text, start, length):
    end = start + length
    expected = "".join(_LINE.findall(text)[start - 1 : end])  # the regex is the definition
    assert Lines(text).segment(start, end) == expected


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
