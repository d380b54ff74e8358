"""Layer 1: the local savepoint.

A snapshot is one canonical JSON document (sorted keys, compact separators, UTF-8) written
atomically to `logs/precompact-saves/`; its SHA-256 is the hash of exactly those bytes. The
conversation history and the loaded files' contents are stored as content-addressed chunks
(`chunks.py`) that the snapshot lists, so savepoints of a growing session share what they hold
(docs/snapshot-format.md). The transcript is streamed into chunks one block of entries at a
time, redacted on the way, from where the session's last savepoint stopped when the transcript
before that point is unchanged (`resume.py`), so a 100 MB transcript is never held in memory
whole nor read again whole. The index entry is appended under the same lock that assigns the
sequence number, so concurrent hooks form one chain.
"""

from __future__ import annotations

import contextlib
import errno
import fnmatch
import functools
import hashlib
import json
import mmap
import os
import re
import stat
import time
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from precompact.boundary import git_env, logs_dir, outside_json, processes, quoting, session_file
from precompact.errors import PrecompactError
from precompact.local import chunks, provenance, savepoint_log
from precompact.records import Record, field

if TYPE_CHECKING:
    from precompact.config.settings import Config
    from precompact.local import read_position as resume
    from precompact.transcript import claude_code as transcript

# The transcript's reader and the resume point (with `array`, `base64` and their dataclasses) are
# imported where a snapshot is written: a session starting from a brief only reads one.

SNAPSHOT_TYPE = "PRECOMPACT_SAVEPOINT"
FORMAT_VERSION = 2
SAVES_DIR = logs_dir.SAVES_DIR
INDEX_LOCK_TIMEOUT_SECONDS = 10.0
# A snapshot file no index line names is removed by the next save once it is this old: a save
# killed between the rename and its index line, or whose line the disk had no room for (said
# "not saved"), left it; `precompact restore` also writes snapshots just before their lines,
# outside the index lock (and removes those it then does not append).
UNINDEXED_SNAPSHOT_SECONDS = 600
# Savepoints and compaction summaries a hook could not write (the index lock busy past what its
# event may wait: config/hook_timeouts.py), left for the worker, which waits up to
# QUEUED_LOCK_TIMEOUT_SECONDS: it answers nobody. One queue, taken in the order the hooks left
# them: a summary queued after the savepoint it belongs to is written after it.
QUEUE_DIR = "precompact-queue"
# How far the newest savepoint's time may be ahead of this clock before it is said (`clock_behind`):
# a savepoint written within the same second, or a clock a little off, is no step back.
CLOCK_SLACK_SECONDS = 120
# A queue entry's name: its time and writer's process, `-summary` for a compaction summary's, and
# `.v2` since the format has a version (version 1 entries, named without it, are still read). A
# precompact of version 1 lists only `…\d(-summary)?.json` (its whole-name pattern): it never sees,
# and so never removes unread or writes without its instance and transcript checks, an entry of
# this format (review12d F1).
QUEUE_ENTRY = re.compile(r"\d{20}-\d+(-summary)?(\.v2)?\.json")
QUEUE_SUFFIX = ".v2.json"
QUEUE_PURPOSE = "queued savepoint"
SUMMARY_SUFFIX = "-summary.v2.json"
SUMMARY_PURPOSE = "queued compaction summary"
QUEUED_LOCK_TIMEOUT_SECONDS = 600.0
QUEUED_REASON = savepoint_log.QUEUED_REASON
# The most a queue entry precompact writes holds: a savepoint's is a few hundred bytes, and a
# compaction summary is cut to QUEUED_SUMMARY_MAX_CHARS (each at most 6 bytes in its JSON) before it
# is queued. An entry larger than this, a link or anything but a regular file is none of
# precompact's (it came with a copied logs/): it is removed unread.
QUEUED_SUMMARY_MAX_CHARS = 2 << 20
QUEUE_ENTRY_MAX_BYTES = 16 << 20
NOT_STAMPED = "not written by this machine (no stamp of its key)"
# The queue entry's format (docs/reliability.md, "What a queue entry holds"). An entry without a
# "version" was written before entries named theirs: version 1, read as this version's own. Both
# are read leniently (a field this version does not know is another version's optional one,
# ignored; an optional one missing takes its default); an entry of a version above this one, or
# stamped by this machine but not readable here, is another precompact's (the plugin's hooks and
# the user's CLI are separate installs): left queued and named, never removed unread.
QUEUE_FORMAT = 3
# The format entries are written in, but for a Codex or Gemini SessionEnd's that left its session
# file unread (`queue_unread`): QUEUE_FORMAT, so that a precompact that reads format 2 at most
# leaves it queued and names it, never writing it as a savepoint without a transcript.
WRITTEN_FORMAT = 2
ANOTHER_VERSION = "written by another precompact version: run that version's `precompact flush`"
# What a queued savepoint's entry says of its transcript's bytes before its end (TranscriptSeen):
# the SHA-256 of the last 64 KiB, a read and a hash of the same size whatever the transcript's, at
# the hook and again at the writer (a hash of every byte up to the end would cost the hook a
# read of the whole transcript).
TRANSCRIPT_TAIL_BYTES = 64 << 10
GIT_TIMEOUT_SECONDS = 5.0
# The session-state file is a short note of priorities; beyond this its head is kept, cut.
SESSION_STATE_CAP_BYTES = 1 << 20


_HISTORY_OPEN = b'{"conversation_history":['
# The history ends where the first of the other fields (sorted) begins.
_HISTORY_CLOSE = b'],"format_version":'
# A brief reads the newest 1,000 entries: what the last window holds past them is parsed for
# nothing (256 KB windows: 5.0 ms for the benchmark's 784 kB, 128 KB: 3.5 ms).
_TAIL_WINDOW_BYTES = 1 << 17
_Kind = TypeVar("_Kind", int, str)


class SnapshotReader:
    """A snapshot's bytes read for resurrection: every field but `conversation_history` (most of
    the bytes) at once, the history's entries newest first and only as far back as asked.
    Anything not laid out as `create_savepoint` writes it is parsed whole instead. A chunked
    snapshot's checked chunks (`chunks.Rebuilt`) are read as they are: the document's bytes are
    joined only for what needs them whole (`data`, `located_entries`, `prefix`, `entry_bytes`)."""

    def __init__(self, data: bytes | mmap.mmap | chunks.Rebuilt):
        # A read-only mmap of the file serves too: only the parts read are paged in.
        self._history: list | None = None
        self._chunks: chunks.Rebuilt | None = None
        if isinstance(data, chunks.Rebuilt):
            if _fields_found_at_history_end(data.fields):
                # The joined document's fields, found where its history ends, are these.
                self._chunks, self._data, self.fields = data, None, data.fields
                self._history_end = len(_HISTORY_OPEN) + max(sum(len(c) for c in data.history) - 1, 0)
                return
            data = data.joined()
        self._data = data
        close = data.rfind(_HISTORY_CLOSE)
        fields = None
        if data[: len(_HISTORY_OPEN)] == _HISTORY_OPEN and close >= len(_HISTORY_OPEN) - 1:
            try:
                fields = json.loads(b"{" + data[close + 2 :])
            except (ValueError, RecursionError):
                fields = None  # the marker was inside a later field: not the boundary
        if isinstance(fields, dict):
            self.fields, self._history_end = fields, close
        else:
            document = outside_json.parse_json_standard(data if isinstance(data, bytes) else data[:])
            if not isinstance(document, dict):
                raise ValueError("a snapshot is a JSON object")  # noqa: TRY004 -- bad input, handled as ValueError
            history = document.pop("conversation_history", None)
            self._history = history if isinstance(history, list) else []
            self.fields, self._history_end = document, 0

    def newest_entries(self) -> Iterator:
        """The history's entries, newest first, parsed window by window from the end: a
        candidate boundary `},{"` is an entry boundary iff what follows it parses as a list (a
        boundary inside an entry leaves that entry's closing brackets unmatched). A window
        grows only when it holds no boundary (one entry longer than it)."""
        if self._history is not None:
            yield from reversed(self._history)
            return
        start, end, window = len(_HISTORY_OPEN), self._history_end, _TAIL_WINDOW_BYTES
        while end > start:
            low = max(start, end - window)
            data = self._span(low, end)
            entries, boundary = (
                (chunks.strict_loads(b"[" + data + b"]", integers_as_orjson=True), start - 1)
                if low == start
                else _entries_after(data, low)
            )
            if entries is None:
                window *= 2
                continue
            yield from reversed(entries)
            end = boundary + 1

    def _span(self, low: int, end: int) -> bytes:
        """The document's bytes from `low` to `end` (within the history): of a chunked
        snapshot's, from the chunks that hold them, none joined whole."""
        if self._chunks is None:
            return self._whole()[low:end]
        pieces, position = [], len(_HISTORY_OPEN)
        for chunk in self._chunks.history:
            if position >= end:
                break
            if position + len(chunk) > low:
                pieces.append(chunk[max(low - position, 0) : end - position])
            position += len(chunk)
        return b"".join(pieces)

    def _whole(self) -> bytes | mmap.mmap:
        if self._data is None:
            assert self._chunks is not None
            self._data = self._chunks.joined()
        return self._data

    @functools.cached_property
    def document(self) -> Document:
        """Every field but the history, typed: how the code outside Layer 1 reads them."""
        return Document.of(self.fields)

    @property
    def data(self) -> bytes:
        """The whole document's bytes (a chunked snapshot's, rebuilt from its chunks)."""
        whole = self._whole()
        return bytes(whole) if not isinstance(whole, bytes) else whole

    @property
    def history_end(self) -> int:
        """Where the history's last entry ends: the bytes before it are every entry and the
        separators between them (a snapshot holding the same entries and more starts with them)."""
        if self._history is not None:
            raise ValueError("the snapshot is not laid out as precompact writes it")
        return self._history_end

    def prefix(self, end: int) -> memoryview:
        """The snapshot's first `end` bytes (not copied)."""
        return memoryview(self._whole())[:end]

    def located_entries(self, after: int | None = None) -> Iterator[tuple[tuple[int, int], object]]:
        """The history's entries, oldest first, each with its place in the snapshot (what
        `entry_at` takes back), so an index can point into the snapshot instead of copying it;
        with `after` (an entry's end), only the entries after it. Raises ValueError for a
        snapshot not laid out as `create_savepoint` writes it."""
        import orjson  # every entry of the history: recall's index, which loads it anyway

        end = self.history_end
        data = self._whole()
        position = len(_HISTORY_OPEN) if after is None else after + 1
        if after is not None and after < end and data[after : after + 1] != b",":
            raise ValueError(f"no entry of this snapshot ends at byte {after}")
        while position < end:
            # An entry ends at the first `},{"` (or at the history's end) where it parses whole:
            # a JSON object cannot parse when cut inside, so the first success is its end.
            candidate = data.find(b'},{"', position, end)
            while True:
                stop = end if candidate == -1 else candidate + 1
                try:
                    entry = orjson.loads(data[position:stop])
                    break
                except orjson.JSONDecodeError:
                    if candidate == -1:
                        raise ValueError(f"the snapshot's history does not parse at byte {position}") from None
                    candidate = data.find(b'},{"', candidate + 1, end)
            yield (position, stop), entry
            position = stop + 1

    def entry_at(self, place: tuple[int, int]) -> object:
        """The entry `located_entries` gave at `place`."""
        import orjson  # recall's reader: a session start does without it

        return orjson.loads(self.entry_bytes(place))

    def entry_bytes(self, place: tuple[int, int]) -> bytes:
        """The bytes of the entry at `place`, as the snapshot holds them."""
        start, stop = place
        if self._history is not None or not len(_HISTORY_OPEN) <= start < stop <= self._history_end:
            raise ValueError(f"no entry of this snapshot is at {start}..{stop}")
        return self._whole()[start:stop]


def _entries_after(data: bytes, low: int) -> tuple[list | None, int]:
    """The entries after the first entry boundary in `data` (the document's bytes from `low` to
    where the entries asked for end), and that boundary's place in the document."""
    candidate = data.find(b'},{"')
    while candidate != -1:
        try:
            return chunks.strict_loads(b"[" + data[candidate + 2 :] + b"]", integers_as_orjson=True), low + candidate
        except (ValueError, RecursionError):
            candidate = data.find(b'},{"', candidate + 1)
    return None, low + len(data)


def _fields_found_at_history_end(fields: dict) -> bool:
    """Whether a reader of the joined document finds its fields where the history ends: they
    are canonical JSON less the opening brace, found by the last `],"format_version":`, which
    is where the history ends when `format_version` is the first field (sorted) and no object
    inside them names it (strings cannot hold it unescaped)."""
    if not fields or min(fields) != "format_version":
        return False
    pending = list(fields.values())
    while pending:
        item = pending.pop()
        if isinstance(item, dict):
            if "format_version" in item:
                return False
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return True


# --- the document read back, typed ----------------------------------------------------------


