"""What every engine test assumes of its environment."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _not_under_github_actions(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tests expect canary's local defaults even when CI runs them (GitHub Actions sets
    GITHUB_ACTIONS=true, which switches the default report format to annotations)."""
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
