"""What the downstream already guards: try/except ImportError, hasattr, version comparisons.

A use the client tolerates failing (inside `try: ... except ImportError`, under
`if hasattr(X, "n")` or in its `else`, the fallback for releases without it) becomes a
`severity: info` check; one under
`if Version(x.__version__) < Version("0.12.0")` is gated to the releases it runs on; a patch
under `if not hasattr(X, "n")` is a shim the client adds, not an upstream contract.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass

from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import InvalidVersion, Version

from canary.scan.downstream.imports import Ref
from canary.scan.downstream.ranges import UNION
from canary.scan.upstream.names import import_name

# exceptions whose handler means "absence is fine": the import or attribute may be missing
_TOLERANT = frozenset(
    {"ImportError", "ModuleNotFoundError", "AttributeError", "Exception", "BaseException"}
)
_FLIP = {ast.Lt: ">=", ast.LtE: ">", ast.Gt: "<=", ast.GtE: "<", ast.Eq: "!=", ast.NotEq: "=="}
_SAME = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}
_MIRROR = {
    ast.Lt: ast.Gt,
    ast.LtE: ast.GtE,
    ast.Gt: ast.Lt,
    ast.GtE: ast.LtE,
    ast.Eq: ast.Eq,
    ast.NotEq: ast.NotEq,
}
# statements that end a branch without doing its work
_GIVES_UP = (ast.Return, ast.Raise, ast.Continue, ast.Break)


@dataclass(frozen=True)
class Guard:
    """One condition a block runs under.

    kind "tolerates": uses of `ref` (or, with ref None, every use) may fail (`spec` names the
    branch of a signature probe, so that the keys each puts in stay apart);
    kind "shim": patches of `ref` add what upstream lacks;
    kind "gate": uses of upstream `ref.root` run only on releases in `spec`.
    """

    kind: str
    ref: Ref | None = None
    spec: str = ""

    def covers(self, ref: Ref) -> bool:
        return self.ref is None or ref.parts[: len(self.ref.parts)] == self.ref.parts


def tolerant_handlers(node: ast.Try) -> bool:
    """Whether some handler of the try catches a missing import or attribute."""
    return any(tolerant(handler) for handler in node.handlers)


def tolerant(handler: ast.ExceptHandler) -> bool:
    """Whether the handler catches a missing import or attribute (and does not raise again:
    `except ImportError as e: raise ImportError("...") from e` fails as the import would)."""
    if handler.body and isinstance(handler.body[-1], ast.Raise):
        return False
    if handler.type is None:
        return True
    names = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    for name in names:
        last = name.attr if isinstance(name, ast.Attribute) else getattr(name, "id", "")
        if last in _TOLERANT:
            return True
    return False


Resolver = Callable[[ast.expr], "Ref | None"]


def conditions(test: ast.expr, resolve: Resolver) -> tuple[list[Guard], list[Guard]]:
    """Guards for the body and for the else branch of `if test:`. Of an `and`, the else
    branch runs where any operand fails: gated by a union of their version gates, when each
    operand is a version test; of an `or`, the body is, and the else runs where every
    operand's version gate fails (what else an `or` of other tests implies is not read)."""
    if isinstance(test, ast.BoolOp):
        each = [conditions(value, resolve) for value in test.values]
        sides = [[body for body, _ in each], [orelse for _, orelse in each]]
        if isinstance(test.op, ast.And):
            return [g for guards in sides[0] for g in guards], _either_gate(sides[1])
        every = [g for guards in sides[1] for g in guards if g.kind == "gate"]
        return _either_gate(sides[0]), every
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        body, orelse = conditions(test.operand, resolve)
        return orelse, body
    if isinstance(test, ast.Compare) and len(test.ops) > 1:  # `a <= Version(v) < b`: an `and`
        operands = [test.left, *test.comparators]
        pairs = zip(operands, test.ops, operands[1:], strict=False)
        both: list[ast.expr] = [ast.Compare(left, [op], [right]) for left, op, right in pairs]
        return conditions(ast.BoolOp(ast.And(), both), resolve)
    hasattr_ref = _hasattr(test, resolve)
    if hasattr_ref is not None:  # the else branch is the fallback where upstream lacks it
        return [Guard("tolerates", hasattr_ref)], [Guard("shim", hasattr_ref), Guard("tolerates")]
    if _signature_probe(test):  # the client passes what the callee's signature takes
        probe = ast.unparse(test)
        return [Guard("tolerates", spec=probe)], [Guard("tolerates", spec=f"not {probe}")]
    compared = _version_compare(test, resolve)
    if compared is not None:
        upstream, op, version = compared
        root = Ref((upstream,), 1)
        return [Guard("gate", root, f"{_SAME[op]}{version}")], [
            Guard("gate", root, f"{_FLIP[op]}{version}")
        ]
    return [], []


