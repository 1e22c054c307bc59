"""The hostile-input and fault classes of issue 19, each as a change to the fake upstream.

A Case says what the index serves (files, a rewritten project page, response headers), what the
run's environment is, which extra checks the matrix carries, and which verdicts the change is
allowed to touch: those must be `error` (a gate's `skip` stays a skip) or the verdict the case
states; every other verdict must be the fault-free one. `after` inspects what the run left
(request logs, the cache folder) for what no verdict shows, such as a leaked secret.
"""

from __future__ import annotations

import gzip
import io
import json
import struct
import tarfile
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from campaign_upstream import PROJECT, FakeUpstream, sources, wheel_name
from servers import FileServer, make_sdist, make_wheel

#: checks of campaign_upstream.matrix_text that read fakepkg.core
CORE_CHECKS = ("run-exists", "run-inputs", "patch-target", "gc-call", "gated-run", "either")
#: `matches` that backtracks without end on any source without a final digit
HOPELESS = r"(.|\s)*(.|\s)*(.|\s)*\Z\d"
TOKEN = "campaign-token-do-not-send"
PASSWORD = "campaign-password-do-not-keep"


@dataclass
class Case:
    """One fault class applied to the fake upstream."""

    files: dict[str, bytes]
    #: versions whose every verdict the fault may turn into `error`
    versions: set[str] = field(default_factory=set)
    #: (check, version) pairs the fault may turn into `error`
    pairs: set[tuple[str, str]] = field(default_factory=set)
    #: (check, version) -> the status the case demands (checks the case adds, mostly)
    demands: dict[tuple[str, str], str] = field(default_factory=dict)
    page: Callable[[dict], bytes] | None = None
    page_headers: dict[str, str] = field(default_factory=dict)
    extra_checks: str = ""
    env: dict[str, str] = field(default_factory=dict)
    lock: dict[str, tuple[str, bytes]] | None = None  # version -> (file name, bytes)
    index_url: Callable[[str], str] | None = None  # the served index URL -> the one given
    prepare: Callable[[Path, str], None] | None = None  # (cache folder, index URL)
    after: Callable[[FileServer, Path, list[dict]], list[str]] | None = None
    #: route options by file name (a dripping server), and files listed but not served
    routes: dict[str, dict] = field(default_factory=dict)
    gone: set[str] = field(default_factory=set)
    cache_under_a_file: bool = False


def default_page(page: dict) -> bytes:
    return json.dumps(page).encode()


def entry_of(page: dict, name: str) -> dict:
    return next(item for item in page["files"] if item["filename"] == name)


def sdist_of(upstream: FakeUpstream, version: str, extra: dict[str, bytes] | None = None) -> bytes:
    return make_sdist(
        f"{PROJECT}-{version}", {**sources(version, upstream.modules), **(extra or {})}
    )


def sdist_name(version: str) -> str:
    return f"{PROJECT}-{version}.tar.gz"


# -- item 1: a token sent to the wrong host ----------------------------------------------------


def token_host(upstream: FakeUpstream, github: FileServer) -> Case:
    """A file URL that is the GitHub host to urllib.parse and another host to the connection."""
    v0 = upstream.versions[0]
    host = github.url.split("//", 1)[1]

    def page(data: dict) -> bytes:
        entry = entry_of(data, wheel_name(v0))
        entry["url"] = entry["url"].replace("/files/", f"\\@{host}/files/", 1)
        return default_page(data)

    def after(server: FileServer, _cache: Path, _results: list[dict]) -> list[str]:
        logs = server.log + github.log
        leaked = [r.path for r in logs if TOKEN in r.headers.get("Authorization", "")]
        return [f"token sent with {path}" for path in leaked]

    env = {"GITHUB_TOKEN": TOKEN, "CANARY_GITHUB_API_URL": github.url}
    env["CANARY_GITHUB_RAW_URL"] = github.url
    return Case(dict(upstream.files), {v0}, page=page, env=env, after=after)


# -- item 2: a locked sdist-only release ---------------------------------------------------------


def locked_sdist(upstream: FakeUpstream) -> Case:
    """The oldest release has only an sdist and the lock names it (no URL): same verdicts."""
    v0 = upstream.versions[0]
    files = dict(upstream.files)
    del files[wheel_name(v0)]
    sdist = sdist_of(upstream, v0)
    files[sdist_name(v0)] = sdist
    lock = {v: (wheel_name(v), upstream.wheels[v]) for v in upstream.versions[1:]}
    lock[v0] = (sdist_name(v0), sdist)
    return Case(files, lock=lock)


