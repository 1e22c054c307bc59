"""Where a release says its source lives: the GitHub repository named by its core metadata
(`Project-URL` and `Home-page` in a wheel's METADATA, an sdist's PKG-INFO).

`canary scan` and `init` write `github:` (and so `include: [main]`) for an upstream canary does
not know from this, read by range request like any member; the metadata is upstream text, so
only a URL of the GitHub host with an OWNER/NAME of the characters GitHub allows is taken.
"""

from __future__ import annotations

import re
from email.parser import HeaderParser

from canary.sources.tree import Tree

_GITHUB = re.compile(
    r"https?://(?:www\.)?github\.com/([A-Za-z0-9](?:[A-Za-z0-9-]{0,38}))/([A-Za-z0-9_.-]{1,100}?)"
    r"(?:\.git)?(?:[/#?].*)?$"
)
#: Project-URL labels that name the code, in order of trust (normalized: lower case, no
#: punctuation or spaces, as PEP 753 compares them); then any other label, then Home-page
_SOURCE_LABELS = ("source", "sourcecode", "repository", "code", "github", "homepage")


def github_repository(metadata: str) -> str | None:
    """OWNER/NAME of the GitHub repository the core metadata names, if any."""
    message = HeaderParser().parsestr(metadata)
    labelled: list[tuple[str, str]] = []
    for value in message.get_all("Project-URL") or []:
        label, _, url = str(value).partition(",")
        labelled.append((re.sub(r"[^a-z0-9]", "", label.lower()), url.strip()))
    ranked = sorted(
        labelled,
        key=lambda pair: (
            _SOURCE_LABELS.index(pair[0]) if pair[0] in _SOURCE_LABELS else len(_SOURCE_LABELS)
        ),
    )
    urls = [url for _, url in ranked] + [str(v) for v in message.get_all("Home-page") or []]
    for url in urls:
        found = _GITHUB.match(url.strip())
        if found and found.group(2) not in (".", ".."):
            return f"{found.group(1)}/{found.group(2)}"
    return None


def release_repository(tree: Tree) -> str | None:
    """The repository a release's metadata names: its wheel's `*.dist-info/METADATA` (the
    listing is the wheel's central directory, already read), else an sdist's PKG-INFO."""
    names = tree.files() or []
    member = next(
        (n for n in names if n.count("/") == 1 and n.endswith(".dist-info/METADATA")), None
    )
    data = tree.read(member) if member else tree.read_meta("PKG-INFO")
    if data is None:
        return None
    return github_repository(data.decode("utf-8", "replace"))
