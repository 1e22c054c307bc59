"""canary: static cross-version checks of the upstream contracts that monkey-patches depend on."""

__version__ = "0.1.0"
