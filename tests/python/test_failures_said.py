"""A failure is said again until it is fixed (review14b F1, F2, F3, F6, F9, F12): a hook never
blocks the agent (it exits 0), so the user is told at the next occasion: `status`, `doctor`
(✗ and non-zero), `status --json`, the next SessionStart. logs/ that cannot be written (read-only,
full) or that other users may change is named with its path and the fix; the failure logs/ could
not take is kept in the state directory and said once logs/ takes writes again; a worker that
cannot start is said on PreCompact's line for the user; a clock set back behind the newest
savepoint is named."""

from __future__ import annotations

import contextlib
import json
import shlex
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from precompact.local import savepoint_log, snapshot
from precompact.ops import compaction
from support.commands import hook, precompact
from support.library_session import LibrarySession
from support.projects import new_project

SESSION = "11111111-2222-3333-4444-555555555555"
FAILURE_STANDS = "[precompact] precompact's last save did not complete: run `precompact doctor` to see why and the fix."


def _transcript(path: Path, cwd: Path, said: tuple[str, ...] = ("please refactor orders_archive", "ok, done")) -> Path:
    with path.open("w") as f:
        for i, text in enumerate(said):
            role = "user" if i % 2 == 0 else "assistant"
            entry = {
                "type": role,
                "sessionId": SESSION,
                "cwd": str(cwd),
                "uuid": f"u{i}",
                "parentUuid": None if i == 0 else f"u{i - 1}",
                "timestamp": f"2026-01-01T00:00:{i:02d}Z",
                "message": {"role": role, "content": text},
            }
            f.write(json.dumps(entry) + "\n")
    return path


def _event(name: str, project: Path, transcript: Path, **more: str) -> dict:
    return {
        "hook_event_name": name,
        "cwd": str(project),
        "session_id": SESSION,
        "transcript_path": str(transcript),
        "trigger": "manual",
        "custom_instructions": "",
        **more,
    }


def _doctor(project: Path) -> tuple[int, dict[str, dict]]:
    done = precompact(project, "doctor", "--json")
    return done.returncode, {check["check"]: check for check in json.loads(done.stdout)}


def _saved_once(tmp_path: Path):
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    transcript = _transcript(tmp_path / "transcript.jsonl", project.path)
    saved = precompact(project.path, "savepoint", "--transcript", str(transcript), "--session-id", SESSION)
    assert len(savepoint_log.savepoints(project.logs)) == 1, saved.stderr
    return project, transcript


def test_a_failed_save_is_said_by_status_doctor_and_each_session_start_until_a_savepoint_is_written(tmp_path):
    project, transcript = _saved_once(tmp_path)
    _transcript(transcript, project.path, ("please refactor orders_archive", "ok, done", "now the invoices"))
    transcript.rename(tmp_path / "kept.jsonl")
    transcript.mkdir()  # unreadable at PreCompact: nothing is saved, the hook exits 0
    failed = hook(_event("PreCompact", project.path, transcript), cwd=project.path)
    assert failed.returncode == 0 and b"nothing saved before this compaction" in failed.stderr
    transcript.rmdir()
    (tmp_path / "kept.jsonl").rename(transcript)

    status = precompact(project.path, "status")
    assert status.returncode == 0
    assert status.stdout.startswith("1 failure(s) logged since the newest savepoint was written; newest: "), (
        status.stdout
    )
    assert "is not a file" in status.stdout.splitlines()[0]
    assert "fix: do what it names, then run `precompact savepoint`" in status.stdout
    said = json.loads(precompact(project.path, "status", "--json").stdout)["failures_logged"]
    assert said["count"] == 1 and "PreCompact: the transcript" in said["newest"] and "savepoint" in said["fix"]
    code, checks = _doctor(project.path)
    assert code != 0 and checks["hook failures"]["ok"] is False
    assert "is not a file" in checks["hook failures"]["detail"]
    started = hook(_event("SessionStart", project.path, transcript, source="resume"), cwd=project.path)
    answer = json.loads(started.stdout)
    assert started.returncode == 0 and answer["systemMessage"] == FAILURE_STANDS
    assert answer["hookSpecificOutput"]["additionalContext"].startswith(FAILURE_STANDS + "\n\n[precompact] Restored")

    fixed = precompact(project.path, "savepoint", "--transcript", str(transcript), "--session-id", SESSION)
    assert len(savepoint_log.savepoints(project.logs)) == 2, fixed.stderr
    assert json.loads(precompact(project.path, "status", "--json").stdout)["failures_logged"] is None
    assert _doctor(project.path)[1]["hook failures"]["ok"] is True
    again = hook(_event("SessionStart", project.path, transcript, source="startup"), cwd=project.path)
    assert b"did not complete" not in again.stdout


