"""Reads a Gemini CLI chat file as the conversation document precompact stores.

Gemini CLI 0.61.0 records a session as `~/.gemini/tmp/<project>/chats/session-<time>-<id8>.jsonl`,
appended to and never rewritten: a header (`sessionId`, `projectHash`, `startTime`, `kind`;
again at each resume), message records (`id`, `timestamp`, `type` user / gemini / info / error /
warning, `content`; a gemini message carries `thoughts`, `tokens`, `model` and `toolCalls`, and
is written again under the same id once its tool calls have run), and `{"$set": {...}}` updates,
of which `$set.messages` replaces the whole history: at each resume (the same messages again)
and at a compression (`[<session_context>, user "<state_snapshot>…", the model's ack, the
recent messages]`; the lines before stay).

Each message record becomes one entry (a user message sometimes two: below), shaped as Claude
Code's transcript (user text, tool results from `functionResponse` parts, the model's text, thoughts and tool calls as
text / thinking / tool_use blocks, `tokens.input` as the usage); its `uuid` is the message id, so
`message.id` makes the snapshot count a message written twice once, and its `revision` a hash of
the message, so the second writing is a new mark (conversation.said_mark). A
`$set.messages` adds an entry for each message it holds that no record did before, after a
`compact_boundary` entry when one of them is a new `<state_snapshot>` (the compression; that
message is the compaction summary, the ack Gemini's own). Every entry keeps the record it came
from as `agent_record` (but the second entry of a user message); a `$set.messages` keeps only the ids of messages already read.

A user message is what Gemini sent the model, which is not always what the user typed: Gemini
records the typed text as `displayContent` when it differs from the `content` sent (an `@file`'s
contents after it, a custom command's expansion, or, for a continuation of the same turn, an
AfterAgent hook's blocking reason, "Please continue." or a loop warning, each with the turn's
typed prompt as `displayContent`). The user's entry holds the typed text only; what Gemini sent
besides is an `isMeta` user entry of its own (uuid `gemini:<id>:sent`, no `agent_record`: the
user's entry keeps the message), and a message whose `displayContent` repeats the request before
it is a continuation, Gemini's whole (docs/agents.md, "What Gemini writes as a user message").
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

import orjson

from precompact.boundary import quoting, session_file
from precompact.config.gemini_compression import SNAPSHOT_OPEN
from precompact.errors import PrecompactError
from precompact.transcript import claude_code, conversation

AGENT = "gemini"
_OWN_PREFIXES = ("<session_context>", "<hook_context>")
# Where Gemini's own text begins in what it sends as a user message (0.61.0): the files an
# `@path` names, after the typed text (atCommandProcessor's REFERENCE_CONTENT_START), or the
# resources its ACP path adds. Their text is the repository's, not the user's.
_REFERENCED = ("--- Content from referenced files ---", "--- Content from referenced context ---")
# The context hooks add, as Gemini writes it before (or as) a text part: one block or several.
_HOOK_CONTEXT = re.compile(r"\A(?:<hook_context>.*?</hook_context>\s*)+", re.DOTALL)
# The user messages Gemini 0.61.0 composes itself and records as typed (`GeminiClient.addHistory`, no
# `displayContent`), each whole: a shell-mode command's output (`!cmd`, its result up to 10,000
# characters: whatever the command printed), the IDE's editor context (the open file's selected
# text), `/directory add`'s folder structure (every file name), the plan mode's exit notice. None is
# the user's request; all are Gemini's.
_GEMINI_WROTE = re.compile(
    r"\AI ran the following shell command:\n```sh\n.*\n```\n\nThis produced the following result:\n```\n.*\n```\Z"
    r"|\AHere is (?:the user's editor context as a JSON object|a summary of changes in the user's editor context, in"
    r" JSON format)\. This is for your information only\.\n```json\n.*\n```\Z"
    r"|\A- \*\*Workspace Directories:\*\*\n(?:  - [^\n]*\n)*- \*\*Directory Structure:\*\*\n"
    r"|\A(?:User has manually exited Plan Mode|Plan approved)\. Switching to [^\n]*\.\Z",
    re.DOTALL,
)
_EXIT_CODE = re.compile(r"^Exit Code: (-?\d+)$", re.MULTILINE)
_SNAPSHOT = re.compile(r"<state_snapshot>(.*?)(?:</state_snapshot>|\Z)", re.DOTALL)


@dataclass(frozen=True)
class Document:
    """A chat file read whole: its entries (one JSON line each; a partial last line is left
    out), the session id, and the latest compression's snapshot. The chat file names no CLI
    version."""

    lines: list[bytes]
    version: str | None
    session_id: str | None
    summary: str | None
    compressions: int

    @property
    def data(self) -> bytes:
        return b"".join(self.lines)


def read(path: Path, until: int | None = None) -> Document:
    """The chat file at `path` as a document (its first `until` bytes only, when given); OSError
    when it cannot be read (LineTooLong: a line longer than a transcript line may be,
    claude_code.MAX_LINE_BYTES, refused once that much of it is read, never read whole into
    memory)."""
    with session_file.open_read(path) as f:
        return parse(session_file.capped_lines(f, claude_code.MAX_LINE_BYTES, path, until))


def parse(raw: bytes) -> Document:
    """A chat file's bytes as a document."""
    reading = _Reading()
    for line in raw.split(b"\n")[:-1]:  # the last piece: empty, or still being written
        if not line.strip():
            continue
        try:
            record = claude_code.parse_json(line)
        except ValueError:
            record = None
        if not isinstance(record, dict):
            reading.lines.append(line + b"\n")  # kept as it is: stored as an unparsed line
            continue
        for entry in reading.entries(record):
            reading.lines.append(orjson.dumps(entry) + b"\n")
    return Document(reading.lines, None, reading.session_id, reading.summary, reading.compressions)


