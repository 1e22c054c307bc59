"""Matrix files: the YAML a maintainer writes, validated into typed checks.

Every problem is reported as a MatrixError naming file, line, check id and key, because the
person reading it has to fix the YAML, not debug canary.
"""

from __future__ import annotations

import datetime
import difflib
import enum
import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import yaml
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from canary.analysis.model import Param
from canary.analysis.parameters import parse_signature
from canary.errors import CanaryError
from canary.matrix import yamlmarks
from canary.matrix.ignore import Ignored, read_ignored

TOP_KEYS = ("upstream", "package", "pypi", "github", "src", "tag", "versions", "checks", "ignore")
VERSION_KEYS = (
    "releases",
    "declared",
    "prereleases",
    "next",
    "include",
    "exclude",
    "anchors",
    "broken",
)
SUBJECT_KEYS = ("symbol", "class", "function")
LIST_KEYS = (
    "methods",
    "bases",
    "attributes",
    "assignable",
    "no_methods_beyond",
    "params",
    "accepts",
    "named",
    "contains",
    "matches",
    "not_contains",
    "globals_given",
)
CONTRACT_KEYS = (
    "module",
    *SUBJECT_KEYS,
    *LIST_KEYS,
    "signature",
    "call",
    "count",
    "own",
    "globals_bound",
)
CALL_KEYS = ("args", "keywords")
GATE_KEYS = ("since", "until", "versions")
CHECK_KEYS = ("id", "why", "severity", "any_of", "broken", *GATE_KEYS, *CONTRACT_KEYS)
ACK_KEYS = ("reason", "until_date")

_ID = re.compile(r"^[a-z0-9][a-z0-9-]*$")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
DOTTED_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
_GITHUB = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")


class MatrixError(CanaryError):
    """A matrix that cannot be loaded; str() is the whole message a user sees."""

    def __init__(self, path: Path | str, line: int | None, message: str, *, check: str = ""):
        self.path = str(path)
        self.line = line
        self.check = check
        where = f"{self.path}:{line}" if line else self.path
        prefix = f"check {check!r}: " if check else ""
        super().__init__(f"{where}: {prefix}{message}")
        self.errors: list[MatrixError] = [self]

    @classmethod
    def several(cls, errors: list[MatrixError]) -> MatrixError:
        """Every error of one file as one exception: one line each, in file order."""
        errors = sorted(errors, key=lambda e: e.line or 0)
        if len(errors) == 1:
            return errors[0]
        first = errors[0]
        combined = cls(first.path, first.line, "", check=first.check)
        combined.args = ("\n".join(str(e) for e in errors),)
        combined.errors = errors
        return combined

    def lines(self) -> list[str]:
        return [str(error) for error in self.errors]


@dataclass(frozen=True)
class SymbolSubject:
    """`symbol: NAME`: a name bound at module scope, by any statement."""

    name: str


@dataclass(frozen=True)
class ClassSubject:
    """`class: NAME`: a class defined in the module."""

    name: str


@dataclass(frozen=True)
class FunctionSubject:
    """`function: NAME` or `function: Class.method`: a function or a method defined there."""

    name: str  # as written

    @property
    def owner(self) -> str | None:
        """The class of a method, None for a module-level function."""
        return self.name.split(".")[0] if "." in self.name else None

    @property
    def method(self) -> str:
        return self.name.rsplit(".", 1)[-1]


#: What a check is about within its module: at most one subject, of one of three kinds.
Subject = SymbolSubject | ClassSubject | FunctionSubject


