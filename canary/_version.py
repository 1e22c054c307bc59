"""canary's version, in a module of its own so that any layer may read it without importing
the package's public API (canary/__init__.py loads that on first use)."""

__version__ = "0.1.0"
