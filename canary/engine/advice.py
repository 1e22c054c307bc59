"""What the upstream itself said of a name before it removed it: a deprecation message in the
last release that had the name (`"X will be removed in v0.19.0, use Y instead"` in a
`warnings.warn`, a `@deprecated(...)` on its definition, an entry of a `deprecate_kwarg` or
deprecated-attribute table, a changelog line shipped in the package).

Upstream's own word is worth more than a guess by similar names, so `canary explain` says it
first. Static like everything else: the release's text is searched, nothing is imported.
Bounded like the search for a moved definition (at most MAX_SEARCH_MODULES files and
MAX_SEARCH_BYTES, likeliest first: the check's module, its package's folder, then the rest),
and only a file whose bytes hold the name is tokenized.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator

from canary.engine.became import (
    EXPLAIN_DIFF_LINES,
    Explanation,
    explain,
    gone_name,
    logical_lines,
)
from canary.engine.judge import VersionRun
from canary.engine.outcomes import Place
from canary.engine.whereabouts import MAX_SEARCH_BYTES, MAX_SEARCH_MODULES, opened, read_files
from canary.matrix.model import Contract

#: words upstream uses when it says a name is going: the message must hold one of them
CUE = re.compile(
    r"deprecat|will be removed|to be removed|removed in|has been removed|no longer|renamed"
    r"|\bmoved to\b|replaced by|\binstead\b|FutureWarning",
    re.IGNORECASE,
)
#: a string literal, its prefix and quotes (f-strings too: their text is shown as written)
_LITERAL = re.compile(
    r"""(?<![\w])[rRbBuUfF]{0,2}("{3}|'{3}|"|')((?:\\.|(?!\1)[^\\])*)\1""", re.DOTALL
)
_DEFINITION = re.compile(r"(?:async\s+)?(?:def|class)\s+(\w+)")
#: words before a name that make it the replacement, not the thing going ("use `max_length`")
_REPLACEMENT = re.compile(r"\b(?:use|using|replaced by|in favou?r of|moved to|renamed to)\b", re.I)
#: a message of a definition's body that speaks of the definition itself
_ITSELF = re.compile(r"\b(?:this|the)\s+(?:class|function|method|module|trainer|callback)\b", re.I)
#: files of a package that keep its history (shipped in some sdists and every git tree)
_CHANGELOG = re.compile(r"(?:^|/)(?:CHANGELOG|CHANGES|HISTORY|NEWS|RELEASE)[^/]*$", re.I)
#: how much of a message is shown, and how many statements of a definition's body are read
MESSAGE_CHARS = 300
BODY_STATEMENTS = 40
MAX_ADVICE = 3


def advised(contract: Contract, old: VersionRun, new: VersionRun) -> Explanation:
    """`canary explain`'s account of a break: what the subject became, its diff (up to
    EXPLAIN_DIFF_LINES), and what `old`'s release said of the name `new` no longer has."""
    told = explain(contract, old, new, EXPLAIN_DIFF_LINES)
    name = gone_name(contract, new)
    if name is None:
        return told
    return dataclasses.replace(told, advice=upstream_advice(old, name, contract.module))


def upstream_advice(run: VersionRun, name: str, module: str) -> tuple[Place, ...]:
    """What the release `run` (the last one that had `name`) says of it: the messages naming
    it, else the warnings in (or decorators on) its own definition, else a table's entries
    or changelog lines (a weaker kind adds only noise beside a stronger); at most
    MAX_ADVICE, each with its file and line (made showable: it is upstream text)."""
    tree = opened(run)
    paths = [p for p in tree.files() or () if p.endswith(".py") or _CHANGELOG.search(p)]
    if not paths:
        paths = [module.replace(".", "/") + ".py", module.replace(".", "/") + "/__init__.py"]
    word = re.compile(rf"(?<![\w]){re.escape(name)}(?!\w)")
    found: list[tuple[int, int, Place]] = []
    budget = MAX_SEARCH_BYTES
    for order, (path, data) in enumerate(read_files(tree, _likeliest(paths, module))):
        budget -= len(data)
        if name.encode() in data:
            text = data.decode("utf-8", "replace")
            for rank, line, said in _said(text, path, word):
                found.append((rank, order, Place(said, path, line)))
        if order + 1 >= MAX_SEARCH_MODULES or budget <= 0:
            break
    found.sort(key=lambda item: (item[0], item[1], item[2].line))
    best = [place for rank, _, place in found if rank == found[0][0]] if found else []
    return tuple(dict.fromkeys(best))[:MAX_ADVICE]


