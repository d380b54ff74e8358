"""precompact under the real Claude Code CLI (npm `@anthropic-ai/claude-code`, pinned in
claude_code.py) talking to a mock Messages API: what Claude Code actually sends the model."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import time
from pathlib import Path

import pytest

import claude_code
from projects import PRECOMPACT, Project, fund, new_project


@pytest.fixture(scope="module")
def claude_binary() -> Path:
    try:
        return claude_code.claude_binary()
    except claude_code.Unavailable as e:
        pytest.skip(f"Claude Code end-to-end tests skipped: {e}")


def wait_for_worker(project: Project, timeout: float = 60) -> None:
    """Waits until no background worker holds the project's worker lock."""
    lock = project.logs / "precompact-worker.lock"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        time.sleep(0.2)
        if not lock.exists():
            return
        with lock.open("a") as f:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                continue
    raise AssertionError("the background worker did not finish in time")


class Setup:
    def __init__(self, project: Project, session: claude_code.Session, script: claude_code.Script):
        self.project, self.session, self.script = project, session, script

    def precompact(self, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
        return subprocess.run([PRECOMPACT, *args], cwd=cwd or self.project.path, env={**os.environ, "HOME": str(self.session.home)}, capture_output=True, text=True, timeout=120)

    def index(self) -> list[dict]:
        return [json.loads(line) for line in (self.project.logs / "precompact-savepoint.jsonl").read_text().splitlines()]


@pytest.fixture
def setup(tmp_path, localnet, claude_binary):
    project = new_project(tmp_path, "project", git_layer=True, chain_layer=True, cluster=localnet.url)
    fund(localnet.url, project.authority())
    home = tmp_path / "home"
    home.mkdir()
    script = claude_code.Script()
    mock = claude_code.MockAnthropic(script).start()
    result = Setup(project, claude_code.Session(claude_binary, home, project.path, mock), script)
    installed = result.precompact("install")
    assert installed.returncode == 0, installed.stderr
    yield result
    wait_for_worker(project)
    mock.stop()


def test_all_three_hooks_fire_and_the_savepoint_reaches_every_layer(setup):
    session_id = setup.session.run("Hello")["session_id"]
    compacted = setup.session.run("/compact", resume=session_id)
    assert compacted["result"] == ""
    wait_for_worker(setup.project)
    events = [e["event"] for e in setup.index()]
    assert events.count("SAVEPOINT_CREATED") == 1
    assert {"LAYER_2_PUSHED", "LAYER_3_CONFIRMED", "COMPACT_SUMMARY"} <= set(events)
