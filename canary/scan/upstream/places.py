"""Where a release's lazy modules serve names from, remembered per release file.

Use a name a lazy root serves from its folders (transformers' `define_import_structure`)
reads every module of the folder when the name is not there; what the search concluded depends
only on the release and canary's code, so it is kept in the cache (keyed like the verdicts:
project, file name, the index's sha256, the code's fingerprint) and a warm scan opens none of
those modules again.
"""

from __future__ import annotations

import json

from canary.cache.fingerprint import code_fingerprint
from canary.cache.store import Cache

_KIND = "scan"


class Places:
    """`known`: "lazy module:name" -> the module defining it, "" when the module serves none;
    of `kind` "wild", what wildcards.py found of a text on the release."""

    def __init__(self, cache: Cache | None = None, release: str = "", kind: str = "places") -> None:
        self.cache = cache
        self.key = f"{kind}:{release}@{code_fingerprint()}"
        self.known: dict[str, str] = self._read(cache) if cache is not None else {}
        self._stored = len(self.known)

    def _read(self, cache: Cache) -> dict[str, str]:
        data = cache.load_json(_KIND, self.key)
        if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
            return {}
        return data

    def keep(self) -> None:
        """Store what this scan added (a full or read-only cache only costs the search again)."""
        if self.cache is not None and len(self.known) > self._stored:
            self.cache.store(_KIND, self.key, json.dumps(self.known, sort_keys=True).encode())
            self._stored = len(self.known)
