"""Which failures stand (fix15e 1, 2): a failure is said until a savepoint of the instance is
written after it, in the order the index holds them, whatever the clock says. Each line of the
errors log names the newest savepoint written when it was logged; stamps are whole seconds and a
clock may be set back, so neither decides. Lines an older version wrote (no such name) are still
read, by their stamp."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from precompact.local import savepoint_log
from precompact.ops import compaction
from support.commands import precompact
from support.library_session import LibrarySession
from support.projects import Project

SESSION = "11111111-2222-3333-4444-555555555555"
FAILED = "the transcript '/tmp/t.jsonl' is not a file"


def _one_line(transcript: Path, _project: Path) -> None:
    entry = {"type": "user", "sessionId": SESSION, "uuid": "u0", "message": {"role": "user", "content": "hello"}}
    transcript.write_text(json.dumps(entry) + "\n")


def _logged_at(monkeypatch, root: Path, at: datetime, reason: str = FAILED) -> None:
    """A failure logged as the hook logs it, by a clock that reads `at`."""
    with monkeypatch.context() as clock:
        clock.setattr(savepoint_log, "utc_timestamp", lambda: at.strftime("%Y-%m-%dT%H:%M:%SZ"))
        assert compaction.log_failure(root, "PreCompact", reason) == f"logs/{compaction.ERRORS_LOG}"


def _said(project: Project) -> dict | None:
    done = precompact(project.path, "status", "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["failures_logged"]


@pytest.fixture
def second() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


def test_a_failure_logged_in_its_savepoints_second_after_it_is_said(tmp_path, monkeypatch, second):
    session = LibrarySession(tmp_path, SESSION, _one_line)
    project = session.project
    session.save(second)
    _logged_at(monkeypatch, project.path, second)
    said = _said(project)
    assert said is not None and said["count"] == 1 and FAILED in said["newest"], said
    [line] = (project.logs / compaction.ERRORS_LOG).read_text().splitlines()
    [saved] = savepoint_log.savepoints(project.logs)
    assert f" [after savepoint 1, sha256:{saved.snapshot_hash[:12]}] PreCompact: " in line, line


def test_a_failure_a_savepoint_of_the_same_second_was_written_after_is_not_said(tmp_path, monkeypatch, second):
    """The worker that could not start after savepoint 1, then savepoint 2 written in that second."""
    session = LibrarySession(tmp_path, SESSION, _one_line)
    project = session.project
    session.save(second)
    _logged_at(monkeypatch, project.path, second, f"{compaction.WORKER_NOT_STARTED}: no process to spare")
    assert _said(project) is not None
    session.save(second)
    assert _said(project) is None


def test_a_clock_set_back_hides_no_failure_and_the_next_savepoint_still_puts_it_behind(tmp_path, monkeypatch, second):
    session = LibrarySession(tmp_path, SESSION, _one_line)
    project = session.project
    session.save(second + timedelta(days=1))  # written while the clock was a day ahead
    _logged_at(monkeypatch, project.path, second)  # stamped before that savepoint's time, logged after it
    said = _said(project)
    assert said is not None and said["count"] == 1, said
    session.save(second - timedelta(hours=1))  # the clock set back further still
    assert _said(project) is None


def test_a_failure_logged_before_any_savepoint_stands_until_one_is_written(tmp_path, monkeypatch, second):
    session = LibrarySession(tmp_path, SESSION, _one_line)
    project = session.project
    _logged_at(monkeypatch, project.path, second + timedelta(days=1))
    [line] = (project.logs / compaction.ERRORS_LOG).read_text().splitlines()
    assert " [before any savepoint] PreCompact: " in line, line
    assert _said(project) is not None
    session.save(second)  # before the failure's stamp, written after it
    assert _said(project) is None


def test_an_older_versions_lines_are_still_read_by_their_stamp(tmp_path, second):
    session = LibrarySession(tmp_path, SESSION, _one_line)
    project = session.project
    session.save(second)
    stamp = (second - timedelta(seconds=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    later = (second + timedelta(seconds=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    (project.logs / compaction.ERRORS_LOG).write_text(f"{stamp} PreCompact: earlier\n")
    assert _said(project) is None
    with (project.logs / compaction.ERRORS_LOG).open("a") as f:
        f.write(f"{later} PreCompact: {FAILED}\n")
    said = _said(project)
    assert said is not None and said["count"] == 1 and said["newest"] == f"{later} PreCompact: {FAILED}", said
