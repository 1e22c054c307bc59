"""What the static index knows of one module: the records every check reads.

Plain frozen records, so an index can be persisted (canary.analysis.store) and shipped between
processes (canary.analysis.pool) without the source it came from.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from canary.analysis.lines import Lines
from canary.errors import CanaryError, ExitCode

#: A `del`/`from`/`import` statement at column 0 (with a parenthesised list across lines),
#: found by `findall` after a literal newline (`re` skips from newline to newline)
_IMPORTS = re.compile(r"\n((?:del|from|import)\b[^\n(]*(?:\([^)]*\))?)")
_WORD = re.compile(r"\w+")

#: Largest source file we agree to parse; upstream files are well under 1 MB.
MAX_SOURCE_BYTES = 8 * 1024 * 1024


class ParseError(CanaryError):
    """The file exists but is not Python this interpreter can parse (an `error` outcome)."""

    exit_code = ExitCode.FAILED


class Unfollowed(ParseError):
    """The file parses, but what a check reads is bound to a value computed at run time that
    the static model does not follow (an `error` outcome naming the line, never a guess)."""


@dataclass(frozen=True)
class Span:
    start: int  # first line, decorators included (1-based, as `ast` counts lines)
    end: int  # last line, inclusive


@dataclass(frozen=True)
class Binding:
    """One way a module-level name gets bound."""

    kind: str  # "def", "class", "assign", "import", "del" (unbinds it)
    span: Span
    origin: str | None = None  # for imports: "package.module" or "package.module.name"
    typing_only: bool = False  # under `if TYPE_CHECKING:`: bound for type checkers only


@dataclass(frozen=True)
class Param:
    """One parameter as written: its kind, and its default and annotation as source text."""

    name: str
    kind: str  # "posonly", "normal", "vararg", "kwonly", "kwarg"
    default: str | None = None
    annotation: str | None = None


@dataclass(frozen=True)
class Rename:
    """A keyword a deprecation decorator maps onto another (`@deprecate_kwarg(old, new_name=)`)."""

    old: str
    new: str | None  # None: the old keyword is only warned about, passed on unchanged
    version: str | None = None  # the release the decorator names
    raises: bool = False  # raise_if_greater_or_equal_version=True: refused from `version` on
    exposed: bool = False  # expose_in_signature=True: inspect.signature shows `old` too


@dataclass(frozen=True)
class FunctionInfo:
    name: str
    params: tuple[Param, ...]
    span: Span
    renames: tuple[Rename, ...] = ()
    returns: str | None = None  # the return annotation as source text
    decorators: tuple[str, ...] = ()  # as written, a call by its callee: "staticmethod", "x.setter"

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params)


@dataclass(frozen=True)
class Field:
    """One annotated name of a class body, as a dataclass reads it (`x: int = field(...)`)."""

    name: str
    annotation: str | None
    default: str | None = None  # source text; "<factory>" for a default_factory
    kind: str = "field"  # "field", "classvar", "initvar", "kw_only" (the `_: KW_ONLY` marker)
    init: bool = True  # field(init=False): no parameter of the generated __init__
    kw_only: bool | None = None  # field(kw_only=...); None: the class's (or KW_ONLY's) choice
    line: int = 0
    declared: bool = False  # by a call (`field(...)`, attrs' `attr.ib(...)`), not a plain value
    alias: str | None = None  # attrs' `field(alias=...)`: the parameter's name


@dataclass(frozen=True)
class Generator:
    """What generates a class's `__init__` from its fields: `@dataclass(...)`, NamedTuple, or
    `dataclass(cls, ...)` in a base's `__init_subclass__` (then it applies to subclasses)."""

    how: str  # as said in a detail: "@dataclass", "NamedTuple", "dataclass() in __init_subclass__"
    init: bool = True
    kw_only: bool = False
    decorator: str = ""  # the decorator as written (`attr.s`): its import says whose rules apply
    #: attrs: whose fields are the annotated names (True), only `attr.ib()`s (False), or as
    #: `@define` guesses (None); dataclasses and NamedTuple always take the annotated names.
    auto_attribs: bool | None = True
    attrs: bool = False  # attrs' rules apply (set once the decorator's import says it is attrs')


