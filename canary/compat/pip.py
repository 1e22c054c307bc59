"""pip's default index URL, which pip keeps in a private module (`pip._internal`): canary reads
the index `pip install` would, and names no index host itself."""

from __future__ import annotations


def default_index_url() -> str | None:
    """pip's built-in simple index URL, or None when pip is not importable."""
    try:
        from pip._internal.models.index import PyPI
    except ImportError:
        return None
    return str(PyPI.simple_url)
