"""Loss and stalls (issue #48): a network read that never ends, a hook that waits for the index
lock, a save killed between its snapshot and its index line. Each through the installed binary."""

from __future__ import annotations

import fcntl
import json
import os
import resource
import subprocess
import threading
import time

import pytest

from support.commands import PRECOMPACT, RUN_SECONDS, precompact, wait_until, worker_finished
from support.mock_http import Exchange, MockServer
from support.projects import full_document, new_project
from support.transcript_gen import generate, payload

# Each waits out a deadline (10 s of lock, 10 s of a call) or runs hook, worker and doctor.
pytestmark = pytest.mark.slow

TRICKLE_SECONDS = 5
# rpc.DEFAULT_TIMEOUT_SECONDS, the whole of one call, and room for the process around it.
CALL_DEADLINE_SECONDS = 10
MARGIN_SECONDS = 8


class Trickle(MockServer):
    """A JSON-RPC endpoint that answers every call with a valid answer, one byte every five
    seconds: each read gets a byte long before any per-read timeout."""

    def __init__(self):
        super().__init__()
        self.stopped = threading.Event()

    def answer(self, exchange: Exchange, body: dict) -> None:
        reply = b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n{"jsonrpc":"2.0","id":1,"result":"ok"} '
        for byte in reply:
            if self.stopped.wait(TRICKLE_SECONDS):
                return
            try:
                exchange.wfile.write(bytes([byte]))
                exchange.wfile.flush()
            except OSError:
                return

    def stop(self) -> None:
        self.stopped.set()
        super().stop()


def test_a_trickling_cluster_ends_flush_verify_and_the_worker_within_the_deadline(tmp_path):
    worked = new_project(tmp_path, "worked", git_layer=False, chain_layer=True)
    # Saved with the cluster unreachable at once (a closed port): its worker is done in seconds
    # and holds no flush lock while `flush` and `verify` below meet the trickling cluster.
    asked = new_project(tmp_path, "asked", git_layer=False, chain_layer=True)
    transcript = generate(tmp_path / "t.jsonl", 2_000, project=asked.path)
    saved = precompact(asked.path, "hook", stdin=payload("PreCompact", asked.path, transcript.path))
    assert saved.returncode == 0, saved.stderr
    with Trickle() as cluster:
        env = {"PRECOMPACT_CLUSTER": cluster.url}
        saved = precompact(worked.path, "hook", stdin=payload("PreCompact", worked.path, transcript.path), env=env)
        assert saved.returncode == 0, saved.stderr
        # The worker the hook started gives up its first flush at the deadline, with the reason.
        worker_log = worked.logs / "precompact-worker.log"
        assert wait_until(
            lambda: worker_log.exists() and "unreachable" in worker_log.read_text(),
            CALL_DEADLINE_SECONDS + MARGIN_SECONDS,
        ), worker_log.read_text() if worker_log.exists() else "no worker log"
        said = next(line for line in worker_log.read_text().splitlines() if "unreachable" in line)
        assert "no whole answer to" in said and f"within {CALL_DEADLINE_SECONDS} s" in said, said
        for command in ("flush", "verify"):
            began = time.monotonic()
            done = precompact(asked.path, command, env=env, timeout=4 * CALL_DEADLINE_SECONDS)
            took = time.monotonic() - began
            assert done.returncode != 0 and "Traceback" not in done.stderr, (command, done.stdout, done.stderr)
            assert took < CALL_DEADLINE_SECONDS + MARGIN_SECONDS, (command, took, done.stdout, done.stderr)
            reasons = [line for line in (done.stdout + done.stderr).splitlines() if "no whole answer to" in line]
            assert reasons and f"cluster {cluster.url} unreachable" in reasons[0], (command, done.stdout, done.stderr)


def test_a_snapshot_left_without_its_index_line_is_reported_then_removed_by_the_next_save(tmp_path):
    """kill -9 between a snapshot's rename and its index line leaves a snapshot file no line
    names (the rename is durable first). That state, made directly: doctor names it, and the
    next save removes it once it is old enough that no `restore` can still be writing it."""
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    transcript = generate(tmp_path / "t.jsonl", 4_000, project=project.path)
    first = precompact(project.path, "hook", stdin=payload("PreCompact", project.path, transcript.path))
    assert first.returncode == 0, first.stderr
    saves = project.logs / "precompact-saves"
    [indexed] = saves.glob("snapshot_*.json")
    left = saves / "snapshot_2026-01-02T03-04-05Z_000002.json"
    left.write_bytes(indexed.read_bytes())
    an_hour_ago = time.time() - 3600
    os.utime(left, (an_hour_ago, an_hour_ago))
    doctor = precompact(project.path, "doctor")
    [line] = [line for line in doctor.stdout.splitlines() if "snapshots:" in line]
    assert line.startswith("✗ snapshots: 1 snapshot file(s)") and left.name in line and "next save" in line, line
    assert doctor.returncode != 0
    again = precompact(project.path, "hook", stdin=payload("PreCompact", project.path, transcript.path))
    assert again.returncode == 0, again.stderr
    assert not left.exists()
    assert len(list(saves.glob("snapshot_*.json"))) == 2  # savepoint 1 and the new one
    doctor = precompact(project.path, "doctor")
    assert "✓ snapshots: every snapshot file has its index line" in doctor.stdout, doctor.stdout


