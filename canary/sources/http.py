"""One pooled HTTP client with the retry rules every remote source relies on.

Transient trouble (resets, timeouts, truncated bodies, 429, 5xx) is retried with exponential
backoff and jitter, honoring Retry-After within a bound; anything left after the retries becomes
a SourceError naming the URL and the cause. Every request ends within a total deadline (see
canary.sources.deadline), redirects included. A GitHub token goes only on the requests canary's
GitHub source builds (`github=True`), only to the configured GitHub origins as the connection
itself parses them, and never appears in a message; URLs that two parsers read differently
are refused.
"""

from __future__ import annotations

import email.utils
import random
import re
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin, urlsplit

import requests
from urllib3.exceptions import LocationParseError
from urllib3.util import parse_url

from canary._version import __version__
from canary.errors import CanaryError, ExitCode
from canary.sources.deadline import Deadline, DeadlineAdapter, bounded
from canary.sources.redact import redact
from canary.sources.stats import Stats
from canary.sources.tree import SourceError

USER_AGENT = f"canary/{__version__}"
_RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
_RETRY_ERRORS = (
    requests.ConnectionError,
    requests.Timeout,
    requests.exceptions.ChunkedEncodingError,
    requests.exceptions.ContentDecodingError,
)


@dataclass(frozen=True)
class RetryPolicy:
    """How hard to try; tests shrink the delays so faults cost milliseconds."""

    attempts: int = 5
    backoff: float = 0.5
    backoff_cap: float = 10.0
    retry_after_cap: float = 60.0
    rate_limit_wait_cap: float = 60.0
    connect_timeout: float = 10.0
    read_timeout: float = 60.0
    #: a whole `get`, its retries, waits and redirects included, ends by then (a server
    #: dripping bytes never trips the read timeout)
    deadline: float = 300.0
    max_redirects: int = 5

    def delay(self, retry: int) -> float:
        """Exponential backoff with jitter for the given retry (0-based)."""
        ceiling = min(self.backoff_cap, self.backoff * (2**retry))
        return ceiling * (0.5 + random.random() / 2)


@dataclass(frozen=True)
class Reply:
    """A fully read response: status, headers (case-insensitive) and the verified body."""

    url: str
    status: int
    headers: Mapping[str, str]
    content: bytes


class _Retryable(CanaryError):
    """A failed attempt worth repeating; `wait` overrides the backoff when the server said so."""

    exit_code = ExitCode.FAILED

    def __init__(self, cause: str, wait: float | None = None) -> None:
        super().__init__(cause)
        self.wait = wait


_CREDENTIALS = re.compile(r"//[^/?#\s]*@")
_DEFAULT_PORTS = {"http": 80, "https": 443}


def origin(url: str) -> str:
    """scheme://host:port as the connection is made: urllib3's parser, the one requests uses."""
    try:
        parts = parse_url(url)
    except LocationParseError:
        return ""
    scheme = (parts.scheme or "").lower()
    return f"{scheme}://{(parts.host or '').lower()}:{parts.port or _DEFAULT_PORTS.get(scheme)}"


def checked_url(url: str) -> str:
    """The URL, if it can be sent and every parser agrees on its host; else a SourceError.

    `https://evil\\@host/` is host `host` to urllib.parse but `evil` to the connection: a
    check made with one parser and a request made with the other would disagree."""
    try:
        url.encode("utf-8")
    except UnicodeEncodeError:
        raise SourceError(f"{redact(url)!a}: not a valid URL (unencodable text)") from None
    try:
        connects_to = parse_url(url)
        split = urlsplit(url)
    except (LocationParseError, ValueError) as exc:
        raise SourceError(f"{redact(url)}: not a valid URL: {_short(exc)}") from None
    if (connects_to.scheme or "").lower() not in _DEFAULT_PORTS:
        raise SourceError(f"{redact(url)}: not an http(s) URL")
    if "\\" in split.netloc or (connects_to.host or "").lower() != (split.hostname or ""):
        raise SourceError(f"{redact(url)}: ambiguous URL (its host depends on the parser)")
    return url


