"""The static model of an upstream's source, one module per concern (as griffe's agents are):

- `model`: the records an index holds; `lines`: lines as `ast` counts them;
- `indexer`: one pass over a module's AST; `parameters`: signatures and renaming decorators;
- `cache`: indexes keyed by content.

Upstream code is untrusted input: it is parsed with `ast`, never imported.
"""

from canary.analysis.cache import ModuleCache
from canary.analysis.indexer import decode, index_module
from canary.analysis.model import (
    MAX_SOURCE_BYTES,
    Binding,
    ClassInfo,
    FunctionInfo,
    LazyExports,
    ModuleInfo,
    Param,
    ParseError,
    Rename,
    Span,
)

__all__ = [
    "MAX_SOURCE_BYTES",
    "Binding",
    "ClassInfo",
    "FunctionInfo",
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
