"""Layer 1: canonical snapshots from real transcript files, the index, redaction and edge cases."""

from __future__ import annotations

import hashlib
import json
import stat
import subprocess
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from precompact.local import chunks, savepoint_log, snapshot
from precompact.local.canonical import canonical
from precompact.local.snapshot import Session, Settings
from precompact.transcript import claude_code
from support.projects import full_document

NOW = datetime(2025, 11, 25, 16, 15, 0, tzinfo=UTC)


def line(entry: dict) -> str:
    return json.dumps(entry) + "\n"


def assistant(
    message_id: str, text: str, usage: dict | None = None, tool: tuple[str, dict] | None = None, sidechain: bool = False
) -> dict:
    content = [{"type": "text", "text": text}]
    if tool:
        content.append({"type": "tool_use", "id": f"tu_{message_id}", "name": tool[0], "input": tool[1]})
    message = {"id": message_id, "role": "assistant", "content": content}
    if usage:
        message["usage"] = usage
    return {"type": "assistant", "isSidechain": sidechain, "requestId": f"req_{message_id}", "message": message}


def user(text: str) -> dict:
    return {"type": "user", "uuid": text[:8], "message": {"role": "user", "content": text}}


def result(message_id: str, is_error: bool = False) -> dict:
    """The tool_result that answers `assistant(message_id, ..., tool=...)`."""
    block = {"type": "tool_result", "tool_use_id": f"tu_{message_id}", "content": "ok", "is_error": is_error}
    return {"type": "user", "uuid": f"r_{message_id}", "message": {"role": "user", "content": [block]}}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("print('hello')\n")
    (tmp_path / ".env").write_text("DATABASE_PASSWORD=hunter22hunter\n")
    (tmp_path / "session_current.json").write_text(json.dumps({"current_priorities": ["ship layer 1"]}))
    return tmp_path


def write_transcript(project: Path, entries: list[dict], tail: bytes = b"") -> Path:
    path = project / "transcript.jsonl"
    path.write_bytes("".join(line(e) for e in entries).encode() + tail)
    return path


def settings(project: Path, **overrides) -> Settings:
    base = {
        "instance": "Gabriel #215",
        "logs": project / "logs",
        "session_state": project / "session_current.json",
        "exclude": ("*.env", ".env", "**/.env"),
    }
    base.update(overrides)
    return Settings(**base)


def session(project: Path, transcript: Path | None) -> Session:
    return Session(
        session_id="s-1", transcript_path=str(transcript) if transcript else None, cwd=str(project), trigger="auto"
    )


def realistic(project: Path) -> Path:
    usage_early = {
        "input_tokens": 10,
        "cache_creation_input_tokens": 100,
        "cache_read_input_tokens": 1000,
        "output_tokens": 5,
    }
    usage_last = {
        "input_tokens": 20,
        "cache_creation_input_tokens": 3000,
        "cache_read_input_tokens": 150000,
        "output_tokens": 50,
    }
    return write_transcript(
        project,
        [
            user("Please fix the app"),
            assistant(
                "msg_1", "Reading it", usage_early, tool=("Read", {"file_path": str(project / "src" / "app.py")})
            ),
            result("msg_1"),
            assistant("msg_1", "second block of the same message", usage_early),
            {"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted"},
            assistant(
                "msg_2",
                "Edited",
                usage_last,
                tool=("Edit", {"file_path": "src/app.py", "old_string": "a", "new_string": "b"}),
            ),
            result("msg_2"),
            assistant("msg_side", "sidechain", {"input_tokens": 1}, sidechain=True),
            {"type": "summary", "summary": "fixing the app"},
        ],
    )


def test_canonical_bytes_sort_keys_compact_utf8():
    assert (
        canonical({"b": 1, "a": "é", "c": [1, {"z": 0, "y": None}]})
        == '{"a":"é","b":1,"c":[1,{"y":null,"z":0}]}'.encode()
    )


def test_instance_number():
    assert snapshot.instance_number("Gabriel #215") == 215
    assert snapshot.instance_number("no number") is None


