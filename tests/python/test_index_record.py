"""The savepoint index is read through one typed record, and a hostile line reads as absent
fields, never as a crash. (That only local/savepoint_log.py reads a line by key is a rule of
test_architecture.py: reads_the_index_by_key.)"""

from __future__ import annotations

from precompact.local import savepoint_log


def test_a_hostile_line_reads_as_absent_fields():
    hostile = {
        "event": "SAVEPOINT_CREATED",
        "sequence": 1,
        "instance": "x",
        "snapshot_hash": "sha256:" + "0" * 64,
        "snapshot_file": ["not", "a", "name"],
        "unix_timestamp": "yesterday",
        "transcript_end": True,
        "messages": 2.5,
        "session_id": {"id": 1},
        "trigger": 7,
    }
    [savepoint] = savepoint_log.fold([hostile])
    assert savepoint.snapshot_file == ""
    assert savepoint.unix_timestamp == 0
    assert savepoint.transcript_end is None and savepoint.messages is None
    assert savepoint.session_id is None and savepoint.trigger is None
