"""Secrets never leave the machine: a corpus of over 100 secret formats planted in a transcript
and in the files the session loaded goes through the real hook, worker, git and
precompact-localnet, and none of it is found in the snapshot, the index, the logs, any git object
or the chain. Files are
private (0600, directories 0700) and the keypair is never logged or committed. Redaction's false
positives on real code and prose are measured too."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

from precompact.boundary import private_file
from precompact.local import savepoint_log
from support import fault_trials
from support.claude_code import wait_for_worker
from support.commands import hook, precompact, wait_until
from support.projects import full_document, fund, new_project, store
from support.secret_corpus import SECRETS, false_positives, leaked, shell_quoted
from support.transcript_gen import generate, payload


def git_objects(repository) -> bytes:
    """Every object's content in a repository, loose or packed."""
    return subprocess.run(
        ["git", "cat-file", "--batch-all-objects", "--batch"], cwd=repository, capture_output=True, check=True
    ).stdout


def test_no_planted_secret_reaches_snapshot_git_or_chain(tmp_path, localnet):
    project = new_project(tmp_path, "p", git_layer=True, chain_layer=True, cluster=localnet.url)
    fund(localnet.url, project.authority())
    # A copy of the keypair lives inside the project, as careless setups have it (chain.keypair
    # cannot name it there: a key inside the project is refused; the session still reads it).
    keypair = project.path / "keys" / "deploy.json"
    keypair.parent.mkdir()
    keypair.write_bytes(project.keypair_file.read_bytes())
    # Half the corpus in tool results of the transcript, the other half (and the keypair) in the
    # files those tool calls read.
    in_transcript, in_files = SECRETS[::2], SECRETS[1::2]
    transcript = generate(
        tmp_path / "session.jsonl", 50_000, project=project.path, planted=[p.text for p in in_transcript]
    )
    files = sorted(set(transcript.files))
    for number, planted in enumerate(in_files):
        path = project.path.joinpath(files[number % len(files)])
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a") as f:
            f.write(f"# setting {number}\n{planted.text}\n")
    with project.path.joinpath(files[0]).open("a") as f:
        f.write(keypair.read_text() + "\n")

    result = hook(payload("PreCompact", project.path, transcript.path), cwd=project.path)
    assert result.returncode == 0, result.stderr
    assert wait_until(
        lambda: [(s.layer_2, s.layer_3) for s in savepoint_log.savepoints(project.logs)] == [("PUSHED", "CONFIRMED")],
        timeout=120,
    )
    assert fault_trials.workers_idle(project, timeout=60)
    [savepoint] = savepoint_log.savepoints(project.logs)

    snapshot_bytes = (project.path / savepoint.created["snapshot_file"]).read_bytes()
    document = json.loads(full_document(project.path / savepoint.created["snapshot_file"]))
    loaded_text = json.dumps(document["loaded_files"])
    assert all(f"setting {n}" in loaded_text for n in range(len(in_files))), "the planted files were captured"
    places = {
        "snapshot": snapshot_bytes,
        "logs": b"".join(path.read_bytes() for path in project.logs.rglob("*") if path.is_file()),
        "hook output": result.stdout + result.stderr,
        "git (project)": git_objects(project.path),
        "git (remote)": git_objects(project.remote),
        "chain": fault_trials.chain_record(localnet.url, project) + localnet.state_file.read_bytes(),
    }
    authority = project.authority()
    as_json = json.dumps(list(bytes(authority)))
    private = [as_json.encode(), as_json.replace(" ", "").encode(), str(authority).encode(), bytes(authority)]
    for place, data in places.items():
        for planted in SECRETS:
            for value in planted.sensitive:
                assert value.encode() not in data, f"{planted.format} found in {place}"
        assert not any(secret in data for secret in private), f"the keypair found in {place}"
    assert savepoint.created["redactions"] >= len(SECRETS) + 1
    kinds = {
        "solana_keypair",
        "private_key",
        "twilio_key",
        "url_credentials",
        "secret_assignment",
        "seed_phrase",
        "wallet_key",
        "netrc_password",
        "pgpass_password",
    }
    kinds |= {
        "docker_auth",
        "cli_password",
        "cookie_header",
        "kubeconfig_key",
        "gitlab_token",
        "slack_app_token",
        "onepassword_token",
        "mapbox_secret_token",
    }
    assert kinds <= set(document["redaction"]["counts"])
    assert (
        "keys/deploy.json"
        not in subprocess.run(
            ["git", "log", "--all", "--name-only", "--format="],
            cwd=project.remote,
            capture_output=True,
            text=True,
            check=False,
        ).stdout
    )