@dataclass(frozen=True)
class Contract:
    """The testable part of a check: one module and, optionally, one subject in it."""

    module: str
    subject: Subject | None = None
    methods: tuple[str, ...] = ()
    bases: tuple[str, ...] = ()
    attributes: tuple[str, ...] = ()  # bound by the class or a base
    assignable: tuple[str, ...] = ()  # bound, and not a property without a setter
    no_methods_beyond: tuple[str, ...] | None = None  # every public method is one of these
    params: tuple[str, ...] = ()
    accepts: tuple[str, ...] = ()
    named: tuple[str, ...] = ()  # a named parameter, or renamed onto one; not **kwargs
    signature: Signature | None = None
    call: CallShape | None = None
    own: bool = False  # methods must be defined in the class's own body, not inherited
    contains: tuple[str, ...] = ()
    count: int | None = None  # each `contains` text occurs exactly this often
    matches: tuple[re.Pattern[str], ...] = ()
    not_contains: tuple[str, ...] = ()
    globals_bound: bool = False  # the upstream's globals the function reads are bound in module
    globals_given: tuple[str, ...] = ()  # supplied by the code that compiles it: not required


@dataclass(frozen=True)
class CallShape:
    """A `call:` pin: how many positionals the call passes and which keywords."""

    args: int = 0
    keywords: tuple[str, ...] = ()

    def __str__(self) -> str:
        given = [f"{self.args} positional{'s' if self.args > 1 else ''}"] if self.args else []
        given += [f"{k}=" for k in self.keywords]
        return f"({', '.join(given)})"


@dataclass(frozen=True)
class Signature:
    """A `signature:` pin: the text as written and the parameters it parses to."""

    text: str
    params: tuple[Param, ...]
    returns: str | None = None


@dataclass(frozen=True)
class Acknowledgement:
    """A known break of one check: on `versions` it is expected to fail, until `until_date`."""

    versions: str  # an exact version or a PEP 440 specifier, as written
    reason: str
    line: int
    until_date: datetime.date | None = None

    def covers(self, version: Version) -> bool:
        if self.versions[:1].isdigit():
            return version == Version(self.versions)
        return SpecifierSet(self.versions).contains(version, prereleases=True)

    def expired(self, today: datetime.date) -> bool:
        return self.until_date is not None and today > self.until_date


class Severity(str, enum.Enum):
    """How red a failure of a check is: an `info` failure is a `warn`, never red."""

    ERROR = "error"
    INFO = "info"


@dataclass(frozen=True)
class Check:
    id: str
    why: str
    line: int
    severity: Severity = Severity.ERROR
    gate: SpecifierSet | None = None
    contract: Contract | None = None
    any_of: tuple[Contract, ...] = ()
    broken: tuple[Acknowledgement, ...] = ()
    lines: dict[str, int] = field(default_factory=dict, compare=False)  # key -> its line

    def line_of(self, key: str) -> int:
        return self.lines.get(key, self.line)

    def acknowledgement(self, version: Version) -> Acknowledgement | None:
        """The first acknowledged break covering `version`, if any."""
        return next((ack for ack in self.broken if ack.covers(version)), None)

    def gated_out(self, version: Version) -> bool:
        """True when `version` lies outside the check's since/until/versions gate."""
        return self.gate is not None and not self.gate.contains(version, prereleases=True)


@dataclass(frozen=True)
class VersionSpec:
    releases: SpecifierSet | None = None
    prereleases: bool = False
    #: also lock the newest pre-release when it is newer than every final release, for
    #: `--versions all` (the nightly) to judge as its own column
    next: bool = True
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    anchors: tuple[str, ...] = ()
    broken: dict[str, str] = field(default_factory=dict)
    #: the requirement the project itself declares (`canary init` copies it, upper pins and
    #: all): reports list reds beyond it after those on releases it allows
    declared: SpecifierSet | None = None


@dataclass(frozen=True)
class Matrix:
    path: Path
    upstream: str
    package: str
    pypi: str
    github: str | None
    src: str
    tag: str
    versions: VersionSpec
    checks: tuple[Check, ...]
    lines: dict[str, int] = field(default_factory=dict, compare=False)
    ignored: tuple[Ignored, ...] = ()  # proposals the maintainer declined (matrix/ignore.py)

    def line_of(self, key: str) -> int:
        """Line of a dotted key such as "versions.anchors" (1 when unknown)."""
        return self.lines.get(key, 1)

    def error(self, key: str, message: str) -> MatrixError:
        """A load error pointing at `key`, for checks made after loading (anchors resolve)."""
        return MatrixError(self.path, self.line_of(key), f"{key}: {message}")


