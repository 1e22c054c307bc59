"""A Tree over one ref of a GitHub repository: branches (main) and releases without index files.

Files come one by one from the raw-content host, `{raw}/OWNER/REPO/REF/PATH`, cached with a
freshness limit and revalidated with If-None-Match. The raw host answers 404 both for a missing
file and a missing ref, so the first absence in a tree is confirmed by asking the API whether the
ref exists (`{api}/repos/OWNER/REPO/commits/REF`, cached like a file).

When a caller announces many uncached files at once (`prefetch` with TARBALL_THRESHOLD or more),
one tarball of the ref from the API host (`{api}/repos/OWNER/REPO/tarball/REF`) replaces the
per-file requests. Both base URLs can be overridden (CANARY_GITHUB_RAW_URL,
CANARY_GITHUB_API_URL) for tests and enterprise mirrors.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING
from urllib.parse import quote

from canary.cache.store import Cache
from canary.sources.limits import Limits
from canary.sources.redact import redact
from canary.sources.tarball import TarFormatError, Unpacked, is_safe, unpack_tar
from canary.sources.tree import MemberRefused, SourceError

if TYPE_CHECKING:
    from canary.sources.http import Http, Reply

DEFAULT_RAW_URL = "https://raw.githubusercontent.com"
DEFAULT_API_URL = "https://api.github.com"
#: this many uncached files in one prefetch make a tarball cheaper than per-file requests
TARBALL_THRESHOLD = 40
_REPO = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")


class GitHubTree:
    """Tree protocol over `repo` at `ref`, with the package under `src` in the repository."""

    kind = "github"

    def __init__(
        self,
        repo: str,
        ref: str,
        src: str,
        http: Http,
        cache: Cache,
        *,
        raw_url: str | None = None,
        api_url: str | None = None,
        limits: Limits | None = None,
        tarball_threshold: int = TARBALL_THRESHOLD,
        known: bool = False,
    ) -> None:
        if not _REPO.fullmatch(repo):
            raise SourceError(f"GitHub repository {repo!r} is not OWNER/NAME")
        src = src.strip("/")
        if src and not is_safe(src):
            raise SourceError(f"unsafe src folder {src!r}")
        if not ref or any(part in ("", "..") for part in ref.split("/")):
            raise SourceError(f"bad git ref {ref!r}")
        self.repo, self.ref, self.src = repo, ref, src
        self.http, self.cache = http, cache
        self.raw_url = (raw_url or DEFAULT_RAW_URL).rstrip("/")
        self.api_url = (api_url or DEFAULT_API_URL).rstrip("/")
        self.limits = limits or Limits()
        self.tarball_threshold = tarball_threshold
        self._tarball: Unpacked | None = None
        #: `known`: the ref is a commit GitHub itself listed (a comparison's), so a 404 of a
        #: file there is its absence, and no request asks whether the ref exists
        self._ref_checked = known
        self._lock = threading.Lock()

    def read(self, path: str) -> bytes | None:
        return self._get(self._in_src(path))

    def read_meta(self, path: str) -> bytes | None:
        """A file at the repository root (VERSION, pyproject.toml, setup.py)."""
        return self._get(_checked(path))

    def files(self) -> list[str] | None:
        """Known once the tarball is unpacked; per-file raw reads know no listing."""
        if self._tarball is None:
            return None
        prefix = f"{self.src}/" if self.src else ""
        return sorted(n.removeprefix(prefix) for n in self._tarball.files if n.startswith(prefix))

    def prefetch(self, paths: Iterable[str], meta: Iterable[str] = ()) -> None:
        """Announce the files about to be read; many uncached ones come as one tarball."""
        wanted = [self._in_src(p) for p in paths] + [_checked(p) for p in meta]
        missing = [p for p in wanted if not self.cache.has_fresh(self._key(p))]
        if len(missing) >= self.tarball_threshold and not self.cache.offline:
            self._load_tarball(missing)

    def _in_src(self, path: str) -> str:
        path = _checked(path)
        return f"{self.src}/{path}" if self.src else path

    def _url(self, repo_path: str) -> str:
        return f"{self.raw_url}/{self.repo}/{quote(self.ref, safe='/')}/{quote(repo_path)}"

    def _key(self, repo_path: str) -> str:
        return f"github:{self._url(repo_path)}"

    def _get(self, repo_path: str) -> bytes | None:
        if self._tarball is not None:
            if repo_path in self._tarball.links:
                raise MemberRefused(f"{self.repo}@{self.ref}: {repo_path} is a link, not read")
            if repo_path in self._tarball.refused:
                why = self._tarball.refused[repo_path]
                raise MemberRefused(f"{self.repo}@{self.ref}: {repo_path} {why}")
            return self._tarball.files.get(repo_path)
        url = self._url(repo_path)

        def fetch(etag: str | None) -> Reply:
            headers = {"If-None-Match": etag} if etag else {}
            return self.http.get(
                url, headers, allow=(404,), max_bytes=self.limits.max_member, github=True
            )

        entry = self.cache.revalidate(self._key(repo_path), redact(url), fetch)
        if entry.absent:
            self._check_ref()
            return None
        return entry.data

    def _check_ref(self) -> None:
        """A 404 means absent only if the ref exists: a wrong tag must be an error, not a fail."""
        with self._lock:
            if self._ref_checked:
                return
            url = self._ref_url()

            def fetch(etag: str | None) -> Reply:
                headers = {"Accept": "application/vnd.github.sha"}
                headers.update({"If-None-Match": etag} if etag else {})
                return self.http.get(url, headers, max_bytes=self.limits.max_answer, github=True)

            if self.cache.revalidate(self._ref_key(), redact(url), fetch).absent:
                raise SourceError(f"{redact(url)}: ref {self.ref!r} not found in {self.repo}")
            self._ref_checked = True

    def _ref_url(self) -> str:
        return f"{self.api_url}/repos/{self.repo}/commits/{quote(self.ref, safe='')}"

    def _ref_key(self) -> str:
        return f"github-ref:{self._ref_url()}"

    def _load_tarball(self, remember: list[str]) -> None:
        """Fetch the ref's tarball once, serve every read from it, cache the announced files."""
        with self._lock:
            if self._tarball is not None:
                return
            url = f"{self.api_url}/repos/{self.repo}/tarball/{quote(self.ref, safe='/')}"
            reply = self.http.get(url, allow=(), max_bytes=self.limits.max_download, github=True)
            try:
                unpacked = unpack_tar(reply.content, self.limits)
            except TarFormatError as exc:
                raise SourceError(f"{redact(url)}: {exc}") from None
            stripped = Unpacked(
                {_strip_top(n): d for n, d in unpacked.files.items() if "/" in n},
                {_strip_top(n) for n in unpacked.links if "/" in n},
                {_strip_top(n): why for n, why in unpacked.refused.items() if "/" in n},
            )
            for path in remember:
                if path not in stripped.links and path not in stripped.refused:
                    self.cache.put_fresh(self._key(path), stripped.files.get(path))
            self.cache.put_fresh(self._ref_key(), b"")  # the tarball proves the ref exists
            self._ref_checked = True
            self._tarball = stripped


def _strip_top(name: str) -> str:
    """GitHub tarballs hold everything under one OWNER-REPO-SHA folder."""
    return name.split("/", 1)[1]


def _checked(path: str) -> str:
    if not is_safe(path):
        raise SourceError(f"unsafe path {path!r}: must be relative, without '..'")
    return path
