"""Where an upstream name is defined, following the package's own `from .x import Name` chains.

`from transformers import Trainer` names the package root, which only re-exports Trainer; a
`class`/`function` check must name the module that defines it (transformers.trainer). Given a
folder holding the upstream packages (a site-packages or a checkout), this reads their source
statically, as the checks will, and follows the imports; without one, names stay as imported.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

_MAX_HOPS = 8


def _module_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Statements at module scope, including those under if/try/with (TYPE_CHECKING blocks)."""
    for node in body:
        yield node
        if isinstance(node, ast.If | ast.With):
            yield from _module_level(node.body)
            yield from _module_level(getattr(node, "orelse", []))
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody):
                yield from _module_level(block)
            for handler in node.handlers:
                yield from _module_level(handler.body)


class Reexports:
    """Resolves (module, name) to the module defining name, reading sources under `folder`."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._parsed: dict[str, tuple[ast.Module, bool] | None] = {}

    def _parse(self, module: str) -> tuple[ast.Module, bool] | None:
        """The module's AST and whether it is a package, or None when absent or unreadable."""
        if module not in self._parsed:
            self._parsed[module] = None
            relative = Path(*module.split("."))
            bases = (self.folder, self.folder / "src")
            candidates = [(base / relative / "__init__.py", True) for base in bases]
            candidates += [(base / f"{relative}.py", False) for base in bases]
            found = next(((path, package) for path, package in candidates if path.is_file()), None)
            if found:
                self._parsed[module] = self._read(*found)
        return self._parsed[module]

    @staticmethod
    def _read(path: Path, is_package: bool) -> tuple[ast.Module, bool] | None:
        try:
            return ast.parse(path.read_bytes()), is_package
        except (SyntaxError, ValueError, RecursionError, OSError):
            return None

    def defining(self, module: str, name: str) -> tuple[str, str]:
        """(module, name) where `name` of `module` is defined; the input when unknown."""
        return self._find(module, name, _MAX_HOPS) or (module, name)

    def _find(self, module: str, name: str, hops: int) -> tuple[str, str] | None:
        parsed = self._parse(module) if hops else None
        if parsed is None:
            return None
        tree, is_package = parsed
        statements = list(_module_level(tree.body))
        defs = (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
        if any(isinstance(n, defs) and n.name == name for n in statements):
            return module, name
        origin = self._origin(statements, module, is_package, name)
        if origin is not None:
            return self._find(*origin, hops - 1)
        for star in self._stars(statements, module, is_package):
            found = self._find(star, name, hops - 1)
            if found:
                return found
        return None

    @staticmethod
    def _source(node: ast.ImportFrom, module: str, is_package: bool) -> str:
        """The absolute module an import statement in `module` reads from ("" when unknown)."""
        if not node.level:
            return node.module or ""
        parts = module.split(".") if is_package else module.split(".")[:-1]
        parts = parts[: len(parts) - (node.level - 1)]
        return ".".join([*parts, *([node.module] if node.module else [])])

    def _origin(
        self, statements: list[ast.stmt], module: str, is_package: bool, name: str
    ) -> tuple[str, str] | None:
        """The (module, name) an explicit import at module scope binds `name` from."""
        for node in statements:
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if (alias.asname or alias.name) == name:
                        source = self._source(node, module, is_package)
                        return (source, alias.name) if source else None
        return None

    def _stars(self, statements: list[ast.stmt], module: str, is_package: bool) -> list[str]:
        """Modules whose names `from M import *` copies into `module`."""
        return [
            self._source(node, module, is_package)
            for node in statements
            if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names)
        ]
