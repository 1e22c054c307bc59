"""A downstream repository adopting canary, and the upstream it patches, on loopback.

The downstream is tests/fixtures/adopter (package `patchwork`, which patches trl). The upstream
is a small `trl` served by a fake package index: release 1.0.0 has what the patches need, 1.1.0
renamed `disable_gradient_checkpointing`. `canary init` and the Action's steps run against it.
"""

from __future__ import annotations

import functools
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from servers import FileServer, make_wheel, publish_releases, serving

DOWNSTREAM = Path(__file__).parent / "fixtures" / "adopter"

GRPO = b"""\
class GRPOTrainer:
    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        return 0.0
"""
TRL = {
    "1.0.0": {
        "trl/__init__.py": b'__version__ = "1.0.0"\n',
        "trl/models/__init__.py": b"",
        "trl/models/utils.py": b"def disable_gradient_checkpointing(\n"
        b"    model, gradient_checkpointing_kwargs=None\n):\n    return None\n",
        "trl/trainer/__init__.py": b"",
        "trl/trainer/grpo_trainer.py": GRPO,
    },
    "1.1.0": {
        "trl/__init__.py": b'__version__ = "1.1.0"\n',
        "trl/models/__init__.py": b"",
        "trl/models/utils.py": b"def gradient_checkpointing_disabled(model, kwargs=None):\n"
        b"    return None\n",
        "trl/trainer/__init__.py": b"",
        "trl/trainer/grpo_trainer.py": GRPO,
    },
}


@functools.cache
def wheel_of(version: str) -> bytes:
    """Built once: zip entries carry the time, and a published file must never change (the
    lock would rightly raise an alarm when a later page served other bytes)."""
    return make_wheel("trl", version, TRL[version])


def publish(server: FileServer, versions: list[str]) -> None:
    """The index page of trl lists these releases (and serves their wheels)."""
    publish_releases(server, "trl", {version: wheel_of(version) for version in versions})


@contextmanager
def upstream_index(monkeypatch: pytest.MonkeyPatch, cache: Path) -> Iterator[FileServer]:
    """The fake index with trl 1.0.0 and 1.1.0; canary's environment points at it."""
    with serving() as server:
        publish(server, ["1.0.0", "1.1.0"])
        monkeypatch.setenv("CANARY_INDEX_URL", server.url + "/simple/")
        monkeypatch.setenv("CANARY_GITHUB_RAW_URL", server.url + "/raw")
        monkeypatch.setenv("CANARY_GITHUB_API_URL", server.url + "/api")
        monkeypatch.setenv("CANARY_CACHE_DIR", str(cache))
        monkeypatch.delenv("CANARY_OFFLINE", raising=False)
        yield server


def downstream_copy(target: Path) -> Path:
    """A fresh copy of the downstream repository to adopt canary in."""
    shutil.copytree(DOWNSTREAM, target)
    return target
