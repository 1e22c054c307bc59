"""Name the upstream commit that broke a check: bisect the commits between the last version
it held on and the first it failed on, judging the check at each commit read.

The commits come from GitHub's compare (canary.sources.history, cached for good: both ends
are commits); the check is judged at a commit as on any version, its files read from raw
content at that sha (cached by commit), so each step costs only the files the check reads,
and a range of n commits costs about log2(n) judgings. Then the pull request that carried the
commit. A commit where the check cannot be judged (a file that does not parse there, a gate
that skips) is stepped over, and the answer says how many such commits precede it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from canary.analysis import ModuleCache
from canary.engine.judge import VersionRun
from canary.engine.outcomes import BrokenBy, Result, RunReport, Status
from canary.matrix.model import Check, Matrix
from canary.matrix.targets import Target
from canary.sources.context import SourceContext
from canary.sources.history import Commit, History
from canary.sources.tree import SourceError

#: judged outcomes that say the contract holds, and that it does not
_HOLDS = frozenset({Status.PASS, Status.XPASS})
_FAILS = frozenset({Status.FAIL, Status.WARN, Status.XFAIL})


def first_failing(commits: list[Commit], holds: Callable[[Commit], bool | None]) -> tuple[int, int]:
    """(index of the first commit it fails on, commits before it that could not be judged)
    among `commits` (oldest first; the last fails, the one before the first holds): binary
    search, stepping over a commit `holds` cannot tell (None)."""
    low, high = -1, len(commits) - 1
    unknown: set[int] = set()
    while (middle := _untried(low, high, unknown)) is not None:
        verdict = holds(commits[middle])
        if verdict is None:
            unknown.add(middle)
        elif verdict:
            low = middle
        else:
            high = middle
    return high, sum(1 for i in unknown if low < i < high)


def _untried(low: int, high: int, unknown: set[int]) -> int | None:
    """The commit strictly between `low` and `high` nearest their middle that was not found
    untellable; None when none is left."""
    middle = (low + high) // 2
    for offset in range(high - low):
        for at in (middle - offset, middle + offset + 1):
            if low < at < high and at not in unknown:
                return at
    return None


class Culprits:
    """Names the commits that broke checks of one run, through its sources; a check's
    judgings at one commit share the modules read there."""

    def __init__(self, context: SourceContext, modules: ModuleCache | None = None) -> None:
        self.context = context
        self.modules = modules or ModuleCache()

    def history(self, matrix: Matrix) -> History:
        _, api = self.context.github_urls()
        return History(
            _repo(matrix), self.context.http, self.context.cache, api, self.context.limits
        )

    def holds(self, matrix: Matrix, check: Check, sha: str) -> bool | None:
        """Whether `check` holds at commit `sha` (None: it cannot be told there)."""
        tree = self.context.github_tree(_repo(matrix), sha, matrix.src, known=True)
        one = dataclasses.replace(matrix, checks=(check,))
        result = VersionRun(one, Target(sha, branch=True), tree, self.modules).result(check)
        if result.status in _HOLDS:
            return True
        if result.status in _FAILS:
            return False
        return None

    def name(self, matrix: Matrix, check: Check, good: str, bad: str) -> BrokenBy:
        """The commit between refs `good` (held) and `bad` (fails) that broke `check`;
        SourceError when the history or a file cannot be read."""
        history = self.history(matrix)
        base, head = history.resolve(good), history.resolve(bad)
        commits = history.between(base, head)
        if not commits:
            raise SourceError(f"{matrix.github}: no commit between {good} and {bad}")
        judged = 0

        def holds(commit: Commit) -> bool | None:
            nonlocal judged
            judged += 1
            return self.holds(matrix, check, commit.sha)

        at, unsure = first_failing(commits, holds)
        found = commits[at]
        pull = history.pull_request(found.sha)
        return BrokenBy(
            commit=found.sha,
            date=found.date,
            title=found.title,
            pull=pull.number if pull else 0,
            pull_title=pull.title if pull else "",
            pull_url=pull.url if pull else "",
            judged=judged,
            between=len(commits),
            unsure=unsure,
        )


def _repo(matrix: Matrix) -> str:
    if not matrix.github:
        raise SourceError(f"{matrix.upstream}: the matrix names no `github` repository")
    return matrix.github


def ref_of(matrix: Matrix, label: str, branches: tuple[str, ...]) -> str:
    """The git ref of a version label: a branch as named, a release by the matrix's tag."""
    return label if label in branches else matrix.tag.format(version=label)


