"""Reads an OpenAI Codex CLI rollout file as the conversation document precompact stores.

Codex 0.171.0 keeps a thread as `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl`,
one `{timestamp, ordinal, type, payload[, metadata]}` record a line: `session_meta`,
`turn_context`, `world_state`, `event_msg`, `token_usage_record`, `response_item` (what the
model saw and said: messages, `reasoning`, `function_call` / `function_call_output`,
`custom_tool_call` / `custom_tool_call_output`) and `compacted` (a compaction: its summary
`message` and the `replacement_history` the next request starts from).

Each record becomes one entry, in order, so that a rollout that grows gives a document that
grows (the snapshot's incremental read and the compaction recovery rely on that): the
conversation as Claude Code's transcript shapes it (`type` user/assistant, `message.content`
blocks text / thinking / tool_use / tool_result, `uuid`, `timestamp`), the rest as entries of
type `codex.<record type>` that say nothing. Every entry keeps its record whole as
`agent_record`, so nothing Codex wrote is lost and `resurrect --uncompact` can write the
rollout back. Codex's own text around the conversation (the environment context, AGENTS.md,
hook-injected context, the compaction's summary answer) is flagged `isMeta` or
`isCompactSummary`, as Claude Code's own entries are; a `compacted` record becomes a
`compact_boundary` system entry, which is how local/capture.py finds a compaction.

A user message is read item by item, by the kind and provenance Codex records for each
(`content_item_kinds`, `content_item_metadata[i].provenance`): only a `user.text` item of the
user's provenance is what the user typed, less the tags Codex puts around an attached image
(items of their own, marked the user's) and the `<stdin>` block it appends to the prompt when
input is piped to `codex exec`. What else the message holds (that block, an image's tags,
Codex's own items) follows it as an `isMeta` entry of its own, searchable and never the user's
(that entry carries no record: the message's own entry keeps it whole).

A thread Codex started for a subagent (`spawn_agent`, `codex exec review`) is not one of the
user's sessions: its `session_meta` says so (`subagent_thread`), its first user message is the
text the parent model or Codex's review preset wrote, and `sessions_in` leaves it out.
"""

from __future__ import annotations

import fnmatch
import io
import os
import re
from dataclasses import dataclass
from pathlib import Path

import orjson

from precompact.boundary import quoting, session_file
from precompact.errors import PrecompactError
from precompact.transcript import claude_code, conversation

AGENT = "codex"
# How a user-role message Codex writes itself begins, for a rollout that records no item kinds
# (Codex before `content_item_kinds`, or one a repository ships for `import`): the tags the 0.171.0
# binary holds for its user-role fragments (AGENTS.md, the environment, a skill's instructions, a
# `!` shell command and its output, an aborted turn, a subagent's result) and the older ones.
_CONTEXT_PREFIXES = (
    "<environment_context>",
    "<user_instructions>",
    "<INSTRUCTIONS>",
    "# AGENTS.md",
    "<turn_aborted>",
    "<skill>",
    "<user_shell_command>",
    "<subagent_notification>",
)
# In such a rollout, a message that is one element of a tag this reader does not know (`<tag>…</tag>`,
# the shape of every fragment above) is Codex's too: no fragment of a version this list misses is
# ever the user's request. A user who typed a whole message as one such element keeps it,
# searchable as `meta`. (A rollout with item kinds says whose each item is: this guess is not made.)
_WHOLE_ELEMENT = re.compile(r"<([A-Za-z_][\w -]{0,63})>.*</\1>", re.DOTALL)
_SUMMARY_PREFIX_END = "assist with your own analysis:\n"
# `codex exec` appends what is piped to it to the prompt's own item: "If stdin is piped and a
# prompt is also provided, stdin is appended as a `<stdin>` block" (its --help).
_STDIN_BLOCK = re.compile(r"\n\n<stdin>\n.*\n</stdin>\Z", re.DOTALL)
# The tags Codex puts around an image the user attached, as items of the user's kind and
# provenance of their own (`<image name=[Image #1] path="…">`, then `</image>`).
_IMAGE_TAG = re.compile(r'<image name=\[Image #\d+\](?: path="[^"\n]*")?>|</image>')
# What a user message's item is when it is the user's: its kind and its provenance's type.
_USER_KIND, _USER_PROVENANCE = "user.text", "user"
_EXIT_CODE = re.compile(r"^Process exited with code (-?\d+)$", re.MULTILINE)


@dataclass(frozen=True)
class Document:
    """Rollout bytes read: their entries (one JSON line each), how many bytes that was (up to the
    last whole line: a partial last line is left for later), the Codex version and thread id
    (`session_id`) a `session_meta` among them names, and the latest compaction's summary."""

    lines: list[bytes]
    consumed: int
    version: str | None
    session_id: str | None
    summary: str | None

    @property
    def data(self) -> bytes:
        return b"".join(self.lines)


