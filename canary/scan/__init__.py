"""`canary scan`: read a downstream codebase statically and propose the matrix checks it needs."""

from canary.scan.command import scan_main

__all__ = ["scan_main"]