def test_snapshot_is_canonical_hashed_private_and_indexed(project):
    written = snapshot.create_savepoint(settings(project), session(project, realistic(project)), NOW)
    data = written.path.read_bytes()
    assert hashlib.sha256(data).hexdigest() == written.sha256
    assert written.size == len(data)
    assert canonical(json.loads(data)) == data, "bytes on disk are the canonical form"
    assert json.loads(data)["format_version"] == 2 and json.loads(data)["conversation_chunks"]
    whole = full_document(written.path)
    doc = json.loads(whole)
    assert canonical(doc) == whole, "the document rebuilt from the chunks is canonical too"
    assert stat.S_IMODE(written.path.stat().st_mode) == 0o600
    assert written.path.name == "snapshot_2025-11-25T16-15-00Z_000001.json"

    assert doc["type"] == "PRECOMPACT_SAVEPOINT"
    assert doc["instance_id"] == "Gabriel #215" and doc["instance_number"] == 215
    assert doc["instance_id_sha256"] == hashlib.sha256(b"Gabriel #215").hexdigest()
    assert len(doc["conversation_history"]) == 9, "every transcript entry"
    # The user's and the model's turns: a message's blocks count once; a tool result and a
    # sidechain are no message (conversation.is_message).
    assert doc["transcript"]["messages"] == 3
    assert doc["tokens"] == {
        "model": None,
        "used": 153020,
        "window": 200000,
        "remaining": 46980,
        "utilization_percent": 76.51,
    }
    assert doc["session"]["trigger"] == "auto"
    assert doc["session_state"]["content"] == {"current_priorities": ["ship layer 1"]}
    app = doc["loaded_files"][str(project / "src" / "app.py")]
    assert app["content"] == "print('hello')\n"
    assert app["sha256"] == hashlib.sha256(b"print('hello')\n").hexdigest()
    assert doc["loaded_files"]["src/app.py"]["source"] == "Edit"
    assert len(bytes.fromhex(doc["nonce"])) == 16
    assert doc["previous"] is None

    index = savepoint_log.read(project / "logs")
    assert index.bad_lines == []
    [event] = index.events
    assert event["event"] == "SAVEPOINT_CREATED"
    assert event["snapshot_hash"] == f"sha256:{written.sha256}"
    assert event["snapshot_file"] == "logs/precompact-saves/snapshot_2025-11-25T16-15-00Z_000001.json"
    assert event["layer_1_status"] == "SAVED_LOCALLY"
    assert event["tokens_used_this_session"] == 153020
    assert stat.S_IMODE((project / "logs" / "precompact-savepoint.jsonl").stat().st_mode) == 0o600


def test_savepoints_chain_by_sequence_and_hash(project):
    transcript = realistic(project)
    first = snapshot.create_savepoint(settings(project), session(project, transcript), NOW)
    second = snapshot.create_savepoint(settings(project), session(project, transcript), NOW)
    assert second.sequence == 2
    assert second.prev_sha256 == first.sha256
    assert first.sha256 != second.sha256, "the nonce makes every snapshot distinct"
    doc = json.loads(full_document(second.path))
    assert doc["previous"] == {"sequence": 1, "snapshot_hash": first.sha256}
    assert [s.sequence for s in savepoint_log.fold(savepoint_log.read(project / "logs").events)] == [1, 2]


def test_two_instances_saving_the_same_sequence_in_one_second_keep_both_files(project):
    transcript = realistic(project)
    first = snapshot.create_savepoint(settings(project), session(project, transcript), NOW)
    other = snapshot.create_savepoint(settings(project, instance="Gabriel #216"), session(project, transcript), NOW)
    assert (first.sequence, other.sequence) == (1, 1)
    assert first.path != other.path and other.event["unix_timestamp"] == first.event["unix_timestamp"] + 1
    assert hashlib.sha256(first.path.read_bytes()).hexdigest() == first.sha256
    assert hashlib.sha256(other.path.read_bytes()).hexdigest() == other.sha256
    # A file already there under the name (a copy from elsewhere) is not overwritten either.
    stray = savepoint_1_file_later(other.path, 2)
    stray.write_bytes(b"not ours")
    third = snapshot.create_savepoint(settings(project, instance="Gabriel #217"), session(project, transcript), NOW)
    assert third.path not in (first.path, other.path, stray) and stray.read_bytes() == b"not ours"


