"""Evaluate one contract against the modules of one upstream version.

A contract either holds (None) or fails with a detail a maintainer can act on: what is missing
and, where cheap, what is there instead.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable

from canary.analysis import ClassInfo, FunctionInfo, ModuleInfo
from canary.matrix import Contract

#: Looks a dotted module name up; None when the module does not exist in this version.
ModuleLookup = Callable[[str], ModuleInfo | None]


def _similar(name: str, candidates: Iterable[str], label: str) -> str:
    close = difflib.get_close_matches(name, list(candidates), n=3, cutoff=0.6)
    return f" ({label} {', '.join(close)})" if close else ""


def _imported(module: ModuleInfo, name: str, what: str) -> str | None:
    """Detail for a name that is bound by import here but defined elsewhere."""
    for binding in module.bindings.get(name, []):
        if binding.kind == "import" and binding.origin:
            origin = binding.origin.rsplit(".", 1)[0] if binding.origin.endswith(name) else None
            where = f", defined in {origin}" if origin else f" (from {binding.origin})"
            return f"{what} {name} is imported here{where}"
    return None


def _missing_name(module: ModuleInfo, name: str, what: str, pool: Iterable[str]) -> str:
    imported = _imported(module, name, what)
    if imported:
        return imported
    detail = f"{module.name} has no {what} {name}{_similar(name, pool, 'similar:')}"
    if module.star_imports:
        detail += f"; it star-imports {', '.join(module.star_imports)}"
    return detail


def _source_detail(source: str, subject: str, contract: Contract) -> str | None:
    for text in contract.contains:
        if text not in source:
            return f"source of {subject} lacks {text!r}"
    for pattern in contract.matches:
        if not pattern.search(source):
            return f"no match for /{pattern.pattern}/ in source of {subject}"
    for text in contract.not_contains:
        if text in source:
            line = source[: source.index(text)].count("\n") + 1
            return f"source of {subject} contains {text!r} (its line {line})"
    return None


def _class_detail(module: ModuleInfo, cls: ClassInfo, contract: Contract) -> str | None:
    for method in contract.methods:
        if method not in cls.methods:
            return _no_method(cls, method)
    for base in contract.bases:
        if not any(_base_matches(actual, base) for actual in cls.bases):
            return f"bases of {cls.name} are ({', '.join(cls.bases)})"
    return _source_detail(module.segment(cls.span), f"class {cls.name}", contract)


def _base_matches(actual: str, wanted: str) -> bool:
    actual = actual.split("[", 1)[0]
    return actual == wanted or actual.rsplit(".", 1)[-1] == wanted.rsplit(".", 1)[-1]


def _no_method(cls: ClassInfo, method: str) -> str:
    close = difflib.get_close_matches(method, list(cls.methods), n=3, cutoff=0.6)
    has = f" (has {', '.join(close)})" if close else ""
    return f"{cls.name} has no method {method}{has}"


def _function_detail(
    module: ModuleInfo, fn: FunctionInfo, qualname: str, contract: Contract
) -> str | None:
    missing = [p for p in contract.params if p not in fn.params]
    if missing:
        return f"params of {qualname} are ({', '.join(fn.params)}); missing {', '.join(missing)}"
    return _source_detail(module.segment(fn.span), qualname, contract)


def _first_holding(variants: list, detail_of: Callable[[object], str | None]) -> str | None:
    """Names defined twice (if/else branches) hold when any definition satisfies the check."""
    detail = None
    for variant in variants:
        detail = detail_of(variant)
        if detail is None:
            return None
    return detail


def _class_variants(module: ModuleInfo, name: str) -> list[ClassInfo] | str:
    variants = module.classes.get(name)
    if not variants:
        return _missing_name(module, name, "class", module.classes)
    return variants


def _binding_module(
    module: ModuleInfo, name: str, lookup: ModuleLookup, seen: set[str]
) -> ModuleInfo | None:
    """The module whose scope binds `name`: this one, or one it star-imports (transitively).

    A star import binds every public name of its module, so a symbol reached that way is
    bound here too; modules outside this upstream's tree are unknown and bind nothing. The
    chain is walked depth first with a stack, not recursion: an upstream may chain thousands.
    """
    if name in module.bindings:
        return module
    if name.startswith("_"):
        return None
    pending: list[ModuleInfo | str] = [module]
    while pending:
        item = pending.pop()
        current = lookup(item) if isinstance(item, str) else item
        if current is None or current.name in seen:
            continue
        if name in current.bindings:
            return current
        seen.add(current.name)
        pending.extend(o for o in reversed(current.star_imports) if o not in seen)
    return None


def evaluate(contract: Contract, lookup: ModuleLookup) -> str | None:
    """None when the contract holds, else the failure detail."""
    module = lookup(contract.module)
    if module is None:
        return f"module {contract.module} not found"
    if contract.symbol is not None:
        owner = _binding_module(module, contract.symbol, lookup, set())
        if owner is None:
            return _missing_name(module, contract.symbol, "symbol", module.bindings)
        return _first_holding(
            owner.bindings[contract.symbol],
            lambda b: _source_detail(owner.segment(b.span), contract.symbol, contract),
        )
    if contract.class_ is not None:
        variants = _class_variants(module, contract.class_)
        if isinstance(variants, str):
            return variants
        return _first_holding(variants, lambda cls: _class_detail(module, cls, contract))
    if contract.function is not None:
        return _evaluate_function(module, contract)
    return _source_detail(module.text, f"module {module.name}", contract)


def _evaluate_function(module: ModuleInfo, contract: Contract) -> str | None:
    name = contract.function
    if "." not in name:
        variants = module.functions.get(name)
        if not variants:
            return _missing_name(module, name, "function", module.functions)
        return _first_holding(variants, lambda fn: _function_detail(module, fn, name, contract))
    class_name, method = name.split(".")
    classes = _class_variants(module, class_name)
    if isinstance(classes, str):
        return classes

    def in_class(cls: ClassInfo) -> str | None:
        methods = cls.methods.get(method)
        if not methods:
            return _no_method(cls, method)
        return _first_holding(methods, lambda fn: _function_detail(module, fn, name, contract))

    return _first_holding(classes, in_class)


def evaluate_any(alternatives: tuple[Contract, ...], lookup: ModuleLookup) -> str | None:
    details = []
    for i, alternative in enumerate(alternatives, 1):
        detail = evaluate(alternative, lookup)
        if detail is None:
            return None
        details.append(f"({i}) {detail}")
    return "none of the alternatives holds: " + "; ".join(details)
