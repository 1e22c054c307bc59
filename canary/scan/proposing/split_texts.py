"""One source check per text that breaks on its own.

A rewriter that seeks several texts in one method (`if "has_images" not in function: raise`,
then a `.replace` of a block written for another release) is one proposal with every text
under `contains`. The check fails wherever one text is missing, so a text that matches no
release hides the others: trl's `has_images` held on 0.22 and 0.23 and went in 0.24.0, and
`contains: [<a block no release has>, "has_images"]` failed on both sides of that, never red
where it broke. Each text is judged on the ends read; those holding on both stay together,
each other text becomes a check of its own, which the judging then gates and bisects alone.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from canary.engine.outcomes import Status
from canary.matrix.model import Matrix
from canary.scan.proposing.propose import Proposal
from canary.scan.upstream.releases import Reading

_TEXTS = ("contains", "matches")
_OK = (Status.PASS, Status.SKIP)


def _alone(proposal: Proposal) -> list[Proposal]:
    """The proposal once per text it seeks (itself when it seeks one, or none)."""
    if proposal.assertion not in _TEXTS or len(proposal.values) < 2:
        return [proposal]
    return [_with(proposal, [value]) for value in proposal.values]


def _with(proposal: Proposal, values: list[str]) -> Proposal:
    return dataclasses.replace(proposal, values=values, notes=list(proposal.notes))


def split_texts(
    proposals: list[Proposal], matrix_of: Callable[[list[Proposal]], Matrix], reading: Reading
) -> list[Proposal]:
    """`proposals` with each multi-text source check split where its texts disagree: the
    texts holding on every end read stay one check, each other text is a check of its own.
    `matrix_of` renders proposals as the matrix they make (a check per proposal, in order)."""
    parts = [_alone(proposal) for proposal in proposals]
    if not reading.runs or all(len(group) == 1 for group in parts):
        return proposals
    flat = [part for group in parts for part in group]
    matrix = matrix_of(flat)
    ends = [reading.judging(matrix, run.target.label) for run in reading.runs]
    holds = iter(all(run.judge(check)[0] in _OK for run in ends) for check in matrix.checks)
    result: list[Proposal] = []
    for proposal, group in zip(proposals, parts, strict=True):
        held = [next(holds) for _ in group]
        if len(group) == 1 or all(held):
            result.append(proposal)
            continue
        steady = [part.values[0] for part, ok in zip(group, held, strict=True) if ok]
        result += [_with(proposal, steady)] if steady else []
        result += [part for part, ok in zip(group, held, strict=True) if not ok]
    return result
