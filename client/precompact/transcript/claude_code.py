"""Reads a Claude Code transcript (JSONL) as a stream: one entry in memory at a time.

The hook fires while the transcript may still be growing, and transcripts of hundreds of MB
exist. Nothing here raises for a bad line: malformed JSON, invalid UTF-8 and a partial last line
are counted, and a missing file is reported, so a snapshot is always made.
"""

from __future__ import annotations

import array
import base64
import hashlib
import json
import os
import re
import time
from collections import OrderedDict, deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

import orjson

from precompact.boundary import quoting, session_file
from precompact.boundary.outside_json import MAX_DEPTH, TooDeep, parse_json, within_depth, without_lone_surrogates
from precompact.transcript import conversation

# Tools whose input names a file the session read or changed.
FILE_TOOLS = {
    "Read": "file_path",
    "Edit": "file_path",
    "MultiEdit": "file_path",
    "Write": "file_path",
    "NotebookEdit": "notebook_path",
}
SETTLE_TIMEOUT_SECONDS = 1.0
# How far into a transcript `started_in` looks for the first entry naming its directory: past
# any titles and file snapshots Claude Code writes before the first message, which is one line.
CWD_SCAN_BYTES = 16 << 20
_SETTLE_STEP_SECONDS = 0.1
# Large enough that per-block work (the redaction gate) costs next to no per-call overhead;
# small enough that a block's memory is reused, not page-faulted afresh: with 4 MB blocks a new
# process spent more time in page faults than the gate saved.
BLOCK_BYTES = 128 << 10
# How far back from the end last_said looks; past a longer run of entries that say nothing it is
# unknown (None), and the PreCompact hook then saves rather than keep a savepoint.
LAST_SAID_WINDOW = 256
# A message's lines come one after another (one per content block): the last this many message
# keys are enough to count each message once, and bound what a resumed read carries over.
SEEN_MESSAGES_WINDOW = 1024
# A line longer than this is kept as text, not parsed (a parsed line takes several times its
# size in memory); of such a line, and of any line that is no entry, the first
# UNPARSED_TEXT_BYTES are kept.
MAX_LINE_BYTES = 16 << 20
UNPARSED_TEXT_BYTES = 1 << 20
# The key of an entry made of a line that is none (`unparsed_entry`).
UNPARSED = "precompact_unparsed_line"
# A row is remembered as a 64-bit hash of its uuid, time and message id: a session of 100,000
# lines carries 800 kB of them in its read position (restored in a few ms), and two of them
# collide with odds near 1 in 10^9.
_ROW_DIGEST = "Q"
_ROW_DIGEST_BYTES = 8