@dataclass(frozen=True)
class ClassInfo:
    name: str
    bases: tuple[str, ...]
    methods: Mapping[str, list[FunctionInfo]]
    span: Span
    fields: tuple[Field, ...] = ()  # annotated names of the body, in order
    assigned: Mapping[str, int] = field(default_factory=dict)  # class-level names -> line
    slots: tuple[str, ...] = ()  # a literal `__slots__`
    generator: Generator | None = None  # what generates this class's __init__
    subclass_generator: Generator | None = None  # what its __init_subclass__ applies
    #: methods the class body binds to a function defined elsewhere: by an import (`from .utils
    #: import log_metrics`) or a module's name (`forward = _fast`): name -> where it comes from
    #: ("package.module.name"); "" for a value computed at run time that replaced a `def`
    borrowed: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class LazyExports:
    """Names a module serves lazily, by the submodules that define them.

    Two forms: a module that replaces itself by a lazy module
    (`sys.modules[__name__] = _LazyModule(...)`, `replaces`: its own globals are then not
    what an import sees), and a module-level `__getattr__` (PEP 562) that imports on demand."""

    names: dict[str, tuple[str, ...]] = field(default_factory=dict)  # name -> modules
    # (a module's "module:attr" when the name is served from another attribute name)
    folders: tuple[str, ...] = ()  # packages whose submodules export their `__all__`
    extra: tuple[str, ...] = ()  # names given directly (`extra_objects={"__version__": ...}`)
    replaces: bool = True
    complete: bool = True  # False when part of the structure is built in a way not read here
    computed: tuple[str, ...] = ()  # names the module's `__getattr__` returns itself
    unread: int = 0  # the line of a `__getattr__` bound to a value computed at run time
    #: the line of `sys.modules[__name__] = VALUE` whose VALUE is no lazy module read here (a
    #: shim): what an import finds is that value, not the module's own namespace
    shim: int = 0


@dataclass
class ModuleInfo:
    name: str
    path: str
    text: str
    # dicts as the indexer builds them; Decoded when read from the store
    bindings: Mapping[str, list[Binding]] = field(default_factory=dict)
    classes: Mapping[str, list[ClassInfo]] = field(default_factory=dict)
    functions: Mapping[str, list[FunctionInfo]] = field(default_factory=dict)
    star_imports: list[str] = field(default_factory=list)
    #: the line of each of `star_imports` (Python binds a name to the last thing bound to it,
    #: and a star import below a `def` may be that)
    star_lines: list[int] = field(default_factory=list)
    typing_star_imports: list[str] = field(default_factory=list)
    all_names: tuple[str, ...] | None = None  # `__all__` when it is literal, else None
    lazy: LazyExports | None = None
    aliases: dict[str, str] = field(default_factory=dict)  # legacy submodule -> real submodule

    _lines: Lines | None = field(default=None, init=False, repr=False, compare=False)
    _top_words: frozenset[str] | None = field(default=None, init=False, repr=False, compare=False)

    def segment(self, span: Span) -> str:
        # A lazy attribute, not functools.cached_property: on Python 3.11 that holds one lock for
        # every instance, and the run's threads queued on it.
        if self._lines is None:
            self._lines = Lines(self.text)
        return self._lines.segment(span.start, span.end)

    def may_bind_at_top(self, name: str) -> bool:
        """Whether a line at column 0 may bind `name`: one that starts with it (`name = ...`),
        or a `del`, `from` or `import` statement there naming it (parentheses included). A
        superset (a string or a comment may match), found by C-speed searches: the statements'
        words once per module, the name's line starts by `in`."""
        if self.text.startswith(name) or f"\n{name}" in self.text:
            return True
        if self._top_words is None:
            statements = " ".join(_IMPORTS.findall(f"\n{self.text}"))  # a few lines
            self._top_words = frozenset(_WORD.findall(statements))
        return name in self._top_words


@dataclass(frozen=True)
class Exports:
    """What a folder's walk (transformers' define_import_structure) reads of a module: its
    exports and where its star imports lead, without the records; kept by content, so a file
    unchanged since another release costs no index again."""

    name: str
    path: str
    star_imports: tuple[str, ...]
    typing_star_imports: tuple[str, ...]
    all_names: frozenset[str] | None

    @classmethod
    def of(cls, info: ModuleInfo) -> Exports:
        names = None if info.all_names is None else frozenset(info.all_names)
        stars = (tuple(info.star_imports), tuple(info.typing_star_imports))
        return cls(info.name, info.path, *stars, names)


V = TypeVar("V")


class Decoded(Mapping[str, V]):
    """A mapping whose records are built on first use. A check reads a few names of a module
    that holds hundreds, and a few methods of a class: building all of them (or unpickling them
    from a parse worker) cost the main process a third of a cold run. The index store keeps
    each name's records as a JSON text of their own, which the decoder of the whole entry only
    has to skip over (canary.analysis.store); a big class's methods are parsed one by one
    (canary.analysis.lazyclass)."""

    __slots__ = ("_made", "_make", "_raw")

    def __init__(self, raw: dict[str, Any], make: Callable[[str, Any], V]):
        if not isinstance(raw, dict):
            raise TypeError("a stored mapping is not a JSON object")
        self._raw = raw
        self._make = make
        self._made: dict[str, V] = {}

    def __getitem__(self, key: str) -> V:
        made = self._made.get(key)
        if made is None:
            # two threads may build the same name: the records are equal, either may stay
            made = self._made[key] = self._make(key, self._raw[key])
        return made

    def get(self, key: str, default: Any = None) -> Any:
        return self[key] if key in self._raw else default

    def __contains__(self, key: object) -> bool:
        return key in self._raw

    def __iter__(self) -> Iterator[str]:
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)
