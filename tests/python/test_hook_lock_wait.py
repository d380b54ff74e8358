"""An event waits for the index lock only as long as the agent lets it run (review9b F3): one that
the agent cancels while it waits has saved nothing, queued nothing and said nothing. Every
timeout precompact installs is config/hook_timeouts.py's, and each event's wait is derived from
it; past that wait the save (a savepoint, a compaction summary) is queued for the worker. The lock
is held here by a process of the test's own, stopped by the test."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from precompact.config import hook_timeouts
from precompact.config import install as installer
from precompact.local import savepoint_log, snapshot
from support.commands import precompact, wait_until, worker_finished
from support.projects import full_document, new_project, queue_entries
from support.transcript_gen import generate, payload

REPO = Path(__file__).resolve().parents[2]
# What an event needs beside its lock wait, at the least: Python's start, the configuration read,
# the answer. An event whose wait leaves less than this of its timeout is cancelled while waiting.
ROOM_SECONDS = 2.0


class LockHolder:
    """A process that holds `lock` (flock, exclusive) until the test stops it."""

    def __init__(self, lock: Path) -> None:
        lock.parent.mkdir(parents=True, exist_ok=True)
        code = (
            "import fcntl, sys\n"
            f"f = open({str(lock)!r}, 'a')\n"
            "fcntl.flock(f, fcntl.LOCK_EX)\n"
            "print('held', flush=True)\n"
            "sys.stdin.read()\n"
        )
        self.process = subprocess.Popen(
            [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert self.process.stdout is not None and self.process.stdout.readline() == "held\n"

    def stop(self) -> None:
        """Lets go of the lock: the process ends when its stdin closes."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=10)


def index_lock(project) -> LockHolder:
    return LockHolder(project.logs / "precompact-savepoint.lock")


def index_lines(project) -> list[dict]:
    return [json.loads(line) for line in (project.logs / "precompact-savepoint.jsonl").read_text().splitlines()]


def test_every_event_waits_for_the_lock_well_inside_the_timeout_its_agent_gives_it():
    """The rule, over the whole table: an event's lock wait leaves it ROOM_SECONDS of its timeout
    (a wait raised, or a timeout lowered, fails here); SessionEnd tries the lock once."""
    for agent, events in hook_timeouts.INSTALLED_SECONDS.items():
        for event, seconds in events.items():
            waited = hook_timeouts.lock_wait(agent, event)
            assert 0 <= waited <= seconds - ROOM_SECONDS, (agent, event, waited, seconds)
        assert hook_timeouts.lock_wait(agent, "SessionEnd") == 0
    # A hook run for an agent or event it was not installed for waits what the least of them gives.
    assert hook_timeouts.lock_wait("someone", "PostCompact") == 15 * hook_timeouts.LOCK_SHARE
    assert hook_timeouts.lock_wait("claude", "Nothing") == 0


def test_every_timeout_precompact_installs_is_the_tables():
    """`install` for each agent, the plugin's hooks/hooks.json and OpenCode's plugin give each
    event the timeout the waits are derived from."""
    table = hook_timeouts.INSTALLED_SECONDS
    assert {event: seconds for event, (_, seconds) in installer.HOOKS.items()} == table["claude"]
    assert installer.CODEX_HOOKS == table["codex"]
    assert installer.GEMINI_HOOKS == {event: seconds * 1000 for event, seconds in table["gemini"].items()}
    plugin = json.loads((REPO / "hooks" / "hooks.json").read_text())["hooks"]
    assert {event: group[0]["hooks"][0]["timeout"] for event, group in plugin.items()} == table["claude"]
    script = (REPO / "client" / "precompact" / "config" / "opencode_plugin.js").read_text()
    budgets = re.search(r"^const BUDGET_MS = (\{.*\});$", script, re.MULTILINE)
    assert budgets is not None
    given = json.loads(re.sub(r"(\w+):", r'"\1":', budgets.group(1)))
    assert given == {event: seconds * 1000 for event, seconds in table["opencode"].items()}


