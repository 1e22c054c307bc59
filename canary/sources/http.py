"""One pooled HTTP client with the retry rules every remote source relies on.

Transient trouble (resets, timeouts, truncated bodies, 429, 5xx) is retried with exponential
backoff and jitter, honoring Retry-After within a bound; anything left after the retries becomes
a SourceError naming the URL and the cause. A GitHub token goes to the configured GitHub origins
only and never appears in a message.
"""

from __future__ import annotations

import email.utils
import os
import random
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

import requests
from requests.adapters import HTTPAdapter

from canary import __version__
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


class _Retryable(Exception):
    """A failed attempt worth repeating; `wait` overrides the backoff when the server said so."""

    def __init__(self, cause: str, wait: float | None = None) -> None:
        super().__init__(cause)
        self.wait = wait


def redact(url: str) -> str:
    """The URL without user:password, safe for messages."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))


def origin(url: str) -> str:
    """scheme://host:port of a URL: the unit a token is scoped to."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc.rsplit('@', 1)[-1]}".lower()


def github_token() -> str | None:
    """GITHUB_TOKEN, else GH_TOKEN, as the GitHub tools read them."""
    return os.environ.get("GITHUB_TOKEN") or os.environ.get("GH_TOKEN") or None


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
        pool_size: int = 32,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.stats = stats
        self.policy = policy or RetryPolicy()
        self._token = token
        self._token_origins = frozenset(origin(o) for o in token_origins)
        self._sleep = sleep
        self._session = requests.Session()
        adapter = HTTPAdapter(pool_connections=pool_size, pool_maxsize=pool_size, max_retries=0)
        self._session.mount("http://", adapter)
        self._session.mount("https://", adapter)
        self._session.headers["User-Agent"] = USER_AGENT
        # Hosts that never answered a connection in this run: later requests fail at once
        # instead of spending a full retry budget each (a whole GitHub ref when offline).
        self._unreachable: dict[str, str] = {}

    def close(self) -> None:
        self._session.close()

    def get(
        self,
        url: str,
        headers: Mapping[str, str] | None = None,
        *,
        allow: Iterable[int] = (404,),
        max_bytes: int | None = None,
    ) -> Reply:
        """GET with retries. 2xx, 304 and the `allow` statuses are returned; others raise."""
        allowed = frozenset(allow)
        policy = self.policy
        host = origin(url)
        if host in self._unreachable:
            raise SourceError(f"{redact(url)}: {host} unreachable: {self._unreachable[host]}")
        cause = "no attempt made"
        retry = 0
        rate_limit_waited = False
        connected = False
        while retry < policy.attempts:
            try:
                reply = self._attempt(url, headers, max_bytes)
                connected = True
                if reply.status < 300 or reply.status == 304 or reply.status in allowed:
                    return reply
                wait = self._rate_limit_wait(url, reply, rate_limit_waited)
                if wait is not None:
                    rate_limit_waited = True
                    self._sleep(wait)
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
            except requests.RequestException as exc:
                raise SourceError(f"{redact(url)}: {type(exc).__name__}: {_short(exc)}") from None
            retry += 1
            if retry < policy.attempts:
                delay = policy.delay(retry - 1) if wait is None else wait
                self._sleep(min(delay, policy.retry_after_cap))
        cause = f"{cause} (after {policy.attempts} attempts)"
        if not connected:
            self._unreachable[host] = cause
        raise SourceError(f"{redact(url)}: {cause}")

    def _attempt(self, url: str, headers: Mapping[str, str] | None, max_bytes: int | None) -> Reply:
        """One request, body read whole and checked against Content-Length."""
        sent = dict(headers or {})
        if self._token and origin(url) in self._token_origins:
            sent["Authorization"] = f"Bearer {self._token}"
        self.stats.add(requests=1)
        timeout = (self.policy.connect_timeout, self.policy.read_timeout)
        with self._session.get(url, headers=sent, timeout=timeout, stream=True) as resp:
            body = bytearray()
            try:
                for chunk in resp.iter_content(64 * 1024):
                    body += chunk
                    if max_bytes is not None and len(body) > max_bytes:
                        raise SourceError(
                            f"{redact(url)}: response exceeds the {max_bytes} byte limit"
                        )
            finally:
                self.stats.add(bytes_downloaded=resp.raw.tell() or len(body))
            expected = resp.headers.get("Content-Length")
            encoded = resp.headers.get("Content-Encoding", "identity") != "identity"
            if expected and expected.isdigit() and not encoded and int(expected) != len(body):
                raise _Retryable(f"truncated body ({len(body)} of {expected} bytes)")
            return Reply(resp.url or url, resp.status_code, resp.headers, bytes(body))

    def _rate_limit_wait(self, url: str, reply: Reply, waited: bool) -> float | None:
        """Seconds to wait for GitHub's rate-limit reset; raise when too long or waited once."""
        if reply.status not in (403, 429) or origin(url) not in self._token_origins:
            return None
        if reply.headers.get("x-ratelimit-remaining") != "0":
            return None
        reset = reply.headers.get("x-ratelimit-reset", "")
        wait = max(0.0, float(reset) - time.time()) if reset.isdigit() else None
        if waited or wait is None or wait > self.policy.rate_limit_wait_cap:
            when = "at an unknown time" if wait is None else f"in {wait:.0f} s"
            raise SourceError(
                f"{redact(url)}: GitHub rate limit exhausted; it resets {when} "
                "(set GITHUB_TOKEN or GH_TOKEN for a higher limit)"
            )
        return wait + 0.5


def _short(exc: Exception) -> str:
    """The first line of an exception, without the nesting urllib3 adds."""
    text = str(exc).splitlines()[0] if str(exc) else ""
    return text[:200]
