"""`canary init`: adopt canary in a downstream repository in one command."""

from canary.init.command import init_main

__all__ = ["init_main"]
