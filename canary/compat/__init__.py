"""Other projects' private parts, behind one module per dependency (pytest's own `compat.py`
habit), so a release that moves one breaks one named place, and tests/unit/test_compat.py
pins each use against the versions pyproject.toml allows.

- `pytest.py`: a session's relative node paths and setup stack, the report an item's own
  protocol makes, setup errors rendered without a traceback;
- `xdist.py`: whether this process is an xdist worker or controller (xdist's public helpers);
- `urllib3.py`: a hook before each request a connection pool sends, one TLS context shared by
  an HTTPS pool's connections;
- `pip.py`: pip's default index URL;
- `malloc.py`: fewer glibc malloc arenas for a run that fetches on many threads.
"""
