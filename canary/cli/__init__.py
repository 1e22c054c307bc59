"""The `canary` command: `main` parses the command line and runs one command."""
