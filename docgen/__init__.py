"""The documentation's generated parts: reference pages written from the code at build time, so
they cannot drift from it (mkdocs.yml runs `hooks`; tests/unit/test_docgen.py keeps them whole).

- `hooks.py`: the MkDocs hook; a page's `<!-- generated: NAME -->` line becomes that part;
- `parts.py`: every part by name, and `expand`, which replaces the markers of a page;
- `commands.py`: every command, argument and option, from canary's argument parser;
- `keys.py`: every key of a matrix, a check and `[tool.canary]`, from the keys canary.matrix
  accepts, with what `keys.yaml` says of each;
- `jsonfields.py`: every field of `--format json`, from the JSON canary writes, with what
  `json_fields.yaml` says of each;
- `environment.py`: the environment variables canary reads and the exit statuses (`ExitCode`);
- `architecture.py`: the packages by layer, from the layer contract and their docstrings.
"""