# -- item 5: catastrophic regexes ----------------------------------------------------------------


def catastrophic_regex(upstream: FakeUpstream) -> Case:
    extra = f"  - {{id: hopeless, module: {PROJECT}.core, matches: ['{HOPELESS}']}}\n"
    demands = {("hopeless", v): "error" for v in upstream.versions}
    return Case(dict(upstream.files), extra_checks=extra, demands=demands)


# -- item 8: a server dripping bytes -------------------------------------------------------------


def dripping_server(upstream: FakeUpstream) -> Case:
    """Every response about the oldest release comes one byte at a time, within any timeout."""
    v0 = upstream.versions[0]
    return Case(
        dict(upstream.files),
        {v0},
        env={"CAMPAIGN_DEADLINE": "1.5"},
        routes={wheel_name(v0): {"drip": 0.01}},
    )


# -- item 6: nine inputs that used to abort the run ----------------------------------------------


def deep_json_page(upstream: FakeUpstream) -> Case:
    return Case(
        dict(upstream.files),
        set(upstream.versions),
        page=lambda _data: b"[" * 100_000 + b"]" * 100_000,
    )


def number_for_sha256(upstream: FakeUpstream) -> Case:
    v0 = upstream.versions[0]

    def page(data: dict) -> bytes:
        entry_of(data, wheel_name(v0))["hashes"] = {"sha256": 12345}
        return default_page(data)

    return Case(dict(upstream.files), {v0}, page=page)


def surrogate_in_url(upstream: FakeUpstream) -> Case:
    v0 = upstream.versions[0]

    def page(data: dict) -> bytes:
        entry = entry_of(data, wheel_name(v0))
        entry["url"] = entry["url"].replace("/files/", "/files/\udc80", 1)
        return default_page(data)  # json writes the lone surrogate as \udc80

    return Case(dict(upstream.files), {v0}, page=page)


def number_for_filename(upstream: FakeUpstream) -> Case:
    def page(data: dict) -> bytes:
        data["files"].append({"filename": 7, "url": "x"})
        return default_page(data)

    return Case(dict(upstream.files), set(upstream.versions), page=page)


def star_import_chain(upstream: FakeUpstream, length: int) -> Case:
    """A symbol reached through a chain of star imports longer than Python's recursion limit."""
    v0 = upstream.versions[0]

    def change(files: dict) -> dict:
        core = f"{PROJECT}/core.py"
        files[core] = b"from .chain0 import *\n" + files[core]
        for i in range(length):
            body = f"from .chain{i + 1} import *\n" if i + 1 < length else "deep_name = 1\n"
            files[f"{PROJECT}/chain{i}.py"] = body.encode()
        return files

    files = dict(upstream.files)
    files[wheel_name(v0)] = make_wheel(PROJECT, v0, change(dict(sources(v0, upstream.modules))))
    extra = f"  - {{id: chained, module: {PROJECT}.core, symbol: deep_name}}\n"
    demands = {("chained", v): "fail" for v in upstream.versions}
    demands[("chained", upstream.versions[-1])] = "xfail"  # the matrix's known-broken release
    demands[("chained", v0)] = "pass"
    return Case(files, extra_checks=extra, demands=demands)


def full_disk(upstream: FakeUpstream) -> Case:
    return Case(dict(upstream.files), set(upstream.versions), env={"CAMPAIGN_FILE_LIMIT": "64"})


def unusable_cache(upstream: FakeUpstream) -> Case:
    """The cache folder cannot be created (as for a read-only disk; root ignores modes)."""
    return Case(dict(upstream.files), set(upstream.versions), cache_under_a_file=True)


def ill_typed_cached_page(upstream: FakeUpstream) -> Case:
    """A verified cache entry of the project page with the wrong shape: fetched again."""

    def prepare(cache: Path, index_url: str) -> None:
        from canary.cache.stats import Stats
        from canary.cache.store import Cache
        from canary.sources.http import Reply
        from canary.sources.index import JSON_TYPE

        url = f"{index_url}{PROJECT}/"
        reply = Reply(url, 200, {"Content-Type": JSON_TYPE}, b'{"files": 7}')
        Cache(cache, Stats()).revalidate(f"index:{url}", "page", lambda _etag: reply)

    return Case(dict(upstream.files), prepare=prepare)


