"""The two workflows `canary init` writes: checks on every pull request, and the nightly.

Both run this project's GitHub Action at the release that wrote them, so a repository's CI and
the canary it runs move together (and Dependabot can move both).
"""

from __future__ import annotations

import os
from pathlib import Path

from canary._version import __version__

#: where the Action lives; pyproject.toml's project URLs name the same repository
ACTION = "upstream-canary/upstream-canary"
ACTION_REF = f"{ACTION}@v{__version__}"

#: third-party actions pinned by commit, the tag in a comment (action.yml pins the same way).
#: The commits are those the actions' repositories give their tags (read from a snapshot of
#: each repository; a Dependabot `github-actions` update moves commit and comment together).
CHECKOUT = "actions/checkout@fbc6f3992d24b796d5a048ff273f7fcc4a7b6c09  # v5.1.0"

WORKFLOWS = ".github/workflows"
PR_WORKFLOW = f"{WORKFLOWS}/canary.yml"
NIGHTLY_WORKFLOW = f"{WORKFLOWS}/canary-nightly.yml"


def workflow_paths(root: Path) -> tuple[str, str]:
    """The pull-request and nightly workflows' paths, spelled as the repository spells its
    own: `.yaml` when more of its workflows end so than in `.yml` (GitHub's spelling, the
    default); a canary workflow already there, under either spelling, keeps its name (so a
    second run keeps it rather than writing its twin). The folder is listed only where it is
    no symbolic link (the writes refuse those, and say so)."""
    folder = root / WORKFLOWS
    names: list[str] = []
    if not any(p.is_symlink() for p in (root / ".github", folder)) and folder.is_dir():
        names = sorted(entry.name for entry in os.scandir(folder))
    own = {"canary", "canary-nightly"}
    theirs = [n for n in names if n.rsplit(".", 1)[0] not in own]
    yaml_spelled = sum(n.endswith(".yaml") for n in theirs) > sum(
        n.endswith(".yml") for n in theirs
    )
    suffix = ".yaml" if yaml_spelled else ".yml"

    def path(stem: str) -> str:
        there = [n for n in (f"{stem}.yml", f"{stem}.yaml") if n in names]
        return f"{WORKFLOWS}/{there[0] if there else stem + suffix}"

    return path("canary"), path("canary-nightly")


_PR = """\
# canary: the upstream contracts in {matrices}/ on every locked release (written by `canary init`).
#
# Runs on every pull request, so that branch protection can require it; with the cache warm it
# takes seconds. Failing checks are annotated at their lines in the matrices.
name: canary

on:
  pull_request:
  push:
    branches: [{branch}]

permissions:
  contents: read

concurrency:
  group: canary-${{{{ github.event.pull_request.number || github.ref }}}}
  # a newer push to a pull request supersedes its run; runs on {branch} finish (they save the cache)
  cancel-in-progress: ${{{{ github.event_name == 'pull_request' }}}}

jobs:
  canary:
    name: upstream contracts
    runs-on: ubuntu-24.04
    timeout-minutes: 30
    steps:
      - uses: {checkout}
        with:
          persist-credentials: false

      - uses: {action}
        with:
          matrices: {matrices}
"""

_NIGHTLY = """\
# canary nightly (written by `canary init`): refresh the locks, check every release and main.
#
# New breakage (red tonight, not red the night before) fails the run and opens or updates one
# issue; moved locks (a new or yanked release) become one pull request. For that pull request,
# allow it under Settings > Actions > General > Workflow permissions. A pull request opened with
# the job's own token starts no workflow run: to have the canary workflow check it, store a
# fine-grained token (contents and pull requests: write) as a secret, check out with it
# (`token:` below `actions/checkout`) and give it to the Action as `pr-token`.
name: canary nightly

on:
  schedule:
    - cron: "{minute} 5 * * *"
  workflow_dispatch:

permissions:
  contents: read

concurrency:
  group: canary-nightly
  cancel-in-progress: false

jobs:
  nightly:
    name: every release and main
    runs-on: ubuntu-24.04
    timeout-minutes: 60
    permissions:
      contents: write # push the lock branch
      pull-requests: write # open or update the lock pull request
      issues: write # open or update the breakage issue
      actions: read # download the previous run's results
    steps:
      - uses: {checkout}

      - uses: {action}
        with:
          matrices: {matrices}
          mode: nightly
"""


def pr_workflow(matrices: str, action: str = ACTION_REF, branch: str = "main") -> str:
    return _PR.format(matrices=matrices, action=action, branch=branch, checkout=CHECKOUT)


def nightly_workflow(matrices: str, action: str = ACTION_REF, minute: int = 23) -> str:
    return _NIGHTLY.format(matrices=matrices, action=action, minute=minute, checkout=CHECKOUT)
