"""`precompact hook` as Claude Code runs it: a real process fed JSON on stdin."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from precompact.boundary import quoting
from precompact.local import savepoint_log
from support.commands import (
    INSTANCE,
    hook,
    initialized,
    initialized_and_funded,
    landed,
    wait_until,
    worker_finished,
)
from support.projects import approve_as_is, new_project, trust
from support.transcript_gen import generate
from support.transcript_gen import payload as event_of

PRECOMPACT = str(Path(sys.executable).with_name("precompact"))


def test_pre_compact_saves_then_the_worker_lands_git_and_chain(workspace, localnet, monkeypatch):
    project, _ = workspace
    initialized_and_funded(project, monkeypatch, localnet.url)
    transcript = project.parent / "t.jsonl"
    transcript.write_text(json.dumps({"type": "user", "message": {"content": "hello"}}) + "\n")
    began = time.monotonic()
    result = hook(
        {
            "hook_event_name": "PreCompact",
            "session_id": "s1",
            "transcript_path": str(transcript),
            "cwd": str(project),
            "trigger": "auto",
            "custom_instructions": "",
        }
    )
    elapsed = time.monotonic() - began
    assert result.returncode == 0, result.stderr
    note = result.stdout.decode()
    assert note.startswith("The full pre-compaction transcript is saved as precompact savepoint 1 (sha256:"), (
        "plain words for the summariser"
    )
    assert "{" not in note and '"decision"' not in note
    assert elapsed < 10
    logs = project / "logs"

    assert wait_until(lambda: landed(logs, INSTANCE, 1)), (logs / "precompact-worker.log").read_text()

    post = hook(
        {
            "hook_event_name": "PostCompact",
            "session_id": "s1",
            "cwd": str(project),
            "trigger": "auto",
            "compact_summary": "We fixed the app.",
        }
    )
    assert post.returncode == 0 and post.stdout == b""
    assert savepoint_log.latest(logs, INSTANCE).compact_summary == "We fixed the app."


def test_outside_a_project_the_hooks_do_nothing_and_say_it_on_stderr_only(tmp_path):
    for event in ("PreCompact", "PostCompact", "SessionStart"):
        result = hook({"hook_event_name": event, "cwd": str(tmp_path), "transcript_path": "/nope", "source": "resume"})
        assert result.returncode == 0 and result.stdout == b""
        assert "no .precompact.toml" in result.stderr.decode()
    assert not (tmp_path / "logs").exists(), "a user-scope install leaves other projects alone"


def test_failures_never_block_and_are_logged(tmp_path):
    (tmp_path / ".precompact.toml").write_text('instance = "x"\n[layers]\ngit = "yes"\n')
    approve_as_is(tmp_path)
    (tmp_path / "sub").mkdir()
    result = hook({"hook_event_name": "PreCompact", "cwd": str(tmp_path / "sub"), "transcript_path": "/nope"})
    assert result.returncode == 0
    note = result.stdout.decode()
    config = tmp_path.resolve() / ".precompact.toml"
    assert note.startswith(
        f"precompact could not save the transcript before this compaction ({config}: layers.git must be true or false"
    )
    assert "layers.git" in (tmp_path / "logs" / "precompact-errors.log").read_text(), "logged at the project root"
    started = hook({"hook_event_name": "SessionStart", "cwd": str(tmp_path), "source": "resume"})
    assert f"SessionStart failed: {config}: layers.git" in json.loads(started.stdout)["systemMessage"]


def test_an_agent_that_stopped_reading_gets_exit_0_and_the_failure_is_still_logged(tmp_path):
    (tmp_path / ".precompact.toml").write_text('instance = "x"\n[layers]\ngit = "yes"\n')
    approve_as_is(tmp_path)
    event = {"hook_event_name": "PreCompact", "cwd": str(tmp_path), "transcript_path": "/nope"}
    read_end, write_end = os.pipe()
    os.close(read_end)  # the agent is gone: writing the answer raises a broken pipe
    try:
        result = subprocess.run(
            [PRECOMPACT, "hook"],
            input=json.dumps(event).encode(),
            stdout=write_end,
            stderr=write_end,
            timeout=60,
            check=False,
        )
    finally:
        os.close(write_end)
    assert result.returncode == 0
    logged = (tmp_path / "logs" / "precompact-errors.log").read_text()
    assert "layers.git" in logged
    assert "PreCompact: the agent closed its end before precompact's answer reached it" in logged


def test_bad_input_is_refused_on_stderr_with_exit_0(tmp_path):
    cases = [
        (b"{not json", "stdin is not JSON"),
        (b"[" * 100_000 + b"]" * 100_000, "stdin is not JSON"),  # deeper than json recurses
        (b"[1, 2]", "must be a JSON object"),
        ({"hook_event_name": "PreCompact"}, 'no "cwd" string'),
        ({"hook_event_name": "Stop", "cwd": str(tmp_path)}, "event 'Stop' is not handled"),
        ({"hook_event_name": "PreCompact", "cwd": 7}, 'no "cwd" string'),
    ]
    for payload, expected in cases:
        result = hook(payload)
        assert result.returncode == 0
        assert result.stdout == b""
        assert expected in result.stderr.decode()
        assert "Traceback" not in result.stderr.decode()
    assert not (tmp_path / "logs").exists(), "nothing written"


def test_the_pre_compact_path_never_imports_click_git_age_or_the_solana_stack(workspace, monkeypatch):
    project, _ = workspace
    initialized(project, monkeypatch, "http://127.0.0.1:9")
    transcript = project.parent / "t.jsonl"
    transcript.write_text(json.dumps({"type": "user", "uuid": "u1", "message": {"content": "hi"}}) + "\n")
    event = {"hook_event_name": "PreCompact", "cwd": str(project), "transcript_path": str(transcript)}
    # The hook process ends without the interpreter's teardown (edges/command.py): what it imported
    # is read from `-X importtime`, which reports each import as it happens.
    probe = "import sys; sys.argv = ['precompact', 'hook']; from precompact.edges.command import main; main()"
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", probe],
        input=json.dumps(event),
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert "precompact savepoint 1 (sha256:" in result.stdout
    imported = {
        line.rsplit("|", 1)[1].strip() for line in result.stderr.splitlines() if line.startswith("import time:")
    }
    assert "precompact.edges.hook" in imported, "the probe sees the hook's imports"
    heavy = {"click", "git", "solana", "solders", "anchorpy", "borsh_construct", "httpx", "pyrage"}
    assert not {name.split(".")[0] for name in imported} & heavy


def test_a_session_that_said_nothing_new_keeps_its_savepoint(tmp_path):

    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    transcript = tmp_path / "t.jsonl"
    said = [
        {"type": "user", "uuid": "u1", "message": {"content": "Fix the parser"}},
        {"type": "assistant", "uuid": "a1", "message": {"id": "m1", "content": [{"type": "text", "text": "Done."}]}},
    ]
    transcript.write_text("".join(json.dumps(e) + "\n" for e in said))

    def pre_compact(session_id="s1"):
        result = hook(
            {
                "hook_event_name": "PreCompact",
                "session_id": session_id,
                "transcript_path": str(transcript),
                "cwd": str(project.path),
                "trigger": "manual",
            }
        )
        assert result.returncode == 0, result.stderr
        return result.stdout.decode()

    assert "precompact savepoint 1 (sha256:" in pre_compact()
    with transcript.open("a") as f:  # what Claude Code itself writes at a compaction
        for entry in [
            {"type": "system", "uuid": "b1", "subtype": "compact_boundary"},
            {
                "type": "user",
                "uuid": "c1",
                "isCompactSummary": True,
                "message": {"content": "This session is being continued..."},
            },
            {"type": "user", "uuid": "c2", "message": {"content": "<command-name>/compact</command-name>"}},
            {
                "type": "user",
                "uuid": "c3",
                "message": {"content": "<local-command-stdout>Compacted</local-command-stdout>"},
            },
        ]:
            f.write(json.dumps(entry) + "\n")
    kept = pre_compact()
    assert (
        kept.startswith("Nothing was said since precompact savepoint 1, so no new savepoint was made.")
        and "savepoint 1 (sha256:" in kept
    )
    assert "savepoint 2" in pre_compact(session_id="s2"), "another session's compaction saves"
    with transcript.open("a") as f:
        f.write(json.dumps({"type": "user", "uuid": "u2", "message": {"content": "Now the tests"}}) + "\n")
    assert "savepoint 3" in pre_compact()
    assert len(savepoint_log.savepoints(project.logs)) == 3

    config = project.path / ".precompact.toml"
    config.write_text(config.read_text().replace("[hooks]\n", '[hooks]\ncompact_note = ""\n'))
    trust(project.path)
    with transcript.open("a") as f:
        f.write(json.dumps({"type": "user", "uuid": "u3", "message": {"content": "And the docs"}}) + "\n")
    assert pre_compact() == "", "the note switched off"
    assert len(savepoint_log.savepoints(project.logs)) == 4


# Each agent's entry, as `precompact install` registers it.
AGENT_ENTRIES = {
    "claude": ["hook"],
    "codex": ["hook", "--agent", "codex"],
    "gemini": ["hook", "--agent", "gemini"],
    "opencode": ["hook", "--agent", "opencode"],
}
# What JavaScript's JSON.stringify writes for a string cut inside an emoji: a lone surrogate.
CUT_EMOJI = "keep port 8443 \ud83d"
REPAIRED = "keep port 8443 \ufffd"


def _session(agent: str, tmp_path: Path, project: Path) -> tuple[Path, str]:
    """A session of `agent` that said something, and its id: OpenCode's is a session of its
    database, the others' a transcript file (each reader takes what it does not know as nothing)."""
    from test_opencode_reader import SESSION, database

    if agent == "opencode":
        parts = [("msg_1", "prt_1", json.dumps({"type": "text", "text": "Fix the parser"}))]
        return database(tmp_path / "opencode.db", parts, directory=str(project)), SESSION
    return generate(tmp_path / "t.jsonl", 4_000, project=project).path, "s-cut"


