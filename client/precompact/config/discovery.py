"""Where a project's `.precompact.toml` is, found with `os` alone: the hook's entry asks it first,
on every event of every agent, and answers an event outside a precompact project without
importing anything else (settings.discover is this walk, for everything else)."""

from __future__ import annotations

import os

CONFIG_NAME = ".precompact.toml"


def discover(start: str) -> tuple[str, str | None] | None:
    """The directory holding the configuration and the git work tree it belongs to (None outside
    one), for `start` resolved; None when there is no configuration. The search stops at the work
    tree's root: a `.precompact.toml` in a parent directory (a shared one, someone else's) never
    applies to a repository."""
    chain = [os.path.realpath(start)]
    while os.path.dirname(chain[-1]) != chain[-1]:
        chain.append(os.path.dirname(chain[-1]))
    worktree = next((d for d in chain if os.path.lexists(os.path.join(d, ".git"))), None)
    for directory in chain:
        if os.path.lexists(os.path.join(directory, CONFIG_NAME)):
            return directory, worktree
        if directory == worktree:
            break
    return None


def missing(start: str) -> str:
    """What to say where `discover(start)` found no configuration."""
    return f"no {CONFIG_NAME} in {os.path.realpath(start)} or its parents; run `precompact init` in your project"
