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

import pytest

from precompact.config import settings as configuration
from precompact.local import snapshot
from precompact.ops import compaction
from support.commands import precompact, wait_until, worker_finished
from support.projects import new_project
from support.transcript_gen import generate, payload

PYTHON = sys.executable


def queue_entries(project) -> list[str]:
    queue = project.logs / "precompact-queue"
    return sorted(p.name for p in queue.iterdir()) if queue.is_dir() else []


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
    assert compaction.write_queued(configuration.load(project.path)) == 0
    assert pending.exists() and json.loads(pending.read_text())["sequence"] == 1
    assert [line["summary"] for line in index_lines(project) if line["event"] == "COMPACT_SUMMARY"] == ["CUT-SUMMARY"]
    assert not queue_entries(project)
