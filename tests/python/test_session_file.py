"""A session file is checked on the descriptor that is read (boundary/session_file.py): a FIFO,
or a link to a file the kernel makes up, renamed onto the transcript's path after the hook
checked it is refused by every reader, never waited on nor read. On a reader that opens the path
again by name, the FIFO's open() waits for a writer: each read runs in a thread, and one still
waiting after a few seconds is released (a writer opens the FIFO and closes it) and fails."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from precompact.boundary import session_file
from precompact.config import settings as configuration
from precompact.local import capture, savepoint_log
from precompact.ops import compaction
from precompact.transcript import agent_names, agents, codex, conversation, gemini
from precompact.transcript import claude_code as transcript
from support.projects import full_document, new_project

SAID = {"type": "user", "uuid": "u-1", "message": {"role": "user", "content": "fix the parser please"}}
WAIT_SECONDS = 5.0


def _fifo_onto(path: Path) -> None:
    """A FIFO renamed onto `path` (the rename is atomic: there is no moment without a file)."""
    fifo = path.with_name(path.name + ".fifo")
    os.mkfifo(fifo)
    os.rename(fifo, path)


def _environ_onto(path: Path) -> None:
    """A link to /proc/self/environ (a regular file of size 0 that holds this process's
    environment) renamed onto `path`."""
    link = path.with_name(path.name + ".link")
    link.symlink_to("/proc/self/environ")
    os.rename(link, path)


def _within_time(path: Path, read: Callable[[], object]) -> object:
    """What `read` returns, failing when it waits on a FIFO at `path` (then released)."""
    outcome: list = []
    reader = threading.Thread(target=lambda: outcome.append(_outcome(read)), daemon=True)
    reader.start()
    reader.join(WAIT_SECONDS)
    if reader.is_alive():
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)  # a writer comes and goes: the read ends
        os.close(fd)
        reader.join(WAIT_SECONDS)
        pytest.fail(f"a reader opened {path} again by its name and waited on the FIFO swapped onto it")
    return outcome[0]


def _outcome(read: Callable[[], object]) -> object:
    try:
        return read()
    except OSError as e:
        return e


def _transcript(tmp_path: Path) -> Path:
    path = tmp_path / "session.jsonl"
    path.write_text(json.dumps(SAID) + "\n")
    return path


READERS: dict[str, Callable[[Path], object]] = {
    "last_said": conversation.last_said,
    "open_transcript": lambda p: transcript.open_transcript(p, transcript.TranscriptScan(path=str(p))),
    "started_in": transcript.started_in,
    "boundaries": capture.boundaries,
    "claude_version": agents.claude_version,
    "codex": codex.read,
    "gemini": gemini.read,
}
SWAPS = {"fifo": _fifo_onto, "environ": _environ_onto}


@pytest.mark.parametrize("swap", SWAPS)
@pytest.mark.parametrize("reader", READERS)
def test_a_transcript_swapped_after_the_check_is_refused_by_the_reader(tmp_path, reader, swap):
    """The hook's check passes on a file; then a FIFO (or a link to /proc/self/environ) is
    renamed onto the path: the reader reads nothing from it, at once."""
    path = _transcript(tmp_path)
    compaction._refuse_non_file(str(path))
    SWAPS[swap](path)
    got = _within_time(path, lambda: READERS[reader](path))
    if reader in ("codex", "gemini"):  # their readers raise OSError for a file they cannot read
        assert isinstance(got, session_file.NotASessionFile), got
    else:
        assert got in (None, []), got


@pytest.mark.parametrize("swap", SWAPS)
def test_a_swap_between_the_owners_check_and_its_open_is_caught_on_the_descriptor(tmp_path, monkeypatch, swap):
    """The owner's stat of the path (which only spares a device an open) sees a file; the file
    is swapped right after it: what was opened is checked, and refused."""
    path = _transcript(tmp_path)
    real_stat = os.stat

    def stat_then_swap(given, *args, **kwargs):
        found = real_stat(given, *args, **kwargs)
        if Path(given) == path:
            SWAPS[swap](path)
        return found

    monkeypatch.setattr(session_file.os, "stat", stat_then_swap)
    got = _within_time(path, lambda: session_file.open_read(path))
    assert isinstance(got, session_file.NotASessionFile), got


def test_pre_compact_saves_nothing_from_a_fifo_swapped_in_after_its_check(tmp_path, monkeypatch):
    """PreCompact checks the transcript, then a FIFO is renamed onto it before the session is
    read: the savepoint is made of what the reader could read (nothing), and no read waits."""
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    path = _transcript(tmp_path)
    checked = compaction._refuse_non_file

    def check_then_swap(given: str) -> None:
        checked(given)
        _fifo_onto(path)

    monkeypatch.setattr(compaction, "_refuse_non_file", check_then_swap)
    monkeypatch.setattr(compaction, "_start_worker", lambda loaded, payload: True)
    loaded = configuration.load(project.path)
    event = {
        "hook_event_name": "PreCompact",
        "session_id": "s1",
        "transcript_path": str(path),
        "cwd": str(project.path),
    }
    _within_time(path, lambda: compaction.pre_compact(loaded, event, agent_names.CLAUDE))
    [saved] = savepoint_log.savepoints(project.logs)
    document = json.loads(full_document(project.path / saved.created["snapshot_file"]))
    assert document["transcript"]["found"] is False, document["transcript"]
    assert "is not a file (a FIFO, a device or a directory)" in document["transcript"]["problem"]
    assert document["conversation_history"] == []


def test_a_regular_transcript_is_read_through_the_owner(tmp_path):
    """The check refuses nothing that is a session's file: a transcript, and a link to one."""
    path = _transcript(tmp_path)
    link = tmp_path / "linked.jsonl"
    link.symlink_to(path)
    for given in (path, link):
        compaction._refuse_non_file(str(given))
        with session_file.open_read(given) as f:
            assert f.read() == path.read_bytes()
        assert conversation.last_said(given) is not None


@pytest.mark.parametrize(
    ("data", "read"),
    [
        (b"", b""),
        (b"said\n012345678\n", b"said\n012345678\n"),  # ten bytes with its newline: at the cap
        (b"said\n012345678\nstill bei", b"said\n012345678\nstill bei"),  # a last line being written
        (b"ab\n" * 40, b"ab\n" * 40),  # many lines in each read
    ],
)
def test_capped_lines_reads_lines_within_the_cap_whole(tmp_path, data, read):
    path = tmp_path / "rollout.jsonl"
    path.write_bytes(data)
    with session_file.open_read(path) as f:
        assert session_file.capped_lines(f, 10, path) == read


@pytest.mark.parametrize(
    ("data", "start"),
    [
        (b"said\n0123456789A\nmore\n", 5),  # ends in a later read than it starts
        (b"said\n" + b"x" * 4096, 5),  # never ends: not read to its end
        (b"0123456789A\n", 0),
        (b"said\nok\n" + b"y" * 30 + b"\n", 8),
    ],
)
def test_capped_lines_refuses_a_longer_line_in_one_line_once_the_cap_is_read(tmp_path, data, start):
    """LineTooLong names where the line starts, and no more of it than the cap and one read is read."""
    path = tmp_path / "rollout.jsonl"
    path.write_bytes(data)
    with session_file.open_read(path) as f:
        with pytest.raises(session_file.LineTooLong) as refused:
            session_file.capped_lines(f, 10, path)
        assert f.tell() <= start + 10 + 10
    assert isinstance(refused.value, OSError) and refused.value.filename == str(path)
    assert refused.value.strerror == f"its line at byte {start} is longer than 10 bytes, the most read of one line"
