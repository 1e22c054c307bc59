"""Verdicts reused across releases by what their judging read (issue 31, item 2).

A module file unchanged since another release is read again release after release, and so
are the checks that read it: about half of the judgings of the shipped matrices repeat one
already made on the same contents. A verdict is a function of its check, the modules its
judging looked up, and, for checks that bind keywords (`accepts`, `named`, `call`, where a
renaming decorator says since which version), the version. So each judging records the names
it looked up, in order, each with its print (the file it came from and the digest of its
bytes, or how an alias search failed to find it: canary.engine.loader), and the verdict is
kept in a tree keyed by those prints. A later release walks the tree, looking each name up
as the judging would, and takes the verdict where every print matches; else the check is
judged and its reads added.

A judging that read anything a print does not cover (the version's module list, for a
"did you mean" hint or a lazily exported folder) is never reused, nor one a fault had a part
in. The judging recorded sees every lookup: it gets a class hierarchy of its own, so no base
resolved for an earlier check hides a module read to resolve it, and the namespace asks for
the module list each time it reads it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from packaging.version import Version

from canary.engine.contracts import Verdict, hints_on
from canary.engine.loader import ModuleLoader, Print, Reads
from canary.matrix.model import Check

#: a judging that looked up more names than this is judged again, not kept
_MOST_NAMES = 64


class _Node:
    """After the prints read so far: the name the judging looks up next and where each of its
    prints leads, or the verdict it gave."""

    __slots__ = ("asks", "then", "verdict")

    def __init__(self) -> None:
        self.asks: str | None = None
        self.then: dict[Print, _Node] = {}
        self.verdict: Verdict | None = None


class VerdictReuse:
    """The verdicts of one run, for every check and release it judges (kept in memory)."""

    def __init__(self) -> None:
        # id(check) -> (check, version or None) -> tree; the check is held so its id stays its
        self._roots: dict[int, tuple[Check, dict[Version | None, _Node]]] = {}
        self._spoiled: set[int] = set()  # checks whose judging was not a function of its reads
        self._lock = threading.Lock()
        self.reused = 0
        self.judged = 0

    def verdict(
        self,
        check: Check,
        version: Version | None,
        loader: ModuleLoader,
        judge: Callable[[], Verdict],
    ) -> Verdict:
        """The check's verdict on the version `loader` reads: one judged on the same reads, else
        `judge()`'s (which must look modules up through `loader` only). A failure judged
        without its hints (contracts.without_hints) is not kept: a later judging would show it."""
        if id(check) in self._spoiled:
            return judge()
        root = self._root(check, version)
        found = _walk(root, loader)
        if found is not None:
            self.reused += 1
            return found
        reads = loader.reads = Reads()
        try:
            verdict = judge()
        finally:
            loader.reads = None
        self.judged += 1
        if not reads.opaque and len(reads.names) <= _MOST_NAMES and (verdict.holds or hints_on()):
            self._keep(check, root, reads.names, verdict)
        return verdict

    def _root(self, check: Check, version: Version | None) -> _Node:
        key = version if _binds_keywords(check) else None
        with self._lock:
            held = self._roots.setdefault(id(check), (check, {}))
            return held[1].setdefault(key, _Node())

    def _keep(
        self, check: Check, root: _Node, names: list[tuple[str, Print]], verdict: Verdict
    ) -> None:
        if any(print_ is None for _, print_ in names):
            return
        with self._lock:
            if id(check) in self._spoiled:
                return
            node = root
            for name, print_ in names:
                if node.verdict is not None or node.asks not in (None, name):
                    self._spoiled.add(id(check))  # the same reads asked for another name
                    return
                node.asks = name
                node = node.then.setdefault(print_, _Node())
            if node.asks is not None or node.verdict not in (None, verdict):
                self._spoiled.add(id(check))
                return
            node.verdict = verdict


def _walk(root: _Node, loader: ModuleLoader) -> Verdict | None:
    """The verdict kept for the reads `loader`'s version gives, or None."""
    node: _Node | None = root
    while node is not None and node.verdict is None:
        name = node.asks
        if name is None:
            return None
        print_ = loader.print_of(name)
        node = node.then.get(print_) if print_ is not None else None
    return node.verdict if node is not None else None


def _binds_keywords(check: Check) -> bool:
    """Whether the check's verdict may depend on the version: a keyword a renaming decorator
    maps is accepted or refused by version (canary.engine.calls)."""
    contracts = (check.contract,) if check.contract is not None else check.any_of
    return any(c.accepts or c.named or c.call is not None for c in contracts)
