"""Content-addressed chunks of the conversation history, shared between savepoints.

A chunked snapshot (format 2) keeps the history out of the snapshot file: the file lists the
chunks (`conversation_chunks`: SHA-256 and size of each), and each chunk is a file in
`logs/precompact-chunks/` named by the SHA-256 of its bytes. A history chunk holds whole entries,
each its canonical JSON followed by a comma, so the history of the full document is the chunks
joined, less the last comma; the loaded files' contents a savepoint stores anew go into one
chunk, their canonical JSON strings one after another, and each file's record names its range
there as `content_chunk`. `export` rebuilds exactly the document
a format-1 snapshot holds.
The chunk hashes are inside the snapshot's hashed bytes, so its hash commits to the whole
history. Chunks are cut after the first transcript block that brings one to `TARGET_BYTES`:
a session that only grows re-uses every earlier full chunk, and only its last one changes.
"""

from __future__ import annotations

import bisect
import contextlib
import errno
import hashlib
import json
import math
import mmap
import os
import re
import stat
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from precompact.boundary import logs_dir
from precompact.errors import PrecompactError
from precompact.records import Record

CHUNKS_DIR = "precompact-chunks"
# Small enough that re-sending and re-storing the last, partial chunk at each savepoint costs
# little next to the new content (a savepoint every 10 MB: at most 1.1 times it).
TARGET_BYTES = 1 << 20
CHUNKED_OPEN = b'{"conversation_chunks":['
HISTORY_OPEN = b'{"conversation_history":['
_NAME = re.compile(r"[0-9a-f]{64}")
_STALE = re.compile(r"\.[0-9a-f]{64}\.\d+\.tmp")


class Ref(Record, frozen=True):
    """One chunk as a snapshot lists it."""

    sha256: str
    size: int

    def listed(self) -> dict:
        return {"sha256": self.sha256, "size": self.size}


class ChunkError(PrecompactError):
    """A chunk a snapshot lists is missing or is not the bytes its name says."""

    def __init__(self, ref: Ref, problem: str):
        super().__init__(f"chunk {ref.sha256} ({ref.size} bytes) {problem}")
        self.ref = ref


def is_chunked(data: bytes | memoryview) -> bool:
    """Whether snapshot bytes are a chunk list (format 2) rather than one whole document."""
    return bytes(data[: len(CHUNKED_OPEN)]) == CHUNKED_OPEN


def refs(fields: dict) -> list[Ref]:
    """Every chunk a chunked snapshot's fields list, once each: its history's, in order, then
    the one (or ones) holding its loaded files' contents. ValueError when a list or reference
    is malformed."""
    found = history_refs(fields)
    for record in _file_records(fields):
        found.append(file_range(record["content_chunk"])[0])
    return list(dict.fromkeys(found))


def history_refs(fields: dict) -> list[Ref]:
    """The chunks a chunked snapshot's history is made of, in order; ValueError when the list or
    a reference is malformed."""
    listed = fields.get("conversation_chunks")
    if not isinstance(listed, list):
        raise ValueError("the snapshot lists no conversation_chunks")  # noqa: TRY004 -- bad input, handled as ValueError
    return [parse_ref(item) for item in listed]


def _file_records(fields: dict) -> list[dict]:
    """The records of `loaded_files` whose content is in a chunk."""
    files = fields.get("loaded_files")
    if not isinstance(files, dict):
        return []
    return [r for _, r in sorted(files.items()) if isinstance(r, dict) and "content_chunk" in r]


def parse_ref(item: object) -> Ref:
    """A chunk reference as a snapshot lists it; ValueError when malformed."""
    sha, size = (item.get("sha256"), item.get("size")) if isinstance(item, dict) else (None, None)
    if not isinstance(sha, str) or not _NAME.fullmatch(sha) or not isinstance(size, int) or size < 2:
        raise ValueError(f"{item!r} is not a chunk's sha256 and size")
    return Ref(sha, size)


def file_range(item: object) -> tuple[Ref, int, int]:
    """A loaded file's `content_chunk`: the chunk, and where in it the content's JSON string
    starts and ends; ValueError when malformed."""
    ref = parse_ref(item)
    start, end = (item.get("start"), item.get("end")) if isinstance(item, dict) else (None, None)
    if not isinstance(start, int) or not isinstance(end, int) or not 0 <= start < end <= ref.size:
        raise ValueError(f"{item!r} is not a range of its chunk")
    return ref, start, end