def record_commits(report: RunReport, matrices: list[Matrix], culprits: Culprits) -> list[str]:
    """Record in `report` the commit each branch it judged points at (one ref request per
    branch, revalidated with its ETag: GitHub does not count a 304), so that a break on it
    the next night is bisected from there. Returns a sentence per branch not recorded, why."""
    repos = {m.upstream: m for m in matrices if m.github}
    unrecorded: list[str] = []
    for upstream, info in report.upstreams.items():
        if not info.branches:
            continue
        if upstream not in repos:
            why = "no matrix given names its repository"
            unrecorded += [_unrecorded(upstream, branch, why) for branch in info.branches]
            continue
        history = culprits.history(repos[upstream])
        commits = dict(info.commits)
        for branch in info.branches:
            try:
                commits[branch] = history.resolve(branch)
            except SourceError as exc:
                unrecorded.append(_unrecorded(upstream, branch, str(exc)))
        report.upstreams[upstream] = dataclasses.replace(info, commits=commits)
    return unrecorded


def _unrecorded(upstream: str, branch: str, why: str) -> str:
    return f"the commit {upstream} {branch} was judged at is not recorded: {why}"


def _held_at(before: RunReport | None, result: Result) -> str:
    """The commit the baseline judged `result`'s branch at, when the check held there."""
    if before is None or result.upstream not in before.upstreams:
        return ""
    sha = before.upstreams[result.upstream].commits.get(result.version, "")
    held = any(
        r.status in _HOLDS
        for r in before.results
        if (r.upstream, r.check, r.version) == (result.upstream, result.check, result.version)
    )
    return sha if held else ""


def name_breaks(
    report: RunReport,
    matrices: list[Matrix],
    culprits: Culprits,
    wanted: Callable[[Result], bool],
    limit: int,
    before: RunReport | None = None,
) -> list[str]:
    """Name the commit of each transition of `report` that `wanted` picks (its first failing
    result, `first_fail` == `version`), at most `limit` of them, in the report's order; the
    results get `broken_by`. A branch that held in `before` (the last night) at a recorded
    commit, and still holds there, is bisected from that commit to the one recorded tonight:
    the night's few commits, not all those since the last good release's tag (and right when
    the release's tag is not on the branch). Returns one line per transition left unnamed and
    why (a source fault, the limit), for the caller to say: never a silent skip."""
    checks = {(m.upstream, c.id): (m, c) for m in matrices for c in m.checks}
    unnamed: list[str] = []
    named = 0
    for at, result in enumerate(report.results):
        if result.first_fail != result.version or not result.last_pass or not wanted(result):
            continue
        where = f"{result.upstream}::{result.check}[{result.version}]"
        if (result.upstream, result.check) not in checks:
            unnamed.append(f"{where}: no such check in the matrices given")
            continue
        if named >= limit:
            unnamed.append(f"{where}: not named, over this run's limit of {limit}")
            continue
        matrix, check = checks[result.upstream, result.check]
        info = report.upstreams[result.upstream]
        good = ref_of(matrix, result.last_pass, info.branches)
        bad = info.commits.get(result.first_fail) or ref_of(
            matrix, result.first_fail, info.branches
        )
        named += 1
        try:
            since = _held_at(before, result)
            if since and culprits.holds(matrix, check, since):
                good = since
            found = culprits.name(matrix, check, good, bad)
        except SourceError as exc:
            unnamed.append(f"{where}: {exc}")
            continue
        report.results[at] = dataclasses.replace(result, broken_by=found)
    return unnamed


def carry_broken_by(now: RunReport, before: RunReport) -> None:
    """Keep what an earlier run named for a transition that is still the same (the same
    check failing from the same version after holding on the same one): no request spent."""
    named = {
        (r.upstream, r.check, r.version, r.last_pass): r.broken_by
        for r in before.results
        if r.broken_by is not None
    }
    for at, result in enumerate(now.results):
        found = named.get((result.upstream, result.check, result.version, result.last_pass))
        if found is not None and result.first_fail == result.version and result.broken_by is None:
            now.results[at] = dataclasses.replace(result, broken_by=found)
