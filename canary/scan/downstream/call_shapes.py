"""The shape of a call scan proposes as a `call:` check: how many positionals it passes and
which keywords, known only where nothing is spread into it (`*args`, `**kwargs`).

A shape is carried through proposals as one text ("2:a,b"), so call sites of the same shape
share a check and different shapes get one each.
"""

from __future__ import annotations

import ast


def call_shape(call: ast.Call) -> tuple[str, ...] | None:
    """(the positional count, then the keywords) of a call spreading nothing into it."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(
        k.arg is None for k in call.keywords
    ):
        return None
    return (str(len(call.args)), *dict.fromkeys(k.arg for k in call.keywords if k.arg))


def shape_text(items: tuple[str, ...]) -> str:
    """A finding's shape items as the one value of its `call` proposal."""
    return f"{items[0]}:{','.join(items[1:])}"


def shape_yaml(text: str) -> str:
    """`call: {args: N, keywords: [...]}`'s mapping for a shape text."""
    args, _, keywords = text.partition(":")
    names = ", ".join(k for k in keywords.split(",") if k)
    return f"{{args: {args}, keywords: [{names}]}}"


def stated_shape(value: object) -> str | None:
    """The shape text a user's `call:` mapping states (None when it is not one)."""
    if not isinstance(value, dict):
        return None
    args, keywords = value.get("args", 0), value.get("keywords") or []
    if type(args) is not int or not isinstance(keywords, list):
        return None
    return shape_text((str(args), *map(str, keywords)))