Fetch = Callable[[Ref], bytes | None]


def document(data: bytes, fetch: Fetch) -> bytes:
    """The full document a snapshot stands for: a format-1 snapshot is it; a chunked one is
    rebuilt from its chunks (`fetch` gives a chunk's bytes or None), each checked against its
    name: the history's entries, and each loaded file's content back in its record. Raises
    ChunkError naming the first chunk missing or altered, ValueError for bytes that are no
    snapshot."""
    found = rebuilt(data, fetch)
    return found if isinstance(found, bytes) else found.joined()


class Rebuilt:
    """A chunked snapshot's full document as its checked parts: the history's chunks, in order,
    and every other field, each loaded file's content back in its record. Its bytes are joined
    only when asked for (`joined`): a session start's brief reads the newest entries and the
    fields, and joining 10 MB of chunks would cost it as much again as reading them."""

    def __init__(self, history: list[bytes], fields: dict):
        self.history = history
        self.fields = fields

    def joined(self) -> bytes:
        """The full document's bytes (docs/snapshot-format.md): the history's chunks joined,
        less the last comma, then the other fields as canonical JSON."""
        from precompact.local.canonical import canonical  # orjson: only when the bytes are asked for

        parts = [HISTORY_OPEN, *self.history]
        if len(parts) > 1:
            parts[-1] = parts[-1][:-1]  # the last entry's comma
        parts.append(b"],")
        parts.append(canonical(self.fields)[1:])
        return b"".join(parts)


def rebuilt(data: bytes, fetch: Fetch) -> bytes | Rebuilt:
    """`document`, the chunks of a chunked snapshot not yet joined: each chunk read and checked
    against its name, the fields decoded. A format-1 snapshot is returned as it is."""
    if not is_chunked(data):
        return data
    fields = strict_loads(data)
    history = [parse_ref(item) for item in fields.pop("conversation_chunks")]
    read: dict[Ref, bytes] = {}
    for record in _file_records(fields):
        ref, start, end = file_range(record.pop("content_chunk"))
        if ref not in read:
            read[ref] = checked(ref, fetch(ref))
        record["content"] = strict_loads(read[ref][start:end])
    return Rebuilt([checked(item, fetch(item)) for item in history], fields)


def strict_loads(data: bytes, integers_as_orjson: bool = False) -> Any:
    """`data` decoded by the standard library as orjson decodes it (canonical JSON is orjson's
    spelling; importing orjson is most of what a session start's brief would import for it):
    ValueError for what orjson refuses (NaN and infinities, a number that is infinite as a
    double, a lone surrogate, invalid UTF-8, nesting deeper than recursion takes). An integer
    beyond 64 bits is read exactly, as canonical JSON keeps a file's (docs/snapshot-format.md);
    with `integers_as_orjson`, as a double, as orjson reads it: a history's entries, which its
    other reader (snapshot.located_entries) reads with orjson, must read the same."""
    try:
        value = json.loads(
            data,
            parse_constant=_refused_constant,
            parse_float=_finite,
            parse_int=_integer if integers_as_orjson else int,
        )
    except RecursionError:
        raise ValueError("nested too deeply") from None
    if _SURROGATE_ESCAPE.search(data) and not _encodable(value):
        raise ValueError("a lone surrogate")
    return value


def _refused_constant(name: str) -> float:
    raise ValueError(f"{name} is not JSON")


def _integer(text: str) -> int | float:
    """An integer as orjson reads it: exactly within 64 bits (signed, or unsigned), else as a
    double (never converting hundreds of digits to an int first)."""
    if len(text) < 19:
        return int(text)
    if len(text) <= 21:
        value = int(text)
        if -(2**63) <= value < 2**64:
            return value
    return _finite(text)


def _finite(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise ValueError(f"{text} is infinite as a double")
    return value


# Where a lone surrogate could come from in JSON text: an escape of one, or its UTF-8 form, which
# json decodes with "surrogatepass" (a false positive, such as an escaped backslash before `u`,
# only costs the walk below).
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]|\xed[\xa0-\xbf]")