def test_a_notice_logged_beside_a_save_that_completed_is_never_said_as_a_failure(tmp_path):
    """An override the hook ignores (PRECOMPACT_INSTANCE in the agent's environment) is logged at
    every PreCompact, in the same second as the savepoint that PreCompact then writes: a notice,
    marked as one, never "the last save did not complete" (status, doctor, SessionStart)."""
    import os

    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    transcript = _transcript(tmp_path / "transcript.jsonl", project.path)
    done = hook(
        _event("PreCompact", project.path, transcript), cwd=project.path,
        env={**os.environ, "PRECOMPACT_INSTANCE": "elsewhere"},
    )  # fmt: skip
    assert done.returncode == 0 and len(savepoint_log.savepoints(project.logs)) == 1, done.stderr
    logged = (project.logs / compaction.ERRORS_LOG).read_text()
    assert "PreCompact (notice): PRECOMPACT_INSTANCE ignored" in logged, logged
    assert json.loads(precompact(project.path, "status", "--json").stdout)["failures_logged"] is None
    assert _doctor(project.path)[1]["hook failures"]["ok"] is True
    started = hook(_event("SessionStart", project.path, transcript, source="resume"), cwd=project.path)
    assert b"did not complete" not in started.stdout, started.stdout


def test_a_worker_that_cannot_start_is_said_on_precompacts_line_for_the_user_and_by_doctor(tmp_path):
    project = new_project(tmp_path, "project", git_layer=True, chain_layer=False)
    transcript = _transcript(tmp_path / "transcript.jsonl", project.path)
    project.logs.mkdir(exist_ok=True)
    (project.logs / "precompact-worker.log").symlink_to("/dev/null")
    done = hook(_event("PreCompact", project.path, transcript), cwd=project.path)
    assert done.returncode == 0
    line = done.stderr.decode()
    assert line.startswith("precompact: saved locally; the background worker could not start: "), line
    assert "precompact-worker.log is a symbolic link" in line and "then run `precompact flush`" in line
    code, checks = _doctor(project.path)
    assert code != 0 and checks["worker"]["ok"] is False
    assert "precompact-worker.log is a symbolic link" in checks["worker"]["detail"]
    assert "precompact flush" in checks["worker"]["fix"]
    status = precompact(project.path, "status").stdout  # why git is pending
    assert "the background worker could not start" in status.splitlines()[0], status


def test_a_worker_that_cannot_start_is_said_to_the_user_at_geminis_pre_compress(tmp_path):
    """fix15e 4: as Claude Code's PreCompact says it on stderr, Gemini's PreCompress says it as a
    `systemMessage` (Gemini 0.61.0 shows a hook's systemMessage to the user, for any event, as an
    info line of its interactive CLI; PreCompress's output reaches neither the model nor the
    compression)."""
    project = new_project(tmp_path, "project", git_layer=True, chain_layer=False)
    transcript = _transcript(tmp_path / "transcript.jsonl", project.path)
    project.logs.mkdir(exist_ok=True)
    (project.logs / "precompact-worker.log").symlink_to("/dev/null")
    event = {**_event("PreCompress", project.path, transcript), "trigger": "manual"}
    done = precompact(project.path, "hook", "--agent", "gemini", stdin=event)
    assert done.returncode == 0 and len(savepoint_log.savepoints(project.logs)) == 1, done.stderr
    said = json.loads(done.stdout)["systemMessage"]
    assert said.startswith("precompact: saved locally; the background worker could not start: "), said
    assert "precompact-worker.log is a symbolic link" in said and "then run `precompact flush`" in said


def test_logs_other_users_may_change_is_named_with_chmod_700(tmp_path):
    project, _ = _saved_once(tmp_path)
    project.logs.chmod(0o777)
    code, checks = _doctor(project.path)
    assert code != 0 and checks["logs/"]["ok"] is False
    assert "can be changed by other users (mode 777)" in checks["logs/"]["detail"]
    assert checks["logs/"]["fix"] == f"chmod 700 {shlex.quote(str(project.logs))}"
    assert "mode 777" in json.loads(precompact(project.path, "status", "--json").stdout)["logs_open_to_others"]
    project.logs.chmod(0o700)
    assert _doctor(project.path)[1]["logs/"]["ok"] is True


