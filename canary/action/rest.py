"""The few GitHub REST calls the nightly makes, at `GITHUB_API_URL` with the job's token.

A refused connection, a 5xx or a 429 is retried with backoff when the call can safely be made
twice (GET, PATCH); a POST is retried only when it never reached the server, so a lost reply
cannot open a second issue. The first wait is one second, or the run's CANARY_RETRY_BACKOFF.
"""

from __future__ import annotations

import time
from typing import Any

import requests

from canary.action.runner import ActionError
from canary.sources.http import RetryPolicy

TIMEOUT = (10, 60)
ATTEMPTS = 4
BACKOFF = 1.0
_AGAIN = frozenset({429, 500, 502, 503, 504})


class GitHub:
    """One repository's API. Every failure names the call, the status and GitHub's message."""

    def __init__(
        self, api_url: str, repository: str, token: str, backoff: float | None = None
    ) -> None:
        self.base = f"{api_url.rstrip('/')}/repos/{repository}"
        self.retry = RetryPolicy(attempts=ATTEMPTS, backoff=BACKOFF if backoff is None else backoff)
        self.session = requests.Session()
        self.session.headers.update(
            {
                "Accept": "application/vnd.github+json",
                "X-GitHub-Api-Version": "2022-11-28",
                **({"Authorization": f"Bearer {token}"} if token else {}),
            }
        )

    def call(self, method: str, path: str, *, ok: tuple[int, ...] = (), **kwargs: Any) -> Any:
        url = f"{self.base}{path}"
        reply = self._send(method, url, **kwargs)
        if reply.status_code in ok:
            return None
        if reply.status_code >= 400:
            try:
                message = reply.json().get("message", "")
            except ValueError:
                message = reply.text[:200]
            raise ActionError(f"{method} {url}: HTTP {reply.status_code} {message}".rstrip())
        return reply.json() if reply.content else None

    def _send(self, method: str, url: str, **kwargs: Any) -> requests.Response:
        safe = method in ("GET", "PATCH")
        for attempt in range(self.retry.attempts - 1):
            try:
                reply = self.session.request(method, url, timeout=TIMEOUT, **kwargs)
            except requests.ConnectTimeout:
                pass  # never reached the server: any call may go again
            except requests.RequestException as exc:
                if not safe:
                    raise ActionError(f"{method} {url}: {exc}") from None
            else:
                if not safe or reply.status_code not in _AGAIN:
                    return reply
            time.sleep(self.retry.delay(attempt))
        try:
            return self.session.request(method, url, timeout=TIMEOUT, **kwargs)
        except requests.RequestException as exc:
            raise ActionError(f"{method} {url}: {exc}") from None

    def download(self, url: str, limit: int) -> bytes:
        """An artifact's zip, at most `limit` bytes; GitHub answers with a redirect to storage,
        which requests follows without the token (it drops Authorization on a change of host)."""
        reply = self._send("GET", url, stream=True)
        with reply:
            if reply.status_code >= 400:
                raise ActionError(f"GET {url}: HTTP {reply.status_code}")
            data = bytearray()
            try:
                for chunk in reply.iter_content(64 * 1024):
                    data += chunk
                    if len(data) > limit:
                        raise ActionError(f"GET {url}: larger than the {limit} byte limit")
            except requests.RequestException as exc:
                raise ActionError(f"GET {url}: {exc}") from None
        return bytes(data)
