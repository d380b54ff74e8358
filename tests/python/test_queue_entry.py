"""A queue entry says what its hook saw, and its writer honours it (review12a F1, F2, F3, F5, F6):
the instance the hook was loaded as (`flush --instance X` writes the hook's savepoint and summary
into the hook's instance, and a summary whose savepoint is missing fails, kept); the entry's
format (another version's entry is left queued and named, never removed unread; fields this
version does not know are another version's optional ones); the compaction a summary belongs to
(never the session's latest when it is written); the hook's time (kept beside the write's, and
"newest" reads it); and the transcript as it was (gone, no file, another file, cut or rewritten:
no savepoint, a failure flush counts). Entries are queued in-process as the hooks queue them;
`flush`, `status` and `verify` run as the user runs them."""

from __future__ import annotations

import json
import os
import re
import time
from datetime import UTC, datetime
from pathlib import Path

import orjson
import pytest

from precompact.config import settings as configuration
from precompact.local import capture, provenance, savepoint_log, snapshot
from precompact.ops import compaction
from support.commands import precompact
from support.projects import Project, new_project, queue_entries
from support.transcript_gen import generate

SESSION = "s-entry000001"
OTHER_VERSION = "written by another precompact version: run that version's `precompact flush`"


def settings_of(project, instance: str | None = None) -> snapshot.Settings:
    loaded = configuration.load(project.path)
    return compaction.layer_1(loaded.replace(instance=instance) if instance else loaded)


def session_of(project, transcript: Path, session_id: str = SESSION, trigger: str = "auto") -> snapshot.Session:
    return snapshot.Session(
        session_id=session_id, transcript_path=str(transcript), cwd=str(project.path), trigger=trigger
    )


def said_more(transcript: Path, marker: str, times: int = 1) -> None:
    """The session goes on: user turns (with `marker`) at the transcript's end."""
    with transcript.open("a") as f:
        for n in range(times):
            line = {
                "type": "user",
                "uuid": f"u-{marker}-{n}",
                "sessionId": SESSION,
                "message": {"role": "user", "content": f"please also {marker} ({n})"},
                "timestamp": "2026-12-05T10:00:00.000Z",
                "cwd": str(transcript.parent),
            }
            f.write(json.dumps(line) + "\n")


def events(project, kind: str) -> list[dict]:
    index = project.logs / "precompact-savepoint.jsonl"
    return [e for e in map(json.loads, index.read_text().splitlines()) if e["event"] == kind]


def restamp(project, name: str, change) -> None:
    """Entry `name` as another writer on this machine writes it: `change` applied to its JSON,
    stamped with this machine's key (so only its fields tell it apart)."""
    path = project.logs / snapshot.QUEUE_DIR / name
    purpose = snapshot.SUMMARY_PURPOSE if snapshot.is_summary_entry(name) else snapshot.QUEUE_PURPOSE
    data = provenance.made_here(purpose, path.read_bytes())
    assert data is not None
    path.write_bytes(provenance.stamped(purpose, orjson.dumps(change(orjson.loads(data)))))


# F1: the instance the hook was loaded as.


def test_flush_of_another_instance_writes_the_hook_s_savepoint_and_summary_into_the_hook_s_instance(tmp_path):
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    transcript = generate(tmp_path / "t.jsonl", 8_000, project=project.path).path
    second = generate(tmp_path / "t2.jsonl", 8_000, project=project.path).path
    settings = settings_of(project)
    snapshot.create_savepoint(settings, session_of(project, transcript))  # PreCompact A, the index free
    # PostCompact A and PreCompact B while the index was busy.
    snapshot.queue_summary(settings, snapshot.QueuedSummary(SESSION, 1, "auto", "SUMMARY-OF-A", "claude"))
    snapshot.queue(settings, session_of(project, second, session_id="s-B0000000001"))

    flushed = precompact(project.path, "flush", "--instance", "Old #0")

    assert flushed.returncode == 0, (flushed.stdout, flushed.stderr)
    assert queue_entries(project) == []
    saved = savepoint_log.savepoints(project.logs)
    assert [(s.instance, s.sequence, s.session_id) for s in saved] == [
        ("Trial #1", 1, SESSION),
        ("Trial #1", 2, "s-B0000000001"),
    ]
    assert saved[0].compact_summary == "SUMMARY-OF-A"
    assert 'written as savepoint 2 of "Trial #1", the instance its hook saved to' in flushed.stderr, flushed.stderr
    assert '`precompact flush --instance "Trial #1"`' in flushed.stderr