@dataclass
class TranscriptScan:
    """What reading the transcript found, besides the entries themselves."""

    path: str
    found: bool = True
    problem: str | None = None
    bytes: int = 0
    entries: int = 0
    messages: int = 0
    malformed_lines: int = 0
    invalid_utf8_lines: int = 0
    partial_last_line: bool = False
    # Lines that repeat a row read before (its uuid, time and message id): copies of history
    # Claude Code appended again (a second /compact in one process, anthropics/claude-code #92089).
    reappended_lines: int = 0
    # Claude Code's `compact_boundary` entries read: the history holds that many compactions.
    compact_boundaries: int = 0
    last_usage: dict | None = None
    model: str | None = None  # of the last main-chain assistant turn
    # Files the session read or changed (path -> tool), from file tool calls that succeeded.
    files: dict[str, str] = field(default_factory=dict)
    # The latest message keys seen, oldest first (SEEN_MESSAGES_WINDOW of them).
    _seen_messages: OrderedDict = field(default_factory=OrderedDict, repr=False)
    # Every row read so far (`_row_digest`): a copy of a row is stored once.
    _seen_rows: set[int] = field(default_factory=set, repr=False)
    # The latest user and assistant entries, newest last: last_said looks among them only at the
    # end, instead of deciding for every entry whether it was said (a third of Layer 1's time).
    _recent: deque = field(default_factory=lambda: deque(maxlen=LAST_SAID_WINDOW), repr=False)
    # File tool calls not yet answered, by tool_use id: (path, tool).
    _file_calls: dict = field(default_factory=dict, repr=False)
    # Carried over from a resumed scan (`restored`): the last said before it, and how many
    # user and assistant entries came after that one.
    _prior_said: str | None = field(default=None, repr=False)
    _prior_run: int = field(default=LAST_SAID_WINDOW, repr=False)

    @property
    def last_said(self) -> str | None:
        """conversation.said_mark of the last entry said, among the last entries read."""
        return self._said()[0]

    def _said(self) -> tuple[str | None, int]:
        """The last said mark in the window, and how many window entries follow it."""
        for run, entry in enumerate(reversed(self._recent)):
            if conversation.is_said(entry):
                return conversation.said_mark(entry), run
        run = len(self._recent) + self._prior_run
        return (self._prior_said, run) if self._prior_said is not None and run < LAST_SAID_WINDOW else (None, run)

    def state(self) -> dict:
        """What reading so far has found, as JSON, for `restored` to go on from (a resumed read
        then finds exactly what one read from the start finds)."""
        said, run = self._said()
        return {
            "entries": self.entries,
            "messages": self.messages,
            "malformed_lines": self.malformed_lines,
            "invalid_utf8_lines": self.invalid_utf8_lines,
            "reappended_lines": self.reappended_lines,
            "compact_boundaries": self.compact_boundaries,
            "seen_rows": base64.b64encode(array.array(_ROW_DIGEST, self._seen_rows).tobytes()).decode(),
            "last_usage": self.last_usage,
            "model": self.model,
            "files": dict(self.files),
            "seen_messages": list(self._seen_messages),
            "file_calls": {k: list(v) for k, v in self._file_calls.items()},
            "said": said,
            "run": min(run, LAST_SAID_WINDOW),
        }

    @classmethod
    def restored(cls, path: str, state: dict) -> TranscriptScan:
        """A scan that goes on from `state` (`state()`); ValueError when it is malformed."""
        try:
            scan = cls(
                path=path,
                entries=_count(state["entries"]),
                messages=_count(state["messages"]),
                malformed_lines=_count(state["malformed_lines"]),
                invalid_utf8_lines=_count(state["invalid_utf8_lines"]),
                reappended_lines=_count(state["reappended_lines"]),
                compact_boundaries=_count(state["compact_boundaries"]),
                _seen_rows=_digests(state["seen_rows"]),
                last_usage=state["last_usage"] if isinstance(state["last_usage"], dict) else None,
                model=state["model"] if isinstance(state["model"], str) else None,
                files={str(k): str(v) for k, v in dict(state["files"]).items()},
                _seen_messages=OrderedDict.fromkeys(map(str, state["seen_messages"])),
                _file_calls={str(k): (str(v[0]), str(v[1])) for k, v in dict(state["file_calls"]).items()},
                _prior_said=state["said"] if isinstance(state["said"], str) else None,
                _prior_run=_count(state["run"]),
            )
        except (KeyError, TypeError, IndexError, AttributeError) as e:
            raise ValueError(f"not a transcript scan state: {type(e).__name__}: {quoting.inline(str(e))}") from None
        return scan

    def summary(self) -> dict:
        return {
            "path": self.path,
            "found": self.found,
            "problem": self.problem,
            "bytes": self.bytes,
            "entries": self.entries,
            "messages": self.messages,
            "malformed_lines": self.malformed_lines,
            "invalid_utf8_lines": self.invalid_utf8_lines,
            "partial_last_line": self.partial_last_line,
            "reappended_lines": self.reappended_lines,
        }


def settle(path: Path, timeout: float = SETTLE_TIMEOUT_SECONDS) -> None:
    """Waits (at most `timeout`) for a transcript that does not yet end with a newline, as long
    as it keeps growing: a partial line nobody is writing is not worth waiting for."""
    deadline = time.monotonic() + timeout
    last_size = None
    while time.monotonic() < deadline:
        try:
            size = path.stat().st_size
            if size == 0 or size == last_size:
                return
            with session_file.open_read(path) as f:
                f.seek(size - 1)
                if f.read(1) == b"\n":
                    return
        except OSError:
            return
        last_size = size
        time.sleep(_SETTLE_STEP_SECONDS)


def whole_lines_end(path: Path) -> int:
    """Where the transcript's last whole line ends (a line still being written is not read)."""
    try:
        with session_file.open_read(path) as f:
            size = os.fstat(f.fileno()).st_size
            step = 1 << 16
            position = size
            while position > 0:
                low = max(position - step, 0)
                f.seek(low)
                newline = f.read(position - low).rfind(b"\n")
                if newline != -1:
                    return low + newline + 1
                position = low
    except OSError:
        return 0
    return 0


def _count(value) -> int:
    if not isinstance(value, int) or value < 0:
        raise TypeError(f"{value!r} is not a count")
    return value


def _digests(value) -> set[int]:
    """The row digests `state()` wrote (TypeError when malformed)."""
    if not isinstance(value, str):
        raise TypeError(f"{value!r} is not a list of row digests")
    digests = array.array(_ROW_DIGEST)
    try:
        digests.frombytes(base64.b64decode(value, validate=True))
    except ValueError as e:  # not base64, or not a whole number of digests
        raise TypeError(f"row digests that do not decode ({quoting.inline(str(e))})") from None
    return set(digests)


