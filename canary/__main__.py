"""`python -m canary`: the same command as `canary`."""

from canary.cli.main import main

if __name__ == "__main__":
    raise SystemExit(main())