class LoadedFile(Record, frozen=True):
    """A file the session had in play, as the snapshot records it."""

    source: str | None  # how it came into play: read, edit, include...
    size: int | None  # its size when saved; None when it was not read
    excluded: bool  # it matched snapshot.exclude, and was not read
    outside_project: bool  # its real path is outside the project, and it was not read
    problem: str | None  # why it could not be read


class SessionState(Record, frozen=True):
    """The session-state file as the snapshot kept it."""

    kept: bool  # the snapshot holds its content (any JSON value, or its text when not JSON)
    content: object
    problem: str | None  # why it was not kept, when the snapshot says


class Document(Record, frozen=True):
    """A snapshot document's fields but its history, typed: the code outside Layer 1 reads a
    snapshot only through this (an architecture test holds it to that). The bytes are outside
    input until a root vouches for them, and hold outside text even then, so a field that is
    missing or of another type reads as absent (None, 0, empty), never as an error."""

    sequence: int | None
    instance_id: str | None
    previous_hash: str | None  # the predecessor's snapshot hash it names; None for a first
    lineage: list[str]  # the instances it descends from, oldest first
    cwd: str | None  # where the session ran
    agent: str | None  # whose session (None in snapshots written before other agents: Claude Code's)
    messages: int  # the user and assistant turns in its history
    loaded_files: dict[str, LoadedFile]
    session_state: SessionState

    @classmethod
    def of(cls, fields: dict) -> Document:
        session, previous = _table(fields, "session"), _table(fields, "previous")
        state, files = _table(fields, "session_state"), _table(fields, "loaded_files")
        lineage = fields.get("lineage")
        return cls(
            _typed(fields.get("sequence"), int),
            _typed(fields.get("instance_id"), str),
            _typed(previous.get("snapshot_hash"), str),
            [str(n) for n in lineage] if isinstance(lineage, list) else [],
            _typed(session.get("cwd"), str),
            _typed(session.get("agent"), str),
            _typed(_table(fields, "transcript").get("messages"), int) or 0,
            {str(name): _loaded_file(record) for name, record in files.items()},
            SessionState("content" in state, state.get("content"), _typed(state.get("problem"), str)),
        )


def _loaded_file(record: object) -> LoadedFile:
    found = record if isinstance(record, dict) else {}
    return LoadedFile(
        _typed(found.get("source"), str),
        _typed(found.get("size"), int),
        found.get("excluded") is True,
        found.get("outside_project") is True,
        _typed(found.get("problem"), str),
    )


def _table(fields: dict, key: str) -> dict:
    value = fields.get(key)
    return value if isinstance(value, dict) else {}


def _typed(value: object, kind: type[_Kind]) -> _Kind | None:
    """`value` if it is a `kind` (a bool is no int here), else None."""
    return value if isinstance(value, kind) and not isinstance(value, bool) else None


def instance_number(instance: str) -> int | None:
    """`"Gabriel #215"` -> 215; None when the name carries no `#<n>`."""
    match = re.search(r"#\s*(\d+)\s*$", instance)
    return int(match.group(1)) if match else None


class Session(Record, frozen=True):
    """What the agent tells the hook about the session. For an agent other than Claude Code,
    `transcript_path` is the conversation document read from its session file
    (transcript/agents.py), and `agent_transcript` that file."""

    session_id: str | None
    transcript_path: str | None
    cwd: str
    trigger: str = "manual"
    custom_instructions: str | None = None
    agent: str = "claude"
    agent_version: str | None = None
    agent_transcript: str | None = None


class Recovery(Record, frozen=True):
    """A savepoint made after a compaction, from the transcript (local/capture.py): only the
    entries before byte `end` (the compaction boundary's line) are read, and the snapshot and its
    index line say `reason`."""

    reason: str
    end: int


def _written_here(savepoint: savepoint_log.Savepoint) -> bool:
    return savepoint.written_here


class Unvouched(PrecompactError):
    """The savepoint a new one would follow has an index line no root vouches for; the message
    says what to move away."""


class Settings(Record, frozen=True):
    """The parts of the configuration Layer 1 needs."""

    instance: str
    logs: Path
    context_window: int = 200_000
    session_state: Path | None = None
    include: tuple[Path, ...] = ()
    exclude: tuple[str, ...] = ()
    file_cap_bytes: int = 256 * 1024
    redaction: bool = True
    extra_patterns: dict = field(default_factory=dict)
    # Whether a root vouches for a savepoint's index line, so that a new savepoint may follow it
    # (verifier.signed.vouching: this machine's tag, or the configured key's signature, which
    # only the caller may check). Without it, only this machine's own lines.
    vouched: Callable[[savepoint_log.Savepoint], bool] = _written_here
    # Whether the git layer is on: the refusal to save after a savepoint no root vouches for
    # names `precompact restore` only then.
    git_layer: bool = False
    # The instance the project's approved file names, which its hooks load (Config.configured_instance):
    # where a queue entry of an older precompact, which names none, is written.
    hooks_instance: str | None = None

    @classmethod
    def of(cls, config: Config, vouched: Callable[[savepoint_log.Savepoint], bool] = _written_here) -> Settings:
        """The settings a project's configuration gives Layer 1 (the hook's, with `vouched`:
        ops.compaction.layer_1)."""
        return cls(
            vouched=vouched,
            instance=config.instance,
            logs=config.logs,
            context_window=config.context_window,
            session_state=config.session_state,
            include=config.include,
            exclude=config.exclude,
            redaction=config.redaction,
            extra_patterns=dict(config.redaction_patterns),
            git_layer=config.git_layer,
            hooks_instance=config.configured_instance or config.instance,
        )


class WrittenSnapshot(Record, frozen=True):
    sequence: int
    path: Path
    sha256: str
    size: int
    prev_sha256: str | None
    event: dict
    # Transcript lines its history holds only in part (Savepoint.lines_in_part).
    lines_in_part: int = 0


def _second_with_a_free_name(now: datetime, sequence: int, named: set[str], saves: int) -> tuple[datetime, str]:
    """`now`, or the first second after it, whose snapshot name no savepoint of any instance
    holds and no file in precompact-saves/ has, with that name: the instances of one project
    number their savepoints from 1 each, and two saving savepoint N in one second would share a
    file (the later overwriting the earlier, here and on the git branch)."""
    while True:
        name = logs_dir.snapshot_name(now.strftime("%Y-%m-%dT%H-%M-%SZ"), sequence)
        try:
            os.stat(name.rsplit("/", 1)[1], dir_fd=saves, follow_symlinks=False)
        except FileNotFoundError:
            if name not in named:
                return now, name
        now += timedelta(seconds=1)


def create_savepoint(
    settings: Settings,
    session: Session,
    now: datetime | None = None,
    recovery: Recovery | None = None,
    lock_timeout: float = INDEX_LOCK_TIMEOUT_SECONDS,
) -> WrittenSnapshot:
    """Writes the next snapshot and appends its SAVEPOINT_CREATED event."""
    with savepoint_log.locked(settings.logs, lock_timeout):
        written = _create_locked(settings, session, now, recovery)
    _register(settings)
    return written


def _create_locked(
    settings: Settings,
    session: Session,
    now: datetime | None,
    recovery: Recovery | None,
    until: int | None = None,
    queued: str | None = None,
    queued_at: int | None = None,
    read_from: str | None = None,
) -> WrittenSnapshot:
    """`create_savepoint`'s work, the index lock held. `until`: the byte the transcript is read
    up to where `recovery` does not say; `queued`: the queue entry it is made from, named in the
    index line and removed once the line is appended; `queued_at`: when that entry's hook ran,
    kept in the index line and the snapshot beside the write's own time (the chain's timestamp,
    which never goes back), so that what reads them places the savepoint when its hook saw it;
    `read_from`: the file the transcript's bytes are read from, when not the one the session
    names (a queued entry's pinned document: transcript/agents.pin)."""
    index = savepoint_log.read(settings.logs)
    mine = savepoint_log.of_instance(index.savepoints, settings.instance)
    previous = mine[-1] if mine else None
    if previous is not None and not settings.vouched(previous):
        # Its hash would be this savepoint's predecessor: the chain would refuse every
        # savepoint from here on, and `verify` would never pass again.
        raise Unvouched(
            provenance.unvouched_note(settings.logs, [(previous.instance, previous.sequence)], settings.git_layer)
        )
    # Read under the lock, and never earlier than the previous savepoint: the program
    # refuses a timestamp that goes backwards, which would leave this savepoint (and all
    # after it) unpostable. Concurrent hooks and a clock stepped back must not cause that.
    now = now or datetime.now(UTC)
    if previous is not None and int(now.timestamp()) < previous.unix_timestamp:
        now = datetime.fromtimestamp(previous.unix_timestamp, UTC)
    lineage = index.lineage(settings.instance)
    sequence = previous.sequence + 1 if previous else 1
    prev_hash = previous.snapshot_hash if previous else None
    with logs_dir.directory(settings.logs, SAVES_DIR) as saves:
        # Snapshots are written only under this lock, so any temporary file seen now was
        # left by a writer that died (killed mid-write): never a snapshot, safe to remove.
        for stale in fnmatch.filter(os.listdir(saves), ".snapshot_*.tmp"):
            os.unlink(stale, dir_fd=saves)
        # A line that does not parse may be the one naming it (torn by a crash): none is
        # removed then (`doctor` names them, `verify` the line).
        for unindexed in [] if index.bad_lines else _unindexed(saves, index.savepoints):
            if (
                os.stat(unindexed, dir_fd=saves, follow_symlinks=False).st_mtime
                < time.time() - UNINDEXED_SNAPSHOT_SECONDS
            ):
                os.unlink(unindexed, dir_fd=saves)
        now, name = _second_with_a_free_name(now, sequence, {s.snapshot_file for s in index.savepoints}, saves)
        path = settings.logs.parent / name
        digest, size, facts = _write_snapshot(
            saves, path, settings, session, now, sequence, mine, lineage, recovery, until, queued_at, read_from
        )
    event = {
        "event": savepoint_log.Event.SAVEPOINT_CREATED,
        "timestamp": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "unix_timestamp": int(now.timestamp()),
        "instance": settings.instance,
        "sequence": sequence,
        "snapshot_hash": f"sha256:{digest}",
        "prev_snapshot_hash": f"sha256:{prev_hash}" if prev_hash else None,
        "snapshot_size_bytes": size,
        "snapshot_file": name,
        "trigger": session.trigger,
        "session_id": session.session_id,
        "layer_1_status": savepoint_log.LAYER_1_SAVED,
        "layer_2_status": savepoint_log.Layer2.PENDING,
        "layer_3_status": savepoint_log.Layer3.QUEUED,
        "tokens_used_this_session": facts["tokens"]["used"],
        "tokens_remaining": facts["tokens"]["remaining"],
        "context_utilization_percent": facts["tokens"]["utilization_percent"],
        "redactions": facts["redactions"],
        # What the session had last said: a later PreCompact finding the same keeps this savepoint.
        "last_said": facts["last_said"],
        # How far into the transcript this savepoint read, and what it holds: capture.py
        # finds a compaction no savepoint covers, and never briefs an empty one.
        "transcript_end": facts["transcript_end"],
        "messages": facts["messages"],
        # The compactions its history holds: one made after a compaction is that compaction's
        # (capture.compaction), which `uncompact` and `dropped` take by default.
        "compact_boundaries": facts["compact_boundaries"],
        # Transcript lines not saved whole (malformed, or longer than a line may be: kept as
        # their head, or the last one still being written): the note and the brief say "full"
        # only when there is none.
        "lines_in_part": facts["lines_in_part"],
        "agent": session.agent,
        "agent_version": session.agent_version,
    }
    if recovery is not None:
        event["recovered"] = recovery.reason
    if queued is not None:
        # A process killed between this line and the entry's removal leaves the entry: the
        # next one to take it finds it written (savepoint_log.from_queue_entry), never twice.
        event[savepoint_log.QUEUE_ENTRY] = queued
    if queued_at is not None:
        event[savepoint_log.QUEUED_AT] = queued_at
    savepoint_log.append(settings.logs, event)
    if queued is not None:
        _unqueue(settings.logs, queued)
    return WrittenSnapshot(sequence, path, digest, size, prev_hash, event, facts["lines_in_part"])


def _register(settings: Settings) -> None:
    """The project in this machine's registry (`precompact projects`, `recall --everywhere`),
    after the savepoint is written: a registry that cannot be written (damaged, a read-only home)
    never costs a savepoint; `precompact projects` names what is wrong with it."""
    from precompact.local import registry

    with contextlib.suppress(OSError, PrecompactError):
        registry.register(settings.logs.parent, settings.instance)