class _Reading:
    def __init__(self) -> None:
        self.lines: list[bytes] = []
        self.seen: set[str] = set()  # message ids
        # What each message said: a resume's or compression's `$set.messages` holds copies of
        # messages already read, some under new ids (the tool results).
        self.said: set[bytes] = set()
        self.session_id: str | None = None
        self.summary: str | None = None
        self.compressions = 0
        # What the user last typed: a message whose `displayContent` repeats it continues that turn.
        self.request: str | None = None

    def entries(self, record: dict) -> list[dict]:
        update = record.get("$set")
        if isinstance(update, dict):
            return self._update(record, update)
        if isinstance(record.get("sessionId"), str) and "type" not in record:
            self.session_id = record["sessionId"]
            return [{"type": "gemini.session", "timestamp": record.get("startTime"), "agent_record": record}]
        if isinstance(record.get("id"), str):
            self.seen.add(record["id"])
        self.said.add(_said(record))
        return self._message(record, record)

    def _message(self, message: dict, record: dict) -> list[dict]:
        entries = message_entries(message, record, self.request)
        typed = [conversation.user_text(e) for e in entries if e.get("type") == "user"]
        self.request = next((t for t in typed if t), self.request)
        return entries

    def _update(self, record: dict, update: dict) -> list[dict]:
        messages = update.get("messages")
        if not isinstance(messages, list):
            return [{"type": "gemini.set", "agent_record": record}]
        new = [
            m
            for m in messages
            if isinstance(m, dict)
            and isinstance(m.get("id"), str)
            and m["id"] not in self.seen
            and _said(m) not in self.said
        ]
        fresh = {id(m) for m in new}
        kept = {
            "$set": {
                **update,
                "messages": [m if id(m) in fresh else m.get("id") if isinstance(m, dict) else m for m in messages],
            }
        }
        entries: list[dict] = [{"type": "gemini.set", "agent_record": kept}]
        snapshot = next((m for m in new if m.get("type") == "user" and _text(m).startswith(SNAPSHOT_OPEN)), None)
        if snapshot is not None:
            self.compressions += 1
            found = _SNAPSHOT.search(_text(snapshot))
            self.summary = found.group(1).strip() if found else _text(snapshot)
            entries.append(
                {
                    "type": "system",
                    "subtype": "compact_boundary",
                    "content": self.summary,
                    "timestamp": snapshot.get("timestamp"),
                }
            )
        after_snapshot = False
        for message in new:
            self.seen.add(message["id"])
            self.said.add(_said(message))
            said = self._message(message, {"$set": {"messages": [message]}})
            if message is snapshot:
                said[0]["isCompactSummary"] = True
            elif after_snapshot and message.get("type") == "gemini":
                said[0]["isMeta"] = True  # Gemini's fixed acknowledgement of the snapshot, not a turn
            after_snapshot = message is snapshot
            entries += said
        return entries


