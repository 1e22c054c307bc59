"""What a class body binds at class level, read at index time: its annotated fields (as a
dataclass reads them), the names it assigns, a literal `__slots__`, and what generates its
`__init__` (`@dataclass(...)`, `typing.NamedTuple`, or `dataclass(cls, ...)` called in its
`__init_subclass__`, which transformers 5's `PreTrainedConfig` applies to every config class).
"""

from __future__ import annotations

import ast

from canary.analysis.model import Field, Generator
from canary.analysis.parameters import source_text

#: Decorators and calls that make a class a dataclass (the last dotted part is enough).
_DATACLASS = ("dataclass",)
#: attrs' class decorators (`attr.s`, `attrs.define`, ...) -> their `auto_attribs` default (None:
#: guessed from the body). Whether the name really is attrs' is decided from the module's imports
#: when the `__init__` is synthesized (canary.analysis.generated).
ATTRS_DECORATORS: dict[str, bool | None] = {
    "s": False,
    "attrs": False,
    "dataclass": True,
    "define": None,
    "mutable": None,
    "frozen": None,
}
#: Bases whose subclasses get a generated `__new__` over their annotated fields.
_NAMEDTUPLE = ("NamedTuple", "typing.NamedTuple")
#: Calls that declare a field with options (`field(default=..., init=False)`, huggingface_hub's
#: `validated_field(...)`, attrs' `attrs.field(...)`), by how their name ends; attrs' `attr.ib(...)`
#: and `attr.attrib(...)` by their whole last part.
_FIELD_CALLS = ("field",)
_ATTRS_FIELD_CALLS = ("ib", "attrib")


def _last(text: str) -> str:
    return text.rsplit(".", 1)[-1]


def _flag(call: ast.Call, name: str, default: bool) -> bool:
    for keyword in call.keywords:
        if keyword.arg == name and isinstance(keyword.value, ast.Constant):
            return bool(keyword.value.value)
    return default


def _constant_flag(node: ast.expr | None) -> bool | None:
    """A literal flag's truth (`field(kw_only=True)`); None when it is not literal or is
    `None`, so the class decides."""
    if not isinstance(node, ast.Constant) or node.value is None:
        return None
    return bool(node.value)


def _dataclass_generator(node: ast.expr, how: str, *, attrs: bool = False) -> Generator | None:
    """`@dataclass`, `@dataclasses.dataclass(kw_only=True, init=False)`, and (with `attrs`)
    attrs' `@attr.s(auto_attribs=True)`, `@define` and the like."""
    callee = source_text(node.func if isinstance(node, ast.Call) else node) or ""
    last = _last(callee)
    if last not in _DATACLASS and not (attrs and last in ATTRS_DECORATORS):
        return None
    auto = ATTRS_DECORATORS.get(last, True)
    if not isinstance(node, ast.Call):
        return Generator(how, decorator=callee, auto_attribs=auto)
    if any(k.arg == "auto_attribs" for k in node.keywords):
        auto = _flag(node, "auto_attribs", False)
    return Generator(
        how, _flag(node, "init", True), _flag(node, "kw_only", False), callee, auto_attribs=auto
    )


def generator(node: ast.ClassDef) -> Generator | None:
    """What generates the class's own `__init__`, if anything does."""
    for decorator in node.decorator_list:
        found = _dataclass_generator(decorator, "@dataclass", attrs=True)
        if found is not None:
            return found
    if any(source_text(base) in _NAMEDTUPLE for base in node.bases):
        return Generator("NamedTuple")
    return None


def subclass_generator(node: ast.FunctionDef | ast.AsyncFunctionDef) -> Generator | None:
    """`dataclass(cls, kw_only=True, ...)` called in an `__init_subclass__`'s body."""
    if node.name != "__init_subclass__" or not node.args.args:
        return None
    first = node.args.args[0].arg
    for child in ast.walk(node):
        if (
            isinstance(child, ast.Call)
            and child.args
            and isinstance(child.args[0], ast.Name)
            and child.args[0].id == first
        ):
            found = _dataclass_generator(child, "dataclass() in __init_subclass__")
            if found is not None:
                return found
    return None


def _annotation_kind(annotation: str) -> str:
    head = _last(annotation.split("[", 1)[0])
    if head == "ClassVar":
        return "classvar"
    if head == "InitVar":
        return "initvar"
    if head == "KW_ONLY":
        return "kw_only"
    return "field"


def _declares(value: ast.Call, options: dict[str, ast.expr]) -> bool:
    """Whether the call declares a field with options rather than computing a plain default."""
    last = _last(source_text(value.func) or "")
    return (
        last.endswith(_FIELD_CALLS)
        or last in _ATTRS_FIELD_CALLS
        or (
            isinstance(value.func, ast.Call)  # huggingface_hub's `interval(min=0)(default=0.02)`
            and bool({"default", "default_factory"} & options.keys())
        )
    )


def _field(name: str, annotation: str | None, value: ast.expr | None, line: int) -> Field | None:
    """The field a class-level binding declares; None for an unannotated one that is no
    field call (a plain class attribute)."""
    kind = _annotation_kind(annotation or "")
    call = value if isinstance(value, ast.Call) else None
    options = {k.arg: k.value for k in call.keywords if k.arg} if call else {}
    if call is None or not _declares(call, options):
        if annotation is None:
            return None
        return Field(name, annotation, source_text(value), kind, line=line)
    default = source_text(options.get("default"))
    if {"default_factory", "factory"} & options.keys():
        default = "<factory>"
    init, kw_only, alias = options.get("init"), options.get("kw_only"), options.get("alias")
    return Field(
        name,
        annotation,
        default,
        kind,
        init=not (isinstance(init, ast.Constant) and init.value is False),
        kw_only=_constant_flag(kw_only),
        line=line,
        declared=True,
        alias=alias.value
        if isinstance(alias, ast.Constant) and isinstance(alias.value, str)
        else None,
    )


def body_records(body: list[ast.stmt]) -> tuple[tuple[Field, ...], dict[str, int], tuple[str, ...]]:
    """The class body's annotated fields, the names it binds at class level (with their
    lines), and its literal `__slots__`."""
    fields: list[Field] = []
    assigned: dict[str, int] = {}
    slots: tuple[str, ...] = ()
    for node in body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            annotation = source_text(node.annotation) or ""
            found = _field(node.target.id, annotation, node.value, node.lineno)
            fields.extend([found] if found else [])
            if node.value is not None:
                assigned.setdefault(node.target.id, node.lineno)
        elif isinstance(node, ast.Assign):
            only = node.targets[0] if len(node.targets) == 1 else None
            if isinstance(only, ast.Name):  # `x = attr.ib(...)`: an attrs field
                found = _field(only.id, None, node.value, node.lineno)
                fields.extend([found] if found else [])
            for target in node.targets:
                for name in _names(target):
                    assigned.setdefault(name, node.lineno)
            if any(isinstance(t, ast.Name) and t.id == "__slots__" for t in node.targets):
                slots = _slot_names(node.value)
    return tuple(fields), assigned, slots


def _names(target: ast.expr) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Tuple | ast.List):
        return [name for element in target.elts for name in _names(element)]
    return []


def _slot_names(node: ast.expr) -> tuple[str, ...]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return (node.value,)
    if isinstance(node, ast.Tuple | ast.List):
        return tuple(
            e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)
        )
    return ()