# -- item 7: unbounded reads and memory ----------------------------------------------------------


def gzip_bomb_page(upstream: FakeUpstream) -> Case:
    """About 1 MiB of gzip that inflates to 1 GiB of JSON whitespace."""
    bomb = gzip_bomb(b"[", b" " * (1 << 20), 1024, b"]")
    return Case(
        dict(upstream.files),
        set(upstream.versions),
        page=lambda _data: bomb,
        page_headers={"Content-Encoding": "gzip"},
    )


def gzip_bomb(head: bytes, chunk: bytes, count: int, tail: bytes) -> bytes:
    """A gzip file of `head`, `count` times `chunk`, then `tail`, compressing `chunk` once:
    each copy is a block after a full flush (nothing in it refers back), so the same bytes
    stand for every copy. Deflating the 1 GiB itself took 7 s of CPU."""
    packer = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    first = packer.compress(head) + packer.flush(zlib.Z_FULL_FLUSH)
    block = packer.compress(chunk) + packer.flush(zlib.Z_FULL_FLUSH)
    last = packer.compress(tail) + packer.flush()
    crc = zlib.crc32(head)
    for _ in range(count):
        crc = zlib.crc32(chunk, crc)
    crc = zlib.crc32(tail, crc)
    size = len(head) + count * len(chunk) + len(tail)
    trailer = struct.pack("<II", crc, size & 0xFFFFFFFF)
    return b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff" + first + block * count + last + trailer


def costly_source(upstream: FakeUpstream) -> Case:
    """core.py just under the 8 MiB source cap, dense enough that `ast` needed 3.5 GiB."""
    v0 = upstream.versions[0]

    def change(files: dict) -> dict:
        files[f"{PROJECT}/core.py"] += b"x = 1\n" * 1_390_000
        return files

    files = dict(upstream.files)
    files[wheel_name(v0)] = make_wheel(PROJECT, v0, change(dict(sources(v0, upstream.modules))))
    return Case(files, pairs={(check, v0) for check in CORE_CHECKS})


def source_under_budget(upstream: FakeUpstream) -> Case:
    """core.py just under the parse budget: parsed, same verdicts, the costliest parse allowed."""
    v0 = upstream.versions[0]

    def change(files: dict) -> dict:
        files[f"{PROJECT}/core.py"] += b"x = 1\n" * 199_000  # 597,000 tokens and a few
        return files

    files = dict(upstream.files)
    files[wheel_name(v0)] = make_wheel(PROJECT, v0, change(dict(sources(v0, upstream.modules))))
    return Case(files)


def many_zip_members(upstream: FakeUpstream, count: int) -> Case:
    v0 = upstream.versions[0]
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as archive:
        for i in range(count):
            archive.writestr(f"{PROJECT}/d/{i}", b"")
    files = dict(upstream.files)
    files[wheel_name(v0)] = out.getvalue()
    return Case(files, {v0})


def many_tar_members(upstream: FakeUpstream, count: int) -> Case:
    v0 = upstream.versions[0]
    names = [f"{PROJECT}-{v0}/{PROJECT}/d/{i}" for i in range(count)]
    files = dict(upstream.files)
    del files[wheel_name(v0)]
    # gzip's fastest level: level 9 spent 1.5 s of CPU on the 56 MB of headers
    files[sdist_name(v0)] = gzip.compress(empty_files_tar(names), compresslevel=1)
    return Case(files, {v0})


def empty_files_tar(names: list[str]) -> bytes:
    """The tar `tarfile` writes of these empty files (the same bytes: one header made by
    tarfile, then only its name and checksum fields change), without tarfile's cost per
    member: 8 s of CPU for the 110,000 headers of `many_tar_members`."""
    header = tarfile.TarInfo("").tobuf(tarfile.DEFAULT_FORMAT, tarfile.ENCODING, "surrogateescape")
    template = bytearray(header)
    template[148:156] = b" " * 8  # the checksum counts its own field as spaces
    base = sum(template)
    blocks = []
    for name in names:
        raw = name.encode()
        if len(raw) > 100:  # a longer name needs tarfile's own extension headers
            raise ValueError(f"{name!r}: over the 100 bytes of a tar header's name")
        block = bytearray(template)
        block[: len(raw)] = raw
        block[148:155] = b"%06o\0" % (base + sum(raw))
        blocks.append(bytes(block))
    body = b"".join(blocks) + b"\0" * (2 * tarfile.BLOCKSIZE)
    return body + b"\0" * (-len(body) % tarfile.RECORDSIZE)


