"""A results file is input too (a downloaded artifact, a colleague's file): `canary report`
reads any valid JSON of SPEC's shape without a traceback and writes nothing of it raw."""

from __future__ import annotations

import base64
import hashlib
import json
import re

import pytest
from commands import canary

from canary.reports.html import JS

EVIL_RUN = '<script>alert(1)</script>"><img src=x onerror=alert(2)>'


def results_file(tmp_path, detail: str = "fine", check: str = "a", run: str = "1.0"):
    data = {
        "run": {"canary": run, "command": "canary check <b>"},
        "results": [
            {"upstream": "trl", "check": check, "version": "1.0", "status": "fail",
             "detail": detail, "source": "index"},
        ],
        "summary": {},
        "stats": {},
    }  # fmt: skip
    path = tmp_path / "results.json"
    path.write_text(json.dumps(data), encoding="ascii")  # \ud800 stays a JSON escape
    return path


@pytest.mark.parametrize("fmt", ["text", "markdown", "github", "json", "junit", "html"])
def test_a_lone_surrogate_is_shown_as_its_escape(tmp_path, fmt):
    path = results_file(tmp_path, detail="bad \ud800 byte", check="c\udc00")
    out = tmp_path / f"out.{fmt}"
    status, _ = canary("report", str(path), "--format", fmt, "--output", str(out))
    assert status == 1  # a fail, read and rendered
    text = out.read_text(encoding="utf-8")
    assert "\\ud800" in text or "\\\\ud800" in text, text[:2000]


def test_the_html_report_escapes_every_run_field_and_allows_only_its_own_script(tmp_path):
    path = results_file(tmp_path, run=EVIL_RUN)
    out = tmp_path / "out.html"
    status, _ = canary("report", str(path), "--format", "html", "--output", str(out))
    assert status == 1
    page = out.read_text(encoding="utf-8")
    assert "<script>alert" not in page and "<img" not in page
    assert page.count("<script>") == 1
    own = base64.b64encode(hashlib.sha256(JS.encode()).digest()).decode()
    policy = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', page)
    assert policy and "default-src 'none'" in policy.group(1)
    assert f"script-src 'sha256-{own}'" in policy.group(1)
    assert f"<script>{JS}</script>" in page  # the script the policy allows is the page's own


HOSTILE = "x\n::add-mask::secret\r::warning file=a::b ##[stop-commands]t"


@pytest.mark.parametrize("fmt", ["text", "markdown", "github", "json", "junit", "html"])
def test_no_field_of_a_results_file_reaches_the_output_as_a_workflow_command(tmp_path, fmt):
    """Names, versions, sources and run fields too, not only details: the runner acts on a
    line starting with `::` and on `##[` anywhere in one."""
    data = json.loads(results_file(tmp_path, detail=HOSTILE, check=HOSTILE).read_text())
    data["results"][0].update(upstream=HOSTILE, version=HOSTILE, source=HOSTILE)
    data["run"]["command"] = HOSTILE
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(data), encoding="ascii")
    out = tmp_path / f"out.{fmt}"
    status, printed = canary("report", str(path), "--format", fmt, "--output", str(out))
    assert status == 1
    for text in (out.read_text(encoding="utf-8"), printed):
        lines = text.splitlines()
        planted = ("::add-mask", "::warning")
        assert not [line for line in lines if line.lstrip().startswith(planted)], text[:3000]
        assert "##[stop-commands]" not in text, text[:3000]