@contextlib.contextmanager
def _mounted(target: Path, *options: str) -> Iterator[None]:
    """`target` mounted over (tmpfs, or bound to itself read-only), unmounted after the block."""
    try:
        subprocess.run(["mount", *options, str(target)], check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError) as e:
        pytest.skip(f"cannot mount here ({e}): this test needs root with mount rights")
    try:
        yield
    finally:
        subprocess.run(["umount", "-l", str(target)], check=False)


@contextlib.contextmanager
def _read_only(logs: Path) -> Iterator[None]:
    """Root ignores permission bits: a read-only bind mount refuses every write, root's too."""
    with _mounted(logs, "--bind", str(logs)):
        subprocess.run(["mount", "-o", "remount,ro,bind", str(logs)], check=True)
        yield


def test_logs_read_only_is_named_with_its_path_and_the_failure_is_said_after_it_recovers(tmp_path):
    project, transcript = _saved_once(tmp_path)
    _transcript(transcript, project.path, ("please refactor orders_archive", "ok, done", "now the invoices"))
    with _read_only(project.logs):
        done = hook(_event("PostCompact", project.path, transcript, compact_summary="s"), cwd=project.path)
        said = json.loads(done.stdout)["systemMessage"]
        assert done.returncode == 0
        assert f"logs/ ({project.logs}) cannot be written: Read-only file system; make it writable" in said, said
        code, checks = _doctor(project.path)
        assert code != 0 and checks["logs/"]["ok"] is False
        assert checks["logs/"]["detail"] == f"{project.logs} cannot be written: Read-only file system"
    # logs/ takes writes again: the failure it could not record is said from the state directory.
    assert not (project.logs / "precompact-errors.log").exists()
    status = precompact(project.path, "status")
    assert status.stdout.startswith("1 failure(s) logged since the newest savepoint was written"), status.stdout
    assert "logs/ did not take it" in status.stdout and "state" in status.stdout
    code, checks = _doctor(project.path)
    assert code != 0 and checks["hook failures"]["ok"] is False and checks["logs/"]["ok"] is True


def test_logs_on_a_full_disk_is_named_with_its_path_and_the_fix(tmp_path):
    project, transcript = _saved_once(tmp_path)
    with _mounted(project.logs, "-t", "tmpfs", "-o", "size=64k", "tmpfs"):
        filler = project.logs / "filler"
        with contextlib.suppress(OSError), filler.open("wb") as f:
            while True:
                f.write(b"\0" * 4096)
                f.flush()
        code, checks = _doctor(project.path)
        assert code != 0 and checks["logs/"]["ok"] is False
        assert checks["logs/"]["detail"] == f"{project.logs} cannot be written: No space left on device"
        assert checks["logs/"]["fix"].startswith("free space on its disk")
        more = ("please refactor orders_archive", "ok, done", "now the invoices " * 50)
        _transcript(transcript, project.path, more)
        done = hook(_event("SessionEnd", project.path, transcript, reason="exit"), cwd=project.path)
        assert done.returncode == 0
        assert f"logs/ ({project.logs}) cannot be written: No space left on device; free space" in done.stdout.decode()


def test_a_clock_set_back_behind_the_newest_savepoint_is_named(tmp_path):
    session = LibrarySession(tmp_path, SESSION, _transcript)
    project = session.project
    # Savepoint 1 written while the clock was two and a half days ahead (half a day: whole days
    # are counted down, whether status runs in the same second or later); this clock is behind it.
    session.save(datetime.now(UTC) + timedelta(days=2, hours=12))
    [newest] = savepoint_log.savepoints(project.logs)
    assert snapshot.clock_behind(project.logs, newest.instance, now=newest.unix_timestamp) is None

    status = precompact(project.path, "status")
    assert "this machine's clock is 2 day(s) behind savepoint 1's time" in status.stdout, status.stdout
    assert "clock is 2 day(s) behind" in json.loads(precompact(project.path, "status", "--json").stdout)["clock_behind"]
    code, checks = _doctor(project.path)
    assert code != 0 and checks["clock"]["ok"] is False and "timedatectl" in checks["clock"]["fix"]
