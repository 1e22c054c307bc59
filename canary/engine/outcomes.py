"""The verdicts of one check on one version, and the record that carries them to reports."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from canary.untrusted import showable


class Status(str, enum.Enum):
    PASS = "pass"
    FAIL = "fail"
    SKIP = "skip"
    XFAIL = "xfail"
    XPASS = "xpass"
    WARN = "warn"
    ERROR = "error"

    @property
    def is_red(self) -> bool:
        """Only these make the run exit 1."""
        return self in (Status.FAIL, Status.ERROR)


@dataclass(frozen=True)
class Result:
    """One cell of the check x version grid; field order is the JSON contract of SPEC.

    The detail quotes upstream and index text (file names, URLs, server messages): it is made
    showable here, once, so no report can carry an escape sequence to a terminal, a second
    line, or a workflow command to a CI log."""

    upstream: str
    check: str
    version: str
    status: Status
    detail: str = ""
    source: str = ""

    def __post_init__(self) -> None:
        shown = showable(self.detail)
        if shown != self.detail:
            object.__setattr__(self, "detail", shown)

    def to_json(self) -> dict[str, str]:
        return {
            "upstream": self.upstream,
            "check": self.check,
            "version": self.version,
            "status": self.status.value,
            "detail": self.detail,
            "source": self.source,
        }

    @classmethod
    def from_json(cls, data: dict[str, str]) -> Result:
        return cls(
            upstream=data["upstream"],
            check=data["check"],
            version=data["version"],
            status=Status(data["status"]),
            detail=data.get("detail", ""),
            source=data.get("source", ""),
        )


def summarize(results: list[Result]) -> dict[str, int]:
    """Counts per status, every status present (SPEC's `summary` object)."""
    counts = {status.value: 0 for status in Status}
    for result in results:
        counts[result.status.value] += 1
    return counts


@dataclass(frozen=True)
class UpstreamInfo:
    """What a report needs to know of a matrix beyond its results."""

    versions: tuple[str, ...] = ()  # in check order: releases by PEP 440, then branches
    anchors: tuple[str, ...] = ()
    broken: tuple[str, ...] = ()
    branches: tuple[str, ...] = ()
    #: the matrix file as given on the command line, and the line of each check id in it,
    #: so CI annotations point at the check a maintainer has to look at
    matrix: str = ""
    lines: dict[str, int] = field(default_factory=dict, compare=False)


@dataclass
class RunReport:
    """Everything one `canary check` produced; the JSON output is its serialization."""

    results: list[Result]
    stats: dict[str, float]
    upstreams: dict[str, UpstreamInfo]
    #: what was run, for a report read later: `date` (UTC), `canary` (its version), `command`
    run: dict[str, str] = field(default_factory=dict)
