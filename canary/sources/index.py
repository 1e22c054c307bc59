"""The package index's simple API (PEP 691 JSON, PEP 503 HTML): which files a release has."""

from __future__ import annotations

import functools
import json
import re
import subprocess
import sys
import threading
from dataclasses import dataclass, field, replace
from html.parser import HTMLParser
from typing import Any
from urllib.parse import unquote, urldefrag, urljoin, urlsplit

from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import InvalidVersion, Version

from canary.cache.store import Cache
from canary.compat.pip import default_index_url
from canary.errors import CanaryError, ExitCode
from canary.sources.http import Http, Reply, origin
from canary.sources.index_file import IndexFile
from canary.sources.limits import Limits
from canary.sources.redact import redact
from canary.sources.tree import SourceError

JSON_TYPE = "application/vnd.pypi.simple.v1+json"
_HTML_TYPES = ("application/vnd.pypi.simple.v1+html", "text/html")
ACCEPT = f"{JSON_TYPE}, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.01"


def pip_index_url() -> str:
    """The index URL the way pip finds it, so canary reads what `pip install` would.

    The variables (CANARY_INDEX_URL, then pip's PIP_INDEX_URL) come first, read by Settings;
    this is what follows them: pip's configuration files (install, then global section), else
    pip's built-in default. No index host is named here: the default comes from pip itself.
    """
    configured = _pip_configured_index_url()
    if configured:
        return configured
    default = default_index_url()
    if default is None:
        raise SourceError(
            "no package index URL: set CANARY_INDEX_URL or PIP_INDEX_URL "
            "(pip is not importable to supply its default)"
        )
    return default


