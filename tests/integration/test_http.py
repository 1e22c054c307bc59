"""The HTTP client against a loopback server: retries, Retry-After, truncation, tokens."""

from __future__ import annotations

import os
import shutil
import ssl
import threading
import time

import pytest
from servers import FAST, loopback_certificate, serving

from canary import __version__
from canary.sources.http import Http, RetryPolicy
from canary.sources.stats import Stats
from canary.sources.tree import SourceError

BODY = b"payload " * 1000


@pytest.fixture
def server(server):
    """The shared file server, serving BODY at /f."""
    server.add("/f", BODY)
    return server


def client(policy: RetryPolicy = FAST, **options) -> Http:
    return Http(Stats(), policy, **options)


@pytest.mark.parametrize("fault", ["reset", "503", "500", "502", "truncate", "429:0"])
def test_transient_faults_are_retried_to_the_right_body(server, fault):
    http = client()
    server.fault("/f", fault)
    reply = http.get(server.url + "/f")
    assert (reply.status, reply.content) == (200, BODY)
    assert http.stats.requests == 2
    assert http.stats.bytes_downloaded >= len(BODY)


def test_retry_after_is_honored(server):
    server.fault("/f", "429:1")
    started = time.monotonic()
    assert client().get(server.url + "/f").content == BODY
    assert time.monotonic() - started >= 0.9


def test_retry_after_is_bounded(server):
    server.fault("/f", "429:3600")
    started = time.monotonic()
    bounded = RetryPolicy(attempts=2, backoff=0.001, retry_after_cap=0.2)
    assert client(bounded).get(server.url + "/f").content == BODY
    assert time.monotonic() - started < 5


def test_persistent_failure_names_url_and_cause(server):
    server.fault("/f", *["503"] * 5)
    with pytest.raises(SourceError) as caught:
        client().get(server.url + "/f")
    message = str(caught.value)
    assert server.url + "/f" in message and "HTTP 503" in message and "4 attempts" in message


def test_repeated_truncation_is_an_error_not_a_short_body(server):
    server.fault("/f", *["truncate"] * 5)
    with pytest.raises(SourceError, match="after 4 attempts"):
        client().get(server.url + "/f")


def test_connection_refused_is_an_error(server):
    url = server.url + "/f"
    server.stop()
    with pytest.raises(SourceError, match=r"ConnectionError.*after 4 attempts"):
        client().get(url)


def test_not_found_is_returned_when_allowed_and_an_error_otherwise(server):
    http = client()
    assert http.get(server.url + "/missing").status == 404
    with pytest.raises(SourceError, match="HTTP 404"):
        http.get(server.url + "/missing", allow=())
    assert http.stats.requests == 2  # a 404 is not retried


def test_a_body_over_the_limit_is_refused(server):
    with pytest.raises(SourceError, match="exceeds the 100 byte limit"):
        client().get(server.url + "/f", max_bytes=100)


def test_user_agent_names_canary_and_its_version(server):
    client().get(server.url + "/f")
    assert server.log[-1].headers["User-Agent"] == f"canary/{__version__}"


def test_token_goes_on_github_requests_to_github_origins_only_and_never_into_messages():
    with serving() as github, serving() as other:
        github.add("/f", BODY)
        other.add("/f", BODY)
        http = client(token="sekrit-token", token_origins=[github.url + "/api"])
        http.get(github.url + "/f", github=True)
        http.get(other.url + "/f", github=True)
        assert github.log[-1].headers["Authorization"] == "Bearer sekrit-token"
        assert "Authorization" not in other.log[-1].headers
        http.get(github.url + "/f")  # a file URL from the index, even on a GitHub host
        assert "Authorization" not in github.log[-1].headers
        github.fault("/f", *["503"] * 5)
        with pytest.raises(SourceError) as caught:
            http.get(github.url + "/f", github=True)
        assert "sekrit" not in str(caught.value)


def test_a_url_whose_host_depends_on_the_parser_is_refused_and_gets_no_token():
    """`http://evil\\@github-host/x.whl` is the GitHub host to urllib.parse but `evil` to the
    connection: the origin check must not pass it, whoever built the request."""
    with serving() as github, serving() as evil:
        github.add("/x.whl", BODY)
        evil.add("/%5C@" + github.url.split("//")[1] + "/x.whl", BODY)
        http = client(token="sekrit-token", token_origins=[github.url])
        tricky = evil.url + "\\@" + github.url.split("//")[1] + "/x.whl"
        for github_request in (False, True):
            with pytest.raises(SourceError, match="ambiguous URL"):
                http.get(tricky, github=github_request)
        assert evil.log == []


def test_the_token_does_not_follow_a_redirect_to_another_host():
    with serving() as github, serving() as elsewhere:
        elsewhere.add("/file", BODY)
        github.add("/go", b"", redirect=elsewhere.url + "/file")
        http = client(token="sekrit-token", token_origins=[github.url])
        assert http.get(github.url + "/go", github=True).content == BODY
        assert github.log[-1].headers["Authorization"] == "Bearer sekrit-token"
        assert "Authorization" not in elsewhere.log[-1].headers


def test_redirects_are_bounded(server):
    server.add("/loop", b"", redirect=server.url + "/loop")
    with pytest.raises(SourceError, match="more than 5 redirects"):
        client().get(server.url + "/loop")


