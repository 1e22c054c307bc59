"""Verdicts remembered per release file, so a warm run answers every check on a release it has
judged before without opening the release at all (no listing, no member, no index is loaded).

What a check's contract concludes (whether it holds, and its detail) depends only on the
contract, the release (its files and version) and the code that judges (canary.cache.fingerprint's
JUDGING_CODE: never a report's or a front end's, so no format and no upgrade of a renderer
changes what is remembered). One cache entry per release file (keyed by project, file name, the
index's sha256 and that code's fingerprint) maps each contract's fingerprint to that verdict; it
is verified like every other entry. Gates, known-broken versions
and severity are applied afresh on every run; errors (a source or parse fault) are never
remembered.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections.abc import Callable, Iterable
from typing import Any

from packaging.version import Version

from canary.cache.fingerprint import JUDGING_CODE, code_fingerprint
from canary.cache.store import Cache
from canary.engine.contracts import Verdict, hints_on
from canary.matrix.model import Check
from canary.sources.tree import SourceError

_KIND = "verdict"
#: after a check's key: a failure judged without its hints (only its status is whole)
_BARE = "?"


def _plain(value: Any) -> Any:
    """A JSON-able form that differs whenever the value does (patterns by source and flags)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
        return [type(value).__name__, fields]
    if isinstance(value, re.Pattern):
        return ["re", value.pattern, value.flags]
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return [[_plain(k), _plain(v)] for k, v in value.items()]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return [type(value).__name__, str(value)]


#: id(check) -> (check, key): a Check's own hash and equality walk every field (specifier
#: sets canonicalize themselves each time), which cost a warm run more than its verdicts did;
#: the check is held so its id is never reused
_keys: dict[int, tuple[Check, str]] = {}


def check_key(check: Check) -> str:
    """What a check's verdict depends on: its contract, or its alternatives. Its id, why, gate,
    severity and acknowledgements are applied afresh on every run (canary.engine.judge), and
    its lines move whenever a line above it is edited: keying by them made a maintainer's
    first review of init's matrices (a comment, an `ignore:` entry, a check deleted) throw
    away the verdicts of every check below the edit, on every release (issue 51)."""
    known = _keys.get(id(check))
    if known is not None and known[0] is check:
        return known[1]
    plain = _plain([check.contract, check.any_of])
    key = hashlib.sha256(json.dumps(plain, sort_keys=True).encode()).hexdigest()[:32]
    _keys[id(check)] = (check, key)
    return key


def _is_verdict(value: object) -> bool:
    """[holds, detail, undecided, runtime] as `Verdicts.verdict` writes it."""
    return (
        isinstance(value, list)
        and len(value) == 4
        and isinstance(value[0], bool)
        and isinstance(value[1], str)
        and isinstance(value[2], bool)
        and isinstance(value[3], bool)
    )


class Verdicts:
    """The remembered details of one release file, and the ones this run adds."""

    def __init__(self, cache: Cache, release: str) -> None:
        self.cache = cache
        self.release = release
        self.key = f"{release}@{code_fingerprint(JUDGING_CODE)}"
        self._known = self._read()
        self._new: dict[str, list[Any]] = {}

    def _read(self) -> dict[str, list[Any]]:
        data = self.cache.load_json(_KIND, self.key)
        if not isinstance(data, dict) or not all(_is_verdict(v) for v in data.values()):
            return {}
        return data

    def covers(self, checks: Iterable[Check], version: Version, hints: bool = True) -> bool:
        """Whether every check that `version` is not gated out of is answered without reading
        the release (without `hints`: for its status alone)."""
        return all(self._known_as(check_key(c), hints) or c.gated_out(version) for c in checks)

    def verdict(self, check: Check, evaluate: Callable[[], Verdict]) -> Verdict:
        """The remembered verdict of `check`, else `evaluate()` (remembered unless it raises).

        Within contracts.without_hints, `evaluate` may leave a failure's "did you mean" hints
        out: such a failure is remembered apart (`_BARE`), for callers that want a status only."""
        key, hints = check_key(check), hints_on()
        known = self._known_as(key, hints)
        if known is not None:
            holds, detail, undecided, runtime = known
            return Verdict(holds, detail, undecided, runtime)
        verdict = evaluate()
        said = [verdict.holds, verdict.detail, verdict.undecided, verdict.runtime]
        self._new[key if hints or verdict.holds else key + _BARE] = said
        return verdict

    def _known_as(self, key: str, hints: bool) -> list[Any] | None:
        """The remembered [holds, detail, undecided, runtime] of a check's key; without
        `hints`, a failure remembered without them too."""
        found = self._known.get(key)
        return found if found is not None or hints else self._known.get(key + _BARE)

    def save(self) -> None:
        """Merge what this run learned into the entry (other processes may have added some)."""
        if not self._new:
            return
        try:
            # the release file's own lock, its archive's (never held while judging): a cold run
            # creates a file per lock, and one per release is enough
            with self.cache.lock(self.release):
                self._known = {**self._read(), **self._known, **self._new}
                self.cache.store(_KIND, self.key, json.dumps(self._known).encode())
        except SourceError:
            return  # a lock held too long only costs judging again next time
        self._new = {}
