"""A queued savepoint of an agent whose document later reads rewrite (OpenCode rewrites earlier
parts of a session at its compaction; Gemini's document is written whole at every read): the hook
pins the document as it saw it (transcript/agents.pin), the writer compares and reads the pin, and
the pin goes with its entry. What the pin does not explain is still said: a pin altered since the
hook, or gone while the document under its own name changed, leaves the entry unwritten and named.
The real OpenCode's case is test_opencode_queued.py; here its database is made by hand."""

from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path

import pytest

from precompact import api
from precompact.config import settings as configuration
from precompact.local import chunks, provenance, snapshot
from precompact.ops import compaction
from precompact.transcript import agents
from support.commands import precompact
from support.projects import new_project
from test_opencode_reader import SESSION, database

BOUNDARY = json.dumps({"type": "compaction", "auto": True})
# What OpenCode 1.18.33 writes over the compaction's part once its summary is written.
REWRITTEN = json.dumps({"type": "compaction", "auto": True, "tail_start_id": "msg_2"})


def queued(tmp_path: Path):
    """A project, its OpenCode session queued as PreCompact queues it, then the compaction's part
    rewritten by OpenCode and the document read again (as the compaction's next hook reads it)."""
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    loaded = configuration.load(project.path)
    settings = compaction.layer_1(loaded)
    parts = [("msg_1", "prt_1", json.dumps({"type": "text", "text": "Feed the quagga before noon."}))]
    parts += [("msg_2", "prt_2", json.dumps({"type": "text", "text": "The quagga is fed. " * 200}))]
    parts += [("msg_3", "prt_3", BOUNDARY)]
    db = database(tmp_path / "opencode.db", parts, directory=str(project.path))
    read = agents.read(agents.OPENCODE, project.logs, str(db), SESSION)
    session = snapshot.Session(
        SESSION, read.transcript_path, str(project.path), "auto", agent="opencode", agent_transcript=str(db)
    )
    name = snapshot.queue(settings, session, reason=None)
    with sqlite3.connect(db) as opened:
        opened.execute("UPDATE part SET data = ? WHERE id = 'prt_3'", (REWRITTEN,))
    agents.read(agents.OPENCODE, project.logs, str(db), SESSION)
    [entry] = snapshot.queue_entries(project.logs)
    assert entry.name == name and entry.session_file is not None and entry.session_file.pinned
    return project, loaded, entry


def pin_of(project, entry) -> Path:
    path = agents.pinned(project.logs, entry.session_file.pinned)
    assert path is not None and path.is_file()
    return path


def test_a_queued_savepoint_is_written_from_the_document_as_its_hook_saw_it(tmp_path):
    project, loaded, entry = queued(tmp_path)
    pin = pin_of(project, entry)
    document = entry.session.transcript_path
    assert REWRITTEN.encode() not in pin.read_bytes() and b"tail_start_id" in Path(document).read_bytes()
    assert api.queued_notice(loaded) is not None and "never written" not in api.queued_notice(loaded)

    assert api.write_queued(loaded).savepoints == 1
    assert not snapshot.queued(project.logs) and api.queued_notice(loaded) is None
    assert not pin.exists(), "the pin goes with its entry"
    index = [json.loads(line) for line in (project.logs / "precompact-savepoint.jsonl").read_text().splitlines()]
    [created] = [e for e in index if e["event"] == "SAVEPOINT_CREATED"]
    assert created["session_id"] == SESSION and created["queue_entry"] == entry.name
    # It holds the compaction's part as it was at the hook, and the document's own name.
    data = (project.path / created["snapshot_file"]).read_bytes()
    saved = chunks.document(data, chunks.local_fetch(project.logs))
    assert b"quagga is fed" in saved and b"tail_start_id" not in saved and b"compaction" in saved
    assert json.loads(saved)["session"]["transcript_path"] == document


def test_a_pin_altered_since_the_hook_is_said_and_never_written(tmp_path):
    project, loaded, entry = queued(tmp_path)
    pin = pin_of(project, entry)
    data = pin.read_bytes()
    pin.write_bytes(data.replace(b"quagga is fed", b"zebras are fed"))

    written = api.write_queued(loaded)
    assert written.savepoints == 0 and written.failed == 1
    [note] = written.notes
    assert f"{pin}" in note and "no longer holds the bytes the hook saw" in note, note
    assert "never written" in (api.queued_notice(loaded) or "")
    assert api.drop_queued(loaded, entry.name) == [entry.name]
    assert not pin.exists(), "giving the entry up removes its pin"


def test_a_pin_gone_compares_the_document_and_says_the_pin_is_gone(tmp_path):
    project, loaded, entry = queued(tmp_path)
    pin_of(project, entry).unlink()

    written = api.write_queued(loaded)
    assert written.savepoints == 0 and written.failed == 1
    [note] = written.notes
    assert "no longer holds the bytes the hook saw" in note and f"pinned ({entry.session_file.pinned}) is gone" in note


def test_a_pin_no_entry_names_is_swept_by_the_worker_once_no_hook_can_be_writing_its_entry(tmp_path):
    project, loaded, entry = queued(tmp_path)
    folder = agents.documents_dir(project.logs) / agents.PINNED_DIR
    old = f"{(time.time_ns() - 3_600 * 10**9):020d}-1.jsonl"
    young = f"{time.time_ns():020d}-2.jsonl"
    for leaf in (old, young):
        (folder / leaf).write_bytes(b"{}\n")
    pin_of(project, entry)

    snapshot.write_queued(compaction.layer_1(loaded), lambda *_: None, lambda _s: None)
    assert sorted(os.listdir(folder)) == [young], "the old orphan and the written entry's pin are gone"


