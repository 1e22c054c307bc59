"""What a maintainer writes: matrices, their locks and the versions they name.

- `model`: the typed checks a matrix holds, and `load_matrix` (with `yamlmarks`, which keeps
  every key's line so an error names the line to edit); `files`: which matrix files a command
  names (paths, folders, bare names);
- `lock`: the committed version list beside a matrix; `versions`: resolving, locking and
  selecting the versions a run checks; `targets`: one version to check;
- `validate`: the offline well-formedness check made for commit hooks.
"""