def _likeliest(paths: list[str], module: str) -> list[str]:
    """The check's module first, then the files of its package's folder, then the rest."""
    own = module.replace(".", "/")
    folder = own.rsplit("/", 1)[0] + "/" if "/" in own else own + "/"

    def rank(path: str) -> tuple[int, str]:
        if path in (f"{own}.py", f"{own}/__init__.py"):
            return 0, path
        return (1 if path.startswith(folder) else 2), path

    return sorted(paths, key=rank)


def _said(text: str, path: str, word: re.Pattern[str]) -> Iterator[tuple[int, int, str]]:
    """(rank, line, message) of what the file says of the name: 0 a message that names it,
    1 a warning in (or a decorator on) its definition, 2 a table entry or a changelog line.
    A docstring is no message: it describes, and names deprecated parameters among others."""
    if not path.endswith(".py"):
        for at, line in enumerate(text.split("\n")):
            if word.search(line) and CUE.search(line):
                yield 2, at + 1, _cut(line.strip())
        return
    physical = text.split("\n")
    statements = logical_lines(text)
    for index, (at, statement) in enumerate(statements):
        if not word.search(statement) or _LITERAL.match(statement):
            continue
        if _defines(statement, word):
            yield from _in_definition(statements, index, physical)
            continue
        if not CUE.search(statement) or _DEFINITION.match(statement):
            continue  # a signature naming a deprecated parameter says nothing of where it goes
        message = _message(statement, word)
        if message:
            yield 0, at + 1, message
            continue
        # a table (a call or a mapping): the physical line with the name is its entry, said
        # deprecated on that line or by the table's head
        row = next((i for i in range(at, len(physical)) if word.search(physical[i])), at)
        if CUE.search(physical[row]) or CUE.search(physical[at]):
            yield 2, row + 1, _cut(physical[row].strip())


def _defines(statement: str, word: re.Pattern[str]) -> bool:
    head = _DEFINITION.match(statement)
    return head is not None and word.fullmatch(head.group(1)) is not None


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _in_definition(
    statements: list[tuple[int, str]], index: int, physical: list[str]
) -> Iterator[tuple[int, int, str]]:
    """A deprecation said by the decorators right above the definition, or by a warning in
    its first BODY_STATEMENTS statements (a class's own methods included) that speaks of
    the thing itself ("This class is deprecated ..."), not of one of its parameters."""
    before = index - 1
    while before >= 0 and statements[before][1].startswith("@"):
        at, decorator = statements[before]
        if CUE.search(decorator):
            yield 1, at + 1, _message(decorator, None) or _cut(decorator)
        before -= 1
    depth = _indent(physical[statements[index][0]])
    for at, statement in statements[index + 1 : index + 1 + BODY_STATEMENTS]:
        if _indent(physical[at]) <= depth:
            break
        message = _message(statement, _ITSELF) if not _LITERAL.match(statement) else ""
        if message:
            yield 1, at + 1, message


def _message(statement: str, word: re.Pattern[str] | None) -> str:
    """The statement's string literals that say it (hold a cue, and the name when `word`, as
    the thing going rather than its replacement), adjacent literals joined as Python joins
    them."""
    groups: list[list[str]] = []
    end = -1
    for match in _LITERAL.finditer(statement):
        if groups and not statement[end : match.start()].strip():
            groups[-1].append(match.group(2))
        else:
            groups.append([match.group(2)])
        end = match.end()
    for group in groups:
        said = "".join(group)
        named = word.search(said) if word is not None else None
        if CUE.search(said) and (
            word is None or (named and not _REPLACEMENT.search(said[: named.start()]))
        ):
            return _cut(" ".join(said.split()))
    return ""


def _cut(text: str) -> str:
    return text if len(text) <= MESSAGE_CHARS else text[: MESSAGE_CHARS - 1] + "…"
