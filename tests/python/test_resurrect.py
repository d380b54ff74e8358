"""Resurrection and the SessionStart hook: PreCompact -> PostCompact -> SessionStart through real
processes, a real git remote and a running precompact-localnet; after a localnet restart; from a
fresh clone holding only the public key; older savepoints; lineage; tampering."""

from __future__ import annotations

import json
from pathlib import Path

from precompact.config import settings as configuration
from precompact.config.settings import DEFAULT_COMPACT_ADVICE
from precompact.local import savepoint_log
from precompact.ops import compaction
from precompact.restore import brief as restore_brief
from precompact.restore import resurrect
from support.commands import INSTANCE, hook, initialized_and_funded, invoke, key_beside, landed, run_git, wait_until
from support.projects import trust
from support.transcript_gen import generate, payload

SUCCESSOR = "Gabriel #216"


def saved(project: Path, localnet, monkeypatch, count: int = 1):
    authority = initialized_and_funded(project, monkeypatch, localnet.url)
    (project / "session_current.json").write_text(json.dumps({"current_priorities": ["ship the resurrection"]}))
    transcript = generate(project.parent / "session.jsonl", 200_000, project=project, partial_tail=True)
    for _ in range(count):
        assert invoke("savepoint", "--transcript", str(transcript.path)).exit_code == 0
    return authority, transcript


def session_start(project: Path, source: str = "resume", session_id: str | None = None) -> dict | None:
    result = hook(payload("SessionStart", project, source=source, **({"session_id": session_id} if session_id else {})))
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout) if result.stdout.strip() else None


