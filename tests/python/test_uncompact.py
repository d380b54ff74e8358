"""`precompact resurrect --uncompact` and `precompact install --mcp`, outside Claude Code (the
Claude Code end-to-end suite resumes the written session for real)."""

from __future__ import annotations

import json
import stat

import pytest

from precompact.config import install
from precompact.restore import uncompact
from support.commands import precompact
from support.conversations import START, Conversation, save
from support.projects import new_project, tamper_history

TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


@pytest.fixture
def saved(tmp_path):
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    conversation = Conversation(tmp_path / "session.jsonl", "s-original", START)
    conversation.turn_with("Deploy it.", f"deploy --token {TOKEN}", "deployed", "Deployed.")
    save(project, conversation)
    conversation.turn_with("Now the docs.", "make docs", "built", "Docs built.")
    save(project, conversation)
    home = tmp_path / "home"
    home.mkdir()
    return project, home, conversation


def test_the_session_is_new_redacted_private_and_in_claude_codes_folder(saved):
    project, home, conversation = saved
    done = precompact(project.path, "resurrect", "--uncompact", "--sequence", "1", home=home)
    assert done.returncode == 0, done.stderr
    new_id = done.stdout.splitlines()[-1].removeprefix("claude --resume ")
    folder = home / ".claude" / "projects" / uncompact.project_folder(str(project.path))
    written = folder / f"{new_id}.jsonl"
    assert stat.S_IMODE(written.stat().st_mode) == 0o600
    entries = [json.loads(line) for line in written.read_text().splitlines()]
    assert len(entries) == 4, "savepoint 1: the first turn only"
    assert {e["sessionId"] for e in entries} == {new_id} != {"s-original"}
    assert [e["uuid"] for e in entries] == [
        json.loads(line)["uuid"] for line in conversation.path.read_text().splitlines()[:4]
    ]
    assert TOKEN not in written.read_text() and "[REDACTED:" in written.read_text(), "redacted content stays redacted"
    again = precompact(project.path, "resurrect", "--uncompact", home=home)
    assert again.returncode == 0 and again.stdout.splitlines()[-1] != done.stdout.splitlines()[-1], (
        "each run is a new session"
    )


def test_the_folder_is_the_directory_with_every_other_character_a_dash():
    assert (
        uncompact.project_folder("/tmp/pytest-of-root/test_x0/my.project") == "-tmp-pytest-of-root-test-x0-my-project"
    )


def test_a_savepoint_that_does_not_verify_is_refused(saved):
    project, home, _ = saved
    [snapshot] = sorted((project.logs / "precompact-saves").glob("*_000002.json"))
    tamper_history(snapshot, b"Docs built.", b"Docs eaten.")
    done = precompact(project.path, "resurrect", "--uncompact", home=home)
    assert done.returncode == 1 and "altered" in done.stderr
    assert not (home / ".claude").exists(), "nothing written"
    assert precompact(project.path, "resurrect", "--uncompact", "--restore-state", home=home).returncode == 2


def test_install_mcp_registers_and_approves_the_server_and_uninstall_removes_only_that(tmp_path):
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    home = tmp_path / "home"
    home.mkdir()
    (project.path / ".mcp.json").write_text(json.dumps({"mcpServers": {"other": {"command": "other-server"}}}))
    done = precompact(project.path, "install", "--mcp", home=home)
    assert done.returncode == 0, done.stderr
    servers = json.loads((project.path / ".mcp.json").read_text())["mcpServers"]
    assert servers["other"] == {"command": "other-server"}
    assert servers["precompact"] == {"type": "stdio", "command": "precompact", "args": ["mcp"]}, (
        "found on PATH, no path into one machine's venv"
    )
    settings = json.loads((project.path / ".claude" / "settings.json").read_text())
    assert settings["enabledMcpjsonServers"] == ["precompact"] and settings["permissions"]["allow"] == list(
        install.MCP_TOOLS
    )
    assert precompact(project.path, "install", "--mcp", home=home).returncode == 0
    assert json.loads((project.path / ".claude" / "settings.json").read_text()) == settings, "idempotent"
    (project.path / ".mcp.json").write_text('{"mcpServers": [')
    refused = precompact(project.path, "install", "--mcp", home=home)
    assert refused.returncode == 1 and ".mcp.json is not valid JSON" in refused.stderr
    (project.path / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"other": {"command": "other-server"}, "precompact": servers["precompact"]}})
    )
    removed = precompact(project.path, "uninstall", home=home)
    assert removed.returncode == 0, removed.stderr
    assert json.loads((project.path / ".mcp.json").read_text()) == {
        "mcpServers": {"other": {"command": "other-server"}}
    }
    assert not (project.path / ".claude" / "settings.json").exists(), "a settings.json left empty is removed, not {}"