@pytest.mark.slow
def test_session_end_queues_at_once_while_another_save_holds_the_lock_and_the_worker_saves_it(tmp_path):
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    transcript = generate(tmp_path / "t.jsonl", 4_000, project=project.path)
    event = payload("SessionEnd", project.path, transcript.path, reason="exit")
    holder = index_lock(project)
    try:
        began = time.monotonic()
        ended = precompact(project.path, "hook", stdin=event)
        took = time.monotonic() - began
        assert ended.returncode == 0, ended.stderr
        assert took < hook_timeouts.installed("claude", "SessionEnd"), took
        [entry] = queue_entries(project)
        assert not entry.endswith(snapshot.SUMMARY_SUFFIX)
        assert not list(project.logs.glob("precompact-saves/snapshot_*.json"))
    finally:
        holder.stop()
    assert wait_until(lambda: not queue_entries(project), 30), queue_entries(project)
    [saved] = savepoint_log.savepoints(project.logs)
    assert (saved.session_id, saved.trigger) == (event["session_id"], "session_end")


@pytest.mark.slow
def test_post_compact_queues_its_summary_while_the_lock_is_held_and_the_worker_records_it(tmp_path):
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    transcript = generate(tmp_path / "t.jsonl", 4_000, project=project.path)
    before = payload("PreCompact", project.path, transcript.path)
    assert precompact(project.path, "hook", stdin=before).returncode == 0
    after = payload(
        "PostCompact",
        project.path,
        transcript.path,
        session_id=before["session_id"],
        compact_summary="<summary>SUMMARY-MARKER: the admin API moved to 8443</summary>",
    )
    holder = index_lock(project)
    try:
        began = time.monotonic()
        compacted = precompact(project.path, "hook", stdin=after)
        took = time.monotonic() - began
        assert compacted.returncode == 0 and compacted.stdout == "", (compacted.stdout, compacted.stderr)
        assert took < hook_timeouts.installed("claude", "PostCompact"), took
        [entry] = queue_entries(project)
        assert entry.endswith(snapshot.SUMMARY_SUFFIX)
        assert "SUMMARY-MARKER" not in (project.logs / "precompact-savepoint.jsonl").read_text()
    finally:
        holder.stop()
    assert wait_until(lambda: not queue_entries(project), 30), queue_entries(project)
    [line] = [line for line in index_lines(project) if line["event"] == "COMPACT_SUMMARY"]
    assert (line["sequence"], line["trigger"]) == (1, "auto")
    assert line["summary"] == "SUMMARY-MARKER: the admin API moved to 8443"
    # The worker then asks for what the summary left out, as PostCompact does when it records it.
    pending = project.logs / "precompact-pending"
    ready = pending / f"{before['session_id']}.json"
    assert wait_until(ready.exists, 30), sorted(p.name for p in pending.iterdir()) if pending.is_dir() else None


@pytest.mark.slow
def test_a_savepoint_post_compact_recovers_and_its_summary_are_both_queued_and_written_in_turn(tmp_path):
    """PreCompact did not fire: PostCompact's savepoint of what the compaction dropped and the
    summary that belongs to it are both left to the worker, which attaches the summary to it."""
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    transcript = generate(tmp_path / "t.jsonl", 4_000, project=project.path)
    after = payload("PostCompact", project.path, transcript.path, compact_summary="RECOVERED-MARKER")
    holder = index_lock(project)
    try:
        compacted = precompact(project.path, "hook", stdin=after)
        assert compacted.returncode == 0 and compacted.stdout == "", (compacted.stdout, compacted.stderr)
        first, second = queue_entries(project)
        assert not first.endswith(snapshot.SUMMARY_SUFFIX) and second.endswith(snapshot.SUMMARY_SUFFIX)
    finally:
        holder.stop()
    assert wait_until(lambda: not queue_entries(project), 30), queue_entries(project)
    [saved] = savepoint_log.savepoints(project.logs)
    assert saved.session_id == after["session_id"] and saved.compact_summary == "RECOVERED-MARKER"


