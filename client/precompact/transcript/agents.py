"""The agents whose sessions precompact saves, and the reader that turns each one's session file
into the conversation document a snapshot stores.

Claude Code's transcript is that document already (transcript/claude_code.py reads it as it
is). Codex CLI's rollout (transcript/codex.py) and Gemini CLI's chat file (transcript/gemini.py)
are read into it: the document is written outside the project, in precompact's state directory
(`documents_dir`: one file per session file, 0600 in 0700 directories, growing as the session
file does; a Codex document is appended to with what the rollout appended, a Gemini one rewritten
whole), and the snapshot reads that file as it reads a Claude Code transcript. So snapshot,
chunks, redaction, the three layers, verify, recall, show, export and the brief need to know
nothing of the agent.

The document is not redacted (the snapshot made from it is), as the agent's own session file
beside it in the user's home is not: kept out of the project, no archive, backup or sync of the
project carries it. It is a cache of that session file, rebuilt from it at the next read, so
`prune` removes it (`forget`) and nothing a savepoint needs is lost. Documents written by
earlier versions under logs/precompact-agents/ are removed at the next read and by `prune`.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import orjson

from precompact.boundary import logs_dir, private_file, quoting, session_file
from precompact.transcript.agent_names import CLAUDE, CODEX, GEMINI, NAMES, OPENCODE  # noqa: F401 -- agents.NAMES, as the readers name them

LABELS = {CLAUDE: "Claude Code", CODEX: "Codex CLI", GEMINI: "Gemini CLI", OPENCODE: "OpenCode"}
LEGACY_DOCUMENTS_DIR = "precompact-agents"  # under logs/, where versions before issue 39 wrote them
_VERSION_TAIL_BYTES = 64 << 10
_HASH_BLOCK_BYTES = 1 << 20
_STATE_MAX_BYTES = 1 << 20  # a state record is a few hundred bytes; a summary may be long


@dataclass(frozen=True)
class Read:
    """A session file read for a snapshot: the document's path, the agent's version, and the
    latest compaction summary the session file holds (None where the agent keeps none there)."""

    transcript_path: str
    version: str | None = None
    summary: str | None = None
    session_id: str | None = None  # as the session file names it (Claude Code's names none)


def read(agent: str, logs: Path, session_file: str, session_id: str | None = None, until: int | None = None) -> Read:
    """The conversation document of `session_file`, the session file of `agent` (for OpenCode,
    its database, which holds session `session_id` among others). For Claude Code that is the
    file itself; for the others it is written to `documents_dir(logs)` first. With `until`, the
    document of the session file's first `until` bytes only (`_until`). OSError when the
    session file cannot be read (or holds no such OpenCode session)."""
    _until(agent, until)
    if agent == CLAUDE:
        return Read(session_file, claude_version(Path(session_file)))
    if agent not in (CODEX, GEMINI, OPENCODE):
        raise ValueError(f"unknown agent {agent!r}")
    _remove_legacy(logs)
    directory = documents_dir(logs)
    private_file.make_directory(directory)
    source = session_file if agent != OPENCODE else f"{session_file}\0{session_id}"
    name = directory / f"{agent}-{hashlib.sha256(source.encode()).hexdigest()[:32]}"
    if agent == CODEX:
        # Two hooks of one thread at once (two codex processes on it) must not both append.
        with _locked(name):
            return _codex(name, Path(session_file), until)
    if agent == OPENCODE:
        return _opencode(name, Path(session_file), session_id)
    from precompact.transcript import gemini

    document = gemini.read(Path(session_file), until)
    private_file.replace(_with_suffix(name, ".jsonl"), document.data)
    return Read(str(_with_suffix(name, ".jsonl")), document.version, document.summary, document.session_id)


# Where a document held by no name lives while a savepoint reads it (`held`): this process's own
# descriptor of it, where the system names descriptors by path (Linux's /proc). Read by path (the
# snapshot opens its transcript by path), never kept: a queue entry naming one is read again from
# its session file (local/snapshot._read_again).
HELD_PREFIX = "/proc/self/fd/"
# Elsewhere (macOS has no /proc, and its /dev/fd/N shares the writer's file offset): a private
# temporary file of that name's prefix in the system's temporary directory, removed when the
# block ends (a kill can leave it there, never under the state directory or the project).
HELD_NAME_PREFIX = "precompact-held-"


@contextlib.contextmanager
def reading(
    agent: str, logs: Path, session_file: str, session_id: str | None, *, kept: bool, until: int | None = None
) -> Iterator[Read]:
    """`read` (the document kept in `documents_dir(logs)`) when `kept`, else `held`: the
    document for the block's length only. The caller decides which (local/registry.keeps_outside)."""
    if kept:
        yield read(agent, logs, session_file, session_id, until)
        return
    with held(agent, session_file, session_id, until) as document:
        yield document


