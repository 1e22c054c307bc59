"""Did-you-mean suggestions: difflib's answers, with its length filter applied first."""

import difflib

from hypothesis import given
from hypothesis import strategies as st

from canary.analysis.similar import RememberedMatches, close_matches

names = st.text(alphabet="ab_.", max_size=22)


@given(names, st.lists(names, max_size=40), st.sampled_from([0.6, 0.75, 0.8]))
def test_the_same_answers_as_difflib(word, candidates, cutoff):
    expected = difflib.get_close_matches(word, candidates, n=3, cutoff=cutoff)
    assert close_matches(word, candidates, n=3, cutoff=cutoff) == expected


def test_a_length_at_the_bound_is_kept():
    # lengths 3 and 2 reach 0.8 at best (2 * 2 / 5): exactly the cutoff, so difflib keeps "ab"
    assert close_matches("abc", ["ab", "a"], n=3, cutoff=0.8) == ["ab"]


@given(
    st.lists(names, min_size=1, max_size=2),
    st.lists(st.lists(names, max_size=30, unique=True), min_size=1, max_size=4),
    st.sampled_from([0.6, 0.75, 0.8]),
)
def test_remembered_answers_are_difflibs_call_after_call(words, listings, cutoff):
    # the words asked in turn over listings that share names (releases of one upstream), one
    # remembered at a time: a word comes back after it was dropped
    remembered = RememberedMatches(cutoff, words=1)
    for listing in listings:
        for word in words:
            expected = difflib.get_close_matches(word, listing, n=3, cutoff=cutoff)
            assert remembered.close_matches(word, listing, n=3) == expected
