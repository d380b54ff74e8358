"""Reads an OpenCode session, from OpenCode's own database, as the conversation document
precompact stores.

OpenCode 1.18.33 keeps every session in one SQLite database,
`$XDG_DATA_HOME/opencode/opencode.db` (WAL): `session` (`id`, `directory`, `version`, ...),
`message` (`id`, `session_id`, `data`: the message's JSON, `role` user / assistant; an assistant
message with `summary: true` is a compaction's summary) and `part` (`id`, `message_id`,
`session_id`, `data`: `text` (a `synthetic` one is OpenCode's, not the user's), `reasoning`,
`tool` (`tool`, `callID`, `state`: `status`, `input`, `output` / `error`), `compaction`,
`step-start`, `step-finish`, `patch`, `file`, ...). Ids are time-ordered. A custom command's
expansion (its template from `.opencode/command/`, the arguments filled in, each ``!`cmd` ``
replaced by the command's output) is an ordinary user text part; precompact's plugin marks each
text part of one (`metadata.precompact_command`: the command's name and arguments, from
OpenCode's `command.execute.before`), and the reader takes `/<name> <arguments>` for what the
user typed and the expansion for OpenCode's. A compaction deletes
nothing: it adds a user message holding a `compaction` part, the summary message and, when
automatic, a synthetic "Continue" message.

A session with a `parent_id` is a child session: OpenCode runs a subagent there (a `task` the
model delegates, a command with `subtask: true`), and its first user text is the task the parent
model or the command's template wrote, never the user's words. It is a sidechain of the user's
session, never a session of its own: `sessions_in` leaves it out, `read` refuses it (`Sidechain`),
and `parent_of` tells precompact's plugin's hook to do nothing for it.

The database is opened read-only and only this session's rows are read, in id order. Each part
becomes one entry, shaped as Claude Code's transcript (user and assistant text, thinking, a tool
part as a `tool_use` entry and, once it ran, a `tool_result` entry; a `compaction` part as a
`compact_boundary` system entry, which is how local/capture.py finds a compaction; the summary's
text flagged `isCompactSummary`, synthetic text and a command's expansion `isMeta`, the first
part of an expansion preceded by the user's entry of what they typed), the rest as entries of type
`opencode.<part type>` that say nothing. Every entry keeps its message's and part's JSON as
`agent_record`, so `resurrect --uncompact` can write the session back for `opencode import`.
OpenCode rewrites parts in place (a tool part goes from pending to completed, a reply's text grows
as it streams), so the document is read whole each time, and each entry carries the `revision` of
its part's JSON: a part rewritten is new conversation (conversation.said_mark).
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import orjson

from precompact.boundary import quoting
from precompact.errors import PrecompactError
from precompact.transcript import claude_code, conversation

AGENT = "opencode"
DATABASE = Path("opencode") / "opencode.db"
# The key of the mark precompact's plugin (config/opencode_plugin.js) puts in the metadata of a
# command's expansion.
COMMAND_MARK = "precompact_command"
# A part's JSON above this is kept as a note of its size, not read: OpenCode's own parts are far
# smaller (a tool's output is cut at 50 KB by OpenCode), and one row must not fill the memory.
MAX_ROW_BYTES = 64 << 20
_BUSY_TIMEOUT_SECONDS = 5.0


class Unreadable(OSError):
    """The database cannot be read as OpenCode's (not SQLite, not its tables, locked too long)."""


class NoSession(LookupError):
    """The database holds no session of the user's by the id asked for."""


class Sidechain(NoSession):
    """The session asked for is a child session (a subagent's), not one of the user's."""


# Which sessions are the user's own: not a child session, which OpenCode runs a subagent in.
_THE_USERS = "parent_id IS NULL"


@dataclass(frozen=True)
class Document:
    """A session read whole: its entries (one JSON line each), OpenCode's version, the session
    id, the latest compaction's summary, how many compactions it holds, and where it ran."""

    lines: list[bytes]
    version: str | None
    session_id: str
    summary: str | None
    compactions: int
    directory: str | None

    @property
    def data(self) -> bytes:
        return b"".join(self.lines)


