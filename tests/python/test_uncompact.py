"""`precompact resurrect --uncompact` and `precompact install --mcp`, outside Claude Code (the
Claude Code end-to-end suite resumes the written session for real)."""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path

import pytest

from precompact.config import install
from precompact.restore import uncompact
from support.commands import INSTALLED_PYTHON, installed_command, precompact
from support.conversations import START, Conversation, save
from support.projects import new_project, tamper_history
from support.transcript_gen import payload

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


def test_with_claude_config_dir_set_the_session_is_written_where_claude_code_keeps_its_sessions(saved, tmp_path):
    """Claude Code 2.1.332 with CLAUDE_CONFIG_DIR set reads `--resume <id>` from
    `$CLAUDE_CONFIG_DIR/projects/` (seen): a session written under ~/.claude would not reopen.
    One in the project is refused in one line naming the fix: nothing is written, in the project
    or in ~/.claude (which that Claude Code does not read)."""
    project, home, _ = saved
    configured = tmp_path / "claude-config"
    done = precompact(project.path, "uncompact", env={"CLAUDE_CONFIG_DIR": str(configured)}, home=home)
    assert done.returncode == 0, done.stderr
    new_id = done.stdout.splitlines()[-1].removeprefix("claude --resume ")
    folder = uncompact.project_folder(str(project.path))
    assert (configured / "projects" / folder / f"{new_id}.jsonl").is_file()
    assert not (home / ".claude").exists()

    planted = project.path / ".claude-config"
    done = precompact(project.path, "uncompact", env={"CLAUDE_CONFIG_DIR": str(planted)}, home=home)
    assert done.returncode == 1 and "CLAUDE_CONFIG_DIR is empty, or a place in the project" in done.stderr, done.stderr
    assert "set it to an absolute path outside every project" in done.stderr
    assert not planted.exists() and not (home / ".claude").exists()


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
    assert servers["precompact"] == {
        "type": "stdio",
        "command": INSTALLED_PYTHON,
        "args": installed_command("mcp")[1:],
    }, "by absolute path, isolated: it starts whatever PATH and PYTHON* variables Claude Code has"
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


def compacted_twice(path, session_id: str) -> tuple[list[dict], int]:
    """A Claude Code transcript compacted twice, linked as Claude Code links it: each boundary
    starts a new chain (`parentUuid` null, `logicalParentUuid` the entry before), its summary and
    what follows hang from it."""
    lines = []

    def entry(uuid: str, parent: str | None, kind: str, content, **extra) -> None:
        role = {"type": kind, "message": {"role": kind, "content": content}} if kind != "system" else {"type": kind}
        lines.append({**role, "uuid": uuid, "parentUuid": parent, "sessionId": session_id, "cwd": "", **extra})

    entry("u1", None, "user", "Build the header parser with strict colons.")
    entry("a1", "u1", "assistant", [{"type": "text", "text": "Parser built."}])
    entry("b1", None, "system", None, subtype="compact_boundary", logicalParentUuid="a1")
    entry("s1", "b1", "user", "SUMMARY-ONE of the parser work.", isCompactSummary=True, isVisibleInTranscriptOnly=True)
    entry("u2", "s1", "user", "Now add the tests for header line 3.")
    entry("a2", "u2", "assistant", [{"type": "text", "text": "Tests added."}])
    before_second = len(lines)
    entry("b2", None, "system", None, subtype="compact_boundary", logicalParentUuid="a2")
    entry("s2", "b2", "user", "SUMMARY-TWO of the tests.", isCompactSummary=True, isVisibleInTranscriptOnly=True)
    entry("u3", "s2", "user", "After the second compaction, rename the module.")
    entry("a3", "u3", "assistant", [{"type": "text", "text": "Renamed."}])
    return lines, before_second


def written_entries(project, home, done) -> list[dict]:
    assert done.returncode == 0, done.stderr
    new_id = done.stdout.splitlines()[-1].removeprefix("claude --resume ")
    folder = home / ".claude" / "projects" / uncompact.project_folder(str(project.path))
    return [json.loads(line) for line in (folder / f"{new_id}.jsonl").read_text().splitlines()]


