"""Did-you-mean suggestions among the names of a module or a release (thousands of them)."""

from __future__ import annotations

import difflib
import heapq
import threading
from collections.abc import Iterable


def close_matches(word: str, candidates: Iterable[str], n: int, cutoff: float) -> list[str]:
    """`difflib.get_close_matches`, with the same answers. Its first filter (a ratio bound from
    the two lengths alone) runs here, before the setup difflib does per candidate, which over a
    release's thousands of names cost more than judging the check."""
    size = len(word)
    near = [c for c in candidates if _length_bound(size, len(c)) >= cutoff]
    return difflib.get_close_matches(word, near, n=n, cutoff=cutoff)


class RememberedMatches:
    """`close_matches` over distinct candidates that mostly repeat from call to call (one
    release's module names, then the next release's): each word keeps the candidates it was
    scored against and the scores that reached the cutoff, so asking again, release after
    release, scores only the names it has not met. The answers are difflib's: the best `n` by
    (score, name), as get_close_matches ranks them."""

    def __init__(self, cutoff: float, words: int = 64):
        self.cutoff = cutoff
        self.words = words  # how many words are remembered, the least recently asked dropped
        self._seen: dict[str, tuple[set[str], dict[str, float]]] = {}
        self._lock = threading.Lock()  # releases may be judged on several threads

    def close_matches(self, word: str, candidates: Iterable[str], n: int) -> list[str]:
        names = set(candidates)
        with self._lock:
            met, passed = self._seen[word] = self._seen.pop(word, (set(), {}))
            while len(self._seen) > self.words:
                del self._seen[next(iter(self._seen))]
            fresh = names - met
            passed.update(_scores(word, fresh, self.cutoff))
            met |= fresh
            best = heapq.nlargest(n, ((passed[c], c) for c in names if c in passed))
        return [c for _, c in best]


def _scores(word: str, candidates: Iterable[str], cutoff: float) -> dict[str, float]:
    """The candidates whose difflib ratio to `word` reaches the cutoff, with that ratio (the
    filters of get_close_matches, in its order: each bounds the next from above)."""
    matcher = difflib.SequenceMatcher()
    matcher.set_seq2(word)
    size = len(word)
    scores = {}
    for candidate in candidates:
        if _length_bound(size, len(candidate)) < cutoff:
            continue
        matcher.set_seq1(candidate)
        if matcher.quick_ratio() >= cutoff and matcher.ratio() >= cutoff:
            scores[candidate] = matcher.ratio()
    return scores


def _length_bound(a: int, b: int) -> float:
    """The highest ratio two texts of these lengths can reach (difflib's real_quick_ratio)."""
    total = a + b
    return 2.0 * min(a, b) / total if total else 1.0