def _row_digest(entry: dict, uuid: str) -> int:
    """What identifies a row Claude Code wrote: its uuid, its time, its message's id and what
    the message holds (a copy has all four; rows a generator numbered alike differ in one, and
    so do the parts of one message another agent's reader writes as rows of their own). Only
    strings count for the first three (a hostile line's huge number or nested value must not
    stop the read)."""
    stamp = entry.get("timestamp")
    message = entry.get("message")
    message_id = message.get("id") if type(message) is dict else None
    key = f"{uuid}\0{stamp if type(stamp) is str else ''}\0{message_id if type(message_id) is str else ''}\0"
    hashed = hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=_ROW_DIGEST_BYTES)
    if type(message) is dict:
        try:
            hashed.update(orjson.dumps(message.get("content"), option=orjson.OPT_SORT_KEYS))
        except (TypeError, orjson.JSONEncodeError):  # an integer wider than 64 bits
            hashed.update(repr(message.get("content")).encode("utf-8", "surrogatepass"))
    return int.from_bytes(hashed.digest(), "little")


def blocks(path: Path, scan: TranscriptScan) -> Iterator[bytes | LongLine]:
    """The transcript's complete lines, about `BLOCK_BYTES` at a time (a block always ends with a
    newline; one longer line is a block of its own, and one longer than MAX_LINE_BYTES a
    LongLine), so that per-line work can be done per block. A partial last line is left out and
    flagged in `scan`."""
    handle = open_transcript(path, scan)
    if handle is None:
        return
    with handle:
        yield from read_blocks(handle, scan)


def open_transcript(path: Path, scan: TranscriptScan) -> BinaryIO | None:
    """The transcript open for reading (its size noted in `scan`); None, with the problem noted
    in `scan`, when it cannot be opened."""
    try:
        handle = session_file.open_read(path)
    except FileNotFoundError:
        scan.found, scan.problem = False, "transcript file not found"
        return None
    except session_file.NotASessionFile as e:  # precompact's words: what the path names instead
        scan.found, scan.problem = False, f"transcript unreadable: {e.strerror}"
        return None
    except OSError as e:
        scan.found, scan.problem = False, f"transcript unreadable: {quoting.os_error(e)}"
        return None
    try:
        scan.bytes = os.fstat(handle.fileno()).st_size
    except OSError:
        pass
    return handle


@dataclass(frozen=True)
class LongLine:
    """A whole line longer than MAX_LINE_BYTES, never held in memory: where it starts in the
    transcript, its size (its newline included), its first UNPARSED_TEXT_BYTES, and the open
    transcript, for `raw` to read its bytes again a block at a time."""

    start: int
    size: int
    head: bytes
    handle: BinaryIO

    def raw(self) -> Iterator[bytes]:
        """The line's bytes as the transcript now holds them, a block at a time (the resume point
        hashes them; `read_blocks` goes on from the line's end whatever was read here)."""
        self.handle.seek(self.start)
        left = self.size
        while left and (block := self.handle.read(min(left, _LONG_LINE_STEP))):
            left -= len(block)
            yield block

    def entry(self, scan: TranscriptScan) -> dict:
        """The line as `entries` gives one longer than MAX_LINE_BYTES (counted in `scan`)."""
        scan.malformed_lines += 1
        kept = unparsed_entry(self.head, f"longer than {MAX_LINE_BYTES} bytes")
        kept[UNPARSED].update(bytes=self.size - 1, truncated=True)
        return kept


# How much of a line longer than MAX_LINE_BYTES is read at a time, looking for its end.
_LONG_LINE_STEP = 1 << 20


def read_blocks(handle: BinaryIO, scan: TranscriptScan) -> Iterator[bytes | LongLine]:
    """`blocks`, from where `handle` stands (the start of a line). No more of a line than
    MAX_LINE_BYTES and a block is held: a longer one comes as a LongLine of its own, once its end
    is found (read through a block at a time; a longer last line still being written is a
    partial last line, as any)."""
    while block := handle.read(BLOCK_BYTES):
        opened = block.rfind(b"\n") + 1  # where the line the block leaves open starts
        rest = _line_rest(handle, MAX_LINE_BYTES + 1 - (len(block) - opened))
        if not rest.endswith(b"\n") and len(block) - opened + len(rest) > MAX_LINE_BYTES:
            if opened:
                yield block[:opened]
            start = handle.tell() - len(rest) - (len(block) - opened)
            head = (block[opened:] + rest[:UNPARSED_TEXT_BYTES])[:UNPARSED_TEXT_BYTES]
            del rest
            long = _long_line(handle, start, head)
            if long is None:
                scan.partial_last_line = True
                return
            yield long
            handle.seek(long.start + long.size)
            continue
        block += rest
        if not block.endswith(b"\n"):
            scan.partial_last_line = True
            block = block[: block.rfind(b"\n") + 1]
        if block:
            yield block
        if scan.partial_last_line:
            return