def _encodable(value) -> bool:
    """Whether every string in `value` (within what recursion took to decode it) is UTF-8."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            try:
                item.encode()
            except UnicodeEncodeError:
                return False
        elif isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return True


def stamps(logs: Path, listed: Iterable[Ref]) -> str | None:
    """A digest of the chunk files' identities (device, inode, size, modification and change
    times: no tool sets a change time back), which stays the same only while none of them is
    replaced or written to; None when one is missing or not a plain file."""
    digest = hashlib.sha256()
    try:
        with logs_dir.directory(logs, CHUNKS_DIR, create=False) as fd:
            for ref in listed:
                info = os.stat(ref.sha256, dir_fd=fd, follow_symlinks=False)
                if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
                    return None
                digest.update(f"{logs_dir.identity(info)};".encode())
    except (FileNotFoundError, logs_dir.ConfinementError):
        return None
    return digest.hexdigest()


class MappedHistory:
    """A chunked snapshot's history entries read in place, by their place in the full document
    (what `SnapshotReader.located_entries` gave), mapping only the chunks asked for. For chunks
    already checked against their names and unchanged since (`stamps`)."""

    def __init__(self, logs: Path, history: list[Ref]):
        self._logs = logs
        self._history = history
        self._starts = []
        position = len(HISTORY_OPEN)
        for ref in history:
            self._starts.append(position)
            position += ref.size
        self._mapped: dict[int, mmap.mmap] = {}

    def entry_bytes(self, place: tuple[int, int]) -> bytes:
        start, stop = place
        i = bisect.bisect_right(self._starts, start) - 1
        if i < 0 or not start < stop <= self._starts[i] + self._history[i].size:
            raise ValueError(f"no entry of this snapshot is at {start}..{stop}")
        if i not in self._mapped:
            fd = logs_dir.open_file(self._logs, f"{CHUNKS_DIR}/{self._history[i].sha256}", os.O_RDONLY)
            try:
                self._mapped[i] = mmap.mmap(fd, 0, prot=mmap.PROT_READ)
            finally:
                os.close(fd)
        base = self._starts[i]
        return self._mapped[i][start - base : stop - base]

    def entry_at(self, place: tuple[int, int]) -> object:
        import orjson  # recall's reader: a session start does without it

        return orjson.loads(self.entry_bytes(place))


def checked(ref: Ref, data: bytes | None) -> bytes:
    """`data` if it is the chunk `ref` names; else ChunkError."""
    global _last_checked
    if data is None:
        raise ChunkError(ref, "is missing")
    if type(data) is bytes and _last_checked[0] == ref and _last_checked[1] is data:
        return data
    if len(data) != ref.size or hashlib.sha256(data).hexdigest() != ref.sha256:
        raise ChunkError(ref, "is altered: its bytes do not hash to its name")
    if type(data) is bytes:
        _last_checked = (ref, data)
    return data


def checked_continuing(ref: Ref, data: bytes | None, before: Ref) -> bytes:
    """`checked`, and that `data` starts with the bytes of chunk `before` (a history's last
    chunk, written again longer as the session grew), both hashes in one pass over the bytes;
    else ChunkError."""
    if data is None:
        raise ChunkError(ref, "is missing")
    if len(data) != ref.size or before.size > len(data):
        raise ChunkError(ref, "is altered: its bytes do not hash to its name")
    view = memoryview(data)
    running = hashlib.sha256(view[: before.size])
    if running.hexdigest() != before.sha256:
        raise ChunkError(ref, f"does not start with the bytes of chunk {before.sha256}")
    running.update(view[before.size :])
    if running.hexdigest() != ref.sha256:
        raise ChunkError(ref, "is altered: its bytes do not hash to its name")
    return data


# The last chunk `checked` found good, held (so its id cannot be reused) with its ref: the same
# immutable bytes object handed back for the same ref is that chunk, without hashing it again.
# A reader that checks a chunk to choose where to take it from (the verifier: logs/ or git) and
# then hands it to `document`, which checks every chunk it is given, hashes it once.
_last_checked: tuple[Ref | None, bytes] = (None, b"")


def read_local(logs: Path, ref: Ref) -> bytes | None:
    """The bytes of chunk `ref` in logs/ (unchecked), None when absent or not a plain file."""
    try:
        return logs_dir.read_bytes(logs, f"{CHUNKS_DIR}/{ref.sha256}")
    except (FileNotFoundError, NotADirectoryError, logs_dir.ConfinementError):
        return None


def local_fetch(logs: Path) -> Fetch:
    return lambda ref: read_local(logs, ref)


def store(logs: Path, data: bytes) -> None:
    """Writes a chunk fetched from elsewhere (git) into logs/ when logs/ has no file of its name:
    an altered one there is evidence, never overwritten."""
    name = hashlib.sha256(data).hexdigest()
    with logs_dir.directory(logs, CHUNKS_DIR) as fd:
        present = _present(fd, name)
    if present is None:
        logs_dir.write_atomic(logs, f"{CHUNKS_DIR}/{name}", data)


def _present(dir_fd: int, name: str) -> int | None:
    """The size of the plain file `name` in the directory, None when there is none."""
    try:
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    return info.st_size if stat.S_ISREG(info.st_mode) and info.st_nlink == 1 else None


def all_present(logs: Path, listed: Iterable[Ref]) -> bool:
    """Whether logs/ has a plain file of the right size for every chunk (not re-hashed)."""
    try:
        with logs_dir.directory(logs, CHUNKS_DIR, create=False) as fd:
            return all(_present(fd, ref.sha256) == ref.size for ref in listed)
    except (FileNotFoundError, logs_dir.ConfinementError):
        return False


def remove(logs: Path, name: str) -> None:
    if not _NAME.fullmatch(name):
        raise logs_dir.ConfinementError(errno.EPERM, f"{name} is not a chunk name")
    with logs_dir.directory(logs, CHUNKS_DIR, create=False) as fd, contextlib.suppress(FileNotFoundError):
        os.unlink(name, dir_fd=fd)


class Writer:
    """Collects a history's entries into chunks: `add` a transcript block's entries (each
    already followed by its comma), `cut` when `full`, `store` any other content (a loaded
    file's), `finish` at the end. Every chunk is on disk (synced) once `finish` returns, before
    the snapshot that lists it is written."""

    def __init__(self, chunks_fd: int):
        self._fd = chunks_fd
        self.refs: list[Ref] = []
        self._parts: list[bytes] = []
        self._size = 0
        self._written: list[str] = []

    def add(self, data: bytes) -> None:
        if data:
            self._parts.append(data)
            self._size += len(data)

    @property
    def full(self) -> bool:
        return self._size >= TARGET_BYTES

    def cut(self) -> None:
        """Ends the current chunk (if it holds anything) and writes it unless it exists."""
        if not self._size:
            return
        self.refs.append(self.store(b"".join(self._parts)))
        self._parts, self._size = [], 0

    def store(self, data: bytes) -> Ref:
        """Writes `data` as a chunk unless it exists; its reference."""
        ref = Ref(hashlib.sha256(data).hexdigest(), len(data))
        # A file of that name and size was written by this code from these bytes; if it was
        # altered since, verify names it and resurrect takes git's copy.
        if _present(self._fd, ref.sha256) != ref.size:
            _write_unsynced(self._fd, ref.sha256, data)
            self._written.append(ref.sha256)
        return ref

    def finish(self) -> list[Ref]:
        """Cuts the last chunk and makes every chunk written durable."""
        self.cut()
        if self._written:
            _sync(self._fd, self._written)
            self._written = []
        return self.refs


def remove_stale(dir_fd: int) -> None:
    """Removes the temporary files of a writer killed mid-chunk. Chunks are written only under
    the index lock, which the caller holds, so no such file belongs to a live writer."""
    for name in os.listdir(dir_fd):
        if _STALE.fullmatch(name):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(name, dir_fd=dir_fd)


def _write_unsynced(dir_fd: int, name: str, data: bytes) -> None:
    """Writes `name` whole under a temporary name, then renames it in: never a partial chunk
    under a chunk's name, never through a link (the rename replaces a link). Synced by `_sync`."""
    tmp = f".{name}.{os.getpid()}.tmp"
    with contextlib.suppress(FileNotFoundError):
        os.unlink(tmp, dir_fd=dir_fd)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=dir_fd)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dir_fd)
        raise


def _sync(dir_fd: int, names: list[str]) -> None:
    """Makes the chunks `names` and their directory durable (the directory once)."""
    for name in names:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    os.fsync(dir_fd)
