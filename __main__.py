"""``python -m tvmlite``: the command-line interface."""
from tvmlite.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