def database(environ: dict[str, str] | None = None, home: Path | None = None) -> Path:
    """Where OpenCode keeps its database for a process with `environ` (XDG_DATA_HOME, else
    ~/.local/share)."""
    data_home = (os.environ if environ is None else environ).get("XDG_DATA_HOME")
    base = Path(data_home) if data_home and os.path.isabs(data_home) else (home or Path.home()) / ".local" / "share"
    return base / DATABASE


def read(path: Path, session_id: str) -> Document:
    """The session `session_id` of the database at `path`; Unreadable (an OSError) when the
    database cannot be read, FileNotFoundError when it is not there, NoSession when it holds
    no such session (Sidechain when it is a child session)."""
    with _opened(path) as db:
        row = _one(db, f"SELECT {', '.join(_SESSION_COLUMNS)}, {_THE_USERS} FROM session WHERE id = ?", (session_id,))
        if row is None:
            raise NoSession(f"OpenCode's database holds no session {quoting.inline(session_id)}")
        if row[-1] != 1:
            raise Sidechain(
                f"OpenCode's session {quoting.inline(session_id)} is a subagent's child session, not one of the user's"
            )
        return _document(db, _session_info(dict(zip(_SESSION_COLUMNS, row[:-1], strict=True))))


def parent_of(path: Path, session_id: str) -> str | None:
    """The session whose child session `session_id` is (a subagent's), None when it is the
    user's own or the database holds no such session; OSError when it cannot be read."""
    with _opened(path) as db:
        row = _one(db, f"SELECT parent_id, {_THE_USERS} FROM session WHERE id = ?", (session_id,))
    if row is None or row[1] == 1:
        return None
    return row[0] if isinstance(row[0], str) else repr(row[0])


def sessions_in(root: Path, path: Path) -> list[str]:
    """The ids of the sessions OpenCode ran in `root` or below it, oldest first; none when the
    database is not there, a PrecompactError naming it when it cannot be read as OpenCode's
    (which sessions are this project's is then not known)."""
    try:
        with _opened(path) as db:
            rows = _rows(db, f"SELECT id, directory FROM session WHERE {_THE_USERS} ORDER BY time_created, id", ())
            return [sid for sid, directory in rows if isinstance(sid, str) and conversation.ran_within(directory, root)]
    except FileNotFoundError:
        return []
    except Unreadable as e:
        said, named = str(e), quoting.path(path)
        raise _not_imported(said if named in said else f"{said} ({named})") from None
    except OSError as e:
        raise _not_imported(
            f"OpenCode's database {quoting.path(path)} cannot be read ({quoting.os_error(e)})"
        ) from None


def _not_imported(why: str) -> PrecompactError:
    return PrecompactError(
        f"{why}, so nothing was imported; run `precompact import --agent opencode` again once OpenCode "
        "has finished writing it, or with an OpenCode whose database docs/agents.md describes"
    )


def compactions(path: Path, session_id: str) -> int:
    """How many compactions the session holds (0 when it cannot be read)."""
    try:
        with _opened(path) as db:
            row = _one(
                db,
                "SELECT count(*) FROM part WHERE session_id = ? AND json_extract(data, '$.type') = 'compaction'",
                (session_id,),
            )
    except (OSError, sqlite3.Error):
        return 0
    return row[0] if row and isinstance(row[0], int) else 0


class _opened:
    """The database opened read-only (its WAL read too: what OpenCode wrote a moment ago is
    there), closed on leaving."""

    def __init__(self, path: Path):
        self.path = path

    def __enter__(self) -> sqlite3.Connection:
        if not self.path.is_file():
            raise FileNotFoundError(f"OpenCode's database {quoting.path(self.path)} is not there")
        try:
            self.db = sqlite3.connect(
                f"{self.path.resolve().as_uri()}?mode=ro", uri=True, timeout=_BUSY_TIMEOUT_SECONDS
            )
            self.db.execute("PRAGMA query_only = ON")
            self.db.execute("SELECT 1 FROM session, message, part LIMIT 0")
        except sqlite3.Error as e:
            raise Unreadable(
                f"OpenCode's database {quoting.path(self.path)} cannot be read ({quoting.inline(str(e))})"
            ) from None
        return self.db

    def __exit__(self, *exc_info) -> None:
        self.db.close()


