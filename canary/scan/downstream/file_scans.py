"""What scanning each downstream file found, remembered in canary's cache, so scanning a package
again parses only what changed.

A file's first pass (what it passes to the package's functions) depends on its bytes, the
upstreams scanned, the downstream's own names and the registries the package declares; its
second pass (its findings) on those, its name, and what the first passes of all files concluded
about the functions it defines. Entries are keyed by all of that and by the fingerprint of scan's
code, and verified like every cache entry: a damaged or foreign one is scanned again, never
believed.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from canary.cache.fingerprint import code_fingerprint
from canary.cache.store import Cache
from canary.scan.downstream.callsites import CallSites
from canary.scan.downstream.findings import Role, Use
from canary.scan.downstream.imports import Ref
from canary.scan.downstream.spelled import NamesIn

_KIND = "scan"


class FileScans:
    """The first and second pass of each file, loaded from and kept in `cache` (None: none)."""

    def __init__(
        self,
        cache: Cache | None,
        upstreams: frozenset[str],
        own: frozenset[str],
        registries: dict[str, str],
    ) -> None:
        self.cache = cache
        self.registries = registries
        self._context = [sorted(upstreams), sorted(own), sorted(registries.items())]

    def _key(self, *parts: Any) -> str:
        plain = [code_fingerprint(("scan",)), self._context, *parts]
        return hashlib.sha256(json.dumps(plain).encode()).hexdigest()

    def _load(self, key: str) -> Any:
        return None if self.cache is None else self.cache.load_json(_KIND, key)

    def _keep(self, key: str, value: Any) -> None:
        if self.cache is not None:
            self.cache.store(_KIND, key, json.dumps(value).encode())

    def first(
        self, data: bytes, given: list[Any] | None = None, names_in: NamesIn | None = None
    ) -> list[list[Any]] | None:
        """The remembered events of a file's first pass (CallSites.events), given what a
        previous round found its functions passed; None when an upstream package's modules it
        listed (`names_in`) are not what they were."""
        events = self._load(self._key("first", _digest(data), given))
        if not isinstance(events, list) or not all(_is_event(e) for e in events):
            return None
        try:
            CallSites().replay(events)  # each event well formed
            listed = [(tuple(e[1]), e[2]) for e in events if e[0] == "lists"]
        except (TypeError, ValueError, IndexError):
            return None
        for parts, then in listed:
            now = names_in(parts) if names_in else None
            if then != (None if now is None else list(now)):
                return None
        return events

    def keep_first(
        self, data: bytes, events: list[list[Any]], given: list[Any] | None = None
    ) -> None:
        self._keep(self._key("first", _digest(data), given), events)

    def second(self, name: str, data: bytes, state: list[Any]) -> tuple[list[Use], set[str]] | None:
        """The remembered findings and proven modules of a file's second pass, given `state`
        (CallSites.state of the functions it defines)."""
        found = self._load(self._key("second", name, _digest(data), state))
        try:
            findings, modules = found
            return [_finding(name, row) for row in findings], {str(m) for m in modules}
        except (TypeError, ValueError):
            return None

    def keep_second(
        self, name: str, data: bytes, state: list[Any], findings: list[Use], modules: set[str]
    ) -> None:
        rows = [_row(f) for f in findings]
        self._keep(self._key("second", name, _digest(data), state), [rows, sorted(modules)])


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


_EVENT_SIZES = {"define": 2, "register": 3, "record": 5, "returns": 6, "varies": 5, "lists": 3}
_EVENT_SIZES |= {"yields": 3, "compares": 4}


def _is_event(event: Any) -> bool:
    return (
        isinstance(event, list)
        and bool(event)
        and isinstance(event[0], str)
        and _EVENT_SIZES.get(event[0]) == len(event)
    )


def _row(finding: Use) -> list[Any]:
    return [
        finding.role.value,
        list(finding.ref.parts),
        finding.ref.known,
        finding.line,
        list(finding.items),
        finding.tolerated,
        finding.gate,
        [[list(ref.parts), ref.known] for ref in finding.alternatives],
        finding.listed,
    ]


def _finding(file: str, row: list[Any]) -> Use:
    """A finding from its stored row; ValueError/TypeError when the row is malformed."""
    role, parts, known, line, items, tolerated, gate, alternatives, listed = row
    names = [p for alternative in alternatives for p in alternative[0]]
    if not all(isinstance(p, str) for p in (*parts, *items, gate, *names)):
        raise TypeError("not a finding")
    return Use(
        Role(role),
        Ref(tuple(parts), int(known)),
        file,
        int(line),
        tuple(items),
        bool(tolerated),
        gate,
        tuple(Ref(tuple(names), int(known)) for names, known in alternatives),
        bool(listed),
    )