def test_everything_precompact_writes_is_private(tmp_path):
    """Under umask 0, with every local layer on (Layer 2's push and its own git directory
    included): every directory precompact or the git it runs makes is 0700, every file 0600, or
    0400 where git makes it read-only (objects); in logs/, the state directory and the config
    directory alike."""
    before = os.umask(0)  # a user who shares everything by default: no file may rely on the umask
    try:
        project = new_project(tmp_path, "p", git_layer=True, chain_layer=False)
        transcript = generate(tmp_path / "t.jsonl", 20_000, project=project.path)
        for event in (payload("PreCompact", project.path, transcript.path), payload("PostCompact", project.path)):
            done = hook(event, cwd=project.path)
            assert done.returncode == 0, done.stderr
    finally:
        os.umask(before)
    wait_for_worker(project)  # Layer 2 and the recall index are the worker's to write
    assert [s.layer_2 for s in savepoint_log.savepoints(project.logs)] == ["PUSHED"]
    assert stat.S_IMODE(project.keypair_file.stat().st_mode) == 0o600
    written = list(project.logs.rglob("*"))
    assert any(p.suffix == ".json" for p in written) and any(p.name == savepoint_log.INDEX_NAME for p in written)
    git_directory = store(project.path)
    assert git_directory.is_relative_to(private_file.state_directory())
    assert any(p.parent.parent.name == "objects" for p in git_directory.rglob("*") if p.is_file())
    owned = [project.logs, private_file.state_directory(), Path(os.environ["XDG_CONFIG_HOME"]) / "precompact"]
    for path in [*owned, *(p for root in owned for p in root.rglob("*"))]:
        mode = stat.S_IMODE(path.lstat().st_mode)
        if path.is_dir():
            assert mode == 0o700, path
        else:
            read_only = git_directory in path.parents and "objects" in path.relative_to(git_directory).parts
            assert mode == (0o400 if read_only else 0o600), (oct(mode), path)


def test_false_positives_on_real_code_and_prose_stay_rare():
    measured = false_positives()
    assert measured.lines > 100_000
    assert measured.rate < 0.0001, measured.changed


def test_every_dot_env_file_is_kept_out_of_the_snapshot(tmp_path):
    """`.env*` files (`.envrc`, `.env_local`, `.env-prod` in a folder, not only `.env` and
    `.env.<x>`) are never read into a snapshot, by the configuration `init` writes."""
    project = new_project(tmp_path, "p", git_layer=False, chain_layer=False)
    names = [".envrc", ".env_local", "deploy/.env-prod", ".env", ".env.local"]
    entries = [{"type": "user", "message": {"role": "user", "content": "Check the environment files."}}]
    for turn, name in enumerate(names):
        (project.path / name).parent.mkdir(parents=True, exist_ok=True)
        (project.path / name).write_text(f"export GREETING=in-clear-{turn}-zebracorn\n")
        use = {
            "type": "tool_use",
            "id": f"toolu_{turn}",
            "name": "Read",
            "input": {"file_path": str(project.path / name)},
        }
        entries += [
            {"type": "assistant", "message": {"id": f"msg_{turn}", "role": "assistant", "content": [use]}},
            {
                "type": "user",
                "message": {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": f"toolu_{turn}", "content": "(read)"}],
                },
            },
        ]
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("".join(json.dumps(entry) + "\n" for entry in entries))
    done = hook(payload("PreCompact", project.path, transcript), cwd=project.path)
    assert done.returncode == 0, done.stderr
    [written] = (project.logs / "precompact-saves").glob("*.json")
    document = full_document(written)
    assert b"zebracorn" not in document
    loaded = json.loads(document)["loaded_files"]
    read = [str(project.path / name) for name in names]
    assert {name: loaded[name] for name in read} == {key: {"source": "Read", "excluded": True} for key in read}, loaded