def _until(agent: str, until: int | None) -> None:
    """A document read to byte `until` of its session file is one of an append-only file: a Codex
    rollout or a Gemini chat file (ValueError for another agent's). What a SessionEnd queued
    without reading it (local/snapshot.UnreadSessionFile) is read so, by the worker."""
    if until is not None and agent not in (CODEX, GEMINI):
        raise ValueError(f"{agent!r}'s session file is not read to a byte")


@contextlib.contextmanager
def held(agent: str, session_file: str, session_id: str | None = None, until: int | None = None) -> Iterator[Read]:
    """`read` for a project whose savepoints keep nothing outside it (forgotten on this machine:
    local/registry.keeps_outside): the document is written to an anonymous file of this process
    (no name in any directory, so neither a crash nor a kill leaves it behind), read through its
    descriptor, and gone when the block ends. Nothing is written under the state directory: no
    document, no read position, no lock. Not for Claude Code, whose transcript is the document.
    ValueError for an agent it is not. With `until`, as `read`."""
    _until(agent, until)
    document = _whole(agent, Path(session_file), session_id, until)
    import tempfile  # only here: it imports shutil and random, which no kept read needs

    if _descriptors_by_path():
        with tempfile.TemporaryFile() as anonymous:
            anonymous.write(document.data)
            anonymous.flush()
            yield Read(f"{HELD_PREFIX}{anonymous.fileno()}", document.version, document.summary, document.session_id)
        return
    with tempfile.NamedTemporaryFile(prefix=HELD_NAME_PREFIX, suffix=".jsonl") as named:  # mode 0600
        named.write(document.data)
        named.flush()
        yield Read(named.name, document.version, document.summary, document.session_id)


def _descriptors_by_path() -> bool:
    return os.path.isdir(HELD_PREFIX)


def is_held(transcript_path: str | None) -> bool:
    """Whether `transcript_path` names a document `held` made (gone once its block ended)."""
    if not transcript_path:
        return False
    path = str(transcript_path)
    if path.startswith(HELD_PREFIX):
        return True
    import tempfile

    folder, _, name = path.rpartition(os.sep)
    return name.startswith(HELD_NAME_PREFIX) and folder == tempfile.gettempdir()


def _whole(agent: str, source: Path, session_id: str | None, until: int | None = None):
    """The document of the session file `source`, read whole (to byte `until`, when given; no
    read position kept): the agent reader's own result, with its data, version, summary and
    session id."""
    if agent == CODEX:
        from precompact.transcript import codex

        return codex.read(source, until)
    if agent == GEMINI:
        from precompact.transcript import gemini

        return gemini.read(source, until)
    if agent == OPENCODE:
        from precompact.transcript import opencode

        if not session_id:
            raise FileNotFoundError(f"no OpenCode session named to read from {quoting.path(source)}")
        try:
            return opencode.read(source, session_id)
        except opencode.NoSession as e:
            raise FileNotFoundError(str(e)) from None
    raise ValueError(f"unknown agent {agent!r}")


def _opencode(name: Path, database: Path, session_id: str | None) -> Read:
    """An OpenCode session's document, written whole (OpenCode rewrites its parts in place)."""
    from precompact.transcript import opencode

    if not session_id:
        raise FileNotFoundError(f"no OpenCode session named to read from {quoting.path(database)}")
    try:
        document = opencode.read(database, session_id)
    except opencode.NoSession as e:
        raise FileNotFoundError(str(e)) from None
    private_file.replace(_with_suffix(name, ".jsonl"), document.data)
    return Read(str(_with_suffix(name, ".jsonl")), document.version, document.summary, document.session_id)