@pytest.mark.slow
def test_one_compaction_while_the_lock_is_held_is_queued_once_and_written_once_with_its_summary(tmp_path):
    """PreCompact queues the savepoint; SessionStart(compact) and PostCompact find it queued (not
    missing) and queue no copy of it; the worker writes one savepoint and records the summary on it
    (review11a F5: three identical savepoints, each pushed and posted)."""
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    transcript = generate(tmp_path / "t.jsonl", 20_000, project=project.path)
    session = {"session_id": "s-onecompaction"}
    holder = index_lock(project)
    try:
        for event, extra in (
            ("PreCompact", {}),
            ("SessionStart", {"source": "compact"}),
            ("PostCompact", {"compact_summary": "<summary>SUMMARY-MARKER</summary>"}),
        ):
            done = precompact(
                project.path, "hook", stdin=payload(event, project.path, transcript.path, **session, **extra)
            )
            assert done.returncode == 0, (event, done.stderr)
        first, second = queue_entries(project)
        assert not first.endswith(snapshot.SUMMARY_SUFFIX) and second.endswith(snapshot.SUMMARY_SUFFIX)
    finally:
        holder.stop()
    assert wait_until(lambda: not queue_entries(project), 60), queue_entries(project)
    [saved] = savepoint_log.savepoints(project.logs)
    assert (saved.session_id, saved.trigger, saved.compact_summary) == ("s-onecompaction", "auto", "SUMMARY-MARKER")


def test_a_queued_summary_this_machine_did_not_stamp_is_removed_unread(tmp_path):
    """A summary entry that came with the project (no stamp of this machine's key) would put
    anyone's text in the index as a session's compaction summary: removed, never recorded."""
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    transcript = generate(tmp_path / "t.jsonl", 4_000, project=project.path)
    before = payload("PreCompact", project.path, transcript.path)
    assert precompact(project.path, "hook", stdin=before).returncode == 0
    # The worker the hook started writes the queue too: done before the entry is planted, so that
    # the call below is the one that meets it.
    assert wait_until(lambda: worker_finished(project.path), 120)
    queue = project.logs / "precompact-queue"
    queue.mkdir(exist_ok=True)
    planted = {
        "session_id": before["session_id"],
        "sequence": 1,
        "trigger": "auto",
        "summary": "PLANTED-SUMMARY",
        "agent": "claude",
    }
    (queue / f"{time.time_ns():020d}-1-summary.json").write_text(json.dumps(planted))
    from precompact.config import settings as configuration
    from precompact.ops import compaction

    done = compaction.write_queued(configuration.load(project.path))
    assert (done.savepoints, done.left) == (0, 0)
    [note] = done.notes
    assert note.endswith("removed unread: not written by this machine (no stamp of its key)"), note
    assert not queue_entries(project)
    assert "PLANTED-SUMMARY" not in (project.logs / "precompact-savepoint.jsonl").read_text()


