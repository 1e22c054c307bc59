"""The visitor's reading of version tests: FileScanner's part that gates what follows them.

A mixin, so that the visitor (patterns.py) keeps one concern per module: here, what a version
test does to the code around it beyond its own branches (version_tests.py spells the test out,
guards.py reads it): an `assert` of one gates the rest of its block, as a `raise`, `continue` or
`break` under one does; a name each branch binds to another upstream object is a use of each
where its branch runs; and the package's helpers returning such a test are learnt.
"""

from __future__ import annotations

import ast

from canary.scan.downstream.callsites import CallSites
from canary.scan.downstream.guards import Guard, conditions
from canary.scan.downstream.imports import Ref, Scopes
from canary.scan.downstream.recorder import Recorder
from canary.scan.downstream.version_tests import helper_comparison, spelled_out

# statements after which the rest of the block does not run (a version test above gates it)
EXITS = (ast.Raise, ast.Continue, ast.Break)


class VersionVisits(ast.NodeVisitor):
    """What FileScanner does with version tests (it provides these attributes)."""

    record: Recorder
    scopes: Scopes
    calls: CallSites

    def _upstream(self, expr: ast.expr) -> Ref | None:
        raise NotImplementedError  # FileScanner's

    def _spelled(self, test: ast.expr) -> ast.expr:
        """`test` as the version comparison its flags and helpers stand for (version_tests)."""
        return spelled_out(test, self.scopes.lookup, self.calls.comparison)

    def visit_Assert(self, node: ast.Assert) -> None:
        """`assert Version(trl.__version__) >= Version("0.20")` raises on every other release:
        the rest of the block runs only where it holds."""
        self.generic_visit(node)
        body, _ = conditions(self._spelled(node.test), self._upstream)
        self.record.guards += [g for g in body if g.kind == "gate"]

    def _after_branches(
        self,
        node: ast.If,
        binds: tuple[dict[str, object | None], dict[str, object | None]],
        guards: tuple[list[Guard], list[Guard]],
    ) -> None:
        """After both branches of `node` (what each bound, the guards of each): a body that
        gives up with no else guards the rest of the block, `if not hasattr(X, "n"): return`
        with all the else's guards, `if v < X: raise` (or continue, break) with its gates."""
        if node.body and not node.orelse and isinstance(node.body[-1], ast.Return):
            self.record.guards += guards[1]
        elif node.body and not node.orelse and isinstance(node.body[-1], EXITS):
            self.record.guards += [g for g in guards[1] if g.kind == "gate"]
        self._bound_apart(binds, guards)

    def _bound_apart(
        self,
        binds: tuple[dict[str, object | None], dict[str, object | None]],
        guards: tuple[list[Guard], list[Guard]],
    ) -> None:
        """A name each branch of a version test binds to another upstream object (`from
        a import X` on new releases, `from b import X` on old ones): a later use of it is a
        use of each, on the releases of its branch (Recorder.bound_apart)."""
        gates = [tuple(g for g in side if g.kind == "gate") for side in guards]
        if not all(gates):
            return
        for name, first in binds[0].items():
            other = binds[1].get(name)
            if isinstance(first, Ref) and isinstance(other, Ref) and first != other:
                self.record.bound_apart(((first, gates[0]), (other, gates[1])))

    def _learn_comparison(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        """In the first pass, a def returning a version test is one the package's calls of it
        stand for (CallSites.comparison)."""
        if not self.calls.frozen:
            found = helper_comparison(node, self._upstream, self.scopes.lookup)
            if found is not None:
                self.calls.compares(node.name, *found)
