"""Where a check broke: the last version it held on and the first it failed on.

A check's row, in check order (releases by PEP 440, then branches), falls into runs; a failing
run (fail or warn) that follows a version where the contract held (pass or xpass) is a
transition. Skips, known breaks and errors neither hold nor fail: they are stepped over, so
`held on` is the last version known to hold. Every failing result of such a run carries its
transition; the run's first result also carries what the subject became there, which only the
latest transition of a check is worth the reads for.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from canary.engine.outcomes import Became, Result, Status

HOLDING = frozenset({Status.PASS, Status.XPASS})
FAILING = frozenset({Status.FAIL, Status.WARN})


@dataclass(frozen=True)
class Transition:
    upstream: str
    check: str
    last_pass: str
    first_fail: str
    failing: tuple[str, ...]  # the failing run's versions, first_fail first


def find_transitions(
    results: Iterable[Result], order: Mapping[str, Sequence[str]]
) -> list[Transition]:
    """Every transition, per check in the order its results came, oldest first."""
    rows: dict[tuple[str, str], dict[str, Result]] = {}
    for result in results:
        rows.setdefault((result.upstream, result.check), {})[result.version] = result
    found = []
    for (upstream, check), cells in rows.items():
        versions = [v for v in order.get(upstream, ()) if v in cells]
        known = set(versions)
        versions += [v for v in cells if v not in known]
        held, failing = "", list[str]()
        for version in versions:
            status = cells[version].status
            if status in HOLDING:
                if failing:
                    found.append(Transition(upstream, check, held, failing[0], tuple(failing)))
                held, failing = version, []
            elif status in FAILING and held:
                failing.append(version)
        if failing:
            found.append(Transition(upstream, check, held, failing[0], tuple(failing)))
    return found


def latest(transitions: Iterable[Transition]) -> list[Transition]:
    """The last transition of each check: the break a maintainer has to act on now."""
    by_check = {(t.upstream, t.check): t for t in transitions}
    return list(by_check.values())


#: (became, diff) for each transition, or None where it could not be told
Explainer = Callable[[list[Transition]], "list[tuple[Became | None, str] | None]"]


def with_transitions(
    results: list[Result], order: Mapping[str, Sequence[str]], explain: Explainer
) -> list[Result]:
    """The results, each failure of a transition carrying it, and the first failure of each
    check's latest transition what `explain` says the subject became (it is asked once, for
    all of them, so it can read the versions in parallel)."""
    found = find_transitions(results, order)
    if not found:
        return results
    of: dict[tuple[str, str, str], Transition] = {
        (t.upstream, t.check, version): t for t in found for version in t.failing
    }
    asked = latest(found)
    told = {
        (t.upstream, t.check, t.first_fail): answer
        for t, answer in zip(asked, explain(asked), strict=True)
    }
    out = []
    for result in results:
        key = (result.upstream, result.check, result.version)
        transition = of.get(key)
        if transition is None:
            out.append(result)
            continue
        became, diff = told.get(key) or (None, "")
        out.append(
            dataclasses.replace(
                result,
                last_pass=transition.last_pass,
                first_fail=transition.first_fail,
                became=became,
                diff=diff,
            )
        )
    return out