def test_a_summary_whose_savepoint_is_missing_fails_and_stays_queued(tmp_path):
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    transcript = generate(tmp_path / "t.jsonl", 8_000, project=project.path).path
    settings = settings_of(project)
    snapshot.create_savepoint(settings, session_of(project, transcript))
    name = snapshot.queue_summary(settings, snapshot.QueuedSummary(SESSION, 7, "auto", "LOST?", "claude"))

    flushed = precompact(project.path, "flush")

    assert flushed.returncode == 1, (flushed.stdout, flushed.stderr)
    assert f"queued summary logs/{snapshot.QUEUE_DIR}/{name} not recorded: its savepoint is not in" in flushed.stderr
    assert "`precompact flush --drop-queued` with its name gives it up" in flushed.stderr
    assert queue_entries(project) == [name]
    assert [s.compact_summary for s in savepoint_log.savepoints(project.logs)] == [None]


# F2: the entry's format.


def test_an_entry_of_a_later_format_is_left_queued_named_and_failed_never_removed(tmp_path):
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    transcript = generate(tmp_path / "t.jsonl", 8_000, project=project.path).path
    settings = settings_of(project)
    name = snapshot.queue(settings, session_of(project, transcript))
    summary = snapshot.queue_summary(settings, snapshot.QueuedSummary(SESSION, None, "auto", "KEPT", "claude"))
    for each in (name, summary):
        restamp(project, each, lambda data: {**data, "version": snapshot.QUEUE_FORMAT + 1})

    status = precompact(project.path, "status")
    assert f"2 queue entry(ies) in logs/{snapshot.QUEUE_DIR}/ {OTHER_VERSION}" in status.stdout, status.stdout
    assert precompact(project.path, "verify").returncode == 4
    flushed = precompact(project.path, "flush")

    assert flushed.returncode == 1, (flushed.stdout, flushed.stderr)
    assert (
        f"queue entry logs/{snapshot.QUEUE_DIR}/{name} {OTHER_VERSION} (format {snapshot.QUEUE_FORMAT + 1}"
        in flushed.stderr
    )
    assert queue_entries(project) == sorted([name, summary])
    assert savepoint_log.savepoints(project.logs) == []


def test_an_entry_with_a_field_this_version_does_not_know_or_without_one_it_defaults_is_written(tmp_path):
    """What a version with one field more, or one optional field fewer, writes (the repro's)."""
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    transcript = generate(tmp_path / "t.jsonl", 8_000, project=project.path).path
    settings = settings_of(project)
    name = snapshot.queue(settings, session_of(project, transcript))
    summary = snapshot.queue_summary(settings, snapshot.QueuedSummary(SESSION, None, "auto", "KEPT", "claude"))

    def more_and_fewer(data: dict) -> dict:
        if "session" in data:
            del data["session"]["agent_version"]
            return {**data, "session": {**data["session"], "model": "claude-sonnet-4"}, "priority": 2}
        return {**data, "model": "claude-sonnet-4"}

    restamp(project, name, more_and_fewer)
    restamp(project, summary, more_and_fewer)

    flushed = precompact(project.path, "flush")

    assert flushed.returncode == 0, (flushed.stdout, flushed.stderr)
    assert queue_entries(project) == []
    [saved] = savepoint_log.savepoints(project.logs)
    assert (saved.session_id, saved.compact_summary) == (SESSION, "KEPT")


