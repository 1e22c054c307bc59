"""The MkDocs hook (mkdocs.yml's `hooks:`): each page's generated parts are written from the code
as the page is built, so no reference page is edited by hand to follow the code."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

# MkDocs loads this file by its path; the project root holds docgen (and canary, when it is not
# installed), so it goes on the path the way `python -m mkdocs` from the root would put it.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from docgen.parts import expand


def on_page_markdown(markdown: str, page: Any, **kwargs: Any) -> str:
    return expand(markdown, page.file.src_uri)
