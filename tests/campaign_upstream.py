"""A fake upstream for the reliability campaigns: releases, their wheels, an index and a matrix.

The releases drift the way real upstreams do (a parameter dropped, a method removed, a module
moved), so a campaign's verdicts mix pass, fail, skip, xfail and warn, and a fault that changed a
verdict cannot hide behind a grid of identical passes. Every wheel is built here with zipfile and
carries a RECORD; the index page is PEP 691 JSON with each file's size and sha256.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from servers import FAST, FileServer, make_wheel, serving, sha256

from canary.engine.outcomes import Result
from canary.engine.runner import Runner, explicit_targets
from canary.matrix.model import Matrix, load_matrix
from canary.settings import Settings
from canary.sources.context import SourceContext
from canary.sources.http import RetryPolicy
from canary.sources.index import JSON_TYPE

PROJECT = "fakepkg"
INDEX_PATH = f"/simple/{PROJECT}/"

#: campaign retries cost milliseconds, and a stalled response is abandoned after 0.5 s
POLICY = dataclasses.replace(FAST, retry_after_cap=0.02, rate_limit_wait_cap=0.02, read_timeout=0.5)


def campaign_size() -> str:
    """`default` (the PR-time run, seconds) or `large` (the nightly): CANARY_CAMPAIGN_SIZE."""
    size = os.environ.get("CANARY_CAMPAIGN_SIZE", "default").strip().lower() or "default"
    if size not in ("default", "large"):
        raise ValueError(f"CANARY_CAMPAIGN_SIZE must be default or large, not {size!r}")
    return size


def scaled(default: int, large: int) -> int:
    """A campaign dimension for the current size."""
    return large if campaign_size() == "large" else default


def versions_for(count: int) -> list[str]:
    """`count` release numbers, oldest first: 1.0.0, 1.1.0, ... (a new major every 4)."""
    return [f"{1 + i // 4}.{i % 4}.0" for i in range(count)]


def sources(version: str, modules: int) -> dict[str, bytes]:
    """The Python files of one release; what changes between releases is what the checks see."""
    minor = int(version.split(".")[1])
    major = int(version.split(".")[0])
    loss = "" if major >= 2 else "    def compute_loss(self, model, inputs):\n        return 0\n"
    inputs = "" if major >= 2 else ", inputs"
    helper = "patch_me" if minor % 2 == 0 else "patched_elsewhere"
    files = {
        f"{PROJECT}/__init__.py": f'__version__ = "{version}"\nfrom .core import run\n'.encode(),
        f"{PROJECT}/core.py": (
            f"def run(model{inputs}, *, fast=False):\n"
            f"    model.{'gradient_checkpointing_disable' if minor < 2 else 'gc_off'}()\n"
            f"    return model\n\n\n"
            f"def {helper}():\n    return 'x'.replace('a', 'b')\n"
        ).encode(),
        f"{PROJECT}/trainer.py": (
            "from .core import run\n\n\nclass Base:\n    pass\n\n\n"
            "class Trainer(Base):\n    def train(self):\n        return run(self)\n\n" + loss
        ).encode(),
        f"{PROJECT}/models/__init__.py": b"",
    }
    for i in range(modules):
        files[f"{PROJECT}/models/m{i}.py"] = (
            f"VALUE_{i} = {i}\n\n\ndef build_{i}(config, *args, **kwargs):\n"
            f"    return {{'layer': {i}}}\n" * 3
        ).encode()
    return files


def interleaved(version: str, files: dict[str, bytes]) -> dict[str, bytes]:
    """The files with incompressible data after each one: the wheel is far larger than what
    the checks need, and no two modules are close enough to share a range request."""
    rng = random.Random(version)
    padded = {}
    for i, (path, data) in enumerate(files.items()):
        padded[path] = data
        padded[f"{PROJECT}/data/blob{i}.bin"] = rng.randbytes(24_000)
    return padded


def matrix_text(modules: int, broken: str, gated_since: str) -> str:
    """A matrix whose checks between them read every module of the fake upstream."""
    checks = [
        "  - {id: run-exists, module: fakepkg.core, function: run}",
        "  - {id: run-inputs, module: fakepkg.core, function: run, params: [model, inputs]}",
        "  - {id: patch-target, module: fakepkg.core, function: patch_me, contains: ['replace(']}",
        "  - {id: loss-method, module: fakepkg.trainer, class: Trainer,"
        " methods: [train, compute_loss], bases: [Base]}",
        "  - {id: gc-call, module: fakepkg.core, contains: [gradient_checkpointing_disable],"
        " severity: info}",
        f"  - {{id: gated-run, module: fakepkg.core, symbol: run, since: '{gated_since}'}}",
        "  - {id: moved-away, module: fakepkg.gone, symbol: anything}",
        "  - id: either\n    module: fakepkg.core\n    any_of:\n"
        "      - {function: patch_me}\n      - {function: patched_elsewhere}",
    ]
    checks += [
        f"  - {{id: model-{i}, module: fakepkg.models.m{i}, function: build_{i},"
        f" params: [config, args, kwargs]}}"
        for i in range(modules)
    ]
    head = (
        f"upstream: {PROJECT}\nversions:\n  broken:\n    '{broken}': known bad release\nchecks:\n"
    )
    return head + "\n".join(checks) + "\n"


@dataclass
class FakeUpstream:
    """Releases of the fake project published on a loopback index, and its matrix."""

    versions: list[str]
    wheels: dict[str, bytes]
    matrix_path: Path
    modules: int = 0  # models/m0.py ... in every release

    @property
    def selection(self) -> str:
        """The `--versions` list naming every release."""
        return ",".join(self.versions)

    def matrix(self) -> Matrix:
        return load_matrix(self.matrix_path)

    @property
    def files(self) -> dict[str, bytes]:
        """Every wheel by file name, as the index lists them."""
        return {wheel_name(v): wheel for v, wheel in self.wheels.items()}

    @staticmethod
    def wheel_path(version: str) -> str:
        return f"/files/{wheel_name(version)}"


def wheel_name(version: str) -> str:
    return f"{PROJECT}-{version}-py3-none-any.whl"


def build_upstream(folder: Path, releases: int, modules: int) -> FakeUpstream:
    """Build every release's wheel and write the matrix (in `folder`)."""
    versions = versions_for(releases)
    wheels = {v: make_wheel(PROJECT, v, interleaved(v, sources(v, modules))) for v in versions}
    path = folder / f"{PROJECT}.yaml"
    gate = versions[len(versions) // 2]
    path.write_text(matrix_text(modules, broken=versions[-1], gated_since=gate))
    return FakeUpstream(versions, wheels, path, modules)


def index_page(server_url: str, files: dict[str, bytes]) -> bytes:
    """The PEP 691 JSON project page listing each file (by name) with its size and sha256."""
    listed = [
        {
            "filename": name,
            "url": f"{server_url}/files/{name}",
            "hashes": {"sha256": sha256(data)},
            "size": len(data),
        }
        for name, data in files.items()
    ]
    page = {"meta": {"api-version": "1.1"}, "name": PROJECT, "files": listed}
    return json.dumps(page).encode()


def publish(
    server: FileServer,
    files: dict[str, bytes],
    page: Callable[[dict], bytes] | None = None,
    headers: dict[str, str] | None = None,
) -> str:
    """Serve the index page and the files (by file name); the index URL to give canary. `page`
    renders the listed page itself (a hostile variant of it), served with `headers`."""
    for name, data in files.items():
        server.add(f"/files/{name}", data)
    body = index_page(server.url, files)
    if page is not None:
        body = page(json.loads(body))
    server.add(INDEX_PATH, body, content_type=JSON_TYPE, headers=headers or {})
    return server.url + "/simple/"


def run_checks(
    upstream: FakeUpstream, index_url: str, cache: Path, policy: RetryPolicy = POLICY
) -> list[Result]:
    """The real Runner over every release, through the index and the cache given."""
    settings = Settings.from_environment(jobs=4)
    context = SourceContext(settings, index_url=index_url, cache_dir=cache, policy=policy)
    runner = Runner(
        settings=settings,
        select=lambda _matrix, selection: explicit_targets(selection),
        sources=context,
    )
    try:
        return runner.run([upstream.matrix()], upstream.selection).results
    finally:
        context.close()


def verdicts(results: list[Result]) -> dict[tuple[str, str], tuple[str, str]]:
    """(check, version) -> (status, detail): what a fault must not change."""
    return {(r.check, r.version): (r.status.value, r.detail) for r in results}


def tell(capsys, line: str) -> None:
    """A campaign's tally: on the terminal even without -s, and in captured stdout for -rA."""
    print(line)
    with capsys.disabled():
        print(f"\n{line}")


@contextlib.contextmanager
def locked_upstream(
    folder: Path,
    monkeypatch: pytest.MonkeyPatch,
    releases: dict[str, dict[str, bytes]],
    matrix: str,
) -> Iterator[FileServer]:
    """A loopback index serving a wheel of PROJECT per release, `matrix` as
    FOLDER/matrices/PROJECT.yaml, locked with the files' hashes (so verdicts are remembered),
    and canary pointed at them from FOLDER."""
    from canary.cli.main import main

    with serving() as server:
        wheels = {wheel_name(v): make_wheel(PROJECT, v, files) for v, files in releases.items()}
        monkeypatch.setenv("CANARY_INDEX_URL", publish(server, wheels))
        monkeypatch.setenv("CANARY_CACHE_DIR", str(folder / "cache"))
        monkeypatch.delenv("CANARY_OFFLINE", raising=False)
        monkeypatch.chdir(folder)
        (folder / "matrices").mkdir()
        (folder / "matrices" / f"{PROJECT}.yaml").write_text(matrix)
        assert main(["lock"]) == 0
        yield server