def _either_gate(alternatives: list[list[Guard]]) -> list[Guard]:
    """The gate of a branch that runs where any of `alternatives` holds: a union of their
    version ranges (ranges.UNION), when each is one version test of the same upstream;
    nothing (the branch may run anywhere) otherwise."""
    roots = {g.ref for guards in alternatives for g in guards}
    every_gate = all(len(gs) == 1 and gs[0].kind == "gate" for gs in alternatives)
    if not alternatives or not every_gate or len(roots) != 1:
        return []
    return [Guard("gate", roots.pop(), UNION.join(gs[0].spec for gs in alternatives))]


def required(call: ast.Call, upstreams: frozenset[str]) -> list[Guard]:
    """`require_version("trl>=0.20")` (transformers' helper, or `require_version_core`) raises
    below that release: what follows it in the block runs only on the releases it names."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    if name not in ("require_version", "require_version_core") or not call.args:
        return []
    text = call.args[0]
    if not (isinstance(text, ast.Constant) and isinstance(text.value, str)):
        return []
    try:
        requirement = Requirement(text.value)
    except InvalidRequirement:
        return []
    root = import_name(requirement.name.lower())
    if root not in upstreams or not str(requirement.specifier):
        return []
    return [Guard("gate", Ref((root,), 1), str(requirement.specifier))]


def type_checking(test: ast.expr) -> bool:
    """`if TYPE_CHECKING:` or `if typing.TYPE_CHECKING:`, true only for a type checker."""
    name = test.attr if isinstance(test, ast.Attribute) else getattr(test, "id", "")
    return name == "TYPE_CHECKING"


def absence_tests(node: ast.If) -> list[int]:
    """The ids of the `"x" not in src` comparisons of `node`'s test (alone or joined by
    `and`) when the branch taken on absence does work instead of giving up: the client tests
    which upstream it has (`if "gradient_checkpointing" not in src: X.Layer = MyLayer`) and
    handles both, so the text is no contract. A branch ending in return, raise, continue or
    break gives up without the text: that one needs it."""
    if not node.body or isinstance(node.body[-1], _GIVES_UP):
        return []
    return [id(t) for t in _text_tests(node.test, ast.NotIn)]


def presence_tests(node: ast.If) -> list[ast.Compare]:
    """The `"x" in src` comparisons of `node`'s test (alone or joined by `and`) when its
    `else` does work: the client rewrites x where it is there and does something else where
    it is not (`if "a" in src: src = src.replace("a", ...)` / `elif "b" in src: ...`), so x
    is no contract, and the `else` is the fallback, tolerated as an except handler is."""
    if not node.orelse or isinstance(node.orelse[-1], _GIVES_UP):
        return []
    return _text_tests(node.test, ast.In)


def unsought(node: ast.If) -> list[int]:
    """The ids of the text tests of `node` that make no text a contract (the four below)."""
    presence = map(id, presence_tests(node))
    return [*absence_tests(node), *presence, *supplying_tests(node), *handled_probes(node)]


def handled_probes(node: ast.If) -> list[int]:
    """The id of an `all(k in src for k in KEYS)` test (text_calls.py) whose failure the
    client handles: an `else` that does work, `if not all(...):` whose body does, or `if
    all(...): return` (already there: the rest of the block puts them in). Then no text is a
    contract, as with `"a" in src` (presence_tests, absence_tests)."""
    test, present, absent = node.test, node.body, node.orelse
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test, present, absent = test.operand, absent, present
    if not (isinstance(test, ast.Call) and getattr(test.func, "id", "") == "all"):
        return []
    if absent:
        return [] if isinstance(absent[-1], _GIVES_UP) else [id(test)]
    return [id(test)] if present and isinstance(present[-1], _GIVES_UP) else []


def supplying_tests(node: ast.If) -> list[int]:
    """The ids of the `"x" in src` comparisons of `node`'s test (alone or joined by `and`)
    when, with no `else`, its body only appends to texts the client builds, never reading
    src (`if "SamplingParams" in src: pre += inspect.getsource(my_sampling_params)`): the
    client supplies what upstream's text calls for where it is there, and where it is not
    nothing is called for, so x is no contract. A body that rewrites src, patches, or sets
    a flag for later does need x."""
    tests = _text_tests(node.test, ast.In)
    if node.orelse or not tests or not all(map(_appends, node.body)):
        return []
    tested = {ast.dump(t.comparators[0]) for t in tests}
    read = {ast.dump(n) for s in node.body for n in ast.walk(s) if isinstance(n, ast.expr)}
    return [] if tested & read else [id(t) for t in tests]


def _appends(statement: ast.stmt) -> bool:
    """`text += ...` or `text = text + ...`: more text on a name."""
    if isinstance(statement, ast.AugAssign):
        return isinstance(statement.target, ast.Name) and isinstance(statement.op, ast.Add)
    if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1):
        return False
    target, value = statement.targets[0], statement.value
    while isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
        value = value.left
    return (
        isinstance(target, ast.Name)
        and value is not statement.value
        and isinstance(value, ast.Name)
        and value.id == target.id
    )


def _text_tests(test: ast.expr, op: type[ast.cmpop]) -> list[ast.Compare]:
    """The comparisons `test` is made of (alone or joined by `and`), when all are `op`."""
    tests = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
    found = [t for t in tests if isinstance(t, ast.Compare) and len(t.ops) == 1]
    if len(found) < len(tests) or not all(isinstance(t.ops[0], op) for t in found):
        return []
    return found


def _signature_probe(test: ast.expr) -> bool:
    """`"n" in sig.parameters` (`inspect.signature(f).parameters`): each branch is what the
    client does on the signatures it meets (zoo passes model_vocab_size or the older
    target_embedding_padding), neither a contract of every release."""
    return (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.In | ast.NotIn)
        and isinstance(test.comparators[0], ast.Attribute)
        and test.comparators[0].attr == "parameters"
    )


def _hasattr(test: ast.expr, resolve: Resolver) -> Ref | None:
    if not (
        isinstance(test, ast.Call)
        and isinstance(test.func, ast.Name)
        and test.func.id == "hasattr"
        and len(test.args) == 2
        and isinstance(test.args[1], ast.Constant)
        and isinstance(test.args[1].value, str)
    ):
        return None
    owner = resolve(test.args[0])
    return owner.child(test.args[1].value) if owner else None


def _version_compare(test: ast.expr, resolve: Resolver) -> tuple[str, type[ast.cmpop], str] | None:
    """(upstream, comparison as if the upstream's version were on the left, version)."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    op = type(test.ops[0])
    if op not in _SAME:
        return None
    left, right = test.left, test.comparators[0]
    upstream, version = upstream_version(left, resolve), _literal_version(right)
    if upstream is None or version is None:
        upstream, version = upstream_version(right, resolve), _literal_version(left)
        op = _MIRROR[op]
    if upstream is None or version is None:
        return None
    return upstream, op, version


def upstream_version(expr: ast.expr, resolve: Resolver) -> str | None:
    """The upstream whose version `expr` is: X.__version__, Version(...) of it, x_version,
    or a client's helper given the upstream's name (unsloth_zoo's `Version("transformers")`)."""
    if isinstance(expr, ast.Call) and len(expr.args) == 1 and not expr.keywords:
        named = expr.args[0]
        if isinstance(named, ast.Constant) and isinstance(named.value, str):
            return import_name(named.value.lower())  # None for a version: "5.0.0"
        return upstream_version(named, resolve)
    if isinstance(expr, ast.Attribute) and expr.attr == "__version__":
        ref = resolve(expr.value)
        return ref.root if ref else None
    if isinstance(expr, ast.Name):
        found = re.fullmatch(r"([a-z][a-z0-9_]*?)_version", expr.id)
        return found.group(1) if found else None
    return None


def _literal_version(expr: ast.expr) -> str | None:
    """The version literal of `"4.46"` or `Version("4.46")` / `parse("4.46")`."""
    if isinstance(expr, ast.Call) and len(expr.args) == 1:
        expr = expr.args[0]
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        try:
            return str(Version(expr.value))
        except InvalidVersion:
            return None
    return None
