"""Third-party actions are pinned by commit with the tag in a comment, in action.yml and in
the workflows `canary init` writes (the convention of security-minded repositories)."""

from __future__ import annotations

import re

from paths import ROOT

from canary.init.workflows import nightly_workflow, pr_workflow

USES = re.compile(r"^\s*(?:- )?uses:\s*(\S+)(.*)$", re.M)
PINNED = re.compile(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}")
TAG = re.compile(r"^\s+# v\d+\.\d+\.\d+$")


def third_party(text: str) -> list[tuple[str, str]]:
    return [
        (ref, comment)
        for ref, comment in USES.findall(text)
        if not ref.startswith(("./", "{", "upstream-canary/"))
    ]


def test_action_yml_pins_every_action_it_uses():
    found = third_party((ROOT / "action.yml").read_text())
    assert len(found) >= 4
    for ref, comment in found:
        assert PINNED.fullmatch(ref) and TAG.match(comment), (ref, comment)


def test_the_workflows_init_writes_pin_checkout_and_the_same_commit_for_one_tag():
    written = pr_workflow("canary") + nightly_workflow("canary")
    found = third_party(written)
    assert found and all(PINNED.fullmatch(r) and TAG.match(c) for r, c in found), found
    commits: dict[tuple[str, str], set[str]] = {}
    for ref, comment in found + third_party((ROOT / "action.yml").read_text()):
        path, _, commit = ref.partition("@")
        repository = "/".join(path.split("/")[:2])
        commits.setdefault((repository, comment.strip()), set()).add(commit)
    assert all(len(shas) == 1 for shas in commits.values())
