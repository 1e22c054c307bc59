"""The static model of an upstream's source, one module per concern (as griffe's agents are):

- `model`: the records an index holds; `lines`: lines as `ast` counts them;
- `indexer`: one pass over a module's AST; `parameters`: signatures and renaming decorators;
  `parselock`: the one lock every `ast` parse takes; `reads`: the globals a function reads;
- `outline`: a module's top-level statements from its masked text; `sparse`: indexes built
  name by name from the statements that name it;
- `modules`: indexes keyed by content; `store`: indexes persisted in the cache; `pool`: parse
  worker processes.

Upstream code is untrusted input: it is parsed with `ast`, never imported.
"""

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
