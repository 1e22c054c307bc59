"""JUnit XML for CI test tabs: one testcase per check x version, one testsuite per upstream.

Mapping (SPEC's outcomes onto what CI systems read): skip -> <skipped/>, xfail -> <skipped>
with the reason, fail -> <failure>, error -> <error>, xpass and warn pass with a note in
<system-out>. A source that could not be read is said once per cause: each case it left unrun
carries the short cause and the URL that failed, and the suite's <system-err> the cause's line
and its whole first message (not urllib3's text again for each of 386 checks). Detail text comes
from upstream sources, so characters XML 1.0 cannot carry are dropped rather than producing a
file no parser accepts.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from datetime import datetime, timezone

from canary.engine.outcomes import Result, RunReport, Status
from canary.reports.faults import fault_text, split_faults
from canary.reports.grid import UpstreamGrid, build_grids
from canary.reports.jsonio import stats_of
from canary.reports.transition import why_lines

_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
MESSAGE_MAX = 500


def _clean(text: str) -> str:
    return _NOT_XML.sub("\ufffd", text)


def _message(result: Result) -> str:
    first = result.detail.strip().splitlines()[0] if result.detail.strip() else result.status.value
    return _clean(first[:MESSAGE_MAX])


def _testcase(result: Result) -> ET.Element:
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
        child = ET.SubElement(case, tag, message=message, type=status.value)
        child.text = _clean(fault or "\n".join([result.detail, *why_lines(result.why)]))
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


def render_junit(report: RunReport) -> str:
    """<testsuites> with one <testsuite> per upstream, counts consistent with the cases."""
    seconds = f"{stats_of(report)['seconds']:.3f}"
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
    root = ET.Element("testsuites", name="canary")
    every: list[ET.Element] = []
    for index, grid in enumerate(build_grids(report)):
        cases = [_testcase(result) for result in grid.results()]
        if not cases:
            continue
        suite = ET.SubElement(root, "testsuite", name=_clean(grid.name), id=str(index))
        suite.attrib.update(_counts(cases), time="0", timestamp=stamp)
        suite.extend(cases)
        _said_once(suite, grid, report)
        every += cases
    totals = _counts(every)
    del totals["skipped"]  # junit-10.xsd has no `skipped` on <testsuites>, only per suite
    root.attrib.update(totals, time=seconds)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
