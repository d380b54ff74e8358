"""Queue entries no writer will write (review13: a savepoint whose transcript changed since its
hook, the summary bound to it, another version's entry): counted as nothing to do by the worker
and by flush's layers (so none keeps the worker retrying for good), named one by one by `status`
and `doctor` with the fix, and given up knowingly with `precompact flush --drop-queued ENTRY`,
which refuses an entry a writer can still write. Entries are queued in-process as the hooks queue
them; the commands run as the user runs them."""

from __future__ import annotations

import json
from pathlib import Path

from precompact import api
from precompact.config import settings as configuration
from precompact.edges import worker
from precompact.local import provenance, savepoint_log, snapshot
from precompact.ops import compaction
from support.commands import precompact
from support.projects import new_project, queue_entries
from support.transcript_gen import generate

SESSION = "s-givenup00001"


def settings_of(project) -> snapshot.Settings:
    return compaction.layer_1(configuration.load(project.path))


def queued_then_gone(tmp_path: Path, project) -> tuple[str, str]:
    """A compaction's savepoint and summary queued (the index busy), then its transcript deleted
    before any writer ran: the entries' names."""
    transcript = generate(tmp_path / "t.jsonl", 8_000, project=project.path).path
    settings = settings_of(project)
    session = snapshot.Session(SESSION, str(transcript), str(project.path), "auto")
    name = snapshot.queue(settings, session)
    summary = snapshot.queue_summary(settings, snapshot.QueuedSummary(SESSION, None, "auto", "ITS SUMMARY", "claude"))
    transcript.unlink()
    return name, summary


def test_an_entry_no_writer_will_write_keeps_neither_the_worker_nor_a_layer_queued(tmp_path, capfd):
    project = new_project(tmp_path, "p", git_layer=True, chain_layer=False)
    loaded = configuration.load(project.path)
    name, summary = queued_then_gone(tmp_path, project)
    other = snapshot.queue(settings_of(project), snapshot.Session("s-other", None, str(project.path), "auto"))
    path = project.logs / snapshot.QUEUE_DIR / other
    data = json.loads(provenance.made_here(snapshot.QUEUE_PURPOSE, path.read_bytes()) or b"")
    path.write_bytes(provenance.stamped(snapshot.QUEUE_PURPOSE, json.dumps({**data, "version": 99}).encode()))

    assert api.savepoints_queued(loaded) is False
    assert snapshot.queued_savepoints(project.logs) == 0
    flushed = api.flush(loaded)
    assert not any("a hook left queued" in problem for problem in flushed.layer_2_problems), flushed.layer_2_problems

    worker.run(project.path)
    log = capfd.readouterr().out
    assert "retrying" not in log, log
    assert f"queued savepoint logs/{snapshot.QUEUE_DIR}/{name} not written: its transcript" in log, log
    assert queue_entries(project) == sorted([name, summary, other])


def test_an_entry_a_writer_will_write_is_queued_work(tmp_path):
    """The control: the same entries with the transcript still there are work, and written."""
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    loaded = configuration.load(project.path)
    transcript = generate(tmp_path / "t.jsonl", 8_000, project=project.path).path
    snapshot.queue(settings_of(project), snapshot.Session(SESSION, str(transcript), str(project.path), "auto"))

    assert api.savepoints_queued(loaded) is True and snapshot.queued_savepoints(project.logs) == 1
    assert api.write_queued(loaded).savepoints == 1
    assert api.savepoints_queued(loaded) is False


def test_status_and_doctor_name_each_entry_no_writer_writes_and_the_fix(tmp_path):
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    name, summary = queued_then_gone(tmp_path, project)

    status = precompact(project.path, "status")
    doctor = precompact(project.path, "doctor")

    for said in (status.stdout, doctor.stdout):
        assert f"queue entry logs/{snapshot.QUEUE_DIR}/{name} is never written (its transcript " in said, said
        assert f"is gone): `precompact flush --drop-queued {name}` gives it up" in said, said
        assert (
            f"queue entry logs/{snapshot.QUEUE_DIR}/{summary} is never written (its savepoint's entry {name} "
            f"is never written): `precompact flush --drop-queued {summary}` gives it up"
        ) in said, said
        assert "run `precompact flush`" not in said, said
    assert status.returncode == 0 and doctor.returncode == 1
    shown = json.loads(precompact(project.path, "status", "--json").stdout)
    assert f"--drop-queued {name}" in shown["queued"]


