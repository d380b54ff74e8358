"""The append-only savepoint index, `logs/precompact-savepoint.jsonl`.

Every change is a new line (an event); no line is ever rewritten. Appends happen under an
exclusive lock on `logs/precompact-savepoint.lock` and are fsynced; `fold` turns the events into the
current state of each savepoint.

Each instance has its own chain of savepoints (sequence numbers from 1, hash links), as its
on-chain record does; events name the instance and sequence they are about.

This is the one writer of SAVEPOINT_CREATED lines, so it is where each gets this machine's tag
(local.provenance): the index is the project's, and only the tag says this machine wrote it.
"""

from __future__ import annotations

import calendar
import contextlib
import errno
import fcntl
import hashlib
import json
import os
import re
import sys
import time
from collections.abc import Iterable, Iterator
from enum import StrEnum
from pathlib import Path

from precompact.boundary import logs_dir, quoting
from precompact.config.endpoint import shown as shown_endpoint
from precompact.errors import PrecompactError
from precompact.local import provenance
from precompact.records import Record, field

INDEX_NAME = "precompact-savepoint.jsonl"
LOCK_NAME = "precompact-savepoint.lock"
# The key of a line written from a hook's queue entry, naming the entry (`from_queue_entry`).
QUEUE_ENTRY = "queue_entry"
# When the hook that queued a savepoint or a compaction summary ran (Unix seconds), in the index
# line written from its entry (and the snapshot): the line's own `timestamp` is when it was
# written, which for a savepoint is its chain timestamp and never goes back.
QUEUED_AT = "queued_at"
LOCK_POLL_SECONDS = 0.01
# The `recovered` reason of a savepoint a hook left queued (the index lock busy past its wait)
# and the worker or the compaction's session start then wrote: saved whole, only later.
QUEUED_REASON = "queued: the index was busy at the hook"


class Event(StrEnum):
    """What an index line records (its "event" field)."""

    SAVEPOINT_CREATED = "SAVEPOINT_CREATED"
    LAYER_2_COMMITTED = "LAYER_2_COMMITTED"
    LAYER_2_PUSHED = "LAYER_2_PUSHED"
    LAYER_2_FAILED = "LAYER_2_FAILED"
    LAYER_3_CONFIRMED = "LAYER_3_CONFIRMED"
    LAYER_3_FAILED = "LAYER_3_FAILED"
    COMPACT_SUMMARY = "COMPACT_SUMMARY"
    # A compaction summary queued while its savepoint was, whose savepoint was then never written
    # (a later one of the session held it) and whose holder has a later compaction's summary: kept
    # with the holder, never its `compact_summary` (local/snapshot.record_summary).
    EARLIER_COMPACT_SUMMARY = "EARLIER_COMPACT_SUMMARY"
    # A session was given a savepoint's restore brief (by the SessionStart hook; not given it again).
    BRIEF_DELIVERED = "BRIEF_DELIVERED"
    RESURRECTED = "RESURRECTED"
    # `precompact uncompact` wrote a savepoint's history as a new session (its id): that session
    # is not given the brief of another savepoint at its start.
    UNCOMPACTED = "UNCOMPACTED"
    # `precompact prune` removed the local copy (its git copy is pushed and verified).
    LOCAL_COPY_PRUNED = "LOCAL_COPY_PRUNED"
    # `precompact key rotate` moved the instance's lineage to a new signing key.
    AUTHORITY_ROTATED = "AUTHORITY_ROTATED"
    # `precompact close` closed the instance's on-chain record (its rent returned): no savepoint
    # of this instance is anchored on chain any more.
    RECORD_CLOSED = "RECORD_CLOSED"
    # The user's signing key signed a SAVEPOINT_CREATED line (verifier.signed): the root that
    # travels with the index copy on the git remote.
    SAVEPOINT_SIGNED = "SAVEPOINT_SIGNED"
    # The user's signing key signed a savepoint's compaction summary, bound to its
    # SAVEPOINT_CREATED line (verifier.signed): the summary travels with the savepoint.
    SUMMARY_SIGNED = "SUMMARY_SIGNED"


class Layer2(StrEnum):
    """Where a savepoint's git copy stands."""

    PENDING = "PENDING"
    COMMITTED = "COMMITTED"
    PUSHED = "PUSHED"
    FAILED = "FAILED"


class Layer3(StrEnum):
    """Where a savepoint's on-chain record stands (the specification's spelling)."""

    QUEUED = "QUEUED_FOR_BLOCKCHAIN"
    CONFIRMED = "CONFIRMED"
    FAILED = "FAILED"


LAYER_1_SAVED = "SAVED_LOCALLY"

_LAYER_2_EVENTS = {
    Event.LAYER_2_COMMITTED: Layer2.COMMITTED,
    Event.LAYER_2_PUSHED: Layer2.PUSHED,
    Event.LAYER_2_FAILED: Layer2.FAILED,
}
_LAYER_3_EVENTS = {Event.LAYER_3_CONFIRMED: Layer3.CONFIRMED, Event.LAYER_3_FAILED: Layer3.FAILED}


