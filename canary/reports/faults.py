"""Sources that could not be read, said once per cause rather than once per check.

When GitHub is unreachable, every check of `main` is an `error` carrying the same long
exception text; a log of 159 such lines hides the one fact that matters. Reports fold those
results into one line per cause ("GitHub unreachable (name resolution failed)") with the
versions and the number of checks it left without a verdict. Errors that belong to one check
(a file that does not parse, a version that cannot be decided) stay with their check.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from canary.engine.outcomes import Result, RunReport, Status
from canary.reports.fitting import shortened
from canary.reports.grid import build_grids, plural, spans_text

_URL = re.compile(r"https?://([^/\s:]+)[^\s]*")
#: (pattern in the exception text, what it means), most specific first
_NETWORK = (
    ("NameResolutionError", "name resolution failed"),
    ("Failed to resolve", "name resolution failed"),
    ("ConnectTimeout", "connection timed out"),
    ("ReadTimeout", "read timed out"),
    ("Timeout", "timed out"),
    ("SSLError", "TLS handshake failed"),
    ("Connection refused", "connection refused"),
    ("ConnectionError", "connection failed"),
    ("truncated body", "replies cut short"),
)
_HTTP = re.compile(r"\bHTTP (\d{3})\b")
#: when GitHub's limit resets, as canary.sources.http says it
_RESET = re.compile(r"resets in \d+ s, at (\d\d:\d\d:\d\d UTC)")
#: the least of a failed URL a log line keeps (its host and its file name)
URL_MIN = 60


def _where(detail: str) -> str:
    host = next((m.group(1) for m in _URL.finditer(detail)), "")
    return "GitHub" if "github" in host.lower() else "the package index"


def short_cause(result: Result) -> str | None:
    """What stopped the source of `result` from being read, in a few words; None when the
    error is the check's own (its file did not parse, its gate could not be decided)."""
    if result.status is not Status.ERROR:
        return None
    detail = result.detail
    if "offline:" in detail:
        return "not in the cache (offline; run once online to fill it)"
    if "rate limit" in detail:
        reset = _RESET.search(detail)
        until = f" until {reset.group(1)}" if reset else ""
        return f"GitHub rate limit exhausted{until} (set GITHUB_TOKEN or GH_TOKEN)"
    for needle, meaning in _NETWORK:
        if needle in detail:
            return f"{_where(detail)} unreachable ({meaning})"
    if status := _HTTP.search(detail):
        return f"{_where(detail)} answered HTTP {status.group(1)}"
    # the version's source could not be opened (maybe said while deciding a gate)
    prefix = f"{result.upstream} {result.version}: "
    at = detail.find(prefix)
    return detail[at + len(prefix) :] if at >= 0 else None


def fault_text(result: Result) -> str | None:
    """A source fault's one line for one result it left unjudged (a JUnit case, an HTML cell):
    the short cause and the URL that failed; None for any other result."""
    cause = short_cause(result)
    if cause is None:
        return None
    url = failed_url(result.detail)
    return f"{cause} ({url})" if url else cause


@dataclass
class SourceFault:
    """One cause, the upstream versions it hit, and how many checks it left unjudged."""

    cause: str
    versions: dict[str, list[str]] = field(default_factory=dict)  # upstream -> labels
    checks: int = 0
    urls: list[str] = field(default_factory=list)  # each URL that failed, once, as met
    detail: str = ""  # the whole message of the first result it hit

    def where(self, order: dict[str, list[str]]) -> str:
        return ", ".join(
            f"{name}[{spans_text(labels, order.get(name, labels))}]"
            for name, labels in self.versions.items()
        )

    def line(self, order: dict[str, list[str]], width: int | None = None) -> str:
        """The cause's line; with `width` (a log's), the versions and the URL that failed are
        cut in their middle, the URL to no less than URL_MIN, so that it fits."""
        where = self.where(order)
        if width is not None:
            where = shortened(where, width // 2)
        text = f"{where} {self.cause}; {plural(self.checks, 'check')} not run"
        if self.urls:
            more = f" and {plural(len(self.urls) - 1, 'other URL')}" if len(self.urls) > 1 else ""
            url = self.urls[0]
            if width is not None:
                url = shortened(url, max(URL_MIN, width - len(text) - len(more) - 3))
            text += f" ({url}{more})"
        return text


def split_faults(report: RunReport) -> tuple[list[SourceFault], list[Result]]:
    """The source faults of a run, and every result they do not account for."""
    faults: dict[str, SourceFault] = {}
    rest: list[Result] = []
    for result in report.results:
        cause = short_cause(result)
        if cause is None:
            rest.append(result)
            continue
        fault = faults.setdefault(cause, SourceFault(cause, detail=result.detail))
        labels = fault.versions.setdefault(result.upstream, [])
        if result.version not in labels:
            labels.append(result.version)
        fault.checks += 1
        url = failed_url(result.detail)
        if url and url not in fault.urls:
            fault.urls.append(url)
    return list(faults.values()), rest


def failed_url(detail: str) -> str | None:
    """The URL a source error names first: the request that failed (canary's own message
    leads with it; urllib3's text after it names its connection pool's, not the file's)."""
    found = _URL.search(detail)
    return found.group(0).rstrip(":,;)") if found else None


def version_order(report: RunReport) -> dict[str, list[str]]:
    """Each upstream's versions in check order, to write faults' versions as spans."""
    return {grid.name: grid.versions for grid in build_grids(report)}
