"""The runtime side of `python -m bench.runtime`: run by the Python of a throwaway virtual
environment where real releases are installed, it imports each check's module and asks CPython
itself (`import`, `getattr`, `inspect`) whether the check's contract holds.

Standard library only (the environment has no canary). Reads a JSON list of checks on stdin,
each `{"key": ..., "alternatives": [contract, ...]}` (a contract as `bench.runtime` writes it),
and prints a JSON object: key -> `{"truth": "holds" | "fails" | "undecided", "why": text}`.
A check holds when one alternative holds; it is undecided when none holds and one is undecided.
What this side cannot decide (attributes set on instances, the globals a copied function reads,
a keyword a wrapper may rename) is said as undecided with the reason, never guessed.
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import io
import json
import re
import sys
import warnings
from contextlib import redirect_stderr, redirect_stdout

HOLDS, FAILS, UNDECIDED = "holds", "fails", "undecided"

_KINDS = {
    "posonly": inspect.Parameter.POSITIONAL_ONLY,
    "normal": inspect.Parameter.POSITIONAL_OR_KEYWORD,
    "vararg": inspect.Parameter.VAR_POSITIONAL,
    "kwonly": inspect.Parameter.KEYWORD_ONLY,
    "kwarg": inspect.Parameter.VAR_KEYWORD,
}
_NAMED = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


class Undecided(Exception):
    """This side cannot tell (an optional backend missing, a question it cannot ask)."""


class Fails(Exception):
    """Python says the contract does not hold."""


def _import(name: str):
    """The module, as `import name` gives it; Fails when no such module exists, Undecided when
    it exists but its import fails (an optional backend missing from this environment)."""
    try:
        with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
            return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        if missing and (missing == name or name.startswith(f"{missing}.")):
            raise Fails(f"no module {name}") from None
        raise Undecided(f"import {name}: {type(exc).__name__}: {exc}") from None
    except SyntaxError as exc:
        raise Fails(f"import {name}: SyntaxError line {exc.lineno}") from None
    except Exception as exc:  # whatever an upstream's import raises
        raise Undecided(f"import {name}: {type(exc).__name__}: {str(exc)[:200]}") from None


def _attribute(module, name: str):
    """What `from module import name` finds: an attribute, else a submodule."""
    try:
        return getattr(module, name)
    except AttributeError:
        pass
    except Exception as exc:  # a lazy module's missing backend
        said = f"{module.__name__}.{name}: {type(exc).__name__}: {str(exc)[:200]}"
        raise Undecided(said) from None
    if hasattr(module, "__path__"):
        return _import(f"{module.__name__}.{name}")
    raise Fails(f"{module.__name__} has no {name}")


def _class(module, name: str):
    cls = _attribute(module, name)
    if not isinstance(cls, type):
        raise Fails(f"{module.__name__}.{name} is {type(cls).__name__}, not a class")
    if not _defined_in(cls, module):
        raise Fails(f"{name} is defined in {cls.__module__}, not {module.__name__}")
    return cls


def _defined_in(obj, module) -> bool:
    """Whether `obj` is defined in `module`, or `module` is an alias an import hook serves
    (transformers 5's `tokenization_utils_fast`: with no file of its own, or with its
    target's): its names are its target's, as canary checks such a module on its target."""
    where = getattr(obj, "__module__", None)
    if where == module.__name__:
        return True
    file = getattr(module, "__file__", None)
    target = sys.modules.get(where or "")
    return bool(where) and (file is None or file == getattr(target, "__file__", None))


def _method(cls, name: str, own: bool):
    """The function behind `cls.name` (a static or class method's own function), and whether
    a call binds an instance or class first."""
    if own and name not in vars(cls):
        raise Fails(f"{cls.__name__} does not define {name} in its own body")
    try:
        static = inspect.getattr_static(cls, name)
    except AttributeError:
        raise Fails(f"{cls.__name__} has no attribute {name}") from None
    if isinstance(static, staticmethod):
        return static.__func__, False
    if isinstance(static, classmethod):
        return static.__func__, True
    if isinstance(static, property) and static.fget is not None:
        return static.fget, True  # a property's getter is the def a check names
    if isinstance(static, functools.cached_property):
        return static.func, True
    if not callable(static):
        raise Fails(f"{cls.__name__}.{name} is not callable")
    return static, True


def _source(obj) -> str:
    try:
        return inspect.getsource(obj)
    except (OSError, TypeError) as exc:
        raise Undecided(f"no source: {exc}") from None


def _text_holds(source: str, contract: dict) -> None:
    for text in contract.get("contains", []):
        times = source.count(text)
        if not times:
            raise Fails(f"source lacks {text!r}")
        if contract.get("count") is not None and times != contract["count"]:
            raise Fails(f"source has {text!r} {times} times")
    for pattern in contract.get("matches", []):
        if not re.search(pattern, source, re.MULTILINE):
            raise Fails(f"no match for /{pattern}/")
    for text in contract.get("not_contains", []):
        if text in source:
            raise Fails(f"source contains {text!r}")


def _has_text(contract: dict) -> bool:
    return any(contract.get(k) for k in ("contains", "matches", "not_contains"))


def _signature(fn) -> inspect.Signature:
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError) as exc:
        raise Undecided(f"no signature: {exc}") from None


def _wrapped(fn) -> bool:
    return hasattr(fn, "__wrapped__")


def _function_holds(fn, contract: dict, binds_first: bool) -> None:
    sig = _signature(fn)
    params = sig.parameters
    for name in contract.get("params", []):
        if name not in params:
            raise Fails(f"no parameter {name} in {sig}")
    kwargs = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    for name in contract.get("accepts", []):
        named = name in params and params[name].kind in _NAMED
        if not named and not kwargs:
            if _wrapped(fn):
                raise Undecided(f"{name} not in {sig}, but a wrapper may rename it")
            raise Fails(f"{name} not accepted by {sig}")
    for name in contract.get("named", []):
        if not (name in params and params[name].kind in _NAMED):
            if _wrapped(fn):
                raise Undecided(f"{name} not named in {sig}, but a wrapper may rename it")
            raise Fails(f"{name} not named in {sig}")
    call = contract.get("call")
    if call is not None:
        first = 1 if binds_first else 0
        try:
            sig.bind(*[None] * (call["args"] + first), **dict.fromkeys(call["keywords"]))
        except TypeError as exc:
            if _wrapped(fn):
                said = f"call refused by {sig} ({exc}), but a wrapper may rename"
                raise Undecided(said) from None
            raise Fails(f"call refused: {exc}") from None
    pinned = contract.get("signature")
    if pinned is not None:
        _signature_holds(sig, pinned)
    if _has_text(contract):
        _text_holds(_source(fn), contract)


def _signature_holds(sig: inspect.Signature, pinned: list[dict]) -> None:
    actual = list(sig.parameters.values())
    if [(p.name, p.kind) for p in actual] != [(p["name"], _KINDS[p["kind"]]) for p in pinned]:
        raise Fails(f"signature is {sig}")
    for have, pin in zip(actual, pinned, strict=True):
        has_default = have.default is not inspect.Parameter.empty
        if has_default != (pin["default"] is not None):
            raise Fails(f"signature is {sig}: default of {have.name}")
        if not has_default:
            continue
        try:
            wanted = ast.literal_eval(pin["default"])
        except (ValueError, SyntaxError):
            if repr(have.default) != pin["default"]:
                said = f"default of {have.name}: {pin['default']} is not a literal"
                raise Undecided(said) from None
            continue
        if have.default != wanted or type(have.default) is not type(wanted):
            raise Fails(f"signature is {sig}: default of {have.name}")


def _class_holds(cls, contract: dict) -> None:
    own = contract.get("own", False)
    for name in contract.get("methods", []):
        if own and name not in vars(cls):
            raise Fails(f"{cls.__name__} does not define {name} in its own body")
        if not own and not hasattr(cls, name):
            raise Fails(f"{cls.__name__} has no {name}")
    for base in contract.get("bases", []):
        last = base.rsplit(".", 1)[-1]
        if not any(b.__name__ == last for b in cls.__bases__):
            raise Fails(f"bases of {cls.__name__} are {[b.__name__ for b in cls.__bases__]}")
    for key in ("attributes", "assignable", "no_methods_beyond"):
        if contract.get(key):
            raise Undecided(f"{key}: bound on instances, not asked of the class here")
    if _has_text(contract):
        _text_holds(_source(cls), contract)


def _holds(contract: dict) -> None:
    """Returns when the contract holds; raises Fails or Undecided."""
    if contract.get("globals_bound"):
        raise Undecided("globals_bound: what a copied function's globals need is not asked here")
    module = _import(contract["module"])
    kind, name = contract.get("kind"), contract.get("name") or ""
    if kind is None:
        if _has_text(contract):
            _text_holds(_source(module), contract)
        return
    if kind == "symbol":
        found = _attribute(module, name)
        if _has_text(contract):
            bound_as = (getattr(found, "__module__", None), getattr(found, "__name__", None))
            if bound_as != (module.__name__, name):
                # an import or an alias: the text a check reads is the binding statement's
                raise Undecided("text of a symbol bound as another name: its statement")
            _text_holds(_source(found), contract)
        return
    if kind == "class":
        _class_holds(_class(module, name), contract)
        return
    owner, _, method = name.rpartition(".")
    if not owner:
        fn = _attribute(module, name)
        if not callable(fn) or isinstance(fn, type):
            raise Fails(f"{module.__name__}.{name} is {type(fn).__name__}, not a function")
        if not _defined_in(fn, module):
            raise Fails(f"{name} is defined in {getattr(fn, '__module__', '?')}")
        _function_holds(fn, contract, False)
        return
    cls = _class(module, owner)
    fn, binds_first = _method(cls, method, contract.get("own", False))
    _function_holds(fn, contract, binds_first)


def judge(check: dict) -> dict[str, str]:
    """A check's truth: holds when an alternative holds, else undecided when one is, else
    fails (with every alternative's reason)."""
    reasons, undecided = [], []
    for contract in check["alternatives"]:
        try:
            _holds(contract)
        except Fails as exc:
            reasons.append(str(exc))
        except Undecided as exc:
            undecided.append(str(exc))
        except Exception as exc:  # an upstream may raise anything
            undecided.append(f"{type(exc).__name__}: {str(exc)[:200]}")
        else:
            return {"truth": HOLDS, "why": ""}
    if undecided:
        return {"truth": UNDECIDED, "why": "; ".join(undecided)}
    return {"truth": FAILS, "why": "; ".join(reasons)}


def main() -> int:
    warnings.simplefilter("ignore")
    checks = json.load(sys.stdin)
    out = {check["key"]: judge(check) for check in checks}
    sys.stdout.write(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
