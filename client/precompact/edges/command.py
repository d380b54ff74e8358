"""The `precompact` command. `precompact hook [--agent NAME]`, which every agent runs at every
compaction, session start and end (Gemini CLI before every model round), goes straight to the
hook handler: click's imports alone are several times a bare interpreter's start-up. Everything
else is the click CLI (`cli.py`), which also answers a `hook` command line not of these forms."""

from __future__ import annotations

import sys

from precompact.transcript.agent_names import CLAUDE, NAMES


def main() -> None:
    agent = hook_agent(sys.argv[1:])
    if agent is not None:
        from precompact.edges import hook

        hook.run(agent)
        return
    from precompact.edges.cli import main as cli

    cli()


def hook_agent(args: list[str]) -> str | None:
    """The agent `args` runs the hook for (`hook`, `hook --agent NAME`, `hook --agent=NAME`, as
    `install` writes them), None for any other command line."""
    if args == ["hook"]:
        return CLAUDE
    if len(args) == 3 and args[:2] == ["hook", "--agent"] and args[2] in NAMES:
        return args[2]
    if len(args) == 2 and args[0] == "hook" and args[1].startswith("--agent="):
        name = args[1].removeprefix("--agent=")
        return name if name in NAMES else None
    return None
