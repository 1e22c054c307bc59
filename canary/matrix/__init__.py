"""What a maintainer writes: matrices, their locks and the versions they name.

- `model.py`: the typed checks a matrix holds, and `load_matrix`;
- `yamlmarks.py`: YAML loading that keeps every key's line, so an error names the line to edit;
- `ignore.py`: a matrix's `ignore:` list, the proposals its maintainer declined;
- `files.py`: which matrix files a command names (paths, folders, bare names);
- `config.py`: the `[tool.canary]` table of a project's pyproject.toml;
- `lock.py`: the committed version list beside a matrix;
- `versions.py`: resolving, locking and selecting the versions a run checks;
- `targets.py`: one version to check, a release or a branch;
- `keywords.py`: `canary check -k EXPR`, choosing check x versions as pytest's `-k` does;
- `validate.py`: the offline well-formedness check made for commit hooks.
"""