def _version_1_entries(tmp_path: Path, summary_text: str) -> tuple[Project, Path, str, str]:
    """A project with a savepoint and its summary queued as version 1 wrote them (no "version",
    no instance or time): the project, the transcript and the two entries' names."""
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    transcript = generate(tmp_path / "t.jsonl", 8_000, project=project.path).path
    settings = settings_of(project)
    name = snapshot.queue(settings, session_of(project, transcript))
    summary = snapshot.queue_summary(settings, snapshot.QueuedSummary(SESSION, None, "auto", summary_text, "claude"))
    restamp(project, name, lambda data: {key: data[key] for key in ("session", "end", "reason")})
    old_fields = ("session_id", "sequence", "trigger", "summary", "agent")
    restamp(project, summary, lambda data: {key: data[key] for key in old_fields})
    return project, transcript, name, summary


def test_entries_of_the_format_before_versions_are_written_as_this_version_s_own(tmp_path):
    """Version 1 (no "version", no instance or time): the savepoint written, the summary recorded
    with the session's latest savepoint, as that version recorded it."""
    project, *_ = _version_1_entries(tmp_path, "OLD-FORMAT")

    done = compaction.write_queued(configuration.load(project.path))

    assert (done.savepoints, done.left, done.failed, done.notes) == (1, 0, 0, [])
    [saved] = savepoint_log.savepoints(project.logs)
    assert saved.compact_summary == "OLD-FORMAT" and saved.queued_at is None


@pytest.mark.parametrize(
    ("how", "said"), [("deleted", "is gone"), ("truncated", "was cut since the hook"), ("fifo", "is not a file")]
)
def test_an_entry_of_the_format_before_versions_whose_transcript_is_gone_is_said_never_written_not_saved_empty(
    tmp_path, how, said
):
    """A version 1 entry recorded nothing of what its hook saw; what can still be checked is: a
    transcript gone, cut before the entry's end or no file was written as a savepoint of nothing
    (or of part of it), and `--drop-queued` refused it as one a writer still writes. It is said
    never written by `status` and `flush`, with the fix, and given up by it, with the version 1
    summary queued after it (bound to it: "the session's latest"), which was left waiting."""
    project, transcript, name, summary = _version_1_entries(tmp_path, "ITS-SUMMARY")
    change(transcript, how)

    status = precompact(project.path, "status").stdout
    never = f"queue entry logs/{snapshot.QUEUE_DIR}/{name} is never written (its transcript "
    fix = f"`precompact flush --drop-queued {name}` gives it up"
    assert never in status and said in status and fix in status and "run `precompact flush`" not in status, status
    bound = f"queue entry logs/{snapshot.QUEUE_DIR}/{summary} is never written (its savepoint's entry {name} is never written)"
    assert bound in status, status
    flushed = precompact(project.path, "flush")
    assert flushed.returncode == 1, (flushed.stdout, flushed.stderr)
    assert f"queued savepoint logs/{snapshot.QUEUE_DIR}/{name} not written: its transcript " in flushed.stderr
    assert said in flushed.stderr and fix in flushed.stderr and "wrote" not in flushed.stdout
    assert savepoint_log.savepoints(project.logs) == [] and queue_entries(project) == sorted([name, summary])
    dropped = precompact(project.path, "flush", "--drop-queued", name)
    assert dropped.returncode == 0, (dropped.stdout, dropped.stderr)
    assert f"gave up queue entry logs/{snapshot.QUEUE_DIR}/{summary}" in dropped.stdout, "with the summary bound to it"
    assert queue_entries(project) == [] and savepoint_log.savepoints(project.logs) == []


