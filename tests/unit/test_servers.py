"""The loopback file server the tests share: what it does when a client hangs up."""

from __future__ import annotations

import socket
import time

from servers import serving


def _hang_up_mid_body(url: str, path: str) -> None:
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port))) as client:
        client.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
        client.recv(1024)
        client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")


def test_a_client_hanging_up_mid_body_prints_no_traceback(capfd):
    """A range read that has what it wanted closes early; the server's broken pipe is routine,
    and a traceback from its thread would land in whatever test captures stderr next."""
    with serving() as server:
        server.add("/big.whl", b"x" * (64 << 20))
        _hang_up_mid_body(server.url, "/big.whl")
        deadline = time.monotonic() + 10
        while (server.in_flight or not server.log) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert server.in_flight == 0
    assert "Traceback" not in capfd.readouterr().err
