"""The verdicts of one check on one version, and the record that carries them to reports."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from canary.safety.untrusted import showable, showable_lines


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
class Place:
    """A line of upstream source: its text and file (both made showable: a wheel's member
    name is upstream text too), and its 1-based line."""

    text: str
    path: str = ""
    line: int = 0

    def __post_init__(self) -> None:
        for name in ("text", "path"):
            value = getattr(self, name)
            shown = showable(value)
            if shown != value:
                object.__setattr__(self, name, shown)

    def to_json(self) -> dict[str, str | int]:
        return {"text": self.text, "path": self.path, "line": self.line}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Place:
        return cls(str(data.get("text", "")), str(data.get("path", "")), int(data.get("line", 0)))


#: what a failing subject became: the JSON key (`closest`, `moved_to`) of each kind of finding
BECAME_KEYS = {"line": "closest", "parameter": "closest", "definition": "moved_to"}


@dataclass(frozen=True)
class Became:
    """What a check's subject became on the release it first failed on (canary.engine.became):
    the closest `line`s to a missing text, the `parameter`s added where one went missing, or
    the `definition` of a missing name elsewhere in the release; no place: nothing like it."""

    what: str  # "line" | "parameter" | "definition"
    places: tuple[Place, ...] = ()
    searched: int = 0  # how many modules a definition was looked for in

    @property
    def key(self) -> str:
        return BECAME_KEYS[self.what]

    def to_json(self) -> dict[str, Any]:
        first = self.places[0].to_json() if self.places else Place("").to_json()
        data: dict[str, Any] = {"what": self.what, **first}
        if len(self.places) > 1:
            data["also"] = [p.to_json() for p in self.places[1:]]
        if self.what == "definition":
            data["searched"] = self.searched
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Became:
        what = str(data.get("what", ""))
        if what not in BECAME_KEYS:
            raise ValueError(f"what {what!r}")
        places = [Place.from_json(data)] if data.get("text") else []
        places += [Place.from_json(p) for p in data.get("also", [])]
        return cls(what, tuple(places), int(data.get("searched", 0)))


@dataclass(frozen=True)
class BrokenBy:
    """The upstream commit that broke a check (canary.engine.culprit), found by judging the
    check on the commits between the last version it held on and the first it failed on;
    its title and pull request are upstream text, made showable."""

    commit: str  # the full sha
    date: str  # committer date, ISO 8601
    title: str  # the message's first line
    pull: int = 0  # the pull request that carried it (0: none found)
    pull_title: str = ""
    pull_url: str = ""
    judged: int = 0  # commits the check was judged on to find it
    between: int = 0  # commits between the two versions
    #: commits just before it that could not be judged (a file that did not parse there, a
    #: gate that skipped): the break may be one of them
    unsure: int = 0

    def __post_init__(self) -> None:
        for name in ("commit", "date", "title", "pull_title", "pull_url"):
            shown = showable(getattr(self, name))
            if shown != getattr(self, name):
                object.__setattr__(self, name, shown)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"commit": self.commit, "date": self.date, "title": self.title}
        if self.pull:
            data["pull"] = {"number": self.pull, "title": self.pull_title, "url": self.pull_url}
        data.update(judged=self.judged, between=self.between, unsure=self.unsure)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> BrokenBy:
        pull: dict[str, Any] = data["pull"] if isinstance(data.get("pull"), dict) else {}
        return cls(
            str(data["commit"]),
            str(data.get("date", "")),
            str(data.get("title", "")),
            int(pull.get("number", 0)),
            str(pull.get("title", "")),
            str(pull.get("url", "")),
            int(data.get("judged", 0)),
            int(data.get("between", 0)),
            int(data.get("unsure", 0)),
        )


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
    #: on a failure of a check that held on an earlier version (canary.engine.transitions):
    #: the last version it held on before the failing run this result belongs to, and that
    #: run's first version; on that first failing result, what the subject became and the
    #: unified diff of the subject between the two
    last_pass: str = ""
    first_fail: str = ""
    became: Became | None = None
    diff: str = ""
    #: on a `fail`, the check's `why` (what of the downstream needs the contract): kept out
    #: of the detail, so a log line stays short; -v, JSON, HTML and pytest show it
    why: str = ""
    #: on the first failing result of a transition whose upstream change was named (the
    #: nightly, `canary explain`): the commit that broke the check
    broken_by: BrokenBy | None = None

    def __post_init__(self) -> None:
        for name in ("detail", "why"):
            shown = showable(getattr(self, name))
            if shown != getattr(self, name):
                object.__setattr__(self, name, shown)
        shown = showable_lines(self.diff)  # a diff keeps its lines (and tabs)
        if shown != self.diff:
            object.__setattr__(self, "diff", shown)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "upstream": self.upstream,
            "check": self.check,
            "version": self.version,
            "status": self.status.value,
            "detail": self.detail,
            "source": self.source,
        }
        if self.why:
            data["why"] = self.why
        if self.first_fail:
            data["last_pass"], data["first_fail"] = self.last_pass, self.first_fail
        if self.became is not None:
            data[self.became.key] = self.became.to_json()
        if self.diff:
            data["diff"] = self.diff
        if self.broken_by is not None:
            data["broken_by"] = self.broken_by.to_json()
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Result:
        became = next((data[key] for key in ("closest", "moved_to") if key in data), None)
        return cls(
            upstream=data["upstream"],
            check=data["check"],
            version=data["version"],
            status=Status(data["status"]),
            detail=data.get("detail", ""),
            source=data.get("source", ""),
            last_pass=data.get("last_pass", ""),
            first_fail=data.get("first_fail", ""),
            became=Became.from_json(became) if isinstance(became, dict) else None,
            diff=data.get("diff", ""),
            why=data.get("why", ""),
            broken_by=(
                BrokenBy.from_json(data["broken_by"])
                if isinstance(data.get("broken_by"), dict)
                else None
            ),
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
    #: the pre-release checked ahead of every final release (`--versions all`), if any
    next: tuple[str, ...] = ()
    #: the matrix file as given on the command line, and the line of each check id in it,
    #: so CI annotations point at the check a maintainer has to look at
    matrix: str = ""
    lines: dict[str, int] = field(default_factory=dict, compare=False)
    #: the requirement the project declares (`versions.declared`): reds beyond it are told
    #: apart from those on releases it allows (reports/standing.py)
    declared: str = ""
    #: branch -> the commit it pointed at when the nightly judged it (canary.engine.culprit
    #: records it): a break on that branch the next night is bisected from there
    commits: dict[str, str] = field(default_factory=dict, compare=False)


@dataclass
class RunReport:
    """Everything one `canary check` produced; the JSON output is its serialization."""

    results: list[Result]
    stats: dict[str, float]
    upstreams: dict[str, UpstreamInfo]
    #: what was run, for a report read later: `date` (UTC), `canary` (its version), `command`,
    #: `cache` (the cache folder of a run that read the package index or GitHub)
    run: dict[str, str] = field(default_factory=dict)
    #: (upstream, check) -> the date an upcoming red was first seen (canary.engine.upcoming):
    #: carried from the previous night's results by the nightly; a run alone gives its own date
    since: dict[tuple[str, str], str] = field(default_factory=dict)
