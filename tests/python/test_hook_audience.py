"""Who hears what the hook says: a line for the user never reaches the model, and a PreCompact
that saved nothing never tells the summariser that something was saved (docs/cli.md, "precompact
hook"; docs/agents.md)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from precompact.config import settings as configuration
from precompact.local import savepoint_log
from precompact.ops import compaction
from support import claude_code
from support.commands import precompact
from support.projects import new_project
from support.transcript_gen import generate, payload, saved_sequence


def test_an_untrusted_configuration_at_compaction_is_told_the_user_never_the_model(tmp_path, claude_binary):
    """With the real Claude Code: PreCompact's stdout goes into the summariser's prompt and
    PreCompact's and PostCompact's stdout into the `<local-command-stdout>` entry the model reads
    after the compaction; the "not trusted" line reaches neither, and the user sees it once, as
    SessionStart's `systemMessage`."""
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    with claude_code.session_in(project, tmp_path / "home", claude_binary) as setup:
        session_id = setup.session.run("hello")["session_id"]
        config = project.path / configuration.CONFIG_NAME
        config.write_text(config.read_text() + "\n# edited by someone else\n")
        setup.session.run("/compact", resume=session_id)
        setup.session.run("what next?", resume=session_id)
        for request in setup.session.mock.requests:
            assert "changed since you trusted it" not in claude_code.messages_text(request)
        shown = [
            entry["attachment"]["content"]
            for entry in setup.session.transcript(session_id)
            if entry.get("type") == "attachment" and entry["attachment"].get("type") == "hook_system_message"
        ]
        assert shown and all("changed since you trusted it" in line for line in shown), shown
        assert "run `precompact trust`" in shown[0]

    # The hook itself: PreCompact and PostCompact say it on stderr, exit 0, nothing on stdout.
    for event in ("PreCompact", "PostCompact"):
        said = precompact(project.path, "hook", stdin={"hook_event_name": event, "cwd": str(project.path)})
        assert said.returncode == 0 and said.stdout == "", (event, said.stdout)
        assert "changed since you trusted it" in said.stderr and said.stderr.count("\n") == 1, event
    start = precompact(project.path, "hook", stdin={"hook_event_name": "SessionStart", "cwd": str(project.path)})
    assert "changed since you trusted it" in json.loads(start.stdout)["systemMessage"]


def test_a_pre_compact_without_a_transcript_saves_nothing_and_says_so(tmp_path):
    """A transcript that is missing, a directory or not named: no savepoint, no "is saved as
    precompact savepoint N" to the summariser, one line in the errors log and one for the user."""
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    cases = {
        "missing": {"transcript_path": str(tmp_path / "gone.jsonl")},
        "a directory": {"transcript_path": str(tmp_path)},
        "not named": {},
    }
    for number, (case, named) in enumerate(cases.items(), start=1):
        event = {"hook_event_name": "PreCompact", "cwd": str(project.path), "session_id": "s1", "trigger": "auto"}
        said = precompact(project.path, "hook", stdin={**event, **named})
        assert said.returncode == 0, case
        assert "is saved as precompact savepoint" not in said.stdout, case
        assert said.stdout.startswith("precompact could not save the transcript before this compaction"), case
        assert said.stderr.startswith("precompact: nothing saved before this compaction: "), case
        assert said.stderr.count("\n") == 1, case
        assert not (project.logs / "precompact-saves").exists() or not any(
            (project.logs / "precompact-saves").iterdir()
        ), case
        lines = (project.logs / "precompact-errors.log").read_text().splitlines()
        assert len(lines) == number and " PreCompact: " in lines[-1], (case, lines)
    log = (project.logs / "precompact-errors.log").read_text()
    assert "gone.jsonl" in log and "is not a file" in log and "names no transcript_path" in log
    assert "SAVEPOINT_CREATED" not in (
        (project.logs / "precompact-savepoint.jsonl").read_text()
        if (project.logs / "precompact-savepoint.jsonl").exists()
        else ""
    )


