"""Credentials out of a URL before it is shown or stored: every source names URLs in its
errors, and most of them never need the HTTP client (see canary.sources.context)."""

from __future__ import annotations

import re

_USERINFO = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://)[^/?#]*@")


def redact(url: str) -> str:
    """The URL without user:password (everything before the authority's last `@`)."""
    return _USERINFO.sub(r"\1", url)
