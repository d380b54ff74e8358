"""The index's append writes a whole line or none (review9b F2): a write may write only part of
what it is given (a full disk, a file-size limit) and say so by its count alone."""

from __future__ import annotations

import errno
import os

import pytest

from precompact.local import savepoint_log

EVENT = {"event": "SAVEPOINT_CREATED", "instance": "x", "sequence": 2, "snapshot_hash": "sha256:" + "a" * 64}


@pytest.fixture
def logs(tmp_path):
    made = tmp_path / "logs"
    made.mkdir()
    with savepoint_log.locked(made, 1.0):
        savepoint_log.append(made, {"event": "SAVEPOINT_CREATED", "instance": "x", "sequence": 1})
    return made


def _index(logs) -> bytes:
    return (logs / savepoint_log.INDEX_NAME).read_bytes()


def test_a_write_that_comes_short_is_written_on_until_the_line_is_whole(logs, monkeypatch):
    real = os.write
    calls = []

    def a_few_bytes_at_a_time(fd, data):
        calls.append(len(data))
        return real(fd, bytes(data[:7]))

    monkeypatch.setattr(os, "write", a_few_bytes_at_a_time)
    with savepoint_log.locked(logs, 1.0):
        savepoint_log.append(logs, EVENT)
    monkeypatch.undo()
    read = savepoint_log.read(logs)
    assert read.bad_lines == [] and [s.sequence for s in read.savepoints] == [1, 2]
    assert len(calls) > 1


@pytest.mark.parametrize("then", ["no room", "nothing more written"])
def test_a_line_the_disk_has_no_room_for_is_not_left_torn_and_the_append_fails(logs, monkeypatch, then):
    """Part of the line written, then the disk full (the next write's ENOSPC, or a count of 0):
    the index is cut back to what it was and the error raised, so no one says "saved"."""
    before = _index(logs)
    real = os.write
    written = []

    def half_then_full(fd, data):
        if written:
            if then == "no room":
                raise OSError(errno.ENOSPC, "No space left on device")
            return 0
        written.append(real(fd, bytes(data[: len(data) // 2])))
        return written[0]

    monkeypatch.setattr(os, "write", half_then_full)
    with pytest.raises(OSError) as raised, savepoint_log.locked(logs, 1.0):
        savepoint_log.append(logs, EVENT)
    monkeypatch.undo()
    assert raised.value.errno == errno.ENOSPC
    assert written and _index(logs) == before
    assert savepoint_log.read(logs).bad_lines == []