# A queued savepoint's document as its hook saw it (`pin`): OpenCode rewrites parts of a session
# at its compaction (the compaction's part gains `tail_start_id` once the summary is written), and
# Gemini's document is written whole at every read, so the document kept under its own name no
# longer holds what the hook saw by the time the worker writes the savepoint. Under PINNED_DIR,
# named by PINNED_NAME; removed once its entry is written or given up, or by `sweep_pins` once no
# entry names it.
PINNED_DIR = "queued"
PINNED_NAME = re.compile(r"\d{20}-\d+\.jsonl")


def pin(logs: Path, document: str) -> str | None:
    """A second name for `document` (a document `read` kept in `documents_dir(logs)`) that no
    later read replaces: a hard link, so nothing is copied, and the document's next rewrite (a
    new file renamed over the name) leaves it holding the bytes it holds now. Its leaf name
    (`pinned`), or None for a document not kept there (Claude Code's transcript, one `held`
    made) or when the file system makes no link (the entry then compares the document itself)."""
    directory = documents_dir(logs)
    if os.path.dirname(os.path.realpath(document)) != os.path.realpath(directory):
        return None
    private_file.make_directory(directory / PINNED_DIR)
    leaf = f"{time.time_ns():020d}-{os.getpid()}.jsonl"
    try:
        os.link(document, directory / PINNED_DIR / leaf, follow_symlinks=False)
    except OSError:
        return None
    return leaf


def pinned(logs: Path, leaf: str) -> Path | None:
    """Where the pinned document `leaf` is (None for a name `pin` never makes)."""
    return documents_dir(logs) / PINNED_DIR / leaf if PINNED_NAME.fullmatch(leaf) else None


def unpin(logs: Path, leaf: str) -> None:
    """Removes the pinned document `leaf` (gone already: nothing to do)."""
    path = pinned(logs, leaf)
    if path is not None:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def sweep_pins(logs: Path, named: set[str], older_than: float) -> None:
    """Removes the project's pinned documents no queue entry names (`named`) made before
    `older_than` (Unix seconds): a writer killed between an entry's removal and its pin's left
    it; a younger one may be a hook's whose entry is not written yet."""
    directory = documents_dir(logs) / PINNED_DIR
    try:
        leaves = os.listdir(directory)
    except FileNotFoundError:
        return
    for leaf in leaves:
        if PINNED_NAME.fullmatch(leaf) and leaf not in named and int(leaf[:20]) < older_than * 1e9:
            with contextlib.suppress(FileNotFoundError):
                (directory / leaf).unlink()


def subagent_session(agent: str, session_file: str, session_id: str | None) -> str | None:
    """Why the session an event of `agent` names is a subagent's, not one of the user's (None
    when it is the user's, or when that cannot be read: the event's handler reads it and says
    why). OpenCode's child sessions are; Codex runs no hook in a subagent's thread (observed with
    0.171.0), and import leaves those threads out (codex.subagent_thread)."""
    if agent != OPENCODE or not session_id:
        return None
    from precompact.transcript import opencode

    try:
        parent = opencode.parent_of(Path(session_file), session_id)
    except OSError:
        return None
    if parent is None:
        return None
    return f"OpenCode's session {session_id} is a subagent's child session of {parent}, not one of the user's"


def documents_dir(logs: Path) -> Path:
    """Where the documents of the project whose logs/ is `logs` are kept: precompact's state
    directory, never the project."""
    project = hashlib.sha256(os.path.realpath(logs).encode()).hexdigest()[:32]
    return private_file.state_directory() / "agent-documents" / project


def forget(logs: Path) -> None:
    """Removes the project's documents (each rebuilt from its session file at the next read) and
    any an earlier version left under logs/. A Codex document goes under its lock, so a hook
    appending to it finishes first; the empty lock files stay."""
    _remove_legacy(logs)
    directory = documents_dir(logs)
    try:
        names = sorted(os.listdir(directory))
    except FileNotFoundError:
        return
    for leaf in names:
        if leaf.endswith(".lock"):
            name = directory / leaf.removesuffix(".lock")
            with _locked(name):
                for suffix in (".jsonl", ".state.json"):
                    _with_suffix(name, suffix).unlink(missing_ok=True)
        elif leaf.startswith((f"{GEMINI}-", f"{OPENCODE}-")) and leaf.endswith(".jsonl"):
            (directory / leaf).unlink(missing_ok=True)


