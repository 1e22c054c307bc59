"""No text canary did not write can become a workflow command in a GitHub runner's log, in any
format: judged by a port of the runner's own parser (tests/workflow_commands.py)."""

from __future__ import annotations

import dataclasses

import pytest
from test_reports_support import build
from workflow_commands import Command, acted_on, own, try_parse_legacy, try_parse_v2

from canary.engine.outcomes import Became, Place, Result, Status
from canary.reports.dispatch import render
from canary.safety.untrusted import showable

#: what upstream and index text can carry: new lines, both command forms, a pause of its own
#: (whose end the attacker knows), characters a culture-sensitive search skips
HOSTILE = [
    "x\n::add-mask::secret",
    "x\r::warning file=setup.py,line=1::owned",
    "  ::error::leading white space",
    "::stop-commands::mine\n::mine::",
    "htp://##[stop-commands]x/trl.whl",
    "text/html; ##[set-output name=x;]1",
    "##\u200b[add-mask]zero width",
    "#\u00ad#[add-mask]soft hyphen",
    "\u2028::notice::line separator",
    "\x85::notice::next line",
]
FORMATS = ["text", "markdown", "github", "json", "junit", "html"]


def test_the_port_reads_commands_as_the_runner_does():
    """Cases from the runner's grammar: what it acts on, and what it does not."""
    registered = {"warning", "add-mask", "stop-commands"}
    assert try_parse_v2("  ::warning file=a%2Cb,line=3::x%0Ay", registered) == Command(
        "warning", {"file": "a,b", "line": "3"}, "x\ny"
    )
    assert try_parse_v2("::WARNING::x", registered) == Command("warning", {}, "x")
    assert try_parse_v2("x ::warning::x", registered) is None
    assert try_parse_v2("::nope::x", registered) is None
    assert try_parse_legacy("a ##[add-mask]s%3Bt", registered) == Command("add-mask", {}, "s;t")
    assert try_parse_legacy("##\u200b[add-mask]s", registered) == Command("add-mask", {}, "s")
    token = "canary-" + "0" * 32
    log = f"::stop-commands::{token}\n::error::no\n##[add-mask]no\n::{token}::\n::error::yes"
    assert own(acted_on(log)) == [Command("error", {}, "yes")]
    theirs = "::stop-commands::t1\n::error::hidden\n::t1::"
    assert own(acted_on(theirs)) == [Command("stop-commands", {}, "t1"), Command("t1", {}, "")]


@pytest.mark.parametrize("text", HOSTILE)
def test_showable_text_is_no_command_wherever_it_sits_in_a_line(text):
    shown = showable(text)
    assert "\n" not in shown and "\r" not in shown
    for line in (shown, f"  {shown}", f"FAIL  trl::a[1.0] {shown}"):
        assert acted_on(line) == [], line


@pytest.mark.parametrize("fmt", FORMATS)
def test_upstream_text_is_no_command_in_any_format(fmt):
    """Each hostile text as a detail, a fault and a check's detail over versions: the runner
    acts only on canary's own commands, the annotations and the findings group."""
    report = build({"trl": (["1.0", "1.1"], {f"c{n}": "FE" for n in range(len(HOSTILE))})})
    report.results = [
        result
        for n, text in enumerate(HOSTILE)
        for result in (
            Result("trl", f"c{n}", "1.0", Status.FAIL, text),
            Result("trl", f"c{n}", "1.1", Status.ERROR, f"https://files.example/x: {text}"),
        )
    ]
    out = render(fmt, report)
    acted = own(acted_on(out))
    if fmt != "github":
        assert acted == []
        return
    names = [c.name for c in acted]
    assert names == ["error"] * (len(names) - 2) + ["group", "endgroup"], names
    assert {c.properties.get("file") for c in acted} <= {"matrices/trl.yaml", None}
    assert not [c for c in acted if "\n" in c.data or "\r" in c.data]
    assert [c for c in acted_on(out) if c.name == "stop-commands"], "findings not paused"


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_checks_why_and_its_matrix_path_are_no_command_in_any_format(fmt):
    """A `why` (a matrix scan wrote from downstream text) and a matrix file name are shown as
    text too: the why on its own line of an annotation, never a line of its own choosing; the
    path in the log line's `(file:line)`."""
    report = build({"trl": (["1.0"], {f"c{n}": "F" for n in range(len(HOSTILE))})})
    report.results = [
        Result("trl", f"c{n}", "1.0", Status.FAIL, "gone", why=text)
        for n, text in enumerate(HOSTILE)
    ]
    info = report.upstreams["trl"]
    report.upstreams["trl"] = dataclasses.replace(info, matrix="m\n::add-mask::p/##[x].yaml")
    acted = own(acted_on(render(fmt, report)))
    if fmt != "github":
        assert acted == []
        return
    assert [c.name for c in acted] == ["error"] * 10 + ["group", "endgroup"]
    for command in acted[:10]:
        first, *rest = command.data.split("\n")
        assert first == "fail: gone" and len(rest) == 1 and rest[0].startswith("why: ")


@pytest.mark.parametrize("fmt", FORMATS)
def test_where_a_subject_went_is_no_command_in_any_format(fmt):
    """The file of a `moved_to` or `closest` place is a wheel's member name, upstream text as
    much as the line it points at."""
    report = build({"trl": (["1.0"], {f"c{n}": "F" for n in range(len(HOSTILE))})})
    report.results = [
        Result(
            "trl", f"c{n}", "1.0", Status.FAIL, "gone",
            became=Became("definition", (Place("trl.x.A", f"trl/{text}.py", 3),), 9),
        )
        for n, text in enumerate(HOSTILE)
    ]  # fmt: skip
    acted = own(acted_on(render(fmt, report)))
    if fmt == "github":
        acted = [c for c in acted if c.name not in ("error", "group", "endgroup")]
    assert acted == []