def queue(settings: Settings, session: Session, end: int | None = None, reason: str | None = QUEUED_REASON) -> str:
    """Leaves `session`'s savepoint to the worker (`write_queued`): the index lock stayed busy
    past what a hook may wait (other saves of large transcripts), or the save may not fit in
    what is left of the hook's timeout, and a hook that gave up, or was cut, would lose the
    savepoint. Where the transcript's whole lines end now (once a last line still being written
    has settled, as the hook's own read waits for it; or `end`, a recovery's: local/capture.py)
    bounds what the worker reads, so the savepoint holds what the hook would have saved, and
    never the part of a line written so far as a malformed line of its own; `reason` is what its
    index line then says it was recovered for (None: not a recovery, as SessionEnd's are not).
    The entry says what the hook saw (`_entry_header`, and the transcript's `TranscriptSeen`), so
    that the writer writes it as the hook would have, or not at all; another agent's document,
    which later reads rewrite, is pinned as the hook saw it (`_pin`), and the writer reads that.
    Stamped with this machine's key: a queue entry that came with the project is never read (it
    could name any file as a transcript). The entry's name, for `write_entry`."""
    seen = None
    pinned = _pin(settings, session)
    if session.transcript_path:
        from precompact.transcript import claude_code as transcript

        path = pinned or Path(session.transcript_path)
        if end is None:
            transcript.settle(path)
            end = transcript.whole_lines_end(path) if path.exists() else None
        seen = _transcript_seen(session, end)
    source = _session_file_seen(session, end, pinned)
    if pinned is not None and source is None:  # nothing of it to compare: no entry names the pin
        _unpin_leaf(settings.logs, pinned.name)
        pinned = None
    import orjson  # writing: a session start's brief reads with the standard library's json

    entry = {
        **_entry_header(settings),
        "session": session.as_dict(),
        "end": end,
        "reason": reason,
        "transcript": seen.as_dict() if seen is not None else None,
        # Its own key: a reader of this format from before it ignores it (and writes such an entry
        # unchecked, as it wrote them), never reading it as a Claude Code transcript's identity.
        **({"session_file": source.as_dict()} if source is not None else {}),
    }
    try:
        return _enqueue(settings, QUEUE_PURPOSE, orjson.dumps(entry), QUEUE_SUFFIX)
    except BaseException:
        if pinned is not None:  # no entry was written to name it
            _unpin_leaf(settings.logs, pinned.name)
        raise


def queue_unread(settings: Settings, session: Session) -> str:
    """Leaves the savepoint of another agent's `session` (a Codex rollout or a Gemini chat file,
    `Session.agent_transcript`, both only ever appended to) to the worker without reading it into
    the document: a SessionEnd's, which the agent cuts at its timeout (Codex's 3 s) while a long
    session's reading takes longer under load. The entry says how far the session file went and
    what its last bytes were (`UnreadSessionFile`); the writer reads it to there (`write_entry`),
    or, when it no longer holds them, says so and writes nothing. _TranscriptChanged when the
    session file cannot be read; the entry's name, for `write_entry`."""
    if not session.agent_transcript or session.transcript_path is not None:
        raise ValueError("an unread session file's entry names the session file and no document")
    seen = _unread_now(session.agent_transcript, None)
    import orjson

    entry = {
        **_entry_header(settings, QUEUE_FORMAT),
        "session": session.as_dict(),
        "end": None,
        "reason": None,
        "transcript": None,
        "unread_session_file": seen.as_dict(),
    }
    return _enqueue(settings, QUEUE_PURPOSE, orjson.dumps(entry), QUEUE_SUFFIX)


def _entry_header(settings: Settings, version: int = WRITTEN_FORMAT) -> dict:
    """What every queue entry says of its hook, in one place: the entry's format, the instance the
    hook was loaded as (its savepoint is that instance's, whatever instance the writer is
    loaded as: `precompact flush --instance`), and when the hook ran (`queued_at`, Unix seconds:
    the savepoint written from it keeps it, the write's own time being its chain timestamp)."""
    return {"version": version, "instance": settings.instance, "queued_at": int(time.time())}


class UnreadSessionFile(Record, frozen=True):
    """What the SessionEnd that queued a savepoint without reading its session file into the
    document (`queue_unread`) saw of that file: the file (`device`, `inode`), its size (`end`,
    how far the savepoint reads it) and the SHA-256 of its last TRANSCRIPT_TAIL_BYTES before
    `end`. docs/sessions.md, "a queued savepoint of another agent"."""

    device: int
    inode: int
    end: int
    tail_sha256: str


def _unread_now(path: str, end: int | None) -> UnreadSessionFile:
    """The session file at `path` now, up to `end` (None: its size now); _TranscriptChanged when it
    is gone, no file a reader may open, or shorter than `end`."""
    device, inode, end, tail = _tail_now(path, end, "session file")
    return UnreadSessionFile(device, inode, end, tail)


def _unread_changed(entry: QueueEntry) -> str | None:
    """How the session file of `entry`, queued unread, no longer holds what its hook saw (gone, no
    file a reader may open, another file, cut before the hook's end, or other bytes in its last
    TRANSCRIPT_TAIL_BYTES before it), None when it still does."""
    seen, session = entry.unread_session_file, entry.session
    assert seen is not None and session is not None and session.agent_transcript
    try:
        now = _unread_now(session.agent_transcript, seen.end)
    except _TranscriptChanged as e:
        return str(e)
    shown = quoting.inline(session.agent_transcript)
    if (now.device, now.inode) != (seen.device, seen.inode):
        return f"its session file {shown} is another file than the one the hook saw"
    if now.tail_sha256 != seen.tail_sha256:
        return f"its session file {shown} no longer holds the bytes the hook saw before byte {seen.end}"
    return None


class TranscriptSeen(Record, frozen=True):
    """What the hook saw of the transcript a queued savepoint reads up to its entry's end: the
    file (`device`, `inode`) and the SHA-256 of its last TRANSCRIPT_TAIL_BYTES before that end.
    Recorded for a transcript that is the agent's own file (Claude Code's); another agent's
    document is rebuilt from its session file (transcript/agents.py), so no file of it is the
    hook's to compare."""

    device: int
    inode: int
    tail_sha256: str


def _transcript_seen(session: Session, end: int | None) -> TranscriptSeen | None:
    """`session`'s transcript as it is now, up to `end` (None: not one to compare, or unreadable)."""
    from precompact.transcript import agents

    if end is None or session.agent_transcript or agents.is_held(session.transcript_path):
        return None
    try:
        return _seen_now(str(session.transcript_path), end)
    except _TranscriptChanged:
        return None


class _TranscriptChanged(PrecompactError):
    """The transcript no longer holds what its queue entry's hook saw; the message says how."""


def _seen_now(path: str, end: int) -> TranscriptSeen:
    """The file at `path` and the hash of its TRANSCRIPT_TAIL_BYTES before `end`; _TranscriptChanged
    when it is gone, no file a reader may open, or shorter than `end`."""
    device, inode, _, tail = _tail_now(path, end, "transcript")
    return TranscriptSeen(device, inode, tail)


def _tail_now(path: str, end: int | None, called: str) -> tuple[int, int, int, str]:
    """The file at `path` now (its device and inode), `end` (None: its size now) and the SHA-256 of
    its TRANSCRIPT_TAIL_BYTES before `end`; _TranscriptChanged, naming it as its `called`, when it
    is gone, no file a reader may open, or shorter than `end`."""
    shown = f"its {called} {quoting.inline(path)}"
    try:
        with session_file.open_read(path) as f:
            found = os.fstat(f.fileno())
            end = found.st_size if end is None else end
            if found.st_size < end:
                raise _TranscriptChanged(f"{shown} was cut since the hook ({found.st_size} of {end} bytes)")
            start = max(end - TRANSCRIPT_TAIL_BYTES, 0)
            f.seek(start)
            tail = f.read(end - start)
    except FileNotFoundError:
        raise _TranscriptChanged(f"{shown} is gone") from None
    except session_file.NotASessionFile as e:
        raise _TranscriptChanged(f"{shown} {e.strerror}") from None
    except OSError as e:
        raise _TranscriptChanged(f"{shown} cannot be read ({quoting.os_error(e)})") from None
    if len(tail) != end - start:
        raise _TranscriptChanged(f"{shown} was cut while it was read")
    return found.st_dev, found.st_ino, end, hashlib.sha256(tail).hexdigest()


def _transcript_changed(logs: Path, entry: QueueEntry, read_again: bool = True) -> str | None:
    """How the transcript of queued savepoint `entry` (of the project whose logs/ is `logs`) no
    longer holds what its hook saw (gone, no file a reader may open, another file, cut, or other
    bytes before its end), None when it still does, or when the entry recorded nothing to compare
    (written by version 1). A document its hook held (a forgotten project's: no pin is made) is
    read again from its session file and compared, unless not `read_again` (the writer, which
    reads it again itself): OpenCode's compaction rewrites the session, so such an entry is often
    one no writer will write, and `status`, `doctor` and a compaction's recovery
    (`queued_reach`) must know it before a writer says it."""
    if entry.unread_session_file is not None:
        return _unread_changed(entry)
    if entry.session_file is not None:
        changed = _session_file_changed(logs, entry)
        if changed is None and read_again and entry.session is not None:
            changed = _held_changed(logs, entry, entry.session)
        return changed
    if entry.session is None:
        return None
    if entry.transcript is None:
        return _unrecorded_changed(entry.session, entry.end)
    if entry.end is None:
        return None
    try:
        now = _seen_now(str(entry.session.transcript_path), entry.end)
    except _TranscriptChanged as e:
        return str(e)
    shown = quoting.inline(str(entry.session.transcript_path))
    if (now.device, now.inode) != (entry.transcript.device, entry.transcript.inode):
        return f"its transcript {shown} is another file than the one the hook read"
    if now.tail_sha256 != entry.transcript.tail_sha256:
        return f"its transcript {shown} no longer holds the bytes the hook saw before byte {entry.end}"
    return None


def _held_changed(logs: Path, entry: QueueEntry, session: Session) -> str | None:
    """`_session_file_changed` of an entry whose hook held its document, read again now from the
    session file (None for an entry whose document was kept, or pinned: compared already)."""
    from precompact.transcript import agents

    if not agents.is_held(session.transcript_path):
        return None
    try:
        with _read_again(session) as again:
            return _session_file_changed(logs, entry, str(again.transcript_path))
    except (OSError, ValueError) as e:  # the session gone from OpenCode's database, say
        return f"its session file {quoting.inline(str(session.agent_transcript))} cannot be read again ({quoting.os_error(e)})"


def _unrecorded_changed(session: Session, end: int | None) -> str | None:
    """How the transcript of a queued savepoint whose entry recorded nothing of what its hook saw
    (version 1's, or a hook that could not read it then) fails what can still be checked of it:
    there, a regular file a reader may open, and holding the `end` bytes the entry reads (a
    savepoint of a transcript gone would hold nothing). None when it passes, or for a document its
    hook held (the writer reads it again from its session file)."""
    from precompact.transcript import agents

    if not session.transcript_path or agents.is_held(session.transcript_path):
        return None
    called = "conversation document" if session.agent_transcript else "transcript"
    try:
        _tail_now(str(session.transcript_path), end, called)
    except _TranscriptChanged as e:
        return str(e)
    return None


class SessionFileSeen(Record, frozen=True):
    """What the hook saw of another agent's session (Codex's rollout, Gemini's chat file,
    OpenCode's database: `Session.agent_transcript`), whose conversation document the savepoint
    reads up to the entry's end: the session file (`device`, `inode`) and the SHA-256 of the
    document's last TRANSCRIPT_TAIL_BYTES before that end. The document kept in the state
    directory is precompact's own copy made at the hook, rewritten whole by later reads (a new
    file each time): its bytes are compared, never its identity, and the session file's identity
    only where the document is read again from it (one held for a forgotten project: gone with
    its hook). `pinned`: the document as the hook saw it (transcript/agents.pin), which the
    writer compares and reads instead (OpenCode rewrites earlier parts of a session at its
    compaction, so the document under its own name no longer holds what the hook saw); None where
    none was made (a held document), the document itself is. docs/sessions.md, "a queued
    savepoint of another agent"."""

    device: int
    inode: int
    document_tail_sha256: str
    pinned: str | None = None


def _pin(settings: Settings, session: Session) -> Path | None:
    """Another agent's document as the hook sees it now, under a name no later read replaces
    (transcript/agents.pin); None for Claude Code's transcript, a held document, or none made."""
    if not session.agent_transcript or not session.transcript_path:
        return None
    from precompact.transcript import agents

    if agents.is_held(session.transcript_path):
        return None
    leaf = agents.pin(settings.logs, str(session.transcript_path))
    return agents.pinned(settings.logs, leaf) if leaf is not None else None


def _session_file_seen(session: Session, end: int | None, pinned: Path | None) -> SessionFileSeen | None:
    """`SessionFileSeen` of another agent's `session` now, its document's bytes those `pinned`
    holds when the hook pinned it (None: Claude Code's, or unreadable)."""
    if end is None or not session.agent_transcript or not session.transcript_path:
        return None
    try:
        found = os.stat(session.agent_transcript)
        document = _seen_now(str(pinned or session.transcript_path), end)
    except (OSError, _TranscriptChanged):
        return None
    return SessionFileSeen(found.st_dev, found.st_ino, document.tail_sha256, pinned.name if pinned else None)


