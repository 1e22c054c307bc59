"""Did-you-mean suggestions: difflib's answers, with its length filter applied first."""

import difflib

from hypothesis import given
from hypothesis import strategies as st

from canary.analysis.similar import close_matches

names = st.text(alphabet="ab_.", max_size=22)


@given(names, st.lists(names, max_size=40), st.sampled_from([0.6, 0.75, 0.8]))
def test_the_same_answers_as_difflib(word, candidates, cutoff):
    expected = difflib.get_close_matches(word, candidates, n=3, cutoff=cutoff)
    assert close_matches(word, candidates, n=3, cutoff=cutoff) == expected


def test_a_length_at_the_bound_is_kept():
    # lengths 3 and 2 reach 0.8 at best (2 * 2 / 5): exactly the cutoff, so difflib keeps "ab"
    assert close_matches("abc", ["ab", "a"], n=3, cutoff=0.8) == ["ab"]