def test_entries_of_the_format_before_versions_go_into_the_configured_instance_whatever_the_writer_s(tmp_path):
    """A version 1 entry names no instance; its hook loaded the one the project's approved file
    names (hooks drop PRECOMPACT_INSTANCE and take no --instance): `flush --instance OTHER`, or
    one run with PRECOMPACT_INSTANCE set, writes it there, says so, and records its summary there,
    never into OTHER's chain."""
    project, _, name, _ = _version_1_entries(tmp_path, "OLD-FORMAT")

    flushed = precompact(project.path, "flush", "--instance", "Old #0", env={"PRECOMPACT_INSTANCE": "Other #2"})

    assert flushed.returncode == 0, (flushed.stdout, flushed.stderr)
    assert queue_entries(project) == []
    [saved] = savepoint_log.savepoints(project.logs)
    assert (saved.instance, saved.sequence, saved.compact_summary) == ("Trial #1", 1, "OLD-FORMAT")
    assert (
        f'queued savepoint logs/{snapshot.QUEUE_DIR}/{name} written as savepoint 1 of "Trial #1", the instance '
        "the project's configuration names, which its hook (an older precompact's, naming none) saved to"
    ) in flushed.stderr, flushed.stderr
    assert configuration.load(project.path, {"PRECOMPACT_INSTANCE": "Other #2"}).configured_instance == "Trial #1"
    assert configuration.load(project.path, {}).configured_instance is None


def request_blocked(project) -> Path:
    """The session's addendum request cannot be written (a directory in its place): the writer
    fails after it bound the summary and appended its line, and leaves the entry queued."""
    blocked = project.logs / "precompact-pending" / f"{SESSION}.request"
    blocked.mkdir(parents=True)
    (blocked / "x").write_text("")
    return blocked


def stored(project, name: str) -> dict:
    path = project.logs / snapshot.QUEUE_DIR / name
    data = provenance.made_here(snapshot.SUMMARY_PURPOSE, path.read_bytes())
    assert data is not None
    return orjson.loads(data)


def test_a_summary_entry_bound_by_flush_of_another_instance_is_written_again_in_its_own_format(tmp_path):
    """A summary queued before any savepoint of its session (unbound), its savepoint written
    since; `flush --instance X` binds it, then fails (the addendum request cannot be written) and
    leaves it queued. It was written back as a version 1 entry: its hook's instance and time lost
    (read again, its summary went to the instance the configuration names). It keeps its format,
    instance and time, and the next flush records it once."""
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    transcript = generate(tmp_path / "t.jsonl", 8_000, project=project.path).path
    settings = settings_of(project)
    name = snapshot.queue_summary(settings, snapshot.QueuedSummary(SESSION, None, "auto", "UNBOUND", "claude"))
    before = stored(project, name)
    assert before["sequence"] is None and before.get("savepoint_entry") is None, before
    snapshot.create_savepoint(settings, session_of(project, transcript))
    blocked = request_blocked(project)

    flushed = precompact(project.path, "flush", "--instance", "Old #0")

    assert flushed.returncode == 1, (flushed.stdout, flushed.stderr)
    after = stored(project, name)
    assert (after["version"], after["instance"], after["queued_at"]) == (2, "Trial #1", before["queued_at"]), after
    assert after["sequence"] == 1
    for child in blocked.iterdir():
        child.unlink()
    blocked.rmdir()
    assert precompact(project.path, "flush", "--instance", "Old #0").returncode == 0
    assert queue_entries(project) == []
    [line] = events(project, savepoint_log.Event.COMPACT_SUMMARY)
    assert (line["summary"], line["queued_at"]) == ("UNBOUND", before["queued_at"])


def test_a_version_1_summary_entry_written_again_holds_version_1_s_fields_only(tmp_path):
    """An older install (the plugin's own venv, say) lists a version 1 entry's name and removes
    unread one whose fields are not its own: bound and written again, it holds only those."""
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    transcript = generate(tmp_path / "t.jsonl", 8_000, project=project.path).path
    settings = settings_of(project)
    queued_as = snapshot.queue_summary(settings, snapshot.QueuedSummary(SESSION, None, "auto", "OLD", "claude"))
    old_fields = ("session_id", "sequence", "trigger", "summary", "agent")
    restamp(project, queued_as, lambda data: {key: data[key] for key in old_fields})
    name = queued_as.replace(snapshot.SUMMARY_SUFFIX, "-summary.json")
    os.rename(project.logs / snapshot.QUEUE_DIR / queued_as, project.logs / snapshot.QUEUE_DIR / name)
    assert VERSION_1_LISTING.fullmatch(name)
    snapshot.create_savepoint(settings, session_of(project, transcript))
    request_blocked(project)

    assert precompact(project.path, "flush").returncode == 1

    after = stored(project, name)
    assert sorted(after) == sorted(old_fields) and after["sequence"] == 1, after