def _pinned_document(logs: Path, entry: QueueEntry) -> Path | None:
    """The document queue entry `entry`'s hook pinned, while it is there (None: none pinned, or
    gone: removed by hand, or the state directory lost; the document itself is compared then)."""
    from precompact.transcript import agents

    leaf = entry.session_file.pinned if entry.session_file is not None else None
    path = agents.pinned(logs, leaf) if leaf is not None else None
    return path if path is not None and path.is_file() else None


def _sweep_pins(logs: Path, entries: list[QueueEntry]) -> None:
    """Removes the pinned documents no queue entry names, made more than
    UNINDEXED_SNAPSHOT_SECONDS ago (a younger one may be a hook's whose entry is not written yet):
    a writer killed between an entry's removal and its pin's left them."""
    from precompact.transcript import agents

    named = {e.session_file.pinned for e in entries if e.session_file is not None and e.session_file.pinned}
    # An entry that cannot be read, or one another version of precompact stamped here, may name
    # one: none is swept then. One this machine never stamped names none this sweep must keep
    # (only a stamped entry's pin is read), so a file a repository puts in the queue cannot hold
    # the sweep back (review16a F4).
    if any(e.refused is not None or e.other_version is not None for e in entries):
        return
    agents.sweep_pins(logs, named, time.time() - UNINDEXED_SNAPSHOT_SECONDS)


def _unpin(logs: Path, entry: QueueEntry) -> None:
    """Removes the document queue entry `entry`'s hook pinned, once the entry is gone."""
    if entry.session_file is not None and entry.session_file.pinned is not None:
        _unpin_leaf(logs, entry.session_file.pinned)


def _unpin_leaf(logs: Path, leaf: str) -> None:
    from precompact.transcript import agents

    agents.unpin(logs, leaf)


def _session_file_changed(logs: Path, entry: QueueEntry, document: str | None = None) -> str | None:
    """How another agent's queued savepoint `entry` no longer holds what its hook saw, None when
    it still does (or recorded nothing to compare): its document (`document`, one read again from
    the session file, else the one the hook pinned, else the one it kept) gone, cut or holding
    other bytes before the entry's end; for a document the hook held (gone with it: read again
    from the session file), first a session file gone or another file than the hook's, and its
    bytes only once read again (`document`). A pinned document holding other bytes was altered
    since the hook: said, as any other."""
    from precompact.transcript import agents

    seen, session = entry.session_file, entry.session
    if seen is None or session is None or entry.end is None:
        return None
    if agents.is_held(str(session.transcript_path)):  # read again from the session file: that is compared first
        source = quoting.inline(str(session.agent_transcript))
        try:
            found = os.stat(str(session.agent_transcript))
        except FileNotFoundError:
            return f"its session file {source} is gone"
        except OSError as e:
            return f"its session file {source} cannot be read ({quoting.os_error(e)})"
        if (found.st_dev, found.st_ino) != (seen.device, seen.inode):
            return f"its session file {source} is another file than the one the hook read"
        if document is None:
            return None
    pinned = _pinned_document(logs, entry) if document is None else None
    path = document or str(pinned or session.transcript_path)
    # A pin gone (removed by hand, the state directory lost): the document under its own name is
    # compared, and a mismatch says why that one was.
    lost = f"; the copy its hook pinned ({seen.pinned}) is gone" if seen.pinned and not pinned and not document else ""
    try:
        now = _seen_now(path, entry.end)
    except _TranscriptChanged as e:
        return str(e).replace("its transcript", "its conversation document", 1) + lost
    if now.tail_sha256 == seen.document_tail_sha256:
        return None
    if document is not None:
        # A held document's name is a descriptor of the process that read it: the session file is named.
        return (
            f"its conversation document, read again from its session file {quoting.inline(str(session.agent_transcript))}, "
            f"no longer holds the bytes the hook saw before byte {entry.end} (the agent rewrote the session since, and "
            "a forgotten project's hook keeps no copy of what it saw)"
        )
    return (
        f"its conversation document {quoting.inline(path)} (of {quoting.inline(str(session.agent_transcript))}) "
        f"no longer holds the bytes the hook saw before byte {entry.end}{lost}"
    )


class QueuedSummary(Record, frozen=True):
    """A compaction summary PostCompact could not record (the index lock busy): the session's,
    redacted already, with the compaction's trigger and the agent (whose session is then given
    what the summary left out: ops/addendum.py), bound to its compaction's savepoint: `sequence`,
    once written; or, while that savepoint is queued, `savepoint_entry`, the queue entry it is
    written from, reading its transcript up to `transcript_end` (`queue_summary` binds it).
    `instance` and `queued_at` are its hook's (`_entry_header`; None in a version 1 entry)."""

    session_id: str
    sequence: int | None
    trigger: str | None
    summary: str
    agent: str
    savepoint_entry: str | None = None
    transcript_end: int | None = None
    instance: str | None = None
    queued_at: int | None = None


def queue_summary(settings: Settings, summary: QueuedSummary) -> str:
    """Leaves a compaction summary to the worker (`write_queued`), stamped as `queue`'s entries
    are: PostCompact's payload is the only place it exists, and a hook that gave up would lose it.
    One given no savepoint (`sequence` None: its savepoint is queued) is bound to the furthest
    savepoint queued for its session, which its compaction's hooks queued just before, or, when a
    writer wrote that one meanwhile, to the session's latest savepoint: never to whatever savepoint
    is the session's latest when the summary is recorded (a later compaction's).
    Its first QUEUED_SUMMARY_MAX_CHARS characters: a queue entry is read up to a bound. The
    entry's name, for `record_summary`."""
    import orjson

    header = _entry_header(settings)
    cut = summary.replace(
        summary=summary.summary[:QUEUED_SUMMARY_MAX_CHARS], instance=header["instance"], queued_at=header["queued_at"]
    )
    if cut.sequence is None and cut.savepoint_entry is None:
        cut = _bound(settings, cut)
    return _enqueue(settings, SUMMARY_PURPOSE, orjson.dumps({**header, **cut.as_dict()}), SUMMARY_SUFFIX)


def _bound(settings: Settings, summary: QueuedSummary) -> QueuedSummary:
    """`summary` bound to its compaction's savepoint (`queue_summary`)."""
    waiting = [
        entry
        for entry in queue_entries(settings.logs)
        if entry.session is not None
        and entry.session.session_id == summary.session_id
        and entry.instance in (None, settings.instance)
    ]
    if waiting:
        furthest = max(waiting, key=lambda entry: entry.end or 0)  # the first of equals: max keeps it
        return summary.replace(savepoint_entry=furthest.name, transcript_end=furthest.end)
    mine = _session_savepoints(settings, summary.session_id)
    return summary.replace(sequence=mine[-1].sequence) if mine else summary


def _enqueue(settings: Settings, purpose: str, entry: bytes, suffix: str) -> str:
    """A new queue entry holding `entry`; its name."""
    name = f"{time.time_ns():020d}-{os.getpid()}{suffix}"
    _store(settings, name, purpose, entry)
    return name


def _store(settings: Settings, name: str, purpose: str, entry: bytes) -> None:
    """Writes queue entry `name`, stamped for `purpose`; never larger than its readers read."""
    stored = provenance.stamped(purpose, entry)
    if len(stored) > QUEUE_ENTRY_MAX_BYTES:  # the event's own fields (a path, instructions) that long
        raise OSError(errno.EFBIG, f"the queue entry would be {len(stored)} bytes, over {QUEUE_ENTRY_MAX_BYTES}")
    logs_dir.write_atomic(settings.logs, f"{QUEUE_DIR}/{name}", stored)


def queued(logs: Path) -> list[str]:
    """The queue entries waiting for the worker, oldest first."""
    try:
        with logs_dir.directory(logs, QUEUE_DIR, create=False) as waiting:
            return sorted(name for name in os.listdir(waiting) if QUEUE_ENTRY.fullmatch(name))
    except FileNotFoundError:
        return []


class QueueEntry(Record, frozen=True):
    """A queue entry as read: a savepoint's (`session`, read up to `end`, recovered for `reason`,
    its transcript as the hook saw it: `transcript`), a compaction summary's (`summary`), or
    neither: one this machine did not make (no stamp of its key), `refused` (why it is no file
    precompact writes: a link, a FIFO, over QUEUE_ENTRY_MAX_BYTES), or `other_version` (stamped
    here, but by a precompact whose entries this one cannot read: what it found). `instance` and
    `queued_at` are its hook's (None in a version 1 entry)."""

    name: str
    session: Session | None = None
    end: int | None = None
    reason: str | None = None
    transcript: TranscriptSeen | None = None
    session_file: SessionFileSeen | None = None
    unread_session_file: UnreadSessionFile | None = None
    summary: QueuedSummary | None = None
    refused: str | None = None
    other_version: str | None = None
    instance: str | None = None
    queued_at: int | None = None
    # The format it was written in (None: one this version does not read); a writer that writes
    # it again writes that format (`_summary_entry`).
    version: int | None = None


def queue_entries(logs: Path) -> list[QueueEntry]:
    """Each entry of the queue as it reads now, oldest first (one written meanwhile, and so gone,
    is left out). Nothing is followed, and nothing read past the bound of what precompact writes."""
    found = []
    for name in queued(logs):
        try:
            stored = _read_entry(logs, name)
        except OSError as e:  # ConfinementError: a link, not a regular file, oversized; or unreadable
            found.append(QueueEntry(name, refused=quoting.os_error(e)))
            continue
        if stored is not None:
            found.append(_parsed(name, stored))
    return found


def is_summary_entry(name: str) -> bool:
    """Whether queue entry `name` (of either format's names) holds a compaction summary."""
    found = QUEUE_ENTRY.fullmatch(name)
    return bool(found and found.group(1))


def _parsed(name: str, stored: bytes) -> QueueEntry:
    """Queue entry `name` as `stored` reads (`QueueEntry`): the one reader of its format."""
    import orjson

    summary_kind = is_summary_entry(name)
    data = provenance.made_here(SUMMARY_PURPOSE if summary_kind else QUEUE_PURPOSE, stored)
    if data is None:
        return QueueEntry(name)
    try:
        found = orjson.loads(data)
    except orjson.JSONDecodeError:
        found = None
    if not isinstance(found, dict):
        return QueueEntry(name, other_version="not a JSON object")
    version = found.get("version", 1)
    if type(version) is not int:
        return QueueEntry(name, other_version="a format this version does not read")
    if not 1 <= version <= QUEUE_FORMAT:
        return QueueEntry(name, other_version=f"format {version}, this version reads 1 to {QUEUE_FORMAT}")
    instance, queued_at = found.get("instance"), found.get("queued_at")
    if version > 1 and (not isinstance(instance, str) or type(queued_at) is not int):
        return QueueEntry(name, other_version="no instance or time of its hook")
    header = {"instance": instance if version > 1 else None, "queued_at": queued_at if version > 1 else None}
    if summary_kind:
        summary = _queued_summary(found)
        if summary is None:
            return QueueEntry(name, other_version="a compaction summary whose fields this version does not read")
        return QueueEntry(name, summary=summary.replace(**header), version=version, **header)
    read = _queued_session(found)
    if read is None:
        return QueueEntry(name, other_version="a savepoint whose fields this version does not read")
    return QueueEntry(name, **read, version=version, **header)


def _read_entry(logs: Path, name: str) -> bytes | None:
    """Queue entry `name` as stored, read no further than precompact writes one (ConfinementError
    past that, or for a link or anything but a regular file); None when another process has
    taken it since it was listed."""
    try:
        return logs_dir.read_bytes(logs, f"{QUEUE_DIR}/{name}", limit=QUEUE_ENTRY_MAX_BYTES)
    except FileNotFoundError:
        return None


def queued_reach(logs: Path, session_id: str | None) -> int:
    """How far into its transcript the furthest savepoint queued for `session_id` will read (0
    for none, or one whose end is unknown): local/capture.py counts it as covered, as the
    worker will write it. Only an entry this machine made and a writer will write counts (not
    one whose transcript no longer holds what its hook saw); a queue that cannot be read counts
    none (its writer says why, not a hook)."""
    try:
        entries = queue_entries(logs) if session_id else []
    except OSError:  # ConfinementError: its folder is a link, say
        return 0
    return max(
        (
            entry.end
            for entry in entries
            if entry.session is not None
            and entry.session.session_id == session_id
            and entry.end is not None
            # One no writer will write covers nothing: the session's savepoint is recovered instead.
            and _transcript_changed(logs, entry) is None
        ),
        default=0,
    )


