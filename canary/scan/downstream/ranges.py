"""The releases a use runs on, as scan writes them: PEP 440 specifiers, joined and narrowed.

A client's version tests nest (`if v >= 0.20:` inside `if v < 0.24:`), exit early, and
combine with `or` (`if v < 0.15 or v >= 0.30:`), which no single specifier set can say. While
reading the downstream, a gate is a union of specifier sets (`UNION` between them); once the
releases in range are known, `narrowed` keeps the parts some release falls in, so what is
written is one specifier set that admits a release, or nothing is written at all.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from packaging.specifiers import InvalidSpecifier, Specifier, SpecifierSet
from packaging.version import Version

#: between the alternatives of a union of specifier sets, while the downstream is read
UNION = "||"
_LOWER = (">=", ">")
_UPPER = ("<", "<=")


def conjoin(gates: Iterable[str]) -> str:
    """The releases every one of `gates` admits ("" admits all), each a union or not: every
    bound that another one of the same side makes redundant is dropped (`>=0.20.0,>=0.24.0`
    is `>=0.24.0`), the rest kept in the order written."""
    terms = [""]
    for gate in gates:
        if gate:
            alternatives = gate.split(UNION)
            terms = [f"{t},{a}" if t else a for t in terms for a in alternatives]
    return UNION.join(dict.fromkeys(_tightest(term) for term in terms))


def _tightest(term: str) -> str:
    """`term` (one specifier set) with its redundant bounds dropped."""
    try:
        specifiers = [Specifier(part) for part in dict.fromkeys(term.split(",")) if part]
    except InvalidSpecifier:
        return term
    kept = [
        s
        for i, s in enumerate(specifiers)
        if not any(_implies(o, s) or (j < i and _same(o, s)) for j, o in enumerate(specifiers))
    ]
    return ",".join(str(s) for s in kept)


def _same(one: Specifier, other: Specifier) -> bool:
    return one.operator == other.operator and Version(one.version) == Version(other.version)


def _implies(strong: Specifier, weak: Specifier) -> bool:
    """Whether every version `strong` admits, `weak` admits too, both bounds of one side and
    not the same bound (a strict bound wins a tie), so `weak` says nothing more."""
    for side in (_LOWER, _UPPER):
        if strong.operator in side and weak.operator in side:
            ours, theirs = Version(strong.version), Version(weak.version)
            if ours == theirs:  # `>` over `>=`, `<` over `<=`
                return strong.operator in (">", "<") and weak.operator in (">=", "<=")
            return ours > theirs if side is _LOWER else ours < theirs
    return False


def admits(gate: str, release: Version) -> bool:
    """Whether `release` is in `gate` (a union or not; "" admits every release)."""
    terms = gate.split(UNION) if gate else []
    return not terms or any(SpecifierSet(t).contains(release, prereleases=True) for t in terms)


def narrowed(gate: str, releases: Sequence[Version]) -> str | None:
    """`gate` as one specifier set over `releases` (the range read): None when it admits
    none of them (the use runs on no release in range), the one alternative of a union that
    admits some, or "" (every release) when several do, since one set cannot say which."""
    if not gate or not releases:
        return "" if UNION in gate else gate
    reached = [term for term in gate.split(UNION) if any(admits(term, r) for r in releases)]
    if not reached:
        return None
    return reached[0] if len(reached) == 1 else ""
