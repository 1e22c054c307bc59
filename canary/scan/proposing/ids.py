"""Check ids that read: `lora-model`, `kto-trainer-source-regex`, never over 60 characters.

An id is what a maintainer greps for, types after `-k` and lists under `ignore:`; it is made
from the subject's words (an acronym with a lowercase letter inside, `LoRA`, `MoE`, stays one
word), then, where two subjects share a name, from the module's last part, then its path.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from canary.scan.proposing.propose import Proposal

MAX_LENGTH = 60
_SUFFIX = {None: "", "methods": "-methods", "accepts": "-accepts", "contains": "-source"}
_SUFFIX["matches"] = "-source-regex"
_SUFFIX["call"] = "-call"
_SUFFIX["params"] = "-params"
_SUFFIX["attributes"] = "-attributes"
_SUFFIX["globals_bound"] = "-globals"
_SUFFIX["signature"] = "-signature"
# words, digits kept with the letters around them (`conv1d`, `4bit`): `LoRA`/`MoE`/`SiLU`, an
# acronym before a word (`GRPO` of GRPOTrainer), a word, an acronym, digits
_WORD = re.compile(
    r"[A-Z][a-z][A-Z]+(?![a-z])[0-9]*|[A-Z]+(?=[A-Z][a-z]{2,})|[A-Z]?[a-z]+(?:[0-9]+[a-z]*)*"
    r"|[A-Z]+[0-9]*|[0-9]+[a-z]*"
)


def words(text: str) -> list[str]:
    """`LoRAModel.__init__` -> ["lora", "model", "init"]."""
    return [word.lower() for word in _WORD.findall(text)]


def kebab(text: str) -> str:
    """`GRPOTrainer._prepare_inputs` -> `grpo-trainer-prepare-inputs` ([a-z0-9-] only)."""
    return "-".join(words(text)) or "check"


def _joined(head: list[str], tail: list[str], suffix: str) -> str:
    """head + tail (a head ending as the tail starts said once), within MAX_LENGTH: words
    of the head go first, then the tail is cut at a word."""
    overlap = next((n for n in range(min(len(head), len(tail)), 0, -1) if head[-n:] == tail[:n]), 0)
    head = head[: len(head) - overlap]
    room = MAX_LENGTH - len(suffix)
    while head and len("-".join(head + tail)) > room:
        head = head[1:]
    text = "-".join(head + tail) or "check"
    if len(text) > room:
        text = text[:room].rsplit("-", 1)[0] if "-" in text[:room] else text[:room]
    return text + suffix


def candidates(proposal: Proposal) -> list[str]:
    """The ids a proposal may take, most readable first."""
    subject = proposal.subject
    suffix = _SUFFIX[proposal.assertion]
    module = subject.module.split(".")
    path = module[1:] if len(module) > 1 else module
    last = words(path[-1].removeprefix("modeling_"))
    if subject.name is None:
        return [_joined([], last, suffix), _joined([], words(".".join(path)), suffix)]
    name = words(subject.name)
    found = [_joined([], name, suffix), _joined(last, name, suffix)]
    found.append(_joined(words(".".join(path)), name, suffix))
    return list(dict.fromkeys(found))


def assign_ids(proposals: Iterable[Proposal], taken: Iterable[str]) -> list[str]:
    """An id per proposal, unique against `taken` and each other, readable from the subject."""
    used = set(taken)
    ids = []
    for proposal in proposals:
        options = candidates(proposal)
        chosen = next((c for c in options if c not in used), None)
        number = 2
        while chosen is None:
            base = options[-1]
            numbered = f"{base[: MAX_LENGTH - len(str(number)) - 1]}-{number}"
            chosen = None if numbered in used else numbered
            number += 1
        used.add(chosen)
        ids.append(chosen)
    return ids