class QueueState(Record, frozen=True):
    """The queue as its writers will act on it: how many savepoints and compaction summaries of
    this machine's a writer will write (`savepoints`, `summaries`), and the entries none will: a
    savepoint whose transcript no longer holds what its hook saw, with the summaries bound to it
    (`never`: each name and why), and another precompact version's (`others`: each name). Entries
    this machine did not make are none of these: the next writer removes them unread."""

    savepoints: int = 0
    summaries: int = 0
    never: tuple[tuple[str, str], ...] = ()
    others: tuple[str, ...] = ()

    @property
    def work(self) -> bool:
        """Whether a writer has something to do (the worker's "is anything queued")."""
        return bool(self.savepoints or self.summaries)


def queue_state(logs: Path) -> QueueState:
    """`QueueState` of the queue as it reads now (OSError when its folder cannot be read: a link,
    say)."""
    entries = queue_entries(logs)
    never = [
        (entry.name, why)
        for entry in entries
        if entry.session is not None
        for why in [_transcript_changed(logs, entry)]
        if why
    ]
    given_up = {name for name, _why in never}
    for entry in entries:
        waits_for = _waits_for(entry, entries)
        if waits_for in given_up:
            never.append((entry.name, f"its savepoint's entry {waits_for} is never written"))
    never_names = {name for name, _why in never}
    return QueueState(
        savepoints=sum(entry.session is not None and entry.name not in never_names for entry in entries),
        summaries=sum(entry.summary is not None and entry.name not in never_names for entry in entries),
        never=tuple(never),
        others=tuple(entry.name for entry in entries if entry.other_version is not None),
    )


def _waits_for(entry: QueueEntry, entries: list[QueueEntry]) -> str | None:
    """The savepoint queue entry whose savepoint compaction summary entry `entry` is recorded with
    (None: not a summary, or bound to a savepoint, or none queued): the one it names, or, for
    one queued unbound (version 1's, "the session's latest"), its session's last entry queued
    before it, which its compaction's hooks queued just before it."""
    summary = entry.summary
    if summary is None:
        return None
    if summary.savepoint_entry is not None or summary.sequence is not None:
        return summary.savepoint_entry
    before = [
        other.name
        for other in entries
        if other.session is not None and other.session.session_id == summary.session_id and other.name < entry.name
    ]
    return before[-1] if before else None


def queued_savepoints(logs: Path) -> int:
    """How many savepoints this machine's hooks left queued that a writer will write (entries it
    did not make, and one whose transcript no longer holds what its hook saw, are not counted; a
    queue that cannot be read counts none: `queued_notice` says why)."""
    try:
        return queue_state(logs).savepoints
    except OSError:
        return 0


def queued_work(logs: Path) -> bool:
    """Whether the queue holds an entry a writer will write (the worker goes round again for one
    queued while it ran); never for entries no writer will write, which would keep it busy for
    good. A queue that cannot be read holds none (`queued_notice` says why)."""
    try:
        return queue_state(logs).work
    except OSError:
        return False


def drop_hint(name: str) -> str:
    """The fix that gives queue entry `name` up, as every line naming one says it."""
    return f"`precompact flush --drop-queued {name}` gives it up"


def clock_behind(logs: Path, instance: str, now: float | None = None) -> str | None:
    """While this machine's clock is behind the newest savepoint's time (set back since it was
    written), what that means, once: each savepoint written until the clock passes that time keeps
    it (`_write`: the program refuses a time going back). None when the clock is past it."""
    saved = savepoint_log.savepoints(logs, instance)
    if not saved:
        return None
    newest = saved[-1]
    behind = newest.unix_timestamp - int(time.time() if now is None else now)
    if behind <= CLOCK_SLACK_SECONDS:
        return None
    return (
        f"this machine's clock is {_duration(behind)} behind savepoint {newest.sequence}'s time "
        f"({quoting.timestamp(newest.timestamp)}): it was set back, and each savepoint written until it "
        "passes that time is given that time (a savepoint's time never goes back)"
    )


def _duration(seconds: int) -> str:
    for unit, size in (("day", 86_400), ("hour", 3_600), ("minute", 60)):
        if seconds >= size:
            return f"{seconds // size} {unit}(s)"
    return f"{seconds} second(s)"


def queued_notice(logs: Path) -> str | None:
    """What every command says while savepoints or compaction summaries this machine queued are
    not written yet, naming each entry no writer will write with the fix that gives it up, and
    while entries of another precompact version wait for that version's writer (None: none are).
    Entries it did not make are not counted: they hold nothing of its, and the next writer removes
    them unread."""
    try:
        state = queue_state(logs)
    except OSError as e:  # ConfinementError: its folder is a link, say
        return f"the queue of what hooks could not write (logs/{QUEUE_DIR}/) cannot be read: {quoting.os_error(e)}"
    said = [f"{state.savepoints} savepoint(s)"] if state.savepoints else []
    said += [f"{state.summaries} compaction summary(ies)"] if state.summaries else []
    queued_here = (
        f"{' and '.join(said)} queued by a hook for the background worker and not written yet "
        f"(logs/{QUEUE_DIR}/): run `precompact flush`"
    )
    notices = [queued_here] if said else []
    notices += [
        f"queue entry logs/{QUEUE_DIR}/{name} is never written ({why}): {drop_hint(name)}" for name, why in state.never
    ]
    if state.others:
        notices.append(
            f"{len(state.others)} queue entry(ies) in logs/{QUEUE_DIR}/ {ANOTHER_VERSION}, "
            f"or `precompact flush --drop-queued NAME` gives one up ({', '.join(state.others)})"
        )
    return "; ".join(notices) or None


# Given the instance's savepoints under the index lock, a queued savepoint's session (its
# document as read again) and the byte its entry reads to: the session's savepoint that already
# holds what it would (local/capture.holder), or None.
Held = Callable[[list[savepoint_log.Savepoint], Session, int | None], savepoint_log.Savepoint | None]


class QueuedWritten(Record):
    """What `write_queued` did: how many savepoints it wrote, one line for each entry it removed
    unread, left unwritten as held already, or could not write (naming why), how many of this
    machine's entries it left queued, and how many of those failed (not the index lock: the
    user's to fix)."""

    savepoints: int = 0
    notes: list[str] = field(default_factory=list)
    left: int = 0
    failed: int = 0


def write_queued(settings: Settings, held: Held, summary_recorded: Callable[[QueuedSummary], None]) -> QueuedWritten:
    """Writes the savepoint or the compaction summary of each queue entry (waiting for the index
    lock, at each entry, as long as a save of a large transcript can take), oldest first;
    `summary_recorded` is told of each summary once it is recorded (its savepoint's sequence
    filled in), before its entry is removed. An entry this machine did not make, or that is no
    file precompact writes (a link, a FIFO, oversized), is removed unread; one of another
    precompact version is left queued, said and counted failed, as are a savepoint whose
    transcript no longer holds what its hook saw and a summary whose savepoint is missing
    (`write_entry`, `record_summary`). A savepoint that `held` finds held already is not written
    again. One entry that fails is said and left queued, and the rest are written all the same, but for
    a summary waiting for its session's queued savepoint; the index lock busy past the wait stops
    the run (every entry would wait as long)."""
    return _write_queue(settings, held, lambda: QUEUED_LOCK_TIMEOUT_SECONDS, summary_recorded)


def write_queued_savepoints(settings: Settings, held: Held, lock_timeout: float) -> QueuedWritten:
    """For a session start after a compaction: the queue's savepoints up to its first compaction
    summary, written as `write_queued` writes them but within `lock_timeout` in all, so that a
    savepoint PreCompact queued is briefed, and never recovered a second time. A summary, and
    what follows it, stays for the worker: it records the summary with the savepoint it follows
    and asks for what the summary left out. So does an entry none of this machine's: the worker
    removes it and says so in its log, which a hook has none of."""
    until = time.monotonic() + lock_timeout
    return _write_queue(settings, held, lambda: max(until - time.monotonic(), 0.0), None)


def _write_queue(
    settings: Settings,
    held: Held,
    lock_wait: Callable[[], float],
    summary_recorded: Callable[[QueuedSummary], None] | None,
) -> QueuedWritten:
    """`write_queued`, or with no `summary_recorded` `write_queued_savepoints`, each entry
    waiting `lock_wait()` for the index lock."""
    done = QueuedWritten()
    stuck: set[str | None] = set()  # sessions whose queued savepoint is not written: their summary waits with it
    entries = queue_entries(settings.logs)
    if summary_recorded is not None:  # the worker's and flush's: a hook leaves the sweep to them
        _sweep_pins(settings.logs, entries)
    for position, entry in enumerate(entries):
        shown = f"logs/{QUEUE_DIR}/{entry.name}"
        session, summary = entry.session, entry.summary
        if summary is not None and summary_recorded is None:
            done.left += sum(1 for rest in entries[position:] if rest.session or rest.summary)
            break
        if entry.other_version is not None:
            if summary_recorded is not None:  # the worker's and flush's to say; a hook logs nothing
                done.left += 1
                done.failed += 1
                done.notes.append(f"queue entry {shown} {ANOTHER_VERSION} ({entry.other_version})")
            continue
        if session is None and summary is None:
            if summary_recorded is None:
                continue
            # A refusal's own advice ("remove it") is what this does.
            why = re.sub(r"[:;] remove it$", "", entry.refused) if entry.refused else NOT_STAMPED
            removed, said = _remove_unread(settings.logs, entry.name, f"queue entry {shown} {{}}: {why}")
            done.notes.append(said)
            if not removed:  # still there, the user's to remove: no worker goes round for it
                done.left += 1
                done.failed += 1
            continue
        try:
            if session is not None:
                taken = write_entry(settings, entry.name, lock_wait(), held)
                done.savepoints += taken.written is not None
                if taken.held_by is not None:
                    done.notes.append(
                        f"queued savepoint {shown} not written again: savepoint {taken.held_by.sequence} of its session holds what it would"
                    )
                if taken.written is not None and taken.written.event["instance"] != settings.instance:
                    instance = quoting.inline(taken.written.event["instance"])
                    whose = (
                        "the instance its hook saved to"
                        if entry.instance is not None
                        else "the instance the project's configuration names, which its hook (an older precompact's, naming none) saved to"
                    )
                    done.notes.append(
                        f"queued savepoint {shown} written as savepoint {taken.written.sequence} of {instance}, {whose}: `precompact flush --instance {instance}` takes it to Layers 2 and 3"
                    )
                if taken.left is not None:
                    done.left += 1
                    done.failed += 1
                    stuck.add(session.session_id)
                    done.notes.append(f"queued savepoint {shown} not written: {taken.left}")
                if taken.given_up is not None:
                    done.failed += 1
                    done.notes.append(f"queued savepoint {shown} not written, and removed: {taken.given_up}")
            elif summary is not None and summary.sequence is None and summary.session_id in stuck:
                done.left += 1  # it belongs to the savepoint left queued: recorded with it, later
            elif summary is not None and summary_recorded is not None:
                outcome = record_summary(settings, entry.name, lock_wait(), summary_recorded)
                if outcome.note is not None:
                    done.notes.append(f"queued summary {shown} {outcome.note}")
                done.left += outcome.left
                done.failed += outcome.failed
        except savepoint_log.LockTimeout as e:
            done.left += sum(1 for rest in entries[position:] if rest.session or rest.summary)
            done.notes.append(f"queued savepoints not written yet: {e}")
            break
        except PrecompactError as e:
            _not_written(done, stuck, session, f"queued {'savepoint' if session else 'summary'} {shown}", str(e))
        except OSError as e:
            _not_written(
                done, stuck, session, f"queued {'savepoint' if session else 'summary'} {shown}", quoting.os_error(e)
            )
    return done


def _not_written(done: QueuedWritten, stuck: set, session: Session | None, what: str, why: str) -> None:
    """Counts queue entry `what` as failed and left (its session's later entries wait for it)."""
    done.left += 1
    done.failed += 1
    stuck.add(session.session_id if session else None)
    done.notes.append(f"{what} not written yet: {why}")


class Taken(Record, frozen=True):
    """What `write_entry` did with a queue entry: `written`, the savepoint it wrote; `held_by`, a
    savepoint of its session that already holds what it would (the entry removed unwritten);
    `left`, why the entry is left queued, unwritten, for the user (another version's entry, or a
    transcript that no longer holds what its hook saw); none of these: another process wrote it
    first (the entry gone, or an index line naming it), or it is none of this machine's (removed
    unread)."""

    written: WrittenSnapshot | None = None
    held_by: savepoint_log.Savepoint | None = None
    left: str | None = None
    # Why the entry was removed unwritten: its session file, queued unread, cannot be read into a
    # document (a line longer than a reader reads), which no later writer would do either.
    given_up: str | None = None


def _hooks_settings(settings: Settings, entry: QueueEntry) -> Settings:
    """The settings its hook saved with: the writer's, in the instance the hook was loaded as. A
    version 1 entry names none; its hook loaded the instance the project's approved file names
    (hooks take no --instance and drop PRECOMPACT_INSTANCE), so that one, whatever instance the
    writer was loaded as (`precompact flush --instance`): never another instance's chain."""
    instance = entry.instance if entry.instance is not None else settings.hooks_instance or settings.instance
    return settings if instance == settings.instance else settings.replace(instance=instance)


