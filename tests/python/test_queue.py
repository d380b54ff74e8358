"""The queue of what hooks could not write while the index lock was busy (logs/precompact-queue/,
review11a F1, F2, F3, F5): an entry that is no file precompact writes is removed with a line and
never stops the others; one entry that fails is said and the rest are written; a savepoint that a
savepoint of its session (or an entry queued before it) already holds is written once; a session
whose compaction's savepoint is queued is told so, never briefed with the previous savepoint as if
it were this compaction's; and `flush` writes the queue while `status`, `verify` and `doctor` name
what is still queued. Savepoints and entries are made in-process, as the hooks make them."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from precompact import api
from precompact.config import settings as configuration
from precompact.local import capture, savepoint_log, snapshot
from precompact.ops import compaction
from support.commands import precompact
from support.projects import new_project, queue_entries
from support.transcript_gen import generate, payload

SESSION = "s-queued0001"


def settings_of(project) -> snapshot.Settings:
    return compaction.layer_1(configuration.load(project.path))


def session_of(project, transcript: Path, session_id: str = SESSION, trigger: str = "auto") -> snapshot.Session:
    return snapshot.Session(
        session_id=session_id, transcript_path=str(transcript), cwd=str(project.path), trigger=trigger
    )


def said_more(transcript: Path, marker: str) -> None:
    """The session goes on: one more user turn (with `marker`) at the transcript's end."""
    line = {
        "type": "user",
        "uuid": f"u-{marker}",
        "sessionId": SESSION,
        "message": {"role": "user", "content": f"please also {marker}"},
        "timestamp": "2026-12-05T10:00:00.000Z",
        "cwd": str(transcript.parent),
    }
    with transcript.open("a") as f:
        f.write(json.dumps(line) + "\n")


def plant(queue: Path, kind: str) -> Path:
    """An entry that came with a copied logs/, named to sort before every genuine one."""
    queue.mkdir(parents=True, exist_ok=True)
    planted = queue / "00000000000000000001-1.json"
    if kind == "symlink":
        target = queue.parent.parent / "outside.json"
        target.write_text('{"session": {}, "end": 1}')
        planted.symlink_to(target)
    elif kind == "fifo":
        os.mkfifo(planted)
    else:  # sparse: over the bound, no disk used
        with planted.open("wb") as f:
            f.truncate(snapshot.QUEUE_ENTRY_MAX_BYTES + 1)
    return planted


@pytest.mark.parametrize("kind", ["symlink", "fifo", "oversized"])
def test_an_entry_that_is_no_file_precompact_writes_is_removed_with_a_line_and_the_queue_behind_it_is_written(
    tmp_path, kind
):
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    transcript = generate(tmp_path / "t.jsonl", 8_000, project=project.path).path
    settings = settings_of(project)
    planted = plant(project.logs / snapshot.QUEUE_DIR, kind)
    snapshot.queue(settings, session_of(project, transcript))
    summary = snapshot.QueuedSummary(SESSION, None, "auto", "SUMMARY-MARKER", "claude")
    snapshot.queue_summary(settings, summary)

    done = compaction.write_queued(configuration.load(project.path))

    assert not os.path.lexists(planted) and queue_entries(project) == []
    assert (done.savepoints, done.left, done.failed) == (1, 0, 0)
    [note] = done.notes
    assert note.startswith(f"queue entry logs/{snapshot.QUEUE_DIR}/{planted.name} removed unread: "), note
    assert not note.endswith("remove it"), note
    [saved] = savepoint_log.savepoints(project.logs)
    assert (saved.session_id, saved.trigger, saved.compact_summary) == (SESSION, "auto", "SUMMARY-MARKER")
    if kind == "symlink":  # removed itself, never what it names
        assert (tmp_path / "p" / "outside.json").exists()