def test_pre_compact_post_compact_session_start(workspace, localnet, monkeypatch):
    project, _ = workspace
    initialized_and_funded(project, monkeypatch, localnet.url)
    assert session_start(project, source="resume") is None, "nothing to restore: silence"
    transcript = generate(project.parent / "session.jsonl", 300_000, project=project, partial_tail=True)
    pre = hook(payload("PreCompact", project, transcript.path, session_id="compacted"))
    # 300 KB is more than PreCompact writes itself: queued, the worker writes savepoint 1.
    assert (
        pre.returncode == 0
        and pre.stdout.decode().rstrip("\n") == compaction.BACKGROUND_NOTE + " " + DEFAULT_COMPACT_ADVICE
    ), pre.stdout
    assert wait_until(lambda: landed(project / "logs", INSTANCE, 1)), (
        project / "logs" / "precompact-worker.log"
    ).read_text()
    post = hook(
        payload(
            "PostCompact",
            project,
            transcript.path,
            session_id="compacted",
            compact_summary="<analysis>my working</analysis>\n<summary>We made the flaky test deterministic.</summary>",
        )
    )
    assert post.returncode == 0
    assert savepoint_log.latest(project / "logs", INSTANCE).compact_summary == "We made the flaky test deterministic."

    output = session_start(project, session_id="another-session")
    assert output["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    context = output["hookSpecificOutput"]["additionalContext"]
    assert len(context) < 10_000
    for fact in (
        "[precompact] Restored from savepoint 1 of Gabriel #215",
        "integrity ✓ verified",
        "git – not verified (pushed to origin as commit",  # as the worker recorded them: no network, no GitPython at session start
        "chain – not verified (confirmed at slot",
        "## Compaction summary\n> We made the flaky test deterministic.",  # another session: it has no summary yet
        f"> {transcript.requests[-1]}",
        "## Files edited",
        "logs/precompact-saves/snapshot_",
    ):
        assert fact in context, fact
    assert "my working" not in context
    assert transcript.conclusions[-1] not in context, "Claude Code keeps the latest turns itself"
    assert session_start(project, session_id="another-session") is None, "one brief per savepoint per session"
    assert session_start(project, source="startup") is None  # not a configured source


def test_resurrection_survives_a_localnet_restart(workspace, localnet, monkeypatch):
    project, _ = workspace
    saved(project, localnet, monkeypatch)
    localnet.stop()
    monkeypatch.setenv("PRECOMPACT_CLUSTER", localnet.start())  # same state file, new port
    found = resurrect.resurrect(configuration.load(project))
    assert found.intact and found.checks["chain"].status == resurrect.VERIFIED


def test_chain_unreachable_is_said_not_fatal(workspace, localnet, monkeypatch):
    project, _ = workspace
    saved(project, localnet, monkeypatch)
    localnet.stop()
    result = invoke("resurrect")
    assert result.exit_code == 0, result.output
    assert "Blockchain proof: – not verified (cluster" in result.output and "Git backup: ✓ verified" in result.output


def test_resurrection_from_a_fresh_clone_with_only_the_public_key(workspace, localnet, monkeypatch):
    project, remote = workspace
    authority, transcript = saved(project, localnet, monkeypatch, count=2)
    elsewhere = project.parent / "elsewhere"
    run_git(project.parent, "clone", "-q", str(remote), str(elsewhere))
    config = f'instance = "{INSTANCE}"\n[chain]\ncluster = "{localnet.url}"\nkeypair = "{key_beside(elsewhere, "absent.json")}"\nauthority = "{authority.pubkey()}"\n'
    (elsewhere / ".precompact.toml").write_text(config)
    # Another machine, with a project registry of its own: on this one, trust would refuse the
    # instance the first project writes to the same remote and record.
    another_machine = {"XDG_DATA_HOME": str(project.parent / "elsewhere-data")}
    trust(elsewhere, env=another_machine)
    monkeypatch.chdir(elsewhere)
    # The savepoints went encrypted (init's default): without the identity, one line says so.
    missing = invoke("resurrect")
    assert (
        missing.exit_code == 1
        and f"no age identity at {key_beside(elsewhere, configuration.IDENTITY_NAME)}" in missing.output
    )
    assert len(missing.output.strip().splitlines()) == 1
    # The identity `init` made, copied over: the chain, the identity and the remote suffice.
    (elsewhere / ".precompact.toml").write_text(
        f'{config}[encryption]\nidentity = "{project.parent / configuration.IDENTITY_NAME}"\n'
    )
    trust(elsewhere, env=another_machine)
    result = invoke("resurrect", "--format", "json")
    assert result.exit_code == 0, result.output
    found = json.loads(result.output)
    assert found["sequence"] == 2 and found["intact"] and found["source"].startswith("branch precompact/savepoints-")
    assert {c["status"] for c in found["checks"].values()} == {"verified"}
    assert Path(found["snapshot_path"]).is_file()
    assert invoke("resurrect", "--format", "brief").output.count(transcript.requests[-1]) == 1


def test_older_savepoints_by_sequence_and_time(workspace, localnet, monkeypatch):
    project, _ = workspace
    saved(project, localnet, monkeypatch, count=3)
    loaded = configuration.load(project)
    first = resurrect.resurrect(loaded, sequence=1)
    assert (first.savepoint.sequence, first.later) == (1, 2) and first.intact
    assert "links to it through the snapshots' own bytes" in first.checks["chain"].detail
    events = [s.created for s in savepoint_log.savepoints(loaded.logs, INSTANCE)]
    newest_by_then = max(e["sequence"] for e in events if e["unix_timestamp"] <= events[1]["unix_timestamp"])
    assert resurrect.resurrect(loaded, at=events[1]["timestamp"]).savepoint.sequence == newest_by_then
    for args, message in (
        (("--sequence", "9"), "has no savepoint 9; it has 1 to 3"),
        (("--at", "2001-01-01T00:00:00Z"), "has no savepoint at or before 2001-01-01T00:00:00Z"),
        (("--at", "yesterday"), "is not an ISO 8601 time"),
        (("--instance", "Nobody #1"), "no savepoint of Nobody #1"),
        (("--instance", "A", "--from", "B"), "give --instance or --from"),
    ):
        result = invoke("resurrect", *args)
        assert result.exit_code != 0 and message in result.output, (args, result.output)


def test_from_a_predecessor_records_the_lineage_and_starts_a_new_chain(workspace, localnet, monkeypatch):
    project, _ = workspace
    saved(project, localnet, monkeypatch, count=2)
    monkeypatch.setenv("PRECOMPACT_INSTANCE", SUCCESSOR)
    result = invoke("resurrect", "--from", INSTANCE)
    assert result.exit_code == 0, result.output
    assert f"Previous instance: {INSTANCE}" in result.output and f"Lineage: {INSTANCE} → {SUCCESSOR}" in result.output
    assert invoke("savepoint", "--no-transcript").exit_code == 0  # all three layers, on the successor's own record
    [first] = savepoint_log.savepoints(project / "logs", SUCCESSOR)
    document = json.loads((project / first.created["snapshot_file"]).read_bytes())
    assert (first.sequence, document["lineage"], first.layer_3) == (1, [INSTANCE, SUCCESSOR], "CONFIRMED")
    invoke("resurrect", "--from", INSTANCE)
    lineage_events = [
        e for e in savepoint_log.read(project / "logs").events if e["event"] == savepoint_log.Event.RESURRECTED
    ]
    assert len(lineage_events) == 1  # the same lineage is recorded once


def test_restore_state_writes_the_saved_file_back(workspace, localnet, monkeypatch):
    project, _ = workspace
    saved(project, localnet, monkeypatch)
    state = project / "session_current.json"
    state.write_text("overwritten by a later session")
    result = invoke("resurrect", "--restore-state")
    assert result.exit_code == 0 and f"Session state restored to {state}" in result.output
    assert json.loads(state.read_text()) == {"current_priorities": ["ship the resurrection"]}


def test_a_tampered_local_snapshot_is_named_and_git_supplies_the_copy(workspace, localnet, monkeypatch):
    project, _ = workspace
    saved(project, localnet, monkeypatch)
    [savepoint] = savepoint_log.savepoints(project / "logs", INSTANCE)
    local = project / savepoint.created["snapshot_file"]
    # The history is in chunks (test_growth alters those); the snapshot file holds the rest.
    assert b'"custom_instructions":null' in local.read_bytes()
    local.write_bytes(local.read_bytes().replace(b'"custom_instructions":null', b'"custom_instructions":"Confusion"'))
    result = invoke("resurrect", "--restore-state")
    assert result.exit_code != 0 and "failed verification; the session state was not restored" in result.output
    result = invoke("resurrect")
    assert result.exit_code == 1
    assert "Local copy: ✗ FAILED" in result.output
    assert "LOCAL COPY ALTERED: Local copy failed; what was restored is git's copy" in result.output
    restored = local.with_name(local.stem + ".from-git.json")
    assert restored.is_file() and b"Confusion" in local.read_bytes() and b"Confusion" not in restored.read_bytes()
    found = resurrect.resurrect(configuration.load(project))
    assert found.contents.fields["session"]["custom_instructions"] is None, "git's copy is the one used"
    assert "Confusion" not in restore_brief.brief(found)


def test_the_brief_stays_under_the_limit_with_huge_messages(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert invoke("init", "--yes", "--instance", INSTANCE, "--keypair", str(key_beside(tmp_path))).exit_code == 0
    config_file = tmp_path / ".precompact.toml"
    config_file.write_text(
        config_file.read_text().replace("git = true", "git = false").replace("chain = true", "chain = false")
    )
    trust(tmp_path)
    transcript = generate(tmp_path / "big.jsonl", 2_000_000, project=tmp_path)
    with transcript.path.open("a") as f:
        f.write(json.dumps({"type": "user", "message": {"content": "x" * 50_000 + " final request"}}) + "\n")
    assert invoke("savepoint", "--transcript", str(transcript.path)).exit_code == 3  # saved, not on every layer
    loaded = configuration.load(tmp_path)
    savepoint_log.mark(
        loaded.logs,
        savepoint_log.latest(loaded.logs, INSTANCE),
        savepoint_log.Event.COMPACT_SUMMARY,
        summary="s" * 20_000,
    )
    text = restore_brief.brief(resurrect.resurrect(loaded))
    assert len(text) <= restore_brief.BRIEF_LIMIT
    assert "git – off" in text and "chain – off" in text
    assert "> xxxx" in text and "## More" in text  # the newest request is kept, cut, and the pointer survives
    assert "## Compaction summary\n> sssss" in text


def test_a_session_start_takes_git_as_recorded_and_never_reads_git_or_the_network(tmp_path):
    """SessionStart's own path (api.session_start_brief -> resurrect.from_this_machine): the
    brief says git's state as the worker recorded it, not verified; neither GitPython nor the
    Solana stack is imported; and a snapshot missing from logs/ is said in one line, not
    fetched from git (which a session start must not wait on)."""
    import subprocess
    import sys

    from support.commands import precompact
    from support.projects import new_project

    project = new_project(tmp_path, "p", git_layer=True, chain_layer=False)
    transcript = generate(tmp_path / "session.jsonl", 20_000, project=project.path)
    saved = precompact(project.path, "savepoint", "--transcript", str(transcript.path))
    assert saved.returncode == 3, saved.stderr  # saved; the chain is off
    [savepoint] = savepoint_log.savepoints(project.logs, "Trial #1")
    commit = str(savepoint.commit)
    assert savepoint.layer_2 == savepoint_log.Layer2.PUSHED
    probe = (
        "import sys\n"
        "from pathlib import Path\n"
        "from precompact import api\n"
        "from precompact.config import settings\n"
        f"print(api.session_start_brief(settings.load(Path({str(project.path)!r})), 1, 'another'))\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'git', 'solana', 'solders', 'httpx', 'pyrage'}))\n"
    )

    def start() -> list[str]:
        done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=False)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip().splitlines()

    lines = start()
    assert lines[-1] == "[]", "the session start imported GitPython or the Solana stack"
    proof = next(line for line in lines if line.startswith("Proof: savepoint 1"))
    assert f"git – not verified (pushed to origin as commit {commit[:12]} per the index, not re-read)" in proof
    assert "integrity ✓ verified" in proof and "chain – off" in proof

    snapshot_file = project.path / savepoint.snapshot_file
    snapshot_file.write_bytes(snapshot_file.read_bytes().replace(b'"', b"'", 1))
    lines = start()
    assert lines[-1] == "[]"
    assert lines[0].startswith("[precompact] Savepoint 1 could not be restored: snapshot ")
    assert f"is altered and git was not read here (pushed to origin as commit {commit[:12]}" in lines[0]
    assert "git has no usable copy" not in lines[0], "git was never asked: nothing is known of its copy"
    logged = (project.logs / "precompact-errors.log").read_text().splitlines()
    assert len(logged) == 1 and " SessionStart: savepoint 1 could not be restored: snapshot " in logged[0]

    snapshot_file.unlink()
    lines = start()
    assert lines[-1] == "[]"
    assert lines[0].startswith("[precompact] Savepoint 1 could not be restored: snapshot ") and "is missing" in lines[0]
    assert not snapshot_file.exists(), "nothing was fetched from git"
