"""canary: static cross-version checks of the upstream contracts that monkey-patches depend on.

The public API (`__all__`): `check`, `lock`, `resolve` and `scan` (what the commands do,
returning data; see `canary.api`), the `Settings` they run with, what they return and take
(`RunReport` of `Result`s with a `Status`, `UpstreamInfo`, `Scan`, `LockReport`, `Resolution`,
`Matrix` of `Check`s and `load_matrix`), the errors they raise (`CanaryError` and its kinds,
with the `ExitCode` a command ends with) and `__version__`. The names are loaded on first use,
so `import canary` (the pytest plugin, a `--help`) costs nothing.

- `api.py`: what each command does, typed, returning data and printing nothing;
- `errors.py`: `CanaryError`, the base of every error canary reports, and `ExitCode`;
- `settings.py`: the one `Settings` a run is configured with (the environment, then the options);
- `_version.py`: the version, readable by any layer;
- `__main__.py`: `python -m canary`, the same command as `canary`;
- `safety/`: the lowest layer: untrusted text shown safely, reads and writes never through a link;
- `cache/`: the on-disk store every layer shares, and canary's code fingerprint;
- `sources/`: where upstream files come from: a local folder, the package index, GitHub;
- `analysis/`: the static model of an upstream's source (parsed, never imported);
- `matrix/`: what a maintainer writes: matrices, their locks and the versions they name;
- `engine/`: judging every check of a matrix on every version;
- `reports/`: text, JSON, markdown, HTML, JUnit and GitHub renderings of a run, and drift;
- `scan/`: reading a downstream codebase and proposing the checks its patches need;
- `init/`: `canary init`, adopting canary in a repository in one command;
- `action/`: the GitHub Action's steps;
- `cli/`: the `canary` command line, one module per command;
- `pytest_plugin/`: every check x version as a pytest item;
- `compat/`: other projects' private parts canary uses, one module per dependency.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

from canary._version import __version__

#: every public name, by the module that defines it (the one place each is defined); loaded on
#: first use, so `import canary` imports none of them
_WHERE = {
    "check": "canary.api",
    "lock": "canary.api",
    "resolve": "canary.api",
    "scan": "canary.api",
    "Scan": "canary.api",
    "Settings": "canary.settings",
    "RunReport": "canary.engine.outcomes",
    "Result": "canary.engine.outcomes",
    "Status": "canary.engine.outcomes",
    "UpstreamInfo": "canary.engine.outcomes",
    "LockReport": "canary.matrix.versions",
    "Resolution": "canary.matrix.lock",
    "Matrix": "canary.matrix.model",
    "Check": "canary.matrix.model",
    "load_matrix": "canary.matrix.model",
    "CanaryError": "canary.errors",
    "ExitCode": "canary.errors",
    "UsageError": "canary.errors",
    "MatrixError": "canary.matrix.model",
    "ConfigError": "canary.matrix.config",
    "SourceError": "canary.errors",
    "ReportError": "canary.reports.jsonio",
    "Interrupted": "canary.engine.interrupted",
}

if TYPE_CHECKING:
    from canary.api import Scan, check, lock, resolve, scan
    from canary.engine.interrupted import Interrupted
    from canary.engine.outcomes import Result, RunReport, Status, UpstreamInfo
    from canary.errors import CanaryError, ExitCode, SourceError, UsageError
    from canary.matrix.config import ConfigError
    from canary.matrix.lock import Resolution
    from canary.matrix.model import Check, Matrix, MatrixError, load_matrix
    from canary.matrix.versions import LockReport
    from canary.reports.jsonio import ReportError
    from canary.settings import Settings


__all__ = [
    "CanaryError",
    "Check",
    "ConfigError",
    "ExitCode",
    "Interrupted",
    "LockReport",
    "Matrix",
    "MatrixError",
    "ReportError",
    "Resolution",
    "Result",
    "RunReport",
    "Scan",
    "Settings",
    "SourceError",
    "Status",
    "UpstreamInfo",
    "UsageError",
    "__version__",
    "check",
    "load_matrix",
    "lock",
    "resolve",
    "scan",
]


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'canary' has no attribute {name!r}")
    return getattr(importlib.import_module(_WHERE[name]), name)


class _Package(types.ModuleType):
    """canary itself, whose `scan` is the API's function: importing the `canary.scan` package
    (as calling that function does) would otherwise bind the name to the package, and a second
    `canary.scan(...)` would call a module. A public name keeps its meaning; the package stays
    in `sys.modules`, where every import finds it."""

    def __setattr__(self, name: str, value: object) -> None:
        if name in _WHERE and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
