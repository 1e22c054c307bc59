"""Keywords an upstream function passes on through its `**kwargs` to the one callee it
spreads them into: `vllm.LLM(model, ..., **kwargs)` builds `EngineArgs(model=model, ...,
**kwargs)`, so `vllm.LLM(worker_use_ray=True)` relies on `EngineArgs.__init__` accepting
`worker_use_ray`. An `accepts` check on `LLM.__init__` can never fail on it (its `**kwargs`
binds any keyword); the check that can is on the callee, where the keyword lands.

Read on the newest release that defines the function: a keyword the client passes that the
function does not name is passed on when the body spreads `**kwargs` into one callee only
(several, or one scan cannot place, and nothing is said) and does not `pop` it first. The
callee is placed as scan places a call (subjects.place): a dataclass's generated `__init__`
included. Followed through `_MAX_HOPS` such functions.
"""

from __future__ import annotations

import ast
import dataclasses
import textwrap
from collections.abc import Iterable, Mapping, Sequence

from canary.analysis import FunctionInfo
from canary.analysis.parselock import parse_locked
from canary.scan.downstream.findings import Role, Use
from canary.scan.downstream.imports import Ref
from canary.scan.proposing.pass_through import definitions
from canary.scan.proposing.subjects import Placement, place
from canary.scan.upstream.view import UpstreamView

_MAX_HOPS = 3
_CALLS = (Role.KWARGS, Role.CALL, Role.FORWARDED)
_RECEIVERS = ("self", "cls")


@dataclasses.dataclass(frozen=True)
class _Forward:
    """What a function does with its `**kwargs`: the names it binds itself (its other
    parameters, the keys it pops), and the callee it spreads the rest into."""

    named: frozenset[str]
    callee: Ref


def forwarded_uses(
    findings: Iterable[Use], views_of: Mapping[str, Sequence[UpstreamView]]
) -> list[Use]:
    """A finding of `Role.FORWARDED` on the callee for each call of an upstream function that
    passes keywords on through its `**kwargs` (and again where that callee does)."""
    found: list[Use] = []
    memo: dict[tuple[str, ...], _Forward | None] = {}
    for finding in findings:
        views = views_of.get(finding.ref.root, ())
        current = finding
        for _ in range(_MAX_HOPS if views and finding.role in _CALLS else 0):
            keywords = current.items[1:] if current.role is Role.CALL else current.items
            if current.ref.parts not in memo:
                memo[current.ref.parts] = _forward(current.ref, views)
            forward = memo[current.ref.parts]
            passed = tuple(k for k in keywords if forward and k not in forward.named)
            if forward is None or not passed:
                break
            current = dataclasses.replace(
                current, role=Role.FORWARDED, ref=forward.callee, items=passed
            )
            found.append(current)
    return found


def _forward(ref: Ref, views: Sequence[UpstreamView]) -> _Forward | None:
    """What the called function does with its `**kwargs`, on the newest release read that
    defines it; None when it has none, or spreads them into no callee or several."""
    target = place(ref, views, call=True)
    if target is None or target.absent or target.member or not target.path:
        return None
    qualname = ".".join(target.path)
    for view in views:
        info = view.module(target.module)
        functions = definitions(view, target.module, qualname)
        if info is None or not functions:
            continue
        function = functions[-1]  # the variant in force (if/else twins: the last)
        return _placed(_spread_into(target, function, info.segment(function.span)), views)
    return None


def _spread_into(target: Placement, function: FunctionInfo, text: str) -> _Forward | None:
    kwarg = next((p.name for p in function.params if p.kind == "kwarg"), None)
    if kwarg is None:
        return None
    try:
        tree = parse_locked(textwrap.dedent(text))
    except SyntaxError:
        return None
    callees: set[tuple[str, ...]] = set()
    popped: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        if any(k.arg is None and _is_name(k.value, kwarg) for k in node.keywords):
            callees.add(_dotted(node.func))
        if (
            isinstance(node.func, ast.Attribute)
            and node.func.attr == "pop"
            and _is_name(node.func.value, kwarg)
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            popped.add(node.args[0].value)
    if len(callees) != 1 or () in callees:
        return None
    (callee,) = callees
    module = tuple(target.module.split("."))
    named = frozenset(p.name for p in function.params if p.kind != "kwarg") | popped
    return _Forward(named, Ref((*module, *callee), len(module)))


def _placed(forward: _Forward | None, views: Sequence[UpstreamView]) -> _Forward | None:
    """The forward when its callee is a name of the function's module a release defines
    (not `self.build(...)`, nor a local)."""
    if forward is None or forward.callee.parts[forward.callee.known] in _RECEIVERS:
        return None
    target = place(forward.callee, views, call=True)
    return forward if target is not None and not target.absent and target.kind else None


def _is_name(node: ast.expr, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _dotted(node: ast.expr) -> tuple[str, ...]:
    """`EngineArgs` -> ("EngineArgs",), `arg_utils.EngineArgs` -> both; () for anything else
    (`self.engine(...)`, `super().__init__(...)`: not placed from the module's names)."""
    if isinstance(node, ast.Name):
        return (node.id,)
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return (*head, node.attr) if head else ()
    return ()
