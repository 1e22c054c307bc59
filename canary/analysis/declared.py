"""The version a branch (or any unversioned tree) declares, read statically for gates."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from packaging.version import InvalidVersion, Version

from canary.analysis import MAX_SOURCE_BYTES, ParseError
from canary.analysis.budget import check_cost
from canary.analysis.parselock import parse_locked
from canary.errors import CanaryError, ExitCode
from canary.sources.tree import SourceError, Tree

_VERSION_MODULES = ("__init__.py", "version.py", "_version.py", "__about__.py")
_NAMED_FILE = re.compile(r"""version\s*=\s*\{\s*file\s*=\s*["']([^"']+)["']""")
_TABLE = re.compile(r"^\s*\[([^\]]*)\]\s*$", re.M)
_STATIC = re.compile(r"""^\s*version\s*=\s*["']([^"']+)["']""", re.M)
_PKG_INFO = re.compile(r"^Version:[ \t]*(\S+)", re.M)


#: what a development branch that declares no version at all counts as for gates and
#: acknowledgements: newer than every release (an epoch no upstream uses), so `>=X` admits
#: it and `<X`, `~=X` and `==X.*` do not. vLLM's main is one: setuptools-scm writes its
#: version at build time, so the source holds none.
UNRELEASED = Version("9999!0")


class VersionUnknown(CanaryError):
    """No literal version could be read; gated checks on that tree become `error`."""

    exit_code = ExitCode.FAILED


class Undeclared(VersionUnknown):
    """The tree declares no version anywhere canary reads (not one it cannot parse or read):
    on a development branch, the version it will be released as is not written yet."""


def _literal_version(source: bytes) -> str | None:
    """`__version__ = "1.0"` (or annotated) at module level; anything computed is no answer.
    A file too large or too costly to parse as a check's source is no answer either."""
    try:
        if len(source) > MAX_SOURCE_BYTES:
            return None
        check_cost(source, "__init__.py")
        tree = parse_locked(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError, ParseError):
        return None  # MemoryError: deep nesting
    for node in tree.body:
        if isinstance(node, ast.Assign):
            names = [getattr(t, "id", "") for t in node.targets]
        elif isinstance(node, ast.AnnAssign):
            names = [getattr(node.target, "id", "")]
        else:
            continue
        value = getattr(node.value, "value", None) if isinstance(node.value, ast.Constant) else None
        if "__version__" in names and isinstance(value, str):
            return value
    return None


def _text(data: bytes | None) -> str | None:
    """A one-line version file's content (a BOM or surrounding whitespace is no part of it)."""
    text = data.decode("utf-8-sig", "replace").strip() if data else ""
    return text or None


def _pyproject(text: str) -> tuple[str | None, str | None]:
    """(static `[project] version`, the file `version = {file = ...}` names) of a pyproject."""
    named = _NAMED_FILE.search(text)
    static = None
    for header in _TABLE.finditer(text):
        if header.group(1).strip() == "project":
            following = _TABLE.search(text, header.end())
            body = text[header.end() : following.start() if following else len(text)]
            found = _STATIC.search(body)
            static = found.group(1) if found else None
    return static, named.group(1) if named else None


def _candidates(tree: Tree, base: str) -> Iterator[tuple[str, str | None]]:
    """(where, declared version) in order of authority, read lazily: the package's literal
    `__version__`, the VERSION file beside it (trl 0.22 reads it at import), what pyproject
    states or names (trl: `version = {file = "VERSION"}`), a root VERSION, then PKG-INFO."""
    for name in _VERSION_MODULES:
        data = tree.read(f"{base}/{name}")
        yield f"{base}/{name}", _literal_version(data) if data else None
    yield f"{base}/VERSION", _text(tree.read(f"{base}/VERSION"))
    static, named = _pyproject(_text(tree.read_meta("pyproject.toml")) or "")
    yield "pyproject.toml", static
    for meta in (named, "VERSION", "version.txt"):
        if meta:
            yield meta, _text(tree.read_meta(meta))
    pkg_info = _PKG_INFO.search(_text(tree.read_meta("PKG-INFO")) or "")
    yield "PKG-INFO", pkg_info.group(1) if pkg_info else None


def declared_version(tree: Tree, package: str) -> Version:
    """The first PEP 440 version the tree declares; never a guess."""
    base = package.replace(".", "/")
    unparsable: list[str] = []
    try:
        for where, found in _candidates(tree, base):
            if found is None:
                continue
            try:
                return Version(found)
            except InvalidVersion:
                unparsable.append(f"{found!r} in {where}")
    except SourceError as exc:
        raise VersionUnknown(f"cannot read the declared version: {exc}") from None
    if unparsable:
        raise VersionUnknown(f"declared version {', '.join(unparsable)} is not PEP 440")
    raise Undeclared(
        f"no literal __version__ in {base}/ and no VERSION file: cannot gate this tree"
    )
