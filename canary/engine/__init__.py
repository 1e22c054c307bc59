"""Judging: every check of a matrix on every version, statically.

- `outcomes`: a check's outcome on one version (`Result`, `Status`) and the run's report;
- `contracts`: one contract against one version's modules (`Verdict`), with
  `bounded_regex` for `matches` patterns that cannot hang a run;
- `loader`: one version's modules, each read and indexed once;
- `judge`: gates, contracts, `broken` and severity for one version; `runner`: every version of
  every matrix; `remembered`: verdicts kept per release file; `hints`: hints across versions.
- `advice.py`: what the last release that had a gone name said of it (`canary explain`).
"""
