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


def test_a_line_reads_as_the_standard_librarys_json_reads_it():
    """The index is parsed with orjson where it can (every session start reads it), and with
    json where orjson refuses: NaN, an integer beyond 64 bits, a lone surrogate escape, UTF-16."""
    import json

    lines = [
        b'{"event":"X","n":NaN}',
        b'{"event":"X","n":123456789012345678901234567890}',
        b'{"event":"X","s":"\\ud83d"}',
        '{"event":"X","s":"caf\u00e9"}'.encode("utf-16"),
        b'{"event":"X","n":1.5e300,"k":1,"k":2}',
        b"[1]",
        b"{not json}",
    ]
    read = savepoint_log.parse(lines)
    expected = [json.loads(line) for line in lines[:5]]
    assert [repr(e) for e in read.events] == [repr(e) for e in expected]
    assert read.bad_lines == [6, 7]  # not an object, not JSON