# F3: a summary bound to its compaction.


@pytest.mark.parametrize("worker_between", [False, True])
def test_an_earlier_compaction_s_summary_never_becomes_a_later_compaction_s_savepoint_s(tmp_path, worker_between):
    """Compaction 1's savepoint and summary queued (the index busy, the worker killed); the session
    goes on and compacts again, savepoint 1 written directly; compaction 1's savepoint is dropped as
    held by savepoint 1, and its summary is kept beside it, never as its summary, whether a worker
    runs between PreCompact 2 and PostCompact 2 or not: savepoint 1 was made after summary 1's hook
    (review12d F5), and no addendum is asked for summary 1."""
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    transcript = generate(tmp_path / "t.jsonl", 8_000, project=project.path).path
    settings = settings_of(project)
    loaded = configuration.load(project.path)
    snapshot.queue(settings, session_of(project, transcript))  # PreCompact 1
    snapshot.queue_summary(settings, snapshot.QueuedSummary(SESSION, None, "auto", "FIRST-COMPACTION", "claude"))
    time.sleep(1.1)  # compaction 2 comes later (the hooks' times are in seconds)
    said_more(transcript, "BETWEEN-COMPACTIONS", times=20)
    snapshot.create_savepoint(settings, session_of(project, transcript))  # PreCompact 2, the index free
    if worker_between:
        compaction.write_queued(loaded)
    second = snapshot.queue_summary(
        settings, snapshot.QueuedSummary(SESSION, 1, "auto", "SECOND-COMPACTION", "claude")
    )  # PostCompact 2
    snapshot.record_summary(settings, second, 5.0, lambda _recorded: None)

    done = compaction.write_queued(loaded)

    assert queue_entries(project) == [] and (done.left, done.failed) == (0, 0)
    [saved] = savepoint_log.savepoints(project.logs)
    assert saved.compact_summary == "SECOND-COMPACTION"
    [line] = [e for e in events(project, savepoint_log.Event.COMPACT_SUMMARY) if e["summary"] == "SECOND-COMPACTION"]
    assert line["queue_entry"] == second and isinstance(line["queued_at"], int)
    [earlier] = events(project, savepoint_log.Event.EARLIER_COMPACT_SUMMARY)
    assert (earlier["sequence"], earlier["summary"]) == (1, "FIRST-COMPACTION")
    if not worker_between:  # else the worker between said it
        assert any("as an earlier compaction's summary" in note for note in done.notes), done.notes
    assert [e["summary"] for e in events(project, savepoint_log.Event.COMPACT_SUMMARY)] == ["SECOND-COMPACTION"]
    assert not (project.path / "logs" / "precompact-pending" / f"{SESSION}.request").exists()


def test_a_summary_is_recorded_with_the_savepoint_written_from_its_entry_not_the_session_s_latest(tmp_path):
    """The savepoint of compaction 1 queued, then a later savepoint of the session written first
    (compaction 2's, reading further): compaction 1's savepoint, read only up to its end, is held
    by it; but one written from its entry keeps its own summary, whatever is written after it."""
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    transcript = generate(tmp_path / "t.jsonl", 8_000, project=project.path).path
    settings = settings_of(project)
    loaded = configuration.load(project.path)
    entry = snapshot.queue(settings, session_of(project, transcript))
    name = snapshot.queue_summary(settings, snapshot.QueuedSummary(SESSION, None, "auto", "FIRST", "claude"))
    [read] = [e for e in snapshot.queue_entries(project.logs) if e.name == name]
    assert read.summary is not None and read.summary.savepoint_entry == entry
    # The savepoint is written (a session start's own wait), the summary not yet.
    assert snapshot.write_queued_savepoints(settings, capture.holder, 5.0).savepoints == 1
    said_more(transcript, "LATER", times=20)
    snapshot.create_savepoint(settings, session_of(project, transcript))  # a later save of the session

    compaction.write_queued(loaded)

    saved = savepoint_log.savepoints(project.logs)
    assert [(s.sequence, s.compact_summary) for s in saved] == [(1, "FIRST"), (2, None)]


