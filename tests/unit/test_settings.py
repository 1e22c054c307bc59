"""One settings object per run: read from the environment once, then handed to the runner and
the sources, which never read the environment for it again."""

from __future__ import annotations

from pathlib import Path

import pytest

from canary.action.rest import BACKOFF, GitHub
from canary.engine.runner import Runner
from canary.errors import UsageError
from canary.settings import Settings
from canary.sources.context import SourceContext
from canary.sources.http import RetryPolicy

ENVIRONMENT = {
    "CANARY_OFFLINE": "yes",
    "CANARY_CACHE_DIR": "/somewhere/cache",
    "PIP_INDEX_URL": "http://pip.invalid/simple/",
    "CANARY_GITHUB_RAW_URL": "http://raw.invalid",
    "GH_TOKEN": "gh-token",
    "CURL_CA_BUNDLE": "/somewhere/ca.pem",
    "CANARY_RETRY_BACKOFF": "0.25",
}


def test_the_environment_is_read_into_one_frozen_object():
    settings = Settings.from_environment(ENVIRONMENT, jobs=3)
    assert settings == Settings(
        offline=True,
        cache_dir=Path("/somewhere/cache"),
        jobs=3,
        index_url="http://pip.invalid/simple/",
        github_raw_url="http://raw.invalid",
        github_token="gh-token",
        ca_bundle="/somewhere/ca.pem",
        retry_backoff=0.25,
    )
    assert "gh-token" not in repr(Settings.from_environment(ENVIRONMENT))
    both = {**ENVIRONMENT, "GITHUB_TOKEN": "token", "REQUESTS_CA_BUNDLE": "/requests/ca.pem"}
    assert Settings.from_environment(both).github_token == "token"
    assert Settings.from_environment(both).ca_bundle == "/requests/ca.pem"
    canary_first = {**ENVIRONMENT, "CANARY_INDEX_URL": "http://canary.invalid/simple/"}
    assert Settings.from_environment(canary_first).index_url == "http://canary.invalid/simple/"
    assert Settings.from_environment({}).offline is False
    assert Settings.from_environment({"CANARY_RETRY_BACKOFF": " "}).retry_backoff is None
    assert Settings.from_environment({}, offline=True).offline is True


def test_the_sources_take_the_settings_not_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("CANARY_OFFLINE", "0")
    monkeypatch.setenv("CANARY_CACHE_DIR", str(tmp_path / "from-environment"))
    settings = Settings(
        offline=True, cache_dir=tmp_path / "given", github_api_url="http://a.invalid"
    )
    context = SourceContext(settings)
    assert context.offline and context.cache.offline
    assert context.cache.root == tmp_path / "given"
    assert context.github_urls()[1] == "http://a.invalid"


def test_a_runner_builds_its_sources_from_its_settings(tmp_path):
    settings = Settings(offline=True, cache_dir=tmp_path, jobs=2)
    runner = Runner(settings=settings)
    assert runner.sources is None  # nothing is built before it is needed
    assert runner.context.cache.root == tmp_path and runner.context.offline
    assert runner.modules.store is not None  # the indexes it parses are kept in that cache
    runner.close()


@pytest.mark.parametrize("text", ["soon", "-1", "61", "nan", "inf"])
def test_a_backoff_that_is_no_number_of_seconds_is_a_usage_error(text):
    with pytest.raises(UsageError, match=f"CANARY_RETRY_BACKOFF='{text}': expected seconds"):
        Settings.from_environment({"CANARY_RETRY_BACKOFF": text})


def test_the_backoff_setting_paces_the_sources_and_the_actions_github_calls(tmp_path):
    """Only the first wait changes; the tries stay as many (tests set it to 0 in conftest)."""
    context = SourceContext(Settings(cache_dir=tmp_path, retry_backoff=0.0))
    assert context.http.policy == RetryPolicy(backoff=0.0)
    assert SourceContext(Settings(cache_dir=tmp_path)).http.policy == RetryPolicy()
    assert GitHub("http://a.invalid", "o/r", "", 0.0).retry.backoff == 0.0
    assert GitHub("http://a.invalid", "o/r", "").retry.backoff == BACKOFF
