"""The `canary` command: `main` parses the command line and runs one command.

`main` lists every command in `COMMANDS` and imports only the one that runs, one module each
with `add_arguments` and `run`:

- `main.py`: the parser, the table of commands and the dispatch;
- `help.py`: what every command's help shares (defaults, examples, exit statuses, `--upstream`);
- `interrupt.py`: how a command ends after Ctrl-C: at once, with its child processes;
- `check.py`: `canary check`;
- `versions.py`: `canary versions`;
- `lock.py`: `canary lock`;
- `cache.py`: `canary cache`;
- `report.py`: `canary report`;
- `scan.py`: `canary scan`;
- `init.py`: `canary init`;
- `validate.py`: `canary validate`;
- `explain.py`: `canary explain`;
- `action.py`: `canary action`, one step of the GitHub Action.
"""
