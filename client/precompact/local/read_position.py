"""Where the next savepoint of a session can start reading its transcript.

After each savepoint, the hook records, per (instance, session, transcript path), the point
where its reading ended: the transcript's byte offset there (after the last whole line), the
SHA-256 of the transcript's bytes before it, the chunks that hold those bytes' entries (the
last one, if not full, is reopened: the next savepoint's entries go on filling it), what
reading them found (the scan's state, the redaction counts), the loaded files' contents it
stored, and the savepoint it was recorded with. The next savepoint of that session re-hashes
the transcript up to the offset (a hash is about 20 times cheaper than reading, redacting and
writing the entries) and, when it is unchanged, every chunk is still there and that savepoint
(in the index, its snapshot intact) lists those chunks, reads only what follows. Anything
else (a transcript rewritten before the offset, a chunk gone, a different precompact version
or redaction setting, a file that does not parse) means a full read: this file only ever saves
work, and what it says about the transcript's content counts only as far as a recorded
savepoint vouches for it.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

import orjson

from precompact import __version__
from precompact.boundary import logs_dir
from precompact.local import chunks, savepoint_log
from precompact.transcript.claude_code import TranscriptScan

RESUME_DIR = "precompact-resume"
_READ_BYTES = 1 << 20


@dataclass
class Point:
    offset: int
    prefix_sha256: str
    refs: list[chunks.Ref]
    scan: dict
    redactions: dict[str, int]
    # Loaded files' contents already stored: SHA-256 of the file's bytes read -> its chunk and
    # the redactions made in it (the next savepoint re-uses both when the bytes are the same).
    files: dict[str, dict] = field(default_factory=dict)


@dataclass
class Resumed:
    """A read going on from `point`: the scan, and the transcript prefix's running hash."""

    point: Point
    scan: TranscriptScan
    prefix: hashlib._Hash
    last: bytes | None  # the point's last chunk when it is not full: the next one starts with it


def key(instance: str, session_id: str | None, transcript_path: str) -> str:
    return hashlib.sha256(orjson.dumps([instance, session_id, transcript_path])).hexdigest()


def fingerprint(redaction: bool, extra_patterns: dict) -> str:
    """What else decides a chunk's bytes: the version (its redaction patterns) and settings."""
    return hashlib.sha256(
        orjson.dumps([__version__, chunks.TARGET_BYTES, redaction, sorted(extra_patterns.items())])
    ).hexdigest()


def save(logs: Path, name: str, mark: str, point: Point, snapshot_sha256: str) -> None:
    """Records `point`, made with the savepoint whose snapshot hashes to `snapshot_sha256`."""
    record = {
        "fingerprint": mark,
        "snapshot": snapshot_sha256,
        "offset": point.offset,
        "prefix_sha256": point.prefix_sha256,
        "chunks": [ref.listed() for ref in point.refs],
        "scan": point.scan,
        "redactions": point.redactions,
        "files": point.files,
    }
    logs_dir.write_atomic(logs, f"{RESUME_DIR}/{name}.json", orjson.dumps(record))


def _vouching(logs: Path, saved: list[savepoint_log.Savepoint], sha256: str) -> dict | None:
    """The fields of the savepoint snapshot that hashes to `sha256` here, as this machine's
    index line (its tag checks) records."""
    found = next((s for s in saved if s.snapshot_hash == sha256 and s.written_here), None)
    data = logs_dir.read_snapshot(logs, found.snapshot_file, found.sequence) if found else None
    if data is None or hashlib.sha256(data).hexdigest() != sha256 or not chunks.is_chunked(data):
        return None
    fields = orjson.loads(data)
    return fields if isinstance(fields, dict) else None


def _range(item: object) -> dict:
    ref, start, end = chunks.file_range(item)
    return {**ref.listed(), "start": start, "end": end}


def load(
    logs: Path, name: str, mark: str, handle: BinaryIO, path: str, saved: list[savepoint_log.Savepoint]
) -> Resumed | None:
    """The point to go on from, if it still holds; `handle` then stands at its offset. It holds
    only as far as a savepoint in `saved` (the instance's, per this machine's index) vouches for
    it: its snapshot, hashing to the recorded value, lists the point's chunks as the start of its
    history and each remembered file's range for a file of those bytes."""
    try:
        record = orjson.loads(logs_dir.read_bytes(logs, f"{RESUME_DIR}/{name}.json"))
        if record["fingerprint"] != mark:
            return None
        fields = _vouching(logs, saved, str(record["snapshot"]))
        if fields is None:
            return None
        point = Point(
            int(record["offset"]),
            str(record["prefix_sha256"]),
            chunks.refs({"conversation_chunks": record["chunks"]}),
            dict(record["scan"]),
            {str(k): int(v) for k, v in dict(record["redactions"]).items()},
            {
                str(k): {
                    "chunk": _range(v["chunk"]),
                    "redactions": {str(kind): int(n) for kind, n in dict(v["redactions"]).items()},
                }
                for k, v in dict(record["files"]).items()
            },
        )
        scan = TranscriptScan.restored(path, point.scan)
        history = [chunks.parse_ref(item) for item in fields["conversation_chunks"]]
        if history[: len(point.refs)] != point.refs:
            return None
        files = {
            orjson.dumps(record["content_chunk"], option=orjson.OPT_SORT_KEYS): record.get("sha256")
            for record in dict(fields["loaded_files"]).values()
            if isinstance(record, dict) and "content_chunk" in record and record.get("truncated") is False
        }
        point.files = {
            key: known
            for key, known in point.files.items()
            if files.get(orjson.dumps(known["chunk"], option=orjson.OPT_SORT_KEYS)) == key
        }
    except (OSError, ValueError, KeyError, TypeError):
        return None
    stored = [chunks.file_range(known["chunk"])[0] for known in point.files.values()]
    if point.offset <= 0 or not point.refs or not chunks.all_present(logs, point.refs + stored):
        return None
    prefix = hashlib.sha256()
    handle.seek(0)
    left = point.offset
    while left:
        block = handle.read(min(left, _READ_BYTES))
        if not block:
            return None  # the transcript is now shorter
        prefix.update(block)
        left -= len(block)
    if prefix.hexdigest() != point.prefix_sha256:
        return None
    last = None
    if point.refs[-1].size < chunks.TARGET_BYTES:
        try:
            last = chunks.checked(point.refs[-1], chunks.read_local(logs, point.refs[-1]))
        except chunks.ChunkError:
            return None
    scan.bytes = os.fstat(handle.fileno()).st_size
    return Resumed(point, scan, prefix, last)
