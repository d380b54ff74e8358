"""Recall: full-text search over the conversation histories the savepoints hold.

The index is derived data and never a source of truth, in two parts in logs/: the words'
postings in a tantivy index (`precompact-recall.tantivy/`, one document per entry: its words,
not stored, and the entry's number), and the bookkeeping in SQLite (`precompact-recall.sqlite`:
the savepoints indexed, each entry's role, tool, time, the savepoint that first held it and its
place there, and which savepoints hold again an entry another first held). A search's filters
(role, tool, time, savepoints) are answered by the bookkeeping's rows of the entries the words
matched: in tantivy they were about a third of what indexing an entry costs (#42).
Neither holds conversation text. Excerpts are read from the
snapshot itself, after the verifier (`verdicts.check_snapshot`) has checked its bytes against the
hash this machine recorded when it wrote them; a snapshot that fails is neither indexed nor
quoted, and the result says so. Each entry is indexed once, however many later savepoints hold
it again, so indexing a savepoint costs only its new entries.

Every file in logs/ is opened through `logs_dir`. SQLite keeps its rollback journal in memory
(no side files to follow through a link). tantivy opens its files by path itself, so its
directory is checked first (`logs_dir.handed_over`: a real directory of this user's holding only
regular files of this user's); one that is not, that tantivy cannot open, or whose count of
documents is not the one the bookkeeping recorded at its last commit, is removed and rebuilt
from the verified snapshots, never searched. A writer killed mid-write leaves a marker, and the
next writer rebuilds the index from the snapshots.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import gc
import hashlib
import itertools
import mmap
import os
import re
import sqlite3
import stat
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import orjson

from precompact.boundary import logs_dir, quoting
from precompact.config.settings import Config
from precompact.errors import PrecompactError, WrongValue
from precompact.local import capture, chunks, savepoint_log, snapshot
from precompact.transcript import conversation
from precompact.verifier import signed, verdicts

if TYPE_CHECKING:
    import tantivy

INDEX_NAME = "precompact-recall.sqlite"
TEXT_DIR = "precompact-recall.tantivy"  # the words' postings; tantivy's files, checked before it opens them
ANALYZER = "precompact"  # the name the text field's analyzer is registered under on every index opened
WRITER_HEAP_BYTES = 50_000_000  # tantivy's indexing buffer (its floor is 15 MB per thread)
WRITING_MARK = "precompact-recall.writing"
LOCK_NAME = "precompact-recall.lock"
LOCK_TIMEOUT_SECONDS = 60.0
SCHEMA_VERSION = "9"  # 2: bookkeeping lines no longer indexed; 3: a history digest may be absent (a grown savepoint); 4: entries looked up by `key`; 5: the words in tantivy; 6: tantivy holds the words and entry ids only, `holds` only entries held again; 7: user lines Claude Code wrote (task notifications, hook feedback) are meta, a time outside years 1-9999 in UTC is none; 8: what was delivered within a running turn (queued_command attachments) is indexed, the user's as user; 9: a turn Claude Code marks as no person's (turnOrigin, textNotTyped) and a message Gemini composed itself (shell mode, editor context) are meta
CACHE_KIB = (
    64 << 10
)  # SQLite's page cache: inserting a savepoint's words goes 2-3 times faster than with the default 2 MB
DEFAULT_BUDGET = 6_000
EXCERPT_CHARS = 360
MAX_HITS = 50
# Said before the hits of a search none of whose entries held every word.
ANY_WORD_NOTE = "no entry holds every word; these hold some of them"
BATCH_ENTRIES = 500  # entries parsed and looked up at a time while indexing (SQLite allows 999 parameters before 3.32)
ROLES = ("user", "assistant", "tool", "meta")
# A savepoint's entries are those it first held (`entries` rows naming it as holder, with their
# place in it: ids first_entry to first_entry + added - 1, in the order of their places) and
# those another savepoint, or an earlier place of its own, first held (`holds` rows); a savepoint
# that continues another (`continues`) holds that one's entries first. A row per place held was
# written for every entry before schema 6: about a twentieth of an update's CPU (#42).
_SCHEMA = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE savepoints(id INTEGER PRIMARY KEY, instance TEXT NOT NULL, sequence INTEGER NOT NULL,
    sha256 TEXT NOT NULL, snapshot_file TEXT NOT NULL, stamp TEXT, time INTEGER, entries INTEGER NOT NULL,
    history_end INTEGER NOT NULL, history_digest BLOB, continues INTEGER, first_entry INTEGER, added INTEGER NOT NULL,
    UNIQUE(instance, sequence));
CREATE TABLE tool_uses(id TEXT PRIMARY KEY, name TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE entries(id INTEGER PRIMARY KEY, key INTEGER NOT NULL, digest BLOB NOT NULL, holder INTEGER NOT NULL,
    position INTEGER NOT NULL, start INTEGER NOT NULL, stop INTEGER NOT NULL, role TEXT NOT NULL, tool TEXT, time REAL);
CREATE INDEX entries_key ON entries(key);
CREATE TABLE holds(savepoint INTEGER NOT NULL, position INTEGER NOT NULL, entry INTEGER NOT NULL,
    PRIMARY KEY(savepoint, position)) WITHOUT ROWID;
CREATE INDEX holds_entry ON holds(entry, savepoint);
INSERT INTO meta VALUES ('documents', '0'), ('tokens', '0');
"""


class RecallError(PrecompactError):
    """A request recall cannot answer; the message says why and what to do."""


class WrongRequest(RecallError, WrongValue):
    """A query, time or entry reference not of the form recall and show take."""


@dataclass(frozen=True)
class Hit:
    instance: str
    sequence: int
    position: int  # the entry's place in that savepoint's history, from 1
    role: str
    tool: str | None
    time: float | None
    excerpt: str
    # The other places the same entry (same role, tool and text) is saved: a later savepoint of a
    # session saved twice, an uncompacted or imported copy; one hit stands for all of them.
    also: tuple[str, ...] = ()
    # The project's root, for a hit of a search over every project (recall.everywhere); `show
    # --project` takes it with the reference.
    project: str | None = None

    @property
    def ref(self) -> str:
        return f"{self.sequence}:{self.position}"

    def header(self) -> str:
        when = _iso(self.time) if self.time is not None else "no time"
        role = self.role if self.role in ROLES else quoting.inline(self.role)
        tool = f" · {shown_tool(self.tool)}" if self.tool else ""
        also = f" · also in {', '.join(self.also)}" if self.also else ""
        where = f" · project {quoting.inline(self.project)}" if self.project is not None else ""
        return quoting.single_line(
            f"[{self.ref}] savepoint {self.sequence} of {quoting.name(self.instance)} · entry {self.position} · {when} · {role}{tool}{also}{where}"
        )


# The shape of a tool's name precompact prints bare in its own lines (the transcript names it:
# Bash, mcp__server__tool, run_shell_command); a name of any other shape (a quote, a `·`, a line
# break: a forged field or sentence) is shown as a quoted string, as an instance's name is
# (quoting.name).
_TOOL_NAME = re.compile(r"[A-Za-z0-9_.:-]{1,64}")


def shown_tool(name: str) -> str:
    """A tool's name as precompact's lines show it: bare if of a tool name's shape, else quoted."""
    return name if _TOOL_NAME.fullmatch(name) else quoting.inline(name)


@dataclass
class Results:
    hits: list[Hit] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what was not indexed or withheld, and why
    matched: int = 0  # entries that matched, before the budget

    def text(self, budget: int) -> str:
        """The hits as text, at most `budget` characters, notes first."""
        parts = [*self.notes]
        if not self.hits:
            parts.append("no saved entry matches")
        used = sum(len(p) + 1 for p in parts)
        shown = 0

        def more(count: int) -> str:
            return f"({count} more; narrow the query or raise the budget; `precompact show REF` prints an entry whole)"

        for hit in self.hits:
            block = f"{hit.header()}\n{quoting.block(hit.excerpt, budget)}"
            # Room is kept for saying that more matched, unless this is the last match.
            reserve = len(more(self.matched)) + 1 if shown + 1 < self.matched else 0
            if used + len(block) + 1 + reserve > budget:
                break
            parts.append(block)
            used += len(block) + 1
            shown += 1
        if shown < self.matched:
            parts.append(more(self.matched - shown))
        return "\n".join(parts)[:budget]


@dataclass(frozen=True)
class Entry:
    instance: str
    sequence: int
    position: int
    role: str
    tool: str | None
    time: float | None
    text: str
    raw: object


@dataclass
class Update:
    indexed: list[int] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    rebuilt: str | None = None  # why the index was rebuilt, if it was


# --- what an entry says -------------------------------------------------------------------------


# The text of Claude Code's entries that are no message: a summary's, a system line's. Its
# bookkeeping lines (queue-operation, last-prompt, api-request-blob: the request as sent) repeat
# what the user typed and the brief, which the conversation's entries already hold: indexed,
# each prompt came back two or three times, as `meta`.
_OWN_TEXT = {"summary": "summary", "system": "content"}


def entry_facts(entry: object, tool_names: dict[str, str]) -> tuple[str, str | None, str]:
    """An entry's role, the tool it calls or answers, and its searchable text. `tool_names`
    maps tool_use ids to tool names; the entries seen so far fill it. Indexing calls it once per
    new entry (its share of an update's CPU): each field is read once."""
    if not isinstance(entry, dict):
        return "meta", None, ""
    kind = entry.get("type")
    texts: list[str] = []
    tools: list[str] = []
    answered = False
    if kind == "user" or kind == "assistant":
        message = entry.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            for block in content:
                if isinstance(block, str):
                    texts.append(block)
                elif isinstance(block, dict):
                    answered = _block_facts(block, tool_names, texts, tools) or answered
        flagged = entry.get("isMeta") or entry.get("isCompactSummary") or entry.get("isSidechain")
        # A user line is the user's only when conversation.user_text says the user typed it; the
        # rest (a task notification, hook feedback, a slash command's output) is Claude Code's.
        typed = kind == "assistant" or bool(conversation.user_text(entry))
        role = "meta" if flagged else "tool" if answered else "meta" if not typed else kind
    elif (queued := conversation.queued_command(entry)) is not None:
        # Delivered within a running turn: a message the user sent (theirs) or a background
        # task's notification (Claude Code's); its one copy in the transcript.
        texts.append(_flat(queued.get("prompt")))
        role = "user" if conversation.user_text(entry) else "meta"
    else:
        # `kind` may be any JSON value: only a string is looked up.
        if isinstance(kind, str) and kind in _OWN_TEXT:
            texts.append(_flat(entry.get(_OWN_TEXT[kind])))
        role = "meta"
    text = texts[0] if len(texts) == 1 else "\n".join(filter(None, texts))
    return role, (tools[0] if tools else None), text


