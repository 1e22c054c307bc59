"""Find the uses of upstream objects in one downstream file: imports, patches, source rewrites.

One pass over the AST in source order, tracking per scope which names are upstream aliases
and which hold (a rewrite of) an upstream object's source, so `src = inspect.getsource(X)`
followed by `src.replace("old", ...)` yields "X's source contains 'old'".
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from canary.scan.findings import Finding, Role
from canary.scan.imports import Ref, Scopes, bind_import, resolve

# str methods whose result is still (a rewrite of) the same source text
_KEEPS_SOURCE = frozenset(
    {"replace", "strip", "lstrip", "rstrip", "expandtabs", "removeprefix", "removesuffix"}
)
# str methods that look for their first argument in the text: it must be there
_SEEKS_TEXT = frozenset(
    {"replace", "find", "rfind", "index", "rindex", "count", "split", "rsplit", "partition"}
    | {"rpartition"}
)
# re functions -> (position of the string argument, position of flags)
_RE_FUNCTIONS = {
    "search": (1, 2),
    "match": (1, 2),
    "fullmatch": (1, 2),
    "findall": (1, 2),
    "finditer": (1, 2),
    "split": (1, 3),
    "sub": (2, 4),
    "subn": (2, 4),
}
# the same as methods of a compiled pattern: position of the string argument
_PATTERN_METHODS = {"search": 0, "match": 0, "fullmatch": 0, "findall": 0, "finditer": 0}
_PATTERN_METHODS |= {"split": 0, "sub": 1, "subn": 1}
# re flags a check can carry inline; MULTILINE is how checks search anyway
_INLINE_FLAGS = {"IGNORECASE": "i", "I": "i", "DOTALL": "s", "S": "s", "VERBOSE": "x", "X": "x"}
_INLINE_FLAGS |= {"ASCII": "a", "A": "a", "MULTILINE": "", "M": ""}
# shortest shared edge between a literal and inserted text that counts as overlapping
_EDGE = 4


@dataclass(frozen=True)
class Source:
    """A string holding an upstream object's source; `inserted` is text the downstream added."""

    ref: Ref
    inserted: tuple[str, ...] = ()

    def plus(self, text: str | None) -> Source:
        return Source(self.ref, (*self.inserted, text)) if text else self

    def expects(self, literal: str) -> bool:
        """Whether finding `literal` says something about upstream, not about text added here.

        Whitespace says nothing; a literal that overlaps inserted text may match only thanks to it.
        """
        return bool(literal.strip()) and not any(_overlap(literal, t) for t in self.inserted)

    def expects_match(self, regex: str) -> bool:
        """A valid regex that does not already match the inserted text."""
        try:
            compiled = re.compile(regex, re.MULTILINE)
        except (re.error, RecursionError, OverflowError):
            return False
        return not any(compiled.search(text) for text in self.inserted)


def _overlap(literal: str, inserted: str) -> bool:
    """One contains the other, or they share an edge of a few characters."""
    if literal in inserted or inserted in literal:
        return True
    edge = min(_EDGE, len(inserted), len(literal))
    return any(
        literal.startswith(inserted[-n:]) or literal.endswith(inserted[:n])
        for n in range(edge, min(len(inserted), len(literal)) + 1)
    )


@dataclass(frozen=True)
class Pattern:
    """A compiled regex with a literal pattern: `re.compile("...")`."""

    regex: str