def read(path: Path, until: int | None = None) -> Document:
    """The rollout at `path` as a document (its first `until` bytes only, when given); OSError
    when it cannot be read (LineTooLong: a line over the cap, `read_rest`)."""
    with session_file.open_read(path) as f:
        return read_from(read_rest(f, path, until), 0)


def read_rest(handle: io.BufferedIOBase, path: Path, until: int | None = None) -> bytes:
    """The rollout's bytes from where `handle` (`path` open) stands (to byte `until`, when given),
    none of its lines longer than a transcript line may be (claude_code.MAX_LINE_BYTES): a longer
    one, which would be read whole into memory, is session_file.LineTooLong once that much of it
    is read."""
    return session_file.capped_lines(handle, claude_code.MAX_LINE_BYTES, path, until)


def read_from(raw: bytes, start: int) -> Document:
    """The whole lines of `raw`, the rollout's bytes from offset `start` (a line's start)."""
    lines = []
    version = thread_id = summary = None
    consumed = raw.rfind(b"\n") + 1
    position = start
    for line in raw[:consumed].split(b"\n")[:-1]:
        at, position = position, position + len(line) + 1
        if not line.strip():
            continue
        try:
            record = claude_code.parse_json(line)
        except ValueError:
            record = None
        if not isinstance(record, dict):
            lines.append(line + b"\n")  # kept as it is: the snapshot stores it as an unparsed line
            continue
        entries = entries_of(record, at)
        payload: dict = record["payload"] if isinstance(record.get("payload"), dict) else {}
        if record.get("type") == "session_meta":
            version = _text(payload.get("cli_version")) or version
            thread_id = _text(payload.get("id")) or thread_id
        elif record.get("type") == "compacted" and isinstance(payload.get("message"), str):
            # Codex prefixes the summary with words for the next model ("Another language model
            # started to solve this problem ... to assist with your own analysis:").
            summary = payload["message"].split(_SUMMARY_PREFIX_END, 1)[-1].strip()
        lines += [orjson.dumps(entry) + b"\n" for entry in entries]
    return Document(lines, consumed, version, thread_id, summary)


def entries_of(record: dict, offset: int) -> list[dict]:
    """The entries one rollout record becomes (`offset`: where its line starts, which marks a
    record without ordinal): one, but for a user message holding more than the user's text,
    whose rest follows it as an `isMeta` entry."""
    kind = record.get("type")
    payload = record["payload"] if isinstance(record.get("payload"), dict) else {}
    ordinal = record.get("ordinal")
    mark = f"codex:{ordinal if isinstance(ordinal, int) else f'@{offset}'}"
    base = {"uuid": mark, "timestamp": record.get("timestamp"), "agent_record": record}
    if kind == "compacted":
        return [
            {"type": "system", "subtype": "compact_boundary", "content": _text(payload.get("message")) or "", **base}
        ]
    if kind != "response_item":
        return [{"type": f"codex.{kind}", **base}]
    item = payload.get("type")
    metadata = record["metadata"] if isinstance(record.get("metadata"), dict) else {}
    if item == "message":
        return _message(payload, metadata, base)
    if item == "reasoning":
        summary = [s.get("text") for s in payload.get("summary") or [] if isinstance(s, dict)]
        thinking = "\n".join(t for t in summary if isinstance(t, str))
        return [
            {"type": "assistant", "message": _said("assistant", [{"type": "thinking", "thinking": thinking}]), **base}
        ]
    if item in ("function_call", "custom_tool_call", "local_shell_call"):
        return [{"type": "assistant", "message": _said("assistant", [_tool_use(payload)]), **base}]
    if item in ("function_call_output", "custom_tool_call_output"):
        return [{"type": "user", "message": _said("user", [_tool_result(payload)]), **base}]
    return [{"type": f"codex.{item}", **base}]


def _message(payload: dict, metadata: dict, base: dict) -> list[dict]:
    role = payload.get("role")
    texts = [c.get("text") for c in payload.get("content") or [] if isinstance(c, dict)]
    text = "\n".join(t for t in texts if isinstance(t, str))
    if role == "assistant":
        entry = {"type": "assistant", "message": _said("assistant", [{"type": "text", "text": text}]), **base}
        if metadata.get("compaction_output") is True:
            entry["isCompactSummary"] = True  # the compaction's answer: Codex's summary, not a turn
        return [entry]
    if role == "user":
        typed, rest = _user_items(payload)
        if not typed or typed.lstrip().startswith(_CONTEXT_PREFIXES):
            return [
                {"type": "user", "message": _said("user", [{"type": "text", "text": text}]), "isMeta": True, **base}
            ]
        entry = {"type": "user", "message": _said("user", [{"type": "text", "text": typed}]), **base}
        if not rest:
            return [entry]
        # The record stays with the message's own entry only: `resurrect --uncompact` writes it once.
        codexs = {"type": "user", "message": _said("user", [{"type": "text", "text": rest}]), "isMeta": True}
        return [entry, {**codexs, "uuid": f"{base['uuid']}:attached", "timestamp": base["timestamp"]}]
    # developer (the system prompt and its updates) and any other role: Codex's, not said.
    return [{"type": "system", "subtype": f"codex_{role}_message", "content": text, **base}]