def _block_facts(block: dict, tool_names: dict[str, str], texts: list[str], tools: list[str]) -> bool:
    """Adds a content block's text and tool to `texts` and `tools`; whether it is a tool's result."""
    text = block.get("text")
    if isinstance(text, str):
        texts.append(text)
        return False
    kind = block.get("type")
    if kind == "thinking":
        thought = block.get("thinking")
        if isinstance(thought, str):
            texts.append(thought)
    elif kind == "tool_use":
        named = block.get("name")
        name = named if isinstance(named, str) else "?"
        tool_id = block.get("id")
        if isinstance(tool_id, str):
            tool_names[tool_id] = name
        tools.append(name)
        texts.append(f"{name} {_flat(block.get('input'))}")
    elif kind == "tool_result":
        tool_id = block.get("tool_use_id")
        if isinstance(tool_id, str) and tool_id in tool_names:
            tools.append(tool_names[tool_id])
        texts.append(_flat(block.get("content")))
        return True
    return False


def bookkeeping_kind(entry: object) -> str | None:
    """What kind of the agent's own record-keeping a saved entry is (Claude Code's attachments,
    which carry tool listings and hook context, system lines, file-history snapshots, user lines
    it marks isMeta...), None when it is the conversation: a user or assistant turn, a tool call
    or result, a compaction summary or boundary, a subagent's turn."""
    if not isinstance(entry, dict):
        return "unreadable record"
    kind = entry.get("type")
    if kind in ("user", "assistant"):
        return "meta line" if entry.get("isMeta") and not entry.get("isCompactSummary") else None
    if kind == "summary" or (kind == "system" and entry.get("subtype") == "compact_boundary"):
        return None
    return kind[:40] if isinstance(kind, str) and kind else "untyped record"


