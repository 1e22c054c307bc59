"""YAML loading that remembers the line of every mapping key and list item.

Load errors must name the line a maintainer has to edit, so the plain `safe_load`
(which forgets positions) is not enough.
"""

from __future__ import annotations

import re
from collections.abc import Hashable
from typing import Any, TypeVar

import yaml

from canary.errors import CanaryError

#: what YAML counts as a line break (YAML 1.1, as PyYAML and libyaml read it): besides \n and
#: \r\n, a lone \r, NEL (U+0085) and the Unicode line and paragraph separators
LINE_BREAK = re.compile("\r\n|[\r\n\x85\u2028\u2029]")


def line_at(text: str, position: int) -> int:
    """The 1-based line of `position`, counted the way the loader's marks count lines."""
    return len(LINE_BREAK.findall(text, 0, position)) + 1


def reader_error_line(text: str, error: yaml.reader.ReaderError) -> int:
    """The line of a character the reader refused: such errors carry only a position, in
    characters from PyYAML's reader but in UTF-8 bytes from libyaml's."""
    position = error.position
    if LIBYAML:
        position = len(text.encode("utf-8")[:position].decode("utf-8", "ignore"))
    return line_at(text, position)


class MarkedDict(dict[Any, Any]):
    """A mapping that knows its own line and the line of each key."""

    line: int
    lines: dict[Any, int]


class MarkedList(list[Any]):
    """A sequence that knows its own line and the line of each item."""

    line: int
    lines: list[int]


class DuplicateKeyError(yaml.MarkedYAMLError, CanaryError):
    """PyYAML silently keeps the last of two equal keys; a matrix must not."""


#: whether PyYAML was built with libyaml
LIBYAML = hasattr(yaml, "CSafeLoader")


class _Loader(yaml.CSafeLoader if LIBYAML else yaml.SafeLoader):  # type: ignore[misc]
    """libyaml's parser when PyYAML has it (several times faster); marks work the same."""


def _line(node: yaml.Node) -> int:
    return node.start_mark.line + 1


def _construct_mapping(loader: _Loader, node: yaml.MappingNode) -> MarkedDict:
    loader.flatten_mapping(node)
    result = MarkedDict()
    result.line = _line(node)
    result.lines = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        if not isinstance(key, Hashable):  # `? [a, b]` or `? {a: 1}`: YAML allows, dict cannot
            raise yaml.constructor.ConstructorError(
                "while constructing a mapping",
                node.start_mark,
                "found unhashable key",
                key_node.start_mark,
            )
        if key in result:
            raise DuplicateKeyError(
                "while constructing a mapping",
                node.start_mark,
                f"found duplicate key {key!r}",
                key_node.start_mark,
            )
        result[key] = loader.construct_object(value_node, deep=True)
        result.lines[key] = _line(key_node)
    return result


def _construct_sequence(loader: _Loader, node: yaml.SequenceNode) -> MarkedList:
    result = MarkedList(loader.construct_object(child, deep=True) for child in node.value)
    result.line = _line(node)
    result.lines = [_line(child) for child in node.value]
    return result


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, _construct_sequence)


def load(text: str) -> Any:
    """Parse one YAML document; raises yaml.YAMLError (with a mark) on bad input."""
    return yaml.load(text, Loader=_Loader)


#: what `line_of` answers when the line is unknown (a line, or None for "no line")
Default = TypeVar("Default", int, None)


def line_of(container: Any, key: Any, default: Default) -> int | Default:
    """Line of `key` inside a marked container, or `default` when unknown."""
    if isinstance(container, MarkedDict):
        return container.lines.get(key, default)
    if isinstance(container, MarkedList) and isinstance(key, int) and key < len(container.lines):
        return container.lines[key]
    return default
