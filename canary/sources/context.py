"""Everything one run shares to fetch sources: the HTTP session, cache, stats and index client.

The runner creates one SourceContext per run and asks it for Trees; it is safe to use from the
thread pool that fetches versions in parallel. What reads remote sources (the HTTP client,
the index client with requests and urllib3, the wheel and GitHub readers) is imported when
first used: a warm run, answered from the cache alone, uses none of it, and importing it would
cost that run more than its whole work.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from canary.cache.store import DEFAULT_MAX_AGE, Cache
from canary.settings import Settings
from canary.sources.index_file import IndexFile
from canary.sources.limits import Limits
from canary.sources.stats import Stats
from canary.sources.tree import SourceError

if TYPE_CHECKING:
    from canary.sources.github import GitHubTree
    from canary.sources.http import Http, RetryPolicy
    from canary.sources.index import IndexClient
    from canary.sources.remotezip import Claims, TailHints
    from canary.sources.wheel import ReleaseTree


class SourceContext:
    """Shared fetching state of one run; Trees it hands out share its cache and counters.

    Configured by the run's Settings (the environment's when none is given); a keyword given
    here replaces the setting of that name."""

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        offline: bool | None = None,
        index_url: str | None = None,
        cache_dir: str | os.PathLike[str] | None = None,
        policy: RetryPolicy | None = None,
        limits: Limits | None = None,
        max_age: float = DEFAULT_MAX_AGE,
        github_raw_url: str | None = None,
        github_api_url: str | None = None,
    ) -> None:
        settings = settings if settings is not None else Settings.from_environment()
        self.offline = settings.offline if offline is None else offline
        self.stats = Stats()
        self.limits = limits or Limits()
        self._github_urls = (
            github_raw_url or settings.github_raw_url,
            github_api_url or settings.github_api_url,
        )
        self._policy = policy
        self._backoff = settings.retry_backoff
        self._credentials = settings.github_token, settings.ca_bundle
        self._http: Http | None = None
        root = Path(cache_dir) if cache_dir is not None else settings.cache_dir
        self.cache = Cache(root, self.stats, offline=self.offline, max_age=max_age)
        self._shared: tuple[TailHints, Claims] | None = None
        self._index_url = index_url or settings.index_url
        self._index: IndexClient | None = None
        self._lock = threading.Lock()

    @property
    def http(self) -> Http:
        """The run's HTTP client, created on first use (see the module's docstring)."""
        with self._lock:
            return self._client()

    def _client(self) -> Http:
        if self._http is None:
            from canary.sources.http import Http, RetryPolicy

            token, ca_bundle = self._credentials
            policy = self._policy
            if policy is None and self._backoff is not None:
                policy = RetryPolicy(backoff=self._backoff)
            self._http = Http(
                self.stats,
                policy,
                token=token,
                token_origins=self.github_urls(),
                ca_bundle=ca_bundle,
            )
        return self._http

    def github_urls(self) -> tuple[str, str]:
        """(raw-content base, API base): as given or configured, else GitHub's public hosts."""
        from canary.sources.github import DEFAULT_API_URL, DEFAULT_RAW_URL

        raw, api = self._github_urls
        return (raw or DEFAULT_RAW_URL).rstrip("/"), (api or DEFAULT_API_URL).rstrip("/")

    @property
    def index(self) -> IndexClient:
        """The index client, created on first use (runs that need no index never look it up)."""
        with self._lock:
            if self._index is None:
                from canary.sources.index import IndexClient, pip_index_url

                url = self._index_url or pip_index_url()
                self._index = IndexClient(self._client(), url, self.cache, self.limits)
            return self._index

    def release_tree(
        self, pypi_name: str, version: str, file: IndexFile | None = None
    ) -> ReleaseTree | None:
        """The release's files from the index; None when the index has no usable file for it
        (the caller then falls back to GitHub)."""
        if file is None:
            project = self.index.project(pypi_name)
            file = project.pick_file(version)
            problem = project.problem(version)
            if file is None and problem is not None:  # not "no file": a file we cannot trust
                raise SourceError(f"{pypi_name} {version}: {problem}")
            if file is None:
                return None
        from canary.sources.remotezip import Claims, TailHints
        from canary.sources.wheel import ReleaseTree

        with self._lock:
            if self._shared is None:
                self._shared = TailHints(), Claims()
            hints, claims = self._shared
        return ReleaseTree(
            pypi_name,
            file,
            lambda: self.http,  # built on the first byte fetched: never, over the cache
            self.cache,
            self.limits,
            hints,
            locate=lambda: self.locate(pypi_name, version, file),
            claims=claims,
        )

    def locate(self, pypi_name: str, version: str, file: IndexFile) -> str:
        """The URL of a locked file, from the project's index page (asked once per project)."""
        for listed in self.index.project(pypi_name).files(version):
            if listed.filename != file.filename:
                continue
            if file.sha256 and listed.sha256 and listed.sha256.lower() != file.sha256.lower():
                raise SourceError(
                    f"{file.filename}: the index now gives sha256 {listed.sha256}, the lock "
                    f"{file.sha256}; re-run `canary lock`"
                )
            return listed.url
        raise SourceError(
            f"{file.filename}: locked, but the index no longer lists it for {pypi_name} "
            f"{version}; re-run `canary lock`"
        )

    def github_tree(self, repo: str, ref: str, src: str = "", *, known: bool = False) -> GitHubTree:
        """One ref (branch, final tag, or a commit GitHub listed: `known`) of a repository."""
        from canary.sources.github import GitHubTree

        raw, api = self.github_urls()
        return GitHubTree(
            repo,
            ref,
            src,
            self.http,
            self.cache,
            raw_url=raw,
            api_url=api,
            limits=self.limits,
            known=known,
        )

    def close(self) -> None:
        with self._lock:
            if self._http is not None:
                self._http.close()

    def __enter__(self) -> SourceContext:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
