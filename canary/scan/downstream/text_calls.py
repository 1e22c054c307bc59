"""Calls that look for a text in an upstream source: `src.replace("old", ...)`,
`src.find(...)`, `re.search(r"...", src)`, `PATTERN.sub(..., src)`, and a probe of every
text of a list, `all(k in src for k in KEYS)`.

Each gives the source and what the call needs to find there; the visitor decides whether
that says something about upstream and records it.
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Iterator
from dataclasses import dataclass

from canary.scan.downstream.node_values import argument, inline_flags, with_flags
from canary.scan.downstream.text_flow import Source, TextFlow

# str methods that look for their first argument in the text: it must be there
_SEEKS_TEXT = frozenset(
    {"replace", "find", "rfind", "index", "rindex", "count", "split", "rsplit", "partition"}
    | {"rpartition", "startswith", "endswith"}
)
# re functions -> (position of the string argument, position of flags)
_RE_FUNCTIONS = {
    "search": (1, 2),
    "match": (1, 2),
    "fullmatch": (1, 2),
    "findall": (1, 2),
    "finditer": (1, 2),
    "split": (1, 3),
    "sub": (2, 4),
    "subn": (2, 4),
}
# the same as methods of a compiled pattern: position of the string argument
_PATTERN_METHODS = {"search": 0, "match": 0, "fullmatch": 0, "findall": 0, "finditer": 0}
_PATTERN_METHODS |= {"split": 0, "sub": 1, "subn": 1}


@dataclass(frozen=True)
class Sought:
    """`source` (None: not a known source) must hold one of `texts`, or match `regex`."""

    source: Source | None
    node: ast.AST
    texts: tuple[str, ...] = ()
    regex: str | None = None
    replacement: str | None = None  # what `.replace(old, new)` puts in old's place
    replacing: bool = False  # a `.replace` (its replacement known or not)
    template: str | None = None  # the name the replacement is filled from (template.py)


def filled(replacement: ast.expr | None) -> str | None:
    """The name a replacement is filled in from, `body.replace("__X__", "inputs")` or
    `body.format(...)`: two rewrites of one source putting in the same template, filled
    differently, rewrite two spellings of one fragment (either will do)."""
    if not (isinstance(replacement, ast.Call) and isinstance(replacement.func, ast.Attribute)):
        return None
    owner = replacement.func.value
    if isinstance(owner, ast.Name):
        return owner.id
    return filled(owner)


def sought(call: ast.Call, flow: TextFlow, unsought: Collection[int] = ()) -> Iterator[Sought]:
    """What `call` looks for, in source order of the four shapes; an `all(...)` probe whose
    id is in `unsought` (an `if` handling its failure: guards.handled_probes) seeks nothing."""
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr in _SEEKS_TEXT and call.args:
        source = flow.source_of(func.value)
        new = flow.text(argument(call, 1, "new")) if func.attr == "replace" else None
        replacing = func.attr == "replace"
        texts = flow.texts(call.args[0])
        template = filled(argument(call, 1, "new")) if replacing else None
        yield Sought(source, call.args[0], texts, None, new, replacing, template)
    if isinstance(func, ast.Attribute) and func.attr in _PATTERN_METHODS:
        pattern = flow.pattern_of(func.value)
        string = argument(call, _PATTERN_METHODS[func.attr], "string")
        regex = pattern.regex if pattern else None
        template = filled(argument(call, 0, "repl")) if func.attr in ("sub", "subn") else None
        yield Sought(flow.source_of(string), call, regex=regex, template=template)
    parts = flow.parts(func)
    if len(parts) == 2 and parts[0] == "re" and parts[1] in _RE_FUNCTIONS:
        string_at, flags_at = _RE_FUNCTIONS[parts[1]]
        pattern_node = argument(call, 0, "pattern")
        regex = flow.text(pattern_node)
        flags = inline_flags(argument(call, flags_at, "flags"))
        string = argument(call, string_at, "string")
        regex = regex and with_flags(regex, flags)
        template = filled(argument(call, 1, "repl")) if parts[1] in ("sub", "subn") else None
        yield Sought(flow.source_of(string), pattern_node or call, regex=regex, template=template)
    if isinstance(func, ast.Name) and func.id == "all" and flow.scopes.lookup("all") is None:
        yield from () if id(call) in unsought else _each_present(call, flow)


def _each_present(call: ast.Call, flow: TextFlow) -> Iterator[Sought]:
    """`all(k in src for k in KEYS)` (or over a list comprehension, a literal list, a dict's
    values): src must hold each text. `any(...)` wants one of them: either will do, as with
    `"a" in src or "b" in src`, so it seeks nothing."""
    probe = call.args[0] if len(call.args) == 1 and not call.keywords else None
    if not (isinstance(probe, ast.GeneratorExp | ast.ListComp) and len(probe.generators) == 1):
        return
    loop, test = probe.generators[0], probe.elt
    if loop.ifs or not isinstance(loop.target, ast.Name) or not isinstance(test, ast.Compare):
        return
    if not (len(test.ops) == 1 and isinstance(test.ops[0], ast.In)):
        return
    if isinstance(test.left, ast.Name) and test.left.id == loop.target.id:
        texts = tuple(r[0] for r in flow.rows(loop.iter) if len(r) == 1 and r[0] is not None)
        yield Sought(flow.source_of(test.comparators[0]), call, texts)
