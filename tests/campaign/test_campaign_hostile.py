"""Hostile upstream campaign: archives and sources built to hurt whoever reads them.

Each hostile release must give `error` with the reason, the rest of the release must still be
judged, nothing may be written outside the cache folder, and no upstream code may run: every
fake file carries a payload that would create a marker file if it were imported or executed.
The run happens in its own process with HOME, TMPDIR and the working folder inside the test's
tmp folder, so a snapshot of that folder sees any stray write.
"""

from __future__ import annotations

import io
import json
import os
import re
import stat
import struct
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

from campaign_faults import directory_entry
from campaign_upstream import PROJECT, FakeUpstream, publish, run_checks, wheel_name
from paths import TESTS
from servers import make_sdist, make_wheel, serving

from canary.cli.main import main as canary_main

WORKER = TESTS / "campaign_worker.py"
MiB = 1024 * 1024
MATRIX = f"""\
upstream: {PROJECT}
checks:
  - {{id: core-run, module: {PROJECT}.core, function: run}}
  - {{id: trainer, module: {PROJECT}.trainer, class: Trainer}}
  - {{id: linked, module: {PROJECT}.linked, symbol: anything}}
"""


def payload(marker: Path) -> bytes:
    """Module-level code that leaves a trace if anything imports or executes it."""
    return f"import pathlib\npathlib.Path({str(marker)!r}).write_text('upstream ran')\n".encode()


def release_files(marker: Path, version: str, core: bytes | None = None) -> dict[str, bytes]:
    code = payload(marker)
    return {
        f"{PROJECT}/__init__.py": code + f"__version__ = '{version}'\n".encode(),
        f"{PROJECT}/core.py": core if core is not None else code + b"def run(model):\n    pass\n",
        f"{PROJECT}/trainer.py": code + b"class Trainer:\n    pass\n",
        f"{PROJECT}/linked.py": code + b"anything = 1\n",
        f"{PROJECT}-hooks.pth": code.replace(b"\n", b"; ", 1),
    }


def patched_size(wheel: bytes, name: str, declared: int) -> bytes:
    """The wheel with `name`'s uncompressed size rewritten in its local and directory headers."""
    info = zipfile.ZipFile(io.BytesIO(wheel)).getinfo(name)
    data = bytearray(wheel)
    data[info.header_offset + 22 : info.header_offset + 26] = struct.pack("<I", declared)
    entry = directory_entry(wheel, name)
    data[entry + 24 : entry + 28] = struct.pack("<I", declared)
    return bytes(data)


def zip_symlink_wheel(marker: Path, version: str) -> bytes:
    """core.py stored as a zip symbolic link (unix mode) pointing out of the archive."""
    wheel = make_wheel(PROJECT, version, release_files(marker, version, b"../../../etc/passwd"))
    source = zipfile.ZipFile(io.BytesIO(wheel))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for info in source.infolist():
            if info.filename == f"{PROJECT}/core.py":
                info.external_attr = (stat.S_IFLNK | 0o777) << 16
            archive.writestr(info, source.read(info))
    return out.getvalue()


def linked_sdist(marker: Path, version: str) -> bytes:
    """An sdist whose core.py is a symlink out of the tree and whose linked.py is a hard link,
    with members named `../` and absolute, and a setup.py that would run on install."""
    top = f"{PROJECT}-{version}"
    files = release_files(marker, version)
    del files[f"{PROJECT}/core.py"], files[f"{PROJECT}/linked.py"]
    base = make_sdist(
        top, {**files, "setup.py": payload(marker)}, links={f"{PROJECT}/core.py": "/etc/passwd"}
    )
    out = io.BytesIO()
    with (
        tarfile.open(fileobj=io.BytesIO(base), mode="r:gz") as source,
        tarfile.open(fileobj=out, mode="w:gz") as archive,
    ):
        for member in source:
            archive.addfile(member, source.extractfile(member) if member.isfile() else None)
        hard = tarfile.TarInfo(f"{top}/{PROJECT}/linked.py")
        hard.type, hard.linkname = tarfile.LNKTYPE, f"{top}/{PROJECT}/trainer.py"
        archive.addfile(hard)
        for name in (f"{top}/../escape.py", "/tmp/escape.py"):
            evil = tarfile.TarInfo(name)
            evil.size = len(payload(marker))
            archive.addfile(evil, io.BytesIO(payload(marker)))
    return out.getvalue()