def _one(db: sqlite3.Connection, query: str, args: tuple) -> tuple | None:
    try:
        return db.execute(query, args).fetchone()
    except sqlite3.Error as e:
        raise Unreadable(f"OpenCode's database cannot be read ({quoting.inline(str(e))})") from None


def _rows(db: sqlite3.Connection, query: str, args: tuple) -> Iterator[tuple]:
    try:
        yield from db.execute(query, args)
    except sqlite3.Error as e:
        raise Unreadable(f"OpenCode's database cannot be read ({quoting.inline(str(e))})") from None


# The session row's columns `opencode export` puts in its `info` (as `projectID`, `time`, ...).
_SESSION_COLUMNS = (
    "id",
    "slug",
    "project_id",
    "directory",
    "path",
    "title",
    "version",
    "agent",
    "model",
    "permission",
    "time_created",
    "time_updated",
)


def _session_info(row: dict) -> dict:
    """The session as `opencode export` writes its `info` (what `opencode import` reads back)."""
    info: dict = {"id": row["id"]}
    for column, key in (("slug", "slug"), ("project_id", "projectID"), ("directory", "directory"), ("path", "path")):
        if isinstance(row[column], str):
            info[key] = row[column]
    for column in ("title", "version", "agent"):
        if isinstance(row[column], str):
            info[column] = row[column]
    for column in ("model", "permission"):
        value = _parsed(row[column])
        if isinstance(value, dict if column == "model" else list):
            info[column] = value
    info["time"] = {k: row[f"time_{k}"] for k in ("created", "updated") if isinstance(row[f"time_{k}"], int)}
    return info


def _document(db: sqlite3.Connection, info: dict) -> Document:
    session_id = info["id"]
    version, directory = info.get("version"), info.get("directory")
    messages: dict[str, dict] = {}
    for message_id, data, size in _rows(
        db,
        "SELECT id, CASE WHEN length(data) <= ? THEN data END, length(data) FROM message WHERE session_id = ? ORDER BY id",
        (MAX_ROW_BYTES, session_id),
    ):
        messages[message_id] = _object(data) or {"unreadable": True, "bytes": size}
    # The session itself first: an entry that says nothing, kept for `resurrect --uncompact`.
    lines: list[bytes] = [
        orjson.dumps(
            {"type": "opencode.session", "uuid": f"opencode:{session_id}", "agent_record": {"opencode_session": info}}
        )
        + b"\n"
    ]
    summary: str | None = None
    count = 0
    commands: set[str] = set()  # the messages whose command the user's entry already quotes
    for part_id, message_id, data, size in _rows(
        db,
        "SELECT id, message_id, CASE WHEN length(data) <= ? THEN data END, length(data) FROM part "
        "WHERE session_id = ? ORDER BY message_id, id",
        (MAX_ROW_BYTES, session_id),
    ):
        message = messages.get(message_id, {})
        part = _object(data) or {"type": "unreadable", "bytes": size}
        revision = _revision(data, size)
        entries = entries_of(message, part, session_id, message_id, part_id, directory)
        typed = _command_typed(_command_mark(message, part))
        if typed is not None and message_id not in commands:
            commands.add(message_id)
            said = {key: value for key, value in entries[0].items() if key != "isMeta"}
            entries.insert(
                0,
                {
                    **said,
                    "message": _said("user", [{"type": "text", "text": typed}]),
                    "uuid": f"opencode:{part_id}:typed",
                },
            )
        for entry in entries:
            entry["revision"] = revision
            if entry.get("subtype") == "compact_boundary":
                count += 1
            if entry.get("isCompactSummary"):
                summary = _text(part.get("text")) or summary
            lines.append(orjson.dumps(entry) + b"\n")
    return Document(lines, version, session_id, summary, count, directory)


def entries_of(
    message: dict, part: dict, session_id: str, message_id: str, part_id: str, cwd: str | None
) -> list[dict]:
    """The entries one part of `message` becomes (two for a tool that ran, else one)."""
    role = message.get("role")
    kind = part.get("type")
    created = message.get("time", {}).get("created") if isinstance(message.get("time"), dict) else None
    base = {
        "uuid": f"opencode:{part_id}",
        "sessionId": session_id,
        "timestamp": _iso(created),
        "cwd": cwd,
        "agent_record": {"message_id": message_id, "message": message, "part_id": part_id, "part": part},
    }
    if kind == "tool" and role == "assistant":
        return _tool(part, base)
    return [_entry(message, part, role, kind, base)]