def savepoint_1_file_later(beside: Path, seconds: int) -> Path:
    """Where savepoint 1 of a snapshot `seconds` after NOW is written."""
    stamp = datetime.fromtimestamp(NOW.timestamp() + seconds, UTC).strftime("%Y-%m-%dT%H-%M-%SZ")
    return beside.parent / f"snapshot_{stamp}_000001.json"


def test_transcript_edge_cases_are_counted_not_fatal(project):
    transcript = write_transcript(
        project,
        [user("hello")],
        tail=b"{not json}\n"
        + b'{"type":"user","message":{"content":"caf\xe9"}}\n'
        + b'{"type":"assistant","message":{"id":"m9"',
    )
    written = snapshot.create_savepoint(settings(project), session(project, transcript), NOW)
    doc = json.loads(full_document(written.path))
    summary = doc["transcript"]
    assert summary["malformed_lines"] == 1
    assert summary["invalid_utf8_lines"] == 1
    assert summary["partial_last_line"] is True
    assert summary["entries"] == 2
    assert doc["conversation_history"][1] == {
        "precompact_unparsed_line": {"problem": "malformed JSON", "bytes": 10, "truncated": False, "text": "{not json}"}
    }
    assert doc["conversation_history"][2]["message"]["content"] == "caf\ufffd"


def test_a_line_still_being_written_is_waited_for_but_a_stale_one_is_not(project):
    transcript = write_transcript(project, [user("hello")], tail=b'{"type":"user","message":{"content":"late"}}')
    began = time.monotonic()
    claude_code.settle(transcript)
    assert time.monotonic() - began < 0.5  # nobody is writing: no point waiting the full second

    def finish_writing():
        for piece in (b" ", b" ", b"\n"):
            time.sleep(0.06)
            with transcript.open("ab") as f:
                f.write(piece)

    writer = threading.Thread(target=finish_writing)
    writer.start()
    written = snapshot.create_savepoint(settings(project), session(project, transcript), NOW)
    writer.join()
    doc = json.loads(full_document(written.path))
    assert doc["transcript"]["partial_last_line"] is False
    assert doc["conversation_history"][-1]["message"]["content"] == "late"


@pytest.mark.parametrize(
    "transcript, problem", [(None, "no transcript path given"), ("missing.jsonl", "transcript file not found")]
)
def test_missing_transcript_still_makes_a_snapshot(project, transcript, problem):
    path = project / transcript if transcript else None
    written = snapshot.create_savepoint(settings(project), session(project, path), NOW)
    doc = json.loads(full_document(written.path))
    assert doc["conversation_history"] == []
    assert doc["transcript"]["found"] is False
    assert doc["transcript"]["problem"] == problem
    assert doc["tokens"]["used"] == 0


def test_excluded_paths_and_missing_session_state(project):
    transcript = write_transcript(project, [assistant("m1", "x", tool=("Read", {"file_path": ".env"})), result("m1")])
    written = snapshot.create_savepoint(
        settings(project, session_state=project / "nope.json"), session(project, transcript), NOW
    )
    doc = json.loads(full_document(written.path))
    assert doc["loaded_files"][".env"] == {"source": "Read", "excluded": True}
    assert doc["session_state"] == {"path": str(project / "nope.json"), "problem": "file not found"}
    assert b"hunter22" not in full_document(written.path)


