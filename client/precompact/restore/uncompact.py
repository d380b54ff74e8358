"""`precompact resurrect --uncompact`: a verified savepoint's pre-compaction conversation
written back as a new Claude Code session, which `claude --resume <id>` reopens whole.

Claude Code 2.1.332 keeps a session as `~/.claude/projects/<folder>/<session id>.jsonl`, the
folder being the directory it ran in with every character other than a letter or digit turned
into `-` (observed with the real CLI: /tmp/x/project -> -tmp-x-project). The new session gets a
new id, so nothing of the original is overwritten; its entries are the snapshot's (redacted
where the snapshot is) with the new id as their sessionId.

A Codex CLI savepoint (transcript/codex.py keeps each rollout record whole) is written back as a
new rollout, `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<new id>.jsonl`, without its
`compacted` records and the compaction's answers, and its `session_meta` under the new id:
Codex 0.171.0 reopens it with `codex resume <id>` (or `codex exec resume <id>`) and sends the
model the whole history (observed with the real CLI).

A Gemini CLI savepoint is written back as a new chat file,
`~/.gemini/tmp/<the project's folder>/chats/session-<time>-<first 8 of the new id>.jsonl`: its
header under the new id, then every message record, without the compression's snapshot and
acknowledgement; Gemini 0.61.0 reopens it with `gemini --resume <id>` in the session's directory
(the folder is the one ~/.gemini/projects.json gives that directory).
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import orjson

from precompact.recall import fulltext as recall
from precompact.restore.resurrect import ResurrectError, Resurrection
from precompact.transcript.claude_code import project_folder

# Gemini CLI's message records that are neither the user's nor the model's (transcript/gemini.py).
GEMINI_NOTES = ("gemini.info", "gemini.error", "gemini.warning")
# Claude Code shortens longer folder names in a way this does not reproduce.
FOLDER_NAME_LIMIT = 200


@dataclass(frozen=True)
class Uncompacted:
    session_id: str
    path: Path
    entries: int
    cwd: str
    agent: str = "claude"

    @property
    def command(self) -> str:
        if self.agent == "codex":
            return f"codex resume {self.session_id}"
        if self.agent == "gemini":
            return f"gemini --resume {self.session_id}"
        return f"claude --resume {self.session_id}"


def uncompact(found: Resurrection, home: Path | None = None) -> Uncompacted:
    """Writes the savepoint `found` as a new session; refuses one that is not verified."""
    s = found.savepoint
    if not found.verified:
        state = (
            "failed verification"
            if not found.intact
            else "is not verified from a root (this machine's recorded hash, your signing key's signature or the chain)"
        )
        raise ResurrectError(
            f"savepoint {s.sequence} of {found.instance} {state}; nothing was written. `precompact resurrect --format report` shows the checks"
        )
    session = found.document.get("session") or {}
    cwd = session.get("cwd")
    if not isinstance(cwd, str) or not cwd.startswith("/"):
        raise ResurrectError(
            f"savepoint {s.sequence} does not say which directory its session ran in; nothing was written"
        )
    agent = session.get("agent") or "claude"
    if agent == "codex":
        return _codex(found, cwd, home)
    if agent == "gemini":
        return _gemini(found, cwd, home)
    if agent != "claude":
        raise ResurrectError(
            f"savepoint {s.sequence} is a {agent} session, which precompact cannot reopen (docs/agents.md); `precompact show` and `export` read it"
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


def _entries(found: Resurrection) -> list:
    try:
        return [entry for _, entry in recall.saved_entries(found.contents)]
    except ValueError as e:
        raise ResurrectError(f"savepoint {found.savepoint.sequence}'s conversation cannot be read: {e}") from None


def _write_new(path: Path, lines: list[bytes]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.writelines(lines)


def _codex(found: Resurrection, cwd: str, home: Path | None) -> Uncompacted:
    """The savepoint's rollout records as a new Codex thread, uncompacted."""
    s = found.savepoint
    entries = _entries(found)
    thread_id = str(uuid.uuid4())
    lines = []
    for entry in entries:
        record = entry.get("agent_record") if isinstance(entry, dict) else None
        if not isinstance(record, dict) or record.get("type") == "compacted":
            continue
        metadata = record.get("metadata")
        if isinstance(metadata, dict) and metadata.get("compaction_output") is True:
            continue
        payload = record.get("payload")
        if record.get("type") == "session_meta" and isinstance(payload, dict):
            record = {**record, "payload": {**payload, "id": thread_id, "session_id": thread_id}}
        lines.append(orjson.dumps(record) + b"\n")
    if not any(b'"type":"response_item"' in line for line in lines):
        raise ResurrectError(f"savepoint {s.sequence} holds no Codex conversation; nothing was written")
    now = datetime.now(UTC)
    codex_home = Path(os.environ["CODEX_HOME"]) if os.environ.get("CODEX_HOME") else (home or Path.home()) / ".codex"
    path = (
        codex_home
        / "sessions"
        / now.strftime("%Y/%m/%d")
        / f"rollout-{now.strftime('%Y-%m-%dT%H-%M-%S')}-{thread_id}.jsonl"
    )
    _write_new(path, lines)
    return Uncompacted(thread_id, path, len(lines), cwd, "codex")


def _gemini(found: Resurrection, cwd: str, home: Path | None) -> Uncompacted:
    """The savepoint's chat messages as a new Gemini CLI session, uncompacted."""
    s = found.savepoint
    gemini_home = (home or Path.home()) / ".gemini"
    try:
        projects = orjson.loads((gemini_home / "projects.json").read_bytes()).get("projects")
        folder = projects[cwd]
    except (OSError, orjson.JSONDecodeError, AttributeError, KeyError, TypeError):
        folder = None
    if not isinstance(folder, str) or not folder or "/" in folder or folder in (".", ".."):
        raise ResurrectError(
            f"Gemini CLI has no folder for {cwd} in {gemini_home / 'projects.json'}: run gemini there once; nothing was written"
        )
    session_id = str(uuid.uuid4())
    now = datetime.now(UTC)
    header: dict = {"startTime": now.strftime("%Y-%m-%dT%H:%M:%S.000Z"), "kind": "main"}
    messages = []
    for entry in _entries(found):
        if not isinstance(entry, dict) or not isinstance(entry.get("agent_record"), dict):
            continue
        record = entry["agent_record"]
        if entry.get("type") == "gemini.session":
            header = {**record, **header}
        elif entry.get("type") in ("user", "assistant") or entry.get("type") in GEMINI_NOTES:
            # The compression's own messages stay out: the snapshot and Gemini's acknowledgement.
            if entry.get("isCompactSummary") or (entry.get("isMeta") and entry.get("type") == "assistant"):
                continue
            update = record.get("$set")
            inner = update.get("messages") if isinstance(update, dict) else None
            message = inner[0] if isinstance(inner, list) and len(inner) == 1 else record
            if isinstance(message, dict) and isinstance(message.get("id"), str):
                messages.append(message)
    if not messages:
        raise ResurrectError(f"savepoint {s.sequence} holds no Gemini conversation; nothing was written")
    lines = [orjson.dumps({**header, "sessionId": session_id, "lastUpdated": header["startTime"]}) + b"\n"]
    lines += [orjson.dumps(m) + b"\n" for m in messages]
    path = gemini_home / "tmp" / folder / "chats" / f"session-{now.strftime('%Y-%m-%dT%H-%M')}-{session_id[:8]}.jsonl"
    _write_new(path, lines)
    return Uncompacted(session_id, path, len(messages), cwd, "gemini")
