"""`canary scan` caps glibc's malloc arenas before its fetch threads start (canary.compat.malloc):
what those threads free is then reused by the rest of the run, not held in arenas of their own."""

from __future__ import annotations

import argparse
import ctypes
import sys

import pytest

from canary import api
from canary.cli import scan as scan_cli
from canary.compat import malloc


class _Libc:
    def __init__(self, glibc: bool):
        self.calls: list[tuple[int, int]] = []
        if glibc:
            self.gnu_get_libc_version = lambda: b"2.36"

    def mallopt(self, param: int, value: int) -> int:
        self.calls.append((param, value))
        return 1


def test_the_arena_cap_is_set_on_glibc_only(monkeypatch):
    glibc, other = _Libc(glibc=True), _Libc(glibc=False)
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setattr(ctypes, "CDLL", lambda name: glibc)
    assert malloc.fewer_arenas() is True
    assert glibc.calls == [(malloc.M_ARENA_MAX, malloc.ARENAS)]
    monkeypatch.setattr(ctypes, "CDLL", lambda name: other)
    assert malloc.fewer_arenas() is False
    assert other.calls == []
    monkeypatch.setattr(sys, "platform", "darwin")
    assert malloc.fewer_arenas() is False


def test_scan_caps_the_arenas_before_it_scans(monkeypatch, tmp_path):
    order: list[str] = []
    monkeypatch.setattr(malloc, "fewer_arenas", lambda: order.append("arenas") or True)

    def scanned(*args, **kwargs):
        order.append("scan")
        raise SystemExit(0)

    monkeypatch.setattr(api, "scan", scanned)
    args = argparse.Namespace(
        path=str(tmp_path), upstream=None, output=None, merge=None, source=None, exclude=None
    )
    with pytest.raises(SystemExit):
        scan_cli.run(args)
    assert order == ["arenas", "scan"]
