"""Pathological input through the real hook (`precompact hook` with a PreCompact JSON on stdin):
a transcript line nested 900 deep, a huge line, invalid UTF-8 that is no JSON, a session-state
file far over its cap, a large file in play. The savepoint is made every time; a line that is no
entry is kept as its text, redacted."""

from __future__ import annotations

import hashlib
import json

import pytest

from precompact.local import savepoint_log
from precompact.transcript import claude_code as transcript
from support.commands import hook, precompact
from support.projects import full_document, new_project
from support.secret_corpus import SECRETS, leaked
from support.transcript_gen import payload

SECRET = "ghp_" + "Zq8vT3nLw0" * 4  # a GitHub token's shape
SAID = {"type": "user", "uuid": "u-1", "message": {"role": "user", "content": "fix the parser please"}}


def saved_document(tmp_path, lines: list[bytes], files: dict[str, bytes] | None = None) -> dict:
    """Runs PreCompact over a transcript of `lines` in a fresh project holding `files` (relative
    path -> bytes); returns the snapshot's whole document."""
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    for name, data in (files or {}).items():
        project.path.joinpath(name).write_bytes(data)
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"".join(line + b"\n" for line in [json.dumps(SAID).encode(), *lines]))
    result = hook(payload("PreCompact", project.path, path), cwd=project.path)
    assert result.returncode == 0, result.stderr
    [savepoint] = written(project)
    document = json.loads(full_document(project.path / savepoint.created["snapshot_file"]))
    return document


def written(project) -> list[savepoint_log.Savepoint]:
    """The project's savepoints once what PreCompact queued is written: a transcript longer than
    the hook writes itself (config/hook_timeouts.pre_compact_writes) is the worker's, and `flush`
    writes it (or finds it written)."""
    flushed = precompact(project.path, "flush")
    assert flushed.returncode == 0, flushed.stdout + flushed.stderr
    return savepoint_log.savepoints(project.logs)


def unparsed(document: dict) -> list[dict]:
    return [e[transcript.UNPARSED] for e in document["conversation_history"] if transcript.UNPARSED in e]


def test_a_line_nested_900_deep_is_kept_as_redacted_text_and_the_savepoint_is_made(tmp_path):
    deep = b'{"type":"user","token":"' + SECRET.encode() + b'","x":' + b"[" * 900 + b"]" * 900 + b"}"
    document = saved_document(tmp_path, [deep])
    [kept] = unparsed(document)
    assert kept["problem"] == f"nested deeper than {transcript.MAX_DEPTH}"
    assert SECRET not in kept["text"] and "[REDACTED:" in kept["text"]
    assert kept["text"].endswith("]" * 900 + "}")
    assert document["transcript"]["malformed_lines"] == 1
    assert document["conversation_history"][0]["uuid"] == "u-1"


def test_a_line_nested_beyond_what_json_parsers_take_is_kept_too(tmp_path):
    deep = b"[" * 5000 + b'"password=' + b"hunter22hunter" + b'"' + b"]" * 5000
    document = saved_document(tmp_path, [deep])
    [kept] = unparsed(document)
    assert kept["problem"] == f"nested deeper than {transcript.MAX_DEPTH}"
    assert "hunter22hunter" not in kept["text"]


def test_invalid_utf8_that_is_no_json_is_kept_as_redacted_text(tmp_path):
    line = b"\xff\xfe garbage " + SECRET.encode() + b" \xc3("
    document = saved_document(tmp_path, [line])
    [kept] = unparsed(document)
    assert kept["problem"] == "malformed JSON"
    assert SECRET not in kept["text"] and "garbage [REDACTED:github_token]" in kept["text"]
    assert document["transcript"]["invalid_utf8_lines"] == 1


