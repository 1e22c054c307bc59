"""The visitor's reading of the objects the client holds: FileScanner's part that follows the
client's own values to the upstream class they are instances of (instances.py), and the
package's own classes, typed functions and method replacements (own_types.py).

A mixin, so that the visitor (patterns.py) keeps one concern per module: here, which name or
dotted path holds an instance where (annotated parameters, assignments, isinstance narrowing,
attributes a class's methods set), what `obj.m(...)` and `obj.x` on one record, what the
package's classes derive from through its own bases, and what the first pass keeps of its
classes and functions for the other files.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from canary.scan.downstream.findings import Role
from canary.scan.downstream.guards import Resolver
from canary.scan.downstream.imports import Ref, Scopes, bind_import, resolve
from canary.scan.downstream.instances import (
    Instance,
    annotated,
    annotation_imports,
    constructed,
    held,
    narrowed_after,
    narrowed_within,
    path_of,
    self_held,
)
from canary.scan.downstream.source_helpers import own_statements
from canary.scan.downstream.spread import call_uses
from canary.scan.downstream.subclasses import (
    BaseUse,
    binds,
    installed_uses,
    written_method,
)
from canary.scan.downstream.version_visits import VersionVisits

#: the fields of a compound statement that hold blocks of statements
_BLOCKS = ("body", "orelse", "finalbody")


class InstanceVisits(VersionVisits):
    """What FileScanner does with the instances the client holds (it provides these)."""

    upstreams: frozenset[str]
    _tree: ast.Module
    # the attributes each enclosing class's methods set to an instance, the statements an
    # isinstance test narrows (id -> path, class), the attribute reads a method call makes
    held_classes: list[dict[str, Ref]]
    narrowed: dict[int, tuple[str, ast.expr]]
    instance_calls: set[int]
    _annotation_names: Scopes | None = None

    def visit(self, node: ast.AST) -> Any:
        """Visit `node`; a path an isinstance test narrows there is bound to an instance of
        that class meanwhile. A def the first pass sees is kept for the other files."""
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            self._keep_def(node)
        if isinstance(node, ast.stmt):
            self._narrow(node)
        narrowed = self.narrowed.get(id(node))
        ref = self._upstream(narrowed[1]) if narrowed else None
        if narrowed is None or ref is None:
            return super().visit(node)
        top = self.scopes.top()
        before = top.get(narrowed[0], top)
        top[narrowed[0]] = Instance(ref)
        try:
            return super().visit(node)
        finally:
            if before is top:
                top.pop(narrowed[0], None)
            elif top.get(narrowed[0]) == Instance(ref):
                top[narrowed[0]] = before

    def _narrow(self, node: ast.stmt) -> None:
        """Note the statements an isinstance test in `node`'s blocks narrows a path in."""
        if isinstance(node, ast.If):
            for narrowed in narrowed_within(node):  # `if isinstance(x, C):`
                self.narrowed.update((id(item), narrowed) for item in node.body)
        for field in _BLOCKS:
            block = getattr(node, field, None)
            if not isinstance(block, list):
                continue
            for index, item in enumerate(block):
                for narrowed in narrowed_after(item):  # `assert isinstance(x, C)`
                    self.narrowed.update((id(later), narrowed) for later in block[index + 1 :])

    def _type(self, expr: ast.expr) -> Ref | None:
        """The upstream object a name in an annotation denotes (also one imported only under
        `if TYPE_CHECKING:`)."""
        if self._annotation_names is None:
            self._annotation_names = annotation_imports(self._tree)
        ref = self._upstream(expr) or resolve(expr, self._annotation_names)
        return ref if ref and ref.root in self.upstreams else None

    def _resolver_in(self, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> Resolver:
        """How the body of `fn` resolves a name: its own imports first (`from vllm import LLM`
        inside `__init__`), then the scopes around it."""
        local: list[Scopes] = []

        def resolved(expr: ast.expr) -> Ref | None:
            if not local:  # read only for a method that sets an attribute to something typed
                local.append(Scopes())
                for node in own_statements(fn.body):
                    if isinstance(node, ast.Import | ast.ImportFrom):
                        bind_import(node, local[0])
            ref = resolve(expr, local[0])
            return ref if ref and ref.root in self.upstreams else self._type(expr)

        return resolved

    def _instance_of(self, value: ast.expr | None, annotation: ast.expr | None) -> Instance | None:
        """The instance a name assigned `value` (annotated `annotation`) holds: of the class
        annotated, constructed, returned by one of the package's own typed functions, or
        held by the name or path it is read from (`engine = self.engine`)."""
        path = path_of(value) if isinstance(value, ast.Name | ast.Attribute) else None
        if path is not None and isinstance(alias := self._holding(path), Instance):
            return alias
        ref = annotated(annotation, self._type) or constructed(value, self._upstream)
        func = value.func if isinstance(value, ast.Call) else None
        if ref is None and isinstance(func, ast.Name) and self.scopes.lookup(func.id) is None:
            ref = self.calls.typed(("returned_class", func.id))
        return Instance(ref) if ref is not None else None

    def _bind_held(self, target: ast.expr, value: ast.expr | None, node: ast.AST) -> bool:
        """Bind a dotted path assigned an instance (`a.cache = Cache()`, `self.llm = LLM()`);
        False when `target` is no such path."""
        path = path_of(target) if isinstance(target, ast.Attribute) else None
        if path is None:
            return False
        annotation = node.annotation if isinstance(node, ast.AnnAssign) else None
        self.scopes.bind(path, self._instance_of(value, annotation))
        return True

    def _bind_parameters(self, args: ast.arguments | None) -> None:
        """Bind the parameters annotated with an upstream class (`model: PreTrainedModel`)."""
        for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs) if args else ():
            if (cls := annotated(arg.annotation, self._type)) is not None:
                self.scopes.bind(arg.arg, Instance(cls))

    def _holding(self, path: str) -> object | None:
        """What a dotted path holds here: bound in scope, else an attribute `self.x` the
        enclosing class's methods set to an instance."""
        found = self.scopes.lookup(path)
        head, _, attr = path.partition(".")
        if found is None and head == "self" and self.held_classes and "." not in attr:
            cls = self.held_classes[-1].get(attr)
            return Instance(cls) if cls is not None else None
        return found

    def _instance_read(self, node: ast.Attribute) -> None:
        """`obj.x` read on an instance (not the method a call calls)."""
        used = held(node, self._holding) if isinstance(node.ctx, ast.Load) else None
        if used is not None and id(node) not in self.instance_calls:
            self.record.add(Role.INSTANCE_READ, used[0].cls.child(used[1]), node)

    def _instance_call(self, node: ast.Call) -> None:
        """`obj.m(...)` on an instance: the method, with the call's shape (call_shapes.py)."""
        used = held(node.func, self._holding)
        if used is None:
            return
        self.instance_calls.add(id(node.func))
        method = used[0].cls.child(used[1])
        shapes = call_uses(node, self.scopes.lookup, self.record.guards)
        for extra, role, items in shapes or [((), Role.KWARGS, ())]:
            shape = items if role is Role.CALL else ("", *items) if items else ()
            self.record.add(Role.INSTANCE_CALL, method, node, shape, extra=extra)

    def _installed_elsewhere(
        self, target: Ref, value: ast.expr | None, node: ast.AST
    ) -> list[BaseUse]:
        """What a replacement defined in another module of the package relies on."""
        if not isinstance(value, ast.Name) or self.scopes.lookup(value.id) is not None:
            return []
        written = self.calls.typed(("written_method", value.id))
        return installed_uses(target, written, node) if written else []

    def _class_bases(self, node: ast.ClassDef) -> tuple[list[Ref | None], frozenset[str], bool]:
        """What each base of the class is upstream (through the package's own classes too),
        the names the client's own bases bind, and whether every other base binds nothing
        (subclasses.base_uses); kept for the other files on a first pass."""
        bases = [self._upstream(base) for base in node.bases]
        written = [_base(b, ref) for b, ref in zip(node.bases, bases, strict=True)]
        self._keep(lambda: self.calls.types.add_class(node.name, written, sorted(binds(node))))
        inherited: frozenset[str] = frozenset()
        alone = True
        for index, base in enumerate(node.bases):
            own = None if bases[index] else self.calls.typed(("own_class", _base_name(base)))
            if own is not None:
                bases[index] = own.upstream
                inherited |= own.binds
                alone = alone and own.alone
        return bases, inherited, alone

    @contextmanager
    def _held_by(self, node: ast.ClassDef) -> Iterator[None]:
        """While the class body is visited: the attributes its methods set to instances."""
        self.held_classes.append(self_held(node, self._resolver_in))
        try:
            yield
        finally:
            self.held_classes.pop()

    def _keep_def(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        """A first pass keeps a def's annotated return and, taking `self` at module level, what
        it relies on as a replacement of a method (own_types.py)."""
        if self.calls.frozen or self.calls.repeating:
            return
        if (returned := annotated(node.returns, self._type)) is not None:
            self._keep(lambda: self.calls.types.add_return(node.name, returned))
        if not self.held_classes and node.args.args and node.args.args[0].arg == "self":
            self._keep(lambda: self.calls.types.add_method(node.name, written_method(node)))

    def _keep(self, event: Any) -> None:
        """Keep what `event()` adds among the first pass's events (none on a second pass)."""
        if not self.calls.frozen and not self.calls.repeating:
            self.calls.events.append(event())


def _base(expr: ast.expr, ref: Ref | None) -> list[object]:
    """A class's base as own_types.py keeps it: an upstream class, or the name it is read by."""
    return ["up", list(ref.parts), ref.known] if ref is not None else ["own", _base_name(expr)]


def _base_name(expr: ast.expr) -> str:
    """The name a base is read by: `BaseTrainer`, `mod.Base`, `Generic[T]`, `make_base()`."""
    while isinstance(expr, ast.Subscript | ast.Call):
        expr = expr.value if isinstance(expr, ast.Subscript) else expr.func
    if isinstance(expr, ast.Attribute):
        return expr.attr
    return expr.id if isinstance(expr, ast.Name) else ""
