"""JUnit XML for CI test tabs: one testcase per check x version, one testsuite per upstream.

Mapping (SPEC's outcomes onto what CI systems read): skip -> <skipped/>, xfail -> <skipped>
with the reason, fail -> <failure>, error -> <error>, xpass and warn pass with a note in
<system-out>. An upcoming fail (red only ahead of the releases: canary.engine.upcoming) is told
apart as the other formats do: its case sits in a suite of its own, `trl (upcoming)`, marked by
the property `canary.kind` = `upcoming`, its <failure> typed `upcoming` and its message saying
so (CI test tabs group by suite, so a red of main is not counted among the released ones).
The upstream commit that broke a check, when named, is a line of its failure's text.

A source that could not be read is said once per cause: each case it left unrun carries the
short cause and the URL that failed, and the suite's <system-err> the cause's line and its
whole first message (not urllib3's text again for each of 386 checks). Detail text comes from
upstream sources, so characters XML 1.0 cannot carry are dropped rather than producing a
file no parser accepts.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from datetime import datetime, timezone

from canary.engine.outcomes import Result, RunReport, Status
from canary.engine.upcoming import key, upcoming_keys
from canary.reports.faults import fault_text, split_faults
from canary.reports.grid import UpstreamGrid, build_grids
from canary.reports.jsonio import stats_of
from canary.reports.transition import broken_by_line, why_lines

_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
MESSAGE_MAX = 500
UPCOMING = "upcoming"


def _clean(text: str) -> str:
    return _NOT_XML.sub("\ufffd", text)


def _message(result: Result) -> str:
    first = result.detail.strip().splitlines()[0] if result.detail.strip() else result.status.value
    return _clean(first[:MESSAGE_MAX])


def _testcase(result: Result, upcoming: bool = False) -> ET.Element:
    case = ET.Element(
        "testcase",
        classname=_clean(result.upstream),
        name=_clean(f"{result.check}[{result.version}]"),
        time="0",
    )
    status = result.status
    if status in (Status.FAIL, Status.ERROR):
        tag = "failure" if status is Status.FAIL else "error"
        fault = fault_text(result)
        message = _clean(fault[:MESSAGE_MAX]) if fault else _message(result)
        if upcoming:
            message = _clean(f"upcoming: {message}"[:MESSAGE_MAX])
        kind = UPCOMING if upcoming else status.value
        child = ET.SubElement(case, tag, message=message, type=kind)
        culprit = [line] if (line := broken_by_line(result)) else []
        text = "\n".join([result.detail, *culprit, *why_lines(result.why)])
        child.text = _clean(fault or text)
    elif status in (Status.SKIP, Status.XFAIL):
        reason = "outside the check's version gate" if status is Status.SKIP else "known broken"
        detail = f"xfail: {result.detail}" if status is Status.XFAIL else result.detail
        ET.SubElement(case, "skipped", message=_clean(detail or reason))
    elif status in (Status.XPASS, Status.WARN):
        note = "passes on a release listed as broken" if status is Status.XPASS else ""
        out = ET.SubElement(case, "system-out")
        out.text = _clean(f"{status.value}: {result.detail or note}")
    return case


def _counts(cases: list[ET.Element]) -> dict[str, str]:
    def count(tag: str) -> int:
        return sum(1 for case in cases if case.find(tag) is not None)

    return {
        "tests": str(len(cases)),
        "failures": str(count("failure")),
        "errors": str(count("error")),
        "skipped": str(count("skipped")),
    }


def _said_once(suite: ET.Element, grid: UpstreamGrid, report: RunReport) -> None:
    """The suite's source faults, one line per cause with its first whole message."""
    faults, _ = split_faults(RunReport(grid.results(), report.stats, report.upstreams))
    if not faults:
        return
    order = {grid.name: grid.versions}  # the grid's own versions: no grids built again
    lines = [f"error: {f.line(order)}\n  {f.detail}" for f in faults]
    ET.SubElement(suite, "system-err").text = _clean("\n".join(lines))


def _suite(
    root: ET.Element, name: str, index: int, stamp: str, cases: list[ET.Element], kind: str = ""
) -> ET.Element:
    """A <testsuite> of `cases`; a `kind` is said as its `canary.kind` property."""
    suite = ET.SubElement(root, "testsuite", name=_clean(name), id=str(index))
    suite.attrib.update(_counts(cases), time="0", timestamp=stamp)
    if kind:
        properties = ET.SubElement(suite, "properties")
        ET.SubElement(properties, "property", name="canary.kind", value=kind)
    suite.extend(cases)
    return suite


def render_junit(report: RunReport) -> str:
    """<testsuites> with one <testsuite> per upstream (and one for its upcoming reds, after
    it), counts consistent with the cases."""
    seconds = f"{stats_of(report)['seconds']:.3f}"
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
    root = ET.Element("testsuites", name="canary")
    every: list[ET.Element] = []
    upcoming = upcoming_keys(report)
    suites = 0
    for grid in build_grids(report):
        results = grid.results()
        cases = [_testcase(result) for result in results if key(result) not in upcoming]
        ahead = [_testcase(result, True) for result in results if key(result) in upcoming]
        if cases:
            suite = _suite(root, grid.name, suites, stamp, cases)
            _said_once(suite, grid, report)
            suites += 1
        if ahead:
            _suite(root, f"{grid.name} ({UPCOMING})", suites, stamp, ahead, UPCOMING)
            suites += 1
        every += cases + ahead
    totals = _counts(every)
    del totals["skipped"]  # junit-10.xsd has no `skipped` on <testsuites>, only per suite
    root.attrib.update(totals, time=seconds)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
