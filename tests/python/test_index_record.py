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


def _created(snapshot_hash: str, **more) -> dict:
    return {
        "event": "SAVEPOINT_CREATED",
        "instance": "x",
        "sequence": 1,
        "snapshot_hash": f"sha256:{snapshot_hash}",
        **more,
    }


def test_a_second_savepoint_created_line_with_other_content_is_refused_and_nothing_after_it_applied():
    """review9b F1: a savepoint of logs/ and another machine's with the same sequence: the later
    line's commit, push and signature are not the first's (that commit does not hold it)."""
    mine, theirs = "a" * 64, "b" * 64
    about = {"instance": "x", "sequence": 1}
    events = [
        _created(mine, session_id="here"),
        {"event": "LAYER_2_FAILED", **about, "reason": "branch holds 3 savepoint(s) that logs/ lacks"},
        _created(theirs),
        {"event": "SAVEPOINT_SIGNED", **about, "signer": "k", "line_signature": "00"},
        {"event": "LAYER_2_COMMITTED", **about, "commit": "c" * 40},
        {"event": "LAYER_2_PUSHED", **about, "commit": "c" * 40},
        {"event": "LAYER_3_CONFIRMED", **about, "signature": "s"},
    ]
    [savepoint] = savepoint_log.fold(events)
    assert savepoint.snapshot_hash == mine and savepoint.session_id == "here"
    assert savepoint.recreated == [theirs]
    assert savepoint.layer_2 == savepoint_log.Layer2.FAILED and savepoint.commit is None
    assert savepoint.layer_3 == savepoint_log.Layer3.QUEUED and savepoint.signatures == []
    notice = savepoint_log.recreated_notice(savepoint)
    assert f"x #1 (sha256:{mine[:16]})" in notice and f"sha256:{theirs[:16]}" in notice
    assert savepoint_log.TWO_CHAINS_FIX in notice


def test_the_same_savepoint_created_line_twice_is_one_savepoint_and_its_lines_still_apply():
    line = _created("a" * 64)
    pushed = {"event": "LAYER_2_COMMITTED", "instance": "x", "sequence": 1, "commit": "c" * 40}
    [savepoint] = savepoint_log.fold([line, dict(line), pushed])
    assert savepoint.recreated == [] and savepoint.commit == "c" * 40
