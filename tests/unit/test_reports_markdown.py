"""Markdown for job summaries: runs per check, break points, anchors, details, the 1 MiB cap."""

from __future__ import annotations

import dataclasses

from test_reports_support import build, releases, unreadable_main

from canary.engine.outcomes import Status
from canary.reports.dispatch import render
from canary.reports.markdown import SUMMARY_LIMIT, fit, render_markdown

DASH = "\u2013"


def sample():
    versions = [*releases(149), "main"]
    rows = {
        "moved-symbol": "F" * 40 + "." * 110,
        "grpo-params": "s" * 20 + "." * 9 + "x" + "." * 70 + "F" * 50,
        "info-check": "." * 148 + "WW",
    }
    return build(
        {"trl": (versions, rows), "peft": (["0.10.0", "0.11.0"], {"lora": "E."})},
        anchors={"trl": ("0.2.2", "0.7.1", "0.4.0")},
        broken={"trl": ("0.2.9",)},
    )


def table_row(text: str, check: str) -> list[str]:
    line = next(line for line in text.splitlines() if line.startswith(f"| `{check}` |"))
    return [cell.strip() for cell in line.strip("|").split(" | ")]


def test_one_row_per_check_with_runs_break_points_and_anchors():
    out = render("markdown", sample())
    assert "## trl" in out and "## peft" in out
    assert table_row(out, "moved-symbol") == [
        "`moved-symbol`",
        f"❌ 0.0.0{DASH}0.3.9 · ✅ **0.4.0**{DASH}main",
        "0.0.0",
        "main",
        "**0.2.2** ❌ **0.7.1** ✅ **0.4.0** ✅",
    ]
    assert table_row(out, "grpo-params") == [
        "`grpo-params`",
        f"\u2796 0.0.0{DASH}0.1.9 · ✅ 0.2.0{DASH}0.2.8 · 🚧 0.2.9 · ✅ 0.3.0{DASH}0.9.9 · "
        f"❌ 0.10.0{DASH}main",
        "0.10.0",
        "0.9.9",
        "**0.2.2** ✅ **0.7.1** ✅ **0.4.0** ✅",
    ]
    assert table_row(out, "info-check")[1:4] == [
        f"✅ 0.0.0{DASH}0.14.7 · ⚠️ 0.14.8{DASH}main",
        "0.14.8",
        "0.14.7",
    ]
    assert table_row(out, "lora") == ["`lora`", "💥 0.10.0 · ✅ 0.11.0", DASH, "0.11.0"]
    assert "anchors **0.2.2**, **0.7.1**, **0.4.0** · known broken 0.2.9" in out
    assert "Truncated" not in out


def test_details_are_collapsed_and_said_once_per_span():
    out = render("markdown", sample())
    # one per check that does not pass (passing checks have none), one per upstream's grid
    assert out.count("<details>") == out.count("</details>") == 4 + 2
    block = out[out.index("<summary>trl :: grpo-params") :]
    block = block[: block.index("</details>")]
    assert "(51 not passing)" in block
    assert f"- ❌ fail 0.10.0{DASH}main: ` grpo-params is fail `" in block
    assert "- 🚧 xfail 0.2.9: ` grpo-params is xfail `" in block
    assert block.count("\n- ") == 2
    # the findings come first, the details after them, the folded grids last
    assert out.index("## Failing") < out.index("## Details") < out.index("| `lora` |")


def test_150_versions_stay_readable():
    out = render("markdown", sample())
    rows = [line for line in out.splitlines() if line.startswith("| `")]
    assert len(rows) == 4 + 4  # the grids' rows and the findings' (3 failing, 1 warning)
    assert max(len(row) for row in rows) < 240
    assert len(out.encode()) < 5000


def test_untrusted_detail_is_code_that_no_backtick_run_closes():
    """A detail is upstream text: a team mention, a remote image, a link, HTML, a fence of its
    own. It is one code span, fenced by more backticks than any run in it, so GitHub renders
    it as text: no mention, no image, no link, no tag."""
    report = sample()
    evil = "@org/team ![x](https://evil.example/x.png) [y](https://evil.example) <b>x</b> ``` |"
    report.results[0] = dataclasses.replace(report.results[0], detail=evil + "\nnext")
    out = render("markdown", report)
    (item,) = [line for line in out.splitlines() if "@org/team" in line]
    assert item.endswith(f": ```` {evil}\\nnext ````"), item
    assert out.count("@org/team") == 1


def test_summary_counts_on_top():
    out = render("markdown", sample())
    first = out.splitlines()[0]
    assert first == (
        "# canary: ✅ 338 pass · ❌ 90 fail · \u2796 20 skip · 🚧 1 xfail · ⚠️ 2 warn · 💥 1 error"
    )