def write_entry(settings: Settings, name: str, lock_timeout: float, held: Held) -> Taken:
    """Writes the savepoint of the queue entry `name`, in the instance its hook was loaded as, and
    removes the entry, under one hold of the index lock (the hook that queued it, the worker,
    `precompact flush` or a compaction's session start: whichever takes the lock first), unless
    it is written already: its entry gone, or an index line naming it (a writer killed between
    that line and the entry's removal), or `held` finding a savepoint of its session that holds
    what it would (one compaction's events each queued it, or a later save of the session came
    first). Its index line keeps the hook's time (`queued_at`). Left queued, unwritten (`left`):
    an entry of another precompact version, and one whose transcript no longer holds what its
    hook saw (gone, no file, another file, cut or rewritten: a savepoint of it would hold nothing,
    part, or other bytes). Another agent's document the hook pinned is read from the pin (what the
    hook saw, whatever OpenCode rewrote since), and the pin removed with the entry. A forgotten
    project's document is read again from its session file (`_read_again`), and `held` reads that
    one. LockTimeout when the lock stays busy past `lock_timeout`."""
    with savepoint_log.locked(settings.logs, lock_timeout):
        stored = _read_entry(settings.logs, name)
        if stored is None:
            return Taken()
        entry = _parsed(name, stored)
        if entry.other_version is not None:
            return Taken(left=f"{ANOTHER_VERSION} ({entry.other_version})")
        session, end, reason = entry.session, entry.end, entry.reason
        if session is None or savepoint_log.from_queue_entry(settings.logs, name):
            _unqueue(settings.logs, name)
            _unpin(settings.logs, entry)
            return Taken()
        changed = _transcript_changed(settings.logs, entry, read_again=False)  # read again below
        if changed is not None:
            return Taken(left=f"{changed}; no savepoint is made of it: {drop_hint(name)}")
        hooks = _hooks_settings(settings, entry)
        if entry.unread_session_file is not None:
            return _write_unread(hooks, entry, name, held)
        pinned = _pinned_document(settings.logs, entry)
        with _read_again(session) as again:
            if again is not session:  # a held document, read again now: it is what is compared
                changed = _session_file_changed(settings.logs, entry, str(again.transcript_path))
                if changed is not None:
                    return Taken(left=f"{changed}; no savepoint is made of it: {drop_hint(name)}")
            # What is read: the document as the hook pinned it, whose bytes were just compared.
            reads = again.replace(transcript_path=str(pinned)) if pinned is not None else again
            holder = held(savepoint_log.savepoints(hooks.logs, hooks.instance), reads, end)
            if holder is not None:
                _unqueue(settings.logs, name)
                _unpin(settings.logs, entry)
                return Taken(held_by=holder)
            recovery = Recovery(reason, end) if reason is not None and end is not None else None
            written = _create_locked(
                hooks,
                again,
                None,
                recovery,
                until=end,
                queued=name,
                queued_at=entry.queued_at,
                read_from=reads.transcript_path,
            )
            _unpin(settings.logs, entry)
    _register(hooks)
    return Taken(written=written)


def _write_unread(settings: Settings, entry: QueueEntry, name: str, held: Held) -> Taken:
    """`write_entry` for a savepoint queued with its session file unread (`queue_unread`), its
    session file checked already: the file read up to the hook's end into the document (kept
    where the project keeps documents, else held for the write: local/registry.keeps_outside),
    and written from it as the hook once did. Nothing said in it: the entry is removed, as that
    hook saved nothing then."""
    from precompact.local import registry
    from precompact.transcript import agents, conversation
    from precompact.transcript import claude_code as transcript

    session, seen = entry.session, entry.unread_session_file
    assert session is not None and session.agent_transcript and seen is not None
    try:
        with agents.reading(
            session.agent,
            settings.logs,
            session.agent_transcript,
            session.session_id,
            kept=registry.keeps_outside(settings.logs.parent),
            until=seen.end,
        ) as read:
            document = Path(read.transcript_path)
            again = session.replace(transcript_path=read.transcript_path, agent_version=read.version)
            end = transcript.whole_lines_end(document)
            said = conversation.last_said(document)
            if said is None:
                _unqueue(settings.logs, name)
                return Taken()
            saved = savepoint_log.savepoints(settings.logs, settings.instance)
            mine = [s for s in saved if s.session_id == session.session_id]
            # What the session said last is its latest savepoint's: it said nothing since.
            holder = mine[-1] if mine and mine[-1].last_said == said else held(saved, again, end)
            if holder is not None:
                _unqueue(settings.logs, name)
                return Taken(held_by=holder)
            written = _create_locked(settings, again, None, None, until=end, queued=name, queued_at=entry.queued_at)
    except session_file.LineTooLong as e:
        _unqueue(settings.logs, name)
        return Taken(given_up=f"its session file cannot be read into a document ({quoting.os_error(e)})")
    _register(settings)
    return Taken(written=written)


class CannotDrop(PrecompactError):
    """A queue entry `drop_queued` may not give up (none of that name, or one a writer will still
    write); the message names the fix."""


def drop_queued(settings: Settings, given: str, lock_timeout: float = INDEX_LOCK_TIMEOUT_SECONDS) -> list[str]:
    """Gives up the queue entry `given` (its name, or a path ending in it: `precompact flush
    --drop-queued`), under the index lock, and the compaction summaries bound to it (each would be
    recorded on another savepoint of its session); the names removed. Only an entry no writer will
    write: a savepoint whose transcript no longer holds what its hook saw, another precompact
    version's, one that is no file precompact writes or none of this machine's, or a summary whose
    savepoint is missing or never written. One a writer can still write is never given up
    (CannotDrop: `precompact flush` writes it): dropping it would lose a savepoint."""
    name = given.rstrip("/").rsplit("/", 1)[-1]
    shown = f"logs/{QUEUE_DIR}/{quoting.inline(name)}"
    if not QUEUE_ENTRY.fullmatch(name):
        raise CannotDrop(
            f"{quoting.inline(given)} names no queue entry; `precompact status` names those no writer writes"
        )
    with savepoint_log.locked(settings.logs, lock_timeout):
        try:
            stored = _read_entry(settings.logs, name)
        except OSError:  # no file precompact writes (a link, a directory, oversized): removed unread
            stored = b""
        if stored is None:
            raise CannotDrop(
                f"no queue entry {shown} (written or given up already); `precompact status` names those left"
            )
        entry = _parsed(name, stored) if stored else QueueEntry(name, refused="no file precompact writes")
        if _writable(settings, entry):
            raise CannotDrop(
                f"queue entry {shown} can still be written: run `precompact flush`; "
                "only an entry no writer will write (`precompact status` names each) is given up"
            )
        entries = queue_entries(settings.logs)
        bound = [other.name for other in entries if entry.session is not None and _waits_for(other, entries) == name]
        for each in (name, *bound):
            try:
                logs_dir.remove(settings.logs, f"{QUEUE_DIR}/{each}")
            except OSError as e:  # a directory of that name, say
                raise CannotDrop(
                    f"queue entry logs/{QUEUE_DIR}/{quoting.inline(each)} could not be removed ({quoting.os_error(e)}); remove it"
                ) from None
        _unpin(settings.logs, entry)
    return [name, *bound]


def _writable(settings: Settings, entry: QueueEntry) -> bool:
    """Whether a writer will write queue entry `entry` (read under the index lock)."""
    if entry.other_version is not None or (entry.session is None and entry.summary is None):
        return False
    if entry.session is not None:
        return _transcript_changed(settings.logs, entry) is None
    assert entry.summary is not None
    waits_for = entry.summary.savepoint_entry
    if waits_for is not None and entry.summary.sequence is None and waits_for in queued(settings.logs):
        try:
            stored = _read_entry(settings.logs, waits_for)
        except OSError:  # no file precompact writes: the next writer removes it unread and
            return True  # records the summary with the savepoint of its session that holds it
        return stored is None or _writable(settings, _parsed(waits_for, stored))
    hooks = _hooks_settings(settings, entry)
    bound = _summary_savepoint(hooks, savepoint_log.read(settings.logs), entry.summary)
    return not (isinstance(bound, Summarised) and bound.failed)


@contextlib.contextmanager
def _read_again(session: Session) -> Iterator[Session]:
    """`session` as queued; one whose document the queueing hook held for its own length (a
    forgotten project's: transcript/agents.held, gone with that hook) with its document read
    again from its session file, held here in turn: still nothing kept outside the project."""
    from precompact.transcript import agents

    if not agents.is_held(session.transcript_path) or not session.agent_transcript:
        yield session
        return
    with agents.held(session.agent, session.agent_transcript, session.session_id) as read:
        yield session.replace(transcript_path=read.transcript_path)


def _remove_unread(logs: Path, name: str, said: str) -> tuple[bool, str]:
    """Removes queue entry `name` (a link itself, never what it names): whether it could, and
    `said` with how it went."""
    try:
        logs_dir.remove(logs, f"{QUEUE_DIR}/{name}")
    except OSError as e:  # a directory of that name, say: left, and said each time
        return False, said.format(f"could not be removed ({quoting.os_error(e)}; remove it)")
    return True, said.format("removed unread")


def _unqueue(logs: Path, name: str) -> None:
    with logs_dir.directory(logs, QUEUE_DIR) as waiting, contextlib.suppress(FileNotFoundError):
        os.unlink(name, dir_fd=waiting)  # gone: another process removed it first


class Summarised(Record, frozen=True):
    """What `record_summary` did with a queued compaction summary: `left` 1 when it stays queued
    (its savepoint still queued, or `failed`: another version's entry, or its savepoint missing,
    the user's to see), and a `note` saying why, or how it was kept."""

    left: int = 0
    failed: int = 0
    note: str | None = None


def record_summary(
    settings: Settings, name: str, lock_timeout: float, recorded: Callable[[QueuedSummary], None]
) -> Summarised:
    """Records the queued compaction summary `name` with its compaction's savepoint, in the
    instance its hook was loaded as, tells `recorded` (the addendum is asked for there), then
    removes the entry, all under one hold of the index lock: a process killed anywhere in between
    leaves the entry, and the next one to take it records the summary once (the savepoint it was
    for is written into the entry first, and its line names the entry) and tells `recorded`
    again, so what follows from it is never lost. Its savepoint is the one it names, or the one
    written from the queue entry it names (`queue_summary`); that entry dropped as held, the
    savepoint that held it, unless that savepoint was made after the summary's hook or a later
    compaction's summary of the session is recorded: then it is kept as an
    EARLIER_COMPACT_SUMMARY of that savepoint, never its summary, and `recorded` is not told (no
    addendum is asked for what an earlier compaction's summary left out). An entry gone meanwhile was recorded by another writer; one that is none of
    this machine's is removed; one whose savepoint is still queued waits; one of another version,
    or whose savepoint is missing, is left queued and counted failed. LockTimeout when the index
    lock stays busy past `lock_timeout` (the entry then waits for the worker)."""
    with savepoint_log.locked(settings.logs, lock_timeout):
        stored = _read_entry(settings.logs, name)
        if stored is None:  # taken by another process meanwhile
            return Summarised()
        entry = _parsed(name, stored)
        if entry.other_version is not None:
            return Summarised(1, 1, f"not recorded: {ANOTHER_VERSION} ({entry.other_version})")
        summary = entry.summary
        if summary is None:
            _unqueue(settings.logs, name)
            return Summarised()
        hooks = _hooks_settings(settings, entry)
        index = savepoint_log.read(settings.logs)
        bound = _summary_savepoint(hooks, index, summary)
        if isinstance(bound, Summarised):
            return bound
        savepoint, earlier = bound
        unbound = summary.sequence is None and summary.savepoint_entry is None
        summary = summary.replace(sequence=savepoint.sequence, instance=hooks.instance)
        if unbound:
            # Bound for good: a later savepoint of the session must not take it over when a
            # killed or failed writer's successor records it.
            _store(settings, name, SUMMARY_PURPOSE, _summary_entry(entry, summary))
        kind = index.from_queue_entry(name)
        if kind is None:
            kind = savepoint_log.Event.EARLIER_COMPACT_SUMMARY if earlier else savepoint_log.Event.COMPACT_SUMMARY
            line = savepoint_log.marked(
                savepoint,
                kind,
                trigger=summary.trigger,
                summary=summary.summary,
                **({savepoint_log.QUEUED_AT: summary.queued_at} if summary.queued_at is not None else {}),
                **{savepoint_log.QUEUE_ENTRY: name},
            )
            savepoint_log.append(settings.logs, {**line, "timestamp": savepoint_log.utc_timestamp()})
        note = None
        if kind == savepoint_log.Event.EARLIER_COMPACT_SUMMARY:
            note = (
                f"kept with savepoint {savepoint.sequence} of its session as an earlier compaction's summary: its own "
                "savepoint was not written (a later one held it), and a later compaction's summary is that savepoint's"
            )
        else:
            # Under the lock still, so that no other process takes the entry until it is removed.
            recorded(summary)
        _unqueue(settings.logs, name)
        return Summarised(note=note)