def _flat(value: object) -> str:
    """The strings inside a JSON value, one per line."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "\n".join(filter(None, (_flat(v) for v in value.values())))
    if isinstance(value, list):
        return "\n".join(filter(None, (_flat(v) for v in value)))
    return "" if value is None else str(value)


def saved_entries(
    reader: snapshot.SnapshotReader | _Grown, after: int | None = None
) -> Iterator[tuple[tuple[int, int], object]]:
    """A snapshot's conversation entries, oldest first (after the entry ending at `after`), each
    with its place in the snapshot: the one place recall and un-compaction read a history
    (ValueError if it cannot be read)."""
    return reader.located_entries(after)


def entry_time(entry: object) -> float | None:
    """When an entry says it was written (Unix seconds), None when it does not say or says a
    time no date can show (conversation.written_at)."""
    return conversation.written_at(entry)


def _parse_time(text: str) -> datetime:
    moment = datetime.fromisoformat(text)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _iso(unix: float) -> str:
    return datetime.fromtimestamp(unix, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# --- snapshots, checked by the verifier -------------------------------------------------------


class _Snapshots:
    """Snapshots from logs/, used only once the verifier has checked their bytes against the
    hash this machine recorded (the local root). A snapshot indexed before is read again without
    re-hashing it only while its file is the one checked then: same inode, size, modification
    and change times (no tool can set a file's change time back); otherwise it is checked again."""

    def __init__(self, logs: Path, signer: str | None):
        self._logs = logs
        self._signer = signer
        self._local = verdicts.LocalSnapshots(logs)
        self._checked: dict[tuple[str, int], tuple[snapshot.SnapshotReader | str, str | None]] = {}
        self._mapped_readers: dict[tuple[str, int], _Reader] = {}

    def checked(self, savepoint: savepoint_log.Savepoint) -> tuple[snapshot.SnapshotReader | str, str | None]:
        """The snapshot's reader and its files' stamp, or why it may not be used."""
        key = (savepoint.instance, savepoint.sequence)
        if key not in self._checked:
            self._checked[key] = self._check(savepoint)
        return self._checked[key]

    def reader(self, savepoint: savepoint_log.Savepoint, stamp: str | None) -> _Reader | str:
        """The snapshot's reader, mapped without re-hashing while its files still have `stamp`."""
        key = (savepoint.instance, savepoint.sequence)
        if key not in self._mapped_readers and key not in self._checked and stamp is not None:
            mapped = self._mapped(savepoint, stamp)
            if mapped is not None:
                self._mapped_readers[key] = mapped
        return self._mapped_readers.get(key) or self.checked(savepoint)[0]

    def _check(self, savepoint: savepoint_log.Savepoint) -> tuple[snapshot.SnapshotReader | str, str | None]:
        before = self._stamp(savepoint)
        try:
            document = signed.local_document(
                savepoint,
                self._local.get(savepoint),
                chunks.local_fetch(self._logs),
                f"logs/{chunks.CHUNKS_DIR}/",
                self._signer,
            )
        except verdicts.Unrooted as e:
            return str(e), None
        except verdicts.Broken as e:
            return f"it fails verification: {e}", None
        stamp = self._stamp(savepoint)
        return snapshot.SnapshotReader(document), stamp if stamp is not None and stamp == before else None

    def _open(self, savepoint: savepoint_log.Savepoint) -> int | None:
        name = savepoint.snapshot_file
        if not logs_dir.is_snapshot_name(name, savepoint.sequence):
            return None
        try:
            return logs_dir.open_file(self._logs, logs_dir.within(str(name)), os.O_RDONLY)
        except (FileNotFoundError, logs_dir.ConfinementError):
            return None

    def _stamp(self, savepoint: savepoint_log.Savepoint) -> str | None:
        """The identity of the snapshot file and, for a chunked one, of every chunk it lists."""
        fd = self._open(savepoint)
        if fd is None:
            return None
        try:
            return self._stamp_of(fd)[0]
        finally:
            os.close(fd)

    def _stamp_of(self, fd: int) -> tuple[str | None, list[chunks.Ref], list[chunks.Ref]]:
        """The stamp of the open snapshot file, and every chunk and the history chunks a chunked
        one lists."""
        stamp = logs_dir.identity(os.fstat(fd))
        if not chunks.is_chunked(os.pread(fd, len(chunks.CHUNKED_OPEN), 0)):
            return stamp, [], []
        try:
            with os.fdopen(os.dup(fd), "rb") as f:
                fields = orjson.loads(f.read())
            listed, history = chunks.refs(fields), chunks.history_refs(fields)
        except (ValueError, KeyError, TypeError):
            return None, [], []
        covered = chunks.stamps(self._logs, listed)
        return (f"{stamp}+{covered}" if covered else None), listed, history

    def _mapped(self, savepoint: savepoint_log.Savepoint, stamp: str) -> _Reader | None:
        fd = self._open(savepoint)
        if fd is None:
            return None
        try:
            found, _, history = self._stamp_of(fd)
            if found != stamp or os.fstat(fd).st_size == 0:
                return None
            if history:
                return chunks.MappedHistory(self._logs, history)
            return snapshot.SnapshotReader(mmap.mmap(fd, 0, prot=mmap.PROT_READ))
        except ValueError:
            return None
        finally:
            os.close(fd)

    def grown(self, savepoint: savepoint_log.Savepoint, previous: _Previous) -> tuple[_Grown, str | None] | None:
        """What `savepoint`'s history adds to `previous`'s (the instance's latest indexed
        savepoint), and its files' stamp, checked without reading what the two share; None when
        that cannot be shown (the caller then checks the whole snapshot). Shown when: the
        previous snapshot and every chunk it lists are the files checked when it was indexed
        (its stamp); the local root vouches for this snapshot's bytes (`signed.locally_rooted`),
        which list its chunks by SHA-256; its history lists the previous one's chunks but the
        last, then a chunk that starts with the bytes of that last one (the session grew); and
        every chunk it lists that the previous one did not, and every chunk read here, hashes to
        its name."""
        if previous.stamp is None or not previous.entries:
            return None
        fd = self._open(previous.savepoint)
        if fd is None:
            return None
        try:
            stamp, checked_then, history = self._stamp_of(fd)
        finally:
            os.close(fd)
        if stamp != previous.stamp or not history:
            return None
        before = self._stamp(savepoint)
        try:
            found = signed.locally_rooted(savepoint, self._local.get(savepoint), self._signer)
        except (verdicts.Unrooted, verdicts.Broken):
            return None
        if not chunks.is_chunked(found.data):
            return None
        try:
            fields = orjson.loads(found.data)
            listed, grown = chunks.refs(fields), chunks.history_refs(fields)
        except (ValueError, KeyError, TypeError):
            return None
        shared, last = len(history) - 1, history[-1]
        if len(grown) < len(history) or grown[:shared] != history[:shared]:
            return None
        start = len(chunks.HISTORY_OPEN) + sum(ref.size for ref in history)
        if start - 1 != previous.history_end:
            return None
        fetch, read = chunks.local_fetch(self._logs), dict[chunks.Ref, bytes]()
        known = set(checked_then)  # a set: a 100 MB history lists about a hundred chunks, compared in pairs otherwise
        try:
            # The session grew: the chunk after the shared ones starts with the previous last one.
            read[grown[shared]] = chunks.checked_continuing(grown[shared], fetch(grown[shared]), last)
            for ref in [*grown[shared + 1 :], *(ref for ref in listed if ref not in known)]:
                if ref not in read:
                    read[ref] = chunks.checked(ref, fetch(ref))
        except chunks.ChunkError:
            return None
        added: list[bytes | memoryview] = [memoryview(read[grown[shared]])[last.size :]]
        added.extend(read[ref] for ref in grown[shared + 1 :])
        after = self._stamp(savepoint)
        return _Grown(start, added), after if after is not None and after == before else None


@dataclass(frozen=True)
class _Previous:
    """The instance's latest savepoint in the index before the one being indexed."""

    id: int
    savepoint: savepoint_log.Savepoint
    entries: int
    history_end: int
    history_digest: bytes | None
    stamp: str | None


class _Grown:
    """The entries a savepoint's history adds to the one it continues: `added`, the history's
    bytes from `start` (a place in the full document) to its end in pieces, each entry followed
    by a comma, read by `SnapshotReader`'s parser; places are the full document's. The pieces are
    copied once, into the document the parser reads (they were copied four times, #42)."""

    def __init__(self, start: int, added: list[bytes | memoryview]):
        self._start = start
        self._shift = start - len(chunks.HISTORY_OPEN)
        size = sum(len(piece) for piece in added)
        *whole, last = added
        document = b"".join([chunks.HISTORY_OPEN, *whole, memoryview(last)[:-1], b'],"format_version":0}'])
        self._reader = snapshot.SnapshotReader(document)
        self.history_end = start - 1 + size

    def located_entries(self, after: int | None = None) -> Iterator[tuple[tuple[int, int], object]]:
        if after != self._start - 1:
            raise ValueError(f"no entry of this snapshot ends at byte {after}")
        for (start, stop), entry in self._reader.located_entries():
            yield (start + self._shift, stop + self._shift), entry

    def entry_bytes(self, place: tuple[int, int]) -> bytes:
        start, stop = place
        return self._reader.entry_bytes((start - self._shift, stop - self._shift))


# What reads an indexed entry: the snapshot whole, or a chunked one's history in place.
_Reader = snapshot.SnapshotReader | chunks.MappedHistory


# --- the index file ---------------------------------------------------------------------------


def index_path(logs: Path) -> Path:
    return logs / INDEX_NAME


@contextlib.contextmanager
def _connect(logs: Path, create: bool) -> Iterator[sqlite3.Connection | None]:
    """The index, opened only if logs/ holds it as a plain file of its own (never through a
    link); None when it is absent and not to be created."""
    flags = os.O_RDWR | (os.O_CREAT if create else 0)
    try:
        fd = logs_dir.open_file(logs, INDEX_NAME, flags)
    except FileNotFoundError:
        if create:
            raise
        yield None
        return
    opened = os.fstat(fd)
    # Closed before SQLite opens the file: closing any descriptor of a file drops the process's
    # POSIX locks on it, SQLite's included.
    os.close(fd)
    path = index_path(logs)
    connection = sqlite3.connect(f"file:{path}?mode=rw", uri=True, timeout=LOCK_TIMEOUT_SECONDS, isolation_level=None)
    try:
        with contextlib.suppress(sqlite3.DatabaseError):  # not a database: the schema check says so
            connection.execute("PRAGMA journal_mode=MEMORY")
            connection.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
        now = os.stat(path, follow_symlinks=False)
        if (now.st_dev, now.st_ino) != (opened.st_dev, opened.st_ino):
            raise logs_dir.ConfinementError(errno.EPERM, f"{path} was replaced while precompact opened it; remove it")
        yield connection
    finally:
        connection.close()


_KEPT = threading.local()  # per thread (the viewer answers in several): logs/ -> (file, its connection)


@contextlib.contextmanager
def _kept_open(logs: Path) -> Iterator[sqlite3.Connection | None]:
    """`_connect`, kept open for the next search over every project in this process (the MCP
    server's, the viewer's) while logs/ holds the same index file (device and inode): an idle
    connection holds no lock, and a replaced or removed index is opened again, as `_connect`
    opens it."""
    kept: dict[Path, tuple[tuple[int, int], contextlib.ExitStack, sqlite3.Connection]]
    kept = _KEPT.__dict__.setdefault("indexes", {})
    try:
        info = os.stat(index_path(logs), follow_symlinks=False)
        identity = (info.st_dev, info.st_ino)
    except FileNotFoundError:
        identity = None
    if logs in kept and kept[logs][0] != identity:
        kept.pop(logs)[1].close()
    if identity is not None and logs not in kept:
        opened = contextlib.ExitStack()
        connection = opened.enter_context(_connect(logs, create=False))
        if connection is None:
            opened.close()
        else:
            kept[logs] = (identity, opened, connection)
    yield kept[logs][2] if logs in kept else None


def _schema_ok(connection: sqlite3.Connection) -> bool:
    try:
        row = connection.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
    except sqlite3.DatabaseError:
        return False
    return row is not None and row[0] == SCHEMA_VERSION


# --- the words: a tantivy index in logs/ --------------------------------------------------------


class _Unusable(Exception):
    """The text index is absent, not what precompact wrote, unreadable, or not the one the
    bookkeeping recorded: rebuilt, never searched."""


def _engine():  # -> the tantivy module, imported only when recall runs (its import costs 15-40 ms)
    import tantivy

    return tantivy


def _analyzer() -> tantivy.TextAnalyzer:
    """FTS5's `unicode61 remove_diacritics 2`, as near as tantivy's filters go: runs of letters
    and digits, lowercased, diacritics folded (ASCII folding also maps letters FTS5 keeps, ø to o,
    ß to ss), and no cut of long tokens (tantivy's default analyzer drops those over 40 bytes, so
    a SHA-256 could not be found)."""
    engine = _engine()
    return (
        engine.TextAnalyzerBuilder(engine.Tokenizer.simple())
        .filter(engine.Filter.lowercase())
        .filter(engine.Filter.ascii_fold())
        .build()
    )


def _text_schema() -> tantivy.Schema:
    builder = _engine().SchemaBuilder()
    builder.add_text_field("text", tokenizer_name=ANALYZER, index_option="position")
    # The entry's id in the bookkeeping, which answers the filters; a fast field only: no filter
    # reads it as a term, and a column costs less to write than an inverted index.
    builder.add_unsigned_field("entry", fast=True)
    return builder.build()


def _open_text(logs: Path, create: bool) -> tantivy.Index:
    """The text index, its directory checked before tantivy opens anything in it; _Unusable
    when it is absent (and not to be created), refused or does not open."""
    try:
        path = logs_dir.handed_over(logs, TEXT_DIR, create)
    except FileNotFoundError:
        raise _Unusable("there was none") from None
    except logs_dir.ConfinementError as e:
        raise _Unusable(f"its text index was refused: {e}") from None
    engine = _engine()
    try:
        index = engine.Index(_text_schema(), str(path), reuse=True) if create else engine.Index.open(str(path))
    except ValueError as e:
        raise _Unusable(f"its text index does not open ({quoting.inline(str(e)[:200])})") from None
    index.register_tokenizer(ANALYZER, _analyzer())
    index.config_reader("manual")  # no thread watching the directory: reloaded when read again
    return index


def _recorded(connection: sqlite3.Connection) -> tuple[int, int]:
    """The text index's documents and their tokens, as the bookkeeping recorded them at its last
    commit."""
    kept = dict(connection.execute("SELECT key, value FROM meta WHERE key IN ('documents', 'tokens')").fetchall())
    counts = [kept.get(key) for key in ("documents", "tokens")]
    # Outside input like the rest of logs/: a count that is not one matches no index (rebuilt).
    documents, tokens = (int(n) if isinstance(n, str) and n.isascii() and n.isdigit() else -1 for n in counts)
    return documents, tokens


def _checked_text(logs: Path, connection: sqlite3.Connection) -> tuple[tantivy.Index, tantivy.Searcher]:
    """The text index and a searcher of it, once it holds the documents the bookkeeping recorded."""
    index = _open_text(logs, create=False)
    try:
        index.reload()
        searcher = index.searcher()
    except ValueError as e:
        raise _Unusable(f"its text index does not read ({quoting.inline(str(e)[:200])})") from None
    documents, tokens = _recorded(connection)
    if tokens < 0:
        raise _Unusable("its count of words is not recorded")
    if searcher.num_docs != documents:
        raise _Unusable(f"its text index holds {searcher.num_docs} entries where {documents} were recorded")
    return index, searcher


_KEPT_TEXT = (
    threading.local()
)  # per thread, as _KEPT: logs/ -> (its directory's and meta.json's identity, index, searcher)


def _kept_text(
    logs: Path, connection: sqlite3.Connection, afresh: bool = False
) -> tuple[tantivy.Index, tantivy.Searcher]:
    """`_checked_text`, kept for the next use in this process while the directory (not followed
    if a link) and its commit (`meta.json`, which tantivy replaces at each commit) are the ones
    checked then: a file added, removed or renamed there changes the directory. tantivy never
    rewrites a file in place; one rewritten so by another hand is seen by the next update
    (`_missing` checks `afresh`), not here."""
    kept: dict[Path, tuple[str, tantivy.Index, tantivy.Searcher]] = _KEPT_TEXT.__dict__.setdefault("indexes", {})
    try:
        place = os.stat(logs / TEXT_DIR, follow_symlinks=False)
        commit = os.stat(logs / TEXT_DIR / "meta.json", follow_symlinks=False)
        stamp = f"{logs_dir.identity(place)}/{logs_dir.identity(commit)}" if stat.S_ISDIR(place.st_mode) else None
    except OSError:
        stamp = None
    known = None if afresh else kept.get(logs)
    if known is not None and stamp is not None and known[0] == stamp and _recorded(connection)[0] == known[2].num_docs:
        return known[1], known[2]
    kept.pop(logs, None)
    index, searcher = _checked_text(logs, connection)
    if stamp is not None:
        kept[logs] = (stamp, index, searcher)
    return index, searcher


def analyzed(phrases: list[list[str]]) -> list[list[str]]:
    """The query's phrases as the text index holds their words (`_analyzer`); a phrase with no
    word left is dropped."""
    analyzer = _analyzer()
    return [tokens for words in phrases if (tokens := analyzer.analyze(" ".join(words)))]


def _text_query(
    schema: tantivy.Schema, tokens: list[list[str]], any_phrase: bool, boosts: list[float] | None = None
) -> tantivy.Query:
    """Every phrase (or any, with `any_phrase`), each scored by BM25 times its boost."""
    engine = _engine()
    clauses = []
    for n, words in enumerate(tokens):
        one = phrase_query(schema, words)
        clauses.append(engine.Query.boost_query(one, boosts[n]) if boosts is not None else one)
    if len(clauses) == 1:
        return clauses[0]
    occur = engine.Occur.Should if any_phrase else engine.Occur.Must
    return engine.Query.boolean_query([(occur, c) for c in clauses])


def phrase_query(schema: tantivy.Schema, words: list[str]) -> tantivy.Query:
    """One phrase of analyzed words: a term query for one word, else a phrase query."""
    engine = _engine()
    if len(words) == 1:
        return engine.Query.term_query(schema, "text", words[0])
    return engine.Query.phrase_query(schema, "text", words)


def _kept_to(indexed: dict[tuple[str, int], tuple[int, str | None]], in_scope: Iterable[int]) -> list[int] | None:
    """The savepoints a search is kept to (an entry is the savepoint's that first held it), None
    when they are every savepoint the index holds: the filter would let every entry through, and
    filtering reads every match (`_Filters`). An entry whose bookkeeping names a savepoint
    outside them all the same (an index another hand changed) is left out where its hit is read
    (`_hits`)."""
    kept = sorted(set(in_scope))
    return None if len(kept) == len({n for n, _ in indexed.values()}) else kept


@dataclass(frozen=True)
class _Filters:
    """What a search keeps of the entries its words match, answered by the bookkeeping's row of
    each: first held by one of `holders`; held by the savepoints `within` (a savepoint and
    those it continues, `_chain`); written at `since` or later; of `role`; calling or answering
    `tool`. None keeps every entry."""

    holders: list[int] | None = None
    within: list[int] | None = None
    since: float | None = None
    role: str | None = None
    tool: str | None = None

    def active(self) -> bool:
        return any(value is not None for value in dataclasses.astuple(self))

    def where(self) -> tuple[str, list[object]]:
        """The SQL condition on an `entries` row, and its parameters (ids are written as numbers)."""
        conditions, parameters = [], list[object]()
        if self.holders is not None:
            conditions.append(f"holder IN {_in(self.holders)}")
        if self.within is not None:
            chain = _in(self.within)
            conditions.append(f"(holder IN {chain} OR id IN (SELECT entry FROM holds WHERE savepoint IN {chain}))")
        if self.since is not None:
            conditions.append("time >= ?")
            parameters.append(self.since)
        if self.role is not None:
            conditions.append("role = ?")
            parameters.append(self.role)
        if self.tool is not None:
            conditions.append("tool = ?")
            parameters.append(self.tool)
        return " AND ".join(conditions) or "1", parameters


def _filtered(
    connection: sqlite3.Connection,
    searcher: tantivy.Searcher,
    query: tantivy.Query,
    limit: int,
    filters: _Filters,
) -> tuple[list[tuple[float, tantivy.DocAddress, int]], int]:
    """The best `limit` matches of `query` that `filters` keep, (score, address, entry id) best
    first, a tie in the order the entries were indexed, and how many it keeps in all. Every match
    is read: the filters are the bookkeeping's, and a filter that keeps few would otherwise leave
    the best of them out of any first cut."""
    matched = _count(searcher.search(query, 1, count=True))
    if not matched:
        return [], 0
    found = searcher.search(query, matched, count=False).hits
    ids = searcher.fast_field_values("entry", [address for _, address in found])
    condition, parameters = filters.where()
    # The ids go to SQLite as one JSON array, each looked up by its row id (CROSS JOIN keeps that
    # order): written into the SQL as numbers, parsing them cost about as much as the lookups
    # (docs/performance.md, #42). They come back with their place in it (json_each's key), so
    # only the matches kept are read again here.
    kept = connection.execute(
        f"SELECT place, id FROM (SELECT key AS place, value AS wanted FROM json_each(?)) CROSS JOIN entries ON id = wanted WHERE {condition}",
        [orjson.dumps(ids).decode(), *parameters],
    ).fetchall()
    chosen = sorted(((found[at][0], found[at][1], n) for at, n in kept), key=lambda match: (-match[0], match[2]))
    return chosen[:limit], len(chosen)


def _count(found: tantivy.SearchResult) -> int:
    """The matches a search counted (asked with `count=True`; tantivy-py's stub omits it)."""
    counted = getattr(found, "count", None)
    return counted if isinstance(counted, int) else 0


def _rows(
    connection: sqlite3.Connection, searcher: tantivy.Searcher, found: list[tuple[float, tantivy.DocAddress]]
) -> list[tuple]:
    """The bookkeeping's rows of the entries tantivy found, in its order, each with its score
    last: (id, holder, start, stop, role, tool, time, score). An entry the bookkeeping does not
    know is left out."""
    if not found:
        return []
    ids = searcher.fast_field_values("entry", [address for _, address in found])
    known = {
        row[0]: row
        for row in connection.execute(
            f"SELECT id, holder, start, stop, role, tool, time FROM entries WHERE id IN {_in([int(n) for n in ids if n is not None])}"
        )
    }
    return [(*known[n], score) for n, (score, _) in zip(ids, found, strict=True) if n in known]


def _indexed(connection: sqlite3.Connection) -> dict[tuple[str, int], tuple[int, str | None]]:
    """(instance, sequence) -> the savepoint's id in the index and its file's stamp when checked."""
    return {
        (i, s): (n, stamp)
        for n, i, s, stamp in connection.execute("SELECT id, instance, sequence, stamp FROM savepoints")
    }


def in_scope(logs: Path, instance: str) -> list[savepoint_log.Savepoint]:
    """The savepoints recall searches for `instance`: its own and those of its lineage."""
    return _scope(savepoint_log.read(logs), instance)


_KEPT_SCOPES = threading.local()  # per thread, as _KEPT: (logs/, instance) -> (the log's stamp, in_scope)


def _in_scope_kept(logs: Path, instance: str) -> list[savepoint_log.Savepoint]:
    """`in_scope`, kept for the next search over every project in this process while the
    savepoint log is the file read then (savepoint_log.read_unless)."""
    kept: dict[tuple[Path, str], tuple[str, list[savepoint_log.Savepoint]]]
    kept = _KEPT_SCOPES.__dict__.setdefault("scopes", {})
    known = kept.get((logs, instance))
    stamp, index = savepoint_log.read_unless(logs, known[0] if known else None)
    if index is None and known is not None:
        return list(known[1])
    assert index is not None
    scope = _scope(index, instance)
    if stamp is not None:
        kept[(logs, instance)] = (stamp, scope)
    return list(scope)


def _scope(index: savepoint_log.IndexRead, instance: str) -> list[savepoint_log.Savepoint]:
    folded = index.savepoints
    names = index.lineage(instance)
    # A pruned savepoint's local copy is gone (resurrect brings it back from git).
    return [
        s for name in dict.fromkeys([*names, instance]) for s in savepoint_log.of_instance(folded, name) if not s.pruned
    ]


def pruned_in_scope(logs: Path, instance: str) -> list[savepoint_log.Savepoint]:
    """The savepoints recall would search for `instance` but whose local copy `prune` removed
    (git keeps them)."""
    index = savepoint_log.read(logs)
    names = dict.fromkeys([*index.lineage(instance), instance])
    return [s for name in names for s in savepoint_log.of_instance(index.savepoints, name) if s.pruned]


def pruned_note(pruned: list[savepoint_log.Savepoint]) -> str:
    """What recall says of savepoints it does not search because `prune` removed their copy."""
    numbers = ", ".join(str(s.sequence) for s in pruned[:10]) + (", …" if len(pruned) > 10 else "")
    return (
        f"{len(pruned)} savepoint(s) pruned from logs/ ({numbers}) are not searched; git keeps them: "
        "`precompact resurrect --sequence N` brings one back"
    )


def _trigger(savepoint: savepoint_log.Savepoint) -> str:
    """What a savepoint's index line says made it, quoted unless a trigger precompact records."""
    trigger = savepoint.trigger
    return trigger if trigger in capture.TRIGGERS else quoting.inline(str(trigger))


def _agent(savepoint: savepoint_log.Savepoint) -> str:
    """Whose session, as a line about the savepoint names it ("codex 0.171.0")."""
    version = savepoint.agent_version
    return f"{savepoint.agent} {quoting.inline(version)}" if version else savepoint.agent


def discard(logs: Path) -> None:
    """Removes the index (derived data: the next recall rebuilds it), as after a prune: its
    entries may point into savepoints whose local copies are gone."""
    with savepoint_log.locked(logs, LOCK_TIMEOUT_SECONDS, LOCK_NAME):
        _remove(logs, INDEX_NAME)
        logs_dir.remove_directory(logs, TEXT_DIR)


def update(logs: Path, instance: str, rebuild: bool = False, signer: str | None = None) -> Update:
    """Indexes the savepoints in scope that the index lacks (all of them, with `rebuild` or when
    the index is missing, torn or of another schema), each only once its snapshot verifies (from
    this machine's record, or `signer`'s signature over its index line: verifier.signed)."""
    wanted = in_scope(logs, instance)
    outcome = Update()
    if not wanted:
        outcome.notes.append(f"{quoting.name(instance)} has no savepoints yet: nothing to search")
        return outcome
    if not rebuild and not _missing(logs, wanted):
        return outcome
    with savepoint_log.locked(logs, LOCK_TIMEOUT_SECONDS, LOCK_NAME):
        torn = _exists(logs, WRITING_MARK)
        reason = "asked" if rebuild else "a writer was stopped mid-write" if torn else None
        text = None
        if reason is None:
            with _connect(logs, create=False) as existing:
                if existing is not None and not _schema_ok(existing):
                    reason = "it was unreadable or of another version"
                elif existing is not None:
                    try:
                        text, _ = _kept_text(logs, existing)  # as `_missing` checked it, unless changed since
                    except _Unusable as e:
                        reason = str(e)
        if reason is not None or not _exists(logs, INDEX_NAME):
            _remove(logs, INDEX_NAME)
            logs_dir.remove_directory(logs, TEXT_DIR)
            outcome.rebuilt = reason or "there was none"
            text = None
        logs_dir.write_atomic(logs, WRITING_MARK, b"")
        with _connect(logs, create=True) as connection:
            assert connection is not None
            if not _schema_ok(connection):
                connection.executescript(_SCHEMA)
                connection.execute("INSERT INTO meta VALUES ('schema', ?)", (SCHEMA_VERSION,))
            try:
                text = text or _open_text(logs, create=True)
            except _Unusable as e:
                raise RecallError(f"the recall index in logs/ cannot be written: {e}") from None
            writer = text.writer(heap_size=WRITER_HEAP_BYTES, num_threads=1)
            try:
                with _no_cycle_collection():
                    _index_wanted(connection, text, writer, logs, wanted, signer, outcome)
            finally:
                writer.wait_merging_threads()  # and releases tantivy's writer lock
            logs_dir.made_private(logs, TEXT_DIR)  # tantivy creates its files with the umask's mode
        _remove(logs, WRITING_MARK)
    return outcome


@contextlib.contextmanager
def _no_cycle_collection() -> Iterator[None]:
    """Python's cycle collector paused while entries are indexed: parsing them allocates the
    containers that set it off (about 70 collections, 20-30 ms of CPU, in a 100 MB update;
    docs/performance.md, third round), and it finds nothing there: entries hold no cycles
    (parsed JSON, freed by their counts). It resumes after, if it was running."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


def _index_wanted(
    connection: sqlite3.Connection,
    text: tantivy.Index,
    writer: tantivy.IndexWriter,
    logs: Path,
    wanted: list[savepoint_log.Savepoint],
    signer: str | None,
    outcome: Update,
) -> None:
    """Indexes each savepoint of `wanted` the index lacks, oldest first, in one transaction and
    one tantivy commit (made just before the bookkeeping's; a stop between the two leaves the
    writing marker, and the next writer rebuilds): each commit writes a segment that tantivy
    later merges, and a rebuild would otherwise commit once per savepoint."""
    snapshots = _Snapshots(logs, signer)
    by_key = {(s.instance, s.sequence): s for s in wanted}
    connection.execute("BEGIN IMMEDIATE")
    try:
        have = _indexed(connection)
        added, probe = 0, None  # probe: a word of an entry added, to read the index's average length by
        for savepoint in wanted:
            if (savepoint.instance, savepoint.sequence) in have:
                continue
            previous = _previous(connection, savepoint, by_key)
            grown = snapshots.grown(savepoint, previous) if previous is not None else None
            reader: snapshot.SnapshotReader | _Grown | str
            if grown is not None:
                reader, stamp = grown
            else:
                reader, stamp = snapshots.checked(savepoint)
                previous = None
            if isinstance(reader, str):
                outcome.notes.append(_not_indexed(savepoint, reader))
                continue
            try:
                documents, word = _index(connection, writer, savepoint, reader, stamp, previous)
            except ValueError as e:
                outcome.notes.append(_not_indexed(savepoint, quoting.inline(str(e))))
                continue
            added += documents
            probe = probe or word
            outcome.indexed.append(savepoint.sequence)
    except BaseException:
        writer.rollback()
        connection.execute("ROLLBACK")
        raise
    try:
        documents_held, tokens = _recorded(connection)
        if added:
            writer.commit()
            documents_held += added
            tokens = _tokens(text, documents_held, probe) if probe is not None else tokens
        connection.execute("UPDATE meta SET value = ? WHERE key = 'documents'", (str(documents_held),))
        connection.execute("UPDATE meta SET value = ? WHERE key = 'tokens'", (str(tokens),))
        connection.execute("COMMIT")
    except BaseException as e:
        connection.execute("ROLLBACK")
        # tantivy may hold what the bookkeeping does not: the writing marker stays, and the next
        # update rebuilds both.
        raise RecallError(
            f"the recall index in logs/ was left half-written ({quoting.inline(str(e))}); the next recall rebuilds it"
        ) from e


def _not_indexed(savepoint: savepoint_log.Savepoint, why: str) -> str:
    return f"savepoint {savepoint.sequence} of {quoting.name(savepoint.instance)} is not indexed: {why}"


def _missing(logs: Path, wanted: list[savepoint_log.Savepoint]) -> bool:
    if _exists(logs, WRITING_MARK):
        return True
    with _connect(logs, create=False) as connection:
        if connection is None or not _schema_ok(connection):
            return True
        try:
            _kept_text(logs, connection, afresh=True)
        except _Unusable:
            return True
        have = _indexed(connection)
    return any((s.instance, s.sequence) not in have for s in wanted)


def _exists(logs: Path, name: str) -> bool:
    try:
        os.close(logs_dir.open_file(logs, name, os.O_RDONLY))
    except FileNotFoundError:
        return False
    return True


def _remove(logs: Path, name: str) -> None:
    with logs_dir.directory(logs) as fd, contextlib.suppress(FileNotFoundError):
        os.unlink(name, dir_fd=fd)


def _index(
    connection: sqlite3.Connection,
    writer: tantivy.IndexWriter,
    savepoint: savepoint_log.Savepoint,
    reader: snapshot.SnapshotReader | _Grown,
    stamp: str | None,
    grown_from: _Previous | None = None,
) -> tuple[int, str | None]:
    """One savepoint, inside the update's transaction: its new entries' words (added to
    `writer`, uncommitted), their places, and which entries it holds; returns how many entries
    it added and a word of one of them. When it starts with the history of the instance's latest
    indexed savepoint (a session saved again as it grew: `grown_from`, shown by its chunks, or
    `_continued`, by the history's digest), it is recorded as continuing that one and only the
    entries after are read. Raises ValueError when its history cannot be read entry by entry:
    its rows are rolled back and the words it added deleted (by their ids, which no committed
    entry has), the update's other savepoints kept."""
    history_end = reader.history_end
    connection.execute("SAVEPOINT one_savepoint")
    try:
        continued: tuple[int | None, int, int | None, bytes | None]
        if grown_from is not None:
            # No digest of a history that was not read whole: a later savepoint shows it
            # continues this one by its chunks, or is indexed from its first entry.
            continued = (grown_from.id, grown_from.entries, grown_from.history_end, None)
        elif isinstance(reader, snapshot.SnapshotReader):
            continued = _continued(connection, savepoint, reader)
        else:
            raise ValueError("a grown history is indexed only after the savepoint it continues")
        continues, position, after, history_digest = continued
        cursor = connection.execute(
            "INSERT INTO savepoints(instance, sequence, sha256, snapshot_file, stamp, time, entries, history_end, history_digest, continues, added) VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?, ?, 0)",
            (
                savepoint.instance,
                savepoint.sequence,
                savepoint.snapshot_hash,
                savepoint.snapshot_file,
                stamp,
                savepoint.unix_timestamp,
                history_end,
                history_digest,
                continues,
            ),
        )
        holder = cursor.lastrowid
        assert holder is not None
        ids: dict[bytes, int] = {}
        added, probe = 0, None  # probe: a word of an entry added, to read the index's average length by
        tool_names = _ToolNames(connection)
        first_id = next_id = (connection.execute("SELECT max(id) FROM entries").fetchone()[0] or 0) + 1
        located = saved_entries(reader, after)
        new_document, add_document = _engine().Document, writer.add_document
        while batch := list(itertools.islice(located, BATCH_ENTRIES)):
            digests = [hashlib.blake2b(reader.entry_bytes(place), digest_size=16).digest() for place, _ in batch]
            keys = [_key(d) for d in digests]
            wanted = list({key for key, digest in zip(keys, digests) if digest not in ids})
            # A key may be shared by other entries: the digest says which, if any, is this one.
            ids.update(
                connection.execute(
                    f"SELECT digest, id FROM entries WHERE key IN ({','.join('?' * len(wanted))})", wanted
                ).fetchall()
            )
            holds, new_entries = [], []
            for ((start, stop), entry), digest, key in zip(batch, digests, keys):
                position += 1
                entry_id = ids.get(digest)
                if entry_id is None:
                    role, tool, words = entry_facts(entry, tool_names)
                    entry_id = ids[digest] = next_id
                    next_id += 1
                    when = entry_time(entry)
                    new_entries.append(
                        (
                            entry_id,
                            key,
                            bytearray(digest),
                            holder,
                            position,
                            start,
                            stop,
                            role,
                            _NO_TOOL if tool is None else tool,
                            _NO_TIME if when is None else when,
                        )
                    )
                    document = new_document()
                    document.add_text("text", words)
                    document.add_unsigned("entry", entry_id)
                    add_document(document)
                    added += 1
                    if probe is None and words:
                        probe = next(iter(_analyzer().analyze(words)), None)
                else:  # held again: first held by another savepoint, or at an earlier place of this one
                    holds.append((holder, position, entry_id))
            connection.executemany(_INSERT_ENTRY, new_entries)
            connection.executemany("INSERT INTO holds VALUES (?, ?, ?)", holds)
        connection.executemany("INSERT OR IGNORE INTO tool_uses VALUES (?, ?)", tool_names.items())
        connection.execute(
            "UPDATE savepoints SET entries = ?, first_entry = ?, added = ? WHERE id = ?",
            (position, first_id, added, holder),
        )
    except ValueError:
        if added:
            # Streamed to tantivy rather than held until the history has read whole (a 100 MB
            # history's documents took 390 MB more held). Deleted entries still count in tantivy's
            # length statistics until a merge drops them.
            # By a range of the fast field (its ids, which no committed entry holds): a term query
            # needs an indexed field.
            engine = _engine()
            writer.delete_documents_by_query(
                engine.Query.range_query(_text_schema(), "entry", engine.FieldType.Unsigned, first_id, next_id - 1)
            )
        connection.execute("ROLLBACK TO one_savepoint")
        connection.execute("RELEASE one_savepoint")
        raise
    connection.execute("RELEASE one_savepoint")
    return added, probe


def _tokens(text: tantivy.Index, documents: int, probe: str) -> int:
    """The words the text index holds in all, `documents` entries after its commit: tantivy
    shows their average (avgdl, BM25's) only in a score's explanation, so one entry holding
    `probe` (a word just added) is explained. A search over every project weighs each
    entry's length against the average over all of them (recall.everywhere)."""
    engine = _engine()
    text.reload()
    searcher = text.searcher()
    if searcher.num_docs != documents:
        raise ValueError(f"tantivy holds {searcher.num_docs} entries after its commit where {documents} were written")
    query = engine.Query.term_query(text.schema, "text", probe)
    (_, address), *_ = searcher.search(query, 1, count=False).hits
    factors = bm25_factors(query.explain(searcher, address).to_json())
    return round(factors[0][2] * documents)


def bm25_factors(explained: str) -> list[tuple[float, float, float]]:
    """Each BM25 factor of an explained tantivy score, in the query's order: (tf, dl, avgdl)."""
    found: list[tuple[float, float, float]] = []

    def walk(node: dict) -> None:
        if str(node.get("description", "")).startswith("freq / (freq + k1"):
            values = {str(d.get("description", "")).split(",")[0]: float(d["value"]) for d in node["details"]}
            found.append((values["freq"], values["dl"], values["avgdl"]))
            return
        for child in node.get("details", ()):
            walk(child)

    walk(orjson.loads(explained))
    return found


# An entry's row as `_index` inserts it. Python's sqlite3 binds an int, float or str as it is but
# looks every other value (bytes, None) up among its adapters first: about 0.4 µs a value, a
# third of an update's inserts (#42, seventh round). So the digest is bound as a bytearray (stored
# as the same BLOB) and a missing tool or time as a value of a type the column never holds (a
# tool is text, a time a number), turned into NULL by SQLite.
_NO_TOOL, _NO_TIME = 0, ""
_INSERT_ENTRY = "INSERT INTO entries VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULLIF(?, 0), NULLIF(?, ''))"


def _key(digest: bytes) -> int:
    """The entry's lookup key in the index: its digest's first 4 bytes, as a signed integer
    (SQLite stores it in 4 bytes). The unique index of the whole 16-byte digests it replaces put
    an update's new entries at random places in a B-tree about twice as large: its lookup,
    inserts and commit took 23-57 ms more of an update at 100 MB (docs/performance.md). Entries
    sharing a key (about 3 in 160,000 by chance, more if a transcript is made to) are told apart
    by `digest`."""
    return int.from_bytes(digest[:4], "big", signed=True)


class _ToolNames(dict[str, str]):
    """The tool calls' names `entry_facts` fills and reads while a savepoint is indexed: the
    calls among its new entries, and those the index recorded, each looked up only when a result
    answers a call this savepoint does not hold (loading every recorded one took 15-45 ms of an
    update at 100 MB). Its items are the calls found in this savepoint."""

    def __init__(self, connection: sqlite3.Connection):
        super().__init__()
        self._connection = connection
        self._recorded: dict[object, str | None] = {}

    def __contains__(self, tool_id: object) -> bool:
        return super().__contains__(tool_id) or self._recorded_name(tool_id) is not None

    def __missing__(self, tool_id: str) -> str:
        name = self._recorded_name(tool_id)
        if name is None:
            raise KeyError(tool_id)
        return name

    def _recorded_name(self, tool_id: object) -> str | None:
        if tool_id not in self._recorded:
            row = self._connection.execute("SELECT name FROM tool_uses WHERE id = ?", (tool_id,)).fetchone()
            self._recorded[tool_id] = row[0] if row is not None else None
        return self._recorded[tool_id]


def _previous(
    connection: sqlite3.Connection,
    savepoint: savepoint_log.Savepoint,
    by_key: dict[tuple[str, int], savepoint_log.Savepoint],
) -> _Previous | None:
    """The instance's latest savepoint in the index before `savepoint` (one in scope)."""
    row = connection.execute(
        "SELECT id, sequence, entries, history_end, history_digest, stamp FROM savepoints WHERE instance = ? AND sequence < ? ORDER BY sequence DESC LIMIT 1",
        (savepoint.instance, savepoint.sequence),
    ).fetchone()
    if row is None or (savepoint.instance, row[1]) not in by_key:
        return None
    return _Previous(row[0], by_key[(savepoint.instance, row[1])], row[2], row[3], row[4], row[5])


def _continued(
    connection: sqlite3.Connection, savepoint: savepoint_log.Savepoint, reader: snapshot.SnapshotReader
) -> tuple[int | None, int, int | None, bytes]:
    """Whether the snapshot's history starts with all of the instance's latest indexed
    savepoint's: then that one's entries are this one's first ones, and this returns its id, its
    entry count and where those entries end; else (None, 0, None). Also the digest of this
    history, computed in the same pass."""
    history_end = reader.history_end
    latest = connection.execute(
        "SELECT id, entries, history_end, history_digest FROM savepoints WHERE instance = ? AND sequence < ? ORDER BY sequence DESC LIMIT 1",
        (savepoint.instance, savepoint.sequence),
    ).fetchone()
    running = hashlib.sha256()
    if latest is None or not latest[1] or latest[2] > history_end or latest[3] is None:
        running.update(reader.prefix(history_end))
        return None, 0, None, running.digest()
    previous, count, end, digest = latest
    running.update(reader.prefix(end))
    same = running.digest() == digest and bytes(reader.prefix(end + 1)[end:]) in (b",", b"]")
    running.update(reader.prefix(history_end)[end:])
    return (previous, count, end, running.digest()) if same else (None, 0, None, running.digest())


def _chain(connection: sqlite3.Connection, savepoint_id: int) -> list[int]:
    """The savepoint and those it continues: together the entries they first held and their
    `holds` rows are all its entries."""
    chain = [savepoint_id]
    while True:
        row = connection.execute("SELECT continues FROM savepoints WHERE id = ?", (chain[-1],)).fetchone()
        if row is None or row[0] is None or row[0] in chain:
            return chain
        chain.append(row[0])


def _in(ids: list[int]) -> str:
    return f"({','.join(str(int(n)) for n in ids)})"


# --- searching and showing --------------------------------------------------------------------

_TERM = re.compile(r'"([^"]*)"|(\S+)')
_WORD = re.compile(r"\w+")


def _phrases(query: str) -> list[list[str]]:
    """The query's phrases (a quoted run, else one word), each as its words. Only words reach
    the text index, as term and phrase queries built from them, so no query is read as a query
    language."""
    phrases = [_WORD.findall(quoted or bare) for quoted, bare in _TERM.findall(query)]
    return [p for p in phrases if p]


@contextlib.contextmanager
def _damage_named() -> Iterator[None]:
    try:
        yield
    except sqlite3.DatabaseError as e:
        raise RecallError(
            f"the recall index {INDEX_NAME} in logs/ is damaged ({quoting.inline(str(e))}); run `precompact recall --rebuild`"
        ) from None


def search(
    logs: Path,
    instance: str,
    query: str,
    sequence: int | None = None,
    since: str | None = None,
    role: str | None = None,
    tool: str | None = None,
    limit: int = MAX_HITS,
    agent: str | None = None,
    signer: str | None = None,
) -> Results:
    """The entries that best match `query` (BM25), best first, each with an excerpt read from
    its verified snapshot. The index is brought up to date first."""
    phrases, since_unix = request(query, role, since)
    outcome = update(logs, instance, signer=signer)
    results = Results(notes=list(outcome.notes))
    pruned = pruned_in_scope(logs, instance)
    if pruned:
        results.notes.append(pruned_note(pruned))
    # `agent`: only the savepoints of that agent's sessions (savepoint_log.Savepoint.agent).
    scope = {(s.instance, s.sequence): s for s in in_scope(logs, instance) if agent is None or s.agent == agent}
    with _damage_named(), _connect(logs, create=False) as connection:
        if connection is None:
            return results
        indexed = _indexed(connection)
        ids = {n: key for key, (n, _) in indexed.items() if key in scope}
        within = None
        if sequence is not None:
            within = next((n for n, key in ids.items() if key == (instance, sequence)), None)
            if within is None:
                raise RecallError(
                    f"{quoting.name(instance)} has no indexed savepoint {sequence}; `precompact status` lists its savepoints"
                )
        text, searcher = _searchable(logs, connection)
        chain = _chain(connection, within) if within is not None else None
        filters = _Filters(_kept_to(indexed, ids), chain, since_unix, role, tool)
        tokens = analyzed(phrases)
        rows: list[tuple] = []
        for any_phrase in (False, True):
            if not tokens:
                break
            rows, results.matched = _best(
                connection, searcher, _text_query(text.schema, tokens, any_phrase), limit, filters
            )
            if rows and any_phrase:
                results.notes.append(ANY_WORD_NOTE)
            if rows or len(tokens) == 1:
                break
        _hits(connection, _Snapshots(logs, signer), rows, phrases, scope, indexed, ids, within, results)
    return results


def _best(
    connection: sqlite3.Connection,
    searcher: tantivy.Searcher,
    query: tantivy.Query,
    limit: int,
    filters: _Filters,
) -> tuple[list[tuple], int]:
    """The best `limit` matches `filters` keep as the bookkeeping's rows (`_rows`), ties in the
    order the entries were indexed, and how many match in all. tantivy orders a tie by where the
    entries landed in its segments, which its background merges decide: the entries tied with
    the last one are all read, so the same index gives the same list however it was merged."""
    if filters.active():
        chosen, matched = _filtered(connection, searcher, query, limit, filters)
        return _rows(connection, searcher, [(score, address) for score, address, _ in chosen]), matched
    found = searcher.search(query, limit, count=True)
    hits, matched = found.hits, _count(found)
    asked = limit
    while len(hits) == asked < matched and hits[-1][0] == hits[limit - 1][0]:
        asked = min(matched, asked * 2)
        hits = searcher.search(query, asked, count=False).hits
    rows = sorted(_rows(connection, searcher, hits), key=lambda row: (-row[-1], row[0]))
    return rows[:limit], matched


def _searchable(logs: Path, connection: sqlite3.Connection) -> tuple[tantivy.Index, tantivy.Searcher]:
    """The text index the update just checked (or rebuilt), checked again as it is opened; one
    changed since is refused in one line naming the rebuild."""
    try:
        return _kept_text(logs, connection)
    except _Unusable as e:
        raise RecallError(
            f"the recall index in logs/ cannot be searched: {e}; run `precompact recall --rebuild`"
        ) from None


def request(query: str, role: str | None, since: str | None) -> tuple[list[list[str]], float | None]:
    """A search's phrases and its `since` as Unix seconds, or WrongRequest/RecallError saying
    what is wrong with them."""
    phrases = _phrases(query)
    if not phrases:
        raise WrongRequest("the query has no words to search for")
    if role is not None and role not in ROLES:
        raise RecallError(f"role {role!r} is not one of {', '.join(ROLES)}")
    if since is None:
        return phrases, None
    try:
        return phrases, _parse_time(since).timestamp()
    except ValueError:
        raise WrongRequest(f"since {since!r} is not an ISO 8601 time; e.g. 2026-11-30T14:05:00Z") from None


def _hits(
    connection: sqlite3.Connection,
    snapshots: _Snapshots,
    rows: list[tuple],
    phrases: list[list[str]],
    scope: dict[tuple[str, int], savepoint_log.Savepoint],
    indexed: dict[tuple[str, int], tuple[int, str | None]],
    ids: dict[int, tuple[str, int]],
    within: int | None,
    results: Results,
    project: str | None = None,
) -> list[int]:
    """Appends to `results` a hit for each row (best first), its excerpt read from its verified
    snapshot; an entry saved again (same role, tool and text) is named on its first hit. Which
    rows made the hits appended, in order."""
    made: list[int] = []
    withheld: set[int] = set()
    disagreed = False
    first_of: dict[tuple[str, str | None, str], int] = {}  # an entry's content -> its hit
    for number, (entry_id, holder, start, stop, entry_role, entry_tool, time, *_) in enumerate(rows):
        if holder not in ids:  # the words found it, the bookkeeping puts it out of scope (_kept_to)
            if not disagreed:
                disagreed = True
                results.notes.append(
                    "entries outside the savepoints searched were left out (the index's words and its "
                    "bookkeeping disagree); run `precompact recall --rebuild`"
                )
            results.matched -= 1
            continue
        savepoint = scope[ids[holder]]
        reader = snapshots.reader(savepoint, indexed[ids[holder]][1])
        if isinstance(reader, str):
            if holder not in withheld:
                withheld.add(holder)
                results.notes.append(
                    f"savepoint {savepoint.sequence} of {quoting.name(savepoint.instance)}: entries withheld, {reader}; run `precompact verify`"
                )
            results.matched -= 1
            continue
        shown_in = within or holder
        chain = _in(_chain(connection, shown_in))
        (position,) = connection.execute(
            f"SELECT min(position) FROM (SELECT position FROM entries WHERE id = ? AND holder IN {chain} "
            f"UNION ALL SELECT position FROM holds WHERE entry = ? AND savepoint IN {chain})",
            (entry_id, entry_id),
        ).fetchone()
        _, _, text = entry_facts(reader.entry_at((start, stop)), {})
        at = ids[shown_in]
        hit = Hit(at[0], at[1], position, entry_role, entry_tool, time, excerpt(text, phrases), project=project)
        kept = first_of.setdefault((entry_role, entry_tool, text), len(results.hits))
        if kept == len(results.hits):
            results.hits.append(hit)
            made.append(number)
            continue
        # The same entry again: named on the better-ranked hit, not shown a second time.
        first = results.hits[kept]
        where = hit.ref if hit.instance == first.instance else f"{hit.ref} of {quoting.name(hit.instance)}"
        results.hits[kept] = dataclasses.replace(first, also=(*first.also, where))
        results.matched -= 1
    return made


# --- one index's share of a search over several (recall.everywhere) ----------------------------


@dataclass(frozen=True)
class Asked:
    """A search of one part: the query of its words, and the filters its bookkeeping answers."""

    query: tantivy.Query
    filters: _Filters


@dataclass
class Part:
    """One project's index opened for a search over several: what BM25 over all of them needs
    from it (its entries, their words in all, each word's count of entries), its best matches
    under boosted queries, the factors of one match's score, and the hits of the matches chosen,
    their excerpts read from their verified snapshots."""

    logs: Path
    scope: dict[tuple[str, int], savepoint_log.Savepoint]
    indexed: dict[tuple[str, int], tuple[int, str | None]]
    text: tantivy.Index
    searcher: tantivy.Searcher
    documents: int
    tokens: int
    notes: list[str] = field(default_factory=list)

    def having(self, word: str) -> int:
        """The entries of this index holding `word` (analyzed)."""
        return self.searcher.doc_freq("text", word)

    def query(
        self,
        tokens: list[list[str]],
        any_phrase: bool,
        boosts: list[float],
        since: float | None,
        role: str | None,
        tool: str | None,
    ) -> Asked:
        holders = [n for key, (n, _) in self.indexed.items() if key in self.scope]
        filters = _Filters(_kept_to(self.indexed, holders), None, since, role, tool)
        return Asked(_text_query(self.text.schema, tokens, any_phrase, boosts), filters)

    def best(
        self, asked: Asked, limit: int, count: bool = False
    ) -> tuple[list[tuple[float, tantivy.DocAddress, int]], int]:
        """The best `limit` matches of `asked` (score, address, entry id), and how many match
        when asked (always, when it filters). Not every entry tied with the limit-th is read, as
        `_best` does: at 100 projects of 10 MB that made a common word's search 2-4x slower
        (docs/performance.md)."""
        if asked.filters.active():
            with _damage_named(), _kept_open(self.logs) as connection:
                if connection is None:
                    return [], 0
                return _filtered(connection, self.searcher, asked.query, limit, asked.filters)
        found = self.searcher.search(asked.query, limit, count=count)
        entries = self.searcher.fast_field_values("entry", [address for _, address in found.hits])
        return [
            (score, address, int(n)) for (score, address), n in zip(found.hits, entries, strict=True) if n is not None
        ], _count(found)

    def factors(self, tokens: list[list[str]], address: tantivy.DocAddress) -> list[tuple[float, float] | None]:
        """Per phrase, its BM25 factors in the match at `address` (tf, the entry's length), None
        when the entry does not hold it."""
        found: list[tuple[float, float] | None] = []
        for words in tokens:
            try:
                explained = bm25_factors(
                    phrase_query(self.text.schema, words).explain(self.searcher, address).to_json()
                )
            except ValueError:  # tantivy: "Document ... does not match"
                found.append(None)
                continue
            found.append((explained[0][0], explained[0][1]) if explained else None)
        return found

    def hits(
        self, addresses: list[tantivy.DocAddress], phrases: list[list[str]], project: str, results: Results
    ) -> list[int]:
        """Appends to `results` the hits of the matches at `addresses` (best first), each naming
        `project`, their excerpts read from their verified snapshots; which of them made hits."""
        with _damage_named(), _kept_open(self.logs) as connection:
            if connection is None:
                return []
            rows = _rows(connection, self.searcher, [(0.0, a) for a in addresses])
            ids = {n: key for key, (n, _) in self.indexed.items() if key in self.scope}
            made = _hits(
                connection,
                _Snapshots(self.logs, None),
                rows,
                phrases,
                self.scope,
                self.indexed,
                ids,
                None,
                results,
                project,
            )
        return made


def part(logs: Path, instances: Iterable[str], agent: str | None = None) -> Part | None:
    """The project's index for a search over several, brought up to date first, its scope the
    savepoints of `instances` (and their lineage) this machine wrote and verified, of `agent`'s
    sessions when named; None when it has none."""
    notes: list[str] = []
    scope: dict[tuple[str, int], savepoint_log.Savepoint] = {}
    wanted: dict[str, list[savepoint_log.Savepoint]] = {}
    for instance in instances:
        if held := _in_scope_kept(logs, instance):
            wanted[instance] = held
            scope.update({(s.instance, s.sequence): s for s in held if agent is None or s.agent == agent})
    every = {(s.instance, s.sequence) for held in wanted.values() for s in held}
    for updated in (False, True):
        with _damage_named(), _kept_open(logs) as connection:
            current = connection is not None and _schema_ok(connection) and not _exists(logs, WRITING_MARK)
            indexed = _indexed(connection) if connection is not None and current else {}
            if connection is not None and (updated or every <= indexed.keys()):
                try:
                    text, searcher = _kept_text(logs, connection)
                except _Unusable as e:
                    if not updated:
                        indexed = {}
                    else:
                        raise RecallError(
                            f"its recall index cannot be searched: {e}; run `precompact recall --rebuild` there"
                        ) from None
                else:
                    documents, tokens = _recorded(connection)
                    return Part(logs, scope, indexed, text, searcher, documents, tokens, notes)
        if not wanted:
            return None
        # The index lacks a savepoint, or is torn, damaged or of another version: brought up to date, once.
        for instance in wanted:
            notes.extend(update(logs, instance).notes)
    return None


def excerpt(text: str, phrases: list[list[str]], width: int = EXCERPT_CHARS) -> str:
    """About `width` characters of `text` around the first place a phrase (else a word) of the
    query occurs, on one line."""
    patterns = [r"\W+".join(map(re.escape, words)) for words in phrases] + [
        re.escape(w) for words in phrases for w in words
    ]
    found = None
    for pattern in patterns:
        found = re.search(pattern, text, re.IGNORECASE)
        if found:
            break
    centre = found.start() if found else 0
    start = max(0, min(centre - width // 3, len(text) - width))
    piece = " ".join(text[start : start + width].split())
    return f"{'…' if start > 0 else ''}{piece}{'…' if start + width < len(text) else ''}"


# A number in a reference: ASCII digits only, and few enough that Python converts them (it
# refuses a string of more than 4,300 digits), 19 of them holding any sequence or offset there is.
# The one grammar of a reference: `show` parses by it and the MCP tool's schema publishes it.
_NUMBER = "([0-9]{1,19})"
REF_PATTERN = f"{_NUMBER}:{_NUMBER}(?:-{_NUMBER})?(?:@{_NUMBER})?"
_REF = re.compile(REF_PATTERN)
MAX_SHOWN = 200
# `show`'s budget of characters, when one is asked (the MCP tool's always is): at least room for
# a header and some text, at most recall's ceiling.
SHOW_BUDGET_BOUNDS = (1_000, 50_000)
# A header longer than this (a tool's name of any length, quoted) is cut, so the budget holds.
_HEADER_LIMIT = 300
# Fewer characters of an entry's text than this left in the budget: it waits for the next call.
_SHOWN_AT_LEAST = 200


def as_shown(entry: object, text: str) -> str:
    """An entry's text (`entry_facts`) as `show` prints it. An entry without text of its own
    (Claude Code's bookkeeping lines) is shown as it is stored: an empty block reads as a lost
    entry."""
    return text or orjson.dumps(entry, option=orjson.OPT_SORT_KEYS).decode()


class Shown:
    """The entries a reference names (`S:N`, `S:N-M`; `@OFFSET`: the first one's text from that
    character on), read from their snapshots one at a time each time they are iterated, so a
    range of big entries is never held whole."""

    def __init__(
        self, instance: str, sequence: int, first: int, last: int, offset: int, read: Callable[[], Iterator[Entry]]
    ):
        self.instance, self.sequence, self.first, self.last, self.offset = instance, sequence, first, last, offset
        self._read = read

    def __iter__(self) -> Iterator[Entry]:
        return self._read()


def _quoted_ref(ref: str) -> str:
    """A reference as an error names it: quoted, and cut, so the error stays one short line."""
    return quoting.inline(ref if len(ref) <= 60 else f"{ref[:60]}…")


def show(logs: Path, instance: str, ref: str, signer: str | None = None) -> Shown:
    """The entries `ref` names (`S:N`, or `S:N-M` for a range, either with `@OFFSET`) of
    savepoint S of `instance`, from the verified snapshot; the reference and the savepoint are
    checked now, the entries read as they are iterated."""
    parsed = _REF.fullmatch(ref.strip())
    if parsed is None:
        raise WrongRequest(
            f"{_quoted_ref(ref)} is not an entry reference; give SAVEPOINT:ENTRY or SAVEPOINT:FIRST-LAST, e.g. 3:142 "
            "(recall prints them; numbers of 1 to 19 digits 0-9), with @OFFSET to start at that character of the first entry"
        )
    sequence, first = int(parsed.group(1)), int(parsed.group(2))
    last = int(parsed.group(3) or first)
    offset = int(parsed.group(4) or 0)
    if not 1 <= first <= last or last - first >= MAX_SHOWN:
        raise WrongRequest(
            f"{_quoted_ref(ref)}: give entries from 1 up, first before last, at most {MAX_SHOWN} at once"
        )
    outcome = update(logs, instance, signer=signer)
    scope = {(s.instance, s.sequence): s for s in in_scope(logs, instance)}
    if (instance, sequence) not in scope:
        if any(s.instance == instance and s.sequence == sequence for s in pruned_in_scope(logs, instance)):
            raise RecallError(
                f"savepoint {sequence} of {quoting.name(instance)} was pruned locally; git keeps it: `precompact resurrect --sequence {sequence}` brings it back"
            )
        raise RecallError(
            f"{quoting.name(instance)} has no savepoint {sequence}; `precompact status` lists its savepoints"
        )
    with _damage_named(), _connect(logs, create=False) as connection:
        saved = (
            connection.execute(
                "SELECT id, entries FROM savepoints WHERE instance = ? AND sequence = ?", (instance, sequence)
            ).fetchone()
            if connection
            else None
        )
        if connection is None or saved is None:
            why = next(
                (n for n in outcome.notes if f"savepoint {sequence} of {quoting.name(instance)} " in n),
                f"savepoint {sequence} is not indexed",
            )
            raise RecallError(why)
        savepoint_id, count = saved
        if last > count:
            raise RecallError(f"savepoint {sequence} of {quoting.name(instance)} holds entries 1 to {count}")
        chain = _in(_chain(connection, savepoint_id))
        # The entries the chain first held (each savepoint's ids are a run, their places rising
        # with them), then those it holds again.
        rows = connection.execute(
            "SELECT e.position, s.stamp, e.start, e.stop, e.role, e.tool, e.time, s.instance, s.sequence "
            "FROM savepoints s JOIN entries e ON e.id BETWEEN s.first_entry AND s.first_entry + s.added - 1 AND e.holder = s.id "
            f"WHERE s.id IN {chain} AND e.position BETWEEN ?1 AND ?2 "
            "UNION ALL SELECT h.position, s.stamp, e.start, e.stop, e.role, e.tool, e.time, s.instance, s.sequence "
            f"FROM holds h JOIN entries e ON e.id = h.entry JOIN savepoints s ON s.id = e.holder WHERE h.savepoint IN {chain} "
            "AND h.position BETWEEN ?1 AND ?2 ORDER BY 1",
            (first, last),
        ).fetchall()

    def read() -> Iterator[Entry]:
        snapshots = _Snapshots(logs, signer)
        for position, stamp, start, stop, role, tool, time, holder_instance, holder_sequence in rows:
            reader = snapshots.reader(scope[(holder_instance, holder_sequence)], stamp)
            if isinstance(reader, str):
                raise RecallError(
                    f"entry {sequence}:{position} is in savepoint {holder_sequence} of {quoting.name(holder_instance)}, and {reader}; run `precompact verify`"
                )
            raw = reader.entry_at((start, stop))
            text = as_shown(raw, entry_facts(raw, {})[2])
            yield Entry(instance, sequence, position, role, tool, time, text, raw)

    return Shown(instance, sequence, first, last, offset, read)


def render(shown: Shown, budget: int | None = None) -> str:
    """`rendered`'s blocks as one text."""
    return "\n\n".join(rendered(shown, budget))


def rendered(shown: Shown, budget: int | None = None) -> Iterator[str]:
    """`shown`'s entries as text for the model or the user, a block each (its header, then every
    line of its text quoted), read one at a time. With `budget`, the blocks and the blank lines
    between them hold at most that many characters: an entry that does not fit is cut, the line
    under its header saying which characters are shown and the reference that shows the rest
    (`S:N-M@OFFSET`); an entry past the budget is not read, and a last line says how many and
    the reference that shows them. An entry shown from an offset says which characters too."""
    used = 0
    start = shown.offset
    entries = iter(shown)
    position = shown.first
    while position <= shown.last:
        if budget is not None and used and budget - used - 2 - _HEADER_LIMIT - _NOTES_ROOM < _SHOWN_AT_LEAST:
            left = shown.last - position + 1
            more = "entry" if left == 1 else "entries"
            span = f"-{shown.last}" if shown.last > position else ""
            yield f"({left} more {more} not shown within the budget; `show {shown.sequence}:{position}{span}` continues)"
            return
        entry = next(entries, None)
        if entry is None:
            return
        position = entry.position + 1
        total = len(entry.text)
        if start and start >= total:
            raise WrongRequest(
                f"entry {entry.sequence}:{entry.position} holds {total} characters: give an offset below {total}"
            )
        header = Hit(entry.instance, entry.sequence, entry.position, entry.role, entry.tool, entry.time, "").header()
        if budget is None:
            yield _block(header, _end_note(start, total) if start else None, quoting.block(entry.text[start:]))
            start = 0
            continue
        if len(header) > _HEADER_LIMIT:
            header = header[: _HEADER_LIMIT - len(quoting.CUT_MARK)] + quoting.CUT_MARK
        separator = 2 if used else 0
        room = budget - used - separator - len(header) - _NOTES_ROOM
        quoted, end = quoting.block_from(entry.text, start, room)
        if end < total:
            note: str | None = _cut_note(start, end, total, _ref(entry, shown.last, end))
        else:
            note = _end_note(start, total) if start else None
        block = _block(header, note, quoted)
        used += separator + len(block)
        yield block
        if end < total:
            return
        start = 0


def _ref(entry: Entry, last: int, offset: int) -> str:
    """The reference that shows from `entry`'s character `offset` to entry `last`."""
    span = f"-{last}" if last > entry.position else ""
    return f"{entry.sequence}:{entry.position}{span}@{offset}"


def _cut_note(start: int, end: int, total: int, continuing: str) -> str:
    return f"(characters {start} to {end} of {total} shown; `show {continuing}` continues)"


def _end_note(start: int, total: int) -> str:
    return f"(characters {start} to {total} of {total}: the end of the entry)"


_BIG = 10**20  # past any entry's place, size or savepoint's number
_NOTE_LIMIT = len(_cut_note(_BIG, _BIG, _BIG, f"{_BIG}:{_BIG}-{_BIG}@{_BIG}"))
# Kept in the budget beside an entry's header and text: the line breaks around its text, its note
# and the last line saying what is left (the one after a blank line).
_NOTES_ROOM = 1 + (_NOTE_LIMIT + 1) + (2 + _NOTE_LIMIT)


def _block(header: str, note: str | None, quoted: str) -> str:
    return f"{header}\n{note}\n{quoted}" if note else f"{header}\n{quoted}"


def describe_savepoints(config: Config, instance: str, budget: int) -> str:
    """The savepoints recall searches, one line each, newest first, with the verifier's verdict
    on git and the chain as the worker recorded them (no git or chain is read here), within
    `budget` characters: a client cuts a long answer from its end (Claude Code past 25,000
    tokens, Codex past 10 KiB), so the newest come first and a last line counts those left out.
    Of a savepoint whose index line no root vouches for (a `logs/` that came with the project),
    one line saying so and nothing it states; RecallError when no root vouches for any of them."""
    saved = in_scope(config.logs, instance)
    signer = signed.configured_key(config)
    vouched = [signed.line_vouched(s, signer) for s in saved]
    if saved and not any(vouched):
        raise RecallError(
            f"no root vouches for the savepoints of {quoting.name(instance)} in logs/ (this machine did not write them, your signing key did not sign them): "
            "nothing of them is listed; `precompact verify` checks them"
        )
    lines = []
    for s, rooted in zip(saved, vouched, strict=True):
        if not rooted:
            lines.append(
                f"savepoint {s.sequence} of {quoting.inline(s.instance)}: not verified: no root vouches for its index line; nothing of it is listed"
            )
            continue
        summary = f"; summary: {quoting.inline(s.compact_summary[:200])}" if s.compact_summary else ""
        git = verdicts.recorded_git(config.git_layer, s, config.remote)
        chain = verdicts.recorded_chain(config.chain_layer, s)
        lines.append(
            f"savepoint {s.sequence} of {quoting.name(s.instance)}: {quoting.timestamp(s.made_timestamp)}, {_agent(s)}, trigger {_trigger(s)}, "
            f"sha256:{s.snapshot_hash[:12]}, git {git.status} ({quoting.inline(git.detail)}), "
            f"chain {chain.status} ({quoting.inline(chain.detail)}){summary}"
        )
    if not lines:
        return f"{quoting.name(instance)} has no savepoints yet"
    return _within(lines[::-1], budget)


def _within(lines: list[str], budget: int) -> str:
    """The first of `lines` that fit `budget` characters with the line counting the rest (at
    least one, cut to fit)."""
    room = budget - len(_older_note(len(lines), len(lines))) - 1
    kept: list[str] = []
    used = 0
    for line in lines:
        if used + len(line) + 1 > room:
            break
        kept.append(line)
        used += len(line) + 1
    if len(kept) == len(lines):
        return "\n".join(kept)
    if not kept:
        kept = [lines[0][: max(room - 1, 0)] + "…"]
    return "\n".join([*kept, _older_note(len(lines) - len(kept), len(lines))])


def _older_note(left: int, total: int) -> str:
    return f"({left} older of {total} savepoints not listed here; `recall` with `savepoint` N searches any of them)"
