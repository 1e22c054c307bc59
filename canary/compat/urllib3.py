"""A hook before each request a urllib3 connection pool sends on a connection: urllib3 has no
public one, and `HTTPConnectionPool._make_request(conn, ...)` (urllib3 2.x) is where a pool
hands a request to the connection it chose."""

from __future__ import annotations

from typing import Any


class BeforeRequest:
    """Mixed in before a connection pool class: `before_request(conn)` runs first."""

    def before_request(self, conn: Any) -> None:
        """Called with the connection about to carry a request."""

    def _make_request(self, conn: Any, *args: Any, **kwargs: Any) -> Any:
        self.before_request(conn)
        return super()._make_request(conn, *args, **kwargs)  # type: ignore[misc]