def test_an_entry_that_cannot_be_removed_is_said_each_time_and_keeps_nothing_else_waiting(tmp_path):
    """A directory named as an entry: not removed (its owner's to remove, the line says so), counted
    as failed so that no worker goes round for it for ever, and the entry behind it is written."""
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    transcript = generate(tmp_path / "t.jsonl", 8_000, project=project.path).path
    planted = project.logs / snapshot.QUEUE_DIR / "00000000000000000001-1.json"
    (planted / "inside").mkdir(parents=True)
    snapshot.queue(settings_of(project), session_of(project, transcript))

    done = compaction.write_queued(configuration.load(project.path))

    assert (done.savepoints, done.left, done.failed) == (1, 1, 1)
    [note] = done.notes
    assert note.startswith(f"queue entry logs/{snapshot.QUEUE_DIR}/{planted.name} could not be removed"), note
    assert "could not be removed (Is a directory; remove it): " in note, note
    assert planted.is_dir() and [s.session_id for s in savepoint_log.savepoints(project.logs)] == [SESSION]


def failing_for(monkeypatch, session_id: str) -> None:
    """Every savepoint of `session_id` fails as a full disk fails it (the others are written)."""
    write = snapshot._create_locked

    def create_locked(settings, session, *args, **kwargs):
        if session.session_id == session_id:
            raise OSError(28, "No space left on device")
        return write(settings, session, *args, **kwargs)

    monkeypatch.setattr(snapshot, "_create_locked", create_locked)


def test_an_entry_that_fails_is_said_and_left_queued_with_its_summary_while_the_others_are_written(
    tmp_path, monkeypatch
):
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    transcript = generate(tmp_path / "t.jsonl", 8_000, project=project.path).path
    settings = settings_of(project)
    stuck = session_of(project, transcript, session_id="s-stuck000001")
    snapshot.queue(settings, stuck)
    snapshot.queue_summary(settings, snapshot.QueuedSummary("s-stuck000001", None, "auto", "STUCK", "claude"))
    snapshot.queue(settings, session_of(project, transcript))
    failing_for(monkeypatch, "s-stuck000001")

    done = compaction.write_queued(configuration.load(project.path))

    assert (done.savepoints, done.left, done.failed) == (1, 2, 1)
    [note] = done.notes
    assert "not written yet: No space left on device" in note, note
    [saved] = savepoint_log.savepoints(project.logs)
    assert saved.session_id == SESSION and saved.compact_summary is None  # not the stuck session's summary
    # The failing savepoint and the summary that belongs to it stay queued, in order.
    first, second = queue_entries(project)
    assert not first.endswith(snapshot.SUMMARY_SUFFIX) and second.endswith(snapshot.SUMMARY_SUFFIX)


def test_a_queued_savepoint_a_savepoint_of_its_session_already_holds_is_not_written_again(tmp_path):
    """The lock freed between PreCompact (queued) and a later save of the session, which wrote
    the same transcript first: the queued entry is dropped with a line, never a second savepoint."""
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    transcript = generate(tmp_path / "t.jsonl", 8_000, project=project.path).path
    settings = settings_of(project)
    session = session_of(project, transcript)
    snapshot.queue(settings, session)
    snapshot.create_savepoint(settings, session)

    done = compaction.write_queued(configuration.load(project.path))

    assert (done.savepoints, done.left) == (0, 0) and queue_entries(project) == []
    [note] = done.notes
    assert note.endswith("not written again: savepoint 1 of its session holds what it would"), note
    assert [s.sequence for s in savepoint_log.savepoints(project.logs)] == [1]
    # What was said after it is no savepoint's yet: that entry is written.
    said_more(transcript, "ANOTHER-TURN")
    snapshot.queue(settings, session)
    assert compaction.write_queued(configuration.load(project.path)).savepoints == 1
    assert [s.sequence for s in savepoint_log.savepoints(project.logs)] == [1, 2]


