"""What the visitor found in one file, each use under the guards it runs under.

A use inside `try: ... except ImportError` is tolerated, one under a version comparison is
gated, a patch under `if not hasattr(X, "n")` is a shim and no contract; a text sought in an
upstream source is recorded only when it says something about upstream.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from contextlib import contextmanager

from canary.scan.downstream.findings import UNKNOWN, Role, Use, wild
from canary.scan.downstream.guards import Guard
from canary.scan.downstream.imports import Ref
from canary.scan.downstream.ranges import conjoin
from canary.scan.downstream.text_calls import Sought
from canary.scan.downstream.text_flow import Source

#: shortest replacement (whitespace aside) whose repetition marks alternative spellings; an
#: empty one deletes several texts, each of which must be there
_SAME_REPLACEMENT = 4


# uses that hold where the object they name is either of a try's two bindings of it
_EITHER = (Role.ACCESS, Role.CALL, Role.KWARGS)


class Recorder:
    """Findings of `file`; `guards` are the conditions the statement being visited runs
    under; `own` the downstream's own top-level names, lowercase."""

    def __init__(self, file: str, own: frozenset[str]) -> None:
        self.file = file
        self.own = own
        self.findings: list[Use] = []
        self.guards: list[Guard] = []
        self.listed = False  # in a walk once per module a listing names (Use.listed)
        self.within: ast.FunctionDef | ast.AsyncFunctionDef | None = None  # the def walked
        # in the scope being visited: what the client does without (absence.py), and the
        # names it reads with a default, which it injects when they are missing
        self.done_without: list[Ref] = []
        self.probed: list[Ref] = []
        # a path a name has after a try's body or its handler -> (the body's, the handler's)
        self._either: dict[tuple[str, ...], tuple[Ref, Ref]] = {}
        # a path a name has after either branch of a version test -> each branch's, gated
        self._apart: dict[tuple[str, ...], tuple[tuple[Ref, tuple[Guard, ...]], ...]] = {}
        # (source, text) the client tested present around the statement (`if "a" in src:`)
        self.present: list[tuple[Ref, str]] = []
        # (source, replacement stripped) -> the first text a `.replace` swapped for it
        self._replaced: dict[tuple[Ref, str | None], Use] = {}
        # source -> the text its latest `.replace` sought; `_unmatched` the sources whose
        # rewrite the client then compared with the original (`if new == src:`): the next
        # `.replace` on it is a fallback, for releases where the first text is missing
        self._last_replaced: dict[Ref, Use] = {}
        # (source, template name) -> the first text or regex a rewrite filling it in sought
        self._templates: dict[tuple[Ref, str], Use] = {}
        self._unmatched: dict[Ref, Use] = {}

    @contextmanager
    def listing(self, listed: bool) -> Iterator[None]:
        """Within: findings are of a walk once per module a listing names (Use.listed)."""
        outer, self.listed = self.listed, self.listed or listed
        try:
            yield
        finally:
            self.listed = outer

    @contextmanager
    def knowing(self, present: list[tuple[Ref, str]]) -> Iterator[None]:
        """Within: these texts are known to be in their sources (the client tested them)."""
        marks = len(self.present)
        self.present += present
        try:
            yield
        finally:
            del self.present[marks:]

    def rebind(self, tried: dict[str, object | None], handled: dict[str, object | None]) -> None:
        """Names a try body and its handler bind to different upstream objects (`try: from
        transformers import AutoModelForImageTextToText as Auto` / `except: from transformers
        import AutoModelForVision2Seq as Auto`): a later use of either is of one or the other,
        checked as the try's import is, the body's first."""
        for name, first in tried.items():
            other = handled.get(name)
            if isinstance(first, Ref) and isinstance(other, Ref) and first != other:
                self._either[first.parts] = self._either[other.parts] = (first, other)

    def bound_apart(self, branches: tuple[tuple[Ref, tuple[Guard, ...]], ...]) -> None:
        """Each branch of a version test bound a name to another object (`if new: from a
        import X` / `else: from b import X`): a later use of either path is a use of each,
        under the gates of its branch, a contract only where that branch ran."""
        for ref, _ in branches:
            self._apart[ref.parts] = branches

    def _each_branch(self, ref: Ref) -> list[tuple[Ref, tuple[Guard, ...]]]:
        """`ref` as each branch of a version test bound the name it starts with, and the
        gates of that branch (bound_apart); none when no such branch bound it."""
        for at in range(len(ref.parts), 0, -1):
            branches = self._apart.get(ref.parts[:at])
            if branches is not None:
                rest = ref.parts[at:]
                return [(Ref((*r.parts, *rest), r.known), gates) for r, gates in branches]
        return []

    def _either_way(self, ref: Ref) -> tuple[Ref, tuple[Ref, ...]]:
        """`ref` as the try body bound the name it starts with, and as the handler did."""
        for at in range(len(ref.parts), 0, -1):
            pair = self._either.get(ref.parts[:at])
            if pair is not None:
                rest = ref.parts[at:]
                first, other = (Ref((*r.parts, *rest), r.known) for r in pair)
                return first, (other,)
        return ref, ()

    def tolerates(self, ref: Ref) -> bool:
        """Whether the guards in force tolerate a use of `ref` failing."""
        return any(g.kind == "tolerates" and g.covers(ref) for g in self.guards)

    def installed(self, ref: Ref, node: ast.AST, params: tuple[str, ...], loose: bool) -> None:
        """A call of the package's installer patches `ref` with a replacement taking `params`
        (`loose`: it takes anything as well)."""
        self.add(Role.PATCH, ref, node)
        self.add(Role.INSTALLED, ref, node, params, tolerated=loose)

    def compiled(self, pairs: list[tuple[str, str, tuple[str, ...]]], node: ast.AST) -> None:
        """Each (module, function, names given) whose source `node` compiles with the
        module's names (namespaces.py)."""
        for module, function, given in pairs:
            ref = Ref((*module.split("."), *function.split(".")), module.count(".") + 1)
            self.add(Role.GLOBALS, ref, node, given)

    def add(
        self,
        role: Role,
        ref: Ref,
        node: ast.AST,
        items: tuple[str, ...] = (),
        tolerated: bool = False,
        alternatives: tuple[Ref, ...] = (),
        extra: tuple[Guard, ...] = (),
    ) -> None:
        """Record a use under the guards in force and `extra` ones (what a key of spread
        keywords was put in under); an import with a fallback (`alternatives`) is tolerated
        exactly as `tolerated` says: the guards were weighed when the two were paired."""
        if wild(ref) and role not in (Role.CONTAINS, Role.UNPLACED):
            return  # a use of a pattern names nothing to check; what a rewrite seeks does
        if not alternatives and (branches := self._each_branch(ref)):
            apart, self._apart = self._apart, {}
            try:
                for each, gates in branches:
                    self.add(role, each, node, items, tolerated, (), (*extra, *gates))
            finally:
                self._apart = apart
            return
        if role in _EITHER and not alternatives:
            ref, alternatives = self._either_way(ref)
        guards = [g for g in (*self.guards, *extra) if g.covers(ref)]
        if role is Role.PATCH and (any(g.kind == "shim" for g in guards) or ref in self.probed):
            return  # `if not hasattr(X, "n"): X.n = ...` adds what upstream lacks
        if not (role is Role.IMPORT and alternatives):
            tolerated = (
                tolerated
                or role is Role.GUARD
                or any(g.kind == "tolerates" for g in guards)
                or (role is not Role.INSTALLED and self._done_without(ref))
            )
        gate = conjoin(g.spec for g in guards if g.kind == "gate")
        line = getattr(node, "lineno", 0)
        finding = Use(role, ref, self.file, line, items, tolerated, gate, alternatives, self.listed)
        self.findings.append(finding)

    def _done_without(self, ref: Ref) -> bool:
        """Whether the client does without `ref` (absence.py): its absence is tolerated, which
        says nothing of the parameters a replacement installed over it must match."""
        return any(ref.parts[: len(r.parts)] == r.parts for r in self.done_without)

    def seeks(self, s: Sought) -> None:
        """Record what a call seeks in a source: its texts, or a match of its regex."""
        if s.regex is None:
            self.expects_texts(s.source, s.texts, s.node, s.replacement, s.replacing, s.template)
        else:
            self.expects_match(s.source, s.regex, s.node, s.template)

    def expects_texts(
        self,
        source: Source | None,
        texts: tuple[str, ...],
        node: ast.AST,
        replacement: str | None = None,
        replacing: bool = False,
        template: str | None = None,
    ) -> None:
        """Record the texts `source` must hold; two `.replace` calls putting the same text
        (whitespace at its ends aside) in place of different ones (`"is_torch_tpu_available()"`
        and `"is_torch_xla_available()"` by `"False"`) handle two spellings of one thing:
        either will do, neither is required.
        So do a `.replace` and the fallback the client runs when the first changed nothing
        (`new = src.replace(a, x)`, `if new == src: new = src.replace(b, y)`), and two
        rewrites putting in one `template` filled differently. A `.replace` putting back the
        text it seeks changes nothing and needs nothing."""
        if source is None:
            return
        if source.ref == UNKNOWN:  # each text sought anywhere in the upstream (anywhere.py)
            sought = [t for t in texts if source.expects(t) and not self._own_marker(t)]
            return self.unplaced(source, node, tuple(t for t in sought if t != replacement))
        if wild(source.ref) and not (replacing and texts):
            return self.unplaced(source, node)  # on a pattern, only a `.replace`'s text
        for literal in texts:
            if not source.expects(literal) or self._own_marker(literal) or literal == replacement:
                continue
            if (source.ref, literal) in self.present:
                continue  # the client just tested it is there
            if (replacing and self._falls_back(source.ref)) or self._refilled(source, template):
                continue
            key = (source.ref, replacement.strip() if replacement is not None else None)
            if replacement is not None and len(replacement.strip()) >= _SAME_REPLACEMENT:
                earlier = self._replaced.get(key)
                if earlier is not None:
                    if earlier in self.findings and earlier.items != (literal,):
                        self.findings.remove(earlier)
                    continue
            self.add(Role.CONTAINS, source.ref, node, (literal,), alternatives=source.others)
            self._filled_from(source, template)
            if replacement is not None:
                self._replaced.setdefault(key, self.findings[-1])
            if replacing:
                self._last_replaced[source.ref] = self.findings[-1]

    def compared(self, source: Source) -> None:
        """The client compared a rewrite of `source` with the original (`new != src`): it
        tells whether the latest `.replace` found its text, and falls back when it did not."""
        latest = self._last_replaced.pop(source.ref, None)
        if latest is not None:
            self._unmatched[source.ref] = latest

    def _falls_back(self, ref: Ref) -> bool:
        """Whether a `.replace` on `ref` is the fallback of one whose match the client
        tested: the texts are alternatives, so none is required (all are dropped, however
        long the chain of fallbacks)."""
        first = self._unmatched.pop(ref, None)
        if first is not None and first in self.findings:
            self.findings.remove(first)
        if first is not None:  # a next fallback, run when this one changed nothing too
            self._last_replaced[ref] = first
        return first is not None

    def expects_match(
        self, source: Source | None, regex: str | None, node: ast.AST, template: str | None = None
    ) -> None:
        if source and (source.ref == UNKNOWN or wild(source.ref)):
            return self.unplaced(source, node)
        if not (source and regex and source.expects_match(regex)) or self._own_marker(regex):
            return None
        if not self._refilled(source, template):
            self.add(Role.MATCHES, source.ref, node, (regex,), alternatives=source.others)
            self._filled_from(source, template)

    def _refilled(self, source: Source, template: str | None) -> bool:
        """Whether an earlier rewrite of `source` put in the same template: the two seek
        alternative spellings, so neither is required (the earlier is dropped)."""
        earlier = self._templates.get((source.ref, template)) if template else None
        if earlier is not None and earlier in self.findings:
            self.findings.remove(earlier)
        return earlier is not None

    def _filled_from(self, source: Source, template: str | None) -> None:
        if template:
            self._templates.setdefault((source.ref, template), self.findings[-1])

    def unplaced(self, source: Source, node: ast.AST, texts: tuple[str, ...] = ()) -> None:
        """A rewrite of a source scan cannot tell of what: the file's header lists its site,
        unless the `texts` it seeks are found on the upstream's newest release (anywhere.py)."""
        if not texts:
            self.add(Role.UNPLACED, source.ref, node)
        for text in texts:
            self.add(Role.UNPLACED, source.ref, node, (text,))

    def _own_marker(self, text: str) -> bool:
        """Text naming the downstream itself (`_mylib_patched`) is its marker, not upstream's."""
        lowered = text.lower()
        return any(name in lowered for name in self.own)
