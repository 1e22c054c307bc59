"""The HTML grid: self-contained, and drawn right by a real browser (headless Chromium).

The browser tests render the page to a PNG and sample cell colors where the fixed layout puts
them. Without a Chromium they skip, saying how to install one; CI (`.ci/run`) installs it and
sets CANARY_REQUIRE_BROWSER=1, under which a missing browser fails them instead.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import struct
import subprocess
import zlib
from html.parser import HTMLParser
from pathlib import Path

import pytest
from test_reports_support import build, unreadable_main

from canary.engine.outcomes import Status
from canary.reports.dispatch import render
from canary.reports.html import CELL, COLORS, HEADER, cell_origin
from canary.reports.text import NOTE_INDENT

WHITE = (255, 255, 255)


def sample():
    return build(
        {
            "trl": (["0.18.2", "0.19.0", "1.0.0", "main"], {"a": ".xF.", "b": "sEW.", "c": "F. X"}),
            "peft": (["0.10.0", "0.11.0"], {"lora": "F.", "dora": ".."}),
        },
        anchors={"trl": ("1.0.0",)},
        broken={"trl": ("0.19.0",)},
    )


def decode_png(data: bytes) -> tuple[int, int, list[bytes], int]:
    """(width, height, rows, bytes per pixel) of an 8-bit RGB/RGBA non-interlaced PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
    width, height, depth, color_type, _, _, interlace = header
    assert depth == 8 and color_type in (2, 6) and interlace == 0, header
    bpp = 3 if color_type == 2 else 4
    raw, stride, rows, prev = zlib.decompress(idat), width * bpp, [], bytes(width * bpp)
    for y in range(height):
        kind, line = (
            raw[y * (stride + 1)],
            bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)]),
        )
        for i in range(stride):
            left = line[i - bpp] if i >= bpp else 0
            up, corner = prev[i], prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                pred = left if pa <= pb and pa <= pc else up if pb <= pc else corner
                line[i] = (line[i] + pred) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, rows, bpp


class Screenshot:
    def __init__(self, png: Path) -> None:
        self.width, self.height, self.rows, self.bpp = decode_png(png.read_bytes())

    def pixel(self, x: int, y: int) -> tuple[int, int, int]:
        start = x * self.bpp
        return tuple(self.rows[y][start : start + 3])