# F5: the hook's time.


def test_a_savepoint_written_from_the_queue_keeps_its_hook_s_time_and_newest_reads_it(tmp_path):
    """Session A's end queued (its worker killed); session B's savepoint written 2 s later; the
    next worker writes A's after it: its chain timestamp stays monotonic, its `queued_at` is its
    hook's, and a resumed session is briefed with B's, the newer conversation."""
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    first = generate(tmp_path / "a.jsonl", 8_000, project=project.path).path
    second = generate(tmp_path / "b.jsonl", 8_000, project=project.path).path
    settings = settings_of(project)
    before = int(time.time())
    snapshot.queue(settings, session_of(project, first, session_id="s-A0000000001", trigger="session_end"), reason=None)
    time.sleep(2.1)
    snapshot.create_savepoint(settings, session_of(project, second, session_id="s-B0000000001"))

    assert compaction.write_queued(configuration.load(project.path)).savepoints == 1

    b, a = savepoint_log.savepoints(project.logs)
    assert (a.session_id, a.sequence, b.sequence) == ("s-A0000000001", 2, 1)
    assert a.unix_timestamp >= b.unix_timestamp  # the chain's timestamps never go back
    assert a.queued_at is not None and before <= a.queued_at < b.unix_timestamp
    assert a.created["queue_entry"] and "queue_entry" not in b.created
    assert (a.made_at, b.made_at) == (a.queued_at, b.unix_timestamp) and b.queued_at is None
    document = json.loads((project.path / a.snapshot_file).read_bytes())
    assert document["queued_at"] == a.queued_at
    assert capture.to_brief(savepoint_log.savepoints(project.logs), "s-C0000000001", "resume") == b