def test_savepoint_takes_an_uncompacted_session_as_archived_as_import_does(tmp_path):
    """The session `uncompact` wrote is the newest of the directory: `precompact savepoint` (no
    `--transcript`) makes no savepoint of it while it has said nothing (exit 5 naming the
    savepoint it holds, as `import` reports it unchanged); once it says more, `savepoint` saves
    it."""
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    home = tmp_path / "home"
    folder = home / ".claude" / "projects" / uncompact.project_folder(str(project.path))
    folder.mkdir(parents=True)

    def said(path: Path, uuid: str, role: str, text: str) -> None:
        entry = {"type": role, "uuid": uuid, "sessionId": path.stem, "cwd": str(project.path)}
        with path.open("a") as f:
            f.write(json.dumps({**entry, "message": {"role": role, "content": text}}) + "\n")

    def sequences() -> list[int]:
        return [s["sequence"] for s in json.loads(precompact(project.path, "status", "--json").stdout)["savepoints"]]

    said(folder / "s-original.jsonl", "u1", "user", "Rename the orders module.")
    said(folder / "s-original.jsonl", "a1", "assistant", "Renamed.")
    assert precompact(project.path, "savepoint", home=home).returncode == 3
    copy = (
        folder
        / f"{written_entries(project, home, precompact(project.path, 'uncompact', home=home))[0]['sessionId']}.jsonl"
    )

    imported = precompact(project.path, "import", "--json", home=home)
    outcomes = {s["session_id"]: (s["outcome"], s["sequence"]) for s in json.loads(imported.stdout)["sessions"]}
    assert outcomes == {"s-original": ("unchanged", 1), copy.stem: ("unchanged", 1)}
    again = precompact(project.path, "savepoint", home=home)
    assert again.returncode == 5, again.stdout + again.stderr
    assert again.stdout.startswith("nothing new since savepoint 1: ")
    as_json = json.loads(precompact(project.path, "savepoint", "--json", home=home).stdout)
    assert as_json["unchanged_since"] == 1 and as_json["savepoint"] is None
    assert sequences() == [1], "nothing saved twice"

    said(copy, "u2", "user", "And the changelog?")
    more = precompact(project.path, "savepoint", home=home)
    assert more.returncode == 3, more.stdout + more.stderr
    assert sequences() == [1, 2]


def test_a_session_compacted_twice_is_written_before_its_last_boundary_without_boundaries_or_summaries(tmp_path):
    """PreCompact saved before the second compaction (savepoint 1); SessionEnd after it saved the
    transcript with both boundaries (savepoint 2).
    `uncompact` takes savepoint 2, the newest compaction's, and writes what came before the second
    boundary; Claude Code walks the relinked `parentUuid`s back to the first entry."""
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    home = tmp_path / "home"
    home.mkdir()
    transcript = tmp_path / "session.jsonl"
    lines, before_second = compacted_twice(transcript, "s-twice")
    for entry in lines:
        entry["cwd"] = str(project.path)
    transcript.write_text("".join(json.dumps(e) + "\n" for e in lines[:before_second]))
    pre = payload("PreCompact", project.path, transcript, session_id="s-twice")
    assert precompact(project.path, "hook", stdin=pre).returncode == 0
    transcript.write_text("".join(json.dumps(e) + "\n" for e in lines))
    end = payload("SessionEnd", project.path, transcript, session_id="s-twice")
    assert precompact(project.path, "hook", stdin=end).returncode == 0
    rows = json.loads(precompact(project.path, "status", "--json").stdout)["savepoints"]
    assert [(r["sequence"], r["compaction"]) for r in rows] == [(1, "at"), (2, "after")]

    done = precompact(project.path, "uncompact", home=home)
    assert "wrote savepoint 2's conversation (4 messages, 4 transcript entries)" in done.stdout, "what it wrote"
    taken = written_entries(project, home, done)
    assert [e["uuid"] for e in taken] == ["u1", "a1", "u2", "a2"], "no boundary, no summary, nothing after"
    assert [e["parentUuid"] for e in taken] == [None, "u1", "a1", "u2"], "the chain goes back to the first entry"
    assert "SUMMARY" not in json.dumps(taken)
    at = written_entries(project, home, precompact(project.path, "uncompact", "--sequence", "1", home=home))
    assert [(e["uuid"], e["parentUuid"]) for e in at] == [(e["uuid"], e["parentUuid"]) for e in taken], (
        "PreCompact's savepoint of the second compaction holds the same history"
    )