def refuse_empty_gates(
    matrix: Matrix, releases: list[Version], branches: list[str] | None = None
) -> None:
    """A check whose gate admits none of the matrix's releases can never run on one, and a
    check's `broken` entry that covers none of them acknowledges nothing (a typo, or a release
    gone): mistakes, refused before anything runs (all of them at once). A `since`/`until`
    gate is let be when the matrix checks a branch or the pre-release ahead of its releases
    (`versions.next`), which may admit it."""
    if not releases:
        return
    span = f"{len(releases)} releases ({min(releases)} to {max(releases)})"
    errors = []
    for check in matrix.checks:
        if check.gate is None or any(check.gate.contains(v, prereleases=True) for v in releases):
            continue
        key = next((k for k in ("versions", "until", "since") if k in check.lines), None)
        if key is None or (key != "versions" and branches):
            continue
        errors.append(
            MatrixError(
                matrix.path,
                check.line_of(key),
                f"{key}: {str(check.gate)!r} admits none of the {span}; the check would never run",
                check=check.id,
            )
        )
    errors += [
        MatrixError(
            matrix.path,
            ack.line,
            f"broken: {ack.versions!r} covers none of the {span}; it acknowledges nothing",
            check=check.id,
        )
        for check in matrix.checks
        for ack in check.broken
        if not any(ack.covers(v) for v in releases)
    ]
    if errors:
        raise MatrixError.several(errors)


