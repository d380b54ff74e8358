"""precompact's hooks and MCP server under the real Claude Code (claude_code.py) started where the
virtual environment precompact was installed into is not active: its PATH lacks precompact, as
when `claude` is started from another terminal, a desktop launcher or an IDE (#40, cases 1 and 4).
`install` ran with that environment active, as the README's pip walkthrough has it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from support import claude_code
from support.claude_code import MockAnthropic, Script, Session, compaction_requests, messages_text, wait_for_worker
from support.commands import INSTALLED_PYTHON, PRECOMPACT, installed_command, precompact
from support.projects import new_project

# The PATH Claude Code has when started outside the virtual environment.
AGENT_PATH = "/usr/bin:/bin"
ENTRY = str(Path(PRECOMPACT).resolve())
RUN = f"{INSTALLED_PYTHON} -I {ENTRY}"  # how install starts it: isolated
BRIEF_START = "[precompact] Restored from savepoint "
MCP_HINT = "the precompact MCP tools `recall`"
COMMANDS_HINT = "`precompact recall QUERY` (words -> excerpts with references)"


@pytest.fixture
def project(tmp_path):
    return new_project(tmp_path, "project", git_layer=False, chain_layer=False)


def compacted(session: Session) -> str:
    session_id = session.run("Start the parser.")["session_id"]
    session.run("Keep going.", resume=session_id)
    session.run("/compact", resume=session_id)
    assert len(compaction_requests(session.mock)) == 1
    return session_id


def brief_after_compaction(session: Session, session_id: str) -> str:
    """The restore brief in the first request after the compaction."""
    asked = len(session.mock.requests)
    session.run("Where were we?", resume=session_id)
    text = messages_text(next(r for r in session.mock.requests[asked:] if r["body"] and r["body"].get("messages")))
    assert BRIEF_START in text, "the SessionStart hook ran and gave the brief"
    return text[text.index(BRIEF_START) :]


def doctor_line(home: Path, cwd: Path, check: str) -> str:
    done = precompact(cwd, "doctor", home=home)
    [line] = [line for line in done.stdout.splitlines() if line[2:].startswith(f"{check}: ")]
    return line


def test_hooks_installed_from_an_active_venv_run_when_claude_starts_without_it(project, tmp_path, claude_binary):
    home = tmp_path / "home"
    with claude_code.session_in(project, home, claude_binary, "--scope", "user") as setup:
        setup.session.env["PATH"] = AGENT_PATH
        session_id = compacted(setup.session)
        wait_for_worker(project)
        assert any(e["event"] == "SAVEPOINT_CREATED" for e in setup.index()), "SessionEnd saved the session"
        [compaction] = compaction_requests(setup.session.mock)
        assert "precompact savepoint" in claude_code.texts(compaction["body"]["messages"][-1]), (
            "PreCompact ran: its note reached the summariser"
        )
        brief = brief_after_compaction(setup.session, session_id)
        assert COMMANDS_HINT in brief and MCP_HINT not in brief, "no MCP server installed: only the commands named"
    assert doctor_line(home, project.path, "claude hook command").startswith(
        f'✓ claude hook command: {home / ".claude" / "settings.json"} runs "{RUN}", which starts with your PATH'
    )


def test_a_hook_that_cannot_start_says_so_in_the_session_and_doctor_names_the_fix(project, tmp_path, claude_binary):
    """precompact installed, then its script removed with its Python kept (`pip uninstall`, a
    venv rebuilt without it: Python exits 2, Claude Code's "block"): every prompt still reaches
    the model, and the user sees why nothing is saved, not only in a debug log."""
    home = tmp_path / "home"
    home.mkdir()
    moved = tmp_path / "old-venv" / "bin" / "precompact"
    moved.parent.mkdir(parents=True)
    shutil.copy2(PRECOMPACT, moved)
    installed = subprocess.run(
        [str(moved), "install", "--scope", "user"],
        cwd=project.path,
        capture_output=True,
        text=True,
        env={**os.environ, "HOME": str(home), "PATH": AGENT_PATH},
        check=False,
    )
    assert installed.returncode == 0 and f"running {moved}" in installed.stdout, installed.stderr
    moved.unlink()
    with MockAnthropic(Script()) as mock:
        session = Session(claude_binary, home, project.path, mock, env={"PATH": AGENT_PATH})
        session_id = session.run("Start the parser.")["session_id"]
        session.run("Keep going.", resume=session_id)
        asked = [messages_text(r) for r in mock.requests if r["body"]]
        for prompt in ("Start the parser.", "Keep going."):
            assert any(prompt in text for text in asked), f"{prompt!r} reached the model: no hook blocked it"
        shown = [
            entry["attachment"]["content"]
            for entry in session.transcript(session_id)
            if entry.get("type") == "attachment" and entry["attachment"].get("type") == "hook_system_message"
        ]
        told = (
            f"precompact: its hook could not start ({moved} is missing or broken), so this session is not being "
            "saved; run `precompact install --scope user` with the precompact you use"
        )
        assert shown and set(shown) == {told}, "the user is told, at SessionStart(resume) and with each prompt"
        assert all("could not start" not in text for text in asked), "a message for the user, not the model"
    assert doctor_line(home, project.path, "claude hook command") == (
        f'✗ claude hook command: {home / ".claude" / "settings.json"} runs "{moved}", which does not exist (moved or removed); '
        "fix: precompact install --scope user"
    )


def test_user_scope_mcp_is_read_by_claude_code_and_named_in_the_brief(project, tmp_path, claude_binary):
    home = tmp_path / "home"
    with claude_code.session_in(project, home, claude_binary, "--scope", "user", "--mcp") as setup:
        setup.session.env["PATH"] = AGENT_PATH
        assert not (project.path / ".mcp.json").exists(), "user scope: not the project's file"
        assert json.loads((home / ".claude.json").read_text())["mcpServers"]["precompact"] == {
            "type": "stdio",
            "command": INSTALLED_PYTHON,
            "args": installed_command("mcp")[1:],
        }
        listed = subprocess.run(
            [str(claude_binary), "mcp", "list"],
            cwd=project.path,
            env=setup.session.environment(),
            capture_output=True,
            text=True,
            timeout=setup.session.timeout,
            check=False,
        )
        assert f"precompact: {RUN} mcp - ✔ Connected" in listed.stdout, listed.stdout + listed.stderr
        session_id = compacted(setup.session)
        wait_for_worker(project)
        brief = brief_after_compaction(setup.session, session_id)
        assert MCP_HINT in brief, "the MCP server is installed: the brief names its tools"
    assert doctor_line(home, project.path, "MCP server command").startswith(
        f'✓ MCP server command: {home / ".claude.json"} runs "{RUN}", which starts with your PATH'
    )


@pytest.mark.parametrize(
    ("user", "local", "saved"),
    [(None, True, False), (True, False, True)],
    ids=["local-switch-on", "user-switch-undone-by-local"],
)
def test_doctor_says_what_claude_code_does_with_disable_all_hooks(tmp_path, project, claude_binary, user, local, saved):
    """`disableAllHooks` in the files Claude Code merges: where the real Claude Code then makes no
    savepoint at a /compact, doctor's hooks check is ✗ naming the file; where a later file's false
    undoes it and the savepoint is made, doctor's hooks check is ✓."""
    with claude_code.session_in(project, tmp_path / "home", claude_binary, "--scope", "user") as setup:
        user_settings = setup.session.home / ".claude" / "settings.json"
        local_settings = project.path / ".claude" / "settings.local.json"
        if user is not None:
            user_settings.write_text(json.dumps({**json.loads(user_settings.read_text()), "disableAllHooks": user}))
        local_settings.parent.mkdir(exist_ok=True)
        local_settings.write_text(json.dumps({"disableAllHooks": local}))
        setup.session.run_in_one_process(["Remember the word pelican.", "/compact"])
        assert len(compaction_requests(setup.session.mock)) == 1
    index = project.logs / "precompact-savepoint.jsonl"
    assert (index.exists() and '"SAVEPOINT_CREATED"' in index.read_text()) is saved
    [hooks] = [line for line in setup.precompact("doctor").stdout.splitlines() if line[2:].startswith("hooks: ")]
    if saved:
        assert hooks.startswith("✓ hooks: PreCompact"), hooks
    else:
        assert hooks.startswith(f"✗ hooks: disableAllHooks is true in {local_settings} (local settings)"), hooks


def test_doctor_is_no_check_of_a_settings_file_claude_code_ignores_for_a_number_past_a_double(
    tmp_path, project, claude_binary
):
    """JSON.parse reads `1e400` as Infinity, which Claude Code 2.1.332's settings refuse for
    `cleanupPeriodDays`: it ignores the whole file, precompact's hooks with it, and no savepoint is
    made; doctor's hooks check is ✗ naming the file (Python's json read the same file as valid)."""
    with claude_code.session_in(project, tmp_path / "home", claude_binary, "--scope", "user") as setup:
        user_settings = setup.session.home / ".claude" / "settings.json"
        user_settings.write_text(user_settings.read_text().replace("{", '{"cleanupPeriodDays": 1e400, ', 1))
        setup.session.run_in_one_process(["Remember the word pelican.", "/compact"])
        assert len(compaction_requests(setup.session.mock)) == 1
    assert not (project.logs / "precompact-savepoint.jsonl").exists()
    [hooks] = [line for line in setup.precompact("doctor").stdout.splitlines() if line[2:].startswith("hooks: ")]
    assert hooks.startswith(f"✗ hooks: {user_settings} holds a number past a double's range (as 1e400)"), hooks


def test_a_pythonpath_in_the_projects_settings_reaches_the_hooks_and_runs_none_of_its_code(
    project, tmp_path, claude_binary
):
    """docs/security.md (the agent's environment): the project's `.claude/settings.json` sets
    `env.PYTHONPATH` to `.` and ships a `precompact/` package and a `sitecustomize.py`. Claude
    Code hands that environment to every hook (a hook of the settings' own writes down what it
    sees), and precompact's installed hooks, started isolated, run none of it and still save."""
    home = tmp_path / "home"
    seen, ran = tmp_path / "seen", tmp_path / "ran"
    witness = f"open({str(ran)!r}, 'a').write('ran\\n')\n"
    (project.path / "precompact" / "edges").mkdir(parents=True)
    (project.path / "precompact" / "__init__.py").write_text(witness)
    (project.path / "precompact" / "edges" / "__init__.py").write_text("")
    (project.path / "precompact" / "edges" / "command.py").write_text(f"def main():\n    {witness}")
    (project.path / "sitecustomize.py").write_text(witness)
    with claude_code.session_in(project, home, claude_binary) as setup:
        settings_file = project.path / ".claude" / "settings.json"
        settings = json.loads(settings_file.read_text())
        settings["env"] = {"PYTHONPATH": "."}
        witness_hook = {"type": "command", "command": f"printf '%s' \"$PYTHONPATH\" > {seen}"}
        settings["hooks"]["PreCompact"].append({"matcher": "auto|manual", "hooks": [witness_hook]})
        settings_file.write_text(json.dumps(settings))
        setup.session.env["PATH"] = AGENT_PATH
        compacted(setup.session)
        wait_for_worker(project)
        assert seen.read_text() == ".", "Claude Code hands the settings' env to the hooks"
        assert any(e["event"] == "SAVEPOINT_CREATED" for e in setup.index()), "precompact's PreCompact saved"
    assert not ran.exists(), "nothing of the project's ran as precompact"


def test_the_models_precompact_commands_run_neither_the_projects_git_nor_its_roots(tmp_path, claude_binary):
    """Review5 F1 under the real Claude Code: the project's `.claude/settings.json` puts a `bin` of
    its own first on PATH (relative: the repository need not know where it is cloned) and tries to
    blank CLAUDECODE; the model runs `precompact verify`, as precompact's own lines tell it to, and
    `status` with an instance of its choosing. The project's git never runs (before: GitPython's
    `git version` probe ran it), Claude Code's marker is still there, and `status` keeps the
    approved instance, naming the variable it ignored."""
    project = new_project(tmp_path, "project", git_layer=True, chain_layer=False)
    marker = tmp_path / "PWNED"
    command = "precompact verify; echo CC=${CLAUDECODE-unset}; PRECOMPACT_INSTANCE='Other #2' precompact status 2>&1"
    script = Script(plans={"check": [[("Bash", {"command": command})]]})
    with claude_code.session_in(project, tmp_path / "home", claude_binary, "--scope", "user", script=script) as setup:
        (project.path / "bin").mkdir()
        (project.path / "bin" / "git").write_text(
            f'#!/bin/sh\necho "$*" >> {marker}\nexec {shutil.which("git")} "$@"\n'
        )
        (project.path / "bin" / "git").chmod(0o755)
        path = f"bin{os.pathsep}{setup.session.environment()['PATH']}"
        (project.path / ".claude").mkdir(exist_ok=True)
        (project.path / ".claude" / "settings.json").write_text(json.dumps({"env": {"PATH": path, "CLAUDECODE": ""}}))
        setup.session.run_in_one_process(["Remember the word pelican.", "/compact"])
        wait_for_worker(project)
        marker.unlink(missing_ok=True)
        setup.session.run("[[plan:check]] check the savepoints", resume=None)
        results = [
            block.get("content")
            for request in setup.session.mock.requests
            for message in (request["body"] or {}).get("messages", [])
            if isinstance(message.get("content"), list)
            for block in message["content"]
            if isinstance(block, dict) and block.get("type") == "tool_result"
        ]
    assert results, "the model's Bash call ran"
    said = results[-1]
    if isinstance(said, list):  # text blocks
        said = "".join(part.get("text", "") for part in said if isinstance(part, dict))
    assert "1 savepoint(s) verified" in said and "CC=1" in said, said
    assert "PRECOMPACT_INSTANCE ignored" in said and "Trial #1: 1 savepoint(s)" in said and "Other #2" not in said, said
    assert not marker.exists(), f"the project's git ran: {marker.read_text()}"
