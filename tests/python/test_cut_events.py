"""No event the agent cuts short loses what it carried (fix10b). An agent kills a hook at its
timeout (Codex CLI's SessionEnd at 3 s), and a worker can die too: each is killed here for real
(SIGKILL, by a process of the test's own at a chosen point, or by the kernel's clock from
outside), never by a mocked clock, and what the event carried (the end of a session, a compaction
summary's addendum) must still arrive. And an event whose input nests deeper than the JSON reader
takes (a tool's input the model wrote) still does its work."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import pytest

from precompact.boundary import logs_dir, outside_json
from precompact.config import discovery
from precompact.config import settings as configuration
from precompact.edges.hook import handle
from precompact.local import provenance, savepoint_log, snapshot
from precompact.ops import addendum, compaction
from support.commands import hook, precompact, wait_until, worker_finished
from support.projects import new_project, queue_entries
from support.transcript_gen import generate, payload, saved_sequence

PYTHON = sys.executable


def index_lines(project) -> list[dict]:
    return [json.loads(line) for line in (project.logs / "precompact-savepoint.jsonl").read_text().splitlines()]


def killed_at(project, code: str) -> int:
    """Runs `code` in a process of its own that kills itself (SIGKILL) where `code` says, after
    `from precompact...` imports it makes itself; its exit status (-9: killed there)."""
    prelude = (
        "import os, signal, sys\n"
        "from pathlib import Path\n"
        "from precompact.config import settings as configuration\n"
        "from precompact.ops import compaction\n"
        f"loaded = configuration.load(Path({str(project.path)!r}))\n"
        "def die(*_, **__):\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    return subprocess.run([PYTHON, "-c", prelude + code], capture_output=True, timeout=120, check=False).returncode


@pytest.mark.slow
def test_a_worker_killed_between_recording_a_queued_summary_and_asking_for_its_addendum_is_made_good(tmp_path):
    """The worker records a queued compaction summary, then asks for its addendum: killed
    between the two (here, at the very call that asks), the next worker finds the summary
    recorded, not asked for, and asks once; the summary is recorded once."""
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    transcript = generate(tmp_path / "t.jsonl", 40_000, project=project.path)
    before = payload("PreCompact", project.path, transcript.path)
    assert precompact(project.path, "hook", stdin=before).returncode == 0
    assert wait_until(lambda: worker_finished(project.path), 60)
    loaded = configuration.load(project.path)
    queued = snapshot.QueuedSummary(
        session_id=before["session_id"], sequence=1, trigger="auto", summary="CUT-SUMMARY", agent="claude"
    )
    snapshot.queue_summary(compaction.layer_1(loaded), queued)
    pending = project.logs / "precompact-pending" / f"{before['session_id']}.request"

    status = killed_at(
        project, "from precompact.ops import addendum\naddendum.request = die\ncompaction.write_queued(loaded)\n"
    )

    assert status == -signal.SIGKILL
    assert [line["summary"] for line in index_lines(project) if line["event"] == "COMPACT_SUMMARY"] == ["CUT-SUMMARY"]
    assert not pending.exists()
    # The next worker: the entry is still there, the summary is not recorded again, the request made.
    assert compaction.write_queued(configuration.load(project.path)).savepoints == 0
    assert pending.exists() and json.loads(pending.read_text())["sequence"] == 1
    assert [line["summary"] for line in index_lines(project) if line["event"] == "COMPACT_SUMMARY"] == ["CUT-SUMMARY"]
    assert not queue_entries(project)


def deep(levels: int) -> list:
    """A value nested `levels` deep, built without recursion (as a model's tool input may be)."""
    value: list = []
    for _ in range(levels - 1):
        value = [value]
    return value


def deep_json(levels: int) -> str:
    return "[" * levels + "]" * levels


def with_member(event: dict, key: str, levels: int) -> bytes:
    """`event`'s JSON with a member `key` nested `levels` deep, written as text (json.dumps
    recurses)."""
    text = json.dumps(event)
    return (text[:-1] + f', "{key}": {deep_json(levels)}}}').encode()


@pytest.mark.parametrize("levels", [500, 10_000])
def test_pre_compact_and_session_end_save_though_the_input_nests_deeper_than_json_reads(tmp_path, levels):
    """500 levels: json reads it, the handlers' limit (128) does not; 10,000: json cannot. Either
    way the deep member is left out and the event does its work (before, the event failed: the
    whole input refused as not JSON, or the handler's failure logged)."""
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    transcript = generate(tmp_path / "t.jsonl", 40_000, project=project.path)
    before = payload("PreCompact", project.path, transcript.path)
    saved = hook(with_member(before, "tool_input", levels), cwd=project.path)
    assert saved.returncode == 0
    assert saved_sequence(saved.stdout) == 1, (saved.stdout, saved.stderr)
    longer = generate(tmp_path / "t2.jsonl", 60_000, project=project.path, seed=8)
    end = payload("SessionEnd", project.path, longer.path, reason="exit")
    assert hook(with_member(end, "extra", levels), cwd=project.path).returncode == 0
    assert [s.trigger for s in savepoint_log.savepoints(project.logs)] == ["auto", "session_end"]
    assert not (project.logs / "precompact-errors.log").exists()


def test_post_tool_use_gives_its_addendum_though_the_tool_input_nests_10000_deep(tmp_path):
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    session_id = "s-deep-tool-input"
    record = json.dumps({"session_id": session_id, "sequence": 1, "text": "ADDENDUM-MARKER"}).encode()
    ready = f"{discovery.PENDING_DIR}/{session_id}{discovery.READY_SUFFIX}"
    logs_dir.write_atomic(project.logs, ready, provenance.stamped(addendum.STAMP_PURPOSE, record))
    event = payload("PostToolUse", project.path, session_id=session_id, tool_name="Write")
    answered = hook(with_member(event, "tool_input", 10_000), cwd=project.path)
    assert answered.returncode == 0
    given = json.loads(answered.stdout)["hookSpecificOutput"]
    assert (given["hookEventName"], given["additionalContext"]) == ("PostToolUse", "ADDENDUM-MARKER")


def test_a_deep_input_is_skipped_in_time_and_memory_linear_in_its_size():
    """The deep member is never built: reading an input ten times as deep costs about ten times
    the time (never the square), and its peak memory stays a small multiple of the text."""
    import tracemalloc

    def cost(levels: int) -> tuple[float, int]:
        text = '{"hook_event_name": "PostToolUse", "tool_input": ' + '[{"k": ' * levels + "1" + "}]" * levels + "}"
        tracemalloc.start()
        began = time.process_time()
        assert outside_json.shallow_object(text) == {"hook_event_name": "PostToolUse"}
        took = time.process_time() - began
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert peak < 4 * len(text) + (1 << 20), (levels, peak, len(text))
        return took, peak

    small, _ = cost(10_000)
    large, _ = cost(100_000)
    assert large < 30 * max(small, 0.01), (small, large)


def test_a_deep_input_that_is_not_json_is_refused_in_one_line():
    for text in ('{"a": ' + "[" * 2000 + "}", '{"a": ["]' + "]" * 2000 + "}", "[" * 2000):
        with pytest.raises(ValueError) as refused:
            outside_json.shallow_object(text)
        assert "\n" not in str(refused.value)
    answered = handle(("{" + '"a":' + "[" * 5000 + "}").encode())
    assert answered.stderr.startswith("precompact hook: stdin is not JSON (") and not answered.stdout


def hook_killed_at(project, event: dict, patch: str) -> int:
    """`precompact hook` given `event`, in a process that kills itself (SIGKILL) where `patch`
    puts a call of `die`; its exit status (-9: killed there; 0: it never got there)."""
    code = (
        "import os, signal\n"
        "def die(*_, **__):\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
        f"{patch}"
        "from precompact.edges.hook import run\n"
        "run()\n"
    )
    given = json.dumps(event).encode()
    run = subprocess.run(
        [PYTHON, "-c", code], input=given, cwd=project.path, capture_output=True, timeout=120, check=False
    )
    return run.returncode


MID_WRITE = (
    "from precompact.local import snapshot\n"
    "written = snapshot.history_part\n"
    "blocks = []\n"
    "def part(*given):\n"
    "    blocks.append(1)\n"
    "    if len(blocks) == 8:\n"
    "        die()\n"
    "    return written(*given)\n"
    "snapshot.history_part = part\n"
)
# Where SessionEnd is killed, and whether its worker was started by then.
KILL_POINTS = {
    "queued, before the worker starts": ("from precompact.ops import background\nbackground.spawn = die\n", False),
    "worker started, before the write": ("from precompact.local import snapshot\nsnapshot.write_entry = die\n", True),
    "in the middle of the write, the index lock held": (MID_WRITE, True),
    "its index line appended, its entry not yet removed": (
        "from precompact.local import snapshot\nsnapshot._unqueue = die\n",
        True,
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("point", list(KILL_POINTS))
def test_session_end_killed_at_any_point_leaves_its_savepoint_written_once(tmp_path, point):
    """SessionEnd queues its savepoint first: killed anywhere after that, the worker (the one
    it started, or the next) writes it, once, whole; before, a SessionEnd cut mid-write left
    nothing saved and nothing queued."""
    patch, worker_started = KILL_POINTS[point]
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    transcript = generate(tmp_path / "t.jsonl", 2_000_000, project=project.path)
    event = payload("SessionEnd", project.path, transcript.path, reason="exit")

    assert hook_killed_at(project, event, patch) == -signal.SIGKILL

    if worker_started:
        assert wait_until(lambda: not queue_entries(project) and worker_finished(project.path), 120)
    else:  # the next worker (any later event's) takes the queue
        assert not savepoint_log.savepoints(project.logs) and len(queue_entries(project)) == 1
        assert compaction.write_queued(configuration.load(project.path)).savepoints == 1
        assert not queue_entries(project)
    created = [line for line in index_lines(project) if line["event"] == "SAVEPOINT_CREATED"]
    assert len(created) == 1, created
    [saved] = savepoint_log.savepoints(project.logs)
    assert (saved.session_id, saved.trigger, saved.recovered) == (event["session_id"], "session_end", None)
    assert saved.transcript_end == transcript.path.stat().st_size  # all of it
    assert not list((project.logs / "precompact-saves").glob(".*.tmp"))


@pytest.mark.slow
def test_session_end_of_a_session_longer_than_its_timeout_holds_leaves_the_savepoint_to_the_worker(tmp_path):
    """Claude Code gives SessionEnd 5 s: 30 MB never saved is more than the hook may write in
    half of that (config/hook_timeouts.writes_in_time: 25 MB; Codex's 3 s, 15 MB), so the hook
    queues it and answers at once, and the worker writes it, whole and unmarked as a recovery."""
    from precompact.config import hook_timeouts

    assert hook_timeouts.writes_in_time("claude", "SessionEnd", 25_000_000)
    assert not hook_timeouts.writes_in_time("claude", "SessionEnd", 25_000_001)
    assert not hook_timeouts.writes_in_time("codex", "SessionEnd", 15_000_001)
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    transcript = generate(tmp_path / "t.jsonl", 30_000_000, project=project.path)
    size = transcript.path.stat().st_size
    event = payload("SessionEnd", project.path, transcript.path, reason="exit")
    began = time.monotonic()
    ended = precompact(project.path, "hook", stdin=event)
    took = time.monotonic() - began
    assert ended.returncode == 0, ended.stderr
    assert took < hook_timeouts.installed("claude", "SessionEnd") / 2, took
    assert wait_until(lambda: bool(savepoint_log.savepoints(project.logs)), 300)
    [saved] = savepoint_log.savepoints(project.logs)
    assert (saved.trigger, saved.recovered, saved.transcript_end) == ("session_end", None, size)
    [created] = [line for line in index_lines(project) if line["event"] == "SAVEPOINT_CREATED"]
    assert snapshot.QUEUE_ENTRY.fullmatch(created["queue_entry"]) and not queue_entries(project)
    assert wait_until(lambda: worker_finished(project.path), 120)


# Where the worker writing a savepoint PreCompact queued is killed.
WORKER_KILL_POINTS = {
    "in the middle of the write, the index lock held": MID_WRITE,
    "its index line appended, its entry not yet removed": "from precompact.local import snapshot\nsnapshot._unqueue = die\n",
}


@pytest.mark.slow
@pytest.mark.parametrize("point", list(WORKER_KILL_POINTS))
def test_a_long_pre_compact_killed_after_queuing_and_its_worker_killed_writing_leave_it_to_flush_once(tmp_path, point):
    """A PreCompact over its budget (config/hook_timeouts.pre_compact_writes) queues its savepoint
    and writes nothing itself: killed before it starts the worker, it leaves the entry (before, it
    had written the savepoint by then); a worker killed writing it leaves the entry or the
    savepoint; `precompact flush` then writes it, once, whole, with the hook's time."""
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    transcript = generate(tmp_path / "t.jsonl", 2_000_000, project=project.path)
    event = payload("PreCompact", project.path, transcript.path)
    began = time.time()
    assert hook_killed_at(project, event, "from precompact.ops import background\nbackground.spawn = die\n") == -9
    answered = time.time()
    assert not savepoint_log.savepoints(project.logs) and len(queue_entries(project)) == 1

    worker = f"from precompact.edges import worker\nworker.run(Path({str(project.path)!r}))\n"
    assert killed_at(project, WORKER_KILL_POINTS[point] + worker) == -signal.SIGKILL
    assert len(queue_entries(project)) == 1, "a killed worker leaves the entry"

    flushed = precompact(project.path, "flush")
    assert flushed.returncode == 0, flushed.stdout + flushed.stderr
    assert not queue_entries(project)
    [created] = [line for line in index_lines(project) if line["event"] == "SAVEPOINT_CREATED"]
    # The hook's time is the savepoint's `queued_at`; its chain timestamp is the write's (monotonic).
    assert int(began) <= created["queued_at"] <= answered, (began, created["queued_at"], answered)
    assert created["unix_timestamp"] >= created["queued_at"]
    [saved] = savepoint_log.savepoints(project.logs)
    assert (saved.session_id, saved.trigger, saved.recovered) == (event["session_id"], "auto", None)
    assert saved.transcript_end == transcript.path.stat().st_size
    assert not list((project.logs / "precompact-saves").glob(".*.tmp"))
