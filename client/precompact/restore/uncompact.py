"""`precompact resurrect --uncompact`: a verified savepoint's pre-compaction conversation
written back as a new Claude Code session, which `claude --resume <id>` reopens whole.

Claude Code 2.1.332 keeps a session as `~/.claude/projects/<folder>/<session id>.jsonl` (under
`$CLAUDE_CONFIG_DIR` when that is set: config/agent_settings.sessions_folder), the
folder being the directory it ran in with every character other than a letter or digit turned
into `-` (observed with the real CLI: /tmp/x/project -> -tmp-x-project). The new session gets a
new id, so nothing of the original is overwritten; its entries are the snapshot's (redacted
where the snapshot is) with the new id as their sessionId, from before the savepoint's compaction
(local/capture.py: a savepoint made after one is cut at its last boundary) and without the
boundary and summary entries of earlier compactions.

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

An OpenCode savepoint (transcript/opencode.py keeps the session's record and each message and
part whole) is written as a file `opencode import` reads (the shape `opencode export` writes:
`{info, messages: [{info, parts}]}`), in precompact's state directory: a new session id and new
message and part ids, each uncompact's own (OpenCode skips ids it already holds, so a second
uncompact of the same savepoint, or of a later one of the same session, would otherwise open
without every message the first one wrote), the history before the savepoint's
compaction without the messages of earlier compactions (the compaction request, the summary,
the synthetic "Continue"). OpenCode 1.18.33 reopens it with `opencode --session <id>` after
`opencode import <file>`, and sends the model the whole history.
"""

from __future__ import annotations

import itertools
import os
import re
import secrets
import shlex
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import orjson

from precompact.boundary import private_file, quoting, session_file
from precompact.config import agent_settings
from precompact.local import capture, savepoint_log
from precompact.recall import fulltext as recall
from precompact.restore.resurrect import ResurrectError, Resurrection
from precompact.transcript.claude_code import TranscriptScan, is_compact_boundary, project_folder
from precompact.transcript.claude_code import entries as transcript_entries

# Gemini CLI's message records that are neither the user's nor the model's (transcript/gemini.py).
GEMINI_NOTES = ("gemini.info", "gemini.error", "gemini.warning")
# Claude Code shortens longer folder names in a way this does not reproduce.
FOLDER_NAME_LIMIT = 200


@dataclass(frozen=True)
class Uncompacted:
    session_id: str
    path: Path
    entries: int
    # The user's and the assistant's turns written, counted as the resurrect report counts them.
    messages: int
    cwd: str
    agent: str = "claude"

    @property
    def command(self) -> str:
        if self.agent == "codex":
            return f"codex resume {self.session_id}"
        if self.agent == "gemini":
            return f"gemini --resume {self.session_id}"
        if self.agent == "opencode":
            return f"opencode import {shlex.quote(str(self.path))} && opencode --session {self.session_id}"
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
    cwd = found.document.cwd
    if cwd is None or not cwd.startswith("/"):
        raise ResurrectError(
            f"savepoint {s.sequence} does not say which directory its session ran in; nothing was written"
        )
    agent = found.document.agent or "claude"
    if agent == "codex":
        return _codex(found, cwd, home)
    if agent == "gemini":
        return _gemini(found, cwd, home)
    if agent == "opencode":
        return _opencode(found, cwd)
    if agent != "claude":
        raise ResurrectError(
            f"savepoint {s.sequence} is a {agent} session, which precompact cannot reopen (docs/agents.md); `precompact show` and `export` read it"
        )
    folder = project_folder(cwd)
    if len(folder) > FOLDER_NAME_LIMIT:
        raise ResurrectError(
            f"the session ran in {cwd}, whose Claude Code folder name is longer than {FOLDER_NAME_LIMIT} characters; nothing was written"
        )
    entries = _before_compaction(s, _entries(found))
    if not entries:
        raise ResurrectError(f"savepoint {s.sequence} holds no conversation; nothing was written")
    session_id = str(uuid.uuid4())
    lines = [
        orjson.dumps({**entry, "sessionId": session_id} if isinstance(entry, dict) and "sessionId" in entry else entry)
        + b"\n"
        for entry in entries
    ]
    path = agent_settings.sessions_folder(home) / folder / f"{session_id}.jsonl"
    _write_new(path, lines)
    # The written entries counted by the rule that counted the savepoint's (transcript.messages).
    scan = TranscriptScan(path=str(path))
    for _ in transcript_entries([line.rstrip(b"\n") for line in lines], scan):
        pass
    return Uncompacted(session_id, path, len(entries), scan.messages, cwd)


