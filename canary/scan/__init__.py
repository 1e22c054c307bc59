"""`canary scan`: read a downstream codebase statically and propose the matrix checks it needs.

A scan runs in phases, each a sub-package; a later phase uses the earlier ones:

- `downstream/`: reading the downstream: which files, and every use each makes of an upstream
  object (imports, patches, calls, source rewrites) under the guards it runs under.
- `upstream/`: reading the upstream: the releases in the client's range, read as checks read
  them, and where on them each used name is defined (placement).
- `proposing/`: proposing: subjects, check ids, gates, judging on the range's ends, bisection.
- `writing/`: writing: the matrix YAML, new files, merging into existing matrices, notes.
- `phases.py`: scan(), the phases in order (the front end is canary/cli/scan.py).
"""
