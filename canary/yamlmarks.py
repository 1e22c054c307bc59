"""YAML loading that remembers the line of every mapping key and list item.

Load errors must name the line a maintainer has to edit, so the plain `safe_load`
(which forgets positions) is not enough.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import yaml


class MarkedDict(dict):
    """A mapping that knows its own line and the line of each key."""

    line: int
    lines: dict[Any, int]


class MarkedList(list):
    """A sequence that knows its own line and the line of each item."""

    line: int
    lines: list[int]


class DuplicateKeyError(yaml.MarkedYAMLError):
    """PyYAML silently keeps the last of two equal keys; a matrix must not."""


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
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


def line_of(container: Any, key: Any, default: int) -> int:
    """Line of `key` inside a marked container, or `default` when unknown."""
    if isinstance(container, MarkedDict):
        return container.lines.get(key, default)
    if isinstance(container, MarkedList) and isinstance(key, int) and key < len(container.lines):
        return container.lines[key]
    return default
