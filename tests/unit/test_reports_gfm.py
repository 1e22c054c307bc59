"""The markdown job summary and nightly issue read by a real GFM parser (markdown-it-py with
its table rule and linkify, GitHub's autolink extension): upstream text in a table cell stays
in its cell and its code span, and upstream text outside code links, embeds, mentions and
references nothing."""

from __future__ import annotations

import dataclasses
import re

from markdown_it import MarkdownIt
from markdown_it.token import Token
from test_reports_support import build

from canary.engine.outcomes import Became, Place
from canary.reports.command import compose
from canary.reports.dispatch import render

#: a detail that, once its code span breaks at the `|`, closes the report's own <details>,
#: shows a beacon image from the upstream's server, a link and a team mention
DETAIL = (
    "lacks `x` | </details> ![beacon](https://evil.example/b.png) "
    "[click](https://evil.example) @org/team \\| done"
)
#: upstream text GitHub turns into links and references outside code
CLOSEST = "see www.evil.example, owner/repo#12, GH-7 and #3 @team"
#: what GitHub links in text: a `www.` autolink, `owner/repo#N`, `#N`, `GH-N`, a mention
LIVE = re.compile(r"www\.|#\d|\bgh-\d|@\w", re.IGNORECASE)


def gfm() -> MarkdownIt:
    return MarkdownIt("commonmark", {"linkify": True}).enable(["table", "linkify"])


def hostile_report():
    report = build({"trl": (["1.0", "2.0"], {"aux": ".F", "other": ".."})})
    at = next(i for i, r in enumerate(report.results) if r.version == "2.0" and r.check == "aux")
    report.results[at] = dataclasses.replace(
        report.results[at],
        detail=DETAIL,
        last_pass="1.0",
        first_fail="2.0",
        became=Became("line", (Place(CLOSEST, "trl/x.py", 3),)),
    )
    return report


def cells(tokens: list[Token]) -> list[list[Token]]:
    """The inline children of each body cell, row by row."""
    rows: list[list[Token]] = []
    inside_body = False
    for token in tokens:
        if token.type == "tbody_open":
            inside_body = True
        elif token.type == "tbody_close":
            inside_body = False
        elif inside_body and token.type == "tr_open":
            rows.append([])
        elif inside_body and token.type == "inline":
            rows[-1].append(token)
    return rows


def test_a_pipe_in_a_detail_stays_in_its_cell_and_its_code_span():
    for body in (render("markdown", hostile_report()), issue_body()):
        tokens = gfm().parse(body)
        (row,) = [row for row in cells(tokens) if row[0].content == "`trl::aux`"]
        assert len(row) == 5, [cell.content for cell in row]
        (code,) = [child for child in row[4].children or [] if child.type == "code_inline"]
        assert code.content == DETAIL
        assert [c.type for c in row[4].children or []] == ["code_inline"]
        html = gfm().render(body)
        assert html.count("<details>") == html.count("</details>")
        assert "<img" not in html and 'evil.example">' not in html


def issue_body() -> str:
    """The nightly issue's report, as the nightly composes it (under GitHub's limit)."""
    return compose("markdown", hostile_report(), None, limit=65_000)


def text_outside_code(tokens: list[Token]) -> list[str]:
    texts = []
    for token in tokens:
        for child in token.children or []:
            if child.type in ("text", "html_inline"):
                texts.append(child.content)
    return texts


def test_upstream_text_outside_code_links_and_references_nothing():
    body = issue_body()
    assert "closest in 2.0" in body
    tokens = gfm().parse(body)
    assert not [t for t in tokens for c in t.children or [] if c.type == "link_open"]
    live = [text for text in text_outside_code(tokens) if LIVE.search(text)]
    assert live == []
    shown = " ".join(text_outside_code(tokens)).replace("\u2060", "")
    assert CLOSEST in shown  # the same text to a reader, each reference broken by a joiner