def test_the_session_uncompact_wrote_gets_no_brief_of_another_savepoint_at_its_start(saved):
    project, home, _ = saved
    done = precompact(project.path, "uncompact", home=home)
    new_id = done.stdout.splitlines()[-1].removeprefix("claude --resume ")
    resumed = precompact(project.path, "hook", stdin=payload("SessionStart", project.path, session_id=new_id))
    assert resumed.returncode == 0 and resumed.stdout == "", "it holds the whole history: no brief beside it"
    other = precompact(project.path, "hook", stdin=payload("SessionStart", project.path, session_id="s-other"))
    assert "[precompact] Restored from savepoint 2" in other.stdout, "any other session still gets it"


def test_a_boundary_that_names_a_parent_never_written_still_links_back_to_the_first_entry(tmp_path):
    """Claude Code 2.1.332, after `/compact` in print mode, writes a boundary whose
    `logicalParentUuid` is no entry of the transcript (seen with the real CLI,
    test_claude_code_recall.py): what followed it is linked to the entry written before it."""
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    home = tmp_path / "home"
    home.mkdir()
    transcript = tmp_path / "session.jsonl"
    lines, before_second = compacted_twice(transcript, "s-unwritten")
    for entry in lines:
        entry["cwd"] = str(project.path)
    lines[2]["logicalParentUuid"] = "an-entry-never-written"
    transcript.write_text("".join(json.dumps(e) + "\n" for e in lines[:before_second]))
    pre = payload("PreCompact", project.path, transcript, session_id="s-unwritten")
    assert precompact(project.path, "hook", stdin=pre).returncode == 0
    taken = written_entries(project, home, precompact(project.path, "uncompact", home=home))
    assert [(e["uuid"], e["parentUuid"]) for e in taken] == [("u1", None), ("a1", "u1"), ("u2", "a1"), ("a2", "u2")]


def test_import_takes_an_uncompacted_session_as_archived_until_it_says_something_new(tmp_path):
    """The session `uncompact` writes holds what a savepoint holds: `import` keeps that savepoint
    rather than saving it again, and saves the session once it was resumed and said more."""
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    home = tmp_path / "home"
    home.mkdir()
    transcript = tmp_path / "session.jsonl"
    lines, before_second = compacted_twice(transcript, "s-twice")
    for entry in lines:
        entry["cwd"] = str(project.path)
    transcript.write_text("".join(json.dumps(e) + "\n" for e in lines[:before_second]))
    pre = payload("PreCompact", project.path, transcript, session_id="s-twice")
    assert precompact(project.path, "hook", stdin=pre).returncode == 0
    transcript.write_text("".join(json.dumps(e) + "\n" for e in lines))
    end = payload("SessionEnd", project.path, transcript, session_id="s-twice")
    assert precompact(project.path, "hook", stdin=end).returncode == 0
    for sequence in ("1", "2"):  # at the second compaction, and after it
        done = precompact(project.path, "uncompact", "--sequence", sequence, home=home)
        written_entries(project, home, done)

    imported = precompact(project.path, "import", "--json", home=home)
    assert imported.returncode == 0, imported.stderr
    outcomes = [(s["outcome"], s["sequence"]) for s in json.loads(imported.stdout)["sessions"]]
    assert sorted(outcomes) == [("unchanged", 1), ("unchanged", 1)], "savepoint 1 holds both sessions' last entry"
    for session in json.loads(imported.stdout)["sessions"]:  # Claude Code deletes them soon
        os.utime(session["transcript"], (time.time() - 25 * 86_400,) * 2)
    checks = json.loads(precompact(project.path, "doctor", "--json", home=home).stdout)
    assert [c["ok"] for c in checks if c["check"] == "sessions"] == [True], "archived as savepoint 1"

    resumed = Path(json.loads(imported.stdout)["sessions"][0]["transcript"])
    said = {"type": "user", "uuid": "u9", "cwd": str(project.path), "message": {"role": "user", "content": "And now?"}}
    with resumed.open("a") as f:
        f.write(json.dumps(said) + "\n")
    again = json.loads(precompact(project.path, "import", "--json", home=home).stdout)
    assert sorted((s["outcome"], s["sequence"]) for s in again["sessions"]) == [("saved", 3), ("unchanged", 1)]