def _line_rest(handle: BinaryIO, most: int) -> bytes:
    """The rest of the line `handle` stands in, at most `most` bytes of it (readline with a
    limit that large holds it twice while reading: a block at a time instead)."""
    pieces = [handle.readline(min(most, _LONG_LINE_STEP))]
    most -= len(pieces[0])
    while most and pieces[-1] and not pieces[-1].endswith(b"\n"):
        pieces.append(handle.readline(min(most, _LONG_LINE_STEP)))
        most -= len(pieces[-1])
    return pieces[0] if len(pieces) == 1 else b"".join(pieces)


def _long_line(handle: BinaryIO, start: int, head: bytes) -> LongLine | None:
    """The line starting at `start`, of which `head` is the start and `handle` stands after
    MAX_LINE_BYTES of it with no newline, read through to its end a block at a time; None when
    the transcript ends first."""
    while step := handle.read(_LONG_LINE_STEP):
        ended = step.find(b"\n")
        if ended >= 0:
            return LongLine(start, handle.tell() - len(step) + ended + 1 - start, head, handle)
    return None


def entries(lines: list[bytes], scan: TranscriptScan) -> Iterator[tuple[int, dict]]:
    """Each entry among `lines` with its position there, updating `scan` as it goes. A line
    that is no entry (malformed, not an object, nested deeper than MAX_DEPTH, longer than
    MAX_LINE_BYTES) is counted and comes as an `unparsed_entry` of its text. A line repeating a
    row read before (`_row_digest`) is a copy Claude Code appended again (#92089): it is counted
    in `reappended_lines`, not given, so a history holds each entry once."""
    for number, raw in enumerate(lines):
        if not raw.strip():
            continue
        entry, problem = _parsed(raw, scan)
        if entry is None:
            scan.malformed_lines += 1
            yield number, unparsed_entry(raw, problem or "")
            continue
        uuid = entry.get("uuid")
        if isinstance(uuid, str):
            digest = _row_digest(entry, uuid)
            if digest in scan._seen_rows:
                scan.reappended_lines += 1
                if entry.get("type") in ("user", "assistant"):
                    # Still the transcript's last line said, if last (`last_said` is what the
                    # hooks compare with conversation.last_said): a copy is not new conversation.
                    scan._recent.append(entry)
                continue
            scan._seen_rows.add(digest)
        scan.entries += 1
        _note(entry, scan)
        yield number, entry


def unparsed_entry(raw: bytes, problem: str) -> dict:
    """A line kept as its text (the first UNPARSED_TEXT_BYTES of it), to be redacted as text."""
    text = raw[:UNPARSED_TEXT_BYTES].decode("utf-8", errors="replace")
    return {
        UNPARSED: {"problem": problem, "bytes": len(raw), "truncated": len(raw) > UNPARSED_TEXT_BYTES, "text": text}
    }


def _parsed(raw: bytes, scan: TranscriptScan) -> tuple[dict, None] | tuple[None, str]:
    """The line's entry, or why it is none."""
    if len(raw) > MAX_LINE_BYTES:
        return None, f"longer than {MAX_LINE_BYTES} bytes"
    try:
        entry = orjson.loads(raw)  # the common case: valid UTF-8 and plain JSON
    except orjson.JSONDecodeError:
        try:
            entry = _parse_unusual(raw, scan)
        except TooDeep as e:
            return None, str(e)
        except ValueError:
            return None, "malformed JSON"
    else:
        # Only a line with that many brackets can be nested that deep: most lines skip the walk.
        if raw.count(b"[") + raw.count(b"{") > MAX_DEPTH and not within_depth(entry):
            return None, TooDeep.MESSAGE
    if not isinstance(entry, dict):
        return None, "not a JSON object"
    return entry, None