def test_a_worker_that_cannot_start_leaves_what_was_saved_said_and_logged(tmp_path):
    """When the worker cannot start after Layer 1 wrote the savepoint (here its log is a link),
    the summariser is told the savepoint it has, and that the rest waits for the worker; the
    failure is one line in the errors log; SessionEnd and PostCompact keep what they saved and
    report no failure of their own."""
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    project.logs.mkdir(exist_ok=True)
    outside = tmp_path / "outside.log"
    outside.write_text("untouched\n")
    (project.logs / "precompact-worker.log").symlink_to(outside)
    compacted, ended = tmp_path / "compacted.jsonl", tmp_path / "ended.jsonl"
    generate(compacted, target_bytes=4000, project=project.path, seed=1)
    generate(ended, target_bytes=4000, project=project.path, seed=2)

    said = precompact(project.path, "hook", stdin=payload("PreCompact", project.path, compacted, session_id="s1"))
    assert said.returncode == 0, said.stderr
    # review14b F6: the user's line says it too (saved here, the rest waiting), not only the summariser.
    assert said.stderr.startswith("precompact: saved locally; the background worker could not start: "), said.stderr
    assert saved_sequence(said.stdout) == 1, said.stdout
    assert said.stdout.rstrip("\n").endswith(compaction.WORKER_WAITS) and "could not save" not in said.stdout
    for event, transcript, session in (("PostCompact", None, "s1"), ("SessionEnd", ended, "s2")):
        answer = precompact(project.path, "hook", stdin=payload(event, project.path, transcript, session_id=session))
        assert answer.returncode == 0 and answer.stdout == "" and answer.stderr == "", (event, answer)

    saved = savepoint_log.savepoints(project.logs, project.instance)
    assert [s.session_id for s in saved] == ["s1", "s2"] and saved[0].compact_summary
    lines = (project.logs / "precompact-errors.log").read_text().splitlines()
    assert [_event(line) for line in lines] == ["PreCompact:", "PostCompact:", "SessionEnd:"], lines
    assert all("the background worker could not start" in line and "symbolic link" in line for line in lines)
    assert outside.read_text() == "untouched\n"


def test_no_event_reads_a_fifo_a_device_or_a_file_the_kernel_makes_up_as_a_transcript(tmp_path):
    """A FIFO (its open() waits for a writer forever), /dev/zero (never ends) and
    /proc/self/environ (a regular file of size 0 that holds the hook's environment): every event
    refuses it in one line of the errors log and goes on. PreCompact saves nothing, SessionEnd
    nothing, PostCompact keeps the summary and SessionStart gives the brief without recovering."""
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    fifo = tmp_path / "transcript.fifo"
    os.mkfifo(fifo)
    errors = project.logs / "precompact-errors.log"
    said = tmp_path / "said.jsonl"
    said.write_text(json.dumps({"type": "user", "uuid": "u1", "message": {"role": "user", "content": "Hi."}}) + "\n")

    def run(event: str, session_id: str, transcript: Path, **extra: str) -> subprocess.CompletedProcess:
        stdin = {"hook_event_name": event, "cwd": str(project.path), "session_id": session_id, **extra}
        return precompact(project.path, "hook", stdin={**stdin, "transcript_path": str(transcript)}, timeout=60)

    for number, bad in enumerate((fifo, Path("/dev/zero"), Path("/proc/self/environ")), start=1):
        session_id = f"s{number}"
        assert "is saved as precompact savepoint" in run("PreCompact", session_id, said, trigger="auto").stdout
        before = errors.read_text().splitlines() if errors.exists() else []
        refused = run("PreCompact", session_id, bad, trigger="auto")
        assert refused.stdout.startswith("precompact could not save the transcript before this compaction"), bad
        summary = run("PostCompact", session_id, bad, trigger="auto", compact_summary=f"Summary {number}.")
        assert summary.returncode == 0 and summary.stdout == "" and summary.stderr == "", bad
        started = run("SessionStart", session_id, bad, source="compact")
        brief = json.loads(started.stdout)["hookSpecificOutput"]["additionalContext"]
        # The refused PreCompact stands as a failure (review14b F1), said first, unless it fell in
        # the savepoint's own second (stamps are whole seconds: then the savepoint puts it behind).
        failed = "[precompact] precompact's last save did not complete: run `precompact doctor` to see why and the fix."
        assert brief.removeprefix(f"{failed}\n\n").startswith(f"[precompact] Restored from savepoint {number} "), bad
        ended = run("SessionEnd", session_id, bad, reason="exit")
        assert ended.returncode == 0 and "SessionEnd failed" in json.loads(ended.stdout)["systemMessage"], bad
        lines = errors.read_text().splitlines()[len(before) :]
        assert [_event(line) for line in lines] == ["PreCompact:", "PostCompact:", "SessionStart:", "SessionEnd:"]
        assert all(str(bad) in line and "nothing was read from it" in line for line in lines), lines
    index = [json.loads(line) for line in (project.logs / "precompact-savepoint.jsonl").read_text().splitlines()]
    created = [e["session_id"] for e in index if e["event"] == "SAVEPOINT_CREATED"]
    assert created == ["s1", "s2", "s3"], "only the readable transcripts were saved"
    kept = [e.get("summary") for e in index if e["event"] == "COMPACT_SUMMARY"]
    assert kept == ["Summary 1.", "Summary 2.", "Summary 3."], "each summary kept with its session's savepoint"


def _event(line: str) -> str:
    """An errors-log line's event: after its time and where it stands among the savepoints
    ("[after savepoint N, sha256:…]", "[before any savepoint]")."""
    return line.split("] ", 1)[1].split(" ", 1)[0]