def _before_compaction(savepoint: savepoint_log.Savepoint, entries: list) -> list:
    """The history before the savepoint's compaction (capture.before_compaction), without the
    boundary and summary entries of earlier compactions: each entry that followed one is linked
    to what that one followed, so Claude Code, which walks `parentUuid` back from the last entry
    (and stops at a boundary or at a parent it does not hold), reopens it all. What a boundary
    says it followed (`logicalParentUuid`) may be no entry of the transcript (Claude Code 2.1.332
    names one it never writes after a `/compact` in print mode): then it follows the last entry
    written before it."""
    kept: list = []
    written: set[str] = set()
    last: str | None = None
    replaced: dict[str, str | None] = {}
    for entry in entries[: capture.before_compaction(savepoint, entries)]:
        uuid_ = entry.get("uuid") if isinstance(entry, dict) else None
        if isinstance(entry, dict) and (is_compact_boundary(entry) or entry.get("isCompactSummary")):
            if isinstance(uuid_, str):
                parent = entry.get("logicalParentUuid") or entry.get("parentUuid")
                followed = replaced.get(parent, parent) if isinstance(parent, str) else None
                replaced[uuid_] = followed if followed in written else last
            continue
        parent = entry.get("parentUuid") if isinstance(entry, dict) else None
        kept.append(
            {**entry, "parentUuid": replaced[parent]} if isinstance(parent, str) and parent in replaced else entry
        )
        if isinstance(uuid_, str):
            written.add(uuid_)
            last = uuid_
    return kept


def _entries(found: Resurrection) -> list:
    try:
        return [entry for _, entry in recall.saved_entries(found.contents)]
    except ValueError as e:
        raise ResurrectError(
            f"savepoint {found.savepoint.sequence}'s conversation cannot be read: {quoting.inline(str(e))}"
        ) from None


def _messages(found: Resurrection) -> int:
    """The savepoint's messages as its snapshot counted them (Codex and Gemini get them all back)."""
    return found.document.messages or 0


def _write_new(path: Path, lines: list[bytes]) -> None:
    private_file.create(path, b"".join(lines))


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
    return Uncompacted(thread_id, path, len(lines), _messages(found), cwd, "codex")


def _gemini(found: Resurrection, cwd: str, home: Path | None) -> Uncompacted:
    """The savepoint's chat messages as a new Gemini CLI session, uncompacted."""
    s = found.savepoint
    gemini_home = (home or Path.home()) / ".gemini"
    try:
        with session_file.open_read(gemini_home / "projects.json") as f:
            projects = orjson.loads(f.read()).get("projects")
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
    return Uncompacted(session_id, path, len(messages), _messages(found), cwd, "gemini")


# OpenCode's ids: a prefix, 12 hex digits of time, 14 base-62 characters.
_OPENCODE_ID = re.compile(r"^(?:ses|msg|prt)_([0-9a-f]{12})[0-9A-Za-z]{14}$")
_NO_TOKENS = {"total": 0, "input": 0, "output": 0, "reasoning": 0, "cache": {"write": 0, "read": 0}}
# In ASCII order, so fixed-width base-62 numbers sort as their values do.
_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
# An id's 14 characters after its time: the uncompact's random run, then the id's place.
_RUN_LENGTH, _ORDER_LENGTH = 7, 7