def _entry(message: dict, part: dict, role: object, kind: object, base: dict) -> dict:
    if kind == "compaction":
        return {"type": "system", "subtype": "compact_boundary", "content": "", **base}
    if kind == "text" and role in ("user", "assistant"):
        entry = {
            "type": role,
            "message": _said(role, [{"type": "text", "text": _text(part.get("text")) or ""}]),
            **base,
        }
        if role == "assistant" and message.get("summary") is True:
            entry["isCompactSummary"] = True
        elif part.get("synthetic") is True or _command_mark(message, part) is not None:
            entry["isMeta"] = True
        return entry
    if kind == "reasoning" and role == "assistant":
        thinking = _text(part.get("text")) or ""
        return {
            "type": "assistant",
            "message": _said("assistant", [{"type": "thinking", "thinking": thinking}]),
            **base,
        }
    return {"type": f"opencode.{kind if isinstance(kind, str) else 'part'}", **base}


def _command_mark(message: dict, part: dict) -> object:
    """The mark precompact's plugin puts on the expansion of a command (a user text part), None
    on any other part."""
    metadata = part.get("metadata")
    if message.get("role") != "user" or part.get("type") != "text" or not isinstance(metadata, dict):
        return None
    return metadata.get(COMMAND_MARK)


def _command_typed(mark: object) -> str | None:
    """What the user typed to run the command a mark names (`/name arguments`); None when the
    mark does not name one (the part is still not the user's)."""
    if not isinstance(mark, dict) or not isinstance(mark.get("name"), str) or not mark["name"]:
        return None
    arguments = mark.get("arguments")
    return f"/{mark['name']} {arguments if isinstance(arguments, str) else ''}".strip()


def _tool(part: dict, base: dict) -> list[dict]:
    """A tool part: its call (assistant), then its result (user) once it ran, as Claude Code's
    transcript has them."""
    given = part.get("state")
    state: dict = given if isinstance(given, dict) else {}
    call_id = _text(part.get("callID")) or ""
    arguments = state.get("input")
    use = {
        "type": "tool_use",
        "id": call_id,
        "name": _text(part.get("tool")) or "tool",
        "input": arguments if isinstance(arguments, dict) else {"input": arguments},
    }
    entries = [{"type": "assistant", "message": _said("assistant", [use]), **base}]
    status = state.get("status")
    if status in ("completed", "error"):
        output = state.get("output") if status == "completed" else state.get("error")
        text = output if isinstance(output, str) else orjson.dumps(output).decode()
        # OpenCode's bash completes a command that failed, its exit status in the metadata.
        metadata = state.get("metadata")
        exit_status = metadata.get("exit") if isinstance(metadata, dict) else None
        failed = status == "error" or (type(exit_status) is int and exit_status != 0)
        result = {"type": "tool_result", "tool_use_id": call_id, "content": text, "is_error": failed}
        entries.append({**base, "type": "user", "message": _said("user", [result]), "uuid": f"{base['uuid']}:result"})
    return entries


def _revision(data: object, size: object) -> str:
    """What tells one state of a part from another (conversation.said_mark): OpenCode rewrites a
    part in place as its text streams in and its tool runs, under the same id."""
    content = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if not isinstance(content, bytes):
        content = f"over the size read: {size}".encode()
    return hashlib.sha256(content).hexdigest()[:16]


def _parsed(data: object) -> object:
    """A column's JSON text parsed (None when it is not text or not JSON)."""
    if not isinstance(data, str | bytes):
        return None
    try:
        return claude_code.parse_json(data)
    except ValueError:
        return None


def _object(data: object) -> dict | None:
    value = _parsed(data)
    return value if isinstance(value, dict) else None


def _said(role: str, content: list[dict]) -> dict:
    return {"role": role, "content": content}


def _iso(milliseconds: object) -> str | None:
    if not isinstance(milliseconds, int) or isinstance(milliseconds, bool):
        return None
    try:
        return datetime.fromtimestamp(milliseconds / 1000, UTC).isoformat().replace("+00:00", "Z")
    except (OverflowError, OSError, ValueError):
        return None


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None