def test_a_huge_line_is_kept_as_its_redacted_head(tmp_path):
    filler = "x" * 1000 + "\\n"
    body = (SECRET + " " + filler * (transcript.MAX_LINE_BYTES // len(filler) + 10)).encode()
    huge = b'{"type":"user","message":{"content":"' + body + b'"}}'
    document = saved_document(tmp_path, [huge])
    [kept] = unparsed(document)
    assert kept["problem"] == f"longer than {transcript.MAX_LINE_BYTES} bytes"
    assert kept["bytes"] == len(huge) and kept["truncated"] is True
    assert len(kept["text"].encode()) <= transcript.UNPARSED_TEXT_BYTES
    assert SECRET not in kept["text"] and "[REDACTED:github_token]" in kept["text"]


@pytest.mark.parametrize("kept_as_text", ["longer than the cap", "malformed"])
def test_a_line_kept_as_text_has_every_planted_format_redacted(tmp_path, kept_as_text):
    """The 132 formats in a tool's output, each on a line of its own, in a transcript line kept as
    its text: redacted as what the line's strings decode to, where a line break is the letter `n`
    after a backslash and a quote `\\"`."""
    output = "\n".join(f"step {n}: loaded setting\n{p.text}" for n, p in enumerate(SECRETS))
    if kept_as_text == "longer than the cap":
        output += "\n" + ("x" * 120 + "\n") * (transcript.MAX_LINE_BYTES // 121 + 10)
    line = json.dumps(
        {"type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "content": output}]}}
    )
    if kept_as_text == "malformed":
        line = line[:-1] + ",}"
    document = saved_document(tmp_path, [line.encode()])
    [kept] = unparsed(document)
    assert "step 0: loaded setting" in kept["text"] and f"step {len(SECRETS) - 1}:" in kept["text"]
    assert not [p.format for p in SECRETS if leaked(p, kept["text"])]
    assert not [p.format for p in SECRETS if leaked(p, json.dumps(document))]


def test_a_lone_surrogate_escape_beside_a_secret_in_json_text_never_stops_the_savepoint(tmp_path):
    """A tool's output that is JSON text holding a lone surrogate escape (`\\ud800`, which JSON
    allows), a letter beyond ASCII and a secret: the string holding the secret is written again
    with the surrogate still an escape, so the snapshot encodes and is made (review14a F5: it
    was a TypeError from canonical JSON, and every later savepoint of the session failed too)."""
    output = '{"out": "caf\u00e9 \\ud800 PGPASSWORD=\\"Zq8vLw3NxT5rKp2M\\" psql"}'
    entry = {
        "type": "user",
        "uuid": "u-2",
        "parentUuid": "u-1",
        "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": output}]},
    }
    document = saved_document(tmp_path, [json.dumps(entry).encode()])
    [content] = [
        e["message"]["content"][0]["content"] for e in document["conversation_history"] if e.get("uuid") == "u-2"
    ]
    assert content == '{"out": "caf\u00e9 \\ud800 PG[REDACTED:secret_assignment]\\" psql"}'


def test_a_session_state_file_over_its_cap_is_cut_and_said_to_be(tmp_path):
    from precompact.local import snapshot

    head = b'{"priorities": ["ship it"], "password": "correct horse battery staple", "log": "'
    data = head + b"y" * (3 * snapshot.SESSION_STATE_CAP_BYTES) + b'"}'
    document = saved_document(tmp_path, [], {"session_current.json": data})
    state = document["session_state"]
    assert state["truncated"] is True and state["size"] == len(data)
    # The head is kept (then redacted, which made it shorter), not the whole file.
    assert state["content"].count("y") == snapshot.SESSION_STATE_CAP_BYTES - len(head)
    assert state["content"].startswith('{"priorities": ["ship it"], "password": "[REDACTED:secret_field]"')
    assert "correct horse" not in state["content"]


def test_a_session_state_document_has_its_secret_keys_redacted_whatever_their_shape(tmp_path):
    state = {"priorities": ["ship"], "db": {"password": "sunshine", "api_key": 123456789, "pin": 1}}
    document = saved_document(tmp_path, [], {"session_current.json": json.dumps(state).encode()})
    assert document["session_state"]["content"] == {
        "priorities": ["ship"],
        "db": {"password": "[REDACTED:secret_field]", "api_key": "[REDACTED:secret_field]", "pin": 1},
    }
    assert document["session_state"]["truncated"] is False


def test_a_file_in_play_is_hashed_over_what_is_kept_only(tmp_path):
    import hashlib

    project_file = tmp_path / "p" / "big.txt"
    read = [
        {
            "type": "assistant",
            "message": {
                "id": "m1",
                "content": [
                    {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": str(project_file)}}
                ],
            },
        },
        {"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]}},
    ]
    document = saved_document(
        tmp_path, [json.dumps(e).encode() for e in read], {"big.txt": b"a" * (256 << 10) + b"b" * (4 << 20)}
    )
    record = document["loaded_files"][str(project_file)]
    assert record["truncated"] is True and record["size"] == (256 << 10) + (4 << 20)
    assert record["hashed_bytes"] == 256 << 10
    assert record["sha256"] == hashlib.sha256(b"a" * (256 << 10)).hexdigest()


@pytest.mark.parametrize("reader", ["codex", "gemini"])
@pytest.mark.parametrize("depth", [200, 1_000, 100_000])
def test_the_other_agents_readers_keep_a_line_nested_too_deep_as_its_text(tmp_path, reader, depth):
    """Deeper than outside_json.MAX_DEPTH, than orjson's own limit, than Python's recursion: the
    line is kept as it is (stored as an unparsed line), never a RecursionError."""
    from precompact.transcript import codex, gemini

    deep = b'{"type":"x","payload":' + b"[" * depth + b"]" * depth + b"}"
    path = tmp_path / "session.jsonl"
    path.write_bytes(deep + b"\n")
    document = codex.read(path) if reader == "codex" else gemini.read(path)
    assert document.lines == [deep + b"\n"]


def sparse_long_line(path, before: list[bytes], head: bytes, size: int, after: list[bytes]) -> int:
    """Writes `before`, a line of `size` bytes starting with `head` (zeros after it: sparse, next
    to nothing on disk), then `after`; returns where the long line starts."""
    with path.open("wb") as f:
        f.writelines(line + b"\n" for line in before)
        start = f.tell()
        f.write(head)
        f.truncate(start + size)
        f.seek(0, 2)
        f.write(b"\n")
        f.writelines(line + b"\n" for line in after)
    return start


def test_a_line_over_the_cap_is_read_in_blocks_never_whole_and_kept_as_its_head(tmp_path):
    """A line of four times MAX_LINE_BYTES is never in memory whole (was: read whole by
    readline, then dropped): it comes as a LongLine, its entry the same unparsed head as a line
    just over the cap, and the lines after it are read."""
    import tracemalloc

    size = 4 * transcript.MAX_LINE_BYTES
    path = tmp_path / "session.jsonl"
    later = {**SAID, "uuid": "u-2"}
    head = b'{"type":"user","message":{"content":"' + SECRET.encode()
    start = sparse_long_line(path, [json.dumps(SAID).encode()], head, size, [json.dumps(later).encode()])

    scan = transcript.TranscriptScan(path=str(path))
    read, hashed = [], hashlib.sha256()
    tracemalloc.start()
    try:
        for block in transcript.blocks(path, scan):
            read.append(block)
            for raw in block.raw() if isinstance(block, transcript.LongLine) else [block]:
                hashed.update(raw)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2 * transcript.MAX_LINE_BYTES, f"{peak} bytes held to read past it"
    [first, long, last] = read
    assert isinstance(long, transcript.LongLine) and (long.start, long.size) == (start, size + 1)
    assert hashed.digest() == hashlib.sha256(path.read_bytes()).digest(), "its bytes, read again, are the file's"
    kept = long.entry(scan)[transcript.UNPARSED]
    assert kept["problem"] == f"longer than {transcript.MAX_LINE_BYTES} bytes"
    assert kept["bytes"] == size and kept["truncated"] is True and kept["text"].startswith(head.decode())
    assert len(kept["text"].encode()) <= transcript.UNPARSED_TEXT_BYTES
    assert scan.malformed_lines == 1 and not scan.partial_last_line
    assert [entry["uuid"] for block in (first, last) for _, entry in transcript.entries(block.split(b"\n"), scan)] == [
        "u-1",
        "u-2",
    ]


def test_a_line_over_the_cap_still_being_written_is_a_partial_last_line(tmp_path):
    path = tmp_path / "session.jsonl"
    said = json.dumps(SAID).encode() + b"\n"
    path.write_bytes(said + b'{"type":"user","message":{"content":"' + b"x" * (transcript.MAX_LINE_BYTES + 10))
    scan = transcript.TranscriptScan(path=str(path))
    assert list(transcript.blocks(path, scan)) == [said]
    assert scan.partial_last_line is True and scan.malformed_lines == 0


def test_a_line_over_the_cap_through_the_hook_is_redacted_and_the_lines_after_it_saved(tmp_path):
    """The savepoint stores a line four times the cap as its redacted head, counts it, and keeps
    the entry after it."""
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    path = tmp_path / "session.jsonl"
    head = b'{"type":"user","message":{"content":"' + SECRET.encode()
    later = {**SAID, "uuid": "u-2"}
    sparse_long_line(
        path, [json.dumps(SAID).encode()], head, 4 * transcript.MAX_LINE_BYTES, [json.dumps(later).encode()]
    )
    result = hook(payload("PreCompact", project.path, path), cwd=project.path)
    assert result.returncode == 0, result.stderr
    [savepoint] = written(project)
    document = json.loads(full_document(project.path / savepoint.created["snapshot_file"]))
    [kept] = unparsed(document)
    assert kept["bytes"] == 4 * transcript.MAX_LINE_BYTES and kept["truncated"] is True
    assert SECRET not in kept["text"] and "[REDACTED:github_token]" in kept["text"]
    assert document["transcript"]["malformed_lines"] == 1
    assert [e.get("uuid") for e in document["conversation_history"]] == ["u-1", None, "u-2"]