def message_entries(message: dict, record: dict, request: str | None = None) -> list[dict]:
    """The entries of one chat message, the first keeping `record` (the line it came from);
    `request` is what the user last typed before it."""
    kind = message.get("type")
    mark = message.get("id")
    base = {
        "uuid": f"gemini:{mark}" if isinstance(mark, str) else None,
        # A message written again under its id (its tool calls run) is new conversation.
        "revision": hashlib.sha256(orjson.dumps(message)).hexdigest()[:16],
        "timestamp": message.get("timestamp"),
        "agent_record": record,
    }
    if kind == "user":
        return _user(message, base, request)
    if kind == "gemini":
        return [_model(message, base)]
    return [{"type": f"gemini.{kind}", "content": _text(message), **base}]


def _said(message: dict) -> bytes:
    """What a message says, whatever its id and time."""
    return orjson.dumps([message.get("type"), message.get("content"), message.get("toolCalls")])


def _user(message: dict, base: dict, request: str | None) -> list[dict]:
    parts = _parts(message)
    results = [p["functionResponse"] for p in parts if isinstance(p.get("functionResponse"), dict)]
    if results:
        blocks = [_tool_result(r) for r in results]
        return [{"type": "user", "message": {"role": "user", "content": blocks}, **base}]
    # A hook's context comes as a part of its own after the prompt (BeforeAgent): not the user's.
    sent = _typed_text(parts) if parts else _text(message)
    shown = message.get("displayContent")
    if shown is None:
        typed = "" if _GEMINI_WROTE.match(sent) else _before_referenced(sent)
    else:
        typed = _before_referenced(_typed_text(_as_parts(shown)))
        if typed.strip() == (request or "").strip():
            typed = ""  # the same turn again: what Gemini sent is its own (a hook's reason, "Please continue.")
    if not typed.strip() or typed.lstrip().startswith(_OWN_PREFIXES):
        return [_user_text_entry(sent, base, meta=True)]
    entries = [_user_text_entry(typed, base, meta=False)]
    rest = sent.removeprefix(typed)
    if rest.strip():
        sent_entry = {**base, "uuid": f"{base['uuid']}:sent" if base["uuid"] else None}
        del sent_entry["agent_record"]  # the user's entry keeps the message
        entries.append(_user_text_entry(rest.strip("\n"), sent_entry, meta=True))
    return entries


def _user_text_entry(text: str, base: dict, meta: bool) -> dict:
    entry = {"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": text}]}, **base}
    if meta:
        entry["isMeta"] = True
    return entry


def _typed_text(parts: list[dict]) -> str:
    """The text parts without the hooks' context Gemini adds: a part of its own (BeforeAgent's,
    precompact's brief) or, for SessionStart's, a block before the prompt inside the prompt's own
    part (observed with 0.61.0): the prompt after it is still the user's."""
    texts = (_HOOK_CONTEXT.sub("", p["text"], count=1) for p in parts if isinstance(p.get("text"), str))
    return "\n".join(t for t in texts if t)


def _as_parts(shown: object) -> list[dict]:
    """`displayContent` (a part list, one part, or a string) as parts."""
    if isinstance(shown, str):
        return [{"text": shown}]
    if isinstance(shown, dict):
        return [shown]
    return [p for p in shown if isinstance(p, dict)] if isinstance(shown, list) else []


def _before_referenced(text: str) -> str:
    """`text` up to where Gemini's referenced content begins (its first marker: a referenced
    file may itself hold the end marker, so nothing after it is taken for typed)."""
    at = min((i for i in (text.find(m) for m in _REFERENCED) if i >= 0), default=len(text))
    return text[:at].rstrip()