def _remove_legacy(logs: Path) -> None:
    """Removes logs/precompact-agents/ and the files in it (documents an earlier version kept
    in the project, unredacted)."""
    try:
        with logs_dir.directory(logs, LEGACY_DOCUMENTS_DIR, create=False) as fd:
            for leaf in os.listdir(fd):
                with contextlib.suppress(OSError):  # not a file precompact wrote there: left as it is
                    os.unlink(leaf, dir_fd=fd)
    except FileNotFoundError:
        return
    with logs_dir.directory(logs) as fd, contextlib.suppress(OSError):
        os.rmdir(LEGACY_DOCUMENTS_DIR, dir_fd=fd)


@contextlib.contextmanager
def _locked(name: Path) -> Iterator[None]:
    with private_file.locked(_with_suffix(name, ".lock")):
        yield


def _with_suffix(name: Path, suffix: str) -> Path:
    return name.with_name(name.name + suffix)


def _codex(name: Path, rollout: Path, until: int | None = None) -> Read:
    """A rollout's document, appended to with what the rollout appended since the last read
    when the rollout's bytes read then are unchanged (their SHA-256 and the document's size,
    recorded in `<name>.state.json`, say so); else read and written whole. With `until`, to
    that byte of the rollout only: a document that a later read took past it is written again."""
    from precompact.transcript import codex

    document_path, state_path = _with_suffix(name, ".jsonl"), _with_suffix(name, ".state.json")
    state = _state(state_path)
    with session_file.open_read(rollout) as f:
        size = os.fstat(f.fileno()).st_size if until is None else min(os.fstat(f.fileno()).st_size, until)
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
            and _size(document_path) == state["document_size"]
        )
        if not kept:
            f.seek(0)
            prefix, start, state = hashlib.sha256(), 0, None
        raw = codex.read_rest(f, rollout, until)
    document = codex.read_from(raw, start)
    prefix.update(raw[: document.consumed])
    if kept:
        _append(document_path, document.data)
    else:
        private_file.replace(document_path, document.data)
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
    private_file.replace(state_path, orjson.dumps(after))
    return Read(str(document_path), version, summary, session_id)


def _state(path: Path) -> dict | None:
    """What the last read of a rollout recorded; None when there is none or it is not one."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as f:
            state = orjson.loads(f.read(_STATE_MAX_BYTES))
    except (OSError, orjson.JSONDecodeError):
        return None
    if not isinstance(state, dict):
        return None
    counts_ok = all(isinstance(state.get(k), int) and state[k] >= 0 for k in ("source_end", "document_size"))
    texts_ok = all(state.get(k) is None or isinstance(state[k], str) for k in ("version", "session_id", "summary"))
    return state if counts_ok and texts_ok and isinstance(state.get("source_sha256"), str) else None


def _size(path: Path) -> int | None:
    try:
        found = os.stat(path, follow_symlinks=False)
    except OSError:
        return None
    return found.st_size if stat.S_ISREG(found.st_mode) else None


def _append(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC)
    with os.fdopen(fd, "ab") as f:
        f.write(data)


def session_files(agent: str, root: Path, home: Path | None = None) -> list:
    """The session files of `agent` (Codex CLI or Gemini CLI) for sessions run in `root` or
    below it, oldest first: what `precompact import --agent` archives (for Codex, with the
    rollouts whose first line could not be read, as codex.Unlisted)."""
    home = home or Path.home()
    if agent == CODEX:
        from precompact.transcript import codex

        codex_home = os.environ.get("CODEX_HOME")
        return codex.sessions_in(root, Path(codex_home) if codex_home else home / ".codex")
    if agent == GEMINI:
        from precompact.transcript import gemini

        return gemini.sessions_in(root, home)
    raise ValueError(f"no session files to list for agent {agent!r}")


def opencode_sessions(root: Path, home: Path | None = None) -> tuple[Path, list[str]]:
    """OpenCode's database (for this process's environment) and the ids of the sessions it ran
    in `root` or below it, oldest first: what `precompact import --agent opencode` archives."""
    from precompact.transcript import opencode

    database = opencode.database(home=home)
    return database, opencode.sessions_in(root, database)


def claude_version(transcript: Path) -> str | None:
    """The Claude Code version its last transcript lines name (each entry carries `version`)."""
    try:
        with session_file.open_read(transcript) as f:
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