# What a summary entry of version 1 holds: that version removes unread an entry with other fields.
_VERSION_1_SUMMARY_FIELDS = ("session_id", "sequence", "trigger", "summary", "agent")


def _summary_entry(entry: QueueEntry, summary: QueuedSummary) -> bytes:
    """Summary entry `entry` as `record_summary` writes it again, bound to `summary`'s savepoint,
    in the entry's own format: version 1's fields only for a version 1 entry (a precompact of that
    version lists its name too), else the entry's header as its hook wrote it (its format, the
    hook's instance and time), which a version 1 rewrite would lose: read again, its summary would
    go to the instance the configuration names and lose its hook's time."""
    import orjson

    if entry.version == 1:
        return orjson.dumps({key: getattr(summary, key) for key in _VERSION_1_SUMMARY_FIELDS})
    header = {"version": entry.version, "instance": entry.instance, "queued_at": entry.queued_at}
    return orjson.dumps({**summary.as_dict(), **header})


def _summary_savepoint(
    hooks: Settings, index: savepoint_log.IndexRead, summary: QueuedSummary
) -> tuple[savepoint_log.Savepoint, bool] | Summarised:
    """The savepoint queued `summary` is recorded with, and whether as an earlier compaction's
    (`record_summary`); or what to do instead: wait for its savepoint, queued still, or fail."""
    saved = savepoint_log.of_instance(index.savepoints, hooks.instance)
    mine = [s for s in saved if s.session_id == summary.session_id]
    missing = Summarised(
        1,
        1,
        f"not recorded: its savepoint is not in {quoting.inline(hooks.instance)}'s index; "
        "`precompact flush --drop-queued` with its name gives it up",
    )
    if summary.sequence is not None:
        named = [s for s in mine if s.sequence == summary.sequence]
        return (named[0], False) if named else missing
    if summary.savepoint_entry is None:  # a version 1 entry: the session's latest, as that version read it
        return (mine[-1], False) if mine else missing
    written = [s for s in mine if s.queue_entry == summary.savepoint_entry]
    if written:
        return written[0], False
    if summary.savepoint_entry in queued(hooks.logs):
        return Summarised(1, 0)  # its savepoint waits (said with it): the summary waits with it
    # Its entry was dropped unwritten, as held by a savepoint of the session: the first that read
    # as far, else the session's furthest (what `capture.holder` takes).
    end = summary.transcript_end or 0
    holding = [s for s in mine if (s.transcript_end or 0) >= end] or mine[-1:]
    if not holding:
        return missing
    holder = holding[0]
    # A holder made after the summary's hook (a later compaction's PreCompact, a SessionEnd)
    # holds more than the summary's compaction dropped: the summary is an earlier compaction's,
    # whether or not the later one's summary has arrived yet.
    made_later = summary.queued_at is not None and holder.made_at > summary.queued_at
    later = made_later or index.summarised_after(hooks.instance, {s.sequence for s in mine}, summary.queued_at or 0)
    return holder, later


def _session_savepoints(settings: Settings, session_id: str) -> list[savepoint_log.Savepoint]:
    saved = savepoint_log.of_instance(savepoint_log.read(settings.logs).savepoints, settings.instance)
    return [s for s in saved if s.session_id == session_id]


def _queued_summary(found: dict) -> QueuedSummary | None:
    """The compaction summary of a summary entry's JSON (None: not one this version reads). A
    field it does not know is another version's optional one, ignored; an optional one missing
    takes its default."""
    texts, optional_texts = ("session_id", "summary", "agent"), ("trigger", "savepoint_entry")
    if not all(isinstance(found.get(key), str) for key in texts) or "sequence" not in found:
        return None
    if not all(isinstance(found.get(key), (str, type(None))) for key in optional_texts):
        return None
    if not all(_integer_or_none(found.get(key)) for key in ("sequence", "transcript_end")):
        return None
    known = set(QueuedSummary.field_names) - {"instance", "queued_at"}  # the entry's header's
    return QueuedSummary(**{key: found[key] for key in known if key in found})


def _queued_session(found: dict) -> dict | None:
    """A savepoint entry's JSON as `QueueEntry`'s `session`, `end`, `reason` and `transcript`
    (None: not one this version reads). An entry written before entries named their reason is a
    recovery's (QUEUED_REASON). Read as leniently as `_queued_summary`."""
    fields, end, seen = found.get("session"), found.get("end"), found.get("transcript")
    reason = found.get("reason", QUEUED_REASON)
    if not isinstance(fields, dict) or not _integer_or_none(end) or not isinstance(reason, (str, type(None))):
        return None
    known = {key: fields[key] for key in Session.field_names if key in fields}
    if not {"session_id", "transcript_path", "cwd"} <= set(known) or not isinstance(known["cwd"], str):
        return None
    if not all(isinstance(value, (str, type(None))) for value in known.values()) or known.get("trigger", "") is None:
        return None
    transcript = None
    if seen is not None:
        if not isinstance(seen, dict) or not isinstance(seen.get("tail_sha256"), str):
            return None
        if not all(type(seen.get(key)) is int for key in ("device", "inode")):
            return None
        transcript = TranscriptSeen(seen["device"], seen["inode"], seen["tail_sha256"])
    source, source_seen = found.get("session_file"), None
    if source is not None:
        if not isinstance(source, dict) or not isinstance(source.get("document_tail_sha256"), str):
            return None
        if not all(type(source.get(key)) is int for key in ("device", "inode")):
            return None
        pinned = source.get("pinned")
        if pinned is not None:
            from precompact.transcript import agents

            if not isinstance(pinned, str) or not agents.PINNED_NAME.fullmatch(pinned):
                return None
        source_seen = SessionFileSeen(source["device"], source["inode"], source["document_tail_sha256"], pinned)
    unread = _unread_session_file(found.get("unread_session_file"), known)
    if unread is False:
        return None
    return {
        "session": Session(**known),
        "end": end,
        "reason": reason,
        "transcript": transcript,
        "session_file": source_seen,
        "unread_session_file": unread,
    }


def _unread_session_file(found: object, session: dict) -> UnreadSessionFile | None | bool:
    """An entry's `unread_session_file` (`queue_unread`), None when it has none, False when it is
    not one this version reads: its fields, or a session other than a Codex or Gemini one naming
    its session file and no document."""
    if found is None:
        return None
    if not isinstance(found, dict) or not isinstance(found.get("tail_sha256"), str):
        return False
    if not all(type(found.get(key)) is int and found[key] >= 0 for key in ("device", "inode", "end")):
        return False
    from precompact.transcript import agent_names

    if (
        session.get("agent") not in (agent_names.CODEX, agent_names.GEMINI)
        or session.get("transcript_path") is not None
    ):
        return False
    if not isinstance(session.get("agent_transcript"), str):
        return False
    return UnreadSessionFile(found["device"], found["inode"], found["end"], found["tail_sha256"])


def _integer_or_none(value: object) -> bool:
    return value is None or type(value) is int


def unindexed(logs: Path) -> list[str]:
    """The snapshot files in logs/ that no index line names (each left by a save killed between
    writing its snapshot and appending its line), by name."""
    try:
        with logs_dir.directory(logs, SAVES_DIR, create=False) as saves:
            return _unindexed(saves, savepoint_log.read(logs).savepoints)
    except FileNotFoundError:
        return []


def _unindexed(saves: int, savepoints: list[savepoint_log.Savepoint]) -> list[str]:
    named = {s.snapshot_file for s in savepoints}
    return sorted(
        name
        for name in os.listdir(saves)
        if logs_dir.SNAPSHOT_FILE.fullmatch(f"logs/{SAVES_DIR}/{name}") and f"logs/{SAVES_DIR}/{name}" not in named
    )


def _write_snapshot(
    saves: int,
    path: Path,
    settings: Settings,
    session: Session,
    now: datetime,
    sequence: int,
    saved: list[savepoint_log.Savepoint],
    lineage: list[str],
    recovery: Recovery | None,
    until: int | None = None,
    queued_at: int | None = None,
    read_from: str | None = None,
) -> tuple[str, int, dict]:
    """Writes the chunks and the snapshot file listing them; returns its SHA-256, size and what
    the index line says of it. `saved`: the instance's savepoints so far; `read_from`:
    `_create_locked`'s."""
    previous = saved[-1] if saved else None
    # Imported here: its patterns compile at import, which only writing a snapshot needs; orjson
    # (canonical JSON's), which a session start's brief does without.
    from precompact.local import read_position as resume
    from precompact.local.canonical import canonical
    from precompact.transcript import claude_code as transcript
    from precompact.transcript.redact import Redactor

    redactor = Redactor(extra=dict(settings.extra_patterns)) if settings.redaction else None
    clean = redactor.redact if redactor else (lambda v: v)
    scan = transcript.TranscriptScan(path=session.transcript_path or "")
    with logs_dir.directory(settings.logs, chunks.CHUNKS_DIR) as chunks_fd:
        chunks.remove_stale(chunks_fd)
        writer = chunks.Writer(chunks_fd)
        reading = _Reading(scan)
        if session.transcript_path:
            reading = _write_history(
                writer, settings, session, scan, redactor, saved, recovery.end if recovery else until, read_from
            )
        else:
            scan.found, scan.problem = False, "no transcript path given"
        scan = reading.scan
        contents = _FileContents(writer, redactor, reading.point.files if reading.point else {})
        rest = _fields(settings, session, now, sequence, previous, lineage, scan, clean, contents, redactor)
        if recovery is not None:
            rest["recovered"] = {"reason": recovery.reason, "transcript_end": recovery.end}
        if queued_at is not None:
            rest[savepoint_log.QUEUED_AT] = queued_at
        contents.finish()
        listed = writer.finish()
    assert min(rest) > "conversation_chunks"
    data = canonical({"conversation_chunks": [ref.listed() for ref in listed], **rest})
    tmp = f".{path.name}.{os.getpid()}.tmp"
    fd = logs_dir.open_in(saves, path.with_name(tmp), tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path.name, src_dir_fd=saves, dst_dir_fd=saves)
        os.fsync(saves)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=saves)
        raise
    digest = hashlib.sha256(data).hexdigest()
    if reading.point is not None:
        reading.point.files = contents.stored
        resume.save(settings.logs, reading.name, reading.mark, reading.point, digest)
    return (
        digest,
        len(data),
        {
            "tokens": rest["tokens"],
            "redactions": rest["redaction"]["total"],
            "last_said": scan.last_said,
            "transcript_end": reading.end,
            "messages": scan.messages,
            "compact_boundaries": scan.compact_boundaries,
            "lines_in_part": scan.malformed_lines + int(scan.partial_last_line),
        },
    )


class _Reading(Record):
    """What reading the transcript left: the scan, and the resume point to record (under the
    session's `name`, for settings `mark`)."""

    scan: transcript.TranscriptScan
    point: resume.Point | None = None
    name: str = ""
    mark: str = ""
    end: int = 0  # the transcript's byte offset where reading stopped (after a whole line)


class _FileContents:
    """Loaded files' contents (redacted) in chunks, each file's record naming its range as
    `content_chunk`: the contents stored anew go into one chunk (one file to write, not one per
    file), written by `finish`. A file whose bytes the session's resume point knows is neither
    redacted nor stored again: its range and redaction counts are taken from there."""

    def __init__(self, writer: chunks.Writer, redactor, known: dict[str, dict]):
        self._writer, self._redactor, self._known = writer, redactor, known
        self._parts: list[bytes] = []
        self._size = 0
        self._pending: list[dict] = []  # ranges in the chunk `finish` writes
        self.stored: dict[str, dict] = {}  # what the next resume point knows

    def __call__(self, head: bytes, key: str) -> dict:
        """The record of `head` (`key`: its SHA-256, hex), its contents stored if new."""
        found = self._known.get(key) or self.stored.get(key)
        if found is None:
            before = Counter(self._redactor.counts) if self._redactor is not None else Counter()
            text = head.decode("utf-8", errors="replace")
            from precompact.local.canonical import canonical

            data = canonical(self._redactor.redact(text) if self._redactor is not None else text)
            counts = self._redactor.counts - before if self._redactor is not None else Counter()
            place = {"start": self._size, "end": self._size + len(data)}
            self._parts.append(data)
            self._size += len(data)
            self._pending.append(place)
            found = {"chunk": place, "redactions": dict(counts)}
        elif self._redactor is not None:
            self._redactor.counts.update(found["redactions"])
        self.stored[key] = found
        return {"content_chunk": found["chunk"]}

    def finish(self) -> None:
        """Writes the contents stored anew as one chunk, and names it in their ranges."""
        if not self._parts:
            return
        ref = self._writer.store(b"".join(self._parts))
        for place in self._pending:
            place.update(ref.listed())


