"""`--output FILE`: checked before a run starts, so a long run is never lost to a bad path."""

from __future__ import annotations

import os
from pathlib import Path

from canary.errors import CanaryError


class OutputError(CanaryError):
    """The report file cannot be written: a usage error, said before anything runs."""


def prepare_output(output: str) -> Path:
    """Creates the missing parent folders and proves the file can be written."""
    path = Path(output)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise OutputError(f"--output {output}: {path.parent} is not a folder") from None
    except OSError as exc:
        raise OutputError(
            f"--output {output}: cannot create {path.parent} ({exc.strerror or exc})"
        ) from None
    if path.is_dir():
        raise OutputError(f"--output {output}: is a folder")
    if not os.access(path.parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise OutputError(f"--output {output}: not writable")
    return path


def write_output(path: Path, text: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None
