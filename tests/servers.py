"""Loopback HTTP servers with fault injection, and archive builders, for the sources tests.

A FileServer serves byte strings at paths on 127.0.0.1, honoring single absolute or suffix
ranges (unless told to ignore them), ETag/If-None-Match, and one queued fault per request:
a connection reset, a status (503, 429 with Retry-After, 404, GitHub's rate-limit 403), a
truncated body, or a flipped byte. Every request is logged for assertions.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import re
import socket
import ssl
import struct
import subprocess
import sys
import tarfile
import threading
import time
import zipfile
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from canary.sources.http import RetryPolicy
from canary.sources.index import JSON_TYPE
from canary.sources.index_file import IndexFile

#: retries without real waiting, so fault tests take milliseconds
FAST = RetryPolicy(
    attempts=4,
    backoff=0.001,
    backoff_cap=0.01,
    retry_after_cap=2.0,
    rate_limit_wait_cap=3.0,
    connect_timeout=2.0,
    read_timeout=5.0,
)

_RANGE = re.compile(r"bytes=(\d*)-(\d*)")


@dataclass
class Route:
    """What one path serves; `faults` are consumed one per request, oldest first."""

    body: bytes
    content_type: str = "application/octet-stream"
    etag: str | None = None
    ranges: bool = True
    bad_content_range: bool = False
    faults: deque[str] = field(default_factory=deque)
    #: answer 302 to this URL instead of serving the body
    redirect: str | None = None
    #: seconds between single bytes of the body (and of the headers, with drip_headers)
    drip: float = 0.0
    drip_headers: bool = False
    #: extra response headers
    headers: dict[str, str] = field(default_factory=dict)
    #: seconds to wait before answering (to see which requests a client has in flight at once)
    delay: float = 0.0


@dataclass(frozen=True)
class Logged:
    path: str
    headers: dict[str, str]


class _HangUpTolerant(ThreadingHTTPServer):
    """A client hanging up mid-answer (a range read that has what it wanted, a deadline, a
    retry) is routine for a file host. The stock server prints its traceback to stderr from the
    handler thread, where it can land in a later test's captured output and fail an assertion
    that canary printed no traceback; every other error is still printed."""

    def handle_error(self, request: object, client_address: object) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)  # type: ignore[arg-type]


class FileServer:
    """A threaded HTTP/1.1 server on an ephemeral loopback port; HTTPS with `tls` (a context
    holding its certificate, see `loopback_certificate`)."""

    def __init__(self, tls: ssl.SSLContext | None = None) -> None:
        self.routes: dict[str, Route] = {}
        self.log: list[Logged] = []
        self.ignore_ranges = False
        self.in_flight = self.most_in_flight = 0  # requests being answered, now and at most
        self._counting = threading.Lock()
        self._httpd = _HangUpTolerant(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        self.scheme = "http"
        if tls is not None:
            self._httpd.socket = tls.wrap_socket(self._httpd.socket, server_side=True)
            self.scheme = "https"
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"{self.scheme}://{host}:{port}"

    def add(self, path: str, body: bytes, **options: object) -> Route:
        route = Route(body, **options)  # type: ignore[arg-type]
        self.routes[path] = route
        return route

    def fault(self, path: str, *faults: str) -> None:
        self.routes[path].faults.extend(faults)

    def requests_to(self, path: str) -> list[Logged]:
        return [r for r in self.log if r.path == path]

    def start(self) -> FileServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


@contextmanager
def serving(tls: ssl.SSLContext | None = None) -> Iterator[FileServer]:
    server = FileServer(tls).start()
    try:
        yield server
    finally:
        server.stop()


def loopback_certificate(folder: Path) -> tuple[ssl.SSLContext, Path]:
    """A server context with a fresh self-signed certificate for 127.0.0.1, and the certificate
    file clients must trust (REQUESTS_CA_BUNDLE). Made by the openssl command."""
    cert, key = folder / "cert.pem", folder / "key.pem"
    curve = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"]
    names = ["-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"]
    files = ["-keyout", str(key), "-out", str(cert)]
    command = ["openssl", "req", "-x509", *curve, "-nodes", "-days", "1", *names, *files]
    subprocess.run(command, check=True, capture_output=True)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    return context, cert


def _handler(server: FileServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self) -> None:
            super().setup()
            # headers and body go out in separate writes: without this, delayed ACKs cost 40 ms
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def log_message(self, format: str, *args: object) -> None:
            """Quiet: the tests read `server.log` instead."""

        def do_GET(self) -> None:
            with server._counting:
                server.in_flight += 1
                server.most_in_flight = max(server.most_in_flight, server.in_flight)
            try:
                self._answer()
            finally:
                with server._counting:
                    server.in_flight -= 1

        def _answer(self) -> None:
            path = self.path.split("?", 1)[0]
            server.log.append(Logged(path, dict(self.headers.items())))
            route = server.routes.get(path)
            if route is None:
                self._send(404, b"not found")
                return
            time.sleep(route.delay)
            fault = route.faults.popleft() if route.faults else ""
            if fault == "reset":
                self.connection.setsockopt(
                    socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                )
                self.close_connection = True
                return
            if fault.isdigit():
                self._send(int(fault), b"injected")
                return
            if fault.startswith("429:"):
                self._send(429, b"slow down", {"Retry-After": fault.split(":", 1)[1]})
                return
            if fault.startswith("ratelimit:"):
                reset = int(time.time() + float(fault.split(":", 1)[1]))
                headers = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(reset)}
                self._send(403, b"rate limited", headers)
                return
            self._serve(route, fault)

        def _serve(self, route: Route, fault: str) -> None:
            if route.redirect is not None:
                self._send(302, b"", {"Location": route.redirect})
                return
            if route.drip:
                self._drip(route)
                return
            headers = {"Content-Type": route.content_type, **route.headers}
            if route.etag:
                headers["ETag"] = route.etag
                if self.headers.get("If-None-Match") == route.etag:
                    self._send(304, b"", headers)
                    return
            status, body = 200, route.body
            asked = _RANGE.fullmatch(self.headers.get("Range", ""))
            if asked and route.ranges and not server.ignore_ranges:
                first, last = _bounds(asked, len(route.body))
                status, body = 206, route.body[first : last + 1]
                shift = 1 if route.bad_content_range else 0
                headers["Content-Range"] = f"bytes {first + shift}-{last}/{len(route.body)}"
            if fault == "flip" and body:
                middle = len(body) // 2
                body = body[:middle] + bytes([body[middle] ^ 0x20]) + body[middle + 1 :]
            if fault == "truncate":
                self._send(status, body, headers, cut=len(body) // 2)
                return
            self._send(status, body, headers)

        def _drip(self, route: Route) -> None:
            """One byte at a time, each well within any read timeout, until the client leaves."""
            head = f"HTTP/1.1 200 OK\r\nContent-Length: {len(route.body)}\r\n"
            head += "".join(f"X-Pad-{i}: {'x' * 50}\r\n" for i in range(90)) + "\r\n"
            data = (head.encode() if route.drip_headers else b"") + route.body
            if not route.drip_headers:
                self.wfile.write(head.encode())
            self.close_connection = True
            try:
                for i in range(len(data)):
                    self.wfile.write(data[i : i + 1])
                    self.wfile.flush()
                    time.sleep(route.drip)
            except OSError:
                return

        def _send(
            self, status: int, body: bytes, headers: dict[str, str] | None = None, cut: int = -1
        ) -> None:
            self.send_response(status)
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if status != 304:
                self.wfile.write(body if cut < 0 else body[:cut])
            if cut >= 0:
                self.wfile.flush()
                self.close_connection = True

    return Handler


def _bounds(asked: re.Match[str], size: int) -> tuple[int, int]:
    first, last = asked.group(1), asked.group(2)
    if not first:
        return max(0, size - int(last)), size - 1
    return int(first), min(int(last) if last else size - 1, size - 1)


# -- archives -------------------------------------------------------------------------------


def record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return "sha256=" + digest.decode()


def make_wheel(
    name: str,
    version: str,
    files: dict[str, bytes],
    *,
    compression: int = zipfile.ZIP_DEFLATED,
    record_rows: list[str] | None = None,
    metadata: str = "",
) -> bytes:
    """A wheel built with zipfile, RECORD last (just before the central directory);
    `metadata`: more header lines of its METADATA (`Project-URL: ...`)."""
    dist_info = f"{name}-{version}.dist-info"
    members = {
        **files,
        f"{dist_info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\n{metadata}".encode(),
        f"{dist_info}/WHEEL": b"Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    rows = [f"{path},{record_hash(data)},{len(data)}" for path, data in members.items()]
    rows = rows if record_rows is None else record_rows
    record = "\n".join([*rows, f"{dist_info}/RECORD,,"]) + "\n"
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression) as archive:
        for path, data in members.items():
            archive.writestr(path, data)
        archive.writestr(f"{dist_info}/RECORD", record)
    return out.getvalue()


def make_zip64_wheel(name: str, version: str, files: dict[str, bytes]) -> bytes:
    """A wheel whose end records, directory entries and offsets use the Zip64 forms.

    zipfile switches to Zip64 above module-level limits; lowering them while writing gives
    genuine Zip64 structures without writing gigabytes.
    """
    saved = zipfile.ZIP64_LIMIT, zipfile.ZIP_FILECOUNT_LIMIT
    zipfile.ZIP64_LIMIT, zipfile.ZIP_FILECOUNT_LIMIT = 64, 2
    try:
        return make_wheel(name, version, files)
    finally:
        zipfile.ZIP64_LIMIT, zipfile.ZIP_FILECOUNT_LIMIT = saved


def make_sdist(top: str, files: dict[str, bytes], links: dict[str, str] | None = None) -> bytes:
    """A .tar.gz with everything under `top/`, plus symbolic links name -> target."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as archive:
        for path, data in files.items():
            info = tarfile.TarInfo(f"{top}/{path}" if top else path)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
        for path, target in (links or {}).items():
            info = tarfile.TarInfo(f"{top}/{path}")
            info.type = tarfile.SYMTYPE
            info.linkname = target
            archive.addfile(info)
    return out.getvalue()


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def publish_file(
    server: FileServer, path: str, data: bytes, *, with_hash: bool = True, **options: object
) -> IndexFile:
    """Serve `data` at `path` and describe it as the index would (name, URL, size, sha256)."""
    server.add(path, data, **options)
    digest = sha256(data) if with_hash else None
    return IndexFile(path.rsplit("/", 1)[1], server.url + path, len(data), digest)