# Event fields holding free text (Claude Code's summary, a layer's failure), redacted before
# they are written: the index is committed and pushed.
FREE_TEXT_FIELDS = ("summary", "reason")


def _redacted(value):
    from precompact.transcript.redact import Redactor

    return Redactor().redact(value)


class LockTimeout(PrecompactError):
    """Another precompact process held the index lock for too long."""


def index_path(logs: Path) -> Path:
    return logs / INDEX_NAME


@contextlib.contextmanager
def locked(logs: Path, timeout: float, name: str = LOCK_NAME) -> Iterator[None]:
    """Holds the index lock (or the lock file `name`); waits up to `timeout` seconds for another
    holder to finish."""
    fd = logs_dir.open_file(logs, name, os.O_RDWR | os.O_CREAT)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise LockTimeout(
                        f"lock {logs / name} still held after {timeout:.0f} s by another precompact process"
                    ) from None
                time.sleep(LOCK_POLL_SECONDS)
        yield
    finally:
        os.close(fd)


def append(logs: Path, event: dict) -> None:
    """Appends one event line and makes it durable. Call with the lock held."""
    event = {k: _redacted(v) if k in FREE_TEXT_FIELDS else v for k, v in event.items()}
    if event.get("event") == Event.SAVEPOINT_CREATED:
        event[provenance.TAG_FIELD] = provenance.tag(event)
    elif event.get("event") == Event.COMPACT_SUMMARY:
        # Sealed as this machine's, so that the worker signs only a summary it recorded here
        # (never one a copied or edited logs/ holds) for it to travel (`Savepoint.summary_written_here`).
        event["seal"] = _seal(_SUMMARY_PURPOSE, _summary_values(event))
    _append_durably(logs, _line(event))


