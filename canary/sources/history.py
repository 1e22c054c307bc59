"""A GitHub repository's history through its REST API: what a ref points at, the commits
between two refs, and the pull request that carried a commit.

Used to name the upstream change that broke a contract (canary.engine.culprit); files are
never read here (they come from raw content, which the API's hourly limit does not count).
Every answer is cached: what a branch points at is revalidated with If-None-Match (GitHub
does not count a 304 against the limit), a comparison of two commits and the pull requests of
a commit never change and are kept. A limit hit is an error naming when it resets (the HTTP
client's), never an empty history.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import quote

from canary.cache.store import Cache
from canary.sources.limits import Limits
from canary.sources.redact import redact
from canary.sources.tree import SourceError

if TYPE_CHECKING:
    from canary.sources.http import Http, Reply

SHA = re.compile(r"[0-9a-f]{40}")
#: commits asked per page of a comparison (GitHub's largest page)
PAGE = 100
#: pages of a comparison read at most: GitHub lists 250 commits per comparison unpaged and
#: up to 10,000 paged; beyond this many the range is too long to name one change in
MAX_PAGES = 10


@dataclass(frozen=True)
class Commit:
    """One commit of a comparison: its full sha, committer date (ISO 8601) and title (its
    message's first line)."""

    sha: str
    date: str
    title: str


@dataclass(frozen=True)
class PullRequest:
    number: int
    title: str
    url: str


class History:
    """The REST reads of one repository, through the run's HTTP client and cache."""

    def __init__(
        self, repo: str, http: Http, cache: Cache, api_url: str, limits: Limits | None = None
    ) -> None:
        self.repo, self.http, self.cache = repo, http, cache
        self.api_url = api_url.rstrip("/")
        self.limits = limits or Limits()

    def _url(self, path: str) -> str:
        return f"{self.api_url}/repos/{self.repo}/{path}"

    def resolve(self, ref: str) -> str:
        """The commit `ref` (a branch, a tag, a sha) points at now: GitHub's `commits/REF`
        answered as a bare sha, revalidated with its ETag (the key GitHubTree uses to learn
        that a ref exists, so the two share the entry)."""
        if SHA.fullmatch(ref):
            return ref
        url = self._url(f"commits/{quote(ref, safe='')}")

        def fetch(etag: str | None) -> Reply:
            headers = {"Accept": "application/vnd.github.sha"}
            headers.update({"If-None-Match": etag} if etag else {})
            return self.http.get(url, headers, max_bytes=self.limits.max_answer, github=True)

        key = f"github-ref:{url}"
        entry = self.cache.revalidate(key, redact(url), fetch)
        if not entry.absent and not SHA.fullmatch(entry.data.decode("ascii", "replace").strip()):
            # GitHubTree records only that the ref exists (b"") when a tarball proved it
            entry = self.cache.revalidate(key, redact(url), fetch, refresh=True)
        sha = entry.data.decode("ascii", "replace").strip()
        if entry.absent or not SHA.fullmatch(sha):
            raise SourceError(f"{redact(url)}: ref {ref!r} not found in {self.repo}")
        return sha

    def between(self, base: str, head: str) -> list[Commit]:
        """The commits after `base` up to `head`, oldest first (GitHub's compare, paged);
        both shas, so the answer never changes and is kept."""
        commits: list[Commit] = []
        for page in range(1, MAX_PAGES + 1):
            data = self._kept(f"compare/{base}...{head}?per_page={PAGE}&page={page}")
            if not isinstance(data, dict) or not isinstance(data.get("commits"), list):
                raise SourceError(f"{self._url(f'compare/{base}...{head}')}: not a comparison")
            commits += [_commit(item) for item in data["commits"]]
            total = data.get("total_commits")
            if not isinstance(total, int) or len(commits) >= total or not data["commits"]:
                return commits
        raise SourceError(
            f"{self._url(f'compare/{base}...{head}')}: more than {PAGE * MAX_PAGES} commits "
            "between the two"
        )

    def pull_request(self, sha: str) -> PullRequest | None:
        """The merged pull request that carried `sha` (`commits/SHA/pulls`), if any."""
        data = self._kept(f"commits/{sha}/pulls")
        if not isinstance(data, list):
            raise SourceError(f"{self._url(f'commits/{sha}/pulls')}: not a list of pulls")
        merged = [p for p in data if isinstance(p, dict) and p.get("merged_at")] or data
        for pull in merged:
            if isinstance(pull, dict) and isinstance(pull.get("number"), int):
                title = pull.get("title")
                url = pull.get("html_url")
                return PullRequest(
                    pull["number"],
                    title if isinstance(title, str) else "",
                    url if isinstance(url, str) else "",
                )
        return None

    def _kept(self, path: str) -> object:
        """A JSON answer that never changes, from the cache or fetched once and kept."""
        url = self._url(path)

        def fetch() -> bytes:
            reply = self.http.get(
                url,
                {"Accept": "application/vnd.github+json"},
                allow=(),
                max_bytes=self.limits.max_answer,
                github=True,
            )
            _parsed(reply.content, url)  # an answer that is not JSON is not kept
            return reply.content

        return _parsed(self.cache.get_or_fetch(f"github-api:{url}", redact(url), fetch), url)


def _parsed(raw: bytes, url: str) -> object:
    """An answer's JSON; anything else (not JSON, or nested too deep for the parser: a few kB
    of `[[[[...` reach Python's recursion limit) is an error naming the URL."""
    try:
        return json.loads(raw)
    except ValueError:
        raise SourceError(f"{redact(url)}: not JSON") from None
    except RecursionError:
        raise SourceError(f"{redact(url)}: JSON nested too deep") from None


def _commit(item: object) -> Commit:
    """A commit of GitHub's answer; a malformed one is an error, not a guess."""
    if not isinstance(item, dict) or not SHA.fullmatch(str(item.get("sha", ""))):
        raise SourceError(f"a commit of the comparison has no sha: a {type(item).__name__}")
    commit = item.get("commit") if isinstance(item.get("commit"), dict) else {}
    assert isinstance(commit, dict)
    committer = commit.get("committer") if isinstance(commit.get("committer"), dict) else {}
    assert isinstance(committer, dict)
    message = commit.get("message") if isinstance(commit.get("message"), str) else ""
    assert isinstance(message, str)
    return Commit(str(item["sha"]), str(committer.get("date", "")), message.split("\n")[0])
