"""The version a branch (or any unversioned tree) declares, read statically for gates."""

from __future__ import annotations

import ast
import re

from packaging.version import InvalidVersion, Version

from canary.sources.tree import SourceError, Tree

_VERSION_FILES = ("__init__.py", "version.py", "_version.py", "__about__.py")


class VersionUnknown(Exception):
    """No literal version could be read; gated checks on that tree become `error`."""


def _literal_version(source: bytes) -> str | None:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return None
    for node in tree.body:
        value = None
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "__version__" for t in node.targets)
        ) or (isinstance(node, ast.AnnAssign) and getattr(node.target, "id", "") == "__version__"):
            value = node.value
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            return value.value
    return None


def _metadata_version(tree: Tree) -> str | None:
    """A VERSION file that the packaging metadata reads (trl: `version = {file = "VERSION"}`),
    else the core metadata of an sdist or an installed/unpacked wheel (PKG-INFO)."""
    pyproject = tree.read_meta("pyproject.toml") or b""
    named = re.search(rb"""version\s*=\s*\{\s*file\s*=\s*["']([^"']+)["']""", pyproject)
    candidates = [named.group(1).decode()] if named else []
    candidates += ["VERSION", "version.txt"]
    for name in candidates:
        data = tree.read_meta(name)
        if data and data.strip():
            return data.decode("utf-8", "replace").strip()
    pkg_info = re.search(rb"^Version:\s*(\S+)", tree.read_meta("PKG-INFO") or b"", re.M)
    return pkg_info.group(1).decode("utf-8", "replace") if pkg_info else None


def declared_version(tree: Tree, package: str) -> Version:
    """Literal `__version__` of the package, else the version file its metadata names."""
    base = package.replace(".", "/")
    try:
        found = None
        for name in _VERSION_FILES:
            data = tree.read(f"{base}/{name}")
            found = _literal_version(data) if data else None
            if found:
                break
        found = found or _metadata_version(tree)
    except SourceError as exc:
        raise VersionUnknown(f"cannot read the declared version: {exc}") from None
    if not found:
        raise VersionUnknown(
            f"no literal __version__ in {base}/ and no VERSION file: cannot gate this tree"
        )
    try:
        return Version(found)
    except InvalidVersion:
        raise VersionUnknown(f"declared version {found!r} is not PEP 440") from None