def test_plain_resurrect_brings_back_the_newest_conversation_by_its_hook_s_time_whatever_order_the_queue_was_written_in(
    tmp_path,
):
    """Two sessions end while the index is busy: A's SessionEnd queues its savepoint, B's queues
    its own 2 s later and writes it itself once the lock is free (SessionEnd writes its own entry
    first), then the worker writes A's. Savepoint 2 is A's, saved earlier: `resurrect` with no
    `--sequence` or `--at` brings back B's (the last conversation the user lived through), says
    no newer savepoint was skipped, and --at before B's hook still picks A's."""
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    first = generate(tmp_path / "a.jsonl", 8_000, project=project.path).path
    second = generate(tmp_path / "b.jsonl", 8_000, project=project.path).path
    settings = settings_of(project)
    snapshot.queue(settings, session_of(project, first, session_id="s-A0000000001", trigger="session_end"), reason=None)
    time.sleep(2.1)
    b_entry = snapshot.queue(
        settings, session_of(project, second, session_id="s-B0000000001", trigger="session_end"), reason=None
    )
    assert snapshot.write_entry(settings, b_entry, 1.0, capture.holder).written is not None  # B's own hook
    assert compaction.write_queued(configuration.load(project.path)).savepoints == 1  # the worker: A's
    b, a = savepoint_log.savepoints(project.logs)
    assert (b.session_id, a.session_id) == ("s-B0000000001", "s-A0000000001")
    assert a.queued_at is not None and b.queued_at is not None and a.queued_at < b.queued_at

    shown = precompact(project.path, "resurrect", "--json")

    assert shown.returncode == 0, (shown.stdout, shown.stderr)
    found = json.loads(shown.stdout)
    assert found["sequence"] == 1, found  # B's
    assert found["later_savepoints"] == 0 and "skipped" not in shown.stderr, shown.stderr
    before_b = datetime.fromtimestamp(b.queued_at - 1, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    at = json.loads(precompact(project.path, "resurrect", "--json", "--at", before_b).stdout)
    assert (at["sequence"], at["later_savepoints"]) == (2, 1), at


# F6: the transcript as the hook saw it.


def change(transcript: Path, how: str) -> None:
    if how == "deleted":
        transcript.unlink()
    elif how == "truncated":
        with transcript.open("r+b") as f:
            f.truncate(transcript.stat().st_size // 2)
    elif how == "fifo":
        transcript.unlink()
        os.mkfifo(transcript)
    elif how == "rewritten":  # the same size and file, other bytes before the end
        data = bytearray(transcript.read_bytes())
        data[-200:-100] = b"x" * 100
        with transcript.open("r+b") as f:
            f.write(bytes(data))
    else:  # replaced by another file of the same bytes and more
        copy = transcript.with_suffix(".new")
        copy.write_bytes(transcript.read_bytes() + b"\n")
        os.replace(copy, transcript)


@pytest.mark.parametrize(
    ("how", "said"),
    [
        ("deleted", "is gone"),
        ("truncated", "was cut since the hook"),
        ("fifo", "is not a file"),
        ("rewritten", "no longer holds the bytes the hook saw before byte"),
        ("replaced", "is another file than the one the hook read"),
    ],
)
def test_a_queued_savepoint_whose_transcript_changed_is_not_written_and_flush_fails_naming_it(tmp_path, how, said):
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    transcript = generate(tmp_path / "t.jsonl", 8_000, project=project.path).path
    name = snapshot.queue(settings_of(project), session_of(project, transcript, trigger="session_end"), reason=None)
    change(transcript, how)

    flushed = precompact(project.path, "flush")

    assert flushed.returncode == 1, (flushed.stdout, flushed.stderr)
    assert f"queued savepoint logs/{snapshot.QUEUE_DIR}/{name} not written: its transcript " in flushed.stderr
    assert said in flushed.stderr and f"`precompact flush --drop-queued {name}` gives it up" in flushed.stderr
    assert "wrote" not in flushed.stderr
    assert savepoint_log.savepoints(project.logs) == [] and queue_entries(project) == [name]
    verified = precompact(project.path, "verify")
    never = f"✗ queue entry logs/{snapshot.QUEUE_DIR}/{name} is never written (its transcript "
    assert verified.returncode == 4 and never in verified.stdout, verified.stdout
    assert "run `precompact flush`" not in verified.stdout
    (project.logs / snapshot.QUEUE_DIR / name).unlink()  # the user gives it up
    assert precompact(project.path, "flush").returncode == 0


def test_a_transcript_that_only_grew_since_the_hook_is_written_up_to_the_hook_s_end(tmp_path):
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    transcript = generate(tmp_path / "t.jsonl", 8_000, project=project.path).path
    end = transcript.stat().st_size
    snapshot.queue(settings_of(project), session_of(project, transcript))
    said_more(transcript, "AFTER-THE-HOOK")

    done = compaction.write_queued(configuration.load(project.path))

    assert (done.savepoints, done.failed) == (1, 0)
    [saved] = savepoint_log.savepoints(project.logs)
    assert saved.transcript_end == end


# The whole-name pattern of the queue's entries in precompact's releases before the format had a
# version (c50c1ec and every one before it): what an older install, the Claude Code plugin's own
# venv say, lists.
VERSION_1_LISTING = re.compile(r"\d{20}-\d+(-summary)?\.json")


def test_an_older_precompact_never_lists_an_entry_of_this_format(tmp_path):
    """review12d F1: a version 1 precompact read a version 2 summary entry's extra fields as not
    its own and removed it unread (the summary lost); it wrote a v2 savepoint entry without its
    instance or transcript check. Named so that its listing never matches, each entry waits for a
    precompact that reads it; this version still reads entries named the old way."""
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    loaded = configuration.load(project.path)
    settings = snapshot.Settings.of(loaded)
    transcript = tmp_path / "t.jsonl"
    transcript.write_text('{"type": "user", "uuid": "u1", "message": {"role": "user", "content": "hi"}}\n')
    session = snapshot.Session("s", str(transcript), str(project.path), "auto")
    name = snapshot.queue(settings, session)
    assert name.endswith(snapshot.QUEUE_SUFFIX) and not VERSION_1_LISTING.fullmatch(name)
    assert snapshot.SUMMARY_SUFFIX.endswith(".v2.json")
    old_named = f"{time.time_ns():020d}-1.json"
    assert VERSION_1_LISTING.fullmatch(old_named) and snapshot.QUEUE_ENTRY.fullmatch(old_named)
    queue_dir = project.logs / snapshot.QUEUE_DIR
    (queue_dir / old_named).write_bytes((queue_dir / name).read_bytes())
    assert set(snapshot.queued(project.logs)) == {name, old_named}
    assert [snapshot.is_summary_entry(n) for n in (name, old_named, "0" * 20 + "-1-summary.json")] == [
        False,
        False,
        True,
    ]


def test_a_queued_savepoint_is_said_saved_when_its_hook_ran_in_resurrect_at_status_and_the_brief(tmp_path):
    """Session A's end queued; session B's savepoint written 2 s later; A's written after it. Every
    place that says when a savepoint was saved says A's hook's time (its `queued_at`), and the
    write's beside it: `resurrect --at` that time takes A (its write, and B's, came later)."""
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    first = generate(tmp_path / "a.jsonl", 8_000, project=project.path).path
    second = generate(tmp_path / "b.jsonl", 8_000, project=project.path).path
    settings = settings_of(project)
    snapshot.queue(settings, session_of(project, first, session_id="s-A0000000001", trigger="session_end"), reason=None)
    time.sleep(2.1)
    snapshot.create_savepoint(settings, session_of(project, second, session_id="s-B0000000001"))
    time.sleep(1.1)
    assert compaction.write_queued(configuration.load(project.path)).savepoints == 1
    b, a = savepoint_log.savepoints(project.logs)
    hook_time = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(a.queued_at))
    assert a.made_timestamp == hook_time != a.timestamp and b.made_timestamp == b.timestamp

    at = precompact(project.path, "resurrect", "--at", hook_time, "--json")
    assert at.returncode == 0, (at.stdout, at.stderr)
    restored = json.loads(at.stdout)
    assert (restored["sequence"], restored["saved_at"], restored["timestamp"]) == (2, hook_time, a.timestamp)
    report = precompact(project.path, "resurrect", "--sequence", "2").stdout
    assert f"Last savepoint: #2 at {hook_time} (" in report, report
    assert re.search(r"\(\d+ seconds? ago, written \d+ seconds? ago from its hook's queue\)", report), report

    shown = json.loads(precompact(project.path, "status", "--json").stdout)
    assert [(row["sequence"], row["saved_at"], row["timestamp"]) for row in shown["savepoints"]] == [
        (1, b.timestamp, b.timestamp),
        (2, hook_time, a.timestamp),
    ]
    status = precompact(project.path, "status").stdout
    assert (
        f"#2    {hook_time}" in status
        and f"saved at its hook {hook_time}, written from its queue entry {a.timestamp}" in status
    ), status

    from precompact.restore import brief

    said = brief.queued(a, now=datetime.fromtimestamp(a.queued_at + 60, UTC))
    assert "saved 1 minute ago" in said, said

    from starlette.testclient import TestClient

    from precompact.viewer import app, pages

    loaded = configuration.load(project.path)
    client = TestClient(app.create(loaded, "token", 8000, pages.Verdicts(loaded)), base_url="http://127.0.0.1:8000")
    timeline = client.get("/token/").text
    assert f"{hook_time} <span" in timeline and f"(written {a.timestamp})" in timeline, timeline
    page = client.get("/token/savepoint", params={"instance": "Trial #1", "sequence": 2}).text
    assert f"{hook_time} (saved at its hook; written {a.timestamp} from its queue entry)" in page, page
