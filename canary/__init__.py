"""canary: static cross-version checks of the upstream contracts that monkey-patches depend on.

The public API: `check`, `lock`, `resolve` and `scan` (what the commands do, returning data;
see `canary.api`), the `Settings` they run with, the errors they raise (`CanaryError`, with the
`ExitCode` a command ends with) and `__version__`. The names are loaded on first use, so
`import canary` (the pytest plugin, a `--help`) costs nothing.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from canary._version import __version__

if TYPE_CHECKING:
    from canary.api import check, lock, resolve, scan
    from canary.errors import CanaryError, ExitCode
    from canary.settings import Settings

__all__ = [
    "CanaryError",
    "ExitCode",
    "Settings",
    "__version__",
    "check",
    "lock",
    "resolve",
    "scan",
]

_WHERE = {
    "check": "canary.api",
    "lock": "canary.api",
    "resolve": "canary.api",
    "scan": "canary.api",
    "CanaryError": "canary.errors",
    "ExitCode": "canary.errors",
    "Settings": "canary.settings",
}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'canary' has no attribute {name!r}")
    return getattr(importlib.import_module(_WHERE[name]), name)