def test_a_server_dripping_bytes_is_cut_at_the_total_deadline(server):
    """Each byte comes well within the read timeout, so only a total deadline ends it."""
    server.add("/drip", BODY, drip=0.05)
    policy = RetryPolicy(attempts=3, backoff=0.001, read_timeout=5.0, deadline=0.5)
    with pytest.raises(SourceError, match=r"no complete answer within 0.5 s"):
        client(policy).get(server.url + "/drip")
    assert len(server.requests_to("/drip")) == 1  # no retry past the deadline


def test_a_server_dripping_its_headers_is_cut_at_the_total_deadline(server):
    server.add("/drip-head", BODY, drip=0.05, drip_headers=True)
    policy = RetryPolicy(attempts=2, backoff=0.001, read_timeout=5.0, deadline=0.5)
    with pytest.raises(SourceError, match=r"within 0.5 s"):
        client(policy).get(server.url + "/drip-head")


def test_a_lone_surrogate_in_a_url_is_an_error_not_a_crash(server):
    with pytest.raises(SourceError, match="not a valid URL"):
        client().get(server.url + "/\udc80.whl")


def test_credentials_in_urls_are_not_printed(server):
    server.fault("/f", *["503"] * 5)
    url = server.url.replace("http://", "http://user:hunter2@") + "/f"
    with pytest.raises(SourceError) as caught:
        client().get(url)
    assert "hunter2" not in str(caught.value) and "/f" in str(caught.value)


def test_github_rate_limit_waits_for_a_near_reset(server):
    http = client(token="t", token_origins=[server.url])
    server.fault("/f", "ratelimit:1")
    started = time.monotonic()
    assert http.get(server.url + "/f", github=True).content == BODY
    assert time.monotonic() - started >= 0.4


def test_github_rate_limit_with_a_far_reset_is_an_error_saying_so(server):
    http = client(token="t", token_origins=[server.url])
    server.fault("/f", "ratelimit:3600")
    started = time.monotonic()
    with pytest.raises(
        SourceError, match=r"GitHub rate limit exhausted; it resets in \d+ s, at \d\d:\d\d:\d\d UTC"
    ):
        http.get(server.url + "/f", github=True)
    assert time.monotonic() - started < 2


def test_a_403_elsewhere_is_a_plain_error(server):
    server.fault("/f", "403")
    with pytest.raises(SourceError, match="HTTP 403"):
        client().get(server.url + "/f")


def test_backoff_grows_and_stays_within_its_cap():
    policy = RetryPolicy(backoff=1.0, backoff_cap=5.0)
    for retry, ceiling in [(0, 1.0), (1, 2.0), (2, 4.0), (5, 5.0)]:
        delays = [policy.delay(retry) for _ in range(50)]
        assert all(ceiling / 2 <= d <= ceiling for d in delays)
        assert len(set(delays)) > 1  # jittered


def test_an_unreachable_host_fails_fast_for_the_rest_of_the_run(server):
    """A whole branch read from an unreachable GitHub must not cost a retry budget per file;
    a host that answered (even with errors) is never written off."""
    http = client()
    refused = server.url + "/"
    server.stop()
    with pytest.raises(SourceError, match="after"):
        http.get(refused + "a.py")
    attempts = http.stats.as_dict()["requests"]
    with pytest.raises(SourceError, match="unreachable"):
        http.get(refused + "b.py")
    assert http.stats.as_dict()["requests"] == attempts


def test_proxies_and_no_proxy_come_from_the_environment(server, monkeypatch):
    """Read once per origin rather than per request, as requests would read them."""
    with serving() as proxy:
        proxy.add("http://origin.invalid/f", b"through the proxy")
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")
        http = client()
        for _ in range(2):
            assert http.get("http://origin.invalid/f").content == b"through the proxy"
            assert http.get(server.url + "/f").content == BODY  # NO_PROXY: asked directly
        assert len(proxy.requests_to("http://origin.invalid/f")) == 2
        assert len(server.requests_to("/f")) == 2


@pytest.fixture
def certificates(tmp_path):
    """Two loopback server certificates, each in its own folder."""
    if shutil.which("openssl") is None:
        why = "needs the openssl command for a loopback certificate: apt-get install openssl"
        if os.environ.get("CANARY_REQUIRE_OPENSSL") == "1":  # set by .ci/run
            pytest.fail(f"CANARY_REQUIRE_OPENSSL=1 and {why}")
        pytest.skip(why)
    folders = [tmp_path / "a", tmp_path / "b"]
    for folder in folders:
        folder.mkdir()
    return [loopback_certificate(folder) for folder in folders]


def test_tls_connections_share_one_context_and_still_verify(certificates, monkeypatch):
    """Connections opened at once load the CA bundle once, not once each (about 20 ms of CPU
    per connection), and the shared context still refuses a certificate the bundle lacks."""
    (trusted, bundle), (stranger, _other) = certificates
    loads = []
    load = ssl.SSLContext.load_verify_locations

    def counted(self, *args, **kwargs):
        loads.append(args)
        return load(self, *args, **kwargs)

    monkeypatch.setattr(ssl.SSLContext, "load_verify_locations", counted)
    with serving(trusted) as good, serving(stranger) as bad:
        good.add("/f", BODY, delay=0.3)
        bad.add("/f", BODY)
        http = client(ca_bundle=str(bundle))
        replies = []
        threads = [
            threading.Thread(target=lambda: replies.append(http.get(good.url + "/f")))
            for _ in range(4)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert [r.content for r in replies] == [BODY] * 4
        assert good.most_in_flight >= 3  # as many connections, opened at once
        assert len(loads) == 1
        with pytest.raises(SourceError, match="CERTIFICATE_VERIFY_FAILED"):
            http.get(bad.url + "/f")
        assert http.get(good.url + "/f").content == BODY
