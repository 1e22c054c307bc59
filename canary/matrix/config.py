"""A project's canary configuration: the `[tool.canary]` table of its pyproject.toml.

Found as ruff and pytest find theirs: the nearest pyproject.toml holding the table, walking up
from the current folder. It says where the matrices are, so that `canary check`, `validate`,
`lock`, `versions` and the pytest plugin agree on them when no matrix is named:

    [tool.canary]
    matrices = ["canary"]        # folders (their *.yaml), files or globs, from this file's folder
    exclude = ["legacy"]         # downstream files and folders `canary scan` leaves out

Without the table, `canary/` and `matrices/` of the current folder are looked for.
"""

from __future__ import annotations

import difflib
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from fnmatch import fnmatchcase
from functools import cached_property
from pathlib import Path

from canary.errors import CanaryError
from canary.safety.reads import Refused, TooLarge, read_regular
from canary.safety.untrusted import showable

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the 3.10 interpreter of CI
    import tomli as tomllib

#: Folders looked for when no `[tool.canary]` table says where the matrices are.
DEFAULT_FOLDERS = ("canary", "matrices")
PYPROJECT = "pyproject.toml"
KEYS = ("matrices", "exclude")
#: the largest pyproject.toml read (real ones are a few kB)
MAX_CONFIG_BYTES = 1024 * 1024
_GLOB = "*?["
#: the most folders the globs of `matrices` may list in all (a `**` lists every folder below
#: it; each `**` more, the tree again): a glob over a huge tree is refused, not walked for long
MAX_GLOB_FOLDERS = 20_000


class ConfigError(CanaryError):
    """A `[tool.canary]` table that does not read: file, line and key, each error on its line
    (exit 2, no traceback)."""

    def __init__(self, message: str, errors: list[ConfigError] | None = None):
        super().__init__(message)
        self.errors = errors or [self]

    def lines(self) -> list[str]:
        return [str(error) for error in self.errors]

    @classmethod
    def at(cls, path: Path, line: int | None, message: str) -> ConfigError:
        return cls(f"{path}:{line}: {message}" if line else f"{path}: {message}")


@dataclass(frozen=True)
class Config:
    """Where the matrices are and what scan leaves out; entries relative to `root`."""

    root: Path
    matrices: tuple[str, ...] = DEFAULT_FOLDERS
    exclude: tuple[str, ...] = ()
    file: Path | None = None  # the pyproject.toml holding the table; None: the defaults

    @property
    def configured(self) -> bool:
        return self.file is not None

    def matrix_files(self) -> list[Path]:
        """Every matrix the entries name, each once, in entry order (a folder's sorted)."""
        return list(self._found)

    @cached_property
    def _found(self) -> dict[Path, None]:
        seen: dict[Path, None] = {}
        budget = [MAX_GLOB_FOLDERS]
        for entry in self.matrices:
            try:
                found = _expand(self.root, entry, budget)
            except _TooWide:
                line = _key_line(self.file, "matrices") if self.file else None
                where = self.file or self.root
                message = (
                    f"[tool.canary] matrices: {showable(repr(entry))} lists over "
                    f"{MAX_GLOB_FOLDERS} folders; name the folders, or a narrower glob"
                )
                raise ConfigError.at(where, line, message) from None
            for path in found:
                seen.setdefault(path, None)
        return seen

    @cached_property
    def _resolved(self) -> frozenset[Path]:
        return frozenset(path.resolve() for path in self._found)

    def holds(self, path: Path) -> bool:
        """Whether `path` is one of the project's matrices (the pytest plugin's question): one
        the table names; without a table, a YAML file in a `matrices/` folder or in `canary/`
        at the root (not any `canary/` folder: deployments name theirs so too)."""
        if self.configured:
            return path.resolve() in self._resolved
        folder = path.parent
        return path.suffix in (".yaml", ".yml") and (
            folder.name == "matrices" or folder.resolve() == (self.root / "canary").resolve()
        )

    def looked_for(self) -> str:
        """What was searched, for the error of a command that found no matrix."""
        entries = ", ".join(f"{e}/*.yaml" if is_folder_entry(e) else e for e in self.matrices)
        entries = showable(entries)  # the table is the project's text: no escape reaches a terminal
        if self.configured:
            return f"[tool.canary] matrices in {self.file} ({entries}) names no matrix file"
        return (
            f"no matrices given and none found: looked for {entries} in {self.root}; "
            f"name one, or set `matrices` under [tool.canary] in {PYPROJECT}"
        )