def test_an_entry_this_machine_never_stamped_does_not_hold_the_sweep_back(tmp_path):
    """review16a F4: a file a repository puts in the queue under an entry's name (it names no pin
    this sweep must keep: only a stamped entry's is read) once switched the sweep off."""
    project, loaded, _ = queued(tmp_path)
    folder = agents.documents_dir(project.logs) / agents.PINNED_DIR
    old = f"{(time.time_ns() - 3_600 * 10**9):020d}-1.jsonl"
    (folder / old).write_bytes(b"{}\n")
    planted = project.logs / snapshot.QUEUE_DIR / f"{(time.time_ns() - 7_200 * 10**9):020d}-9.v2.json"
    planted.write_text(json.dumps({"version": 2, "pinned": old}))
    assert snapshot.queue_entries(project.logs)[0].name == planted.name

    snapshot.write_queued(compaction.layer_1(loaded), lambda *_: None, lambda _s: None)
    assert old not in os.listdir(folder), "the orphan is swept"


@pytest.mark.parametrize("given", ["../../x.jsonl", "1.jsonl", 7])
def test_an_entry_naming_a_pin_precompact_never_makes_is_not_read_as_this_versions(tmp_path, given):
    project, _loaded, entry = queued(tmp_path)
    path = project.logs / snapshot.QUEUE_DIR / entry.name

    data = json.loads(provenance.made_here(snapshot.QUEUE_PURPOSE, path.read_bytes()) or b"")
    data["session_file"]["pinned"] = given
    path.write_bytes(provenance.stamped(snapshot.QUEUE_PURPOSE, json.dumps(data).encode()))
    [read] = snapshot.queue_entries(project.logs)
    assert read.session is None and read.other_version, read


def forgotten_and_queued(tmp_path: Path):
    """`queued` in a project forgotten on this machine: the hook holds the document only while it
    runs (transcript/agents.held), so no pin is made, and nothing is kept under the state
    directory; the database as the hook read it."""
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    assert precompact(tmp_path, "projects", "--forget", str(project.path)).returncode == 0
    loaded = configuration.load(project.path)
    parts = [("msg_1", "prt_1", json.dumps({"type": "text", "text": "Feed the quagga before noon."}))]
    parts += [("msg_2", "prt_2", json.dumps({"type": "text", "text": "The quagga is fed. " * 200}))]
    parts += [("msg_3", "prt_3", BOUNDARY)]
    db = database(tmp_path / "opencode.db", parts, directory=str(project.path))
    with agents.held(agents.OPENCODE, str(db), SESSION) as read:
        session = snapshot.Session(
            SESSION, read.transcript_path, str(project.path), "auto", agent="opencode", agent_transcript=str(db)
        )
        name = snapshot.queue(compaction.layer_1(loaded), session, reason=None)
    [entry] = snapshot.queue_entries(project.logs)
    assert entry.name == name and entry.session_file is not None and entry.session_file.pinned is None
    assert not agents.documents_dir(project.logs).exists(), "nothing of a forgotten project is kept outside it"
    return project, entry, db


def test_a_forgotten_project_s_entry_unchanged_since_its_hook_is_written_from_its_session_file_read_again(
    tmp_path,
):
    project, entry, _db = forgotten_and_queued(tmp_path)
    assert snapshot.queued_reach(project.logs, SESSION) == entry.end

    flushed = precompact(project.path, "flush")

    assert flushed.returncode == 0, (flushed.stdout, flushed.stderr)
    assert "wrote 1 savepoint(s)" in flushed.stdout and not snapshot.queued(project.logs)


def test_a_forgotten_project_s_entry_whose_session_opencode_rewrote_is_said_never_written_everywhere(tmp_path):
    """fix15b pins the document as the hook saw it; a forgotten project keeps no copy outside it,
    so its hook pins none, and OpenCode's compaction rewrites the session before the worker reads
    it again. The entry is said never written by `status`, `doctor` and `verify` with the fix
    (they said `run precompact flush`, which then failed), and a compaction's recovery does not
    count it as saved (it recovers the savepoint from the session as it is); `--drop-queued`
    gives it up."""
    project, entry, db = forgotten_and_queued(tmp_path)
    with sqlite3.connect(db) as opened:
        opened.execute("UPDATE part SET data = ? WHERE id = 'prt_3'", (REWRITTEN,))

    never = f"queue entry logs/{snapshot.QUEUE_DIR}/{entry.name} is never written (its conversation document, read again from its session file"
    fix = f"`precompact flush --drop-queued {entry.name}` gives it up"
    status = precompact(project.path, "status")
    assert never in status.stdout and fix in status.stdout and "run `precompact flush`" not in status.stdout, status
    assert "a forgotten project's hook keeps no copy of what it saw" in status.stdout
    doctor = precompact(project.path, "doctor").stdout
    assert f"✗ worker: {never}" in doctor, doctor
    assert precompact(project.path, "verify").returncode == 4
    assert snapshot.queued_reach(project.logs, SESSION) == 0, "the compaction's recovery does not count it saved"
    flushed = precompact(project.path, "flush")
    assert flushed.returncode == 1 and f"{entry.name} not written: its conversation document" in flushed.stderr
    assert snapshot.queued(project.logs) == [entry.name]
    assert precompact(project.path, "flush", "--drop-queued", entry.name).returncode == 0
    assert not snapshot.queued(project.logs)