def shoot(page: str, tmp_path: Path, fragment: str = "", size=(1000, 700)) -> Screenshot:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        why = (
            "the HTML report's browser tests need headless Chromium: install it (Debian and "
            "Ubuntu: apt-get install chromium; macOS: brew install --cask chromium)"
        )
        if os.environ.get("CANARY_REQUIRE_BROWSER") == "1":
            pytest.fail(f"CANARY_REQUIRE_BROWSER=1 and no browser: {why}")
        pytest.skip(why)
    html_file, png = tmp_path / "report.html", tmp_path / f"shot{len(fragment)}.png"
    html_file.write_text(page, encoding="utf-8")
    command = [
        browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
        "--no-first-run", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--hide-scrollbars", "--force-device-scale-factor=1",
        f"--user-data-dir={tmp_path / 'profile'}", f"--screenshot={png}",
        f"--window-size={size[0]},{size[1]}", html_file.as_uri() + fragment,
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert png.exists(), f"chromium wrote no screenshot (exit {done.returncode}):\n{done.stderr}"
    return Screenshot(png)


def rgb(hex_color: str) -> tuple[int, int, int]:
    return tuple(int(hex_color[i : i + 2], 16) for i in (1, 3, 5))


def near(actual, expected, tolerance: int = 10) -> bool:
    return all(abs(a - e) <= tolerance for a, e in zip(actual, expected, strict=True))


def inside(report, upstream: str, check: str, version: str) -> tuple[int, int]:
    """A pixel inside the cell, clear of its centered glyph (cells have a 1px white edge right
    and bottom)."""
    x, y = cell_origin(report, upstream, check, version)
    return x + 2, y + 2


def test_page_is_self_contained_and_escapes_details():
    report = sample()
    report.results[0] = report.results[0].__class__(
        "trl", "a", "0.18.2", Status.FAIL, '<img src="http://x/y.png"> "quoted"', "index"
    )
    page = render("html", report)
    assert page.startswith("<!DOCTYPE html>")
    for remote in ("http://", "https://", "<link", "@import", "url(", "<img", " src="):
        assert remote not in page.replace("&lt;img src=&quot;http://x/y.png&quot;&gt;", ""), remote
    assert "&lt;img src=&quot;http://x/y.png&quot;&gt; &quot;quoted&quot;" in page


def test_cells_carry_their_detail_for_hover_and_click():
    class Cells(HTMLParser):
        def __init__(self):
            super().__init__()
            self.titles: dict[str, str] = {}

        def handle_starttag(self, tag, attrs):
            attrs = dict(attrs)
            if "c" in (attrs.get("class") or "").split():
                self.titles[attrs["title"]] = attrs["data-s"]

    parser = Cells()
    parser.feed(render("html", sample()))
    assert parser.titles["trl::a[1.0.0] fail: a is fail"] == "fail"
    assert parser.titles["trl::a[0.18.2] pass"] == "pass"
    assert parser.titles["peft::lora[0.10.0] fail: lora is fail"] == "fail"
    assert len(parser.titles) == 15  # 16 cells, one missing (trl::c[1.0.0])


def test_grid_is_drawn_in_a_real_browser(tmp_path):
    report = sample()
    shot = shoot(render("html", report), tmp_path)
    expect = {
        ("trl", "a", "0.18.2"): Status.PASS,
        ("trl", "a", "0.19.0"): Status.XFAIL,
        ("trl", "a", "1.0.0"): Status.FAIL,
        ("trl", "b", "0.18.2"): Status.SKIP,
        ("trl", "b", "0.19.0"): Status.ERROR,
        ("trl", "b", "1.0.0"): Status.WARN,
        ("trl", "c", "main"): Status.XPASS,
        ("peft", "lora", "0.10.0"): Status.FAIL,
        ("peft", "dora", "0.11.0"): Status.PASS,
    }
    for key, status in expect.items():
        got = shot.pixel(*inside(report, *key))
        assert near(got, rgb(COLORS[status])), (key, status, got)
    # no result: nothing drawn there; and left of the first cell is the label column
    assert shot.pixel(*inside(report, "trl", "c", "1.0.0")) == WHITE
    x, y = inside(report, "trl", "a", "0.18.2")
    assert shot.pixel(x - CELL, y) != rgb(COLORS[Status.PASS])
    # the summary bar under the header (the red-check count first) shows a swatch per status
    top = {shot.pixel(x, y) for y in range(HEADER, HEADER + 80) for x in range(0, 800)}
    for status in Status:
        assert any(near(p, rgb(COLORS[status]), 2) for p in top), status


def test_filters_work_in_a_real_browser(tmp_path):
    report = sample()
    page = render("html", report)
    # upstream filter: trl is hidden, so peft's grid moves up to where trl's was
    shot = shoot(page, tmp_path, "#upstream=peft")
    assert near(shot.pixel(*inside(report, "trl", "a", "0.18.2")), rgb(COLORS[Status.FAIL]))
    assert near(shot.pixel(*inside(report, "trl", "b", "0.18.2")), rgb(COLORS[Status.PASS]))
    # status filter: rows without a fail disappear, other cells of kept rows are dimmed
    shot = shoot(page, tmp_path, "#status=fail")
    assert near(shot.pixel(*inside(report, "trl", "a", "1.0.0")), rgb(COLORS[Status.FAIL]))
    dimmed = shot.pixel(*inside(report, "trl", "a", "0.18.2"))
    assert min(dimmed) > 200 and dimmed != WHITE, dimmed  # faint green
    # row b has no fail: row c (fails at 0.18.2) takes its place
    assert near(shot.pixel(*inside(report, "trl", "b", "0.18.2")), rgb(COLORS[Status.FAIL]))


def test_the_page_says_what_was_run_and_lists_every_finding_with_its_detail():
    report = sample()
    report.run = {"date": "2026-12-01 01:20 UTC", "canary": "9.9", "command": "canary check x"}
    page = render("html", report)
    title = page[page.index("<title>") + 7 : page.index("</title>")]
    assert title.startswith("canary report, 2026-12-01 01:20 UTC: ")
    header = page[page.index("<header>") : page.index("</header>")]
    assert "canary 9.9" in header and "<code>canary check x</code>" in header

    class Findings(HTMLParser):
        def __init__(self):
            super().__init__()
            self.inside, self.items = False, []

        def handle_starttag(self, tag, attrs):
            if tag == "li" and dict(attrs).get("data-s"):
                self.inside = True
                self.items.append("")

        def handle_endtag(self, tag):
            self.inside = self.inside and tag != "li"

        def handle_data(self, data):
            if self.inside:
                self.items[-1] += data

    parser = Findings()
    parser.feed(page[page.index('<section id="findings">') :])
    assert "FFAIL  trl::a[1.0.0] a is fail (matrices/trl.yaml:10)" in parser.items  # glyph, line
    assert "EERROR trl::b[0.19.0] b is error (matrices/trl.yaml:15)" in parser.items
    assert len(parser.items) == 7  # every cell that is neither pass nor skip, grouped
    why = "unsloth's wrapper needs it " * 10
    report.results = [
        dataclasses.replace(r, why=why) if r.check == "a" else r for r in report.results
    ]
    parser = Findings()
    page = render("html", report)
    parser.feed(page[page.index('<section id="findings">') :])
    said = f"FFAIL  trl::a[1.0.0] a is fail (matrices/trl.yaml:10){NOTE_INDENT}why: {why}"
    assert said in parser.items  # the long why, on the line under the finding


def test_every_cell_and_legend_entry_has_a_glyph_besides_its_color():
    page = render("html", sample())
    for status in Status:
        assert f'<div class="c s-{status.value}" data-s="{status.value}"' in page
        assert f'<span class="badge s-{status.value}">' in page
    assert '"><span class="badge s-fail">F</span>fail: broken</span>' in page


def test_the_newest_releases_show_without_scrolling(tmp_path):
    versions = [f"1.{n}.0" for n in range(150)]
    report = build({"trl": (versions, {"a": "." * 149 + "F", "b": "." * 150})})
    shot = shoot(render("html", report), tmp_path, size=(1000, 700))
    _, y = inside(report, "trl", "a", versions[-1])
    newest = shot.pixel(shot.width - CELL + 2, y)
    assert near(newest, rgb(COLORS[Status.FAIL])), newest
    # the check ids stay in view on the left, over the scrolled cells
    assert not near(shot.pixel(4, y), rgb(COLORS[Status.PASS]))
    # the glyph is drawn on the cell: light pixels in its middle
    middle = [
        shot.pixel(shot.width - CELL + dx, y + dy) for dx in range(4, 12) for dy in range(2, 11)
    ]
    assert any(min(p) > 200 for p in middle), middle


def test_a_source_fault_is_one_finding_and_each_cell_says_only_its_cause():
    page = render("html", unreadable_main(386))
    assert "HTTPSConnectionPool" not in page  # urllib3's text is not repeated in 386 cells
    assert page.count("386 checks not run") == 1
    assert page.count("GitHub unreachable (name resolution failed)") == 387  # finding + cells
