"""Whether this process is a pytest-xdist worker or its controller, by xdist's public helpers
(`is_xdist_worker`, `is_xdist_controller`); without xdist installed (it is in the `pytest`
extra), neither."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

try:
    import xdist as _xdist
except ImportError:  # pragma: no cover - the extra is installed wherever the tests run
    _xdist = None


def is_worker(config: pytest.Config) -> bool:
    """An xdist worker (xdist's helpers take anything with a `config`: a request, a session)."""
    return _xdist is not None and bool(_xdist.is_xdist_worker(SimpleNamespace(config=config)))


def is_controller(session: pytest.Session) -> bool:
    """The controller of a distributed run (`-n N` and workers to start)."""
    return _xdist is not None and bool(_xdist.is_xdist_controller(session))