def _model(message: dict, base: dict) -> dict:
    blocks: list[dict] = []
    for thought in message.get("thoughts") or []:
        if isinstance(thought, dict):
            words = [thought.get("subject"), thought.get("description")]
            blocks.append({"type": "thinking", "thinking": "\n".join(w for w in words if isinstance(w, str))})
    text = _text(message)
    if text:
        blocks.append({"type": "text", "text": text})
    for call in message.get("toolCalls") or []:
        if isinstance(call, dict):
            arguments = call.get("args")
            blocks.append(
                {
                    "type": "tool_use",
                    "id": call.get("id") if isinstance(call.get("id"), str) else "",
                    "name": call.get("name") if isinstance(call.get("name"), str) else "?",
                    "input": arguments if isinstance(arguments, dict) else {"input": arguments},
                }
            )
    said = {"role": "assistant", "id": base["uuid"], "content": blocks}
    tokens = message.get("tokens")
    if isinstance(tokens, dict) and isinstance(tokens.get("input"), int):
        said["usage"] = {"input_tokens": tokens["input"]}
        if isinstance(message.get("model"), str):
            said["model"] = message["model"]
    return {"type": "assistant", "message": said, **base}


def _tool_result(response: dict) -> dict:
    inner = response.get("response")
    output = inner.get("output") if isinstance(inner, dict) else None
    failed = isinstance(inner, dict) and "error" in inner
    text = output if isinstance(output, str) else orjson.dumps(inner).decode()
    code = _EXIT_CODE.search(text)
    return {
        "type": "tool_result",
        "tool_use_id": response.get("id") if isinstance(response.get("id"), str) else "",
        "content": text,
        "is_error": failed or (code is not None and code.group(1) != "0"),
    }


def _parts(message: dict) -> list[dict]:
    content = message.get("content")
    if isinstance(content, list):
        return [p for p in content if isinstance(p, dict)]
    return []


def _text(message: dict) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(p["text"] for p in _parts(message) if isinstance(p.get("text"), str))


def sessions_in(root: Path, home: Path) -> list[Path]:
    """The chat files of sessions Gemini CLI ran in `root` or below it (~/.gemini/projects.json
    names each directory's folder under ~/.gemini/tmp/), oldest first; none when Gemini keeps no
    projects.json, a PrecompactError naming it when it cannot be read as Gemini writes it (which
    sessions are this project's is then not known)."""
    listing = home / ".gemini" / "projects.json"
    try:
        with session_file.open_read(listing) as f:
            read = orjson.loads(session_file.capped_lines(f, claude_code.MAX_LINE_BYTES, listing))
    except FileNotFoundError:
        return []
    except (session_file.NotASessionFile, session_file.LineTooLong) as e:  # precompact's words
        raise _unreadable(listing, e.strerror or str(e)) from None
    except OSError as e:
        raise _unreadable(listing, quoting.os_error(e)) from None
    except orjson.JSONDecodeError:
        raise _unreadable(listing, "not JSON: cut short, or being written") from None
    projects = read.get("projects") if isinstance(read, dict) else None
    if not isinstance(projects, dict):
        raise _unreadable(listing, 'no "projects" object in it')
    found = []
    for directory, slug in projects.items():
        if (
            not isinstance(slug, str)
            or "/" in slug
            or slug in ("", ".", "..")
            or not conversation.ran_within(directory, root)
        ):
            continue
        found += [
            p for p in _chat_files(home / ".gemini" / "tmp" / slug / "chats") if p.is_file() and not p.is_symlink()
        ]
    return sorted(found, key=lambda p: (p.stat().st_mtime_ns, p.name))


def _chat_files(chats: Path) -> list[Path]:
    """The `session-*.jsonl` paths in `chats`; none when there is no such folder (Gemini has not
    written a session there yet), a PrecompactError naming it when it cannot be listed (which
    sessions are this project's is then not known)."""
    try:
        with os.scandir(chats) as entries:
            return [chats / entry.name for entry in entries if fnmatch.fnmatchcase(entry.name, "session-*.jsonl")]
    except FileNotFoundError:
        return []
    except OSError as e:
        raise PrecompactError(
            f"Gemini CLI's chats folder {chats} cannot be listed ({quoting.os_error(e)}), so nothing was imported; "
            "make it a folder this user can read, then run `precompact import --agent gemini` again"
        ) from None


def _unreadable(listing: Path, why: str) -> PrecompactError:
    return PrecompactError(
        f"Gemini CLI's {listing} cannot be read ({why}), so nothing was imported; "
        "run `precompact import --agent gemini` again once Gemini CLI has written it whole"
    )
