"""Reading the downstream: which of its files scan reads, and what each does with upstream objects.

- `package.py`: the files scanned in two passes (what goes to its own functions, then uses).
- `selection.py`: which files: a repository's own code, not its tests, scripts or examples.
- `requirements.py`: the release range the downstream declares for an upstream.
- `file_scans.py`: each file's passes remembered in the cache, so a rescan parses what changed.
- `patterns.py`: the visitor: one pass over a file's AST finding uses of upstream objects.
- `recorder.py`: what the visitor found in a file, each use under the guards it runs under.
- `findings.py`: one observed use of an upstream object, with where it was seen.
- `imports.py`: which upstream object a downstream name or dotted expression denotes.
- `guards.py`: what the downstream guards: try/except ImportError, hasattr, version comparisons.
- `absence.py`: a guarded import's tolerance carried to the later uses of its name.
- `stale.py`: a patch only under `if hasattr(X, "n")` is stale, not tolerant.
- `callsites.py`: upstream objects the package passes to its own functions.
- `installers.py`: the package's helpers that install a replacement over an upstream attribute.
- `source_helpers.py`: the package's functions that return the source of what they are passed.
- `folders.py`: classes a function finds by listing an upstream package's folder.
- `namespaces.py`: upstream source compiled in an upstream module's namespace.
- `node_values.py`: what single AST nodes say by themselves (constants, tables, arguments).
- `text_flow.py`: which values an expression holds: strings, rows, patterns, upstream source.
- `text_calls.py`: calls that look for a text in an upstream source (replace, find, re.search).
- `spelled.py`: the strings an expression spells out of literals (names built at run time).
- `spread.py`: the keywords a dict gathers before a call spreads it.
- `subclasses.py`: what a class derived from an upstream class relies on in its base.
- `self_attributes.py`: attributes the downstream's objects hold an upstream class in.
- `compiled.py`: regexes compiled once and applied to upstream source later.
- `reaching.py`: the defs of a name that reach a statement, branch by branch.
- `rewriters.py`: registries of source rewriters, keyed by upstream names.
- `call_shapes.py`: the shape of a call (positionals, keywords) proposed as a `call:` check.
"""