def _pip_configured_index_url() -> str | None:
    """index-url from `pip config list` (pip's own reading of its files), if any."""
    try:
        listed = subprocess.run(
            [sys.executable, "-m", "pip", "config", "list"],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    values = {}
    for line in listed.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            values[key.strip()] = value.strip().strip("'\"")
    for key in ("install.index-url", "global.index-url"):
        if values.get(key):
            return values[key].split()[0]
    return None


@dataclass(frozen=True)
class Project:
    """What the index lists for one project: versions (as listed), every well-formed file, and
    per version what was wrong with the entries left out (a number where a hash should be)."""

    name: str
    versions: list[str]
    all_files: list[IndexFile] = field(default_factory=list)
    problems: dict[str, str] = field(default_factory=dict)

    def problem(self, version: str) -> str | None:
        """Why entries of this version were left out, if any were."""
        try:
            return self.problems.get(str(Version(version)))
        except InvalidVersion:
            return None

    def files(self, version: str) -> list[IndexFile]:
        """The wheels and sdists of one version (PEP 440 equality, so 1.0 matches 1.0.0)."""
        try:
            return self._by_version.get(Version(version), [])
        except InvalidVersion:
            return []

    @functools.cached_property
    def _by_version(self) -> dict[Version, list[IndexFile]]:
        """Each version's files, the names parsed once: a run asks for every locked version,
        and platform projects list thousands of files."""
        by_version: dict[Version, list[IndexFile]] = {}
        for file in self.all_files:
            version = _file_version(file.filename)
            if version is not None:
                by_version.setdefault(version, []).append(file)
        return by_version

    def pick_file(self, version: str) -> IndexFile | None:
        """The file to read sources from: a non-yanked pure-Python wheel first, then any wheel,
        then an sdist (the Python sources are the same in each). Among platform wheels (vLLM,
        bitsandbytes) the Linux x86-64 one wins, then the first filename: the choice never depends
        on the order the index lists files in, and it is the same platform on every release."""
        candidates = [f for f in self.files(version) if _kind_rank(f.filename) is not None]
        if not candidates:
            return None
        return min(
            candidates,
            key=lambda f: (f.yanked, _kind_rank(f.filename), _not_linux_x86_64(f), f.filename),
        )


def _file_version(filename: str) -> Version | None:
    try:
        if filename.endswith(".whl"):
            return parse_wheel_filename(filename)[1]
        return parse_sdist_filename(filename)[1]
    except (InvalidWheelFilename, InvalidSdistFilename, InvalidVersion):
        return None


def _kind_rank(filename: str) -> int | None:
    """0 pure-Python py3 wheel, 1 other pure wheel, 2 any wheel, 3 sdist, None unusable."""
    if filename.endswith(".whl"):
        tags = parse_wheel_filename(filename)[3]
        pure = [t for t in tags if t.abi == "none" and t.platform == "any"]
        if any(t.interpreter.startswith("py3") for t in pure):
            return 0
        return 1 if pure else 2
    return 3 if filename.endswith((".tar.gz", ".zip")) else None


def _not_linux_x86_64(file: IndexFile) -> bool:
    """False for a Linux x86-64 wheel: the platform every platform-wheel release ships."""
    if not file.filename.endswith(".whl"):
        return True
    tags = parse_wheel_filename(file.filename)[3]
    return not any(t.platform.endswith("x86_64") and "linux" in t.platform for t in tags)


class IndexClient:
    """Reads project pages from one simple-API index (cached and revalidated when given a cache)."""

    def __init__(
        self, http: Http, index_url: str, cache: Cache | None = None, limits: Limits | None = None
    ) -> None:
        self.http = http
        self.index_url = index_url.rstrip("/") + "/"
        self.cache = cache
        self.max_page = (limits or Limits()).max_index_page
        self._projects: dict[str, Project] = {}
        self._lock = threading.Lock()

    def project(self, name: str, *, refresh: bool = False) -> Project:
        """The project's page, parsed; memoized for the client's life unless `refresh`."""
        canonical = canonicalize_name(name)
        with self._lock:
            if refresh or canonical not in self._projects:
                self._projects[canonical] = self._load(canonical, refresh)
            return self._projects[canonical]

    def _load(self, name: str, refresh: bool) -> Project:
        url = self.index_url + name + "/"

        def fetch(etag: str | None) -> Reply:
            headers = {"Accept": ACCEPT, **({"If-None-Match": etag} if etag else {})}
            reply = self.http.get(url, headers, allow=(404,), max_bytes=self.max_page)
            return replace(reply, url=redact(reply.url))  # what is cached holds no password

        if self.cache is None:
            reply = fetch(None)
            meta = {
                "content_type": reply.headers.get("Content-Type", ""),
                "url": reply.url,
                "absent": reply.status == 404,
            }
            return self._parsed(name, url, reply.content, meta)
        key, what = f"index:{redact(url)}", f"index page {redact(url)}"
        entry = self.cache.revalidate(key, what, fetch, refresh=refresh)
        try:
            return self._parsed(name, url, entry.data, entry.meta)
        except SourceError:
            if refresh or self.cache.offline:
                raise
        # a cached page that does not parse (edited, or kept from an older canary): the whole
        # page again, without its ETag, rather than an error until it goes stale
        entry = self.cache.revalidate(key, what, lambda _etag: fetch(None), refresh=True)
        return self._parsed(name, url, entry.data, entry.meta)

    def _parsed(self, name: str, url: str, content: bytes, meta: dict[str, object]) -> Project:
        if meta.get("absent"):
            raise SourceError(f"{redact(url)}: project {name!r} not found on the package index")
        page_url = str(meta.get("url") or url)
        project = parse_project_page(name, content, str(meta.get("content_type", "")), page_url)
        return self._with_credentials(project)

    def _with_credentials(self, project: Project) -> Project:
        """Files on the index's own host get its user:password back (as pip does); the cache
        holds the page without them."""
        userinfo = _USERINFO.match(self.index_url)
        if userinfo is None:
            return project
        home = origin(self.index_url)
        files = [
            replace(
                f, url=f"{userinfo.group(1)}{userinfo.group(2)}{f.url[len(userinfo.group(1)) :]}"
            )
            if origin(f.url) == home and redact(f.url) == f.url
            else f
            for f in project.all_files
        ]
        return replace(project, all_files=files)


_USERINFO = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://)([^/?#]*@)")
_SHA256 = re.compile(r"[0-9a-fA-F]{64}")


def parse_project_page(name: str, content: bytes, content_type: str, page_url: str) -> Project:
    """A Project from a PEP 691 JSON or PEP 503 HTML page; other content types are errors."""
    mime = content_type.split(";")[0].strip().lower()
    try:
        if mime == JSON_TYPE:
            return _from_json(name, json.loads(content), page_url)
        if mime in _HTML_TYPES:
            return _from_html(name, content.decode("utf-8", "replace"), page_url)
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
        why = f"{type(exc).__name__}: {exc}"[:200]
        raise SourceError(f"{redact(page_url)}: malformed index page: {why}") from None
    raise SourceError(f"{redact(page_url)}: unexpected content type {content_type!r}")


class _BadEntry(CanaryError, ValueError):
    """One file entry of a page has a field of the wrong type or form."""

    exit_code = ExitCode.FAILED


def _text(value: object, what: str, *, optional: bool = False) -> str | None:
    """A string field of the page: text that can be sent and printed, or None when optional."""
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise _BadEntry(f"{what} is {type(value).__name__}, not text")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise _BadEntry(f"{what} is not valid Unicode text") from None
    return value


def _label(value: object) -> str | None:
    """A version label as listed, or None when it could corrupt a lock or a terminal."""
    if not isinstance(value, str) or not value or not value.isprintable() or " " in value:
        return None
    return value


def _from_json(name: str, data: dict[str, Any], page_url: str) -> Project:
    major = str(data.get("meta", {}).get("api-version", "1.0")).split(".")[0]
    if major != "1":
        raise SourceError(f"{redact(page_url)}: unsupported simple API version {major}")
    files = []
    problems: dict[str, str] = {}
    for item in data["files"]:
        filename = item["filename"]
        if not isinstance(filename, str):
            raise TypeError(f"a file entry's filename is {type(filename).__name__}, not text")
        version = _file_version(filename)
        try:
            if _label(filename) is None:
                raise _BadEntry("its filename has spaces or control characters")
            files.append(_file_entry(item, filename, page_url))
        except _BadEntry as exc:
            if version is not None:
                why = f"the index entry of {filename!r} is malformed: {exc}"
                problems.setdefault(str(version), why)
    versions = data.get("versions")
    if not isinstance(versions, list):
        versions = _versions_of(files)
    labels = [label for label in map(_label, versions) if label is not None]
    return Project(name, labels, files, problems)


def _file_entry(item: dict[str, Any], filename: str, page_url: str) -> IndexFile:
    hashes = item.get("hashes") or {}
    if not isinstance(hashes, dict):
        raise _BadEntry(f"hashes is {type(hashes).__name__}, not an object")
    digest = _text(hashes.get("sha256"), "sha256", optional=True)
    if digest is not None and not _SHA256.fullmatch(digest):
        raise _BadEntry("sha256 is not 64 hex digits")
    yanked = item.get("yanked", False)
    size = item.get("size")
    return IndexFile(
        filename=filename,
        url=urljoin(page_url, _text(item.get("url"), "url")),
        size=size if isinstance(size, int) and not isinstance(size, bool) and size >= 0 else None,
        sha256=digest,
        yanked=yanked is True or isinstance(yanked, str),
        requires_python=_text(item.get("requires-python"), "requires-python", optional=True),
    )


class _Anchors(HTMLParser):
    """Collects the attributes of every <a> tag of a PEP 503 page."""

    def __init__(self) -> None:
        super().__init__()
        self.anchors: list[dict[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self.anchors.append(dict(attrs))


def _from_html(name: str, text: str, page_url: str) -> Project:
    parser = _Anchors()
    parser.feed(text)
    files = []
    for attrs in parser.anchors:
        href = attrs.get("href")
        if not href:
            continue
        url, fragment = urldefrag(urljoin(page_url, href))
        algorithm, _, digest = fragment.partition("=")
        filename = _label(unquote(urlsplit(url).path.rsplit("/", 1)[-1]))
        if filename is None:  # spaces or control characters: no release file is named so
            continue
        files.append(
            IndexFile(
                filename=filename,
                url=url,
                sha256=digest if algorithm == "sha256" and digest else None,
                yanked="data-yanked" in attrs,
                requires_python=attrs.get("data-requires-python"),
            )
        )
    return Project(name, _versions_of(files), files)


def _versions_of(files: list[IndexFile]) -> list[str]:
    """Distinct versions in order of first appearance, from the filenames."""
    seen: dict[str, None] = {}
    for file in files:
        version = _file_version(file.filename)
        if version is not None:
            seen.setdefault(str(version), None)
    return list(seen)