def _retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header (delta-seconds or HTTP date), None when absent/bad."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


class Http:
    """The run's single Session: pooling, timeouts, retries, byte and request counts."""

    def __init__(
        self,
        stats: Stats,
        policy: RetryPolicy | None = None,
        *,
        token: str | None = None,
        token_origins: Iterable[str] = (),
        ca_bundle: str | None = None,
        pool_size: int = 32,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.stats = stats
        self.policy = policy or RetryPolicy()
        self._token = token
        self._ca_bundle = ca_bundle
        self._token_origins = frozenset(origin(o) for o in token_origins)
        self._sleep = sleep
        self._session = requests.Session()
        adapter = DeadlineAdapter(pool_connections=pool_size, pool_maxsize=pool_size, max_retries=0)
        self._session.mount("http://", adapter)
        self._session.mount("https://", adapter)
        self._session.headers["User-Agent"] = USER_AGENT
        # requests reads proxies, NO_PROXY, a CA bundle and netrc from the environment on every
        # request, which cost more CPU than the request itself: _environment reads them once
        # per origin instead
        self._session.trust_env = False
        self._environments: dict[str, dict[str, Any]] = {}
        # Hosts that never answered a connection in this run: later requests fail at once
        # instead of spending a full retry budget each (a whole GitHub ref when offline).
        self._unreachable: dict[str, str] = {}

    def close(self) -> None:
        self._session.close()

    def _environment(self, url: str) -> dict[str, Any]:
        """Proxies and netrc credentials for `url` as requests finds them in the environment,
        and the run's CA bundle (requests' own variables, read once by Settings)."""
        key = origin(url)
        found = self._environments.get(key)
        if found is None:
            found = self._environments[key] = {
                "proxies": requests.utils.get_environ_proxies(url),  # NO_PROXY applied
                "verify": self._ca_bundle or True,
                "auth": requests.utils.get_netrc_auth(url),
            }
        return found

    def get(
        self,
        url: str,
        headers: Mapping[str, str] | None = None,
        *,
        allow: Iterable[int] = (404,),
        max_bytes: int | None = None,
        github: bool = False,
    ) -> Reply:
        """GET with retries. 2xx, 304 and the `allow` statuses are returned; others raise.

        `github` marks a request canary's GitHub source built: only those carry the token."""
        allowed = frozenset(allow)
        policy = self.policy
        checked_url(url)
        host = origin(url)
        if host in self._unreachable:
            raise SourceError(f"{redact(url)}: {host} unreachable: {self._unreachable[host]}")
        deadline = Deadline(policy.deadline)
        cause = "no attempt made"
        retry = 0
        rate_limit_waited = False
        connected = False
        while retry < policy.attempts:
            if deadline.remaining() <= 0:
                cause = f"{cause}; no complete answer within {policy.deadline:g} s"
                raise SourceError(f"{redact(url)}: {cause}")
            try:
                reply = self._attempt(url, headers, max_bytes, github, deadline)
                connected = True
                if reply.status < 300 or reply.status == 304 or reply.status in allowed:
                    return reply
                wait = self._rate_limit_wait(url, reply, rate_limit_waited, github)
                if wait is not None:
                    rate_limit_waited = True
                    self._sleep(min(wait, max(0.0, deadline.remaining())))
                    continue
                if reply.status not in _RETRY_STATUSES:
                    raise SourceError(f"{redact(url)}: HTTP {reply.status}")
                raise _Retryable(
                    f"HTTP {reply.status}", _retry_after(reply.headers.get("Retry-After"))
                )
            except _Retryable as exc:
                connected = True
                cause, wait = str(exc), exc.wait
            except _RETRY_ERRORS as exc:
                connected = connected or not isinstance(exc, requests.ConnectionError)
                cause, wait = f"{type(exc).__name__}: {_short(exc)}", None
                if deadline.expired:
                    connected, cause = True, f"no complete answer within {policy.deadline:g} s"
            except requests.RequestException as exc:
                raise SourceError(f"{redact(url)}: {type(exc).__name__}: {_short(exc)}") from None
            retry += 1
            if retry < policy.attempts:
                delay = policy.delay(retry - 1) if wait is None else wait
                self._sleep(max(0.0, min(delay, policy.retry_after_cap, deadline.remaining())))
        cause = f"{cause} (after {policy.attempts} attempts)"
        if not connected:
            self._unreachable[host] = cause
        raise SourceError(f"{redact(url)}: {cause}")

    def _attempt(
        self,
        url: str,
        headers: Mapping[str, str] | None,
        max_bytes: int | None,
        github: bool,
        deadline: Deadline,
    ) -> Reply:
        """One request, redirects followed by hand (their bodies are never read), body read
        whole and checked against Content-Length; the token goes to GitHub origins only."""
        timeout = (self.policy.connect_timeout, self.policy.read_timeout)
        hop = url
        for _ in range(self.policy.max_redirects + 1):
            sent = dict(headers or {})
            if github and self._token and origin(hop) in self._token_origins:
                sent["Authorization"] = f"Bearer {self._token}"
            self.stats.add(requests=1)
            with (
                bounded(deadline),
                self._session.get(
                    hop,
                    headers=sent,
                    timeout=timeout,
                    stream=True,
                    allow_redirects=False,
                    **self._environment(hop),
                ) as resp,
            ):
                if resp.is_redirect:
                    hop = checked_url(urljoin(hop, resp.headers["Location"]))
                    continue
                return self._read(url, resp, max_bytes, deadline)
        raise SourceError(f"{redact(url)}: more than {self.policy.max_redirects} redirects")

    def _read(
        self, url: str, resp: requests.Response, max_bytes: int | None, deadline: Deadline
    ) -> Reply:
        body = bytearray()
        try:
            for chunk in resp.iter_content(64 * 1024):
                body += chunk
                if max_bytes is not None and len(body) > max_bytes:
                    raise SourceError(f"{redact(url)}: response exceeds the {max_bytes} byte limit")
        finally:
            self.stats.add(bytes_downloaded=resp.raw.tell() or len(body))
        if deadline.expired:  # the watchdog cut the connection: what came is not the body
            raise _Retryable(f"no complete answer within {deadline.seconds:g} s")
        expected = resp.headers.get("Content-Length")
        encoded = resp.headers.get("Content-Encoding", "identity") != "identity"
        if expected and expected.isdigit() and not encoded and int(expected) != len(body):
            raise _Retryable(f"truncated body ({len(body)} of {expected} bytes)")
        return Reply(resp.url or url, resp.status_code, resp.headers, bytes(body))

    def _rate_limit_wait(self, url: str, reply: Reply, waited: bool, github: bool) -> float | None:
        """Seconds to wait for GitHub's rate-limit reset; raise when too long or waited once."""
        if reply.status not in (403, 429) or not github:
            return None
        if reply.headers.get("x-ratelimit-remaining") != "0":
            return None
        reset = reply.headers.get("x-ratelimit-reset", "")
        wait = max(0.0, float(reset) - time.time()) if reset.isdigit() else None
        if waited or wait is None or wait > self.policy.rate_limit_wait_cap:
            when = "at an unknown time" if wait is None else f"in {wait:.0f} s, at {_clock(reset)}"
            raise SourceError(
                f"{redact(url)}: GitHub rate limit exhausted; it resets {when} "
                "(set GITHUB_TOKEN or GH_TOKEN for a higher limit)"
            )
        return wait + 0.5


def _clock(epoch: str) -> str:
    """GitHub's `x-ratelimit-reset` (seconds since the epoch) as a UTC time of day."""
    return time.strftime("%H:%M:%S UTC", time.gmtime(int(epoch)))


def _short(exc: Exception) -> str:
    """The first line of an exception, without the nesting urllib3 adds."""
    text = str(exc).splitlines()[0] if str(exc) else ""
    return _CREDENTIALS.sub("//", text)[:200]