def load_matrix(path: Path | str, *, checks_required: bool = True) -> Matrix:
    """Read and validate one matrix file; raises MatrixError, never anything else.

    `checks_required=False` accepts an empty `checks` list (a header being built)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise MatrixError(path, None, f"cannot read: {exc}") from None
    try:
        data = yamlmarks.load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        if isinstance(exc, yaml.reader.ReaderError):  # a control character: only a position
            line = yamlmarks.reader_error_line(text, exc)
        problem = getattr(exc, "problem", None) or str(exc)
        raise MatrixError(path, line, f"invalid YAML: {problem}") from None
    except RecursionError:
        raise MatrixError(path, None, "invalid YAML: nested too deeply") from None
    return _MatrixReader(path, checks_required).matrix(data)


class _Errors:
    """Every error of one file, collected so reading goes on past the first (packaging's
    `_ErrorCollector`): a maintainer fixes them all in one edit."""

    def __init__(self) -> None:
        self.errors: list[MatrixError] = []

    def attempt(self, read: Callable[[], Any], default: Any = None) -> Any:
        """`read()`, or `default` with its error kept for the report."""
        try:
            return read()
        except MatrixError as exc:
            self.errors.append(exc)
            return default

    def add(self, error: MatrixError) -> None:
        self.errors.append(error)

    def finalize(self) -> None:
        if self.errors:
            raise MatrixError.several(self.errors)


#: what `_Reader._parsed` returns: a Version or a SpecifierSet
_Parsed = TypeVar("_Parsed")


class _Reader:
    """Typed getters over the marked YAML of one scope, the file or one check (`label` is its
    id, or `#N` while the id is unknown), so that every error names the file, line and check."""

    def __init__(self, path: Path, label: str = ""):
        self.path = path
        self.label = label

    def fail(self, line: int | None, message: str) -> MatrixError:
        return MatrixError(self.path, line, message, check=self.label)

    def unknown_keys(self, data: yamlmarks.MarkedDict, allowed: tuple[str, ...], what: str) -> None:
        for key in data:
            if key in allowed:
                continue
            hint = difflib.get_close_matches(str(key), allowed, n=1, cutoff=0.6)
            suggestion = f"; did you mean {hint[0]!r}?" if hint else ""
            raise self.fail(data.lines.get(key), f"{key}: unknown key in {what}{suggestion}")

    def string(
        self,
        data: yamlmarks.MarkedDict,
        key: str,
        *,
        required: bool = False,
        pattern: re.Pattern[str] | None = None,
    ) -> str | None:
        if key not in data:
            if required:
                raise self.fail(data.line, f"{key}: required key is missing")
            return None
        value = data[key]
        line = data.lines[key]
        if not isinstance(value, str):
            hint = ' (quote versions, e.g. "0.20")' if isinstance(value, float | int) else ""
            raise self.fail(line, f"{key}: must be a string, not {_kind(value)}{hint}")
        if pattern is not None and not pattern.fullmatch(value):  # `$` would allow a "\n"
            raise self.fail(line, f"{key}: {value!r} is not a valid {key}")
        return value

    def strings(self, data: yamlmarks.MarkedDict, key: str) -> tuple[str, ...]:
        value = data.get(key, [])
        line = data.lines.get(key, data.line)
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.fail(line, f"{key}: must be a list of strings, not {_kind(value)}")
        return tuple(value)

    def version(self, value: Any, line: int, key: str) -> Version:
        not_string = f"{key}: version must be a quoted string, not {_kind(value)}"
        invalid = f"{key}: {value!r} is not a PEP 440 version"
        return self._parsed(Version, InvalidVersion, value, line, not_string, invalid)

    def specifier(self, value: Any, line: int, key: str) -> SpecifierSet:
        not_string = f"{key}: must be a PEP 440 specifier string"
        invalid = f"{key}: {value!r} is not a PEP 440 specifier"
        return self._parsed(SpecifierSet, InvalidSpecifier, value, line, not_string, invalid)

    def _parsed(
        self,
        parse: Callable[[str], _Parsed],
        rejects: type[ValueError],
        value: Any,
        line: int,
        not_string: str,
        invalid: str,
    ) -> _Parsed:
        """`value` parsed (a PEP 440 version or specifier), or the error at `line` saying
        whether it was no string or no valid one."""
        if not isinstance(value, str):
            raise self.fail(line, not_string)
        try:
            return parse(value)
        except rejects:
            raise self.fail(line, invalid) from None


class _MatrixReader(_Reader):
    """The file's top level: its header, its versions, and each check through a _CheckReader."""

    def __init__(self, path: Path, checks_required: bool = True):
        super().__init__(path)
        self.checks_required = checks_required
        self.lines: dict[str, int] = {}
        self.errors = _Errors()

    def matrix(self, data: Any) -> Matrix:
        """The whole file is read even past an error, so that every error is reported."""
        if data is None:
            raise self.fail(None, "the file is empty; a matrix needs `upstream` and `checks`")
        if not isinstance(data, yamlmarks.MarkedDict):
            raise self.fail(1, f"the top level must be a mapping, not {_kind(data)}")
        for key in data:
            self.lines[key] = data.lines[key]
        attempt = self.errors.attempt
        attempt(lambda: self.unknown_keys(data, TOP_KEYS, "matrix"))
        upstream = attempt(
            lambda: self.string(data, "upstream", required=True, pattern=_ID), "unnamed"
        )
        github = attempt(lambda: self.string(data, "github", pattern=_GITHUB))
        tag = attempt(lambda: self.tag(data), "v{version}")
        versions = attempt(
            lambda: self.version_spec(data.get("versions"), data.lines.get("versions", data.line)),
            VersionSpec(),
        )
        package = attempt(lambda: self.string(data, "package", pattern=DOTTED_NAME))
        pypi = attempt(lambda: self.string(data, "pypi"))
        src = attempt(lambda: self.src(data))
        checks = self.checks(data)
        ids = {check.id for check in checks}
        ignore_line = data.lines.get("ignore", data.line)
        ignored = attempt(
            lambda: read_ignored(data.get("ignore"), ignore_line, ids, self.fail, _ID), ()
        )
        self.errors.finalize()
        return Matrix(
            path=self.path,
            upstream=upstream,
            package=package or upstream,
            pypi=pypi or upstream,
            github=github,
            src=(src or "").rstrip("/"),
            tag=tag,
            versions=versions,
            checks=checks,
            lines=self.lines,
            ignored=ignored,
        )

    def src(self, data: yamlmarks.MarkedDict) -> str | None:
        """The folder holding the package, inside the repository or --source DIR: an absolute
        path or a `..` would have --source read outside DIR."""
        src = self.string(data, "src")
        if src and (src.startswith(("/", "\\")) or re.match(r"[A-Za-z]:", src)):
            raise self.fail(
                data.lines["src"], f"src: {src!r} is absolute; name a folder inside the repository"
            )
        if src and ".." in re.split(r"[\\/]", src):
            raise self.fail(
                data.lines["src"], f"src: {src!r} leaves the repository; name a folder inside it"
            )
        return src

    def tag(self, data: yamlmarks.MarkedDict) -> str:
        tag = self.string(data, "tag") or "v{version}"
        if "{version}" not in tag:
            raise self.fail(data.lines["tag"], "tag: must contain {version}, e.g. 'v{version}'")
        return tag

    def checks(self, data: yamlmarks.MarkedDict) -> tuple[Check, ...]:
        checks_data = data.get("checks")
        line = data.lines.get("checks", data.line)
        if not isinstance(checks_data, yamlmarks.MarkedList):  # the loader marks every YAML list
            self.errors.add(
                self.fail(line, f"checks: must be a list of checks, not {_kind(checks_data)}")
            )
            return ()
        if not checks_data and self.checks_required:
            self.errors.add(self.fail(line, "checks: is empty; a matrix needs a check"))
        checks = [
            self.errors.attempt(functools.partial(self.check, c, checks_data, i))
            for i, c in enumerate(checks_data)
        ]
        seen: dict[str, int] = {}
        for i, item in enumerate(checks_data):
            check_id = item.get("id") if isinstance(item, yamlmarks.MarkedDict) else None
            if not isinstance(check_id, str):
                continue
            line = yamlmarks.line_of(checks_data, i, line)
            if check_id in seen:
                message = f"id: duplicate id (first used on line {seen[check_id]})"
                self.errors.add(_Reader(self.path, check_id).fail(line, message))
            seen.setdefault(check_id, line)
        return tuple(c for c in checks if c is not None)

    def check(self, data: Any, parent: yamlmarks.MarkedList, index: int) -> Check:
        line = yamlmarks.line_of(parent, index, parent.line)
        if not isinstance(data, yamlmarks.MarkedDict):
            raise self.fail(line, f"checks[{index}]: must be a mapping, not {_kind(data)}")
        raw_id = data.get("id")
        label = raw_id if isinstance(raw_id, str) else f"#{index + 1}"
        return _CheckReader(self.path, label).read(data, line)

    def version_spec(self, data: Any, line: int) -> VersionSpec:
        if data is None:
            return VersionSpec()
        if not isinstance(data, yamlmarks.MarkedDict):
            raise self.fail(line, f"versions: must be a mapping, not {_kind(data)}")
        self.unknown_keys(data, VERSION_KEYS, "versions")
        for key in data:
            self.lines[f"versions.{key}"] = data.lines[key]
        releases = declared = None
        if "releases" in data:
            releases = self.specifier(data["releases"], data.lines["releases"], "releases")
        if "declared" in data:
            declared = self.specifier(data["declared"], data.lines["declared"], "declared")
        flags = {}
        for key, default in (("prereleases", False), ("next", True)):
            flags[key] = data.get(key, default)
            if not isinstance(flags[key], bool):
                raise self.fail(data.lines[key], f"versions.{key}: must be true or false")
        exact = {}
        for key in ("exclude", "anchors"):
            values = self.strings(data, key)
            for value in values:
                self.version(value, data.lines[key], f"versions.{key}")
            exact[key] = values
        broken = data.get("broken")
        if broken is None:
            broken = yamlmarks.MarkedDict()
        elif not isinstance(broken, yamlmarks.MarkedDict):
            raise self.fail(data.lines["broken"], "versions.broken: must map version -> reason")
        for version, reason in broken.items():
            line = broken.lines[version]
            self.version(version, line, "versions.broken")
            if not isinstance(reason, str):
                raise self.fail(line, f"versions.broken: reason for {version} must be text")
        return VersionSpec(
            releases=releases,
            prereleases=flags["prereleases"],
            next=flags["next"],
            include=self.strings(data, "include"),
            exclude=exact["exclude"],
            anchors=exact["anchors"],
            broken=dict(broken),
            declared=declared,
        )