def is_folder_entry(entry: str) -> bool:
    return not any(c in entry for c in _GLOB) and not entry.endswith((".yaml", ".yml"))


class _TooWide(CanaryError):
    """A glob listed more folders than MAX_GLOB_FOLDERS."""


def _expand(root: Path, entry: str, budget: list[int]) -> list[Path]:
    if any(c in entry for c in _GLOB):
        found = _glob(root, entry, budget)
        return sorted(p for p in found if p.suffix in (".yaml", ".yml") and p.is_file())
    path = root / entry
    if path.is_dir():
        return sorted(path.glob("*.yaml"))
    return [path] if path.is_file() else []


def _glob(root: Path, pattern: str, budget: list[int]) -> list[Path]:
    """What `pattern` (relative, `/`-separated) matches under `root`, as pathlib's glob
    matches it, listing at most `budget[0]` folders in all (_TooWide beyond): `**` is `root`
    and every folder under it, never entered through a link. pathlib walks the tree again
    below every folder an earlier `**` matched (four over a chain of 40 folders: 20 s); here
    each `**` lists the tree once."""
    current = [root]
    for part in Path(pattern).parts:
        matched: dict[Path, None] = {}
        for base in current:
            if part == "**":
                if base not in matched:  # else below a base listed already: listed with it
                    matched.update(dict.fromkeys(_folders(base, budget)))
            elif not any(c in part for c in _GLOB):
                matched.setdefault(base / part, None)
            else:
                for entry in _listed(base, budget):
                    if fnmatchcase(entry.name, part):
                        matched.setdefault(Path(entry.path), None)
        current = list(matched)
    return current


def _listed(folder: Path, budget: list[int]) -> list[os.DirEntry[str]]:
    budget[0] -= 1
    if budget[0] < 0:
        raise _TooWide
    try:
        with os.scandir(folder) as listing:
            return list(listing)
    except OSError:  # not a folder, gone, unreadable: it matches nothing
        return []


def _folders(top: Path, budget: list[int]) -> Iterator[Path]:
    """`top` and every folder under it, links not entered."""
    pending = [top]
    while pending:
        folder = pending.pop()
        yield folder
        pending += [
            Path(e.path) for e in _listed(folder, budget) if e.is_dir(follow_symlinks=False)
        ]


def find_config(start: Path | None = None, within: list[Path] | None = None) -> Config:
    """The nearest `[tool.canary]` table from `start` (default: the current folder) up, or
    the defaults in `start` itself. `within`: only these folders (nearest first) are looked
    in, and their pyproject.toml is read as a downstream's file, never through a link nor
    from a FIFO (scan's lookup in the tree it scans)."""
    here = (start or Path.cwd()).absolute()
    folders = within if within is not None else [here, *here.parents]
    for folder in folders:
        candidate = folder / PYPROJECT
        if within is not None or candidate.is_file():
            table = _table(candidate, follow=within is None)
            if table is not None:
                return _from_table(candidate, table)
    return Config(root=folders[0] if within else here)


def _config_bytes(path: Path, follow: bool) -> bytes | None:
    """The bytes of `path`, TooLarge over MAX_CONFIG_BYTES; None (as if absent) when `follow`
    is false and it is missing, a link or no regular file."""
    if not follow:
        try:
            return read_regular(path, MAX_CONFIG_BYTES)
        except TooLarge:  # a refusal too, but one to say, not to pass over
            raise
        except (FileNotFoundError, NotADirectoryError, Refused):
            return None
    with path.open("rb") as file:
        blob = file.read(MAX_CONFIG_BYTES + 1)
    if len(blob) > MAX_CONFIG_BYTES:
        raise TooLarge(len(blob), MAX_CONFIG_BYTES)
    return blob


