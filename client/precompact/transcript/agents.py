"""The agents whose sessions precompact saves, and the reader that turns each one's session file
into the conversation document a snapshot stores.

Claude Code's transcript is that document already (transcript/claude_code.py reads it as it
is). Codex CLI's rollout (transcript/codex.py) and Gemini CLI's chat file (transcript/gemini.py)
are read into it: the document is written under logs/precompact-agents/ (one file per session
file, growing as the session file does; a Codex document is appended to with what the rollout
appended, a Gemini one rewritten whole), and the snapshot reads that file as it reads a Claude
Code transcript. So snapshot, chunks, redaction, the three
layers, verify, recall, show, export and the brief need to know nothing of the agent.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

import orjson

from precompact.boundary import logs_dir

CLAUDE, CODEX, GEMINI = "claude", "codex", "gemini"
# config/install.py's AGENTS names the same (config cannot import this module).
NAMES = (CLAUDE, CODEX, GEMINI)
LABELS = {CLAUDE: "Claude Code", CODEX: "Codex CLI", GEMINI: "Gemini CLI"}
DOCUMENTS_DIR = "precompact-agents"
_VERSION_TAIL_BYTES = 64 << 10
_HASH_BLOCK_BYTES = 1 << 20


@dataclass(frozen=True)
class Read:
    """A session file read for a snapshot: the document's path, the agent's version, and the
    latest compaction summary the session file holds (None where the agent keeps none there)."""

    transcript_path: str
    version: str | None = None
    summary: str | None = None
    session_id: str | None = None  # as the session file names it (Claude Code's names none)


def read(agent: str, logs: Path, session_file: str) -> Read:
    """The conversation document of `session_file`, the session file of `agent`. For Claude
    Code that is the file itself; for the others it is written to logs/ first. OSError when the
    session file cannot be read."""
    if agent == CLAUDE:
        return Read(session_file, claude_version(Path(session_file)))
    if agent not in (CODEX, GEMINI):
        raise ValueError(f"unknown agent {agent!r}")
    name = f"{DOCUMENTS_DIR}/{agent}-{hashlib.sha256(session_file.encode()).hexdigest()[:32]}"
    if agent == CODEX:
        # Two hooks of one thread at once (two codex processes on it) must not both append.
        fd = logs_dir.open_file(logs, f"{name}.lock", os.O_RDWR | os.O_CREAT)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            return _codex(logs, name, Path(session_file))
        finally:
            os.close(fd)
    from precompact.transcript import gemini

    document = gemini.read(Path(session_file))
    logs_dir.write_atomic(logs, f"{name}.jsonl", document.data)
    return Read(str(logs / f"{name}.jsonl"), document.version, document.summary, document.session_id)


def _codex(logs: Path, name: str, rollout: Path) -> Read:
    """A rollout's document, appended to with what the rollout appended since the last read
    when the rollout's bytes read then are unchanged (their SHA-256 and the document's size,
    recorded in `<name>.state.json`, say so); else read and written whole."""
    from precompact.transcript import codex

    state = _state(logs, f"{name}.state.json")
    with rollout.open("rb") as f:
        size = os.fstat(f.fileno()).st_size
        prefix = hashlib.sha256()
        start = state["source_end"] if state is not None and state["source_end"] <= size else 0
        left = start
        while left:
            block = f.read(min(left, _HASH_BLOCK_BYTES))
            if not block:
                break
            prefix.update(block)
            left -= len(block)
        kept = (
            start > 0
            and left == 0
            and state is not None
            and prefix.hexdigest() == state["source_sha256"]
            and _size(logs, f"{name}.jsonl") == state["document_size"]
        )
        if not kept:
            f.seek(0)
            prefix, start, state = hashlib.sha256(), 0, None
        raw = f.read()
    document = codex.read_from(raw, start)
    prefix.update(raw[: document.consumed])
    if kept:
        _append(logs, f"{name}.jsonl", document.data)
    else:
        logs_dir.write_atomic(logs, f"{name}.jsonl", document.data)
    before = state or {}
    version: str | None = document.version or before.get("version")
    session_id: str | None = document.session_id or before.get("session_id")
    summary: str | None = document.summary or before.get("summary")
    after = {
        "source_end": start + document.consumed,
        "source_sha256": prefix.hexdigest(),
        "document_size": (before["document_size"] if kept else 0) + len(document.data),
        "version": version,
        "session_id": session_id,
        "summary": summary,
    }
    logs_dir.write_atomic(logs, f"{name}.state.json", orjson.dumps(after))
    return Read(str(logs / f"{name}.jsonl"), version, summary, session_id)


def _state(logs: Path, name: str) -> dict | None:
    """What the last read of a rollout recorded; None when there is none or it is not one."""
    try:
        state = orjson.loads(logs_dir.read_bytes(logs, name))
    except (OSError, orjson.JSONDecodeError):
        return None
    if not isinstance(state, dict):
        return None
    counts_ok = all(isinstance(state.get(k), int) and state[k] >= 0 for k in ("source_end", "document_size"))
    texts_ok = all(state.get(k) is None or isinstance(state[k], str) for k in ("version", "session_id", "summary"))
    return state if counts_ok and texts_ok and isinstance(state.get("source_sha256"), str) else None


def _size(logs: Path, name: str) -> int | None:
    try:
        fd = logs_dir.open_file(logs, name, os.O_RDONLY)
    except OSError:
        return None
    try:
        return os.fstat(fd).st_size
    finally:
        os.close(fd)


def _append(logs: Path, name: str, data: bytes) -> None:
    fd = logs_dir.open_file(logs, name, os.O_WRONLY | os.O_APPEND)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def session_files(agent: str, root: Path, home: Path | None = None) -> list[Path]:
    """The session files of `agent` (Codex CLI or Gemini CLI) for sessions run in `root` or
    below it, oldest first: what `precompact import --agent` archives."""
    home = home or Path.home()
    if agent == CODEX:
        from precompact.transcript import codex

        codex_home = os.environ.get("CODEX_HOME")
        return codex.sessions_in(root, Path(codex_home) if codex_home else home / ".codex")
    if agent == GEMINI:
        from precompact.transcript import gemini

        return gemini.sessions_in(root, home)
    raise ValueError(f"no session files to list for agent {agent!r}")


def claude_version(transcript: Path) -> str | None:
    """The Claude Code version its last transcript lines name (each entry carries `version`)."""
    try:
        with transcript.open("rb") as f:
            size = os.fstat(f.fileno()).st_size
            f.seek(max(size - _VERSION_TAIL_BYTES, 0))
            tail = f.read()
    except OSError:
        return None
    for line in reversed(tail.split(b"\n")):
        try:
            entry = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(entry, dict) and isinstance(entry.get("version"), str):
            return entry["version"]
    return None