def _literal(node: ast.expr | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _argument(call: ast.Call, position: int, name: str) -> ast.expr | None:
    if len(call.args) > position:
        return call.args[position]
    return next((k.value for k in call.keywords if k.arg == name), None)


def _inline_flags(node: ast.expr | None) -> str | None:
    """`re.S | re.I` -> "si"; None when the flags are not all plain re constants."""
    if node is None:
        return ""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        left, right = _inline_flags(node.left), _inline_flags(node.right)
        return None if left is None or right is None else left + right
    if isinstance(node, ast.Attribute) and node.attr in _INLINE_FLAGS:
        return _INLINE_FLAGS[node.attr]
    return None


def _with_flags(regex: str, flags: str | None) -> str | None:
    if flags is None:
        return None
    letters = "".join(sorted(set(flags)))
    return f"(?{letters}){regex}" if letters else regex


def wrapper_params(fn: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> tuple[str, ...]:
    """The named parameters a replacement passes on: no self/cls, no *args/**kwargs."""
    args = fn.args
    names = [a.arg for a in (*args.posonlyargs, *args.args)]
    if names and names[0] in ("self", "cls"):
        names = names[1:]
    return (*names, *(a.arg for a in args.kwonlyargs))


def _local_functions(tree: ast.Module) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    """Every def of the file by name, and methods as `Class.method`, for wrapper lookup."""
    found: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found[node.name] = node
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    found[f"{node.name}.{item.name}"] = item
    return found


class FileScanner(ast.NodeVisitor):
    """Collects Findings about `upstreams` from one parsed file."""

    def __init__(self, tree: ast.Module, file: str, upstreams: frozenset[str]) -> None:
        self.file = file
        self.upstreams = upstreams
        self.scopes = Scopes()
        self.functions = _local_functions(tree)
        self.findings: list[Finding] = []
        self.modules: set[str] = set()  # dotted names the imports prove to be modules

    # --- helpers ---------------------------------------------------------------------------

    def _upstream(self, expr: ast.expr) -> Ref | None:
        ref = resolve(expr, self.scopes)
        return ref if ref and ref.root in self.upstreams else None

    def _parts(self, expr: ast.expr) -> tuple[str, ...]:
        ref = resolve(expr, self.scopes)
        return ref.parts if ref else ()

    def _add(self, role: Role, ref: Ref, node: ast.AST, items: tuple[str, ...] = ()) -> None:
        self.findings.append(Finding(role, ref, self.file, getattr(node, "lineno", 0), items))

    def _source_of(self, expr: ast.expr | None) -> Source | None:
        """The upstream source `expr` evaluates to, if it is one (or a rewrite of one)."""
        if isinstance(expr, ast.Name):
            bound = self.scopes.lookup(expr.id)
            return bound if isinstance(bound, Source) else None
        if isinstance(expr, ast.Subscript):
            return self._source_of(expr.value)
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
            left, right = self._source_of(expr.left), self._source_of(expr.right)
            if left:
                return left.plus(_literal(expr.right))
            return right.plus(_literal(expr.left)) if right else None
        if not isinstance(expr, ast.Call):
            return None
        parts = self._parts(expr.func)
        if parts == ("inspect", "getsource") and expr.args:
            target = self._upstream(expr.args[0])
            return Source(target) if target else None
        if parts in (("textwrap", "dedent"), ("textwrap", "indent")) and expr.args:
            return self._source_of(expr.args[0])
        if len(parts) == 2 and parts[0] == "re" and parts[1] in ("sub", "subn"):
            source = self._source_of(_argument(expr, 2, "string"))
            return source.plus(_literal(_argument(expr, 1, "repl"))) if source else None
        if isinstance(expr.func, ast.Attribute) and expr.func.attr in _KEEPS_SOURCE:
            source = self._source_of(expr.func.value)
            if source and expr.func.attr == "replace":
                return source.plus(_literal(_argument(expr, 1, "new")))
            return source
        if (
            isinstance(expr.func, ast.Attribute)
            and expr.func.attr in ("sub", "subn")
            and self._pattern_of(expr.func.value)
        ):
            source = self._source_of(_argument(expr, 1, "string"))
            return source.plus(_literal(_argument(expr, 0, "repl"))) if source else None
        return None

    def _pattern_of(self, expr: ast.expr) -> Pattern | None:
        if isinstance(expr, ast.Name):
            bound = self.scopes.lookup(expr.id)
            return bound if isinstance(bound, Pattern) else None
        if isinstance(expr, ast.Call) and self._parts(expr.func) == ("re", "compile"):
            regex = _literal(_argument(expr, 0, "pattern"))
            flags = _inline_flags(_argument(expr, 1, "flags"))
            regex = _with_flags(regex, flags) if regex else None
            return Pattern(regex) if regex else None
        return None

    def _binding_of(self, value: ast.expr) -> object | None:
        return self._source_of(value) or self._pattern_of(value) or resolve(value, self.scopes)

    def _replacement(self, value: ast.expr | None) -> ast.AST | None:
        """The local function (or lambda) a patch installs, if the file defines it."""
        if isinstance(value, ast.Lambda):
            return value
        if isinstance(value, ast.Name) and self.scopes.lookup(value.id) is None:
            return self.functions.get(value.id)
        if isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name):
            return self.functions.get(f"{value.value.id}.{value.attr}")
        return None

    def _patch(self, target: Ref, value: ast.expr | None, node: ast.AST) -> None:
        self._add(Role.PATCH, target, node)
        replacement = self._replacement(value)
        if isinstance(replacement, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            params = wrapper_params(replacement)
            if params:
                self._add(Role.WRAPPER, target, node, params)

    def _assign(self, target: ast.expr, value: ast.expr | None, node: ast.AST) -> None:
        if isinstance(target, ast.Name):
            self.scopes.bind(target.id, self._binding_of(value) if value else None)
        elif isinstance(target, ast.Attribute) and (ref := self._upstream(target)):
            self._patch(ref, value, node)
        elif isinstance(target, ast.Tuple | ast.List):
            for element in target.elts:
                self._assign(element, None, node)
        else:
            self.visit(target)

    def _expects_text(self, source: Source | None, literal: str | None, node: ast.AST) -> None:
        if source and literal is not None and source.expects(literal):
            self._add(Role.CONTAINS, source.ref, node, (literal,))

    def _expects_match(self, source: Source | None, regex: str | None, node: ast.AST) -> None:
        if source and regex and source.expects_match(regex):
            self._add(Role.MATCHES, source.ref, node, (regex,))

    # --- bindings --------------------------------------------------------------------------

    def visit_Import(self, node: ast.Import) -> None:
        self._imported(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        self._imported(node)

    def _imported(self, node: ast.Import | ast.ImportFrom) -> None:
        for ref in bind_import(node, self.scopes):
            if ref.root in self.upstreams:
                self.modules.add(".".join(ref.parts[: ref.known]))
                self._add(Role.IMPORT, ref, node)

    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)
        for target in node.targets:
            self._assign(target, node.value, node)

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
        self._in_scope(node.body, node.args)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self._in_scope([node.body], node.args)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for expr in (*node.decorator_list, *node.bases, *(k.value for k in node.keywords)):
            self.visit(expr)
        self.scopes.bind(node.name, None)
        self._in_scope(node.body, None)

    def _in_scope(self, body: list, args: ast.arguments | None) -> None:
        names: list[str] = []
        if args:
            every = (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg)
            names = [a.arg for a in every if a]
        self.scopes.push(names)
        for item in body:
            self.visit(item)
        self.scopes.pop()

    # --- uses ------------------------------------------------------------------------------

    def visit_Attribute(self, node: ast.Attribute) -> None:
        ref = self._upstream(node) if isinstance(node.ctx, ast.Load) else None
        if ref:
            self._add(Role.ACCESS, ref, node)
        else:
            self.generic_visit(node)

    def visit_Compare(self, node: ast.Compare) -> None:
        left = node.left
        for op, right in zip(node.ops, node.comparators, strict=True):
            if isinstance(op, ast.In | ast.NotIn):
                self._expects_text(self._source_of(right), _literal(left), left)
            left = right
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        if self._attribute_builtin(node):
            return
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in _SEEKS_TEXT and node.args:
            self._expects_text(self._source_of(func.value), _literal(node.args[0]), node.args[0])
        if isinstance(func, ast.Attribute) and func.attr in _PATTERN_METHODS:
            pattern = self._pattern_of(func.value)
            string = _argument(node, _PATTERN_METHODS[func.attr], "string")
            self._expects_match(self._source_of(string), pattern and pattern.regex, node)
        parts = self._parts(func)
        if len(parts) == 2 and parts[0] == "re" and parts[1] in _RE_FUNCTIONS:
            string_at, flags_at = _RE_FUNCTIONS[parts[1]]
            pattern_node = _argument(node, 0, "pattern")
            regex = _literal(pattern_node)
            flags = _inline_flags(_argument(node, flags_at, "flags"))
            string = _argument(node, string_at, "string")
            regex = regex and _with_flags(regex, flags)
            self._expects_match(self._source_of(string), regex, pattern_node or node)
        callee = self._upstream(func)
        keywords = tuple(dict.fromkeys(k.arg for k in node.keywords if k.arg))
        if callee and keywords:
            self._add(Role.KWARGS, callee, node, keywords)
        self.generic_visit(node)

    def _attribute_builtin(self, node: ast.Call) -> bool:
        """setattr/hasattr on an upstream object with a literal name; True when handled."""
        func = node.func
        if not isinstance(func, ast.Name) or func.id not in ("setattr", "hasattr"):
            return False
        if self.scopes.lookup(func.id) is not None or len(node.args) < 2:
            return False
        owner, name = self._upstream(node.args[0]), _literal(node.args[1])
        if not owner or name is None:
            return False
        if func.id == "hasattr":
            self._add(Role.GUARD, owner.child(name), node)
        else:
            value = node.args[2] if len(node.args) > 2 else None
            self._patch(owner.child(name), value, node)
        for expr in (*node.args[2:], *(k.value for k in node.keywords)):
            self.visit(expr)
        return True


def scan_tree(tree: ast.Module, file: str, upstreams: frozenset[str]) -> FileScanner:
    """Run the scanner over one parsed file; its findings and proven modules are on the result."""
    scanner = FileScanner(tree, file, upstreams)
    scanner.visit(tree)
    return scanner