def test_an_entry_another_writer_wrote_while_this_one_waited_is_not_written_twice(tmp_path):
    """`flush` and the worker both write the queue: the one that gets the index lock second finds
    the entry gone, under the lock, and writes nothing."""
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    transcript = generate(tmp_path / "t.jsonl", 8_000, project=project.path).path
    settings = settings_of(project)
    snapshot.queue(settings, session_of(project, transcript))
    [name] = queue_entries(project)
    (project.logs / snapshot.QUEUE_DIR / name).unlink()  # the other writer took it
    assert snapshot.write_entry(settings, name, 5.0, capture.holder) == snapshot.Taken()
    assert savepoint_log.savepoints(project.logs) == []


def test_a_compaction_s_session_start_writes_its_queued_savepoint_past_an_entry_that_is_no_file_and_briefs_it(
    tmp_path, monkeypatch
):
    """SessionStart(compact) writes what PreCompact queued within its own wait, through the same
    writer as the worker: a planted entry ahead of it (a link) neither stops it nor is followed,
    and is left to the worker, which removes it with a line in its log (a hook has none); the
    session is briefed with the savepoint it wrote, which holds the compaction."""
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    transcript = generate(tmp_path / "t.jsonl", 8_000, project=project.path).path
    settings = settings_of(project)
    snapshot.create_savepoint(settings, session_of(project, transcript))
    said_more(transcript, "SECOND-COMPACTION-MARKER")
    planted = plant(project.logs / snapshot.QUEUE_DIR, "symlink")
    snapshot.queue(settings, session_of(project, transcript))  # PreCompact, the lock busy then
    loaded = configuration.load(project.path)
    start = payload("SessionStart", project.path, transcript, session_id=SESSION, source="compact")
    from precompact.ops import background

    # The worker it starts would remove the planted entry at its own pace (a race under load):
    # the test writes the queue itself, as that worker would.
    monkeypatch.setattr(background, "spawn", lambda _root: None)

    context = api.on_session_start(loaded, start, "claude")

    assert context is not None and context.startswith("[precompact] Restored from savepoint 2 of"), context
    saved = savepoint_log.savepoints(project.logs)
    assert [(s.sequence, s.recovered) for s in saved] == [(1, None), (2, savepoint_log.QUEUED_REASON)]
    assert queue_entries(project) == [planted.name] and (tmp_path / "p" / "outside.json").exists()
    done = compaction.write_queued(loaded)
    assert (done.savepoints, done.left) == (0, 0) and queue_entries(project) == []
    [note] = done.notes
    assert note.startswith(f"queue entry logs/{snapshot.QUEUE_DIR}/{planted.name} removed unread: "), note


def test_a_compaction_whose_savepoint_is_queued_is_recovered_once_and_told_so_never_briefed_with_the_previous(
    tmp_path, monkeypatch
):
    """The session's second compaction, PreCompact's savepoint queued and the index still busy
    through SessionStart(compact)'s wait (so it cannot write that savepoint itself): it queues no
    second copy, and gives no brief of savepoint 1 as if it held this compaction; it names
    savepoint 1 without a ✓, and records nothing as given."""
    from precompact.config import hook_timeouts

    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    transcript = generate(tmp_path / "t.jsonl", 8_000, project=project.path).path
    settings = settings_of(project)
    snapshot.create_savepoint(settings, session_of(project, transcript))
    said_more(transcript, "SECOND-COMPACTION-MARKER")
    snapshot.queue(settings, session_of(project, transcript))  # PreCompact, the lock busy
    loaded = configuration.load(project.path)
    start = payload("SessionStart", project.path, transcript, session_id=SESSION, source="compact")
    monkeypatch.setattr(hook_timeouts, "lock_wait", lambda _agent, _event: 0.2)  # the hooks' waits, shortened

    with savepoint_log.locked(project.logs, 0):  # another save holds the index (its own descriptor)
        context = api.on_session_start(loaded, start, "claude")

    assert context is not None and len(queue_entries(project)) == 1
    assert context.startswith("[precompact] This compaction's savepoint is not written yet"), context
    assert "previous savepoint, 1 (sha256:" in context and "it was not checked here" in context, context
    assert "Restored from" not in context and "✓" not in context and "full conversation" not in context
    index = savepoint_log.read(project.logs)
    assert not index.deliveries(loaded.instance, SESSION)
    # PostCompact: no second copy either; its summary waits for the queued savepoint.
    post = payload("PostCompact", project.path, transcript, session_id=SESSION, compact_summary="SUMMARY-2")
    from precompact.ops import background

    monkeypatch.setattr(background, "spawn", lambda _root: None)  # the test writes the queue itself
    with savepoint_log.locked(project.logs, 0):
        assert compaction.post_compact(loaded, post, "claude")
    entries = snapshot.queue_entries(project.logs)
    assert [e.summary is not None for e in entries] == [False, True]
    assert entries[1].summary is not None and entries[1].summary.sequence is None
    compaction.write_queued(loaded)
    saved = savepoint_log.savepoints(project.logs)
    assert [(s.sequence, s.compact_summary) for s in saved] == [(1, None), (2, "SUMMARY-2")]