def test_truncation_is_announced_and_stays_under_the_limit():
    full = render_markdown(sample())
    limit = len(full.encode()) - 200
    out = render_markdown(sample(), limit=limit)
    assert len(out.encode()) <= limit
    assert "**Truncated**" in out and f"under {limit:,} bytes" in out
    assert "uploaded results artifact" in out
    assert "## Failing" in out  # the findings come first; the folded grids are cut first
    # what is kept is a prefix of whole parts
    kept = out[: out.index("\n> **Truncated**")]
    assert full.startswith(kept)


def test_truncation_cuts_at_whole_rows():
    out = render_markdown(sample(), limit=1100)
    assert len(out.encode()) <= 1100
    table_lines = [line for line in out.splitlines() if line.startswith("|")]
    assert all(line.endswith("|") for line in table_lines)
    assert "**Truncated**" in out


def test_huge_run_is_capped_at_github_summary_limit():
    versions = releases(150)
    rows = {f"check-{i:03}": "".join("F."[(i + j) % 2] for j in range(150)) for i in range(250)}
    report = build({"big": (versions, rows)})
    # distinct long details per cell so the details alone exceed 1 MiB
    report.results = [
        dataclasses.replace(r, detail=f"{r.check} missing at {r.version} " + "x" * 60)
        if r.status is Status.FAIL
        else r
        for r in report.results
    ]
    out = render("markdown", report)
    assert len(out.encode()) <= SUMMARY_LIMIT
    assert "**Truncated**" in out
    # every red check survived as a row of the findings, newest breakage first
    assert out.count("| `big::check-") == 250
    assert "**250 checks red (18750 check x version results)**" in out


def test_failures_first_newest_breakage_first_and_the_green_grid_folded():
    out = render("markdown", sample())
    assert "**3 checks red (91 check x version results)**" in out
    failing = out[out.index("## Failing") : out.index("## Warnings")]
    rows = [line for line in failing.splitlines() if line.startswith("| `")]
    # fewest releases since it broke first: lora at the older of peft's two, grpo-params 50
    # releases ago, moved-symbol at trl's first
    assert [row.split("`")[1] for row in rows] == [
        "peft::lora",
        "trl::grpo-params",
        "trl::moved-symbol",
    ]
    warnings = out[out.index("## Warnings") : out.index("## Details")]
    assert "`trl::info-check`" in warnings
    green = build({"peft": (["0.10.0", "0.11.0"], {"lora": ".."})})
    folded = render("markdown", green)
    assert "## Failing" not in folded
    assert "<details><summary>the grid: 1 check, every check holds</summary>" in folded


def test_a_source_fault_is_one_line_with_the_url_that_failed():
    report = unreadable_main(386)
    out = render("markdown", report)
    (line,) = [line for line in out.splitlines() if "not run" in line]
    assert line == (
        "- 💥 trl&#91;main&#93; GitHub unreachable (name resolution failed); 386 checks not run "
        "(https:⁠//raw.githubusercontent.com/o/trl/main/trl/x.py)"
    )
    assert "HTTPSConnectionPool" not in out  # said once, as its cause, not per check


def test_names_and_versions_outside_code_link_and_mention_nothing():
    from canary.reports.markdown import md_escape

    shown = md_escape("@org/team [x](https://evil.example) ![i](//e) <img> a|b")
    assert shown == (
        "@\u2060org/team &#91;x&#93;(https:\u2060//evil.example) !&#91;i&#93;(//e) "
        "&lt;img&gt; a\\|b"
    )


def test_the_nightly_issue_body_fits_by_construction_with_every_block_closed():
    from canary.reports.command import compose

    versions = releases(150)
    rows = {f"check-{i:03}": "".join("F."[(i + j) % 2] for j in range(150)) for i in range(400)}
    report = build({"big": (versions, rows)})
    room = 65_536 - 300  # what the issue's first lines leave
    body = compose("markdown", report, None, limit=room)
    assert len(body.encode()) <= room and len(body) <= room
    assert body.count("<details>") == body.count("</details>")
    assert "**Truncated**" in body and body.rstrip().endswith("`--format json`.")
    kept = body[: body.index("\n> **Truncated**")]
    assert compose("markdown", report, None).startswith(kept)  # whole parts, never a word cut


def test_a_cut_report_is_never_a_byte_over_its_limit():
    """The note and the newline closing it are counted (a report cut just under the limit was
    one byte over it: the last newline)."""
    over = [
        len(fit(["x" * size] * 60, limit).encode()) - limit
        for limit in range(400, 700)
        for size in (1, 5, 20)
    ]
    assert max(over) <= 0
