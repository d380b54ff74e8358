"""PreCompact writes a savepoint itself only when what its session said since its last one fits
the cost issue 42 allows the hook (config/hook_timeouts.pre_compact_writes: the I/O floor + 100 ms
of CPU); a longer one is queued, stamped with the hook's time, and the worker writes it, or the
compaction's SessionStart does within its lock wait. One compaction is one savepoint either way,
and the summariser is told only what the hook knows: a queued savepoint's number and hash are
not known yet."""

from __future__ import annotations

import fcntl
import json
import re
import time

import pytest

from precompact.config import hook_timeouts
from precompact.config.settings import DEFAULT_COMPACT_ADVICE
from precompact.local import savepoint_log
from precompact.ops import compaction
from support.commands import precompact, wait_until, worker_finished
from support.projects import full_document, new_project, queue_entries
from support.transcript_gen import generate, payload, saved_sequence

# Over PreCompact's budget by far (a few hundred KB), and a session of the few KB most tests use.
LONG_BYTES = 2_000_000
SHORT_BYTES = 8_000
# What a hook may take beyond Python's start when it writes nothing (a loaded 2-core machine).
QUICK_SECONDS = 8.0


def created_lines(project) -> list[dict]:
    index = project.logs / "precompact-savepoint.jsonl"
    lines = [json.loads(line) for line in index.read_text().splitlines()] if index.exists() else []
    return [line for line in lines if line["event"] == "SAVEPOINT_CREATED"]


def test_the_budget_is_the_targets_room_at_layer_1s_rate():
    """What PreCompact writes itself is what the target leaves once the write's fixed cost is
    paid, at Layer 1's measured rate; 10 MB of new transcript (issue 42's case) is the worker's."""
    room = hook_timeouts.PRE_COMPACT_OVER_FLOOR_SECONDS - hook_timeouts.PRE_COMPACT_WRITE_SECONDS
    budget = int(room * hook_timeouts.LAYER_1_BYTES_PER_SECOND)
    assert 0 < budget < LONG_BYTES and budget > SHORT_BYTES
    assert hook_timeouts.pre_compact_writes(budget) and not hook_timeouts.pre_compact_writes(budget + 1)
    assert not hook_timeouts.pre_compact_writes(10_000_000)


