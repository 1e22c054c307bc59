"""An upstream's three names: what `--upstream` may say, and what a matrix is keyed by.

A user names an upstream as they know it: by the name they import (`sentence_transformers`)
or by the one they install (`sentence-transformers`). Scan follows imports, so it works with
the import name; the matrix it writes carries all three keys (`upstream` and `pypi` the
distribution's normalised name, `package` the import name), and its file is named by the
`upstream` id. For a name with no `-` or `.`, as trl, peft and transformers are, all three
are the name itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from packaging.utils import canonicalize_name

from canary.errors import UsageError

#: the upstreams scanned when `--upstream` is not given
DEFAULT_UPSTREAMS = ("trl", "peft", "transformers")

_IMPORT_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# a distribution's name as the package index accepts it (PEP 508)
_DISTRIBUTION = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")


def is_import_name(name: str) -> bool:
    """Whether `name` is a top-level import name (a matrix's `package`), wholly: no line end."""
    return _IMPORT_NAME.fullmatch(name) is not None


def import_name(name: str) -> str | None:
    """The import name `name` stands for: itself when it is one, a distribution's name with
    its `-` and `.` as `_` (lowercased); None when it is neither."""
    if is_import_name(name):
        return name
    if _DISTRIBUTION.fullmatch(name) and not name[0].isdigit():
        candidate = re.sub(r"[-.]+", "_", name.lower())
        return candidate if is_import_name(candidate) else None
    return None


def distribution(package: str) -> str:
    """The matrix's `upstream` and `pypi`: the normalised distribution name."""
    return canonicalize_name(package)


def matrix_file(package: str) -> str:
    """The file a new matrix for `package` is written as."""
    return f"{distribution(package)}.yaml"


def upstream_names(upstreams: Iterable[str] | None) -> list[str]:
    """`--upstream` as top-level import names (the default three when not given): an import
    name or a distribution's name (`sentence_transformers`, `sentence-transformers`)."""
    given = [n.strip() for n in upstreams or DEFAULT_UPSTREAMS if n.strip()]
    names = [import_name(n) for n in given]
    if not names or None in names:
        raise UsageError(
            f"scan: --upstream wants import or distribution names of packages, got {given}"
        )
    return list(dict.fromkeys(n for n in names if n))