def _table(path: Path, follow: bool = True) -> dict | None:
    """The `[tool.canary]` table of one pyproject.toml; one over MAX_CONFIG_BYTES is not read
    (scan reads the scanned tree's: a downstream's file is untrusted, and read whole it could
    exhaust memory)."""
    try:
        blob = _config_bytes(path, follow)
        if blob is None:
            return None
        data = tomllib.loads(blob.decode("utf-8"))
    except TooLarge:
        raise ConfigError.at(path, None, f"not read: over {MAX_CONFIG_BYTES} bytes") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError.at(path, None, f"cannot read: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError.at(path, _line_of(str(exc)), f"not TOML: {exc}") from None
    except RecursionError:  # arrays or tables nested thousands deep: a few kB do it
        raise ConfigError.at(path, None, "not read: nested too deeply to parse") from None
    table = data.get("tool", {}).get("canary") if isinstance(data.get("tool"), dict) else None
    return table if isinstance(table, dict) else None


def _line_of(message: str) -> int | None:
    """tomllib says where: "... (at line 3, column 5)"."""
    _, found, rest = message.rpartition("(at line ")
    number = rest.split(",")[0].rstrip(")")
    return int(number) if found and number.isdigit() else None


def _key_line(path: Path, key: str) -> int | None:
    """The line of `key = ...` inside the table (tomllib keeps no positions)."""
    inside = False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        text = line.strip()
        if text.startswith("["):
            inside = text.replace(" ", "") == "[tool.canary]"
        elif inside and text.split("=")[0].strip() == key:
            return number
    return None


def _from_table(path: Path, table: dict) -> Config:
    errors = []
    for key in table:
        if key not in KEYS:
            near = difflib.get_close_matches(str(key), KEYS, n=1, cutoff=0.6)
            hint = f"; did you mean {near[0]!r}?" if near else f" (known: {', '.join(KEYS)})"
            message = f"[tool.canary]: unknown key {key!r}{hint}"
            errors.append(ConfigError.at(path, _key_line(path, key), message))
    values: dict[str, tuple[str, ...]] = {}
    for key in KEYS:
        value = table.get(key)
        if value is None:
            continue
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            message = f"[tool.canary] {key}: a path or glob, or a list of them"
            errors.append(ConfigError.at(path, _key_line(path, key), message))
            continue
        outside = [v for v in value if key == "matrices" and not _inside(path.parent, v)]
        for entry in outside:
            message = (
                f"[tool.canary] matrices: {showable(repr(entry))} is outside the repository "
                f"({showable(str(_repository(path.parent)))}); entries are relative to "
                f"{PYPROJECT}'s folder"
            )
            errors.append(ConfigError.at(path, _key_line(path, key), message))
        values[key] = tuple(value)
    if errors:
        raise ConfigError("\n".join(str(e) for e in errors), errors)
    return Config(
        root=path.parent,
        matrices=values.get("matrices", DEFAULT_FOLDERS),
        exclude=values.get("exclude", ()),
        file=path,
    )


def _repository(folder: Path) -> Path:
    """The repository `folder` is in: the nearest folder up holding `.git`, else `folder`."""
    for candidate in (folder, *folder.parents):
        if (candidate / ".git").exists():
            return candidate
    return folder


def _inside(folder: Path, entry: str) -> bool:
    """Whether `entry` (from `folder`), read as written, stays inside the repository: not
    absolute and no `..` that climbs out of it."""
    if Path(entry).is_absolute() or entry.startswith(("/", "\\")):
        return False
    base = os.path.abspath(_repository(folder))
    named = os.path.normpath(os.path.join(os.path.abspath(folder), entry))
    return named == base or named.startswith(base.rstrip(os.sep) + os.sep)


def table_text(pyproject: str, matrices: list[str]) -> str | None:
    """`pyproject` with a `[tool.canary]` table naming `matrices` added, everything else as it
    was (tomlkit keeps comments and layout); None when it already has the table."""
    import tomlkit

    document = tomlkit.parse(pyproject)
    tool = document.get("tool")
    if tool is not None and "canary" in tool:
        return None
    table = tomlkit.table()
    table.add("matrices", matrices)
    table.add(tomlkit.nl())  # a blank line before a table that follows it
    if tool is None:
        tool = tomlkit.table(is_super_table=True)
        document.add("tool", tool)
    # Item assignment, not `add`: where the file's [tool.*] tables are interleaved with others,
    # tomlkit hands back a proxy over them that has no `add`.
    tool["canary"] = table
    text = tomlkit.dumps(document)
    return text[:-1] if text.endswith(table.as_string()) else text  # last: no blank line at the end