@pytest.mark.slow
def test_a_pre_compact_over_its_budget_answers_before_any_savepoint_and_the_worker_writes_one_at_the_hooks_time(
    tmp_path,
):
    """The index lock is held by the test: the hook neither waits for it (on main it waited its
    10 s, then queued) nor writes; it leaves one queue entry and says so in fixed words. The
    worker writes the savepoint once the lock is free, seconds later, with the hook's time."""
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    transcript = generate(tmp_path / "t.jsonl", LONG_BYTES, project=project.path)
    assert not hook_timeouts.pre_compact_writes(transcript.path.stat().st_size)
    event = payload("PreCompact", project.path, transcript.path)
    project.logs.mkdir(exist_ok=True)
    with (project.logs / "precompact-savepoint.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        began = time.time()
        said = precompact(project.path, "hook", stdin=event)
        answered = time.time()
        assert said.returncode == 0, said.stderr
        assert answered - began < QUICK_SECONDS, answered - began
        assert created_lines(project) == [] and list(project.logs.glob("precompact-saves/snapshot_*.json")) == []
        assert len(queue_entries(project)) == 1
        time.sleep(2.5)  # the worker, started by the hook, waits for the lock meanwhile
    assert said.stdout.rstrip("\n") == compaction.BACKGROUND_NOTE + " " + DEFAULT_COMPACT_ADVICE, said.stdout
    assert wait_until(lambda: not queue_entries(project) and worker_finished(project.path), 120)
    [created] = created_lines(project)
    # The hook's time is the savepoint's `queued_at`; its chain timestamp is the write's (monotonic).
    assert int(began) <= created["queued_at"] <= answered, (began, created["queued_at"], answered)
    assert created["unix_timestamp"] >= created["queued_at"]
    [saved] = savepoint_log.savepoints(project.logs)
    assert (saved.sequence, saved.session_id, saved.trigger, saved.recovered) == (1, event["session_id"], "auto", None)
    assert saved.transcript_end == transcript.path.stat().st_size and saved.lines_in_part == 0
    assert transcript.conclusions[-1].encode() in full_document(project.path / saved.snapshot_file)


@pytest.mark.slow
def test_a_pre_compact_over_its_budget_then_its_session_start_at_once_gives_one_savepoint_and_its_brief(tmp_path):
    """SessionStart(compact) right after: it writes the queued savepoint itself within its lock
    wait, or waits for the worker writing it, and briefs it; the worker writes nothing more."""
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    transcript = generate(tmp_path / "t.jsonl", LONG_BYTES, project=project.path)
    before = payload("PreCompact", project.path, transcript.path)
    said = precompact(project.path, "hook", stdin=before)
    assert (
        said.returncode == 0 and said.stdout.rstrip("\n") == compaction.BACKGROUND_NOTE + " " + DEFAULT_COMPACT_ADVICE
    ), (said.stdout, said.stderr)
    start = payload("SessionStart", project.path, transcript.path, session_id=before["session_id"], source="compact")
    started = precompact(project.path, "hook", stdin=start)
    assert started.returncode == 0, started.stderr
    brief = json.loads(started.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "Restored from savepoint 1 of" in brief and "holds the full conversation before compaction." in brief, brief
    assert wait_until(lambda: not queue_entries(project) and worker_finished(project.path), 120)
    assert len(created_lines(project)) == 1
    [saved] = savepoint_log.savepoints(project.logs)
    assert (saved.session_id, saved.trigger) == (before["session_id"], "auto")


def test_the_note_over_the_budget_names_no_hash_and_says_the_save_is_queued(tmp_path):
    """Fixed words, with no savepoint number or hash (the worker writes it); a worker that cannot
    start (its log a link) is said, with where the save waits; `hooks.compact_note = ""` prints
    nothing, queued or not."""
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    transcript = generate(tmp_path / "t.jsonl", LONG_BYTES, project=project.path)
    project.logs.mkdir(exist_ok=True)
    outside = tmp_path / "outside.log"
    outside.write_text("untouched\n")
    (project.logs / "precompact-worker.log").symlink_to(outside)
    said = precompact(project.path, "hook", stdin=payload("PreCompact", project.path, transcript.path))
    assert said.returncode == 0, said.stderr
    # The user's line: queued, never "saved", since the worker that would write it cannot start.
    assert said.stderr.startswith(
        "precompact: queued, not saved yet (the background worker writes it); the background worker could not start: "
    ), said.stderr
    assert (
        said.stdout.rstrip("\n") == compaction.BACKGROUND_NOTE + " " + DEFAULT_COMPACT_ADVICE + compaction.QUEUE_WAITS
    ), said.stdout
    assert saved_sequence(said.stdout) is None and not re.search(r"sha256|savepoint \d", said.stdout)
    assert "saving the pre-compaction transcript in the background" in said.stdout
    assert "is saved" not in said.stdout and "saved as" not in said.stdout
    assert "background worker could not start" in (project.logs / "precompact-errors.log").read_text()
    assert outside.read_text() == "untouched\n"
    assert len(queue_entries(project)) == 1 and created_lines(project) == []

    config = project.path / ".precompact.toml"
    config.write_text(config.read_text().replace("[hooks]\n", '[hooks]\ncompact_note = ""\n'))
    assert precompact(project.path, "trust", "--yes").returncode == 0
    quiet = precompact(project.path, "hook", stdin=payload("PreCompact", project.path, transcript.path))
    assert quiet.returncode == 0 and quiet.stdout == "", quiet  # no note for the summariser; the user's line stays
    assert "the background worker could not start" in quiet.stderr, quiet
    assert len(queue_entries(project)) == 2


def test_a_pre_compact_within_its_budget_writes_the_savepoint_before_it_answers_and_names_it(tmp_path):
    """Within the budget, as before: the savepoint exists when the hook answers and the note names
    it with its hash. What counts is what the session said since its last savepoint: a long
    session saved already, with a little said since, is written by the hook too."""
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    short = generate(tmp_path / "short.jsonl", SHORT_BYTES, project=project.path)
    said = precompact(project.path, "hook", stdin=payload("PreCompact", project.path, short.path))
    assert said.returncode == 0, said.stderr
    assert saved_sequence(said.stdout) == 1 and len(created_lines(project)) == 1, said.stdout
    [created] = created_lines(project)
    assert f"(sha256:{created['snapshot_hash'].removeprefix('sha256:')[:12]})" in said.stdout
    assert queue_entries(project) == []

    long = generate(tmp_path / "long.jsonl", LONG_BYTES, project=project.path, seed=3)
    first = payload("PreCompact", project.path, long.path)
    assert (
        precompact(project.path, "hook", stdin=first).stdout.rstrip("\n")
        == compaction.BACKGROUND_NOTE + " " + DEFAULT_COMPACT_ADVICE
    )
    assert precompact(project.path, "flush").returncode == 0
    assert [line["sequence"] for line in created_lines(project)] == [1, 2]
    more = generate(tmp_path / "more.jsonl", SHORT_BYTES, project=project.path, seed=4)
    with long.path.open("ab") as f:
        f.write(more.path.read_bytes())
    again = precompact(project.path, "hook", stdin={**first, "hook_event_name": "PreCompact"})
    assert again.returncode == 0, again.stderr
    assert saved_sequence(again.stdout) == 3 and len(created_lines(project)) == 3, again.stdout
    assert wait_until(lambda: worker_finished(project.path), 120)


def test_the_note_over_the_budget_gives_the_users_own_advice_for_the_summary(tmp_path):
    """A note of the user's own (`hooks.compact_note`) is their advice for the summary: queued, the
    hook gives it as it does for a savepoint it wrote, after the fixed words on why it waits, its
    placeholders in fixed words (no number or hash: the worker writes the savepoint)."""
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    config = project.path / ".precompact.toml"
    own = "Keep every failing test name; {transcript} kept as {savepoint}."
    config.write_text(config.read_text().replace("[hooks]\n", f'[hooks]\ncompact_note = "{own}"\n'))
    assert precompact(project.path, "trust", "--yes").returncode == 0
    transcript = generate(tmp_path / "t.jsonl", LONG_BYTES, project=project.path)
    said = precompact(project.path, "hook", stdin=payload("PreCompact", project.path, transcript.path))
    assert said.returncode == 0, said.stderr
    assert said.stdout.rstrip("\n") == (
        f"{compaction.BACKGROUND_NOTE} Keep every failing test name; pre-compaction transcript kept as "
        "savepoint (being written in the background)."
    ), said.stdout
    assert saved_sequence(said.stdout) is None and not re.search(r"sha256|savepoint \d", said.stdout)