def _sent(agent: str, event: dict) -> subprocess.CompletedProcess:
    raw = json.dumps(event).encode()  # ensure_ascii: the lone surrogate goes as its escape
    assert b"\\ud83d" in raw
    return subprocess.run([PRECOMPACT, *AGENT_ENTRIES[agent]], input=raw, capture_output=True, timeout=120, check=False)


@pytest.mark.parametrize("agent", AGENT_ENTRIES)
@pytest.mark.parametrize("field", ["custom_instructions", "session_id"])
def test_a_lone_surrogate_in_the_compaction_events_text_still_saves(tmp_path, agent, field):
    """review9b F6: the hook's own text is repaired as the transcript's is (U+FFFD), before any
    handler sees it: the savepoint is made, its line holding what the agent sent, repaired.
    (OpenCode's session id names a session of its database: one with a cut emoji is one it does
    not hold, and the hook says so, as of any other id.)"""

    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    transcript, session_id = _session(agent, tmp_path, project.path)
    event = event_of("PreCompact", project.path, transcript, session_id=session_id, trigger="manual")
    event[field] = CUT_EMOJI
    if agent == "gemini":
        event["hook_event_name"] = "PreCompress"
    done = _sent(agent, event)
    assert done.returncode == 0
    said = (done.stdout + done.stderr).decode()
    if agent == "opencode" and field == "session_id":
        assert f"holds no session {quoting.inline(REPAIRED)}" in said, said
        assert savepoint_log.savepoints(project.logs) == []
        return
    assert "could not save" not in said and "failed" not in said, said
    [saved] = savepoint_log.savepoints(project.logs)
    assert saved.session_id == (REPAIRED if field == "session_id" else session_id)
    assert wait_until(lambda: worker_finished(project.path), 60)


@pytest.mark.parametrize("agent", [a for a in AGENT_ENTRIES if a != "gemini"])  # Gemini has no PostCompact
def test_a_lone_surrogate_in_the_compaction_summary_is_kept_repaired(tmp_path, agent):

    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    transcript, session_id = _session(agent, tmp_path, project.path)
    before = event_of("PreCompact", project.path, transcript, session_id=session_id, trigger="manual")
    assert _sent(agent, {**before, "custom_instructions": CUT_EMOJI}).returncode == 0
    assert wait_until(lambda: worker_finished(project.path), 60)
    after = event_of("PostCompact", project.path, session_id=session_id, compact_summary=CUT_EMOJI)
    done = _sent(agent, {**after, "transcript_path": str(transcript)})
    assert done.returncode == 0
    assert "failed" not in (done.stdout + done.stderr).decode(), done.stdout
    [saved] = savepoint_log.savepoints(project.logs)
    assert saved.compact_summary == REPAIRED
    assert wait_until(lambda: worker_finished(project.path), 60)