def _user_items(payload: dict) -> tuple[str, str]:
    """A user message's text split in two: what the user typed (its `user.text` items of the
    user's provenance, less an image's tags and a piped `<stdin>` block) and the rest (those, and
    Codex's own items). A message whose items' kinds Codex does not record (versions before it
    did) is the user's whole, unless it is one tagged element (`_WHOLE_ELEMENT`); one whose kinds
    or provenances do not line up with its items is none of it."""
    items = [c for c in payload.get("content") or [] if isinstance(c, dict)]
    texts = [t if isinstance(t := c.get("text"), str) else "" for c in items]
    passthrough = payload.get("internal_chat_message_metadata_passthrough")
    passthrough = passthrough if isinstance(passthrough, dict) else {}
    kinds = passthrough.get("content_item_kinds")
    if kinds is None:
        typed, stdin = _without_stdin(texts)
        if _WHOLE_ELEMENT.fullmatch(typed.strip()):
            return "", "\n".join(t for t in texts if t)
        return typed, stdin
    metadata = passthrough.get("content_item_metadata")
    if not isinstance(kinds, list) or len(kinds) != len(items):
        return "", "\n".join(t for t in texts if t)
    if metadata is not None and (not isinstance(metadata, list) or len(metadata) != len(items)):
        return "", "\n".join(t for t in texts if t)
    theirs = [
        kinds[i] == _USER_KIND
        and (metadata is None or _provenance(metadata[i]) == _USER_PROVENANCE)
        and not _IMAGE_TAG.fullmatch(texts[i])
        for i in range(len(items))
    ]
    typed, stdin = _without_stdin([t for t, mine in zip(texts, theirs, strict=True) if mine])
    rest = [t for t, mine in zip(texts, theirs, strict=True) if not mine and t]
    return typed, "\n".join([*rest, stdin] if stdin else rest)


def _without_stdin(texts: list[str]) -> tuple[str, str]:
    """The user's items joined, and the `<stdin>` block Codex appended to the last (or "")."""
    if not texts:
        return "", ""
    piped = _STDIN_BLOCK.search(texts[-1])
    if piped is None:
        return "\n".join(t for t in texts if t), ""
    kept = [*texts[:-1], texts[-1][: piped.start()]]
    return "\n".join(t for t in kept if t), piped.group().strip()


def _provenance(item: object) -> object:
    provenance = item.get("provenance") if isinstance(item, dict) else None
    return provenance.get("type") if isinstance(provenance, dict) else None


def _said(role: str, content: list[dict]) -> dict:
    return {"role": role, "content": content}


def _tool_use(payload: dict) -> dict:
    arguments = payload.get("arguments") if "arguments" in payload else payload.get("input")
    parsed = arguments
    if isinstance(arguments, str):
        try:
            parsed = claude_code.parse_json(arguments)
        except ValueError:
            parsed = None
    return {
        "type": "tool_use",
        "id": _text(payload.get("call_id")) or _text(payload.get("id")) or "",
        "name": _text(payload.get("name")) or str(payload.get("type")),
        "input": parsed if isinstance(parsed, dict) else {"input": arguments},
    }


def _tool_result(payload: dict) -> dict:
    output = payload.get("output")
    if isinstance(output, dict):  # an older shape: {"content": ..., "success": ...}
        failed = output.get("success") is False
        output = output.get("content")
    else:
        failed = False
    text = output if isinstance(output, str) else orjson.dumps(output).decode()
    code = _EXIT_CODE.search(text)
    return {
        "type": "tool_result",
        "tool_use_id": _text(payload.get("call_id")) or "",
        "content": text,
        "is_error": failed or (code is not None and code.group(1) != "0"),
    }


def _text(value) -> str | None:
    return value if isinstance(value, str) else None


# A rollout's first line is its `session_meta`: the thread's id, directory, git state and base
# instructions (Codex's system prompt: tens of KB). 4 MiB is a hundred times that; a longer first
# line is not one Codex wrote, and reading it whole would ask for the file's size in memory.
SESSION_META_MAX_BYTES = 4 << 20


@dataclass(frozen=True)
class Unlisted:
    """A rollout whose first line could not be read, so whether it is a thread of this project
    is not known: import reports it as failed, naming the file, rather than leave it out."""

    rollout: Path
    reason: str


