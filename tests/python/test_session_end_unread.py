"""Codex's and Gemini's SessionEnd queue their session file unread (fix15c, #42): the hook records
the file, how far it went and its last 64 KiB's hash, and the worker reads it into the document
up to there and writes the savepoint. Before, the hook read the whole session into the document
first, which under load outlasted Codex's 3 s: cut there, nothing was saved or queued. What the
session appends after the hook is not in that savepoint; a session file that no longer holds what
the hook saw is said and never saved as something else. The hooks run as the agents run them;
the writer's refusals are checked in-process, as test_queue_entry.py checks Claude Code's."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from precompact.local import capture, provenance, savepoint_log, snapshot
from precompact.transcript import claude_code
from support.claude_code import wait_for_worker
from support.commands import precompact
from support.projects import new_project
from test_forgotten_agents import AGENTS, WORD, codex_session, compact, created, documents, go_on
from test_hook_lock_wait import index_lock, queue_entries
from test_queue_entry import restamp, settings_of


def stored(project, name: str) -> dict:
    data = provenance.made_here(snapshot.QUEUE_PURPOSE, (project.logs / snapshot.QUEUE_DIR / name).read_bytes())
    assert data is not None
    return orjson.loads(data)


@pytest.mark.parametrize("agent", ["codex", "gemini"])
def test_session_end_queues_the_session_file_unread_and_the_worker_saves_it_as_far_as_the_hook_saw(tmp_path, agent):
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    make, session_id = AGENTS[agent]
    session_file = make(tmp_path, project.path)
    holder = index_lock(project)  # the hook cannot write it itself: what it queued is all there is
    try:
        compact(project, agent, session_file, session_id, "SessionEnd")
        [name] = queue_entries(project)
        entry, found = stored(project, name), session_file.stat()
        assert entry["version"] == 3 and entry["session"]["transcript_path"] is None
        assert entry["session"]["agent_transcript"] == str(session_file)
        unread = entry["unread_session_file"]
        assert (unread["device"], unread["inode"], unread["end"]) == (found.st_dev, found.st_ino, found.st_size)
        assert not documents(), "the hook read nothing into a document"
        go_on(agent, session_file, session_id, "Count the okapi herd.", 8)  # said after the hook (a resume)
    finally:
        holder.stop()
    wait_for_worker(project)

    assert not queue_entries(project)
    [saved] = created(project)
    assert (saved["trigger"], saved["agent"], saved["session_id"]) == ("session_end", agent, session_id)
    assert saved["agent_version"] == ("0.171.0" if agent == "codex" else None), "the worker's reading names it"
    assert f"Feed the {WORD}" in precompact(project.path, "recall", WORD).stdout
    assert "okapi" not in precompact(project.path, "recall", "okapi").stdout, "said after the hook: not this one's"
    assert precompact(project.path, "flush").returncode == 0


def unread_session(project, rollout: Path) -> snapshot.Session:
    return snapshot.Session(
        session_id="s-unread",
        transcript_path=None,
        cwd=str(project.path),
        trigger=capture.SESSION_END_TRIGGER,
        agent="codex",
        agent_transcript=str(rollout),
    )


def _cut(rollout: Path) -> str:
    rollout.write_bytes(rollout.read_bytes()[:100])
    return "was cut since the hook (100 of"


def _gone(rollout: Path) -> str:
    rollout.unlink()
    return "is gone"


@pytest.mark.parametrize("change", [_cut, _gone])
def test_a_session_file_cut_or_gone_before_the_writer_is_never_saved_and_can_be_given_up(tmp_path, change):
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    rollout = codex_session(tmp_path, project.path)
    settings = settings_of(project)
    name = snapshot.queue_unread(settings, unread_session(project, rollout))
    said = change(rollout)

    taken = snapshot.write_entry(settings, name, 1.0, capture.holder)
    assert taken.written is None and taken.left is not None and said in taken.left, taken
    assert f"`precompact flush --drop-queued {name}` gives it up" in taken.left
    assert queue_entries(project) == [name] and savepoint_log.savepoints(project.logs) == []
    assert snapshot.drop_queued(settings, name) == [name]


def test_a_session_file_with_a_line_no_reader_reads_is_given_up_once_and_said(tmp_path, monkeypatch):
    """Its reading would fail at every writer: the entry is removed, and the run counts it failed."""
    monkeypatch.setattr(claude_code, "MAX_LINE_BYTES", 4096)
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    rollout = codex_session(tmp_path, project.path)
    with rollout.open("a") as f:
        f.write(json.dumps({"type": "response_item", "payload": {"type": "message", "text": "x" * 10_000}}) + "\n")
    settings = settings_of(project)
    name = snapshot.queue_unread(settings, unread_session(project, rollout))

    done = snapshot.write_queued(settings, capture.holder, lambda summary: None)
    assert (done.savepoints, done.failed, done.left) == (0, 1, 0)
    [note] = done.notes
    assert note.startswith(f"queued savepoint logs/{snapshot.QUEUE_DIR}/{name} not written, and removed: ") and (
        "its session file cannot be read into a document" in note and "longer than 4096 bytes" in note
    ), note
    assert queue_entries(project) == []


def test_a_session_that_said_nothing_or_nothing_since_its_savepoint_is_not_saved_again(tmp_path):
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    settings = settings_of(project)
    rollout = tmp_path / "meta-only.jsonl"
    rollout.write_text(json.dumps({"type": "session_meta", "payload": {"id": "s-unread"}}) + "\n")
    nothing = snapshot.queue_unread(settings, unread_session(project, rollout))
    assert snapshot.write_entry(settings, nothing, 1.0, capture.holder) == snapshot.Taken()
    assert queue_entries(project) == [] and savepoint_log.savepoints(project.logs) == []

    rollout = codex_session(tmp_path, project.path)
    first = snapshot.queue_unread(settings, unread_session(project, rollout))
    written = snapshot.write_entry(settings, first, 1.0, capture.holder).written
    assert written is not None and written.event["trigger"] == capture.SESSION_END_TRIGGER
    again = snapshot.queue_unread(settings, unread_session(project, rollout))
    held = snapshot.write_entry(settings, again, 1.0, capture.holder)
    assert held.written is None and held.held_by is not None and held.held_by.sequence == written.sequence
    assert queue_entries(project) == [] and len(savepoint_log.savepoints(project.logs)) == 1


@pytest.mark.parametrize(
    "change",
    [
        lambda data: {**data, "session": {**data["session"], "agent": "claude"}},
        lambda data: {**data, "session": {**data["session"], "transcript_path": "/elsewhere.jsonl"}},
        lambda data: {**data, "unread_session_file": {**data["unread_session_file"], "end": -1}},
        lambda data: {**data, "unread_session_file": {**data["unread_session_file"], "tail_sha256": None}},
    ],
    ids=["another agent", "a document named", "a negative end", "no hash"],
)
def test_an_unread_entry_this_version_cannot_read_is_left_queued_and_named(tmp_path, change):
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    rollout = codex_session(tmp_path, project.path)
    settings = settings_of(project)
    name = snapshot.queue_unread(settings, unread_session(project, rollout))
    restamp(project, name, change)

    [entry] = snapshot.queue_entries(project.logs)
    assert entry.other_version == "a savepoint whose fields this version does not read", entry
    assert snapshot.write_entry(settings, name, 1.0, capture.holder).left is not None
    assert queue_entries(project) == [name] and savepoint_log.savepoints(project.logs) == []


def test_the_hook_writes_a_short_session_itself_and_leaves_a_long_one_to_the_worker(tmp_path):
    """Reading and saving what fits half of Codex's 3 s at 10 MB/s, a session file byte counted as
    three of transcript (5 MB of rollout), the hook does itself, after queueing it; past that, the
    worker it started."""
    from precompact.config import hook_timeouts

    assert hook_timeouts.writes_in_time("codex", "SessionEnd", hook_timeouts.SESSION_FILE_BYTE_COST * 5_000_000)
    assert not hook_timeouts.writes_in_time("codex", "SessionEnd", hook_timeouts.SESSION_FILE_BYTE_COST * 5_000_001)
    short = new_project(tmp_path, "short", git_layer=False, chain_layer=False)
    for name in ("short-session", "long-session"):
        (tmp_path / name).mkdir()
    compact(short, "codex", codex_session(tmp_path / "short-session", short.path), AGENTS["codex"][1], "SessionEnd")
    assert [e["trigger"] for e in created(short)] == ["session_end"] and not queue_entries(short), "when it returned"

    long = new_project(tmp_path, "long", git_layer=False, chain_layer=False)
    rollout = codex_session(tmp_path / "long-session", long.path)
    output = {"type": "function_call_output", "call_id": "c", "output": "x" * 4000}
    with rollout.open("a") as f:
        while f.tell() < 5_200_000:
            f.write(json.dumps({"type": "response_item", "payload": output}) + "\n")
        f.write(
            json.dumps(
                {
                    "type": "response_item",
                    "payload": {
                        "type": "message",
                        "role": "user",
                        "content": [{"type": "input_text", "text": "Last words."}],
                    },
                }
            )
            + "\n"
        )
    compact(long, "codex", rollout, AGENTS["codex"][1], "SessionEnd")
    assert not (long.logs / "precompact-savepoint.jsonl").exists() and len(queue_entries(long)) == 1, "queued only"
    wait_for_worker(long)
    assert [e["trigger"] for e in created(long)] == ["session_end"] and not queue_entries(long), "the worker wrote it"
