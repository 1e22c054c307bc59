"""Signatures that take anything: `def forward(self, *args, **kwargs)`.

Any keyword binds to such a function and any call shape fits it, so an `accepts` or `call`
check on it can never fail: it would be a green line that says nothing. Scan proposes no
such check there (the function's existence stays, with the call among its uses).
"""

from __future__ import annotations

from collections.abc import Sequence

from canary.analysis import FunctionInfo
from canary.scan.upstream.view import UpstreamView

_RECEIVERS = ("self", "cls")


def takes_anything(fn: FunctionInfo) -> bool:
    """Only `*args`/`**kwargs` (and a method's self or cls): `**kwargs` there, nothing named."""
    params = fn.params
    if params and params[0].name in _RECEIVERS and params[0].kind in ("normal", "posonly"):
        params = params[1:]
    kinds = {param.kind for param in params}
    return "kwarg" in kinds and kinds <= {"vararg", "kwarg"}


def passes_through(module: str, qualname: str | None, views: Sequence[UpstreamView]) -> bool:
    """Whether every definition of `module.qualname` on every release read that has it
    takes anything (and some release has it)."""
    found: list[FunctionInfo] = []
    for view in views if qualname else ():
        found += definitions(view, module, qualname or "")
    return bool(found) and all(takes_anything(fn) for fn in found)


def definitions(view: UpstreamView, module: str, qualname: str) -> list[FunctionInfo]:
    """The function's definitions on one release (if/else twins included), a method's in
    each class of that name."""
    info = view.module(module)
    if info is None:
        return []
    owner, _, method = qualname.rpartition(".")
    if not owner:
        return list(info.functions.get(qualname, []))
    return [fn for cls in info.classes.get(owner, []) for fn in cls.methods.get(method, [])]
