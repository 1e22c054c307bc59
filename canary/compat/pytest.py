"""pytest's private parts the plugin uses: each has no public equivalent (see each function)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest


def node_relpath(session: pytest.Session, path: Path) -> str:
    """`path` as pytest's reports name it (relative to the rootdir): what pytest computes for
    every item's location, asked once per matrix file instead."""
    return session._node_location_to_relpath(path)


def setup_stack(session: pytest.Session) -> list[pytest.Item] | None:
    """The nodes whose setup is still held (what teardown would finish), or None for a pytest
    whose setup state this module does not know."""
    held = getattr(getattr(session, "_setupstate", None), "stack", None)
    return None if held is None else list(held)


def phase_report(
    nodeid: str,
    location: tuple[str, int | None, str],
    keywords: dict[str, Any],
    outcome: str,
    longrepr: object,
    when: str,
    **extra: str,
) -> pytest.TestReport:
    """The report pytest's runner makes for one phase of an item, taking no time and with no
    captured sections (TestReport's constructor is public, its arguments are not documented)."""
    now = time.time()
    return pytest.TestReport(
        nodeid=nodeid,
        location=location,
        keywords=keywords,
        outcome=outcome,  # type: ignore[arg-type]
        longrepr=longrepr,  # type: ignore[arg-type]
        when=when,  # type: ignore[arg-type]
        sections=(),
        duration=0,
        start=now,
        stop=now,
        **extra,  # type: ignore[arg-type]
    )


class SetupErrorText(pytest.Item):
    """An item whose setup errors may be shown as plain text: pytest renders an error in
    setup through the private `_repr_failure_py`, not `repr_failure`. A subclass's
    `setup_error_text` returns the text, or None for pytest's own rendering."""

    def setup_error_text(self, excinfo: pytest.ExceptionInfo[BaseException]) -> str | None:
        return None

    def _repr_failure_py(
        self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None
    ) -> Any:
        text = self.setup_error_text(excinfo)
        return text if text is not None else super()._repr_failure_py(excinfo, style=style)