#: version -> (what it is, expected core-run outcome and reason, expected linked outcome)
EXPECTED = {
    "1.0.0": ("clean", "pass", ""),
    "1.0.1": ("zip bomb: 65 MiB member", "error", r"declares \d+ bytes, over the \d+ byte cap"),
    "1.0.2": ("member inflating past its declared size", "error", r"stated size|size differs"),
    "1.0.3": ("50 MB source file", "error", r"over the \d+ byte (cap|limit)"),
    "1.0.4": ("non-UTF-8 source", "error", r"cannot decode source"),
    "1.0.5": ("10,000 nested parentheses", "error", r"too many nested parentheses"),
    # the whole-module compile (class 10 of issue 47) may meet the limit before the parse does
    "1.0.6": ("100,000 nested unary minus", "error", r"does not (parse|compile.*): MemoryError"),
    "1.0.7": ("200,000-term expression", "error", r"does not (parse|compile.*): RecursionError"),
    "1.0.8": ("core.py as a zip symlink", "error", r"does not (parse|compile)"),
    "1.1.0": ("sdist with symlink, hard link, ../ and absolute members", "error", r"is a link"),
}


def hostile_files(marker: Path) -> dict[str, bytes]:
    """Every release of EXPECTED, by file name."""
    code = payload(marker)
    cores = {
        "1.0.0": None,
        "1.0.3": code + b"x = 1\n" * (50 * MiB // 6),
        "1.0.4": code + b"def run(model):\n    return '\xff\xfe caf\xe9'\n",
        "1.0.5": code + b"x = " + b"(" * 10_000 + b"1" + b")" * 10_000 + b"\n",
        "1.0.6": code + b"x = " + b"-" * 100_000 + b"1\n",
        "1.0.7": code + b"x = 1" + b" + 1" * 200_000 + b"\n",
    }
    files = {
        wheel_name(v): make_wheel(PROJECT, v, release_files(marker, v, core))
        for v, core in cores.items()
    }
    files[wheel_name("1.0.1")] = make_wheel(
        PROJECT, "1.0.1", release_files(marker, "1.0.1", bytes(65 * MiB))
    )
    inflating = make_wheel(PROJECT, "1.0.2", release_files(marker, "1.0.2", bytes(8 * MiB)))
    files[wheel_name("1.0.2")] = patched_size(inflating, f"{PROJECT}/core.py", 1000)
    files[wheel_name("1.0.8")] = zip_symlink_wheel(marker, "1.0.8")
    files[f"{PROJECT}-1.1.0.tar.gz"] = linked_sdist(marker, "1.1.0")
    return files


def snapshot(root: Path, skip: set[Path]) -> dict[str, tuple[bool, int]]:
    """Every path under root (is-dir, size), skipping the given folders."""
    found = {}
    for path in root.rglob("*"):
        if any(path == s or s in path.parents for s in skip):
            continue
        found[str(path.relative_to(root))] = (path.is_dir(), path.lstat().st_size)
    return found


def test_hostile_releases_give_error_with_the_reason_and_touch_nothing(tmp_path):
    marker = tmp_path / "home" / "UPSTREAM-CODE-RAN"
    folders = {name: tmp_path / name for name in ("home", "tmp", "xdg", "cwd", "cache", "out")}
    for folder in folders.values():
        folder.mkdir()
    matrix = tmp_path / "hostile.yaml"
    matrix.write_text(MATRIX)
    files = hostile_files(marker)
    before = snapshot(tmp_path, {folders["cache"], folders["out"]})
    with serving() as server:
        env = {
            **os.environ,
            "CANARY_INDEX_URL": publish(server, files),
            "CANARY_CACHE_DIR": str(folders["cache"]),
            "HOME": str(folders["home"]),
            "TMPDIR": str(folders["tmp"]),
            "XDG_CACHE_HOME": str(folders["xdg"]),
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        output = folders["out"] / "results.json"
        done = subprocess.run(
            [sys.executable, str(WORKER), str(matrix), ",".join(EXPECTED), str(output)],
            cwd=folders["cwd"],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    results = {(r["check"], r["version"]): r for r in json.loads(output.read_text())["results"]}
    for version, (what, status, reason) in EXPECTED.items():
        core = results[("core-run", version)]
        assert core["status"] == status, f"{version} ({what}): {core}"
        assert re.search(reason, core["detail"]), f"{version} ({what}): {core['detail']}"
        trainer = results[("trainer", version)]
        assert trainer["status"] == "pass" or (
            trainer["status"] == "error" and "core.py" in trainer["detail"]
        ), f"{version} ({what}): {trainer}"
    linked = results[("linked", "1.1.0")]
    assert linked["status"] == "error" and "is a link" in linked["detail"], linked
    assert not marker.exists(), "upstream code ran"
    assert snapshot(tmp_path, {folders["cache"], folders["out"]}) == before


def test_a_wheel_with_dotdot_member_names_is_an_error(tmp_path):
    marker = tmp_path / "UPSTREAM-CODE-RAN"
    members = {
        **release_files(marker, "1.0.0"),
        "../../escape.py": payload(marker),
        f"{PROJECT}/../../escape2.py": payload(marker),
    }
    matrix = tmp_path / "hostile.yaml"
    matrix.write_text(MATRIX)
    upstream = FakeUpstream(["1.0.0"], {"1.0.0": make_wheel(PROJECT, "1.0.0", members)}, matrix)
    with serving() as server:
        index_url = publish(server, upstream.files)
        results = run_checks(upstream, index_url, tmp_path / "cache")
    assert not marker.exists()
    core = next(r for r in results if r.check == "core-run")
    assert core.status.value == "error" and "unsafe" in core.detail, core


def test_one_bad_member_leaves_the_other_checks_of_the_release_judged(tmp_path):
    marker = tmp_path / "UPSTREAM-CODE-RAN"
    wheel = make_wheel(PROJECT, "1.0.0", release_files(marker, "1.0.0", b"#" * 5000))
    matrix = tmp_path / "hostile.yaml"
    matrix.write_text(MATRIX)
    upstream = FakeUpstream(
        ["1.0.0"], {"1.0.0": patched_size(wheel, f"{PROJECT}/core.py", 1000)}, matrix
    )
    with serving() as server:
        results = {
            r.check: r
            for r in run_checks(upstream, publish(server, upstream.files), tmp_path / "cache")
        }
    assert results["core-run"].status.value == "error"
    assert results["trainer"].status.value == "pass", results["trainer"]


def test_a_branch_whose_version_file_breaks_the_parser_is_an_error_not_a_crash(tmp_path, capsys):
    """A gated check reads the branch's declared version from its __init__.py (statically)."""
    package = tmp_path / "checkout" / "src" / PROJECT
    package.mkdir(parents=True)
    (package / "__init__.py").write_bytes(b"x = " + b"-" * 100_000 + b"1\n")
    (package / "core.py").write_bytes(b"def run(model):\n    pass\n")
    matrix = tmp_path / "gated.yaml"
    matrix.write_text(
        f"upstream: {PROJECT}\nchecks:\n"
        f"  - {{id: core-run, module: {PROJECT}.core, function: run, since: '1.0'}}\n"
    )
    argv = ["check", str(matrix), "--source", str(tmp_path / "checkout"), "--format", "json"]
    status = canary_main([*argv, "--versions", "main"])
    report = json.loads(capsys.readouterr().out)
    assert status == 1
    assert [r["status"] for r in report["results"]] == ["error"]
    assert "version" in report["results"][0]["detail"]
