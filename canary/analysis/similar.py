"""Did-you-mean suggestions among the names of a module or a release (thousands of them)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def close_matches(word: str, candidates: Iterable[str], n: int, cutoff: float) -> list[str]:
    """`difflib.get_close_matches`, with the same answers. Its first filter (a ratio bound from
    the two lengths alone) runs here, before the setup difflib does per candidate, which over a
    release's thousands of names cost more than judging the check."""
    size = len(word)
    near = [c for c in candidates if _length_bound(size, len(c)) >= cutoff]
    return difflib.get_close_matches(word, near, n=n, cutoff=cutoff)


def _length_bound(a: int, b: int) -> float:
    """The highest ratio two texts of these lengths can reach (difflib's real_quick_ratio)."""
    total = a + b
    return 2.0 * min(a, b) / total if total else 1.0
