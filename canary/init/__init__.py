"""`canary init`: adopt canary in a downstream repository in one command.

The command lives in `canary.init.command`; this package imports nothing, so the CLI can read
`canary.init.workflows.ACTION_REF` for its help without loading scan and lock at start-up.

- `command.py`: scan the package, write its matrices, their locks and the workflows;
- `workflows.py`: the two workflows init writes: checks on every pull request, and the nightly.
"""
