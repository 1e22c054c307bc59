"""The proposed matrix of one upstream, settled on the releases read: what is proposed, gated,
left out (and why), and the header that says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from packaging.version import Version

from canary.matrix.model import Matrix
from canary.scan.downstream.findings import Role, Use, file_upstreams
from canary.scan.downstream.ranges import UNION, narrowed
from canary.scan.proposing.judging import GATED, settle
from canary.scan.proposing.last_held import BROKEN
from canary.scan.proposing.propose import Proposal
from canary.scan.proposing.split_texts import split_texts
from canary.scan.upstream.releases import Reading, load_text
from canary.scan.writing.emit import Releases, merge_text, render_matrix


@dataclass
class Proposed:
    """The proposed matrix of one upstream: its text (comments on what fails included)."""

    upstream: str
    proposals: list[Proposal]
    releases: Releases
    reading: Reading | None = None
    left_out: list[Proposal] = field(default_factory=list)  # guarded, absent on both ends
    not_scanned: str = ""  # the downstream folders and globs scan did not read
    unplaced: str = ""  # the rewrites of sources scan could not tell of what, by file
    unreached: list[Proposal] = field(default_factory=list)  # gated outside every release
    #: broken on every release in range, kept as `severity: info` (last_held.py)
    stale: list[Proposal] = field(default_factory=list)
    elsewhere: int = 0  # texts of a listing's rewrite no release has there, found elsewhere
    own: list[Proposal] = field(default_factory=list)  # names the client attaches (attached.py)

    def text(self) -> str:
        """A complete new matrix file; comments above checks say where they fail."""
        return render_matrix(
            self.upstream, self.proposals, self.releases, self._header(), self._repository
        )

    @property
    def _repository(self) -> str | None:
        """The repository the upstream's newest release names (an upstream canary knows
        needs none)."""
        return self.reading.repository if self.reading is not None else None

    def _header(self) -> list[str]:
        scanned = [f"not scanned: {self.not_scanned}"] if self.not_scanned else []
        return scanned + ([self.unplaced] if self.unplaced else []) + self._reading_header()

    def _reading_header(self) -> list[str]:
        reading = self.reading
        if reading is None:
            return []
        if reading.problem:
            return [f"upstream {self.upstream} not read ({reading.problem}): placed by names only"]
        labels = ", ".join(run.target.label for run in reading.runs)
        head = [f"placed and judged on {labels}; a comment above a check says where it fails"]
        if any(note.startswith(GATED) for p in self.proposals for note in p.notes):
            head.append(
                f"`{GATED} from V on` above a check: gated since V, where it starts holding; unless"
                " your code reaches it only on newer releases, your declared range is wrong there"
            )
        if self.left_out:
            head.append(
                f"left out: {len(self.left_out)} use{'s' * (len(self.left_out) > 1)} the client"
                " guards (try/except, hasattr) of"
                f" names neither {' nor '.join(run.target.label for run in reading.runs)} has"
                " (dead code for this range?):"
            )
        head += [f"  {_name(p)} -- {p.why}" for p in self.left_out]
        if self.unreached:
            head.append(
                f"left out: {len(self.unreached)} use{'s' * (len(self.unreached) > 1)} the client"
                " gates to releases outside the range (no locked release would check it):"
            )
        head += [
            f"  {_name(p)} ({p.gate.replace(UNION, ' or ')}) -- {p.why}" for p in self.unreached
        ]
        if self.own:
            head.append(
                f"left out: {len(self.own)} name{'s' * (len(self.own) > 1)} your code sets on an"
                " upstream module that no release read binds, in the range or before it (your"
                " own, attached):"
            )
        head += [f"  {_name(p)} -- {p.why}" for p in self.own]
        if self.elsewhere:
            head.append(
                f"left out: {self.elsewhere} text{'s' * (self.elsewhere > 1)} a rewrite of every"
                " module a listing names (`dir()` filtered) seeks in modules no release in the"
                " range has them in, checked in the modules that have them"
            )
        if any(p.public for p in self.proposals):
            head.append(
                "a check on one line: a public name (the package root exports it on every"
                " release read) your code imports or reads, `severity: info` (a warning if a"
                " release drops it)"
            )
        if self.stale:
            head.append(
                f"`{BROKEN}` above a check ({len(self.stale)} here): a use no release in range"
                " satisfies, a patch that does nothing or fails wherever your code runs;"
                " `severity: info` (a warning on every run): fix it, or put its id under `ignore:`"
            )
        return head

    def settle(self) -> None:
        """Judge the proposals on the releases read: gate or annotate what fails there, and
        leave out the guarded names absent on both ends."""
        reading = self.reading if self.reading is not None and self.reading.runs else None
        labels = [Version(label) for label in reading.labels] if reading else []
        for proposal in self.proposals:  # one specifier set over the range, if any admits it
            gate = narrowed(proposal.gate, labels)
            if gate is None:
                self.unreached.append(proposal)
            else:
                proposal.gate = gate
        unreached = {id(p) for p in self.unreached}
        self.proposals = [p for p in self.proposals if id(p) not in unreached]
        if self.reading is not None and self.reading.runs:
            self.proposals = split_texts(self.proposals, self._matrix_of, self.reading)
            matrix = self._matrix_of(self.proposals)
            self.left_out, stale, self.own = settle(matrix, self.proposals, self.reading)
            self.stale, apart = _listed_apart(stale, self.proposals)
            self.elsewhere = len(apart)
            gone = {id(p) for p in self.left_out + apart + self.own}
            self.proposals = [p for p in self.proposals if id(p) not in gone]
            for proposal in self.proposals if self.reading.labels else ():  # releases, not
                if _public(proposal):  # a local folder: what holds on every release is unknown
                    proposal.public, proposal.severity = True, "info"

    def _matrix_of(self, proposals: list[Proposal]) -> Matrix:
        """The matrix `proposals` make, a check per proposal in order, as written out."""
        text = render_matrix(
            self.upstream, proposals, self.releases, self._header(), self._repository
        )
        return load_text(self.upstream, text)

    def merged(self, existing: str, name: str, declined: set[str]) -> tuple[str, int]:
        """`existing` (the matrix file `name`) with the missing proposals appended; `declined`
        are ids other matrices of the upstream state or ignore."""
        return merge_text(existing, name, self.proposals, declined)


def _public(proposal: Proposal) -> bool:
    """An unguarded use of a name the package root binds on the newest and the lowest release
    in range (judged, no comment: it failed on neither, so nothing was bisected between),
    imported or read, never patched: a notice, low in value beside what a patch depends on
    (a name the root exports leaves through a deprecation, and loudly)."""
    subject = proposal.subject
    plain = subject.key == "symbol" and "." not in subject.module and not subject.alternatives
    unchanged = proposal.assertion is None and not proposal.gate and not proposal.notes
    read = all(use.role in (Role.IMPORT, Role.ACCESS) for use in proposal.uses)
    return plain and unchanged and read and proposal.severity == "error" and bool(proposal.uses)


def _listed_apart(
    stale: list[Proposal], proposals: list[Proposal]
) -> tuple[list[Proposal], list[Proposal]]:
    """The checks broken on every release to keep, and those to leave out: texts sought in
    every module of a listing (Use.listed) that a check holding somewhere finds in another
    module (the client rewrites each module alike: one without the text is no break)."""
    broken = {id(p) for p in stale}
    found = {(p.assertion, tuple(p.values)) for p in proposals if id(p) not in broken}
    apart = [
        p
        for p in stale
        if all(use.listed for use in p.uses) and (p.assertion, tuple(p.values)) in found
    ]
    return [p for p in stale if p not in apart], apart


def unplaced_by_upstream(
    findings: list[Use], upstreams: frozenset[str]
) -> tuple[dict[str, list[Use]], list[Use]]:
    """The rewrites not placed, each under the upstream its code reads: a pattern's own
    (`transformers.models.{?}...`), else the one upstream the rest of its file uses; and those
    of a file that uses none of `upstreams`, or several, which scan says once, apart from the
    matrices (another framework's files listed in every matrix are noise in each)."""
    used = file_upstreams(findings, upstreams)
    own: dict[str, list[Use]] = {}
    untold: list[Use] = []
    for finding in findings:
        if finding.role is not Role.UNPLACED:
            continue
        reads = {finding.ref.root} & upstreams or used.get(finding.file, set())
        if len(reads) == 1:
            own.setdefault(next(iter(reads)), []).append(finding)
        else:
            untold.append(finding)
    return own, untold


def unplaced_sites(findings: list[Use], of: str = "of what") -> str:
    """ "N source rewrites not placed: a.py:3,9, b.py:7": the sites of rewrites (`.replace`,
    `re.sub`, `in`, ...) of sources scan could not tell `of` (what, or which upstream), which
    no check covers."""
    lines: dict[str, set[int]] = {}
    for finding in findings:
        if finding.role is Role.UNPLACED:
            lines.setdefault(finding.file, set()).add(finding.line)
    count = sum(len(numbers) for numbers in lines.values())
    if not count:
        return ""
    sites = ", ".join(
        f"{file}:{','.join(map(str, sorted(numbers)))}" for file, numbers in sorted(lines.items())
    )
    return f"{count} source rewrite{'s' * (count > 1)} not placed ({of}, scan cannot tell): {sites}"


def _name(proposal: Proposal) -> str:
    subject = proposal.subject
    return f"{subject.module}.{subject.name}" if subject.name else subject.module