def _write_history(
    writer: chunks.Writer,
    settings: Settings,
    session: Session,
    scan: transcript.TranscriptScan,
    redactor,
    saved: list[savepoint_log.Savepoint],
    end: int | None = None,
    read_from: str | None = None,
) -> _Reading:
    """Streams the transcript's entries, redacted, into chunks; goes on from the session's
    resume point when the transcript before it is unchanged. With `end` (a line's start), only
    the bytes before it are read. The bytes are `read_from`'s when given (a pinned document),
    the resume point still the session's transcript's: it holds only where the bytes hash alike.
    Returns the scan (a resumed one replaces `scan`) and the resume point to record."""
    from precompact.local import read_position as resume
    from precompact.transcript import claude_code as transcript

    transcript_path = str(session.transcript_path)
    transcript_file = Path(read_from or transcript_path)
    transcript.settle(transcript_file)
    handle = transcript.open_transcript(transcript_file, scan)
    if handle is None:
        return _Reading(scan)
    name = resume.key(settings.instance, session.session_id, transcript_path)
    mark = resume.fingerprint(settings.redaction, dict(settings.extra_patterns))
    point = None
    known_files: dict[str, dict] = {}
    with handle:
        resumed = resume.load(settings.logs, name, mark, handle, transcript_path, saved)
        if resumed is not None and end is not None and resumed.point.offset > end:
            resumed = None
        if resumed is not None:
            scan, prefix, offset = resumed.scan, resumed.prefix, resumed.point.offset
            writer.refs = list(resumed.point.refs)
            if resumed.last is not None:
                # The last chunk was not full: its entries start the one this savepoint fills.
                writer.refs.pop()
                writer.add(resumed.last)
            if redactor is not None:
                redactor.counts.update(resumed.point.redactions)
            known_files = resumed.point.files
        else:
            handle.seek(0)
            prefix, offset = hashlib.sha256(), 0
        for whole in transcript.read_blocks(handle, scan):
            if isinstance(whole, transcript.LongLine):
                if end is not None and end <= offset:
                    break
                for raw in whole.raw():
                    prefix.update(raw)
                offset += whole.size
                writer.add(long_line_part(whole, scan, redactor))
                if writer.full:
                    writer.cut()
                continue
            block = whole if end is None else whole[: max(end - offset, 0)]
            if not block:
                break
            prefix.update(block)
            offset += len(block)
            writer.add(history_part(block, scan, redactor))
            if writer.full:
                writer.cut()
        if end is not None and offset == end:
            # What follows the boundary is not this savepoint's: its size and last line neither.
            scan.bytes, scan.partial_last_line = end, False
        # The history ends here (the files' contents go into chunks of their own): the next
        # savepoint of this session goes on from this point, its last chunk reopened.
        writer.cut()
        if writer.refs:
            counts = dict(redactor.counts) if redactor is not None else {}
            point = resume.Point(offset, prefix.hexdigest(), list(writer.refs), scan.state(), counts, known_files)
    return _Reading(scan, point, name, mark, offset)


def history_part(block: bytes, scan: transcript.TranscriptScan, redactor) -> bytes:
    """The entries of `block` (whole transcript lines) as the history stores them: each canonical
    and followed by a comma, redacted unless `redactor` is None."""
    from precompact.local.canonical import canonical
    from precompact.transcript import claude_code as transcript

    lines = block.split(b"\n")
    # Most lines hold nothing a secret pattern could match: those skip redaction.
    suspects = redactor.suspect_lines(block, lines) if redactor is not None else ()

    def stored(number: int, entry) -> bytes:
        data = canonical(redactor.redact(entry) if redactor is not None and number in suspects else entry)
        if transcript.WIDE_NUMBER in data:
            # Perhaps an integer beyond 64 bits, which orjson read as a float: kept exact.
            exact = transcript.exact_numbers(lines[number], entry)
            data = canonical(redactor.redact(exact) if redactor is not None and number in suspects else exact)
        return data + b","

    return b"".join(stored(number, entry) for number, entry in transcript.entries(lines, scan))


def long_line_part(line: transcript.LongLine, scan: transcript.TranscriptScan, redactor) -> bytes:
    """A line longer than the transcript reader parses, as the history stores it: its head as
    text, redacted unless `redactor` is None."""
    from precompact.local.canonical import canonical

    entry = line.entry(scan)
    return canonical(redactor.redact(entry) if redactor is not None else entry) + b","


# Context windows Claude Code 2.1.332 reports (`modelUsage.contextWindow`) for the models it
# knows; a model id tagged `[1m]` has the 1M window. Other models get `snapshot.context_window`.
MODEL_WINDOWS = {
    **dict.fromkeys(
        (
            "claude-opus-5-5",
            "claude-opus-5",
            "claude-sonnet-5-5",
            "claude-sonnet-5",
            "claude-opus-4-8",
            "claude-fable-5",
        ),
        1_000_000,
    ),
    **dict.fromkeys(("claude-opus-4-6", "claude-sonnet-4-6", "claude-sonnet-4-5", "claude-haiku-4-5"), 200_000),
}


def context_window(model: str | None, fallback: int) -> int:
    """The context window of the model that ran the session (`fallback` for an unknown one)."""
    if not model:
        return fallback
    if model.endswith("[1m]"):
        return 1_000_000
    # Dated ids (claude-sonnet-4-5-20250929) are the undated model.
    return MODEL_WINDOWS.get(re.sub(r"-\d{8}$", "", model), fallback)


def _fields(
    settings: Settings,
    session: Session,
    now: datetime,
    sequence: int,
    previous,
    lineage: list[str],
    scan,
    clean,
    contents,
    redactor,
) -> dict:
    from precompact.transcript import claude_code as transcript

    used = transcript.context_tokens(scan.last_usage)
    window = context_window(scan.model, settings.context_window)
    fields = {
        "type": SNAPSHOT_TYPE,
        "format_version": FORMAT_VERSION,
        "timestamp_iso8601": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "sequence": sequence,
        "instance_id": settings.instance,
        "instance_id_sha256": hashlib.sha256(settings.instance.encode("utf-8")).hexdigest(),
        "instance_number": instance_number(settings.instance),
        "lineage": lineage,
        "session": clean(
            {
                "session_id": session.session_id,
                "transcript_path": session.transcript_path,
                "cwd": session.cwd,
                "trigger": session.trigger,
                "custom_instructions": session.custom_instructions,
                "agent": session.agent,
                "agent_version": session.agent_version,
                "agent_transcript": session.agent_transcript,
            }
        ),
        "tokens": {
            "model": scan.model,
            "used": used,
            "window": window,
            "remaining": max(window - used, 0),
            "utilization_percent": round(100 * used / window, 2) if window else None,
        },
        "transcript": scan.summary(),
        "session_state": _session_state(settings, clean),
        "loaded_files": _loaded_files(settings, session, scan, clean, contents),
        "git_state": clean(git_state(Path(session.cwd))),
        "previous": {"sequence": previous.sequence, "snapshot_hash": previous.snapshot_hash} if previous else None,
        # Random bytes make the public hash useless for guessing a snapshot's content.
        "nonce": os.urandom(16).hex(),
    }
    fields["redaction"] = redactor.summary() if redactor else {"enabled": False, "counts": {}, "total": 0}
    return fields


def _session_state(settings: Settings, clean) -> dict | None:
    path = settings.session_state
    if path is None:
        return None
    opened = _open_inside(path, settings.logs.parent.resolve(), settings.exclude)
    if isinstance(opened, dict):
        problem = opened.get("problem") or ("outside the project" if opened.get("outside_project") else "excluded")
        return {"path": str(path), "problem": problem}
    try:
        with os.fdopen(opened, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            raw = f.read(SESSION_STATE_CAP_BYTES + 1)
    except OSError as e:
        return {"path": str(path), "problem": f"unreadable: {quoting.os_error(e)}"}
    kept = {"path": str(path), "size": max(size, len(raw))}
    if len(raw) > SESSION_STATE_CAP_BYTES:
        # Cut, it is no JSON document: its first bytes are kept as text, and said to be cut.
        head = raw[:SESSION_STATE_CAP_BYTES].decode("utf-8", errors="replace")
        return {**kept, "truncated": True, "content": clean(head)}
    from precompact.local.canonical import canonical
    from precompact.transcript import claude_code as transcript

    try:
        content = transcript.parse_json(raw)
    except ValueError:
        content = raw.decode("utf-8", errors="replace")
    else:
        if transcript.WIDE_NUMBER in canonical(content):
            content = transcript.exact_numbers(raw, content)
    return {**kept, "truncated": False, "content": clean(content)}


def _loaded_files(settings: Settings, session: Session, scan, clean, contents) -> dict:
    cwd = Path(session.cwd)
    root = settings.logs.parent.resolve()
    wanted = dict(scan.files)
    for extra in settings.include:
        wanted.setdefault(str(extra), "include")
    files = {}
    for name, source in sorted(wanted.items()):
        file = Path(name) if Path(name).is_absolute() else cwd / name
        files[clean(name)] = {"source": source, **_file_record(file, settings, root, contents)}
    return files


def _is_excluded(file: Path, root: Path, patterns: tuple[str, ...]) -> bool:
    candidates = {str(file), file.name, str(file.relative_to(root))}
    matcher = _matcher(patterns)
    return matcher is not None and any(matcher.match(c) for c in candidates)


@functools.cache
def _matcher(patterns: tuple[str, ...]) -> re.Pattern | None:
    """The exclude patterns as one regular expression (fnmatch's own translation): a session
    with hundreds of files in play otherwise spends a tenth of a second in fnmatch."""
    return re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in patterns)) if patterns else None


def _open_inside(file: Path, root: Path, exclude: tuple[str, ...]) -> int | dict:
    """A descriptor of `file` if it may be read into a snapshot: its real path (links
    resolved) is inside the project, matches no exclude, and is a regular file; else why not."""
    try:
        resolved = file.resolve()
    except (OSError, RuntimeError) as e:
        return {"problem": f"unresolvable: {quoting.os_error(e)}"}
    if not resolved.is_relative_to(root):
        return {"outside_project": True}
    if _is_excluded(resolved, root, exclude) or (file.is_relative_to(root) and _is_excluded(file, root, exclude)):
        return {"excluded": True}
    try:
        # The resolved path, not followed again: a link swapped in since is refused.
        fd = os.open(resolved, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except FileNotFoundError:
        return {"problem": "file not found"}
    except OSError as e:
        return {"problem": f"unreadable: {quoting.os_error(e)}"}
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return {"problem": "not a regular file"}
    return fd


def _file_record(file: Path, settings: Settings, root: Path, contents) -> dict:
    """The file's content (as `contents` stores it), if it may be copied (`_open_inside`)."""
    opened = _open_inside(file, root, settings.exclude)
    if isinstance(opened, dict):
        return opened
    try:
        with os.fdopen(opened, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            head = f.read(settings.file_cap_bytes)
    except OSError as e:
        return {"problem": f"unreadable: {quoting.os_error(e)}"}
    # The hash covers what is kept (`hashed_bytes`), not the rest of a file cut at the cap:
    # reading a large file whole on every savepoint was most of the hook's time.
    digest = hashlib.sha256(head).hexdigest()
    record = {
        "sha256": digest,
        "hashed_bytes": len(head),
        "size": size,
        "truncated": size > len(head),
    }
    if b"\0" in head:
        record["binary"] = True
        return record
    record.update(contents(head, digest))
    return record


def git_state(cwd: Path) -> dict:
    """Commit, branch, dirtiness and remotes of the repository at `cwd`, from git itself."""

    def git(*args: str) -> processes.CompletedProcess:
        return git_env.run(cwd, *args, timeout=GIT_TIMEOUT_SECONDS)

    try:
        status = git("status", "--porcelain=v2", "--branch", "--untracked-files=normal", "--ignore-submodules=dirty")
    except (OSError, processes.TimeoutExpired) as e:
        return {"repository": False, "problem": f"git unavailable: {quoting.os_error(e)}"}
    if status.returncode != 0:
        return {
            "repository": False,
            "problem": status.stderr.strip().splitlines()[0] if status.stderr.strip() else "not a git repository",
        }
    commit = branch = None
    dirty = False
    untracked = 0
    for line in status.stdout.splitlines():
        if line.startswith("# branch.oid "):
            commit = line.split(" ", 2)[2]
            commit = None if commit == "(initial)" else commit
        elif line.startswith("# branch.head "):
            branch = line.split(" ", 2)[2]
            branch = None if branch == "(detached)" else branch
        elif line.startswith("? "):
            untracked += 1
            dirty = True
        elif not line.startswith("#"):
            dirty = True
    remotes = {}
    listed = git("remote", "-v")
    for line in listed.stdout.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[-1] == "(fetch)":
            remotes[parts[0]] = parts[1]
    return {
        "repository": True,
        "current_commit": commit,
        "branch": branch,
        "detached": branch is None,
        "dirty": dirty,
        "untracked": untracked,
        "remotes": remotes,
    }