def test_a_torn_index_line_keeps_the_snapshots_no_line_names(tmp_path):
    """A line that does not parse may be the one naming a snapshot (a writer killed mid-line):
    while the index holds one, the next save removes no snapshot as unindexed."""
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    transcript = generate(tmp_path / "t.jsonl", 4_000, project=project.path)
    first = precompact(project.path, "hook", stdin=payload("PreCompact", project.path, transcript.path))
    assert first.returncode == 0, first.stderr
    assert wait_until(lambda: worker_finished(project.path), 60)  # it appends to the index too
    saves = project.logs / "precompact-saves"
    [indexed] = saves.glob("snapshot_*.json")
    left = saves / "snapshot_2026-01-02T03-04-05Z_000002.json"
    left.write_bytes(indexed.read_bytes())
    an_hour_ago = time.time() - 3600
    os.utime(left, (an_hour_ago, an_hour_ago))
    with (project.logs / "precompact-savepoint.jsonl").open("a") as index:
        index.write('{"event":"SAVEPOINT_CREATED","instance":"Trial","sequence":2,"prev_snapshot_hash":"sha256:2')
    again = precompact(project.path, "hook", stdin=payload("PreCompact", project.path, transcript.path))
    assert again.returncode == 0 and "saved as precompact savepoint 2" in again.stdout, again.stdout
    assert left.exists()


def test_an_index_line_the_disk_has_no_room_for_is_never_said_saved(tmp_path):
    """review9b F2, on a real limit: a file-size limit just above the index (a full disk gives the
    same short write; Python ignores SIGXFSZ, so the write comes short instead of killing it).
    The hook says nothing was saved, logs it, and the index is as it was, with no torn line."""
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    transcript = generate(tmp_path / "t.jsonl", 4_000, project=project.path)
    first = precompact(project.path, "hook", stdin=payload("PreCompact", project.path, transcript.path))
    assert first.returncode == 0, first.stderr
    assert wait_until(lambda: worker_finished(project.path), 60)  # it writes to the index too
    index = project.logs / "precompact-savepoint.jsonl"
    with index.open("a") as f:  # the index is the largest file the save writes: the limit hits it alone
        f.write('{"event":"PADDING"}\n' * 4_000)
    before = index.read_bytes()
    limit = len(before) + 64
    other = generate(tmp_path / "t2.jsonl", 4_000, project=project.path, seed=8)

    def a_file_size_limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))

    done = subprocess.run(
        [PRECOMPACT, "hook"],
        input=json.dumps(payload("PreCompact", project.path, other.path)).encode(),
        cwd=project.path,
        capture_output=True,
        preexec_fn=a_file_size_limit,
        timeout=RUN_SECONDS,
        check=False,
    )
    said = done.stdout.decode()
    assert done.returncode == 0
    assert said.startswith("precompact could not save the transcript before this compaction"), said
    assert "saved as precompact savepoint" not in said
    assert index.read_bytes() == before
    assert "PreCompact:" in (project.logs / "precompact-errors.log").read_text()


@pytest.mark.parametrize("event_name", ["PreCompact", "SessionEnd"])
def test_a_hook_that_waits_past_the_lock_timeout_queues_its_savepoint_for_the_worker(tmp_path, event_name):
    """Concurrent hooks on large transcripts hold the index lock longer than a hook may wait
    (10 s): the one that gives up must not lose its savepoint. Held here by the test itself."""
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    transcript = generate(tmp_path / "t.jsonl", 8_000, project=project.path)
    event = payload(event_name, project.path, transcript.path)
    project.logs.mkdir(exist_ok=True)
    with (project.logs / "precompact-savepoint.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        began = time.monotonic()
        waited = precompact(project.path, "hook", stdin=event)
        assert time.monotonic() - began < 10 + MARGIN_SECONDS
        # Still held: the worker the hook started waits for it, and nothing is written yet.
        assert list(project.logs.glob("precompact-saves/snapshot_*.json")) == []
        assert len(list((project.logs / "precompact-queue").iterdir())) == 1
    assert waited.returncode == 0, waited.stderr
    if event_name == "PreCompact":  # the note for the summariser
        assert "saving the pre-compaction transcript in the background" in waited.stdout, waited.stdout
    assert wait_until(lambda: len(list(project.logs.glob("precompact-saves/snapshot_*.json"))) == 1, 30)
    assert wait_until(lambda: not list((project.logs / "precompact-queue").iterdir()), 10)
    listed = json.loads(precompact(project.path, "status", "--json").stdout)["savepoints"]
    assert [s["sequence"] for s in listed] == [1], listed
    [written] = project.logs.glob("precompact-saves/snapshot_*.json")
    document = full_document(written)
    assert event["session_id"].encode() in document and transcript.conclusions[-1].encode() in document


def test_a_queue_entry_this_machine_did_not_make_is_never_read(tmp_path):
    """A queue entry names a transcript to read: one that came with the project (not stamped by
    this machine's key) could name any file. It is removed unread."""
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    secret = tmp_path / "elsewhere.txt"
    secret.write_text('{"type":"user","message":{"role":"user","content":"private-zebracorn"}}\n')
    queue = project.logs / "precompact-queue"
    queue.mkdir(parents=True)
    session = {
        "session_id": "planted",
        "transcript_path": str(secret),
        "cwd": str(project.path),
        "trigger": "auto",
        "custom_instructions": None,
        "agent": "claude",
        "agent_version": None,
        "agent_transcript": None,
    }
    (queue / f"{time.time_ns():020d}-1.json").write_text(json.dumps({"session": session, "end": None}))
    transcript = generate(tmp_path / "t.jsonl", 4_000, project=project.path)
    saved = precompact(project.path, "hook", stdin=payload("PreCompact", project.path, transcript.path))
    assert saved.returncode == 0, saved.stderr
    assert wait_until(lambda: not list(queue.iterdir()), 30)
    listed = json.loads(precompact(project.path, "status", "--json").stdout)["savepoints"]
    assert len(listed) == 1, listed
    [written] = project.logs.glob("precompact-saves/snapshot_*.json")
    assert b"zebracorn" not in full_document(written) and b"planted" not in full_document(written)
