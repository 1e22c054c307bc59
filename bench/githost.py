"""A loopback GitHub backed by real git repositories: the REST API canary's GitHub source and
history read (`commits/REF`, `compare/BASE...HEAD`, `commits/SHA/pulls`, `tarball/REF`) and
raw content (`OWNER/REPO/REF/PATH`), every answer read out of the repository with git.

The tests name upstream commits on a small repository built for them; `python -m bench.lead`
replays upstream `main` from a mirror (`branches` moves a branch to the commit it pointed at
on a given day). It counts the API requests it answers (a 304 apart: GitHub does not count
those against the hourly limit) and can run out like GitHub does (`limit`): 403, with
`x-ratelimit-remaining: 0` and the reset time.
"""

from __future__ import annotations

import json
import re
import subprocess
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

_PULL = re.compile(r"\s*\(#(\d+)\)\s*$")


class GitHost:
    """Serves `repos` ({"owner/name": git dir}) on 127.0.0.1: the API under /api, raw
    content under /raw."""

    def __init__(self, repos: dict[str, Path]) -> None:
        self.repos = {name: Path(path) for name, path in repos.items()}
        #: (repo, branch) -> the commit the branch points at (default: the repository's own)
        self.branches: dict[tuple[str, str], str] = {}
        #: API requests answered (not counting 304s), by kind, and 304s
        self.api = Counter[str]()
        self.not_modified = 0
        self.raw = 0
        #: API requests answered before the limit is hit (None: no limit)
        self.limit: int | None = None
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def api_url(self) -> str:
        return f"{self.url}/api"

    @property
    def raw_url(self) -> str:
        return f"{self.url}/raw"

    def __enter__(self) -> GitHost:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def git(self, repo: str, *args: str) -> bytes | None:
        """git's output in `repo`'s directory; None when git fails (an unknown ref, a path
        missing at that ref)."""
        done = subprocess.run(
            ["git", f"--git-dir={self.repos[repo]}", *args], capture_output=True, check=False
        )
        return done.stdout if done.returncode == 0 else None

    def commit(self, repo: str, ref: str) -> str | None:
        """The commit `ref` names: a moved branch where `branches` says so."""
        ref = self.branches.get((repo, ref), ref)
        out = self.git(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
        return out.decode().strip() if out else None

    def counted(self, kind: str) -> bool:
        """Count one API request; False when the limit is spent (the request is refused)."""
        with self._lock:
            if self.limit is not None and sum(self.api.values()) >= self.limit:
                return False
            self.api[kind] += 1
            return True


def _split(path: str, parts: int) -> list[str] | None:
    pieces = path.split("/", parts - 1)
    return pieces if len(pieces) == parts else None


def _handler(host: GitHost) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            url = urlsplit(self.path)
            path = unquote(url.path)
            if path.startswith("/raw/"):
                self._raw(path.removeprefix("/raw/"))
            elif path.startswith("/api/repos/"):
                self._api(path.removeprefix("/api/repos/"), parse_qs(url.query))
            else:
                self._send(404, b"not found")

        def _send(
            self,
            status: int,
            body: bytes,
            content_type: str = "text/plain",
            headers: dict[str, str] | None = None,
        ) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

        def _json(self, data: object) -> None:
            self._send(200, json.dumps(data).encode(), "application/json")

        def _raw(self, rest: str) -> None:
            pieces = _split(rest, 4)
            if pieces is None or f"{pieces[0]}/{pieces[1]}" not in host.repos:
                return self._send(404, b"404: Not Found")
            repo, ref, path = f"{pieces[0]}/{pieces[1]}", pieces[2], pieces[3]
            host.raw += 1
            sha = host.commit(repo, ref)
            blob = host.git(repo, "rev-parse", f"{sha}:{path}") if sha else None
            if blob is None:
                return self._send(404, b"404: Not Found")
            etag = f'"{blob.decode().strip()}"'
            if self.headers.get("If-None-Match") == etag:
                return self._send(304, b"", headers={"ETag": etag})
            body = host.git(repo, "cat-file", "blob", blob.decode().strip()) or b""
            self._send(200, body, headers={"ETag": etag})

        def _api(self, rest: str, query: dict[str, list[str]]) -> None:
            pieces = _split(rest, 4)
            if pieces is None or f"{pieces[0]}/{pieces[1]}" not in host.repos:
                return self._send(404, b'{"message": "Not Found"}', "application/json")
            repo, kind, tail = f"{pieces[0]}/{pieces[1]}", pieces[2], pieces[3]
            if kind == "commits" and tail.endswith("/pulls"):
                kind = "pulls"
            if not host.counted(kind):
                reset = str(int(time.time()) + 3600)
                headers = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": reset}
                body = b'{"message": "API rate limit exceeded"}'
                return self._send(403, body, "application/json", headers)
            if kind == "commits":
                return self._ref(repo, tail)
            if kind == "compare":
                return self._compare(repo, tail, query)
            if kind == "pulls":
                return self._pulls(repo, tail.removesuffix("/pulls"))
            if kind == "tarball":
                return self._tarball(repo, tail)
            self._send(404, b'{"message": "Not Found"}', "application/json")

        def _ref(self, repo: str, ref: str) -> None:
            sha = host.commit(repo, ref)
            if sha is None:
                return self._send(404, b'{"message": "No commit found"}', "application/json")
            etag = f'"{sha}"'
            if self.headers.get("If-None-Match") == etag:
                with host._lock:  # answered, but GitHub does not count it: neither do we
                    host.api["commits"] -= 1
                    host.not_modified += 1
                return self._send(304, b"", headers={"ETag": etag})
            self._send(200, sha.encode(), headers={"ETag": etag})

        def _compare(self, repo: str, spec: str, query: dict[str, list[str]]) -> None:
            base, _, head = spec.partition("...")
            old, new = host.commit(repo, base), host.commit(repo, head)
            if old is None or new is None:
                return self._send(404, b'{"message": "Not Found"}', "application/json")
            log = host.git(repo, "log", "--reverse", "--format=%H%x00%cI%x00%s", f"{old}..{new}")
            lines = [line.split("\0") for line in (log or b"").decode().splitlines()]
            per_page = int(query.get("per_page", ["250"])[0])
            page = int(query.get("page", ["1"])[0])
            chosen = lines[(page - 1) * per_page : page * per_page]
            commits = [
                {"sha": sha, "commit": {"message": title, "committer": {"date": date}}}
                for sha, date, title in chosen
            ]
            self._json({"total_commits": len(lines), "commits": commits})

        def _pulls(self, repo: str, sha: str) -> None:
            title = (host.git(repo, "log", "-1", "--format=%s", sha) or b"").decode().strip()
            found = _PULL.search(title)
            if not found:
                return self._json([])
            number = int(found.group(1))
            self._json(
                [
                    {
                        "number": number,
                        "title": _PULL.sub("", title),
                        "html_url": f"https://github.com/{repo}/pull/{number}",
                        "merged_at": "merged",
                    }
                ]
            )

        def _tarball(self, repo: str, ref: str) -> None:
            sha = host.commit(repo, ref)
            owner, name = repo.split("/")
            prefix = f"{owner}-{name}-{(sha or '')[:7]}/"
            body = host.git(repo, "archive", "--format=tar.gz", f"--prefix={prefix}", sha or ref)
            if body is None:
                return self._send(404, b'{"message": "Not Found"}', "application/json")
            self._send(200, body, "application/x-gzip")

    return Handler
