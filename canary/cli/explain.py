"""`canary explain ID [MATRIX ...]`: from red to fix for one check.

Runs the one check over the matrix's versions (remembered verdicts make a warm run cheap), then
reads its subject on the last version it held on and the first it failed on: what the subject
became, the diff between the two with their upstream paths and lines, and the compare link.
A release that cannot be read there is an error naming the cause, never an empty diff.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys

from canary.analysis.similar import close_matches
from canary.cli.help import EXIT_CODES
from canary.engine.outcomes import Status
from canary.engine.runner import Runner
from canary.errors import ExitCode, UsageError
from canary.matrix.files import load_matrices
from canary.matrix.model import Check, Matrix
from canary.reports.explanation import CheckStory, story_json, story_text
from canary.reports.grid import build_grids
from canary.reports.transition import explained
from canary.settings import Settings
from canary.sources.tree import SourceError

EXAMPLES = """examples:
  canary explain trl::aux                      where trl::aux broke, what it became, the diff
  canary explain trl::aux matrices/trl.yaml --format json --offline
  canary explain trl::aux --versions all --commit
                                               and the upstream commit that broke it

"""


class UnknownCheck(UsageError):
    """The ID names no check of the matrices read."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = EXAMPLES + EXIT_CODES
    parser.add_argument("id", metavar="ID", help="upstream::check, as in test ids (trl::aux)")
    parser.add_argument(
        "matrices", nargs="*", metavar="MATRIX", help="as for check; none: every matrices/*.yaml"
    )
    parser.add_argument("--versions", default="releases", help="as for check")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument("--offline", action="store_true", help="use the cache alone")
    parser.add_argument(
        "--commit",
        action="store_true",
        help="also name the upstream commit that broke it (GitHub's compare, then the check "
        "judged on log2(commits) of them, and the pull request: about 4 API requests)",
    )


def run(args: argparse.Namespace) -> int:
    matrix, check = find_check(args.id, load_matrices(args.matrices))
    settings = Settings.from_environment(offline=args.offline)
    story = tell(matrix, check, args.versions, settings, commit=args.commit)
    sys.stdout.write(story_json(story) if args.format == "json" else story_text(story))
    unread = any(r.status is Status.ERROR for r in story.row)
    return int(ExitCode.FAILED if unread else ExitCode.OK)


def find_check(wanted: str, matrices: list[Matrix]) -> tuple[Matrix, Check]:
    """The check `upstream::check` (a bare check id when one matrix has it; a test id's
    `[version]` is ignored); UnknownCheck with the closest ids otherwise."""
    name = wanted.split("[", 1)[0]
    ids = {f"{m.upstream}::{c.id}": (m, c) for m in matrices for c in m.checks}
    if name in ids:
        return ids[name]
    bare = [key for key in ids if key.split("::", 1)[1] == name]
    if len(bare) == 1:
        return ids[bare[0]]
    where = ", ".join(str(m.path) for m in matrices)
    upstream, _, check = name.rpartition("::")
    same = [m for m in matrices if m.upstream == upstream]
    if same:  # the check's own part against that upstream's checks: the prefix is no likeness
        others = (c.id for m in same for c in m.checks)
        close = [f"{upstream}::{c}" for c in close_matches(check, others, n=3, cutoff=0.75)]
    else:
        close = close_matches(name, ids, n=3, cutoff=0.6)
    hint = f" (did you mean {', '.join(close)}?)" if close else ""
    if len(bare) > 1:
        hint = f" ({' or '.join(bare)}?)"
    raise UnknownCheck(f"no check {name} in {where}{hint}")


def compare_link(matrix: Matrix, old: str, new: str, branches: tuple[str, ...]) -> str:
    """The upstream's compare view between two versions (a branch by its name)."""
    if not matrix.github:
        return ""

    def ref(label: str) -> str:
        return label if label in branches else matrix.tag.format(version=label)

    return f"https://github.com/{matrix.github}/compare/{ref(old)}...{ref(new)}"


def tell(
    matrix: Matrix, check: Check, versions: str, settings: Settings, commit: bool = False
) -> CheckStory:
    """Run the check and read both sides of its latest transition (SourceError or ParseError
    when one cannot be read); with `commit`, name the upstream commit that broke it (a fault
    doing so is said in the story, not raised: the verdicts stand)."""
    one = dataclasses.replace(matrix, checks=(check,))
    runner = Runner(settings=settings, explains=False)
    targets = {t.label: t for t in runner.targets(one, versions)}
    report = runner.run([one], versions)
    grid = build_grids(report)[0]
    row = grid.row(check.id)
    breaks = explained(row)
    story = CheckStory(
        id=f"{matrix.upstream}::{check.id}",
        matrix=str(matrix.path),
        line=check.line,
        why=check.why,
        row=row,
        transition=breaks[-1].result if breaks else None,
        explanation=None,
        compare="",
    )
    if not breaks:
        return story
    found = breaks[-1].result
    old, new = targets[found.last_pass], targets[found.first_fail]
    explanation = runner.explain(one, check, old, new, for_explain=True)
    link = compare_link(matrix, found.last_pass, found.first_fail, grid.info.branches)
    story = dataclasses.replace(story, explanation=explanation, compare=link)
    if not commit:
        return story
    from canary.engine.culprit import Culprits, ref_of  # asked for (--commit): loaded then

    refs = [ref_of(matrix, v, grid.info.branches) for v in (found.last_pass, found.first_fail)]
    try:
        culprit = Culprits(runner.context, runner.modules).name(one, check, *refs)
    except SourceError as exc:
        return dataclasses.replace(story, unnamed=str(exc))
    return dataclasses.replace(story, transition=dataclasses.replace(found, broken_by=culprit))
