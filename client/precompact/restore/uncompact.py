"""`precompact resurrect --uncompact`: a verified savepoint's pre-compaction conversation
written back as a new Claude Code session, which `claude --resume <id>` reopens whole.

Claude Code 2.1.332 keeps a session as `~/.claude/projects/<folder>/<session id>.jsonl`, the
folder being the directory it ran in with every character other than a letter or digit turned
into `-` (observed with the real CLI: /tmp/x/project -> -tmp-x-project). The new session gets a
new id, so nothing of the original is overwritten; its entries are the snapshot's (redacted
where the snapshot is) with the new id as their sessionId.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from pathlib import Path

import orjson

from precompact.recall import fulltext as recall
from precompact.restore.resurrect import ResurrectError, Resurrection
from precompact.transcript.claude_code import project_folder

# Claude Code shortens longer folder names in a way this does not reproduce.
FOLDER_NAME_LIMIT = 200


@dataclass(frozen=True)
class Uncompacted:
    session_id: str
    path: Path
    entries: int
    cwd: str

    @property
    def command(self) -> str:
        return f"claude --resume {self.session_id}"


def uncompact(found: Resurrection, home: Path | None = None) -> Uncompacted:
    """Writes the savepoint `found` as a new session; refuses one that is not verified."""
    s = found.savepoint
    if not found.verified:
        state = (
            "failed verification"
            if not found.intact
            else "is not verified from a root (this machine's recorded hash or the chain)"
        )
        raise ResurrectError(
            f"savepoint {s.sequence} of {found.instance} {state}; nothing was written. `precompact resurrect --format report` shows the checks"
        )
    cwd = (found.document.get("session") or {}).get("cwd")
    if not isinstance(cwd, str) or not cwd.startswith("/"):
        raise ResurrectError(
            f"savepoint {s.sequence} does not say which directory its session ran in; nothing was written"
        )
    folder = project_folder(cwd)
    if len(folder) > FOLDER_NAME_LIMIT:
        raise ResurrectError(
            f"the session ran in {cwd}, whose Claude Code folder name is longer than {FOLDER_NAME_LIMIT} characters; nothing was written"
        )
    try:
        entries = [entry for _, entry in recall.saved_entries(found.contents)]
    except ValueError as e:
        raise ResurrectError(f"savepoint {s.sequence}'s conversation cannot be read: {e}") from None
    if not entries:
        raise ResurrectError(f"savepoint {s.sequence} holds no conversation; nothing was written")
    session_id = str(uuid.uuid4())
    lines = [
        orjson.dumps({**entry, "sessionId": session_id} if isinstance(entry, dict) and "sessionId" in entry else entry)
        + b"\n"
        for entry in entries
    ]
    directory = (home or Path.home()) / ".claude" / "projects" / folder
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = directory / f"{session_id}.jsonl"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.writelines(lines)
    return Uncompacted(session_id, path, len(entries), cwd)
