"""One run's configuration, read once: the environment (`CANARY_*`, pip's index variables,
GitHub's token, requests' CA bundle), then the command's options. The runner, version selection
and the sources are handed this object; this module is the only reader of those variables.

Where the matrices are is the project's `[tool.canary]` table (`canary.matrix.config`), a fact
of the repository rather than of one run, so it is not held here."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import platformdirs

from canary.errors import UsageError

MAX_JOBS = 256
#: the longest first wait before a retry that CANARY_RETRY_BACKOFF may ask for
MAX_BACKOFF = 60.0
_TRUE = ("1", "true", "yes", "on")


def default_jobs() -> int:
    """Fetching is latency-bound, so more threads than cores pays off."""
    return min(32, (os.cpu_count() or 1) * 4)


def default_cache_dir(environ: Mapping[str, str] | None = None) -> Path:
    """CANARY_CACHE_DIR, else the platform's user cache folder for canary."""
    configured = (os.environ if environ is None else environ).get("CANARY_CACHE_DIR")
    return Path(configured) if configured else Path(platformdirs.user_cache_dir("canary"))


def _retry_backoff(text: str | None) -> float | None:
    """CANARY_RETRY_BACKOFF's seconds; unset or empty: None. Anything but a number from 0 to
    MAX_BACKOFF is a usage error naming the variable, never a silent default."""
    if text is None or not text.strip():
        return None
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not 0 <= seconds <= MAX_BACKOFF:  # also refuses nan and inf
        raise UsageError(
            f"CANARY_RETRY_BACKOFF={text!r}: expected seconds from 0 to {MAX_BACKOFF:g}"
        )
    return seconds


@dataclass(frozen=True)
class Settings:
    """What a run is configured with; frozen, so one object describes one run throughout."""

    #: read the cache alone (`--offline`, CANARY_OFFLINE=1)
    offline: bool = False
    #: where fetched files, indexes and verdicts are kept (CANARY_CACHE_DIR)
    cache_dir: Path = field(default_factory=default_cache_dir)
    #: versions read at once (`--jobs`)
    jobs: int = field(default_factory=default_jobs)
    #: the package index (CANARY_INDEX_URL, else PIP_INDEX_URL); None: pip's configuration,
    #: looked up only when the index is first needed
    index_url: str | None = None
    #: GitHub's raw-content and API bases (CANARY_GITHUB_RAW_URL, CANARY_GITHUB_API_URL);
    #: None: GitHub's public hosts
    github_raw_url: str | None = None
    github_api_url: str | None = None
    #: sent to the GitHub hosts only (GITHUB_TOKEN, else GH_TOKEN, as GitHub's tools read them)
    github_token: str | None = field(default=None, repr=False)
    #: the CA certificates to trust (REQUESTS_CA_BUNDLE, else CURL_CA_BUNDLE, as requests reads
    #: them); None: requests' own bundle
    ca_bundle: str | None = None
    #: the first wait before a failed request is tried again, in seconds, doubled at each retry
    #: up to its cap (CANARY_RETRY_BACKOFF); None: each client's own (0.5 s for the index and
    #: the sources, 1 s for the Action's GitHub calls). The number of tries is not changed.
    retry_backoff: float | None = None

    @classmethod
    def from_environment(
        cls,
        environ: Mapping[str, str] | None = None,
        *,
        offline: bool = False,
        jobs: int | None = None,
    ) -> Settings:
        """The environment's settings (os.environ unless given), then the options: `offline`
        adds to CANARY_OFFLINE, `jobs` replaces the default."""
        env = os.environ if environ is None else environ
        return cls(
            offline=offline or env.get("CANARY_OFFLINE", "").strip().lower() in _TRUE,
            cache_dir=default_cache_dir(env),
            jobs=jobs if jobs is not None else default_jobs(),
            index_url=env.get("CANARY_INDEX_URL") or env.get("PIP_INDEX_URL") or None,
            github_raw_url=env.get("CANARY_GITHUB_RAW_URL") or None,
            github_api_url=env.get("CANARY_GITHUB_API_URL") or None,
            github_token=env.get("GITHUB_TOKEN") or env.get("GH_TOKEN") or None,
            ca_bundle=env.get("REQUESTS_CA_BUNDLE") or env.get("CURL_CA_BUNDLE") or None,
            retry_backoff=_retry_backoff(env.get("CANARY_RETRY_BACKOFF")),
        )
