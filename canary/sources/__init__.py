"""Where upstream files come from: a local folder, a wheel on the package index, or GitHub.

- `tree.py`: the one interface every source implements: the files of one upstream version;
- `local.py`: a local checkout, unpacked wheel or site-packages;
- `index.py`: the package index's simple API (JSON, and HTML): which files a release has;
- `index_file.py`: a release file as the index lists it and a lock records it;
- `wheel.py`: one release file on the package index: a wheel, or an sdist when there is none;
- `remotezip.py`: a zip read by ranges: its central directory, then the members asked for;
- `zipformat.py`: the zip format's records, parsed and checked;
- `ranges.py`: byte ranges of one remote file, one whole download when ranges fail;
- `tarball.py`: sdists and GitHub tarballs, streamed, sources kept;
- `github.py`: branches and tags from GitHub's raw files and API;
- `history.py`: a GitHub repository's history through its REST API (refs, commits);
- `repository.py`: where a release says its source lives (the GitHub repository it names);
- `http.py`: the HTTP client: retries, backoff, proxies, credentials;
- `deadline.py`: each request's total time, redirects and retries included;
- `limits.py`: size bounds that keep untrusted archives from exhausting memory or bandwidth;
- `redact.py`: credentials kept out of what is written;
- `daemons.py`: a pool of daemon threads, so that Ctrl-C ends a run at once;
- `context.py`: what a run shares to fetch: the HTTP session, cache, stats and index client.
"""
