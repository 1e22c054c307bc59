"""Find the uses of upstream objects in one downstream file: imports, patches, source rewrites.

The visitor: one pass over the AST in source order, tracking per scope which names are
upstream aliases and which hold (a rewrite of) an upstream object's source. What an
expression holds is text_flow's to evaluate, what a call seeks in a source text_calls', what
a node says by itself node_values'; this module walks and records.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping, Sequence
from functools import partial

from canary.scan.downstream.absence import done_without
from canary.scan.downstream.callsites import CallSites
from canary.scan.downstream.compiled import compiled_patterns
from canary.scan.downstream.findings import Role, Use
from canary.scan.downstream.folders import folder_rows
from canary.scan.downstream.guards import (
    Guard,
    conditions,
    presence_tests,
    required,
    tolerant_handlers,
    type_checking,
    unsought,
)
from canary.scan.downstream.imports import Ref, Scopes, bind_import, mock_patched, resolve
from canary.scan.downstream.installers import Replacements
from canary.scan.downstream.namespaces import compiled_in
from canary.scan.downstream.node_values import attribute_call, import_fallbacks, rewritten
from canary.scan.downstream.recorder import Recorder
from canary.scan.downstream.rewriters import registrations, rewriter_params
from canary.scan.downstream.self_attributes import HeldBySelf
from canary.scan.downstream.spelled import (
    Names,
    NamesIn,
    decided,
    paired_values,
    recording,
    walked_values,
)
from canary.scan.downstream.spread import Branches, call_uses, rekey
from canary.scan.downstream.spread import parameter as spread_parameter
from canary.scan.downstream.stale import needed
from canary.scan.downstream.subclasses import base_uses, replacement_uses
from canary.scan.downstream.text_calls import sought
from canary.scan.downstream.text_flow import (
    Pattern,
    Source,
    TextFlow,
    keep_known,
    rewriter_selection,
)
from canary.scan.downstream.version_visits import VersionVisits


class FileScanner(VersionVisits):
    """Collects Findings about `upstreams` from one parsed file."""

    def __init__(
        self,
        tree: ast.Module,
        file: str,
        upstreams: frozenset[str],
        calls: CallSites | None = None,
        own: frozenset[str] = frozenset(),
    ) -> None:
        self.record = Recorder(file, own)
        self.findings: list[Use] = self.record.findings  # the same list, filled as it walks
        self.calls = calls if calls is not None else CallSites()
        self.upstreams = upstreams
        self.scopes = Scopes()
        self._tree = tree
        self.rewriter: tuple[str, str, str] | None = None  # selector, source param, module
        self.within: ast.boolop | None = None  # the innermost `and`/`or` being visited
        self.modules: set[str] = set()  # dotted names the imports prove to be modules
        # `try: from a import X` / `except ImportError: from b import X`, by alias id: the first
        # import's fallback (and whether both may fail), and the fallbacks (in the first's check)
        self.fallbacks: dict[int, tuple[Ref, bool]] = {}
        self.fallen_back: set[int] = set()
        self.held_by_self = HeldBySelf(tree)
        self.absence_tests: set[int] = set()  # `"x" not in src` that seek nothing (guards.py)
        self.flow = TextFlow(self.scopes, self.calls, self._upstream)
        self.replacements = Replacements(tree)
        self.branches = Branches(self.scopes.lookup)  # which key reaches which callee (spread.py)

    def _upstream(self, expr: ast.expr) -> Ref | None:
        ref = resolve(expr, self.scopes) or self.held_by_self.resolve(expr, self.scopes)
        return ref if ref and ref.root in self.upstreams else None

    def _guarded(self, guards: list[Guard], body: Sequence[ast.AST]) -> None:
        """Visit `body` under these guards."""
        depth = len(self.record.guards)
        self.record.guards += guards
        for item in body:
            self.visit(item)
        del self.record.guards[depth:]

    def visit_Try(self, node: ast.Try) -> None:
        for primary, alias, ref, guarded in import_fallbacks(node):  # one of the two will do
            self.fallbacks[id(primary)] = (ref, guarded or self.record.tolerates(ref))
            self.fallen_back.add(id(alias))
        tolerant = [Guard("tolerates")] if tolerant_handlers(node) else []
        self._guarded(tolerant, node.body)
        after_body = dict(self.scopes.top())
        for handler in node.handlers:
            self._guarded(tolerant, handler.body)
        self.record.rebind(after_body, self.scopes.top())
        self._guarded([], node.orelse + node.finalbody)
        keep_known(self.scopes.top(), after_body)
        upstream = [ref for ref in done_without(node) if ref.root in self.upstreams]
        self.record.done_without += upstream

    visit_TryStar = visit_Try

    def visit_If(self, node: ast.If) -> None:
        """Both branches from the same bindings; what either binds to something known stays."""
        if type_checking(node.test):  # the body never runs: its imports are for annotations
            return self._guarded([], node.orelse)
        if (taken := decided(node.test, self.scopes.lookup, self.flow.names_in)) is not None:
            return self._guarded([], node.body if taken else node.orelse)  # by a walk's module
        known = _tested(node, self.flow)
        self.absence_tests.update(unsought(node))
        self.visit(node.test)
        body, orelse = conditions(self._spelled(node.test), self._upstream)
        body = needed(node, body, self._upstream, self.scopes.lookup)
        orelse += [Guard("tolerates")] if known else []  # the fallback where a text is missing
        top = self.scopes.top()
        before = dict(top)
        selected = rewriter_selection(node.test, self.rewriter)
        if selected:  # the rewriter acts only where upstream has one of the methods
            source = selected[1][0]
            self.record.add(Role.ACCESS, source.ref, node.test, alternatives=source.others)
        if selected and selected[1][1]:
            self.scopes.bind(selected[0], selected[1][0])
        with self.record.knowing(known), self.branches.arm(node, 0):
            self._guarded(body, node.body)
        after_body = dict(top)
        top.clear()
        top.update(before)
        with self.branches.arm(node, 1):
            self._guarded(orelse, node.orelse)
        self._after_branches(node, (after_body, top), (body, orelse))
        keep_known(top, after_body)
        returns = bool(node.body) and isinstance(node.body[-1], ast.Return)
        if selected and not selected[1][1] and returns:
            self.scopes.bind(selected[0], selected[1][0])

    def visit_For(self, node: ast.For | ast.AsyncFor) -> None:
        """Loop variables bound to the strings they go through (text_flow.walked_rows)."""
        self.visit(node.iter)
        self.visit(node.target)
        bindings = self.flow.loop_bindings(node.target, node.iter)
        rows = self.flow.walked_rows(node, bindings)
        with self.record.listing(_listed(bindings)):
            for row in [*rows, bindings]:
                for name, value in row:
                    self.scopes.bind(name, value)
                if row is not bindings or not rows:
                    self._guarded([], node.body)
        self._guarded([], node.orelse)

    visit_AsyncFor = visit_For

    def _patch(self, target: Ref, value: ast.expr | None, node: ast.AST) -> None:
        self.record.add(Role.PATCH, target, node)
        if params := self.replacements.params(value, node, self.scopes.lookup):
            self.record.add(Role.WRAPPER, target, node, params)
        variants = self.replacements.variants(value, node, self.scopes.lookup) if value else []
        for use in replacement_uses(target, variants, node):
            self.record.add(use.role, use.ref, use.node, use.items)

    def _assign(self, target: ast.expr, value: ast.expr | None, node: ast.AST) -> None:
        if isinstance(target, ast.Name):
            bound = self.flow.binding_of(value, self.record.guards) if value else None
            self.scopes.bind(target.id, self.branches.bound(target.id, bound))
        elif isinstance(target, ast.Attribute) and (ref := self._upstream(target)):
            self._patch(ref, value, node)
        elif isinstance(target, ast.Tuple | ast.List):
            held = self.flow.returned(value) if value is not None else None
            starred = any(isinstance(e, ast.Starred) for e in target.elts)
            values = paired_values(target, value)  # `name, old = "train", "if x:"`
            for position, element in enumerate(target.elts):
                self._assign(element, values[position], node)
                if held and held[0] == position and not starred and isinstance(element, ast.Name):
                    self.scopes.bind(element.id, held[1])  # `src, fn = read(X)`
        else:
            self.visit(target)

    # --- bindings --------------------------------------------------------------------------

    def visit_Import(self, node: ast.Import | ast.ImportFrom) -> None:
        refs = bind_import(node, self.scopes)
        aliases = [alias for alias in node.names if alias.name != "*"] if refs else []
        for alias, ref in zip(aliases, refs, strict=True):
            if ref.root not in self.upstreams:
                continue
            self.modules.add(".".join(ref.parts[: ref.known]))
            if id(alias) in self.fallen_back:
                continue  # part of the check of the import it stands in for
            fallback, tolerated = self.fallbacks.get(id(alias), (None, False))
            others = (fallback,) if fallback else ()
            self.record.add(Role.IMPORT, ref, node, tolerated=tolerated, alternatives=others)

    visit_ImportFrom = visit_Import

    def visit_Assign(self, node: ast.Assign) -> None:
        self._registers(node)
        self.visit(node.value)
        for target in node.targets:
            self._assign(target, node.value, node)
        rekey(node, self.scopes, self.record.guards, tuple(self.branches.path))

    def visit_Delete(self, node: ast.Delete) -> None:
        rekey(node, self.scopes, self.record.guards)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value:
            self.visit(node.value)
        self._assign(node.target, node.value, node)

    def visit_Name(self, node: ast.Name) -> None:
        if not isinstance(node.ctx, ast.Load):
            self.scopes.bind(node.id, None)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for expr in (*node.decorator_list, *node.args.defaults, *node.args.kw_defaults):
            if expr:
                self.visit(expr)
        self.scopes.bind(node.name, None)
        self.calls.define(node.name)
        self.calls.learn(node, self._tree, partial(folder_rows, self))
        self._learn_comparison(node)
        outer, self.rewriter = self.rewriter, rewriter_params(node, self.calls.rewritten(node))
        for passed in _each_walk(node, self.calls, self.record, self.rewriter):
            self._in_scope(node.body, node.args, passed)
        self.rewriter = outer

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self._in_scope([node.body], node.args)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for expr in (*node.decorator_list, *node.bases, *(k.value for k in node.keywords)):
            self.visit(expr)
        for use in base_uses(node, [self._upstream(base) for base in node.bases]):
            self.record.add(use.role, use.ref, use.node, use.items)
        self.scopes.bind(node.name, None)
        self.flow.classes.append((node.name, compiled_patterns(node.body)))
        self._in_scope(node.body, None, is_class=True)
        self.flow.classes.pop()

    def _in_scope(
        self,
        body: Sequence[ast.AST],
        args: ast.arguments | None,
        passed: Mapping[str, object] | None = None,
        is_class: bool = False,
    ) -> None:
        names: list[str] = []
        if args:
            every = (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg)
            names = [a.arg for a in every if a]
        self.scopes.push(names, is_class)
        if keywords := spread_parameter(args):
            self.scopes.bind(*keywords)
        for name, ref in (passed or {}).items():
            self.scopes.bind(name, ref)
        record = self.record
        marks = len(record.done_without), len(record.probed)
        self._guarded([], body)
        del record.done_without[marks[0] :], record.probed[marks[1] :]
        self.scopes.pop()

    # --- uses ------------------------------------------------------------------------------

    def visit_Attribute(self, node: ast.Attribute) -> None:
        ref = self._upstream(node) if isinstance(node.ctx, ast.Load) else None
        if ref:
            self.record.add(self.held_by_self.role(node), ref, node)
        else:
            self.generic_visit(node)

    def visit_Compare(self, node: ast.Compare) -> None:
        left = node.left
        for op, right in zip(node.ops, node.comparators, strict=True):
            sought = isinstance(op, ast.In | ast.NotIn) and not _alternative(op, self.within)
            if sought and id(node) not in self.absence_tests:
                self.record.expects_texts(self.flow.source_of(right), self.flow.texts(left), left)
            if rewrite := self.flow.rewrite_compared(op, left, right):  # `if new != src:`
                self.record.compared(rewrite)
            left = right
        self.generic_visit(node)

    def visit_BoolOp(self, node: ast.BoolOp) -> None:
        """Each operand runs only when those before it did not decide: after `hasattr(X, "n")
        and ...`, the uses of `X.n` are as guarded as inside `if hasattr(X, "n"):`."""
        outer = self.within
        self.within = node.op
        depth = len(self.record.guards)
        for value in node.values:
            self.visit(value)
            body, orelse = conditions(self._spelled(value), self._upstream)
            self.record.guards += body if isinstance(node.op, ast.And) else orelse
        del self.record.guards[depth:]
        self.within = outer

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        """`module.NAME += ...` needs NAME there, as a patch does."""
        self._registers(node)
        if isinstance(node.target, ast.Attribute) and (ref := self._upstream(node.target)):
            self._patch(ref, None, node)
        self.generic_visit(node)

    def _registers(self, node: ast.AST) -> None:
        for function, module in registrations(node, self.calls.registries):
            self.calls.register(function, module)

    def visit_Call(self, node: ast.Call) -> None:
        self._registers(node)
        if _attribute_builtin(self, node):
            return
        if (mocked := mock_patched(node, self.scopes)) and mocked[0].root in self.upstreams:
            self._patch(mocked[0], mocked[1], node)
        func = node.func
        if isinstance(func, ast.Name):
            self.calls.record_call(func.id, node, self._upstream, self.scopes.lookup)
            installs = self.replacements.installs(node, self.calls.installer, self.scopes.lookup)
            if installs and (owner := self._upstream(installs[0])):
                self.record.installed(owner.child(installs[1]), node, installs[2], installs[3])
        self.record.guards += required(node, self.upstreams)  # the rest of the block is gated
        for s in sought(node, self.flow, self.absence_tests):
            self.record.seeks(s)
        self.record.compiled(compiled_in(node, self), node)
        if callee := self._upstream(func):
            arms = self.branches.of(func)
            for extra, role, items in call_uses(node, self.scopes.lookup, self.record.guards, arms):
                self.record.add(role, callee, node, items, extra=extra)
        rekey(node, self.scopes, self.record.guards)
        self.generic_visit(node)


def _attribute_builtin(scanner: FileScanner, node: ast.Call) -> bool:
    """setattr/hasattr/getattr on an upstream object with a literal name; True when handled."""
    found = attribute_call(node, scanner.scopes.lookup)
    owner = scanner._upstream(found[1]) if found else None
    if found is None or owner is None:
        return False
    builtin, _, name = found
    ref = owner.child(name)
    if builtin == "hasattr":
        scanner.record.add(Role.GUARD, ref, node)
    elif builtin == "getattr":  # with a default, absence is tolerated
        scanner.record.add(Role.ACCESS, ref, node, tolerated=len(node.args) > 2)
        if len(node.args) > 2:
            scanner.record.probed.append(ref)
            scanner.record.done_without.append(ref)
    else:
        scanner._patch(ref, node.args[2] if len(node.args) > 2 else None, node)
    for expr in (*node.args[2:], *(k.value for k in node.keywords)):
        scanner.visit(expr)
    return True


def _listed(bindings: Sequence[tuple[str, object]]) -> bool:
    """A loop over the module names of a listing (Use.listed)."""
    return any(isinstance(value, Names) for _, value in bindings)


def _each_walk(
    node: ast.FunctionDef | ast.AsyncFunctionDef,
    calls: CallSites,
    record: Recorder,
    rewriter: tuple[str, str, str] | None,
) -> Iterator[dict[str, object]]:
    """The bindings to walk `node`'s body with, once each (spelled.walked_values; a
    registered rewriter's source parameter bound to the source it is given); while a walk is
    one of several, the calls in it vary with it (callsites.py), its nested defs are defined
    once, and its findings are of a listing's module when it binds module names."""
    walks = walked_values(node, calls.rows(node))  # several only from a listing's modules
    if rewriter:  # def fix(function_name, function) in a registry
        walks = [{**w, rewriter[1]: Source(rewritten(rewriter[2], None))} for w in walks]
    listed = len(walks) > 1 or any(isinstance(v, Names) for walk in walks for v in walk.values())
    saved = calls.variant, calls.repeating, record.listed, record.within
    try:
        for i, passed in enumerate(walks):
            calls.variant = f"{node.name}:{i}" if len(walks) > 1 else saved[0]
            calls.repeating = saved[1] or i > 0
            record.listed, record.within = saved[2] or listed, node
            yield passed
    finally:
        calls.variant, calls.repeating, record.listed, record.within = saved


