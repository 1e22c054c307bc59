"""Names the client sets on an upstream module that neither end of the range binds.

`m.name = value` of a name no release read has in `m` is either the client attaching a name
of its own (a marker, a helper), which proposes nothing, or a setting of a module global that
upstream read once and dropped (OpenRLHF sets `transformers.modeling_flash_attention_utils.
deterministic_g = True`, which transformers 4.x read and 5.x does not: the line does nothing).
Only the releases before the range tell them apart: each such name is proposed as a `symbol`
check, judged as any (held somewhere in range: gated or red as usual; on no release in range:
looked for on the older ones, last_held.py) and, held on none, left out and listed at the
head of the matrix as the client's own, so nothing scan read goes unsaid.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from canary.scan.downstream.findings import Role, Use
from canary.scan.proposing.propose import Proposal, ProposedSubject
from canary.scan.proposing.subjects import place
from canary.scan.upstream.view import UpstreamView


def subject_order(proposal: Proposal) -> tuple[str, str, str]:
    """Proposals' order in a matrix (as propose.py sorts them): module, name, subject key."""
    subject = proposal.subject
    return subject.module, subject.name or "", subject.key or ""


def attached(
    findings: Iterable[Use],
    views: Mapping[str, Sequence[UpstreamView]],
    proposed: Mapping[str, list[Proposal]],
) -> dict[str, list[Proposal]]:
    """Per upstream, a `symbol` proposal (`attached`) for each module-level name the client
    assigns that no release read binds in that module, unless a proposal states it already."""
    stated = {p.subject for proposals in proposed.values() for p in proposals}
    found: dict[ProposedSubject, list[Use]] = {}
    for finding in findings:
        read = views.get(finding.ref.root, ())
        if finding.role is not Role.PATCH or not read:
            continue
        target = place(finding.ref, read)
        if target is None or not target.absent or target.kind or len(target.path) != 1:
            continue
        subject = ProposedSubject(target.module, "symbol", target.path[0])
        if subject not in stated:
            found.setdefault(subject, []).append(finding)
    result: dict[str, list[Proposal]] = {}
    for subject, uses in sorted(found.items(), key=lambda item: (item[0].module, item[0].name)):
        severity = "info" if all(use.tolerated for use in uses) else "error"
        uses = sorted(set(uses), key=lambda use: (use.file, use.line))
        gates = {use.gate for use in uses}
        proposal = Proposal(subject, None, [], severity, uses, attached=True)
        proposal.gate = gates.pop() if len(gates) == 1 else ""
        result.setdefault(subject.upstream, []).append(proposal)
    return result
