"""The `canary` command: `main` parses the command line and runs one command.

`main` (the parser and the dispatch) lists every command in `COMMANDS` and imports only the
one that runs: `check`, `versions`, `lock`, `cache`, `report`, `scan`, `init`, `validate` and
`action`, one module each, with `add_arguments` and `run`; `help` holds what every command's
help shares.
"""