def test_flush_writes_what_is_queued_and_status_verify_doctor_name_it_until_then(tmp_path):
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    transcript = generate(tmp_path / "t.jsonl", 8_000, project=project.path).path
    snapshot.queue(settings_of(project), session_of(project, transcript))
    waiting = "1 savepoint(s) queued by a hook for the background worker and not written yet"

    status = precompact(project.path, "status")
    assert status.returncode == 0 and waiting in status.stdout, status.stdout
    assert json.loads(precompact(project.path, "status", "--json").stdout)["queued"].startswith(waiting)
    verified = precompact(project.path, "verify")
    assert verified.returncode == 4 and f"✗ {waiting}" in verified.stdout and "✓" not in verified.stdout
    doctor = precompact(project.path, "doctor")
    assert f"✗ worker: {waiting}" in doctor.stdout, doctor.stdout

    flushed = precompact(project.path, "flush", "--json")
    assert flushed.returncode == 0, (flushed.stdout, flushed.stderr)
    assert json.loads(flushed.stdout)["queue"] == {"written": 1, "left": 0, "problems": [], "dropped": []}
    assert "Layer 1: wrote 1 savepoint(s) hooks had queued" in flushed.stderr
    assert queue_entries(project) == [] and [s.sequence for s in savepoint_log.savepoints(project.logs)] == [1]
    assert waiting not in precompact(project.path, "status").stdout
    assert precompact(project.path, "verify").returncode == 0
    assert "✓ worker" in precompact(project.path, "doctor").stdout


def test_flush_is_queued_while_the_index_lock_keeps_an_entry_waiting_and_failed_while_one_fails(tmp_path, monkeypatch):
    from support.commands import invoke

    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    transcript = generate(tmp_path / "t.jsonl", 8_000, project=project.path).path
    snapshot.queue(settings_of(project), session_of(project, transcript))
    monkeypatch.chdir(project.path)
    monkeypatch.setattr(snapshot, "QUEUED_LOCK_TIMEOUT_SECONDS", 0.2)
    with savepoint_log.locked(project.logs, 5):  # another save holds the index
        waited = invoke("flush")
    assert waited.exit_code == 3, waited.output
    assert "… Layer 1: 1 savepoint(s) queued by a hook" in waited.output, waited.output
    assert "✓" not in waited.output.split("Layer 2")[0]

    snapshot.queue(settings_of(project), session_of(project, transcript, session_id="s-stuck000001"))
    failing_for(monkeypatch, "s-stuck000001")
    failed = invoke("flush")
    assert failed.exit_code == 1, failed.output
    assert "queued savepoint" in failed.output and "not written yet" in failed.output, failed.output
    assert [s.session_id for s in savepoint_log.savepoints(project.logs)] == [SESSION]
