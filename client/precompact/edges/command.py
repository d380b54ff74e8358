"""The `precompact` command. `precompact hook`, which Claude Code runs at every compaction and
session start, goes straight to the hook handler: click's imports alone are about a third of the
hook's start-up. Everything else is the click CLI (`cli.py`)."""

from __future__ import annotations

import sys


def main() -> None:
    if sys.argv[1:] == ["hook"]:
        from precompact.edges import hook

        hook.run()
        return
    from precompact.edges.cli import main as cli

    cli()
