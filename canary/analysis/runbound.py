"""Module-level names a function binds with `global` when it runs, not when the module is
imported: transformers binds its lazily loaded kernels so in a mixer's `__init__` (`global
causal_conv1d_fn; causal_conv1d_fn = ...`). Such a name is missing right after the import and
there once that function has run, so whether a client finds it depends on when it reads it:
neither `pass` nor `fail`, said so.

Read from the masked text (strings and comments blanked), so only on the way to a failure: one
search of the module's text for the `global` statement, the enclosing `def` and `class` found
by their indentation above it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from canary.analysis.lines import line_at
from canary.analysis.model import ModuleInfo
from canary.analysis.skeleton import mask_text, python_newlines

_GLOBAL = re.compile(r"^([ \t]+)global[ \t]+(\w+(?:[ \t]*,[ \t]*\w+)*)", re.MULTILINE)
_DEFINES = re.compile(r"^([ \t]*)(?:async[ \t]+)?(def|class)[ \t]+(\w+)", re.MULTILINE)


@dataclass(frozen=True)
class RunBinding:
    """Where a function binds a module-level name when it runs."""

    function: str  # its qualified name in the module: "FalconH1Mixer.__init__"
    line: int  # the line of its `global` statement

    def said(self, module: ModuleInfo, name: str) -> str:
        return (
            f"{name} is not bound when {module.name} is imported: {self.function} binds it "
            f"(`global {name}` at line {self.line}) once it runs, to a value canary does "
            "not follow"
        )


def bound_when_run(module: ModuleInfo, name: str) -> RunBinding | None:
    """The function of `module` that binds `name` with a `global` statement, if one does."""
    if "global" not in module.text or name not in module.text:
        return None  # the common case, at C speed
    text = python_newlines(module.text)
    masked = mask_text(text)
    masked = text if masked is None else masked[1:]  # (mask_text puts a newline first)
    for match in _GLOBAL.finditer(masked):
        names = {n.strip() for n in match.group(2).split(",")}
        if name not in names:
            continue
        owners = _owners(masked[: match.start()], len(match.group(1)))
        if owners:
            return RunBinding(".".join(owners), line_at(masked, match.start(1)))
    return None


def _owners(before: str, indent: int) -> list[str]:
    """The names of the `def`s and `class`es that enclose a statement indented `indent`,
    outermost first, from the text `before` it."""
    owners: list[str] = []
    for match in reversed(list(_DEFINES.finditer(before))):
        depth = len(match.group(1))
        if depth < indent:
            owners.insert(0, match.group(3))
            indent = depth
            if depth == 0:
                break
    return owners
