"""`python -m bench.tally FILE ARGS...`: `canary ARGS...` run in this process, with every request
and byte its sources fetched tallied into FILE (JSON), for the commands that print no `stats`
of their own (`canary init`, `canary lock`).

Every source of a run counts what it fetches in a canary.cache.stats.Stats; a command may make
several (init: the scan's, then each lock's). The class's `add` is wrapped here so that each
count also lands in one total: the bench's own instrument, canary runs unchanged otherwise.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from canary.cache.stats import Stats


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv:
        print("usage: python -m bench.tally FILE ARGS...", file=sys.stderr)
        return 2
    out, args = Path(argv[0]), argv[1:]
    total = Stats()
    add = Stats.add

    def counted(self: Stats, **counts: Any) -> None:
        add(self, **counts)
        add(total, **counts)

    Stats.add = counted  # type: ignore[method-assign]
    from canary.cli.main import main as canary

    try:
        return canary(args)
    finally:
        Stats.add = add  # type: ignore[method-assign]
        out.write_text(json.dumps(total.as_dict()), encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
