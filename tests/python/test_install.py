"""`precompact install` / `uninstall` merge into Claude Code's settings.json and touch nothing else."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from precompact.config import install as installer
from support.commands import PRECOMPACT, invoke, precompact
from support.projects import trust

# What the hooks run: this precompact by absolute path, whatever PATH the agent has.
ENTRY = str(Path(PRECOMPACT).resolve())
# The PATH of an agent started where precompact's virtual environment is not active.
AGENT_PATH = "/usr/bin:/bin"

OTHERS = {
    "permissions": {"allow": ["Bash(npm test:*)"]},
    "hooks": {
        "PreCompact": [{"matcher": "manual", "hooks": [{"type": "command", "command": "backup.sh", "timeout": 5}]}],
        "PostToolUse": [{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "prettier --write"}]}],
        "Stop": [],
    },
    "model": "opus",
}


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return tmp_path


def settings_file(project: Path) -> Path:
    return project / ".claude" / "settings.json"


def ours(settings: dict) -> dict:
    return {
        event: [
            (g.get("matcher"), h["timeout"])
            for g in groups
            for h in g["hooks"]
            if h["command"].startswith(f"{ENTRY} hook")
        ]
        for event, groups in settings["hooks"].items()
        if any(h["command"].startswith(f"{ENTRY} hook") for g in groups for h in g["hooks"])
    }


def test_install_into_a_new_file_then_again_changes_nothing(project):
    result = invoke("install")
    assert (
        result.exit_code == 0
        and "installed the PreCompact, PostCompact, SessionStart, SessionEnd, UserPromptSubmit and PostToolUse hooks"
        in result.output
    )
    settings = json.loads(settings_file(project).read_text())
    assert ours(settings) == {
        "PreCompact": [("auto|manual", 60)],
        "PostCompact": [("auto|manual", 15)],
        "SessionStart": [("compact|resume", 30)],
        "SessionEnd": [(None, 5)],
        # Every prompt and tool call, with no matcher: Claude Code cannot register a hook only while
        # something is pending; with nothing pending the hook answers after two stats.
        "UserPromptSubmit": [(None, 10)],
        "PostToolUse": [(None, 10)],
    }
    commands = {event: h["command"] for event, groups in settings["hooks"].items() for g in groups for h in g["hooks"]}
    assert {event: command for event, command in commands.items() if event != "SessionStart"} == {
        "PreCompact": f"{ENTRY} hook",
        "PostCompact": f"{ENTRY} hook",
        "SessionEnd": f"{ENTRY} hook",
        "UserPromptSubmit": f"{ENTRY} hook",
        "PostToolUse": f"{ENTRY} hook",
    }, "by absolute path: nothing depends on the PATH Claude Code starts with"
    assert commands["SessionStart"].startswith(f"{ENTRY} hook || "), "with the fallback that says it cannot start"
    before = settings_file(project).read_bytes()
    again = invoke("install")
    assert again.exit_code == 0 and "already installed" in again.output
    assert settings_file(project).read_bytes() == before


def sh(command: str, stdin: str, cwd: Path) -> subprocess.CompletedProcess:
    """`command` as Claude Code 2.1.332 runs a hook's: /bin/sh -c, with the agent's PATH."""
    return subprocess.run(
        ["/bin/sh", "-c", command],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=30,
        cwd=cwd,
        env={**os.environ, "PATH": AGENT_PATH},
        check=False,
    )


def test_the_installed_command_runs_the_hook_with_a_path_that_lacks_precompact(project):
    invoke("install")
    command = json.loads(settings_file(project).read_text())["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    result = sh(command, json.dumps({"hook_event_name": "Notification", "cwd": str(project)}), project)
    assert result.returncode == 0 and "event 'Notification' is not handled" in result.stderr
    assert result.stdout == "", "the fallback stays quiet when precompact started"


def test_when_the_installed_precompact_cannot_start_session_start_tells_the_user(project):
    moved = project / "bin" / "precompact"
    moved.parent.mkdir()
    moved.write_bytes(Path(PRECOMPACT).read_bytes())
    moved.chmod(0o755)
    installed = subprocess.run(
        [str(moved), "install"],
        cwd=project,
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": AGENT_PATH},
        check=False,
    )
    assert installed.returncode == 0, installed.stderr
    assert f"running {moved}" in installed.stdout
    hooks = json.loads(settings_file(project).read_text())["hooks"]
    moved.unlink()
    event = json.dumps({"hook_event_name": "SessionStart", "source": "compact", "cwd": str(project)})
    said = sh(hooks["SessionStart"][0]["hooks"][0]["command"], event, project)
    assert said.returncode == 0, "exit 0: Claude Code shows a systemMessage only then"
    assert json.loads(said.stdout) == {
        "systemMessage": f"precompact: its hook could not start ({moved} is missing or broken), so this session is not being saved; run `precompact install` again with the precompact you use"
    }
    assert sh(hooks["PreCompact"][0]["hooks"][0]["command"], event, project).returncode == 127, (
        "PreCompact's stdout would go to the summariser: no fallback there"
    )


# What stands where SessionStart's command names precompact, and the status /bin/sh ends with.
STARTS = {
    "missing": (None, 127),
    "not executable": ("exit 0", 126),
    "killed by a signal": ("kill -9 $$", 137),  # it started: not an install to mend
    "failed": ("exit 3", 3),
    "succeeded": ("exit 0", 0),
}


@pytest.mark.parametrize("case", STARTS)
def test_session_start_says_the_hook_could_not_start_for_exit_126_or_127_only(tmp_path, case):
    program, status = STARTS[case]
    entry = tmp_path / "precompact"
    if program is not None:
        entry.write_text(f"#!/bin/sh\n{program}\n")
        entry.chmod(0o644 if status == 126 else 0o755)
    said = sh(installer.hook_command(entry, "claude", "SessionStart"), "{}", tmp_path)
    if status in (126, 127):
        assert said.returncode == 0, "exit 0: Claude Code shows a systemMessage only then"
        assert json.loads(said.stdout) == {"systemMessage": installer.NOT_STARTED.format(command=entry)}
    else:
        assert (said.returncode, said.stdout) == (status, ""), "a precompact that started: its status passes through"


def test_an_install_with_the_older_session_start_fallback_is_rewritten(project):
    older = f"{ENTRY} hook || {{ s=$?; [ $s -lt 126 ] && exit $s; printf '%s\\n' x; }}"
    settings_file(project).parent.mkdir()
    settings_file(project).write_text(
        json.dumps({"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": older, "timeout": 10}]}]}})
    )
    assert invoke("install").exit_code == 0
    commands = [
        h["command"]
        for g in json.loads(settings_file(project).read_text())["hooks"]["SessionStart"]
        for h in g["hooks"]
    ]
    assert commands == [installer.hook_command(Path(ENTRY), "claude", "SessionStart")]


def test_other_settings_and_hooks_are_preserved_and_uninstall_restores_them(project):
    settings_file(project).parent.mkdir()
    settings_file(project).write_text(json.dumps(OTHERS, indent=4))
    assert invoke("install").exit_code == 0
    merged = json.loads(settings_file(project).read_text())
    assert merged["hooks"]["PreCompact"][0] == OTHERS["hooks"]["PreCompact"][0]
    assert {k: v for k, v in merged.items() if k != "hooks"} == {k: v for k, v in OTHERS.items() if k != "hooks"}
    # The user's own PostToolUse group stays first, as it was; precompact's is added after it.
    assert merged["hooks"]["PostToolUse"][:-1] == OTHERS["hooks"]["PostToolUse"] and merged["hooks"]["Stop"] == []
    assert ours(merged)["PostToolUse"] == [(None, 10)]
    assert list(merged) == list(OTHERS)
    result = invoke("uninstall")
    assert result.exit_code == 0 and "removed precompact's hooks" in result.output
    assert json.loads(settings_file(project).read_text()) == OTHERS
    assert "nothing changed" in invoke("uninstall").output


def test_an_older_install_is_replaced_not_duplicated(project):
    stale = {
        "hooks": {
            "PreCompact": [
                {
                    "matcher": "auto",
                    "hooks": [
                        {"type": "command", "command": "/old/venv/bin/precompact hook", "timeout": 5},
                        {"type": "command", "command": "notify.sh"},
                    ],
                }
            ]
        }
    }
    settings_file(project).parent.mkdir()
    settings_file(project).write_text(json.dumps(stale))
    assert invoke("install").exit_code == 0
    settings = json.loads(settings_file(project).read_text())
    assert settings["hooks"]["PreCompact"][0] == {
        "matcher": "auto",
        "hooks": [{"type": "command", "command": "notify.sh"}],
    }
    assert ours(settings)["PreCompact"] == [("auto|manual", 60)]


@pytest.mark.parametrize("content", ["{not json", "[1, 2]", '{"hooks": {"PreCompact": {"matcher": "auto"}}}'])
def test_unusable_settings_are_refused_and_left_alone(project, content):
    settings_file(project).parent.mkdir()
    settings_file(project).write_text(content)
    for command in ("install", "uninstall"):
        result = invoke(command)
        assert result.exit_code == 1 and "precompact will not overwrite it" in result.output
        assert len(result.output.strip().splitlines()) == 1
    assert settings_file(project).read_text() == content


def test_dry_run_names_each_file_and_writes_nothing(project):
    result = precompact(project, "install", "--dry-run", "--mcp")
    assert result.returncode == 0, result.stderr
    mcp_json = project / ".mcp.json"
    first, rest = result.stdout.split("\n", 1)
    assert first == f"{mcp_json}:"
    server, settings = rest.split(f"\n{settings_file(project)}:\n")
    assert json.loads(server)["mcpServers"]["precompact"] == {"type": "stdio", "command": ENTRY, "args": ["mcp"]}
    assert '"PreCompact"' in settings and json.loads(settings)["enabledMcpjsonServers"] == ["precompact"]
    assert not settings_file(project).exists() and not mcp_json.exists()
    user = precompact(project, "install", "--dry-run", "--mcp", "--scope", "user", home=project / "home")
    assert user.stdout.startswith(f"{project / 'home' / '.claude.json'}:\n")
    assert f"\n{project / 'home' / '.claude' / 'settings.json'}:\n" in user.stdout


def test_user_scope_and_configured_session_start_sources(project):
    (project / ".precompact.toml").write_text(
        'instance = "A #1"\n[hooks]\nsession_start_sources = ["compact", "resume", "startup"]\n'
    )
    trust(project)
    assert invoke("install", "--scope", "user").exit_code == 0
    settings = json.loads((project / "home" / ".claude" / "settings.json").read_text())
    assert ours(settings)["SessionStart"] == [("compact|resume|startup", 30)]
    assert not settings_file(project).exists()


def test_from_a_subdirectory_the_project_scope_goes_to_the_root_and_the_user_scope_is_advised(project, monkeypatch):
    assert invoke("init", "--yes", "--keypair", str(project / "k.json")).exit_code == 0
    deep = project / "src" / "deep"
    deep.mkdir(parents=True)
    monkeypatch.chdir(deep)
    result = invoke("install")
    assert result.exit_code == 0
    assert settings_file(project).is_file() and not (deep / ".claude").exists()
    assert f"Claude Code runs these hooks only when started in {project} itself" in result.output
    assert "`precompact install --scope user`" in result.output
    user = invoke("install", "--scope", "user")
    assert user.exit_code == 0 and "precompact install --scope user" not in user.output
    assert ours(json.loads((project / "home" / ".claude" / "settings.json").read_text()))["PreCompact"] == [
        ("auto|manual", 60)
    ]


def test_a_bare_precompact_from_an_older_install_is_upgraded_by_installing_again(project):
    bare = {"type": "command", "command": "precompact hook", "timeout": 60}
    settings_file(project).parent.mkdir()
    settings_file(project).write_text(
        json.dumps({"hooks": {"PreCompact": [{"matcher": "auto|manual", "hooks": [bare]}]}})
    )
    (project / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"precompact": {"command": "precompact", "args": ["mcp"]}}})
    )
    assert invoke("install", "--mcp").exit_code == 0
    settings = json.loads(settings_file(project).read_text())
    assert ours(settings)["PreCompact"] == [("auto|manual", 60)]
    assert "precompact hook" not in {h["command"] for g in settings["hooks"]["PreCompact"] for h in g["hooks"]}
    assert json.loads((project / ".mcp.json").read_text())["mcpServers"]["precompact"]["command"] == ENTRY


def test_user_scope_mcp_goes_where_claude_code_reads_user_servers_and_uninstall_takes_it_back(project):
    state = project / "home" / ".claude.json"
    state.parent.mkdir()
    state.write_text(json.dumps({"numStartups": 3, "mcpServers": {"other": {"command": "/bin/other"}}}))
    state.chmod(0o600)
    assert invoke("install", "--scope", "user", "--mcp").exit_code == 0
    written = json.loads(state.read_text())
    assert written["numStartups"] == 3 and written["mcpServers"]["other"] == {"command": "/bin/other"}
    assert written["mcpServers"]["precompact"] == {"type": "stdio", "command": ENTRY, "args": ["mcp"]}
    assert state.stat().st_mode & 0o777 == 0o600
    assert not (project / ".mcp.json").exists(), "not the project's file"
    user_settings = json.loads((project / "home" / ".claude" / "settings.json").read_text())
    assert "enabledMcpjsonServers" not in user_settings, "no project server to approve"
    assert "mcp__precompact__recall" in user_settings["permissions"]["allow"]
    assert invoke("uninstall", "--scope", "user").exit_code == 0
    assert json.loads(state.read_text()) == {"numStartups": 3, "mcpServers": {"other": {"command": "/bin/other"}}}


def test_with_the_plugin_enabled_the_user_scope_is_refused_and_the_project_scope_says_the_plugin_stands_down(project):
    user_settings = project / "home" / ".claude" / "settings.json"
    user_settings.parent.mkdir(parents=True)
    user_settings.write_text(json.dumps({"enabledPlugins": {"other@x": True, "precompact@precompact": True}}))
    before = user_settings.read_bytes()
    refused = invoke("install", "--scope", "user")
    assert refused.exit_code == 1
    assert (
        "the precompact@precompact plugin is enabled in Claude Code and already runs these hooks in every project; nothing installed"
        in refused.output
    )
    assert user_settings.read_bytes() == before
    project_scope = invoke("install")
    assert (
        project_scope.exit_code == 0
        and "the precompact@precompact plugin's hooks stand down where these run" in project_scope.output
    )
    user_settings.write_text(json.dumps({"enabledPlugins": {"precompact@precompact": False}}))
    assert invoke("install", "--scope", "user").exit_code == 0


def doctor_lines(project: Path, check: str) -> list[str]:
    done = precompact(project, "doctor", home=project / "home")
    return [line for line in done.stdout.splitlines() if line[2:].startswith(f"{check}: ")]


def test_doctor_fails_a_bare_command_and_never_runs_a_program_a_project_names(project):
    (project / "home").mkdir()
    planted = project / "planted" / "precompact"
    planted.parent.mkdir()
    ran = project / "ran"
    planted.write_text(f"#!/bin/sh\ntouch {ran}\necho 'precompact, version 9'\n")
    planted.chmod(0o755)
    settings_file(project).parent.mkdir()
    hooks = {"PreCompact": [{"matcher": "auto|manual", "hooks": [{"type": "command", "command": f"{planted} hook"}]}]}
    settings_file(project).write_text(json.dumps({"hooks": hooks}))
    user_settings = project / "home" / ".claude" / "settings.json"
    user_settings.parent.mkdir()
    bare = {"SessionEnd": [{"hooks": [{"type": "command", "command": "precompact hook"}]}]}
    user_settings.write_text(json.dumps({"hooks": bare}))
    [project_line] = doctor_lines(project, "claude hook command")[:1]
    assert project_line == (
        f'✗ claude hook command: {settings_file(project)} runs "{planted}", not this precompact ({ENTRY}); not started; '
        "fix: precompact install --scope project"
    )
    assert not ran.exists(), "a repository's settings are outside input: its program is not run"
    [user_line] = doctor_lines(project, "claude hook command")[1:]
    assert user_line.startswith(
        f'✗ claude hook command: {user_settings} runs a bare "precompact", which depends on the PATH the agent starts with ('
    ) and user_line.endswith("fix: precompact install --scope user (it writes the absolute path)")
    assert "precompact on PATH" not in precompact(project, "doctor", home=project / "home").stdout
    assert precompact(project, "install", "--scope", "user", home=project / "home").returncode == 0
    [user_line] = doctor_lines(project, "claude hook command")[1:]
    assert user_line.startswith(f'✓ claude hook command: {user_settings} runs "{ENTRY}", which starts with your PATH')


def test_mcp_tools_count_as_offered_only_where_the_agent_reads_a_precompact_server(project, monkeypatch):
    from precompact.config import agent_settings, install

    home = project / "home"
    (home / ".claude").mkdir(parents=True)
    server = {"mcpServers": {"precompact": {"command": ENTRY, "args": ["mcp"]}}}
    for agent in install.AGENTS:
        assert not agent_settings.mcp_installed(agent, project, home)
    (home / ".claude.json").write_text(json.dumps({"projects": {str(project): server}}))
    assert agent_settings.mcp_installed("claude", project, home), "local scope: ~/.claude.json for this project"
    assert not agent_settings.mcp_installed("claude", project / "other", home)
    (home / ".claude.json").write_text(json.dumps(server))
    assert agent_settings.mcp_installed("claude", project / "other", home), "user scope: every project"
    (home / ".claude.json").unlink()
    (home / ".claude" / "settings.json").write_text(json.dumps({"enabledPlugins": {"precompact@precompact": True}}))
    assert agent_settings.mcp_installed("claude", project, home), "the plugin brings its server"
    monkeypatch.setenv("CODEX_HOME", str(home / "codex"))
    (home / "codex").mkdir()
    (home / "codex" / "config.toml").write_text(f'[mcp_servers.precompact]\ncommand = "{ENTRY}"\nargs = ["mcp"]\n')
    assert agent_settings.mcp_installed("codex", project, home)
    (project / ".gemini").mkdir()
    (project / ".gemini" / "settings.json").write_text(json.dumps(server))
    assert agent_settings.mcp_installed("gemini", project, home)
    (home / ".claude" / "settings.json").unlink()
    (project / ".mcp.json").write_text("[" * 10_000)
    assert not agent_settings.mcp_installed("claude", project, home), (
        "a hostile .mcp.json is read as nothing, not a crash"
    )
    (project / ".mcp.json").write_text(json.dumps(server))
    assert agent_settings.mcp_installed("claude", project, home), "the project's .mcp.json"


def opencode_plugin(project: Path) -> Path:
    return project / ".opencode" / "plugin" / "precompact.js"


def test_opencode_gets_precompacts_plugin_running_this_precompact_and_uninstall_takes_it_back(project):
    done = invoke("install", "--agent", "opencode")
    assert done.exit_code == 0, done.output
    plugin = opencode_plugin(project)
    text = plugin.read_text()
    assert f"const PRECOMPACT = {json.dumps(ENTRY)};" in text and '["hook", "--agent", "opencode"]' in text
    assert plugin.stat().st_mode & 0o777 == 0o600
    assert "already installed" in invoke("install", "--agent", "opencode").output
    [line] = doctor_lines(project, "opencode hook command")
    assert line.startswith(f'✓ opencode hook command: {plugin} runs "{ENTRY}", which starts with your PATH')
    removed = invoke("uninstall", "--agent", "opencode")
    assert removed.exit_code == 0 and not plugin.exists(), removed.output
    assert "nothing changed" in invoke("uninstall", "--agent", "opencode").output


def test_a_file_in_opencodes_plugin_place_that_is_not_ours_is_never_overwritten_or_removed(project):
    plugin = opencode_plugin(project)
    plugin.parent.mkdir(parents=True)
    plugin.write_text("export const Mine = async () => ({})\n")
    for command in (("install", "--agent", "opencode"), ("uninstall", "--agent", "opencode")):
        done = invoke(*command)
        assert done.exit_code == 1
        assert done.output.strip().endswith(
            f"{plugin} is not precompact's plugin; move it away, precompact will not overwrite it"
        )
    assert plugin.read_text() == "export const Mine = async () => ({})\n"


def test_opencode_user_scope_goes_to_its_config_directory_and_dry_run_writes_nothing(project, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(project / "config"))
    dry = invoke("install", "--agent", "opencode", "--scope", "user", "--dry-run")
    target = project / "config" / "opencode" / "plugin" / "precompact.js"
    assert dry.exit_code == 0 and dry.output.startswith(f"{target}:\n// precompact's plugin for OpenCode")
    assert not target.exists()
    assert invoke("install", "--agent", "opencode", "--scope", "user").exit_code == 0 and target.exists()
