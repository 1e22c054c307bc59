"""canary's version, in a module of its own: the top-level package may be a stranger's folder.

Under an editable install, a repository whose matrices live in `canary/` shadows this package
(the folder is found first, as a namespace package, and its `__init__` never runs), while every
`canary.*` submodule is still found by the install's own finder. So nothing imports a name from
the bare `canary` package.
"""

__version__ = "0.1.0"
