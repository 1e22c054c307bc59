"""The few GitHub REST calls the nightly makes, at `GITHUB_API_URL` with the job's token."""

from __future__ import annotations

from typing import Any

import requests

from canary.action.runner import ActionError

TIMEOUT = (10, 60)


class GitHub:
    """One repository's API. Every failure names the call, the status and GitHub's message."""

    def __init__(self, api_url: str, repository: str, token: str) -> None:
        self.base = f"{api_url.rstrip('/')}/repos/{repository}"
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
        try:
            reply = self.session.request(method, url, timeout=TIMEOUT, **kwargs)
        except requests.RequestException as exc:
            raise ActionError(f"{method} {url}: {exc}") from None
        if reply.status_code in ok:
            return None
        if reply.status_code >= 400:
            try:
                message = reply.json().get("message", "")
            except ValueError:
                message = reply.text[:200]
            raise ActionError(f"{method} {url}: HTTP {reply.status_code} {message}".rstrip())
        return reply.json() if reply.content else None

    def download(self, url: str) -> bytes:
        """An artifact's zip; GitHub answers with a redirect to storage, which requests follows
        without the token (it drops Authorization on a change of host)."""
        try:
            reply = self.session.get(url, timeout=TIMEOUT)
            reply.raise_for_status()
        except requests.RequestException as exc:
            raise ActionError(f"GET {url}: {exc}") from None
        return reply.content
