"""Records of statements indexed from line 1, moved to the lines where the statements stand.

A statement's text repeats across releases (a class unchanged in a file that changed elsewhere,
the same `__all__`), but not on the same line: it is indexed once from line 1, and its records
(spans, a field's line, a class-level name's line) are moved down for each place it stands.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, TypeVar, overload

from canary.analysis.model import (
    Binding,
    ClassInfo,
    Decoded,
    Field,
    FunctionInfo,
    ModuleInfo,
    Span,
)

R = TypeVar("R", Binding, FunctionInfo, ClassInfo)
S = TypeVar("S", Binding, FunctionInfo)


def moved(record: R, lines: int) -> R:
    """`record` for its statement `lines` lines further down."""
    return relined(record, lambda line: line + lines)


@overload
def relined(record: ClassInfo, line_of: Callable[[int], int]) -> ClassInfo: ...


@overload
def relined(record: S, line_of: Callable[[int], int]) -> S: ...


def relined(record: Any, line_of: Callable[[int], int]) -> Any:
    """`record` with each of its lines `line_of` what it was; the record itself where none
    changes."""
    if isinstance(record, ClassInfo):
        return _class_relined(record, line_of)
    start, end = line_of(record.span.start), line_of(record.span.end)
    if start == record.span.start and end == record.span.end:
        return record
    return replace(record, span=Span(start, end))


def _class_relined(record: ClassInfo, line_of: Callable[[int], int]) -> ClassInfo:
    """A class record relined, its methods too when they are a plain table (a lazily parsed
    class moves its own)."""
    methods = record.methods
    if isinstance(methods, dict):
        methods = {name: [relined(f, line_of) for f in fs] for name, fs in methods.items()}
    return replace(
        record,
        span=Span(line_of(record.span.start), line_of(record.span.end)),
        methods=methods,
        fields=tuple(_field_relined(f, line_of) for f in record.fields),
        assigned={name: line_of(line) for name, line in record.assigned.items()},
    )


def _field_relined(field: Field, line_of: Callable[[int], int]) -> Field:
    """A field on its new line: copied by its attributes (`replace` cost 3 us a field, and a
    config class has hundreds)."""
    line = line_of(field.line)
    if line == field.line:
        return field
    moved = object.__new__(Field)
    moved.__dict__.update(field.__dict__, line=line)
    return moved


def _relined_table(
    table: Mapping[str, list[Any]], line_of: Callable[[int], int]
) -> Mapping[str, list[Any]]:
    """A record table relined name by name, as it is read (a check reads a few names)."""
    raw = table if isinstance(table, dict) else dict(table)
    return Decoded(raw, lambda _name, records: [relined(r, line_of) for r in records])


def relined_module(info: ModuleInfo, line_of: Callable[[int], int]) -> ModuleInfo:
    """The index `info` with each of its records' lines `line_of` what it was."""
    return replace(
        info,
        bindings=_relined_table(info.bindings, line_of),
        classes=_relined_table(info.classes, line_of),
        functions=_relined_table(info.functions, line_of),
        star_lines=[line_of(line) for line in info.star_lines],
    )


def moved_module(info: ModuleInfo, lines: int) -> ModuleInfo:
    """The index of statements indexed from line 1, for where they stand `lines` further down."""
    return info if lines == 0 else relined_module(info, lambda line: line + lines)
