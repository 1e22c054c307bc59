"""canary: static cross-version checks of the upstream contracts that monkey-patches depend on."""

from canary.version import __version__

__all__ = ["__version__"]