def publish_releases(server: FileServer, project: str, wheels: dict[str, bytes]) -> None:
    """Serve each release's wheel (version -> bytes) and the project's PEP 691 JSON page
    listing them, at /simple/PROJECT/."""
    files = []
    for version, wheel in wheels.items():
        name = f"{project}-{version}-py3-none-any.whl"
        server.add(f"/files/{name}", wheel)
        url, digest = f"../../files/{name}", {"sha256": sha256(wheel)}
        files.append({"filename": name, "url": url, "hashes": digest, "size": len(wheel)})
    page = {"meta": {"api-version": "1.1"}, "name": project, "versions": list(wheels)}
    page["files"] = files
    body = json.dumps(page).encode()
    server.add(f"/simple/{project}/", body, content_type=JSON_TYPE)


@contextmanager
def index_of(
    project: str, wheels: dict[str, bytes], monkeypatch: pytest.MonkeyPatch, cache: Path
) -> Iterator[FileServer]:
    """A loopback package index serving `project`'s releases (version -> wheel), made the
    one canary reads (CANARY_INDEX_URL, online) with its cache in `cache`."""
    with serving() as server:
        publish_releases(server, project, wheels)
        monkeypatch.setenv("CANARY_INDEX_URL", server.url + "/simple/")
        monkeypatch.setenv("CANARY_CACHE_DIR", str(cache))
        monkeypatch.delenv("CANARY_OFFLINE", raising=False)
        yield server