def sessions_in(root: Path, codex_home: Path) -> list[Path | Unlisted]:
    """The rollouts of threads Codex ran in `root` or below it (their `session_meta` says where)
    for the user (a subagent's thread is not listed: `subagent_thread`), oldest first, and those
    whose `session_meta` could not be read or whose day's folder could not be listed (an empty
    rollout, which Codex has just made, holds nothing yet and is not listed). None when Codex
    keeps no sessions folder; a PrecompactError naming it when it cannot be listed (which
    threads are this project's is then not known)."""
    found: list[Path | Unlisted] = []
    for rollout in _rollouts(codex_home / "sessions"):
        if isinstance(rollout, Unlisted):
            found.append(rollout)
            continue
        try:
            if rollout.is_symlink() or not rollout.is_file():
                continue
            with session_file.open_read(rollout) as f:
                head = f.readline(SESSION_META_MAX_BYTES + 1)
        except OSError as e:
            found.append(Unlisted(rollout, reason=f"{rollout} cannot be read: {e.strerror or e}"))
            continue
        if not head:
            continue
        if len(head) > SESSION_META_MAX_BYTES:
            why = f"its first line is over {SESSION_META_MAX_BYTES >> 20} MiB, which no Codex session_meta is"
            found.append(Unlisted(rollout, f"{rollout}: {why}; move it out of {codex_home / 'sessions'}"))
            continue
        try:
            first = orjson.loads(head)
        except orjson.JSONDecodeError:
            why = "its first line is not JSON (cut short, or not written by Codex)"
            found.append(Unlisted(rollout, f"{rollout}: {why}; move it out of {codex_home / 'sessions'}"))
            continue
        payload = first.get("payload") if isinstance(first, dict) and first.get("type") == "session_meta" else None
        cwd = payload.get("cwd") if isinstance(payload, dict) else None
        if conversation.ran_within(cwd, root) and not subagent_thread(payload):
            found.append(rollout)
    return sorted(found, key=_age)


def subagent_thread(session_meta: object) -> bool:
    """Whether a rollout's `session_meta` payload is a thread Codex started for a subagent
    (`spawn_agent`: `source.subagent.thread_spawn`; `codex exec review`: `source.subagent:
    "review"`), not one the user started: it says so by `thread_source` (anything but "user"), a
    `source` that is not a plain name, or a `parent_thread_id`. Versions that write none of the
    three wrote no subagent threads either."""
    if not isinstance(session_meta, dict):
        return False
    thread_source = session_meta.get("thread_source")
    return (
        (thread_source is not None and thread_source != "user")
        or not isinstance(session_meta.get("source"), str | None)
        or session_meta.get("parent_thread_id") is not None
    )


def _rollouts(sessions: Path) -> list[Path | Unlisted]:
    """The `YYYY/MM/DD/rollout-*.jsonl` paths under `sessions` (as `glob` matches them: no
    hidden name), and each folder below it that could not be listed, as an Unlisted naming it."""
    try:
        years = _listed(sessions, folders=True)
    except FileNotFoundError:
        return []
    except OSError as e:
        raise PrecompactError(
            f"Codex CLI's sessions folder {sessions} cannot be listed ({quoting.os_error(e)}), so nothing was imported; "
            "make it a folder this user can read (or set CODEX_HOME to Codex's home), then run "
            "`precompact import --agent codex` again"
        ) from None
    found: list[Path | Unlisted] = []
    folders = [(year, 1) for year in years]
    while folders:
        folder, depth = folders.pop()
        try:
            names = _listed(folder, folders=depth < 3)
        except OSError as e:
            found.append(
                Unlisted(
                    folder,
                    reason=f"{folder} cannot be listed ({e.strerror or e}): the rollouts in it were not imported; "
                    "make it a folder this user can read",
                )
            )
            continue
        if depth < 3:
            folders += [(name, depth + 1) for name in names]
        else:
            found += [name for name in names if fnmatch.fnmatchcase(name.name, "rollout-*.jsonl")]
    return found


def _listed(folder: Path, folders: bool) -> list[Path]:
    """The entries of `folder` that are not hidden (with `folders`, only folders and links to
    one); OSError when it cannot be listed (a file there: NotADirectoryError)."""
    with os.scandir(folder) as entries:
        return [
            folder / entry.name
            for entry in entries
            if not entry.name.startswith(".") and (not folders or entry.is_dir())
        ]


def _age(listed: Path | Unlisted) -> tuple[int, str]:
    path = listed.rollout if isinstance(listed, Unlisted) else listed
    try:
        return path.stat().st_mtime_ns, path.name
    except OSError:  # gone since it was listed: its turn comes first, and its reading fails
        return 0, path.name
