"""The documentation site builds with `mkdocs build --strict`: a broken link, a missing anchor or a
page left out of the nav fails here, not on the published site.

MkDocs and Material for MkDocs come from the `docs` extra (the `test` extra includes it). Without
them these tests skip and say how to install them; with CANARY_REQUIRE_DOCS=1 (set by .ci/run,
which installs the test extra) a missing one fails them instead.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from paths import ROOT


def require_mkdocs() -> None:
    missing = [name for name in ("mkdocs", "material") if importlib.util.find_spec(name) is None]
    if not missing:
        return
    why = (
        f"building the docs needs {' and '.join(missing)}: "
        "install the docs extra (python -m pip install -e '.[docs]')"
    )
    if os.environ.get("CANARY_REQUIRE_DOCS") == "1":
        pytest.fail(f"CANARY_REQUIRE_DOCS=1 and {why}")
    pytest.skip(why)


def build(project: Path, site: Path) -> subprocess.CompletedProcess[str]:
    """`mkdocs build --strict` of the project's mkdocs.yml into `site`."""
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )


def copy_project(tmp_path: Path) -> Path:
    """mkdocs.yml and docs/ in a folder of their own, to break without touching the repository."""
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(ROOT / "mkdocs.yml", project / "mkdocs.yml")
    shutil.copytree(ROOT / "docs", project / "docs")
    return project


#: a stylesheet, font, preconnect or script a page loads from another host when it is viewed
EXTERNAL_LOAD = re.compile(r"<(?:link|script)\b[^>]*\b(?:href|src)=\"(?:https?:)?//[^\"]*\"")


def test_the_docs_build_strictly(tmp_path: Path):
    require_mkdocs()
    result = build(ROOT, tmp_path / "site")
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "site" / "reference" / "matrix" / "index.html").is_file()
    loads = {
        page.relative_to(tmp_path / "site").as_posix(): EXTERNAL_LOAD.findall(page.read_text())
        for page in (tmp_path / "site").rglob("*.html")
    }
    assert {page: found for page, found in loads.items() if found} == {}  # fonts: the system's


def test_a_broken_link_or_a_page_out_of_the_nav_fails_the_build(tmp_path: Path):
    """One build, three faults: each is named, and the build fails."""
    require_mkdocs()
    project = copy_project(tmp_path)
    index = project / "docs" / "index.md"
    broken = "\n[gone](no-such-page.md) [gone too](guides/ci.md#no-such-anchor)\n"
    index.write_text(index.read_text(encoding="utf-8") + broken, encoding="utf-8")
    (project / "docs" / "orphan.md").write_text("# Orphan\n", encoding="utf-8")
    result = build(project, tmp_path / "site")
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    for fault in ("no-such-page.md", "no-such-anchor", "orphan.md"):
        assert fault in output, f"{fault} not reported:\n{output}"