def test_flush_drop_queued_gives_up_the_entry_and_the_summary_bound_to_it(tmp_path):
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    name, summary = queued_then_gone(tmp_path, project)
    assert precompact(project.path, "flush").returncode == 1  # named, not written, until given up

    dropped = precompact(project.path, "flush", "--drop-queued", f"logs/{snapshot.QUEUE_DIR}/{name}", "--json")

    assert dropped.returncode == 0, (dropped.stdout, dropped.stderr)
    assert json.loads(dropped.stdout)["queue"]["dropped"] == [name, summary]
    assert f"gave up queue entry logs/{snapshot.QUEUE_DIR}/{name}" in dropped.stderr + dropped.stdout
    assert queue_entries(project) == []
    assert savepoint_log.savepoints(project.logs) == []
    status = precompact(project.path, "status")
    assert "queue" not in status.stdout, status.stdout
    assert precompact(project.path, "doctor").stdout.count("✗ worker") == 0


def test_flush_drop_queued_refuses_an_entry_a_writer_will_write_and_a_name_of_none(tmp_path):
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    transcript = generate(tmp_path / "t.jsonl", 8_000, project=project.path).path
    session = snapshot.Session(SESSION, str(transcript), str(project.path), "auto")
    name = snapshot.queue(settings_of(project), session)

    refused = precompact(project.path, "flush", "--drop-queued", name)
    assert refused.returncode == 1, (refused.stdout, refused.stderr)
    assert "can still be written: run `precompact flush`" in refused.stderr, refused.stderr
    assert queue_entries(project) == [name]
    for wrong, said in (
        ("../../precompact-savepoint.jsonl", "names no queue entry"),
        (f"{'1' * 20}-1.v2.json", "no queue entry logs/precompact-queue/"),
    ):
        refused = precompact(project.path, "flush", "--drop-queued", wrong)
        assert refused.returncode == 1 and said in refused.stderr, (wrong, refused.stderr)
    assert queue_entries(project) == [name]


def test_an_entry_no_writer_will_write_covers_nothing_a_recovery_would_save(tmp_path):
    """A compaction's savepoint queued, its transcript then rewritten before the end the hook saw:
    the entry is never written, so SessionStart(`compact`) must not count what it would have read
    as saved (capture's recovery saves it instead)."""
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    transcript = generate(tmp_path / "t.jsonl", 8_000, project=project.path).path
    session = snapshot.Session(SESSION, str(transcript), str(project.path), "auto")
    snapshot.queue(settings_of(project), session)
    end = transcript.stat().st_size
    assert snapshot.queued_reach(project.logs, SESSION) == end

    data = bytearray(transcript.read_bytes())
    data[-200:-100] = b"x" * 100
    transcript.write_bytes(bytes(data))

    assert snapshot.queued_reach(project.logs, SESSION) == 0


def test_an_entry_of_another_version_is_named_and_given_up_knowingly(tmp_path):
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    transcript = generate(tmp_path / "t.jsonl", 8_000, project=project.path).path
    name = snapshot.queue(settings_of(project), snapshot.Session(SESSION, str(transcript), str(project.path), "auto"))
    path = project.logs / snapshot.QUEUE_DIR / name
    data = json.loads(provenance.made_here(snapshot.QUEUE_PURPOSE, path.read_bytes()) or b"")
    path.write_bytes(provenance.stamped(snapshot.QUEUE_PURPOSE, json.dumps({**data, "version": 99}).encode()))

    status = precompact(project.path, "status").stdout
    assert f"or `precompact flush --drop-queued NAME` gives one up ({name})" in status, status
    assert precompact(project.path, "flush").returncode == 1

    dropped = precompact(project.path, "flush", "--drop-queued", name)

    assert dropped.returncode == 0, (dropped.stdout, dropped.stderr)
    assert queue_entries(project) == [] and savepoint_log.savepoints(project.logs) == []