def _tested(node: ast.If, flow: TextFlow) -> list[tuple[Ref, str]]:
    """The (source, text) pairs the `"x" in src` tests of an `if` whose `else` does work
    (guards.presence_tests) test in upstream sources, known to be there in the body: none
    when they test something else (`if f"{name}.bias" in state_dict:`)."""
    pairs: list[tuple[Ref, str]] = []
    for test in presence_tests(node):
        source = flow.source_of(test.comparators[0])
        pairs += [(source.ref, text) for text in flow.texts(test.left)] if source else []
    return pairs


def _alternative(op: ast.cmpop, within: ast.boolop | None) -> bool:
    """`"a" in s or "b" in s` and `"a" not in s and "b" not in s` (the client gives up
    only when neither is there) want either text; `"a" not in s or "b" not in s` and
    `"a" in s and "b" in s` want both."""
    if isinstance(op, ast.In):
        return isinstance(within, ast.Or)
    return isinstance(within, ast.And)


def scan_tree(
    tree: ast.Module,
    file: str,
    upstreams: frozenset[str],
    calls: CallSites | None = None,
    own: frozenset[str] = frozenset(),
    names_in: NamesIn | None = None,
) -> FileScanner:
    """Run the scanner over one parsed file; its findings and proven modules are on the result.

    `calls` gathers what the file passes to the package's functions, and binds their
    parameters to what a previous pass gathered; `own` are the downstream's own package
    names, whose mentions in sought texts mark them as the downstream's; `names_in` what an
    upstream module's `dir()` names in the newest release read (filtered by the downstream).
    """
    if calls is not None:
        calls.file = file  # what it defines and calls; whose helpers its defs are
    scanner = FileScanner(tree, file, upstreams, calls, own)
    scanner.flow.names_in = recording(names_in, scanner.calls) if names_in else None
    for name, regex in compiled_patterns(tree.body).items():  # used above where it is bound
        scanner.scopes.bind(name, Pattern(regex))
    scanner.visit(tree)
    return scanner