class _CheckReader(_Reader):
    """One check: its id, gates, acknowledged breaks and contract (or alternatives)."""

    def read(self, data: yamlmarks.MarkedDict, line: int) -> Check:
        self.unknown_keys(data, CHECK_KEYS, "a check")
        check_id = self.string(data, "id", required=True, pattern=_ID) or self.label
        why = self.string(data, "why") or ""
        severity = self.string(data, "severity") or Severity.ERROR.value
        if severity not in {kind.value for kind in Severity}:
            known = ", ".join(kind.value for kind in Severity)
            raise self.fail(data.lines["severity"], f"severity: must be one of {known}")
        gate = self.gate(data)
        broken = self.acknowledgements(data)
        alternatives = self.alternatives(data) if "any_of" in data else ()
        contract = None if alternatives else self.contract(data, inherited_module=None)
        return Check(
            id=check_id,
            why=why,
            line=line,
            severity=Severity(severity),
            gate=gate,
            contract=contract,
            any_of=alternatives,
            broken=broken,
            lines=dict(data.lines),
        )

    def acknowledgements(self, data: yamlmarks.MarkedDict) -> tuple[Acknowledgement, ...]:
        """`broken:` on a check: version or range -> reason, or -> {reason, until_date}."""
        if "broken" not in data:
            return ()
        table = data["broken"]
        line = data.lines["broken"]
        if not isinstance(table, yamlmarks.MarkedDict) or not table:
            raise self.fail(
                line,
                "broken: must map a version or PEP 440 range to a reason, "
                'e.g. {"1.14.0": "why"} or {">=1.14,<1.15": {reason: "why", until_date: '
                "2027-03-01}}",
            )
        acks = []
        for key, value in table.items():
            key_line = table.lines[key]
            if not isinstance(key, str) or key[:1].isdigit():
                self.version(key, key_line, f"broken: {key}")
            else:
                self.specifier(key, key_line, f"broken: {key!r}")
            reason, until = self.acknowledgement_value(value, key_line, str(key))
            acks.append(Acknowledgement(str(key), reason, key_line, until))
        return tuple(acks)

    def acknowledgement_value(
        self, value: Any, line: int, key: str
    ) -> tuple[str, datetime.date | None]:
        if isinstance(value, str) and value.strip():
            return value, None
        if not isinstance(value, yamlmarks.MarkedDict):
            raise self.fail(line, f"broken: {key}: must be a reason, or {{reason, until_date}}")
        self.unknown_keys(value, ACK_KEYS, f"broken: {key}")
        reason = self.string(value, "reason", required=True)
        if not reason or not reason.strip():
            raise self.fail(value.lines["reason"], f"broken: {key}: reason is empty")
        until = value.get("until_date")
        if until is None:
            return reason, None
        if isinstance(until, str):
            try:
                until = datetime.date.fromisoformat(until)
            except ValueError:
                until = None
        if not isinstance(until, datetime.date) or isinstance(until, datetime.datetime):
            raise self.fail(
                value.lines["until_date"],
                f"broken: {key}: until_date must be a date such as 2027-03-01",
            )
        return reason, until

    def gate(self, data: yamlmarks.MarkedDict) -> SpecifierSet | None:
        parts = []
        bounds = {}
        for key, op in (("since", ">="), ("until", "<")):
            if key in data:
                bounds[key] = self.version(data[key], data.lines[key], key)
                parts.append(f"{op}{bounds[key]}")
        if len(bounds) == 2 and bounds["since"] >= bounds["until"]:
            raise self.fail(
                data.lines["until"],
                f"until: {data['until']} is not after since: {data['since']}; "
                "the check could never run",
            )
        if "versions" in data:
            spec = self.specifier(data["versions"], data.lines["versions"], "versions")
            parts.append(str(spec))
        return SpecifierSet(",".join(p for p in parts if p)) if parts else None

    def alternatives(self, data: yamlmarks.MarkedDict) -> tuple[Contract, ...]:
        items = data["any_of"]
        line = data.lines["any_of"]
        if not isinstance(items, list) or len(items) < 2:
            raise self.fail(line, "any_of: must be a list of at least two alternatives")
        extra = [key for key in CONTRACT_KEYS if key in data and key != "module"]
        if extra:
            raise self.fail(
                data.lines[extra[0]],
                f"{extra[0]}: put it inside the any_of alternatives (only `module` is shared)",
            )
        module = self.string(data, "module", pattern=DOTTED_NAME)
        contracts = []
        for i, item in enumerate(items):
            item_line = yamlmarks.line_of(items, i, line)
            if not isinstance(item, yamlmarks.MarkedDict):
                raise self.fail(item_line, f"any_of[{i}]: must be a mapping")
            self.unknown_keys(item, CONTRACT_KEYS, "an any_of alternative")
            contracts.append(self.contract(item, inherited_module=module))
        return tuple(contracts)

    def contract(self, data: yamlmarks.MarkedDict, inherited_module: str | None) -> Contract:
        module = self.string(data, "module", pattern=DOTTED_NAME) or inherited_module
        if module is None:
            raise self.fail(data.line, "module: required key is missing")
        subjects = [key for key in SUBJECT_KEYS if key in data]
        if len(subjects) > 1:
            raise self.fail(
                data.lines[subjects[1]],
                f"{subjects[1]}: a check has one subject; {' and '.join(subjects)} both given",
            )
        symbol = self.string(data, "symbol", pattern=_NAME)
        class_ = self.string(data, "class", pattern=_NAME)
        function = self.function_name(data)
        lists = {key: self.strings(data, key) for key in LIST_KEYS}
        for key, needs, present in (
            ("methods", "class", class_),
            ("bases", "class", class_),
            ("attributes", "class", class_),
            ("assignable", "class", class_),
            ("no_methods_beyond", "class", class_),
            ("named", "function", function),
            ("params", "function", function),
            ("accepts", "function", function),
            ("globals_given", "globals_bound", data.get("globals_bound") or None),
        ):
            if lists[key] and present is None:
                raise self.fail(data.lines[key], f"{key}: needs `{needs}` in the same check")
        for key in (
            "methods",
            "attributes",
            "assignable",
            "no_methods_beyond",
            "params",
            "accepts",
            "named",
            "globals_given",
        ):
            for name in lists[key]:
                if not _NAME.fullmatch(name):
                    raise self.fail(data.lines[key], f"{key}: {name!r} is not a name")
        patterns = []
        for regex in lists["matches"]:
            try:
                patterns.append(re.compile(regex, re.MULTILINE))
            except re.error as exc:
                raise self.fail(
                    data.lines["matches"], f"matches: bad regex {regex!r}: {exc}"
                ) from None
        return Contract(
            module=module,
            subject=_subject(symbol, class_, function),
            methods=lists["methods"],
            bases=lists["bases"],
            attributes=lists["attributes"],
            assignable=lists["assignable"],
            no_methods_beyond=lists["no_methods_beyond"] if "no_methods_beyond" in data else None,
            params=lists["params"],
            accepts=lists["accepts"],
            named=lists["named"],
            signature=self.signature(data, function),
            call=self.call(data, function),
            own=self.own(data, class_, function),
            contains=lists["contains"],
            count=self.count(data, lists["contains"]),
            matches=tuple(patterns),
            not_contains=lists["not_contains"],
            globals_bound=self.globals_bound(data, function),
            globals_given=lists["globals_given"],
        )

    def signature(self, data: yamlmarks.MarkedDict, function: str | None) -> Signature | None:
        text = self.string(data, "signature")
        if text is None:
            return None
        line = data.lines["signature"]
        if function is None:
            raise self.fail(line, "signature: needs `function` in the same check")
        if not text.strip().startswith("("):
            raise self.fail(
                line, f"signature: {text!r} must start with '(', e.g. '(self, x, *, y=None)'"
            )
        try:
            params, returns = parse_signature(text)
        except (SyntaxError, ValueError, RecursionError) as exc:
            why = getattr(exc, "msg", None) or str(exc)
            raise self.fail(
                line, f"signature: {text!r} is not a Python signature ({why})"
            ) from None
        return Signature(text.strip(), params, returns)

    def count(self, data: yamlmarks.MarkedDict, contains: tuple[str, ...]) -> int | None:
        """`count: N`: each `contains` text occurs exactly N times (a `str.replace` anchor)."""
        if "count" not in data:
            return None
        value, line = data["count"], data.lines["count"]
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise self.fail(line, f"count: must be a count (1 or more), not {value!r}")
        if not contains:
            raise self.fail(line, "count: needs `contains` in the same check")
        return value

    def call(self, data: yamlmarks.MarkedDict, function: str | None) -> CallShape | None:
        """`call: {args: N, keywords: [a, b]}`: a call of that shape must bind."""
        if "call" not in data:
            return None
        value, line = data["call"], data.lines["call"]
        if function is None:
            raise self.fail(line, "call: needs `function` in the same check")
        if not isinstance(value, yamlmarks.MarkedDict):
            raise self.fail(
                line,
                f"call: must be a mapping such as {{args: 1, keywords: [a]}}, not {_kind(value)}",
            )
        self.unknown_keys(value, CALL_KEYS, "call")
        args = value.get("args", 0)
        if not isinstance(args, int) or isinstance(args, bool) or args < 0:
            raise self.fail(
                value.lines.get("args", line),
                f"call: args: must be a count (0 or more), not {args!r}",
            )
        keywords = self.strings(value, "keywords")
        for name in keywords:
            if not _NAME.fullmatch(name):
                raise self.fail(value.lines["keywords"], f"call: keywords: {name!r} is not a name")
        if len(set(keywords)) != len(keywords):
            raise self.fail(value.lines["keywords"], "call: keywords: a keyword is given twice")
        return CallShape(args, keywords)

    def own(self, data: yamlmarks.MarkedDict, class_: str | None, function: str | None) -> bool:
        if "own" not in data:
            return False
        line = data.lines["own"]
        if not isinstance(data["own"], bool):
            raise self.fail(line, f"own: must be true or false, not {_kind(data['own'])}")
        if class_ is None and (function is None or "." not in function):
            raise self.fail(
                line, "own: needs `class` (with methods or attributes) or `function: Class.method`"
            )
        return data["own"]

    def globals_bound(self, data: yamlmarks.MarkedDict, function: str | None) -> bool:
        """`globals_bound: true`: the function's source compiles in `module`'s namespace."""
        value = data.get("globals_bound", False)
        if not isinstance(value, bool):
            raise self.fail(
                data.lines["globals_bound"],
                f"globals_bound: must be true or false, not {_kind(value)}",
            )
        if "globals_bound" in data and function is None:
            raise self.fail(
                data.lines["globals_bound"], "globals_bound: needs `function` in the same check"
            )
        return value

    def function_name(self, data: yamlmarks.MarkedDict) -> str | None:
        name = self.string(data, "function")
        if name is not None:
            parts = name.split(".")
            if len(parts) > 2 or not all(_NAME.fullmatch(p) for p in parts):
                raise self.fail(
                    data.lines["function"], f"function: {name!r} must be NAME or Class.method"
                )
        return name


def _subject(symbol: str | None, class_: str | None, function: str | None) -> Subject | None:
    """The one subject given (the reader has refused two)."""
    if symbol is not None:
        return SymbolSubject(symbol)
    if class_ is not None:
        return ClassSubject(class_)
    return None if function is None else FunctionSubject(function)


def _kind(value: Any) -> str:
    kinds = ((bool, "a boolean"), (dict, "a mapping"), (list, "a list"), (str, "a string"))
    for typ, name in (*kinds, (int, "a number"), (float, "a number")):
        if isinstance(value, typ):
            return name
    return "nothing" if value is None else type(value).__name__
