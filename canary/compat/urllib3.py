"""A hook before each request a urllib3 connection pool sends on a connection: urllib3 has no
public one, and `HTTPConnectionPool._make_request(conn, ...)` (urllib3 2.x) is where a pool
hands a request to the connection it chose. And one TLS context shared by the connections an
HTTPS pool makes (`HTTPSConnectionPool._new_conn`, urllib3 2.x)."""

from __future__ import annotations

import threading
from typing import Any


class BeforeRequest:
    """Mixed in before a connection pool class: `before_request(conn)` runs first."""

    def before_request(self, conn: Any) -> None:
        """Called with the connection about to carry a request."""

    def _make_request(self, conn: Any, *args: Any, **kwargs: Any) -> Any:
        self.before_request(conn)
        return super()._make_request(conn, *args, **kwargs)  # type: ignore[misc]


class SharedTlsContext:
    """Mixed in before an HTTPS connection pool class: each new connection gets the one TLS
    context of its CA settings instead of building its own.

    urllib3 makes a context and loads the CA bundle into it for every connection it opens
    (`_new_conn` copies the pool's settings onto the connection; `connect` builds the
    context): about 20 ms of CPU per connection, parsing the same bundle again. The shared
    context is urllib3's own (`create_urllib3_context`: the same minimum version, ciphers and
    hostname check) holding the same certificates, so what is verified does not change. A
    connection with any other TLS setting (a client certificate, pinned versions, a
    fingerprint, its own context) is left as urllib3 makes it."""

    def _new_conn(self) -> Any:
        conn = super()._new_conn()  # type: ignore[misc]
        if _default_tls(conn):
            conn.ssl_context = _tls_context(conn.ca_certs, conn.ca_cert_dir, conn.cert_reqs)
            conn.ca_certs = conn.ca_cert_dir = None  # else loaded into it again on connect
        return conn


_OWN_SETTINGS = (
    "ssl_context",
    "ca_cert_data",
    "cert_file",
    "key_file",
    "ssl_version",
    "ssl_minimum_version",
    "ssl_maximum_version",
    "assert_fingerprint",
)
_contexts: dict[tuple[str | None, str | None, int], Any] = {}
_contexts_lock = threading.Lock()


def _default_tls(conn: Any) -> bool:
    """Whether the connection's TLS is urllib3's default but for its CA settings."""
    return not any(getattr(conn, name, None) for name in _OWN_SETTINGS)


def _tls_context(ca_certs: str | None, ca_cert_dir: str | None, cert_reqs: Any) -> Any:
    """The context for these CA settings, built on first use, as urllib3 would build it."""
    from urllib3.util.ssl_ import create_urllib3_context, resolve_cert_reqs

    required = resolve_cert_reqs(cert_reqs)
    key = (ca_certs, ca_cert_dir, int(required))
    with _contexts_lock:
        context = _contexts.get(key)
        if context is None:
            context = create_urllib3_context(cert_reqs=required)
            if ca_certs or ca_cert_dir:
                context.load_verify_locations(ca_certs, ca_cert_dir)
            else:
                context.load_default_certs()
            _contexts[key] = context
        return context