def _parse_unusual(raw: bytes, scan: TranscriptScan):
    """A line orjson refused: invalid UTF-8 (read with replacement characters, and counted),
    or JSON only the standard library reads."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        scan.invalid_utf8_lines += 1
        text = raw.decode("utf-8", errors="replace")
    return parse_json(text)


# How orjson spells a number of 1e16 or more: what an integer beyond 64 bits, which orjson reads
# as a float, becomes when written again.
WIDE_NUMBER = b"e+"


def exact_numbers(raw: bytes | str, value):
    """`value` (read from `raw` by orjson) with every integer beyond 64 bits as the integer `raw`
    spells, not the float orjson reads it as; `value` itself when re-reading cannot tell. Called
    only where the value's canonical bytes hold WIDE_NUMBER, so the common line pays nothing."""
    try:
        exact = json.loads(raw)
    except (ValueError, RecursionError):
        return value
    if type(exact) is not type(value) or not within_depth(exact):  # a line kept as its text, say
        return value
    return without_lone_surrogates(exact)


def _count_message(scan: TranscriptScan, key: object) -> None:
    """Counts a message once: an assistant's repeats on a line per content block."""
    if not isinstance(key, str):
        scan.messages += 1
    elif key not in scan._seen_messages:
        scan._seen_messages[key] = None
        if len(scan._seen_messages) > SEEN_MESSAGES_WINDOW:
            scan._seen_messages.popitem(last=False)
        scan.messages += 1


def _note(entry: dict, scan: TranscriptScan) -> None:
    kind = entry.get("type")
    if is_compact_boundary(entry):
        scan.compact_boundaries += 1
    if kind == "attachment" and conversation.is_message(entry):  # a message sent while a turn ran
        _count_message(scan, entry.get("uuid"))
        scan._recent.append(entry)
    if kind not in ("user", "assistant"):
        return
    message: dict = entry["message"] if isinstance(entry.get("message"), dict) else {}
    if conversation.is_message(entry):
        _count_message(scan, message.get("id") or entry.get("requestId") or entry.get("uuid"))
    scan._recent.append(entry)
    if kind == "assistant" and not entry.get("isSidechain") and isinstance(message.get("usage"), dict):
        scan.last_usage = message["usage"]
        if isinstance(message.get("model"), str):
            scan.model = message["model"]
    content = message.get("content")
    if not isinstance(content, list):
        return
    for block in content:
        if not isinstance(block, dict):
            continue
        if kind == "assistant" and block.get("type") == "tool_use":
            argument = FILE_TOOLS.get(block.get("name", ""))
            file_path = (block.get("input") or {}).get(argument) if argument else None
            if isinstance(file_path, str) and file_path and isinstance(block.get("id"), str):
                scan._file_calls[block["id"]] = (file_path, block["name"])
        elif kind == "user" and block.get("type") == "tool_result":
            # A file is in play only once its call succeeded: a denied call (the user said no)
            # or a failed one comes back as an error result.
            call = (
                scan._file_calls.pop(block.get("tool_use_id"), None)
                if isinstance(block.get("tool_use_id"), str)
                else None
            )
            if call is not None and block.get("is_error") is not True:
                scan.files.setdefault(*call)


def is_compact_boundary(entry: object) -> bool:
    """Whether `entry` is the `system` entry Claude Code writes where a compaction cut the
    conversation (transcript/codex.py and gemini.py write their compactions as the same)."""
    return isinstance(entry, dict) and entry.get("type") == "system" and entry.get("subtype") == "compact_boundary"


def context_tokens(usage: dict | None) -> int:
    """Context used: input plus cache-creation plus cache-read tokens of the last main-chain turn."""
    if not usage:
        return 0
    keys = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    return sum(int(usage.get(k) or 0) for k in keys if isinstance(usage.get(k, 0), (int, float)))


def project_folder(cwd: str) -> str:
    """The folder under ~/.claude/projects/ where Claude Code keeps the sessions run in `cwd`.
    Many directories share one (`my.app`, `my-app` and `my/app` all become `my-app`): which one a
    session ran in is its entries' `cwd` (`started_in`)."""
    return re.sub(r"[^a-zA-Z0-9]", "-", cwd)


def started_in(path: Path) -> str | None:
    """The directory the session of the transcript at `path` ran in: the `cwd` of its first entry
    that has one (Claude Code writes it on each conversation entry; the lines before the first,
    such as titles and file snapshots, have none), read from the start only as far as that entry,
    and at most CWD_SCAN_BYTES. None when no entry there names one, or the file cannot be read."""
    read = 0
    try:
        with session_file.open_read(path) as f:
            for line in f:
                read += len(line)
                try:
                    entry = orjson.loads(line)
                except orjson.JSONDecodeError:
                    entry = None
                cwd = entry.get("cwd") if isinstance(entry, dict) else None
                if isinstance(cwd, str) and cwd:
                    return cwd
                if read >= CWD_SCAN_BYTES:
                    return None
    except OSError:
        return None
    return None
