"""The agents whose sessions precompact saves, and the reader that turns each one's session file
into the conversation document a snapshot stores.

Claude Code's transcript is that document already (transcript/claude_code.py reads it as it
is). Codex CLI's rollout (transcript/codex.py) and Gemini CLI's chat file (transcript/gemini.py)
are read into it: the document is written under logs/precompact-agents/ (one file per session
file, rewritten whole at each hook; it grows as the session file does), and the snapshot reads
that file as it reads a Claude Code transcript. So snapshot, chunks, redaction, the three
layers, verify, recall, show, export and the brief need to know nothing of the agent.
"""

from __future__ import annotations

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
    from precompact.transcript import codex, gemini

    if agent not in (CODEX, GEMINI):
        raise ValueError(f"unknown agent {agent!r}")
    document: codex.Document | gemini.Document = (codex.read if agent == CODEX else gemini.read)(Path(session_file))
    name = f"{DOCUMENTS_DIR}/{agent}-{hashlib.sha256(session_file.encode()).hexdigest()[:32]}.jsonl"
    logs_dir.write_atomic(logs, name, document.data)
    return Read(str(logs / name), document.version, document.summary, document.session_id)


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
