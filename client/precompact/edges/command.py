"""The `precompact` command. `precompact hook [--agent NAME]`, which every agent runs at every
compaction, session start and end (Gemini CLI before every model round), goes straight to the
hook handler: click's imports alone are several times a bare interpreter's start-up. Everything
else is the click CLI (`cli.py`), which also answers a `hook` command line not of these forms."""

from __future__ import annotations

import gc
import os
import sys

from precompact.transcript.agent_names import CLAUDE, NAMES

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (a few ms)
if TYPE_CHECKING:
    from typing import NoReturn


def main() -> None:
    agent = hook_agent(sys.argv[1:])
    if agent is not None:
        # A hook process lives for one event. The cycle collector finds no garbage in it (348
        # objects in a whole PreCompact of 10 MB, docs/performance.md) but walks the library's
        # objects as it is imported, and the interpreter's teardown frees, module by module, what
        # the kernel frees at exit: together about an eighth of a brief's CPU.
        gc.disable()
        from precompact.edges import hook

        hook.run(agent)
        _exit_answered()
    from precompact.edges.cli import main as cli

    cli()


def _exit_answered() -> NoReturn:
    """Ends a hook process whose answer is written, with the hook's status 0: what it wrote to
    files is closed already (no file of its own stays open past its `with`); its streams are
    flushed here, and one that can no longer be (the agent closed it) is left as it is."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(0)


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