@pytest.mark.slow
def test_a_session_start_that_cannot_record_its_brief_in_time_gives_it_all_the_same(tmp_path):
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    transcript = generate(tmp_path / "t.jsonl", 4_000, project=project.path)
    before = payload("PreCompact", project.path, transcript.path)
    assert precompact(project.path, "hook", stdin=before).returncode == 0
    start = payload("SessionStart", project.path, transcript.path, session_id=before["session_id"], source="compact")
    holder = index_lock(project)
    try:
        began = time.monotonic()
        started = precompact(project.path, "hook", stdin=start)
        took = time.monotonic() - began
    finally:
        holder.stop()
    assert took < hook_timeouts.installed("claude", "SessionStart"), took
    context = json.loads(started.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "savepoint 1" in context, context
    errors = (project.logs / "precompact-errors.log").read_text()
    assert "SessionStart: the brief of savepoint 1 is given unrecorded: lock" in errors, errors
    assert not [line for line in index_lines(project) if line["event"] == "BRIEF_DELIVERED"]


def queued_pre_compact(project, transcript) -> dict:
    """A PreCompact savepoint left queued, as the hook leaves it when the index lock stays busy
    past its wait (made here, so that no worker writes it before the test's next step); the
    PreCompact event."""
    from precompact.config import settings as configuration
    from precompact.local import snapshot
    from precompact.ops import compaction

    event = payload("PreCompact", project.path, transcript.path)
    session = snapshot.Session(
        session_id=event["session_id"], transcript_path=str(transcript.path), cwd=str(project.path), trigger="auto"
    )
    snapshot.queue(compaction.layer_1(configuration.load(project.path)), session)
    assert len(queue_entries(project)) == 1
    return event


def test_a_savepoint_queued_at_precompact_is_briefed_after_the_compaction_and_never_saved_twice(tmp_path):
    """SessionStart after the compaction writes the savepoint PreCompact queued and briefs it:
    recovering "what PreCompact missed" from the transcript instead made a second savepoint of
    the same history, and the worker then wrote the queued one as well."""
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    transcript = generate(tmp_path / "t.jsonl", 4_000, project=project.path)
    before = queued_pre_compact(project, transcript)
    start = payload("SessionStart", project.path, transcript.path, session_id=before["session_id"], source="compact")
    started = precompact(project.path, "hook", stdin=start)
    assert started.returncode == 0, started.stderr
    assert queue_entries(project) == []
    [saved] = savepoint_log.savepoints(project.logs)
    assert (saved.sequence, saved.session_id, saved.trigger) == (1, before["session_id"], "auto")
    brief = json.loads(started.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "Restored from savepoint 1 of" in brief, brief
    # Saved whole, only later: not "recovered from the transcript" (PreCompact missing some of it).
    assert "holds the full conversation before compaction." in brief and "recovered from" not in brief, brief
    assert wait_until(lambda: worker_finished(project.path), 30)
    assert [s.sequence for s in savepoint_log.savepoints(project.logs)] == [1]


@pytest.mark.slow
@pytest.mark.parametrize("event_name", ["SessionStart", "PostCompact"])
def test_a_savepoint_still_queued_past_the_lock_wait_is_not_recovered_a_second_time(tmp_path, event_name):
    """The index lock busy through the whole wait of the compaction's later hooks: they queue no
    second savepoint of what PreCompact's queued one holds; PostCompact's summary is queued after
    it, and the worker records it with that savepoint."""
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    transcript = generate(tmp_path / "t.jsonl", 4_000, project=project.path)
    before = queued_pre_compact(project, transcript)
    extra = {"source": "compact"} if event_name == "SessionStart" else {"compact_summary": "QUEUED-SUMMARY-MARKER"}
    after = payload(event_name, project.path, transcript.path, session_id=before["session_id"], **extra)
    holder = index_lock(project)
    try:
        done = precompact(project.path, "hook", stdin=after)
        assert done.returncode == 0, done.stderr
        entries = queue_entries(project)
        assert [e.endswith(snapshot.SUMMARY_SUFFIX) for e in entries] == [False] + (
            [True] if event_name == "PostCompact" else []
        )
    finally:
        holder.stop()
    assert wait_until(lambda: not queue_entries(project), 30), queue_entries(project)
    [saved] = savepoint_log.savepoints(project.logs)
    assert (saved.sequence, saved.trigger) == (1, "auto")
    if event_name == "PostCompact":
        assert saved.compact_summary == "QUEUED-SUMMARY-MARKER"


def test_a_queued_savepoint_another_process_wrote_first_is_not_written_again(tmp_path):
    """The worker and a session start after a compaction may both take one queue entry: the one
    that gets the index lock second finds it gone, and writes nothing."""
    from precompact.config import settings as configuration
    from precompact.local import capture, snapshot
    from precompact.ops import compaction

    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    transcript = generate(tmp_path / "t.jsonl", 4_000, project=project.path)
    queued_pre_compact(project, transcript)
    settings = compaction.layer_1(configuration.load(project.path))
    [name] = queue_entries(project)
    (project.logs / "precompact-queue" / name).unlink()  # taken by the other process
    assert snapshot.write_entry(settings, name, 5.0, capture.holder) == snapshot.Taken()
    assert snapshot.write_queued_savepoints(settings, capture.holder, 5.0).savepoints == 0
    assert savepoint_log.savepoints(project.logs) == []
    assert not list(project.logs.glob("precompact-saves/snapshot_*.json"))


def test_a_savepoint_queued_while_a_line_is_being_written_holds_the_whole_lines_before_it(tmp_path):
    """The queue entry bounds the savepoint at the transcript's whole lines: the line being
    written when the hook queued it is the next savepoint's, never saved as the malformed part
    written so far."""
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    transcript = generate(tmp_path / "t.jsonl", 4_000, project=project.path)
    line = json.dumps({"type": "user", "uuid": "late-line", "message": {"role": "user", "content": "LATE-MARKER"}})
    with transcript.path.open("a") as f:
        f.write(line[:30])
    before = queued_pre_compact(project, transcript)
    with transcript.path.open("a") as f:
        f.write(line[30:] + "\n")
    start = payload("SessionStart", project.path, transcript.path, session_id=before["session_id"], source="compact")
    assert precompact(project.path, "hook", stdin=start).returncode == 0
    [queued, *later] = savepoint_log.savepoints(project.logs)
    assert queued.recovered == savepoint_log.QUEUED_REASON and queued.lines_in_part == 0
    assert b"precompact_unparsed_line" not in full_document(project.path / queued.snapshot_file)
    # The completed line was said after the queued savepoint: the compaction's hook saves it.
    assert [s.recovered for s in later] == ["lagging_transcript"]
    assert b"LATE-MARKER" in full_document(project.path / later[0].snapshot_file)


# A compaction's hook writing a queued savepoint, killed before the savepoint's index line (the
# snapshot and its chunks written): an OOM kill, a reboot, the agent's timeout.
KILLED_BEFORE_THE_INDEX_LINE = """
import os, signal, sys
from pathlib import Path
from precompact.config import settings as configuration
from precompact.local import capture, savepoint_log, snapshot
from precompact.ops import compaction
savepoint_log.append = lambda *args, **kwargs: os.kill(os.getpid(), signal.SIGKILL)
snapshot.write_queued_savepoints(compaction.layer_1(configuration.load(Path(sys.argv[1]))), capture.holder, 5.0)
"""


def test_a_hook_killed_writing_a_queued_savepoint_leaves_it_queued_for_the_next(tmp_path):
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    transcript = generate(tmp_path / "t.jsonl", 4_000, project=project.path)
    before = queued_pre_compact(project, transcript)
    killed = subprocess.run(
        [sys.executable, "-c", KILLED_BEFORE_THE_INDEX_LINE, str(project.path)], check=False, timeout=120
    )
    assert killed.returncode == -signal.SIGKILL
    assert len(queue_entries(project)) == 1 and savepoint_log.savepoints(project.logs) == []
    start = payload("SessionStart", project.path, transcript.path, session_id=before["session_id"], source="compact")
    started = precompact(project.path, "hook", stdin=start)
    assert started.returncode == 0, started.stderr
    assert queue_entries(project) == []
    [saved] = savepoint_log.savepoints(project.logs)
    assert (saved.sequence, saved.session_id, saved.trigger) == (1, before["session_id"], "auto")
    assert "Restored from savepoint 1 of" in json.loads(started.stdout)["hookSpecificOutput"]["additionalContext"]


def test_flush_while_a_savepoint_a_hook_queued_is_not_written_says_queued_and_exits_3(tmp_path, monkeypatch):
    """A hook queued its savepoint (the index lock busy) and flush cannot write it either (the lock
    still busy past its wait, shortened here): flush is not "up to date" while it waits (exit 3,
    `--json` state queued on the layer, naming what writes it); once the lock is free, the next
    flush writes it and pushes it (exit 0)."""
    from precompact.local import snapshot
    from support.commands import invoke

    project = new_project(tmp_path, "p", git_layer=True, chain_layer=False)
    transcript = generate(tmp_path / "t.jsonl", 4_000, project=project.path)
    holder = index_lock(project)
    try:
        ended = precompact(project.path, "hook", stdin=payload("SessionEnd", project.path, transcript.path))
        assert ended.returncode == 0, ended.stderr
        assert len(queue_entries(project)) == 1
        monkeypatch.chdir(project.path)
        monkeypatch.setattr(snapshot, "QUEUED_LOCK_TIMEOUT_SECONDS", 0.2)
        flushed = invoke("flush", "--json")
        assert flushed.exit_code == 3, flushed.output
        layer_2 = json.loads(flushed.stdout)["layer_2"]
        assert layer_2["state"] == "queued", layer_2
        assert layer_2["problem"].startswith("1 savepoint(s) a hook left queued (the index lock was busy)"), layer_2
        assert "`precompact flush` writes them first" in layer_2["problem"], layer_2
        said = invoke("flush")
        assert said.exit_code == 3 and "… Layer 2: queued: 1 savepoint(s) a hook left queued" in said.output
        assert len(queue_entries(project)) == 1, "the index lock is held: nothing wrote it"
    finally:
        holder.stop()
    again = invoke("flush")
    assert again.exit_code == 0 and "✓ Layer 2: up to date" in again.output, again.output
    assert queue_entries(project) == []
    assert [s.layer_2 for s in savepoint_log.savepoints(project.logs)] == ["PUSHED"]


def test_resurrect_while_a_later_savepoint_is_queued_says_so_and_is_not_ready(tmp_path):
    """review12a F4: savepoint 1 written, savepoint 2 of the same session only a queue entry (the
    index busy at PreCompact, its worker gone): `resurrect` restored 1 and said "Gap: 0 later
    savepoints (continuous)", "Ready to resume work", exit 0, while `verify` said the queue (exit
    4). It says what is queued in the report and `--json`, and exits 3 until `flush` writes it."""
    from precompact.config import settings as configuration
    from precompact.local import snapshot
    from precompact.ops import compaction

    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    transcript = generate(tmp_path / "t.jsonl", 8_000, project=project.path)
    made = precompact(project.path, "savepoint", "--transcript", str(transcript.path), "--session-id", "s-gap")
    assert made.returncode == 3, made.stdout + made.stderr  # Layers 2 and 3 off
    generate(transcript.path, 16_000, project=project.path)  # the session goes on, then compacts
    session = snapshot.Session(
        session_id="s-gap", transcript_path=str(transcript.path), cwd=str(project.path), trigger="auto"
    )
    snapshot.queue(compaction.layer_1(configuration.load(project.path)), session)
    said = (
        "1 savepoint(s) queued by a hook for the background worker and not written yet (logs/precompact-queue/): "
        "run `precompact flush`"
    )
    reported = precompact(project.path, "resurrect")
    assert reported.returncode == 3, reported.stdout + reported.stderr
    assert f"Gap: 0 later savepoints written; {said}" in reported.stdout, reported.stdout
    assert "continuous" not in reported.stdout and "Ready to resume work" not in reported.stdout, reported.stdout
    assert "NOT THE LATEST: what a hook queued is not written yet" in reported.stdout, reported.stdout
    as_json = precompact(project.path, "resurrect", "--json")
    assert as_json.returncode == 3, as_json.stderr
    answer = json.loads(as_json.stdout)
    assert (answer["sequence"], answer["later_savepoints"], answer["queued"]) == (1, 0, said), answer
    assert precompact(project.path, "verify").returncode == 4, "the verdict resurrect now agrees with"
    assert precompact(project.path, "flush").returncode == 0
    assert [s.sequence for s in savepoint_log.savepoints(project.logs)] == [1, 2]
    after = precompact(project.path, "resurrect")
    assert after.returncode == 0, after.stdout + after.stderr
    assert "Last savepoint: #2" in after.stdout and "Gap: 0 later savepoints (continuous)" in after.stdout
    assert (
        "Ready to resume work." in after.stdout
        and json.loads(precompact(project.path, "resurrect", "--json").stdout)["queued"] is None
    )
