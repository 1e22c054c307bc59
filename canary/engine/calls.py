"""Whether a call of a known shape binds to a function, as `inspect.Signature.bind` decides.

`accepts` says each keyword is taken in; a call also needs its positionals to fit and every
parameter without a default supplied: vLLM 0.14.0 inserted a required `vllm_config` before
`device` in `create_lora_manager`, and a call passing the old keywords raises TypeError there
while `accepts` still holds.
"""

from __future__ import annotations

from packaging.version import InvalidVersion, Version

from canary.analysis import FunctionInfo, Param
from canary.analysis.parameters import render
from canary.matrix.model import CallShape

#: Decorators after which a method's first parameter is not bound by the call.
_UNBOUND = ("staticmethod",)


def accepted(fn: FunctionInfo, name: str, version: Version | None) -> str | None:
    """How `fn` accepts the keyword `name`: "" as a parameter, else the way it is taken in;
    None when a call passing `name=` would raise TypeError."""
    target = keyword_target(fn, name, version)
    if target is None:
        return None
    if target.name == name and target.kind in ("normal", "kwonly"):
        return ""
    if target.kind == "kwarg":
        return f"{name} {ABSORBED}{target.name}"
    return f"{name} {RENAMED}{target.name} by @deprecate_kwarg"


#: the words of `accepted`'s notes, which a pass detail carries (joined by "; ")
ABSORBED = "absorbed by **"
RENAMED = "renamed to "


def note_on(detail: str, name: str) -> str:
    """The note a pass detail carries on how the keyword `name` is accepted: "" when none (a
    parameter of that name), else the one `accepted` wrote ("NAME absorbed by **kwargs")."""
    for note in detail.split("; "):
        if note.startswith((f"{name} {ABSORBED}", f"{name} {RENAMED}")):
            return note
    return ""


def keyword_target(fn: FunctionInfo, name: str, version: Version | None) -> Param | None:
    """The parameter a keyword `name=` fills: its own, the one a deprecation decorator renames
    it to, or `**kwargs`; None when nothing takes it."""
    by_name = {p.name: p for p in fn.params}
    param = by_name.get(name)
    if param is not None and param.kind in ("normal", "kwonly"):
        return param
    for rename in fn.renames:
        if rename.old != name or _refused(rename.raises, rename.version, version):
            continue
        target = by_name.get(rename.new) if rename.new else None
        if target is not None and target.kind in ("normal", "kwonly"):
            return target
    return next((p for p in fn.params if p.kind == "kwarg"), None)


def _refused(raises: bool, since: str | None, version: Version | None) -> bool:
    """A deprecation that raises from `since` on refuses the old keyword there (and wherever
    the version cannot be told, rather than passing on a guess)."""
    if not raises:
        return False
    try:
        return version is None or since is None or version >= Version(since.lstrip("v"))
    except InvalidVersion:
        return True


def bind(fn: FunctionInfo, call: CallShape, version: Version | None, method: bool) -> str | None:
    """None when the call binds, else why it raises TypeError. For a method (`method`) the call
    is made on an instance or the class: its first parameter is bound, not passed, unless it is
    a staticmethod."""
    params = list(fn.params)
    if method and not any(d in _UNBOUND for d in fn.decorators):
        if params and params[0].kind in ("posonly", "normal"):
            params = params[1:]
        elif not any(p.kind == "vararg" for p in params):
            return "it takes no parameter for the instance"
    positional = [p for p in params if p.kind in ("posonly", "normal")]
    if call.args > len(positional) and not any(p.kind == "vararg" for p in params):
        return f"it takes {len(positional)} positional, the call passes {call.args}"
    filled = {p.name for p in positional[: call.args]}
    for keyword in call.keywords:
        target = keyword_target(fn, keyword, version)
        if target is None:
            return f"it does not accept {keyword}"
        if target.name in filled and target.kind != "kwarg":
            return f"{target.name} is given twice (positionally and as {keyword}=)"
        filled.add(target.name)
    missing = [
        p.name
        for p in params
        if p.kind in ("posonly", "normal", "kwonly") and p.default is None and p.name not in filled
    ]
    if missing:
        return f"it requires {', '.join(missing)}, which the call does not pass"
    return None


def described(fn: FunctionInfo, qualname: str) -> str:
    """`qualname(a, b, *, c)`: the function with its parameter names and kinds."""
    return qualname + render(tuple(Param(p.name, p.kind) for p in fn.params))
