"""The static model of an upstream's source, one module per concern (as griffe's agents are):

- `model.py`: the records an index holds;
- `lines.py`: lines as `ast` counts them;
- `indexer.py`: one pass over a module's AST records what it binds and defines;
- `parameters.py`: signatures as written, and the keywords a deprecation decorator renames;
- `parselock.py`: the one lock every `ast` parse of a run takes;
- `reads.py`: the global names a function reads, as Python's scoping decides;
- `exports.py`: what a module exports beyond its plain bindings (`__all__`, lazy modules, aliases);
- `namespace.py`: what `from M import X` finds at run time, across an upstream's modules;
- `bases.py`: bases and the method resolution order, across an upstream's modules;
- `attributes.py`: the attributes a class binds, for `attributes:` checks;
- `classbody.py`: what a class body binds at class level (fields, names, `__slots__`, generators);
- `generated.py`: the `__init__`s Python generates (dataclasses, NamedTuple, attrs);
- `similar.py`: did-you-mean suggestions among the names of a module or a release;
- `budget.py`: what parsing one source may cost (tokens), checked before `ast` runs;
- `skeleton.py`: function bodies blanked before `ast.parse` (strings and comments masked);
- `outline.py`: a module's top-level statements from its masked text, without a parse;
- `sparse.py`: indexes built name by name from the statements that name it;
- `moved.py`: records of statements indexed from line 1, moved to where the statements stand;
- `lazyclass.py`: a class statement indexed with its methods parsed as a check reads them;
- `flight.py`: one maker per key among threads asking for the same index at once;
- `modules.py`: module indexes keyed by content, identical files parsed once;
- `store.py`: module indexes persisted in the cache, keyed by content and code fingerprint;
- `pool.py`: parsing in worker processes (`ast.parse` holds the GIL);
- `declared.py`: the version a branch (or any unversioned tree) declares, read statically;
- `newer.py`: syntax newer than the running Python (PEP 695, PEP 758), read as the Python
  that runs it;
- `standing.py`: what a module-level name is bound to once the module has run (its last
  binding);
- `runbound.py`: names a function binds with `global` when it runs, not on import;
- `compiles.py`: whether a module compiles at all (one that does not cannot be imported).

Upstream code is untrusted input: it is parsed with `ast`, never imported.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from canary.analysis.indexer import decode, index_module
    from canary.analysis.model import (
        MAX_SOURCE_BYTES,
        Binding,
        ClassInfo,
        Field,
        FunctionInfo,
        Generator,
        LazyExports,
        ModuleInfo,
        Param,
        ParseError,
        Rename,
        Span,
    )
    from canary.analysis.modules import ModuleCache

#: the names defined elsewhere than in `model`, by their module; each is loaded on first use,
#: so a caller of one module (load_matrix reads `parameters` alone) loads no indexer, no cache
_ELSEWHERE = {
    "decode": "canary.analysis.indexer",
    "index_module": "canary.analysis.indexer",
    "ModuleCache": "canary.analysis.modules",
}

__all__ = [
    "MAX_SOURCE_BYTES",
    "Binding",
    "ClassInfo",
    "Field",
    "FunctionInfo",
    "Generator",
    "LazyExports",
    "ModuleCache",
    "ModuleInfo",
    "Param",
    "ParseError",
    "Rename",
    "Span",
    "decode",
    "index_module",
]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module 'canary.analysis' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(_ELSEWHERE.get(name, "canary.analysis.model")), name)