def parallel_sdists(upstream: FakeUpstream, megabytes: int) -> Case:
    """Every release only as an sdist carrying `megabytes` of extra sources: same verdicts."""
    files = {}
    for v in upstream.versions:
        bulk = {f"{PROJECT}/bulk/b{i}.py": b"# filler\n" * 116_000 for i in range(megabytes)}
        files[sdist_name(v)] = sdist_of(upstream, v, bulk)
    return Case(files)


# -- item 9: index credentials -------------------------------------------------------------------


def index_credentials(upstream: FakeUpstream) -> Case:
    """user:password in the index URL; the oldest release's file is gone (an error detail)."""
    v0 = upstream.versions[0]
    files = dict(upstream.files)

    def after(_server: FileServer, cache: Path, results: list[dict]) -> list[str]:
        wrong = [f"password in {r['check']}[{r['version']}]" for r in results if PASSWORD in str(r)]
        for path in cache.rglob("*"):
            if path.is_file() and PASSWORD.encode() in path.read_bytes():
                wrong.append(f"password at rest in {path.relative_to(cache)}")
        return wrong

    return Case(
        files,
        {v0},
        index_url=lambda url: url.replace("http://", f"http://canary:{PASSWORD}@", 1),
        after=after,
        gone={wheel_name(v0)},
    )


# -- item 12: the low ones -----------------------------------------------------------------------


def escape_codes(upstream: FakeUpstream) -> Case:
    """A file name with a terminal escape sequence: the release is an error, shown escaped."""
    v0 = upstream.versions[0]

    def page(data: dict) -> bytes:
        entry = entry_of(data, wheel_name(v0))
        entry["filename"] = entry["filename"].replace("-py3", "\x1b[2J\x1b[31m-py3")
        return default_page(data)

    def after(_server: FileServer, _cache: Path, results: list[dict]) -> list[str]:
        return [f"escape code in {r['check']}[{r['version']}]" for r in results if "\x1b" in str(r)]

    return Case(dict(upstream.files), {v0}, page=page, after=after)


def special_members(upstream: FakeUpstream) -> Case:
    """An sdist whose core.py is a FIFO and trainer.py a character device."""
    v0 = upstream.versions[0]
    plain = sources(v0, upstream.modules)
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as archive:
        for path, data in plain.items():
            if path.endswith(("core.py", "trainer.py")):
                continue
            info = tarfile.TarInfo(f"{PROJECT}-{v0}/{path}")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
        for path, kind in (("core.py", tarfile.FIFOTYPE), ("trainer.py", tarfile.CHRTYPE)):
            info = tarfile.TarInfo(f"{PROJECT}-{v0}/{PROJECT}/{path}")
            info.type = kind
            archive.addfile(info)
    files = dict(upstream.files)
    del files[wheel_name(v0)]
    files[sdist_name(v0)] = out.getvalue()
    return Case(files, pairs={(c, v0) for c in (*CORE_CHECKS, "loss-method")})


def oversized_member(upstream: FakeUpstream) -> Case:
    """A 9 MiB module (compressed to a few KiB): an error, and never written to the cache."""
    v0 = upstream.versions[0]

    def change(files: dict) -> dict:
        files[f"{PROJECT}/models/m0.py"] = b"#" * (9 << 20)
        return files

    def after(_server: FileServer, cache: Path, _results: list[dict]) -> list[str]:
        big = [p for p in cache.rglob("*") if p.is_file() and p.stat().st_size > (8 << 20)]
        return [f"{p.name} of {p.stat().st_size} bytes cached" for p in big]

    files = dict(upstream.files)
    files[wheel_name(v0)] = make_wheel(PROJECT, v0, change(dict(sources(v0, upstream.modules))))
    return Case(files, pairs={("model-0", v0)}, after=after)


def comment_end_record(upstream: FakeUpstream) -> Case:
    """A zip comment holding a second end record: zipfile (an installer) sees no members."""
    v0 = upstream.versions[0]
    wheel = upstream.wheels[v0]
    at = wheel.rindex(b"PK\x05\x06")
    fake = b"PK\x05\x06" + bytes(18)
    record = wheel[at : at + 20] + struct.pack("<H", len(fake) + 4)
    files = dict(upstream.files)
    files[wheel_name(v0)] = wheel[:at] + record + fake + b"tail"
    return Case(files, {v0})
