"""Texts a rewrite seeks in the source of a class chosen at run time, placed by searching the
newest release's files.

axolotl rewrites `inspect.getsource(attention_cls.forward)` with a table of (original,
patched) pairs, `attention_cls` being whatever attention class the model's config names;
unsloth-zoo and unsloth rewrite the source of whatever class their caller hands them. Scan
cannot tell which class that is, but each text must be upstream's somewhere: it is looked for,
byte for byte, in every module of the newest release read of each upstream the rest of the
file uses, and proposed as `contains` on each class whose source holds it, when at most
`MAX_HOLDERS` modules and classes do (in those upstreams together). A text no class of that
release holds, one held by more (which one the client meets is chosen at run time), and a site
seeking no literal text stay rewrites not placed, listed at the head of the matrix: a site
scan cannot place is never silent.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping

from canary.scan.downstream.findings import UNKNOWN, Role, Use, file_upstreams
from canary.scan.downstream.imports import Ref
from canary.scan.upstream.releases import Reading
from canary.scan.upstream.wildcards import held_on_newest

#: the most classes (and modules holding the text: no more are read) a text may be proposed on:
#: beyond, the check would name classes the client may never meet; the site is listed as not placed
MAX_HOLDERS = 3


def placed_anywhere(
    findings: list[Use], readings: Mapping[str, Reading], upstreams: frozenset[str]
) -> list[Use]:
    """`findings` with each text a rewrite of an unknown source seeks proposed on the classes
    of the newest release that hold it, or left a rewrite not placed."""
    used = file_upstreams(findings, upstreams)
    wanted: dict[str, set[str]] = {}
    for finding in findings:
        for upstream in _upstreams(finding, used, readings):
            wanted.setdefault(upstream, set()).add(finding.items[0])
    held = {
        (upstream, text): places
        for upstream, texts in wanted.items()
        for text, places in held_on_newest(
            readings[upstream], _files(upstream), texts, MAX_HOLDERS
        ).items()
    }
    result = []
    for finding in findings:
        searched = _upstreams(finding, used, readings)
        found = [held.get((u, finding.items[0])) for u in searched]
        places = [p for each in found for p in each or ()]
        if not places or len(places) > MAX_HOLDERS or [] in found:  # []: in too many modules
            result.append(finding)
            continue
        for module, name in places:
            parts = (*module.split("."), name)
            ref = Ref(parts, len(parts) - 1)
            result.append(dataclasses.replace(finding, role=Role.CONTAINS, ref=ref))
    return result


def _upstreams(
    finding: Use, used: Mapping[str, set[str]], readings: Mapping[str, Reading]
) -> list[str]:
    """The upstreams a text sought in an unknown source is looked for in: those the rest of
    its file uses that were read (none for a text of another kind of finding)."""
    if finding.role is not Role.UNPLACED or finding.ref != UNKNOWN or len(finding.items) != 1:
        return []
    return sorted(u for u in used.get(finding.file, set()) if u in readings)


def _files(upstream: str) -> str:
    """Every module file of the upstream's package."""
    return re.escape(upstream) + r"/(?:[A-Za-z0-9_]+/)*[A-Za-z0-9_]+\.py"