def _line(event: dict) -> bytes:
    return (json.dumps(event, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n").encode("utf-8")


def _append_durably(logs: Path, data: bytes) -> None:
    """Appends whole lines to the index and fsyncs them, or none of them: on any failure (a full
    disk writes part of a line and says so only at the next write) the index is cut back to the
    size it had and the error raised, so no caller says "saved" of a line that is not there.
    Call with the lock held."""
    fd = logs_dir.open_file(logs, INDEX_NAME, os.O_RDWR | os.O_APPEND | os.O_CREAT)
    try:
        # A crash can leave a torn last line; start on a fresh line so it stays one bad line.
        size = os.fstat(fd).st_size
        if size > 0 and os.pread(fd, 1, size - 1) != b"\n":
            data = b"\n" + data
        try:
            _write_all(fd, data)
            os.fsync(fd)
        except BaseException:
            # Cut back even when interrupted (a signal, Ctrl-C): a torn line would hide the
            # snapshot it names, which the next savepoint then removes as unindexed.
            with contextlib.suppress(OSError):
                os.ftruncate(fd, size)
                os.fsync(fd)
            raise
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    """os.write until every byte is written: a write may write only part of what it is given
    (a full disk, a file-size limit) and say so by its count alone."""
    left = memoryview(data)
    while left:
        written = os.write(fd, left)
        if written == 0:
            raise OSError(errno.ENOSPC, f"the index took no more bytes ({len(left)} of {len(data)} unwritten)")
        left = left[written:]


def utc_timestamp() -> str:
    """Now, as the index writes times: ISO 8601 UTC to the second."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def record(logs: Path, event: dict, lock_timeout: float = 10.0) -> None:
    """Appends a timestamped event under the lock."""
    stamped = {**event, "timestamp": utc_timestamp()}
    with locked(logs, lock_timeout):
        append(logs, stamped)


def mark(logs: Path, savepoint: Savepoint, event: Event, lock_timeout: float = 10.0, **details) -> None:
    """Records an event about one savepoint (a layer's progress, a summary)."""
    record(logs, marked(savepoint, event, **details), lock_timeout)


def from_queue_entry(logs: Path, name: str) -> bool:
    """Whether a line of the index was written from the queue entry `name` (a savepoint or a
    compaction summary a hook queued: local/snapshot.py), which is then not written again."""
    return any(event.get(QUEUE_ENTRY) == name for event in read(logs).events)


def marked(savepoint: Savepoint, event: Event, **details) -> dict:
    """The line of an event about one savepoint, without its timestamp."""
    return {"event": event, "instance": savepoint.instance, "sequence": savepoint.sequence, **details}


class Outcome(Record, frozen=True):
    """What a layer did with one savepoint; the orchestration records it as an index line."""

    savepoint: Savepoint
    event: Event
    details: dict = field(default_factory=dict)
    # A failure as said now, its outside words quoted once; None: the details' reason is
    # precompact's own words. The index keeps the reason as it was said: its printers quote it.
    said: str | None = None

    @property
    def failed(self) -> bool:
        return self.event in (Event.LAYER_2_FAILED, Event.LAYER_3_FAILED)


def record_pruned(logs: Path, savepoint: Savepoint) -> None:
    """Records that `savepoint`'s local copy was removed on purpose. Call with the lock held."""
    append(
        logs,
        {
            "event": Event.LOCAL_COPY_PRUNED,
            "timestamp": utc_timestamp(),
            "instance": savepoint.instance,
            "sequence": savepoint.sequence,
            "commit": savepoint.commit,
        },
    )


def record_lineage(logs: Path, instance: str, savepoint: Savepoint, lineage: list[str]) -> None:
    """Records that `instance` continues `savepoint`'s instance, and the instances before it."""
    record(
        logs,
        {
            "event": Event.RESURRECTED,
            "instance": instance,
            "from_instance": savepoint.instance,
            "from_sequence": savepoint.sequence,
            "lineage": lineage,
        },
    )


def record_outcomes(logs: Path, outcomes: Iterable[Outcome]) -> list[str]:
    """Records each outcome as soon as the layer reports it (a crash loses none it already
    reported); returns the reasons of those that failed, each once (one failed push fails
    every savepoint it carried)."""
    problems: dict[str, None] = {}
    for outcome in outcomes:
        mark(logs, outcome.savepoint, outcome.event, **outcome.details)
        if outcome.failed:
            problems[outcome.said or outcome.details["reason"]] = None
    return list(problems)


def _compaction_time(line: dict) -> int:
    queued_at = line.get(QUEUED_AT)
    if type(queued_at) is int:
        return queued_at
    try:
        return calendar.timegm(time.strptime(str(line.get("timestamp")), "%Y-%m-%dT%H:%M:%SZ"))
    except (ValueError, OverflowError):
        return 0


class IndexRead(Record):
    events: list[dict] = field(default_factory=list)
    bad_lines: list[int] = field(default_factory=list)

    @property
    def savepoints(self) -> list[Savepoint]:
        """Every savepoint, folded (see `fold`)."""
        return fold(self.events)

    def lineage(self, instance: str) -> list[str]:
        return lineage(self.events, instance)

    def from_queue_entry(self, name: str) -> str | None:
        """The event of the line written from queue entry `name` (local/snapshot.py), None when
        no line was."""
        kinds = [event.get("event") for event in self.events if event.get(QUEUE_ENTRY) == name]
        return str(kinds[0]) if kinds else None

    def summarised_after(self, instance: str, sequences: set[int], after: int) -> bool:
        """Whether one of `instance`'s savepoints `sequences` has the summary of a compaction made
        after `after` (Unix seconds): its hook's time (`QUEUED_AT`), or, for a line that names
        none, when the line was written."""
        return any(
            event.get("event") == Event.COMPACT_SUMMARY
            and event.get("instance") == instance
            and event.get("sequence") in sequences
            and _compaction_time(event) > after
            for event in self.events
        )

    def rotations(self, instance: str) -> list[Rotation]:
        """`instance`'s key rotations this machine recorded, in the order they happened
        (`precompact key rotate`)."""
        return rotations(self.events, instance)

    def unsealed_rotations(self, instance: str) -> int:
        """How many of `instance`'s rotation lines are not this machine's (counted as none)."""
        return unsealed_rotations(self.events, instance)

    def closing(self, instance: str) -> Closing | None:
        """`instance`'s record closing (`precompact close`), when this machine recorded one."""
        return closing(self.events, instance)

    def deliveries(self, instance: str, session_id: str) -> list[Delivery]:
        """The restore briefs of `instance`'s savepoints given to session `session_id`, oldest
        first."""
        return [
            Delivery(event["sequence"], event.get("source") if isinstance(event.get("source"), str) else None)
            for event in self.events
            if event.get("event") == Event.BRIEF_DELIVERED
            and event.get("instance") == instance
            and event.get("session_id") == session_id
            and isinstance(event.get("sequence"), int)
        ]

    def written_by_uncompact(self, session_id: str) -> bool:
        """Whether `precompact uncompact` wrote session `session_id` (an UNCOMPACTED line names it)."""
        return any(
            event.get("event") == Event.UNCOMPACTED and event.get("session_id") == session_id for event in self.events
        )


class Delivery(Record, frozen=True):
    """A BRIEF_DELIVERED line: which savepoint's brief a session was given, and at which
    session start (`source`: compact, resume, ...)."""

    sequence: int
    source: str | None


def read(logs: Path) -> IndexRead:
    """All events in order; unparseable lines are reported by line number, never fatal."""
    try:
        fd = logs_dir.open_file(logs, INDEX_NAME, os.O_RDONLY)
    except FileNotFoundError:
        return IndexRead()
    with os.fdopen(fd, "rb") as f:
        return parse(f)


def _loads(raw: bytes) -> object:
    """A line's JSON value, as the standard library reads it: by orjson where it reads the same,
    when the process has loaded it for its own work (a savepoint's writer, recall: the index
    grows with the project), else by json (a session start's brief, which would import orjson,
    about 6 ms, for nothing else). json reads what orjson refuses (NaN, a lone surrogate escape,
    UTF-16) and a line with 19 digits in a row, which may be an integer beyond 64 bits (orjson
    reads it as a float)."""
    orjson = sys.modules.get("orjson")
    if orjson is not None and not _LONG_DIGITS.search(raw):
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            pass
    return json.loads(raw)


_LONG_DIGITS = re.compile(rb"[0-9]{19}")


def read_unless(logs: Path, stamp: str | None) -> tuple[str | None, IndexRead | None]:
    """The log's stamp (`logs_dir.identity`: appending changes it) and `read`'s events; None for the events
    when the log's stamp is still `stamp`, so a caller keeping what it read need not read it
    again. (None, IndexRead()) when there is no log."""
    try:
        fd = logs_dir.open_file(logs, INDEX_NAME, os.O_RDONLY)
    except FileNotFoundError:
        return None, IndexRead()
    with os.fdopen(fd, "rb") as f:
        now = logs_dir.identity(os.fstat(fd))
        return now, None if now == stamp else parse(f)


def parse(lines: Iterable[bytes]) -> IndexRead:
    """The events of an index's lines (from the file, or a copy of it kept in git)."""
    result = IndexRead()
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            event = _loads(raw)
        except ValueError:
            result.bad_lines.append(number)
            continue
        if isinstance(event, dict):
            result.events.append(event)
        else:
            result.bad_lines.append(number)
    return result


class Failure(Record, frozen=True):
    """A failed attempt the index recorded: the layer (precompact's word) and its reason, as
    git, the remote or the RPC endpoint said it (outside text, quoted wherever it is shown)."""

    layer: str  # "layer_2" or "layer_3"
    reason: str

    def __str__(self) -> str:
        return f"{self.layer}: {self.reason}"


class Savepoint(Record):
    """A savepoint as its events describe it now."""

    sequence: int
    created: dict
    layer_2: Layer2 = Layer2.PENDING
    layer_3: Layer3 = Layer3.QUEUED
    commit: str | None = None
    chain_signature: str | None = None
    chain_slot: int | None = None
    # The RPC endpoint the worker's confirmation rests on, in its shown form (config/endpoint)
    # whatever the index says (outside text: an older version wrote a URL's path there).
    chain_endpoint: str | None = None
    failures: list[Failure] = field(default_factory=list)
    # Git's reason, when the worker's last Layer 2 attempt failed (a rejected push, a full disk).
    layer_2_failure: str | None = None
    compact_summary: str | None = None
    # The seal of the COMPACT_SUMMARY line `compact_summary` came from (unchecked: `summary_written_here`).
    summary_seal: object = None
    # The SUMMARY_SIGNED lines about it, unchecked (verifier.signed checks them).
    summary_signatures: list[SummarySignature] = field(default_factory=list)
    pruned: bool = False  # the local copy was removed on purpose; git holds it
    # Its lines came from `precompact restore`, which brings back only what a root covers: its
    # compaction summary only when your key signed it (words only: `dropped` says why there is
    # none instead of blaming PostCompact).
    restored: bool = False
    # The SAVEPOINT_SIGNED lines about it, unchecked (verifier.signed checks them).
    signatures: list[LineSignature] = field(default_factory=list)
    # The hashes later SAVEPOINT_CREATED lines of its (instance, sequence) state, with other
    # content: refused (`fold`), and said (`recreated_notice`).
    recreated: list[str] = field(default_factory=list)

    @property
    def written_here(self) -> bool:
        """Whether this machine wrote it (its index line carries this machine's tag): only
        then does the hash the index states count as the local root."""
        return provenance.written_here(self.created)

    @property
    def summary_written_here(self) -> bool:
        """Whether this machine recorded its compaction summary (the line's seal checks)."""
        return isinstance(self.compact_summary, str) and _sealed_here(
            _SUMMARY_PURPOSE, [self.instance, self.sequence, self.compact_summary], self.summary_seal
        )

    @property
    def summary_never_signed(self) -> bool:
        """Whether this machine recorded its compaction summary and the index holds no signature
        line of it at all: the worker PostCompact starts signs it, so one that did not run (killed,
        the machine off) left it so. Claims only, none checked (a hint to start a worker, whose
        flush signs what verifier.signed finds unsigned, this case and any other)."""
        return not self.summary_signatures and self.summary_written_here

    @property
    def snapshot_hash(self) -> str:
        """The hash the line states ("" when it states none: no snapshot's hash matches that)."""
        return (self._text("snapshot_hash") or "").removeprefix("sha256:")

    @property
    def prev_snapshot_hash(self) -> str | None:
        """The hash this savepoint links back to; None for an instance's first."""
        return (self._text("prev_snapshot_hash") or "").removeprefix("sha256:") or None

    @property
    def instance(self) -> str:
        return self.created["instance"]

    # The SAVEPOINT_CREATED line's other fields, typed. The index is input (a copied or edited
    # logs/ can hold anything), so a field of the wrong type reads as absent, never as a crash.

    @property
    def snapshot_file(self) -> str:
        """The snapshot's name under logs/ as the index states it ("" when absent); readers
        check it with logs_dir before they open anything."""
        return self._text("snapshot_file") or ""

    @property
    def timestamp(self) -> str | None:
        return self._text("timestamp")

    @property
    def unix_timestamp(self) -> int:
        return self._number("unix_timestamp") or 0

    @property
    def queue_entry(self) -> str | None:
        """The queue entry it was written from (None: its hook wrote it)."""
        return self._text(QUEUE_ENTRY)

    @property
    def queued_at(self) -> int | None:
        """When the hook whose queue entry it was written from ran (None: its hook wrote it)."""
        return self._number(QUEUED_AT)

    @property
    def made_at(self) -> int:
        """When the conversation it holds was saved (Unix seconds): its hook's time, which for a
        savepoint written from a queue entry is earlier than `unix_timestamp`, the write's."""
        queued_at = self.queued_at
        return queued_at if queued_at is not None and queued_at <= self.unix_timestamp else self.unix_timestamp

    @property
    def made_timestamp(self) -> str | None:
        """`made_at` as `timestamp` shows a time (UTC, ISO 8601): the index's `timestamp` itself
        for a savepoint its hook wrote."""
        if self.made_at == self.unix_timestamp:
            return self.timestamp
        return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.made_at))

    @property
    def written_later(self) -> bool:
        """Whether a writer wrote it later than its hook saw the conversation (from its queue entry)."""
        return self.made_at < self.unix_timestamp

    @property
    def trigger(self) -> str | None:
        return self._text("trigger")

    @property
    def session_id(self) -> str | None:
        return self._text("session_id")

    @property
    def last_said(self) -> str | None:
        """The mark of the last entry said before this savepoint (conversation.last_said)."""
        return self._text("last_said")

    @property
    def agent(self) -> str:
        """The agent whose session this is; index lines from before agents were named are
        Claude Code's."""
        return self._text("agent") or "claude"

    @property
    def agent_version(self) -> str | None:
        return self._text("agent_version")

    @property
    def transcript_end(self) -> int | None:
        return self._number("transcript_end")

    @property
    def messages(self) -> int | None:
        return self._number("messages")

    @property
    def compact_boundaries(self) -> int:
        """How many compaction boundaries the history it read holds (0 when the line does not say)."""
        return self._number("compact_boundaries") or 0

    @property
    def lines_in_part(self) -> int | None:
        """How many transcript lines its history holds only in part (malformed: kept as at most
        their first MiB of text; the last one, still being written: not at all); None when the line
        does not say (written before it was recorded)."""
        return self._number("lines_in_part")

    @property
    def recovered(self) -> str | None:
        """Why this savepoint was recovered after a compaction (capture), None if it was not."""
        return self._text("recovered")

    @property
    def recovered_from_transcript(self) -> bool:
        """Whether it holds what a compaction's hook found PreCompact had not saved, read from the
        transcript after it: recovered, and not merely a save its hook left queued."""
        return self.recovered is not None and self.recovered != QUEUED_REASON

    @property
    def snapshot_size_bytes(self) -> int:
        return self._number("snapshot_size_bytes") or 0

    @property
    def tokens_used(self) -> int | None:
        return self._number("tokens_used_this_session")

    @property
    def tokens_remaining(self) -> int | None:
        return self._number("tokens_remaining")

    @property
    def layer_1_status(self) -> str | None:
        return self._text("layer_1_status")

    def _text(self, name: str) -> str | None:
        value = self.created.get(name)
        return value if isinstance(value, str) else None

    def _number(self, name: str) -> int | None:
        value = self.created.get(name)
        return value if isinstance(value, int) and not isinstance(value, bool) else None


class LineSignature(Record, frozen=True):
    """A SAVEPOINT_SIGNED line as it states itself: who says they signed the savepoint's
    SAVEPOINT_CREATED line, and the signature (hex). Nothing here is checked."""

    signer: str
    signature: str


class SummarySignature(Record, frozen=True):
    """A SUMMARY_SIGNED line as it states itself: who says they signed which summary (the
    SHA-256 of its text, hex) of the savepoint, and the signature (hex). Nothing here is checked."""

    signer: str
    summary_sha256: str
    signature: str


def summary_sha256(summary: str) -> str:
    """The SHA-256 (hex) of a summary's text as UTF-8 (a lone surrogate from a hostile line kept
    as its bytes, never a crash)."""
    return hashlib.sha256(summary.encode("utf-8", "surrogatepass")).hexdigest()


def record_summary_signatures(logs: Path, signed: Iterable[tuple[Savepoint, SummarySignature]]) -> None:
    """Records each savepoint's compaction summary signature by the user's signing key, under one lock."""
    with locked(logs, 10.0):
        for savepoint, signature in signed:
            append(logs, _summary_signed_line(savepoint, signature, utc_timestamp()))


def _summary_signed_line(savepoint: Savepoint, signature: SummarySignature, stamp: str) -> dict:
    return {
        "event": Event.SUMMARY_SIGNED,
        "timestamp": stamp,
        "instance": savepoint.instance,
        "sequence": savepoint.sequence,
        "signer": signature.signer,
        "summary_sha256": signature.summary_sha256,
        "summary_signature": signature.signature,
    }


def restored_summary_lines(savepoint: Savepoint, summary: str, signatures: list[SummarySignature]) -> list[dict]:
    """The index lines `precompact restore` writes for a compaction summary the user's key signed
    for `savepoint`: the summary alone (no queue entry or hook time of the machine that recorded
    it, which no signature covers, and no seal: this machine did not record it) and the
    signatures that checked."""
    stamp = utc_timestamp()
    about = {"instance": savepoint.instance, "sequence": savepoint.sequence}
    line = {"event": Event.COMPACT_SUMMARY, "timestamp": stamp, **about, "summary": summary, "restored": True}
    return [line, *(_summary_signed_line(savepoint, s, stamp) for s in signatures)]


def record_signatures(logs: Path, signed: Iterable[tuple[Savepoint, LineSignature]]) -> None:
    """Records each savepoint's signature by the user's signing key, under one lock."""
    with locked(logs, 10.0):
        for savepoint, signature in signed:
            append(
                logs,
                {
                    "event": Event.SAVEPOINT_SIGNED,
                    "timestamp": utc_timestamp(),
                    "instance": savepoint.instance,
                    "sequence": savepoint.sequence,
                    "snapshot_hash": savepoint.created.get("snapshot_hash"),
                    "signer": signature.signer,
                    "line_signature": signature.signature,
                },
            )


def signed_content(savepoint: Savepoint) -> bytes:
    """What a signature of `savepoint` covers: its SAVEPOINT_CREATED line, every field of it, as
    canonical JSON (sorted keys, no spaces), so no field of the line can change unseen."""
    return json.dumps(savepoint.created, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def restored_lines(
    savepoint: Savepoint, signatures: list[LineSignature], commit: str, branch: str, remote: str
) -> list[dict]:
    """The index lines `precompact restore` writes for a savepoint it checked on the remote: its
    SAVEPOINT_CREATED line exactly as the remote holds it (its machine tag stays the one it was
    written with, so it checks only on the machine that wrote it), the signatures that checked,
    and the commit that added it, pushed."""
    stamp = utc_timestamp()
    about = {"instance": savepoint.instance, "sequence": savepoint.sequence}
    return [
        savepoint.created,
        *(
            {
                "event": Event.SAVEPOINT_SIGNED,
                "timestamp": stamp,
                **about,
                "snapshot_hash": savepoint.created.get("snapshot_hash"),
                "signer": s.signer,
                "line_signature": s.signature,
            }
            for s in signatures
        ),
        {
            "event": Event.LAYER_2_COMMITTED,
            "timestamp": stamp,
            **about,
            "commit": commit,
            "branch": branch,
            "restored": True,
        },
        {"event": Event.LAYER_2_PUSHED, "timestamp": stamp, **about, "commit": commit, "remote": remote},
    ]


def append_restored(logs: Path, lines: Iterable[dict]) -> None:
    """Appends lines `precompact restore` checked, as they are: a SAVEPOINT_CREATED line keeps
    the tag it came with instead of getting this machine's (this machine did not write it).
    One fsync for all. Call with the lock held, after reading logs/ again under it: a hook may
    have saved since restore first read it."""
    _append_durably(logs, b"".join(_line(line) for line in lines))


def fold(events: list[dict]) -> list[Savepoint]:
    """Savepoints in the order they were created (sequence order within an instance), each
    with the latest state of its layers."""
    by_key: dict[tuple[str, int], Savepoint] = {}
    for event in events:
        sequence, instance = event.get("sequence"), event.get("instance")
        if not isinstance(sequence, int) or not isinstance(instance, str):
            continue
        kind = event.get("event")
        savepoint = by_key.get((instance, sequence))
        if kind == Event.SAVEPOINT_CREATED:
            if savepoint is None:
                by_key[(instance, sequence)] = Savepoint(sequence=sequence, created=event)
            elif event != savepoint.created:
                savepoint.recreated.append(_stated_hash(event))
            continue
        # After a second SAVEPOINT_CREATED with other content, a line about (instance, sequence)
        # may be the other's (a commit that holds the other snapshot): none is applied to the first.
        if savepoint is None or savepoint.recreated:
            continue
        if kind in _LAYER_2_EVENTS:
            savepoint.layer_2 = _LAYER_2_EVENTS[kind]
            reason = event.get("reason")
            savepoint.layer_2_failure = str(reason) if kind == Event.LAYER_2_FAILED and reason else None
            if kind == Event.LAYER_2_COMMITTED:
                savepoint.commit = event.get("commit")
                savepoint.restored = savepoint.restored or event.get("restored") is True
        elif kind in _LAYER_3_EVENTS:
            savepoint.layer_3 = _LAYER_3_EVENTS[kind]
            if kind == Event.LAYER_3_CONFIRMED:
                savepoint.chain_signature = event.get("signature")
                savepoint.chain_slot = event.get("slot")
                endpoint = event.get("endpoint")
                savepoint.chain_endpoint = shown_endpoint(endpoint) if isinstance(endpoint, str) else None
        elif kind == Event.COMPACT_SUMMARY:
            savepoint.compact_summary = event.get("summary")
            savepoint.summary_seal = event.get("seal")
            continue
        elif kind == Event.SUMMARY_SIGNED:
            signer, sha256, signature = (event.get(k) for k in ("signer", "summary_sha256", "summary_signature"))
            if isinstance(signer, str) and isinstance(sha256, str) and isinstance(signature, str):
                savepoint.summary_signatures.append(SummarySignature(signer, sha256, signature))
            continue
        elif kind == Event.LOCAL_COPY_PRUNED:
            savepoint.pruned = True
            continue
        elif kind == Event.SAVEPOINT_SIGNED:
            signer, signature = event.get("signer"), event.get("line_signature")
            if isinstance(signer, str) and isinstance(signature, str):
                savepoint.signatures.append(LineSignature(signer, signature))
            continue
        if kind in (Event.LAYER_2_FAILED, Event.LAYER_3_FAILED):
            layer = "layer_2" if kind == Event.LAYER_2_FAILED else "layer_3"
            savepoint.failures.append(Failure(layer, str(event.get("reason", "unknown reason"))))
    return list(by_key.values())


def _stated_hash(event: dict) -> str:
    stated = event.get("snapshot_hash")
    return stated.removeprefix("sha256:") if isinstance(stated, str) else ""


# What the user does when logs/ holds two chains of one instance (a savepoint written here while
# another machine's came in): the remote's chain back whole, then this machine's sessions saved
# again on top of it from their transcripts.
TWO_CHAINS_FIX = (
    "to keep both, move logs/ out of the project (it keeps this machine's snapshots), run "
    "`precompact restore`, then `precompact import` (`--agent` for another agent's sessions) to "
    "save this machine's sessions again on top"
)


def lacking_notice(count: int, only_here: list[Savepoint]) -> str:
    """What every command says when logs/ lacks `count` savepoints the remote's savepoint branch
    holds (`flush`, the worker, `status`, `verify`, `recall`, `resurrect`, `uncompact`).
    `only_here`: the savepoints of that instance logs/ holds that the branch lacks. With none,
    `precompact restore` brings the others back. With some (a savepoint written here while
    another machine's came in, or while `restore` fetched), logs/ and the branch hold two chains
    of the instance: restore never writes over a savepoint logs/ holds and Layer 2 never commits
    over savepoints logs/ lacks, so naming either would send the user round a loop; the step
    that joins them is named instead."""
    if not only_here:
        return f"the remote holds {count} savepoint(s) that logs/ lacks: run `precompact restore`"
    here = ", ".join(f"#{s.sequence}" for s in only_here)
    return (
        f"the remote holds {count} savepoint(s) that logs/ lacks, and logs/ holds {len(only_here)} that the "
        f"remote lacks ({here}): two chains of {quoting.name(only_here[0].instance)}, which `precompact restore` keeps apart "
        f"and `precompact flush` never pushes over (run again, neither changes anything); {TWO_CHAINS_FIX}"
    )


def chain_ahead_notice(instance: str, held: int, last: int, only_here: list[Savepoint]) -> str:
    """What `verify` says when `instance`'s on-chain record holds savepoint `held`, past `last`,
    the newest logs/ holds. `only_here`: the instance's savepoints logs/ holds that the remote's
    branch lacks, which `lacking_notice` says (every command says it first) with the step that
    joins the two chains; with some, the record is the remote's chain's, which `precompact
    restore` keeps apart from them, so naming restore would send the user round a loop."""
    ahead = f"the on-chain record of {quoting.name(instance)} holds savepoint {held}, logs/ {f'up to {last}' if last else 'none'}"
    if not only_here:
        return f"{ahead}: run `precompact restore`"
    here = ", ".join(f"#{s.sequence}" for s in only_here)
    return (
        f"{ahead}: it is the record of the remote's chain, which `precompact restore` keeps apart from the one "
        f"logs/ holds ({here}): the step that joins the two chains is named with them"
    )


def recreated_notice(savepoint: Savepoint) -> str:
    """What `status` and `verify` say of a savepoint the index creates again with other content."""
    others = ", ".join(f"sha256:{stated[:16]}" for stated in savepoint.recreated)
    return (
        f"{savepoint.instance} #{savepoint.sequence} (sha256:{savepoint.snapshot_hash[:16]}) is created again by a "
        f"later index line with another snapshot ({others}): no line about it after that is taken; {TWO_CHAINS_FIX}"
    )


def of_instance(folded: list[Savepoint], instance: str) -> list[Savepoint]:
    """One instance's savepoints, in sequence order."""
    return sorted((s for s in folded if s.instance == instance), key=lambda s: s.sequence)


def savepoints(logs: Path, instance: str | None = None) -> list[Savepoint]:
    """The folded index: every savepoint in creation order, or one instance's in sequence order."""
    folded = fold(read(logs).events)
    return folded if instance is None else of_instance(folded, instance)


def lineage(events: list[dict], instance: str) -> list[str]:
    """The instances this one continues, oldest first and itself last, as its latest
    RESURRECTED event recorded; just itself when it was never resurrected from another."""
    for event in reversed(events):
        if (
            event.get("event") == Event.RESURRECTED
            and event.get("instance") == instance
            and isinstance(event.get("lineage"), list)
        ):
            return [str(name) for name in event["lineage"]]
    return [instance]


def highest_confirmed(savepoints: Iterable[Savepoint]) -> int:
    """The highest sequence among `savepoints` marked confirmed on chain (0: none)."""
    return max((s.sequence for s in savepoints if s.layer_3 == Layer3.CONFIRMED), default=0)


def latest(logs: Path, instance: str) -> Savepoint | None:
    mine = savepoints(logs, instance)
    return mine[-1] if mine else None


class Rotation(Record, frozen=True):
    """The instance's lineage moved from `old_authority`'s record to `new_authority`'s at
    savepoint `sequence`, by the transaction `signature`; `recovered` when the old key did not
    sign (`precompact key rotate --recover`)."""

    instance: str
    sequence: int
    old_authority: str
    new_authority: str
    signature: str
    recovered: bool


_ROTATION_PURPOSE = "authority-rotated"


def record_rotation(logs: Path, rotation: Rotation) -> None:
    """Records the rotation, sealed with this machine's key: a line appended to logs/ cannot
    claim one (nor add a key to the lineage)."""
    seal = _seal(_ROTATION_PURPOSE, list(rotation.as_dict().values()))
    record(logs, {"event": Event.AUTHORITY_ROTATED, **rotation.as_dict(), "seal": seal})


def rotations(events: list[dict], instance: str) -> list[Rotation]:
    """The instance's rotations this machine recorded, in the order they happened; a line
    without every field, or whose seal is not this machine's, counts as none (the index is
    evidence, never a root: `unsealed_rotations` names those lines)."""
    found = (_rotation_line(e) for e in events if _is_rotation_of(e, instance))
    return [rotation for rotation in found if rotation is not None]


def unsealed_rotations(events: list[dict], instance: str) -> int:
    """How many of the instance's AUTHORITY_ROTATED lines `rotations` counts as none: appended
    to logs/ by hand, copied from another machine, or recorded before rotations were sealed."""
    return sum(_rotation_line(e) is None for e in events if _is_rotation_of(e, instance))


def _is_rotation_of(event: dict, instance: str) -> bool:
    return event.get("event") == Event.AUTHORITY_ROTATED and event.get("instance") == instance


def _rotation_line(event: dict) -> Rotation | None:
    sequence, recovered = event.get("sequence"), event.get("recovered")
    old, new, signature = (event.get(k) for k in ("old_authority", "new_authority", "signature"))
    if not (
        type(sequence) is int
        and type(recovered) is bool
        and isinstance(old, str)
        and isinstance(new, str)
        and isinstance(signature, str)
    ):
        return None
    found = Rotation(event["instance"], sequence, old, new, signature, recovered)
    return found if _sealed_here(_ROTATION_PURPOSE, list(found.as_dict().values()), event.get("seal")) else None


class Closing(Record, frozen=True):
    """`precompact close` closed `instance`'s record at `address` (of `authority`), which held
    savepoint `sequence`, in transaction `signature`; `lamports` went back to the authority."""

    instance: str
    address: str
    authority: str
    sequence: int
    lamports: int
    signature: str


_CLOSING_PURPOSE = "record-closed"
_SEAL_HEX = 64


def _sealed_bytes(values: list) -> bytes:
    return json.dumps(values, separators=(",", ":"), ensure_ascii=False).encode("utf-8", "surrogatepass")


def _seal(purpose: str, values: list) -> str:
    """This machine's tag over a line's `values`, for the line's "seal"."""
    return provenance.stamped(purpose, _sealed_bytes(values))[-_SEAL_HEX // 2 :].hex()


def _sealed_here(purpose: str, values: list, seal: object) -> bool:
    """Whether `seal` is this machine's tag over a line's `values` (`_seal`)."""
    if not isinstance(seal, str) or len(seal) != _SEAL_HEX:
        return False
    try:
        stored = _sealed_bytes(values) + bytes.fromhex(seal)
    except ValueError:
        return False
    return provenance.made_here(purpose, stored) is not None


_SUMMARY_PURPOSE = "compact-summary"


def _summary_values(event: dict) -> list:
    """What a COMPACT_SUMMARY line's seal covers: which savepoint, and the summary."""
    return [event.get("instance"), event.get("sequence"), event.get("summary")]


def record_closing(logs: Path, closing: Closing) -> None:
    """Records the closing, sealed with this machine's key: a copied logs/ cannot claim one."""
    seal = _seal(_CLOSING_PURPOSE, list(closing.as_dict().values()))
    record(logs, {"event": Event.RECORD_CLOSED, **closing.as_dict(), "seal": seal})


def closing(events: list[dict], instance: str) -> Closing | None:
    """The last closing of `instance`'s record this machine recorded; a line without every field,
    or whose seal is not this machine's, counts as none. (Nothing reopens it: a new record for
    the instance would have to start at savepoint 1 again, so the chain is done with it.)"""
    found = None
    for event in events:
        if event.get("event") == Event.RECORD_CLOSED and event.get("instance") == instance:
            found = _closing_line(event) or found
    return found


def _closing_line(event: dict) -> Closing | None:
    values = {name: event.get(name) for name in ("instance", "address", "authority", "signature")}
    numbers = {name: event.get(name) for name in ("sequence", "lamports")}
    if not all(isinstance(v, str) for v in values.values()) or not all(type(n) is int for n in numbers.values()):
        return None
    found = Closing(**values, **numbers)  # type: ignore[arg-type]
    return found if _sealed_here(_CLOSING_PURPOSE, list(found.as_dict().values()), event.get("seal")) else None