def _claude_code_shapes(project, transcript) -> None:
    """Each planted format written the ways a Claude Code transcript holds it: in a Bash
    command with its double quotes escaped, and in an MCP tool's answer that is a JSON document
    (a file's contents as `{"path": …, "content": …}`), the text on a line of its own."""
    entries: list[dict] = [{"type": "user", "message": {"role": "user", "content": "Put my settings in .env."}}]
    for number, planted in enumerate(SECRETS):
        command = f'echo "{shell_quoted(planted.text)}" >> .env'
        answer = json.dumps({"path": "config/deploy.env", "content": f"# deploy settings\n{planted.text}\n"})
        for turn, (name, given, result) in enumerate(
            [("Bash", {"command": command}, ""), ("mcp__github__get_file_contents", {"path": "deploy.env"}, answer)]
        ):
            tool = f"toolu_{number}_{turn}"
            use = {"type": "tool_use", "id": tool, "name": name, "input": given}
            said = [{"type": "tool_result", "tool_use_id": tool, "content": [{"type": "text", "text": result}]}]
            entries += [
                {"type": "assistant", "message": {"id": f"msg_{tool}", "role": "assistant", "content": [use]}},
                {"type": "user", "message": {"role": "user", "content": said}},
            ]
    for number, entry in enumerate(entries):
        entry.update(uuid=f"u{number}", parentUuid=f"u{number - 1}" if number else None, sessionId="s1")
    transcript.write_text("".join(json.dumps(entry) + "\n" for entry in entries))
    done = hook(payload("PreCompact", project.path, transcript, session_id="s1"), cwd=project.path)
    assert done.returncode == 0, done.stderr


def _codex_shapes(project, rollout) -> None:
    """Each planted format written the ways Codex writes it (every tool call's `arguments` a
    JSON document in a string, serialised compactly): a file written by a heredoc and by printf,
    and an MCP tool's answer that is a JSON document."""
    session = "01a2355d-d3df-7661-851d-76b764947144"
    records: list[dict] = [
        {"type": "session_meta", "payload": {"id": session, "cwd": str(project.path), "cli_version": "0.171.0"}}
    ]

    def call(name: str, arguments: dict, output: str) -> None:
        call_id = f"call_{len(records)}"
        compact = json.dumps(arguments, separators=(",", ":"))
        records.append({"type": "function_call", "name": name, "arguments": compact, "call_id": call_id})
        records.append({"type": "function_call_output", "call_id": call_id, "output": output})

    for planted in SECRETS:
        call("exec_command", {"cmd": f"cat >> .env <<'EOF'\n{planted.text}\nEOF"}, "Process exited with code 0")
        call("exec_command", {"cmd": f"printf '%s\\n' '{planted.text}' > settings.cfg"}, "Process exited with code 0")
        answer = json.dumps({"path": "deploy.env", "content": f"# deploy settings\n{planted.text}\n"})
        call("mcp__github__get_file_contents", {"path": "deploy.env"}, answer)
    lines = [records[0], *({"type": "response_item", "payload": record} for record in records[1:])]
    stamped = [{"timestamp": f"2026-12-05T10:00:{n % 60:02d}.000Z", "ordinal": n, **r} for n, r in enumerate(lines)]
    rollout.write_text("".join(json.dumps(line) + "\n" for line in stamped))
    event = {
        "session_id": session,
        "transcript_path": str(rollout),
        "cwd": str(project.path),
        "hook_event_name": "PreCompact",
        "trigger": "manual",
        "model": "gpt-mock",
    }
    done = precompact(project.path, "hook", "--agent", "codex", stdin=event)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("agent", ["claude-code", "codex"])
def test_no_planted_secret_in_the_shapes_agents_write_reaches_snapshot_logs_or_git(tmp_path, agent):
    """The corpus as the agents really write it (JSON inside a JSON string, a shell's escaped
    quotes, an MCP tool's JSON answer), through the agent's reader, the hook, the worker and
    git: no sensitive value in any form reaches the snapshot, logs/ or a git object (the
    remote in clear, so its objects can be read)."""
    project = new_project(tmp_path, "p", git_layer=True, chain_layer=False, encrypted=False)
    write = _claude_code_shapes if agent == "claude-code" else _codex_shapes
    write(project, tmp_path / "session.jsonl")
    wait_for_worker(project)
    flushed = precompact(project.path, "flush")
    assert flushed.returncode == 0, flushed.stdout + flushed.stderr
    [savepoint] = savepoint_log.savepoints(project.logs)
    assert savepoint.layer_2 == "PUSHED"
    document = full_document(project.path / savepoint.created["snapshot_file"])
    assert b"deploy settings" in document and b">> .env" in document, "the planted shapes were saved"
    places = {
        "snapshot": document,
        "logs": b"".join(path.read_bytes() for path in project.logs.rglob("*") if path.is_file()),
        "git (project)": git_objects(project.path),
        "git (remote)": git_objects(project.remote),
    }
    for place, data in places.items():
        left = [p.format for p in SECRETS if leaked(p, data.decode(errors="replace"))]
        assert not left, f"{len(left)} of {len(SECRETS)} formats found in {place}: {left}"
