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


# What a compacted session is still to be given (ops/addendum.py writes them in logs/ under
# PENDING_DIR): the addendum ready for its next prompt or tool call (or being given: a process
# killed while giving it leaves it so, for the next), a compaction whose summary has not been
# read yet, or the brief its SessionStart could not give (its savepoint was still queued).
# UserPromptSubmit and PostToolUse fire on every prompt and tool call: without one of these
# files they are answered here, with four stats.
PENDING_DIR = "precompact-pending"
READY_SUFFIX = ".json"
DELIVERING_SUFFIX = ".delivering"
AWAITING_SUFFIX = ".awaiting"
OWED_SUFFIX = ".brief"
MAX_SESSION_ID = 128


def pending_name(session_id: object) -> str | None:
    """The file name stem of `session_id`'s pending files; None for an id that is not a plain
    name (letters, digits, '-', '_'), which never has any."""
    if not isinstance(session_id, str) or not 0 < len(session_id) <= MAX_SESSION_ID:
        return None
    return session_id if all(c.isascii() and (c.isalnum() or c in "-_") for c in session_id) else None


def something_pending(root: str, session_id: object) -> bool:
    """Whether the session has an addendum to be given, a compaction to read the summary of, or
    a brief owed since its session start."""
    name = pending_name(session_id)
    if name is None:
        return False
    folder = os.path.join(root, "logs", PENDING_DIR, name)
    return any(
        os.path.lexists(folder + suffix) for suffix in (READY_SUFFIX, DELIVERING_SUFFIX, AWAITING_SUFFIX, OWED_SUFFIX)
    )