def _opencode(found: Resurrection, cwd: str) -> Uncompacted:
    """The savepoint's OpenCode messages as a new session file for `opencode import`, uncompacted."""
    s = found.savepoint
    entries = _entries(found)
    session: dict | None = None
    messages: dict[str, tuple[dict, dict[str, dict]]] = {}
    for entry in entries[: capture.before_compaction(s, entries)]:
        record = entry.get("agent_record") if isinstance(entry, dict) else None
        if not isinstance(record, dict):
            continue
        if entry.get("type") == "opencode.session" and isinstance(record.get("opencode_session"), dict):
            session = record["opencode_session"]
            continue
        message_id, message, part_id, part = (record.get(k) for k in ("message_id", "message", "part_id", "part"))
        if isinstance(message_id, str) and isinstance(message, dict) and isinstance(part_id, str):
            parts = messages.setdefault(message_id, (message, {}))[1]
            if isinstance(part, dict):
                parts.setdefault(part_id, part)
    kept = {mid: held for mid, held in messages.items() if not _of_a_compaction(*held)}
    if session is None or not any(message.get("role") == "user" for message, _ in kept.values()):
        raise ResurrectError(f"savepoint {s.sequence} holds no OpenCode conversation; nothing was written")
    session_id = f"ses_{_time_digits(session.get('id'))}{secrets.token_hex(7)}"
    # One random run for every message and part id of this uncompact: OpenCode skips an id it
    # already holds, and the ids of another uncompact of this history have another run.
    run = "".join(secrets.choice(_BASE62) for _ in range(_RUN_LENGTH))
    part_numbers = itertools.count()
    renamed: dict[str, str] = {}
    written = []
    last_user: str | None = None
    for number, (old, (message, parts)) in enumerate(kept.items()):
        new = renamed[old] = _opencode_id("msg", old, run, number)
        info = {**message, "id": new, "sessionID": session_id}
        if isinstance(message.get("tokens"), dict):
            # OpenCode compacts before the next request when the last reply's usage fills the
            # window: a usage from before the compaction would compact the session again at once.
            info["tokens"] = _NO_TOKENS
        if message.get("role") == "user":
            last_user = new
        elif "parentID" in message:
            # A reply to a message left out (an earlier compaction's "Continue") answers the last request.
            info["parentID"] = renamed.get(message["parentID"], last_user)
        written.append(
            {
                "info": info,
                "parts": [
                    {
                        **part,
                        **({"tokens": _NO_TOKENS} if isinstance(part.get("tokens"), dict) else {}),
                        "id": _opencode_id("prt", part_id, run, next(part_numbers)),
                        "sessionID": session_id,
                        "messageID": new,
                    }
                    for part_id, part in parts.items()
                ],
            }
        )
    now = int(datetime.now(UTC).timestamp() * 1000)
    title = session.get("title") if isinstance(session.get("title"), str) else "session"
    info = {
        **session,
        "id": session_id,
        "title": f"{title} (uncompacted by precompact)",
        "time": {"created": now, "updated": now},
    }
    path = private_file.state_directory() / "uncompacted" / f"{session_id}.json"
    _write_new(path, [orjson.dumps({"info": info, "messages": written})])
    return Uncompacted(session_id, path, sum(len(m["parts"]) for m in written), _messages(found), cwd, "opencode")


def _of_a_compaction(message: dict, parts: dict[str, dict]) -> bool:
    """Whether an OpenCode message is a compaction's own: its request, its summary, or the
    synthetic "Continue" OpenCode adds after an automatic one."""
    if message.get("summary") is True:
        return True
    for part in parts.values():
        if part.get("type") == "compaction":
            return True
        metadata = part.get("metadata")
        if part.get("synthetic") is True and isinstance(metadata, dict) and metadata.get("compaction_continue"):
            return True
    return False


def _opencode_id(prefix: str, old: object, run: str, order: int) -> str:
    """A new OpenCode id that sorts where `old` did: its time digits kept, then this uncompact's
    `run` and `order` (the id's place among this uncompact's ids of its kind) in base 62, fixed
    width, so ids of equal time sort in the order they are written (OpenCode orders by id)."""
    digits = ""
    for _ in range(_ORDER_LENGTH):
        order, digit = divmod(order, len(_BASE62))
        digits = _BASE62[digit] + digits
    return f"{prefix}_{_time_digits(old)}{run}{digits}"


def _time_digits(old: object) -> str:
    """The 12 hex digits of time an OpenCode id starts with (zeros for an id of another shape)."""
    found = _OPENCODE_ID.match(old) if isinstance(old, str) else None
    return found.group(1) if found else "0" * 12
