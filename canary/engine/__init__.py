"""Judging: every check of a matrix on every version, statically.

- `outcomes.py`: a check's outcome on one version (`Result`, `Status`) and the run's report;
- `contracts.py`: one contract against one version's modules (`Verdict`);
- `bounded_regex.py`: `matches` patterns run with bounded work, so a source cannot hang a run;
- `calls.py`: whether a call of a known shape binds, as `inspect.Signature.bind` decides;
- `globalnames.py`: `globals_bound`: a function compiled in another module finds its names;
- `loader.py`: one version's modules, each read and indexed once;
- `judge.py`: gates, contracts, `broken` and severity for one version;
- `runner.py`: every version of every matrix, each version's tree opened once;
- `remembered.py`: verdicts kept per release file, so a warm run opens no release;
- `reuse.py`: verdicts reused across releases by what their judging read;
- `hints.py`: hints that read one check across every version checked;
- `transitions.py`: where a check broke: the last version it held on and the first it failed on;
- `became.py`: what a failing subject became there, and its diff between the two;
- `whereabouts.py`: where a missing name went in a release, searched cheapest first;
- `retold.py`: what was told of a transition, remembered per pair of release files;
- `interrupted.py`: Ctrl-C during a run: one line saying how far it got, exit 130;
- `culprit.py`: the upstream commit that broke a check, bisected between two versions;
- `upcoming.py`: upcoming breaks: red only ahead of the releases (a branch, the pre-release);
- `advice.py`: what the last release that had a gone name said of it (`canary explain`).
"""