def test_git_state_outside_and_inside_a_repository(project):
    outside = snapshot.git_state(project)
    assert outside["repository"] is False
    run = lambda *a: subprocess.run(["git", *a], cwd=project, check=True, capture_output=True)
    run("init", "-q", "-b", "main")
    run("-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "--allow-empty", "-m", "x")
    run("remote", "add", "origin", "https://user:s3cretpass@example.invalid/repo.git")
    inside = snapshot.git_state(project)
    assert inside["repository"] is True and inside["branch"] == "main" and not inside["detached"]
    assert len(inside["current_commit"]) == 40
    assert inside["dirty"] and inside["untracked"] == 3, (
        "untracked files (src/, .env, session_current.json) make the tree dirty"
    )
    run("add", "-A")
    run("-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "-m", "all")
    assert snapshot.git_state(project)["dirty"] is False
    written = snapshot.create_savepoint(settings(project), session(project, None), NOW)
    remotes = json.loads(full_document(written.path))["git_state"]["remotes"]
    assert "s3cretpass" not in remotes["origin"], "credentials in remote URLs are redacted"


@pytest.mark.parametrize(
    ("model", "window"),
    [
        ("claude-opus-5-5", 1_000_000),
        ("claude-sonnet-4-5-20250929", 200_000),
        ("claude-sonnet-4-5[1m]", 1_000_000),
        ("some-other-model", 123_456),
    ],
)
def test_the_context_window_comes_from_the_model_that_ran_the_session(project, model, window):
    entry = assistant("msg_1", "hi", {"input_tokens": 100_000, "output_tokens": 1})
    entry["message"]["model"] = model
    written = snapshot.create_savepoint(
        settings(project, context_window=123_456),
        session(project, write_transcript(project, [user("hello"), entry])),
        NOW,
    )
    tokens = json.loads(full_document(written.path))["tokens"]
    assert tokens["model"] == model and tokens["window"] == window and tokens["remaining"] == window - 100_000


def test_the_index_entry_names_the_last_thing_said(project):
    said = [user("first request"), {**assistant("msg_1", "answer"), "uuid": "u-answer"}]
    meta = [
        {"type": "user", "uuid": "u-cmd", "message": {"content": "<command-name>/compact</command-name>"}},
        {"type": "system", "uuid": "u-sys", "subtype": "compact_boundary"},
    ]
    written = snapshot.create_savepoint(
        settings(project), session(project, write_transcript(project, said + meta)), NOW
    )
    assert written.event["last_said"] == "u-answer"


def test_index_survives_a_torn_last_line(project):
    logs = project / "logs"
    snapshot.create_savepoint(settings(project), session(project, None), NOW)
    with (logs / "precompact-savepoint.jsonl").open("ab") as f:
        f.write(b'{"event":"LAYER_2_COMM')
    second = snapshot.create_savepoint(settings(project), session(project, None), NOW)
    index = savepoint_log.read(logs)
    assert index.bad_lines == [2]
    assert [e["sequence"] for e in index.events] == [1, 2]
    assert second.sequence == 2


def test_timestamps_never_go_backwards_even_if_the_clock_does(project):
    later = snapshot.create_savepoint(settings(project), session(project, None), NOW)
    earlier_clock = snapshot.create_savepoint(settings(project), session(project, None), NOW.replace(year=2024))
    assert earlier_clock.event["unix_timestamp"] == later.event["unix_timestamp"]  # the chain would refuse less
    assert json.loads(full_document(earlier_clock.path))["timestamp_iso8601"] == "2025-11-25T16:15:00Z"


def test_temporary_files_of_dead_writers_are_removed(project):
    saves = project / "logs" / snapshot.SAVES_DIR
    saves.mkdir(parents=True)
    stale = saves / ".snapshot_2025-11-25T16-15-00Z_000001.json.4242.tmp"
    stale.write_bytes(b'{"conversation_history":[')
    # A copy being restored from git by `resurrect`, which does not hold the index lock.
    restoring = saves / ".precompact-snapshot_2025-11-25T16-15-00Z_000001.json.4343.tmp"
    restoring.write_bytes(b"{")
    written = snapshot.create_savepoint(settings(project), session(project, None), NOW)
    assert not stale.exists() and written.path.exists()
    assert restoring.exists()


def test_fold_applies_layer_events_in_order():
    a = {"instance": "A #1"}
    events = [
        {**a, "event": "SAVEPOINT_CREATED", "sequence": 1, "snapshot_hash": "sha256:aa"},
        {**a, "event": "LAYER_2_COMMITTED", "sequence": 1, "commit": "c1"},
        {**a, "event": "LAYER_2_FAILED", "sequence": 1, "reason": "remote unreachable"},
        {**a, "event": "LAYER_2_PUSHED", "sequence": 1},
        {**a, "event": "SAVEPOINT_CREATED", "sequence": 2, "snapshot_hash": "sha256:bb"},
        {**a, "event": "LAYER_3_CONFIRMED", "sequence": 2, "signature": "sig", "slot": 9},
        {**a, "event": "LAYER_3_CONFIRMED", "sequence": 7},
        {**a, "event": "COMPACT_SUMMARY", "sequence": 2, "summary": "we did things"},
        {"event": "LAYER_3_CONFIRMED", "sequence": 1, "signature": "no instance: ignored"},
    ]
    first, second = savepoint_log.fold(events)
    assert (first.layer_2, first.commit) == ("PUSHED", "c1")
    assert first.failures == [savepoint_log.Failure(layer="layer_2", reason="remote unreachable")]
    assert first.snapshot_hash == "aa" and first.layer_3 == "QUEUED_FOR_BLOCKCHAIN"
    assert (second.layer_3, second.chain_signature, second.chain_slot) == ("CONFIRMED", "sig", 9)
    assert second.compact_summary == "we did things"
    assert second.layer_2 == "PENDING"


def test_each_instance_has_its_own_chain_and_inherits_lineage(project):
    logs = project / "logs"
    base = settings(project)
    first = snapshot.create_savepoint(base, session(project, None))
    savepoint_log.record(
        logs,
        {
            "event": savepoint_log.Event.RESURRECTED,
            "instance": "Gabriel #216",
            "from_instance": "Gabriel #215",
            "from_sequence": 1,
            "lineage": ["Gabriel #215", "Gabriel #216"],
        },
    )
    successor = snapshot.create_savepoint(settings(project, instance="Gabriel #216"), session(project, None))
    again = snapshot.create_savepoint(base, session(project, None))
    assert (successor.sequence, successor.prev_sha256) == (1, None)
    assert (again.sequence, again.prev_sha256) == (2, first.sha256)
    assert json.loads(full_document(successor.path))["lineage"] == ["Gabriel #215", "Gabriel #216"]
    assert json.loads(full_document(again.path))["lineage"] == ["Gabriel #215"]
    marked = savepoint_log.latest(logs, "Gabriel #216")
    savepoint_log.mark(logs, marked, savepoint_log.Event.LAYER_2_COMMITTED, commit="c216")
    assert savepoint_log.latest(logs, "Gabriel #216").commit == "c216"
    assert [s.commit for s in savepoint_log.savepoints(logs, "Gabriel #215")] == [None, None]


def test_lock_timeout_is_reported(project):
    logs = project / "logs"
    # flock locks belong to the open file description: a second open contends.
    with (
        savepoint_log.locked(logs, 1),
        pytest.raises(savepoint_log.LockTimeout, match="still held"),
        savepoint_log.locked(logs, 0.05),
    ):
        pass


def test_the_typed_document_reads_a_field_of_another_type_as_absent():
    """A snapshot's fields come from outside (a repository, git, a transcript): the typed view
    the code outside Layer 1 reads gives each field its type or nothing, never what a hostile
    document put there instead (a bool is no sequence, a string no list of files)."""
    hostile = snapshot.Document.of(
        {
            "sequence": True,
            "instance_id": 7,
            "previous": "sha256:00",
            "lineage": "Mallory",
            "session": {"cwd": ["/"], "agent": None},
            "transcript": {"messages": "many"},
            "loaded_files": {"a.py": "?", "b.py": {"size": "1", "excluded": "yes", "problem": 3}},
            "session_state": {"problem": {"not": "text"}},
        }
    )
    assert hostile == snapshot.Document(
        None,
        None,
        None,
        [],
        None,
        None,
        0,
        {
            "a.py": snapshot.LoadedFile(None, None, False, False, None),
            "b.py": snapshot.LoadedFile(None, None, False, False, None),
        },
        snapshot.SessionState(False, None, None),
    )
    kept = snapshot.Document.of(
        {
            "sequence": 3,
            "previous": {"sequence": 2, "snapshot_hash": "ab" * 32},
            "lineage": ["Gabriel #214"],
            "session": {"cwd": "/work", "agent": "codex"},
            "transcript": {"messages": 12},
            "loaded_files": {"a.py": {"source": "read", "size": 10}, "x": {"source": "edit", "outside_project": True}},
            "session_state": {"content": None},
        }
    )
    assert (kept.sequence, kept.previous_hash, kept.lineage, kept.cwd, kept.agent, kept.messages) == (
        3,
        "ab" * 32,
        ["Gabriel #214"],
        "/work",
        "codex",
        12,
    )
    assert kept.loaded_files["a.py"] == snapshot.LoadedFile("read", 10, False, False, None)
    assert kept.loaded_files["x"].outside_project
    assert kept.session_state == snapshot.SessionState(True, None, None), "a JSON null is content kept"


def test_a_reader_of_the_checked_chunks_reads_what_a_reader_of_the_joined_document_reads(project, tmp_path):
    """A session start's brief reads a chunked snapshot's checked chunks as they are
    (chunks.Rebuilt), never joining its history whole: the same fields, the same entries newest
    first, and the same bytes once they are asked for."""
    from support.transcript_gen import generate

    transcript = generate(tmp_path / "t.jsonl", 3_000_000, project=project).path
    written = snapshot.create_savepoint(settings(project), session(project, transcript), NOW)
    data, fetch = written.path.read_bytes(), chunks.local_fetch(project / "logs")
    parts = chunks.rebuilt(data, fetch)
    assert isinstance(parts, chunks.Rebuilt) and len(parts.history) >= 3, "entries read across chunks"
    joined = snapshot.SnapshotReader(chunks.document(data, fetch))
    in_place = snapshot.SnapshotReader(parts)
    assert in_place.fields == joined.fields and in_place.history_end == joined.history_end
    newest = list(joined.newest_entries())
    assert newest == list(reversed(json.loads(joined.data)["conversation_history"]))
    assert list(in_place.newest_entries()) == newest
    assert in_place.data == joined.data == parts.joined()


@pytest.mark.parametrize(
    "fields",
    [
        {"format_version": 2, "session": {"format_version": 1, "z": [1]}},  # the marker inside a field
        {"agent": "claude", "format_version": 2},  # a field sorted before the marker
    ],
)
def test_a_reader_of_checked_chunks_whose_fields_a_joined_reader_finds_elsewhere_reads_the_joined_bytes(fields):
    """Where a reader of the joined document would not find the fields where the history ends,
    the chunks are joined and read as that reader reads them."""
    parts = chunks.Rebuilt([b'{"a":1},{"b":[2,{"c":3}]},', b'{"d":4},'], fields)
    joined = snapshot.SnapshotReader(parts.joined())
    in_place = snapshot.SnapshotReader(parts)
    assert in_place.fields == joined.fields
    assert list(in_place.newest_entries()) == list(joined.newest_entries())


def test_checked_chunks_decode_as_orjson_decodes_them_without_importing_it():
    """What orjson refuses is refused (the rebuilt snapshot is then unusable, as before); an
    integer beyond 64 bits is read exactly (a file's content keeps it: docs/snapshot-format.md),
    or as orjson reads it, a double, for a history's entries (read so, the newest entries and the
    located ones, read with orjson, agree: the fuzzer's snapshot_reader target found them apart on
    a 130-digit count)."""
    import orjson

    assert chunks.strict_loads(b"[123456789012345678901234567890]") == [123456789012345678901234567890]
    with pytest.raises(ValueError):
        chunks.strict_loads(b"[" + b"6" * 400 + b"]", integers_as_orjson=True)  # infinite as a double
    for number in (b"9223372036854775807", b"18446744073709551615", b"18446744073709551616", b"-9223372036854775808",
                   b"-9223372036854775809", b"123456789012345678901234567890", b"6" * 300, b"0", b"-0"):  # fmt: skip
        read = chunks.strict_loads(b"[" + number + b"]", integers_as_orjson=True)
        assert read == orjson.loads(b"[" + number + b"]") and type(read[0]) is type(orjson.loads(number)), number
    assert chunks.strict_loads(b'{"f":1e-7}') == {"f": 1e-7}
    for refused in (
        b"[NaN]",
        b"[-Infinity]",
        b"[1e400]",
        b'["\\ud800"]',
        b'["\xed\xa0\x80"]',
        b"[" * 5000,
    ):
        with pytest.raises(ValueError):
            chunks.strict_loads(refused)
    assert chunks.strict_loads(b'["\\\\ud800", "\\ud83d\\ude00"]') == ["\\ud800", "😀"], "an escaped backslash, a pair"
