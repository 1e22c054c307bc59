"""Write proposals as SPEC matrix YAML: a whole new file, or checks appended to an existing one.

The YAML is written as text (not dumped from data) so that appending to a user's matrix keeps
every byte of their file, comments included, and new files read like hand-written ones.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import yaml

from canary.errors import CanaryError
from canary.safety.untrusted import showable
from canary.scan.downstream.call_shapes import shape_yaml, stated_shape
from canary.scan.proposing.ids import assign_ids
from canary.scan.proposing.propose import Proposal, ProposedSubject
from canary.scan.upstream.names import distribution

#: owner/repo, the folder holding the package in the repo and the branch its development
#: happens on, for the upstreams we know (others: the repository their release's metadata
#: names, canary.sources.repository, the package at the top and `main`)
KNOWN_REPOS = {
    "trl": ("huggingface/trl", "", "main"),
    "peft": ("huggingface/peft", "src", "main"),
    "transformers": ("huggingface/transformers", "src", "main"),
    "accelerate": ("huggingface/accelerate", "src", "main"),
    "bitsandbytes": ("bitsandbytes-foundation/bitsandbytes", "", "main"),
    "sentence_transformers": ("UKPLab/sentence-transformers", "", "master"),
    "vllm": ("vllm-project/vllm", "", "main"),
}
#: the branch of a repository found in a release's metadata
DEFAULT_BRANCH = "main"
# assertions whose values are names: a merge adds the names newly used to what a check lists
_NAME_LISTS = ("methods", "attributes", "accepts", "params")


class MergeError(CanaryError):
    """An existing matrix the proposals cannot be appended to; the message names the file."""


@dataclass(frozen=True)
class Releases:
    """The `versions.releases` of a new matrix and where it came from (a YAML comment)."""

    spec: str = ">=0"
    comment: str = "every release: narrow this to the releases you support"
    declared: str = ""  # the requirement as the project states it, when it has upper pins


def quote(text: str) -> str:
    """A YAML double-quoted scalar for any string: control characters escaped, and the line and
    paragraph separators too (YAML breaks a line at them and folds the spaces around them,
    so `a \u2028 b` would read back as `a\u2028b`)."""
    out = []
    for char in text:
        code = ord(char)
        if char in '"\\':
            out.append("\\" + char)
        elif char == "\n":
            out.append("\\n")
        elif char == "\t":
            out.append("\\t")
        elif (
            code < 0x20
            or 0x7F <= code <= 0x9F
            or char in "\u2028\u2029"
            or 0xD800 <= code <= 0xDFFF
            or code > 0xFFFD
        ):
            out.append(f"\\U{code:08x}" if code > 0xFFFF else f"\\u{code:04x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def comment(text: str) -> str:
    """Text for a `#` comment on one line: line breaks (YAML's too) and control characters
    escaped, so downstream text (a file name, a registry key) never starts a line of YAML."""
    return showable(text)


def render_checks(proposals: list[Proposal], ids: list[str], indent: int) -> str:
    """The block-sequence items of these checks, each line indented by `indent` spaces."""
    pad = " " * indent
    lines = []
    said: dict[str, str] = {}  # a note -> the id of the first check it was written above
    for check_id, proposal in zip(ids, proposals, strict=True):
        subject = proposal.subject
        lines += [f"{pad}# {comment(_once(note, check_id, said))}" for note in proposal.notes]
        if proposal.public:  # a notice: one line of the review, not five
            lines.append(f"{pad}- {_one_line(proposal, check_id)}")
            continue
        lines.append(f"{pad}- id: {check_id}")  # [a-z0-9-] by construction (ids.py)
        lines.append(f"{pad}  why: {quote(proposal.why)}")
        if not subject.alternatives:
            lines += _subject_lines(subject, f"{pad}  ")
            lines += _assertion_lines(proposal, f"{pad}  ")
        else:  # what the client imports when the first fails, the methods a rewriter reads
            lines.append(f"{pad}  any_of:")
            for alternative in (subject, *subject.alternatives):
                first, *rest = _subject_lines(alternative, f"{pad}      ")
                rest += _assertion_lines(proposal, f"{pad}      ")
                lines += [f"{pad}    - {first.lstrip()}", *rest]
        if proposal.gate:
            lines.append(f"{pad}  {_gate_line(proposal.gate)}")
        if proposal.severity != "error":
            lines.append(f"{pad}  severity: {quote(proposal.severity)}")
    return "".join(line + "\n" for line in lines)


def _one_line(proposal: Proposal, check_id: str) -> str:
    """A check of a public name as one flow mapping: `{id: x, why: "...", module: "m",
    symbol: "X", severity: "info"}`."""
    subject = proposal.subject
    pairs = [f"id: {check_id}", f"why: {quote(proposal.why)}", f"module: {quote(subject.module)}"]
    pairs += [f"symbol: {quote(subject.name or '')}", f"severity: {quote(proposal.severity)}"]
    return "{" + ", ".join(pairs) + "}"


def _once(note: str, check_id: str, said: dict[str, str]) -> str:
    """The note in full above the first check it is about; above the others its head and
    "as for ID above" (16 checks of a module added within the range share one detail)."""
    note = " ".join(note.split())
    first = said.setdefault(note, check_id)
    if first == check_id:
        return note
    return f"{note.split(' (', 1)[0].rstrip(',')}: as for {first} above"


def _assertion_lines(proposal: Proposal, pad: str) -> list[str]:
    if proposal.assertion == "call":
        return [f"{pad}call: {shape_yaml(proposal.values[0])}"]
    if proposal.assertion == "signature":
        return [f"{pad}signature: {quote(proposal.values[0])}"]
    if proposal.assertion == "globals_bound":
        given = ", ".join(quote(v) for v in proposal.values)
        return [f"{pad}globals_bound: true"] + [f"{pad}globals_given: [{given}]"] * bool(given)
    if proposal.assertion:
        values = ", ".join(quote(v) for v in proposal.values)
        return [f"{pad}{proposal.assertion}: [{values}]"]
    return []


def _subject_lines(subject: ProposedSubject, pad: str) -> list[str]:
    lines = [f"{pad}module: {quote(subject.module)}"]
    if subject.key:
        lines.append(f"{pad}{subject.key}: {quote(subject.name or '')}")
    return lines


def _gate_line(spec: str) -> str:
    """`since`/`until` for a one-sided range, else `versions`."""
    if "," not in spec and spec.startswith(">="):
        return f"since: {quote(spec[2:])}"
    if "," not in spec and spec.startswith("<") and not spec.startswith("<="):
        return f"until: {quote(spec[1:])}"
    return f"versions: {quote(spec)}"


def render_matrix(
    upstream: str,
    proposals: list[Proposal],
    releases: Releases,
    notes: Iterable[str] = (),
    repository: str | None = None,
) -> str:
    """A complete new matrix file for `upstream`; `notes` are comment lines for its head;
    `repository`: OWNER/NAME of an upstream KNOWN_REPOS lacks, as its release names it. A
    repository known either way is written with its branch under `include`, so the nightly
    (`--versions all`) reads upstream's development ahead of the releases."""
    github, src, branch = KNOWN_REPOS.get(upstream) or (repository, "", DEFAULT_BRANCH)
    lines = [
        "# Proposed by `canary scan`: review each check (the why says where it comes from).",
        *(f"# {comment(note)}" for note in notes),
        f"upstream: {distribution(upstream)}",  # an identifier (upstream_ids)
        f"package: {upstream}",
        f"pypi: {distribution(upstream)}",
        f"github: {github}" if github else "# github: OWNER/REPO  # needed to check branches",
        f"src: {quote(src)}",
        "",
        "versions:",
        f"  releases: {quote(releases.spec)}  # {comment(releases.comment)}",
    ]
    if releases.declared:
        lines.append(
            f"  declared: {quote(releases.declared)}  # yours: reds beyond it are listed apart"
        )
    if github:
        lines.append(f"  include: [{branch}]  # checked by `--versions all` (the nightly)")
    lines += ["", "checks:" if proposals else "checks: []"]
    text = "".join(line + "\n" for line in lines)
    return text + render_checks(proposals, assign_ids(proposals, ()), indent=2)


#: (module, subject key, subject, assertion, values): one fact a user's check states
_Fact = tuple[str | None, str | None, str | None, str | None, set[str]]


def _content(check: dict[str, Any]) -> list[_Fact]:
    """The facts a user's check states."""
    keys: list[str | None] = [k for k in ("symbol", "class", "function") if k in check] or [None]
    subject = check.get(keys[0]) if keys[0] else None
    facts: list[_Fact] = [(check.get("module"), keys[0], subject, None, set())]
    for assertion in ("methods", "attributes", "params", "accepts", "contains", "matches"):
        values = check.get(assertion)
        if isinstance(values, list):
            # a parameter is accepted as a keyword: `params` covers an `accepts` proposal
            for stated in ("params", "accepts") if assertion == "params" else (assertion,):
                facts.append((check.get("module"), keys[0], subject, stated, set(map(str, values))))
    if "signature" in check:  # the user's pin, however it was edited
        facts.append((check.get("module"), keys[0], subject, "signature", set()))
    if check.get("globals_bound") is True:  # the names given are the user's to edit
        facts.append((check.get("module"), keys[0], subject, "globals_bound", set()))
    if (shape := stated_shape(check.get("call"))) is not None:
        facts.append((check.get("module"), keys[0], subject, "call", {shape}))
    elif any(k in check for k in ("params", "accepts", "signature")):
        # the user states the parameters themselves: a call's shape is theirs to add
        facts.append((check.get("module"), keys[0], subject, "call", set()))
    for alternative in check.get("any_of") or []:
        if isinstance(alternative, dict):
            facts.extend(_content(alternative))
    return facts


def missing(
    proposals: list[Proposal], existing: list[dict[str, Any]], declined: set[str]
) -> list[Proposal]:
    """The proposals (or the part of their values) that the existing checks do not state.

    Decisions stick: a proposal whose id (as a new file would name it) is a check of the file
    or `declined` (the file's `ignore:` list) is not proposed again; nor is a text check
    (`contains`, `matches`) of a subject the file already states texts of, however its texts
    were edited. Name lists (`accepts`, `methods`, ...) gain the names newly used.
    """
    stated = [fact for check in existing if isinstance(check, dict) for fact in _content(check)]
    taken = declined | {c.get("id") for c in existing if isinstance(c, dict)}
    fresh = assign_ids(proposals, ())
    result = []
    for proposal, fresh_id in zip(proposals, fresh, strict=True):
        if fresh_id in taken:
            continue
        subject = proposal.subject
        head = (subject.module, subject.key, subject.name, proposal.assertion)
        covered: set[str] = set()
        found = False
        for module, key, name, assertion, values in stated:
            if (module, key, name, assertion) == head:
                found = True
                covered |= values
        if not found:
            result.append(proposal)
        elif proposal.assertion in _NAME_LISTS and (
            left := [v for v in proposal.values if v not in covered]
        ):
            uses = [u for u in proposal.uses if not u.items or set(u.items) & set(left)]
            result.append(dataclasses.replace(proposal, values=left, uses=uses))
    return result


def declined_ids(data: dict[str, Any]) -> set[str]:
    """The ids under a matrix's `ignore:` (`- ID` or `- {id: ID, reason: ...}`), read leniently:
    the loader is what reports a malformed entry."""
    entries = data.get("ignore")
    if not isinstance(entries, list):
        return set()
    ids = (entry.get("id") if isinstance(entry, dict) else entry for entry in entries)
    return {i for i in ids if isinstance(i, str)}


def check_ids(checks: object) -> list[str]:
    """The ids of a matrix's `checks:` (read leniently, as `declined_ids`)."""
    entries = checks if isinstance(checks, list) else []
    ids = (entry.get("id") for entry in entries if isinstance(entry, dict))
    return [i for i in ids if isinstance(i, str)]


def merge_text(
    text: str, name: str, proposals: list[Proposal], declined: Iterable[str] = ()
) -> tuple[str, int]:
    """`text` (the matrix file `name`) with the missing proposals appended to its checks;
    `declined`: ids other matrices of the upstream state or ignore."""
    try:
        data = yaml.safe_load(text)
        root = yaml.compose(text)
    except yaml.YAMLError as exc:
        raise MergeError(f"{name}: not valid YAML: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(root, yaml.MappingNode):
        raise MergeError(f"{name}: not a matrix (the top level is not a mapping)")
    existing = data.get("checks") or []
    if not isinstance(existing, list):
        raise MergeError(f"{name}: `checks` is not a list")
    new = missing(proposals, existing, declined_ids(data) | set(declined))
    if not new:
        return text, 0
    ids = assign_ids(new, check_ids(existing))
    node = next((v for k, v in root.value if k.value == "checks"), None)
    if node is None:
        head = text if text.endswith("\n") or not text else text + "\n"
        return head + "checks:\n" + render_checks(new, ids, indent=2), len(new)
    if isinstance(node, yaml.SequenceNode) and node.flow_style and node.value:
        raise MergeError(f"{name}: `checks` is a flow-style [...] list; make it a block list")
    if not isinstance(node, yaml.SequenceNode) or node.flow_style:  # `checks:` or `checks: []`
        body = "\n" + render_checks(new, ids, indent=2).rstrip("\n")
        return text[: node.start_mark.index] + body + text[node.end_mark.index :], len(new)
    indent = max(node.value[0].start_mark.column - 2, 0)
    end = _content_end(node.value[-1])
    if text[end - 1 : end] != "\n":
        newline = text.find("\n", end)
        end = len(text) if newline < 0 else newline + 1
    head = text[:end] if text[:end].endswith("\n") else text[:end] + "\n"
    return head + render_checks(new, ids, indent) + text[end:], len(new)


def _content_end(node: yaml.Node) -> int:
    """Where the text of a node's last scalar or flow collection ends (before comments)."""
    while isinstance(node, yaml.CollectionNode) and not node.flow_style and node.value:
        last = node.value[-1]
        node = last[1] if isinstance(last, tuple) else last
    return node.end_mark.index
