"""`precompact install` / `uninstall` merge into Claude Code's settings.json and touch nothing else."""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from precompact.config import install as installer
from support.commands import INSTALLED_PYTHON, PRECOMPACT, another_python, installed_command, invoke, precompact
from support.projects import trust

# What the hooks run: this precompact by absolute path, whatever PATH the agent has, started by
# its Python isolated (-I), so that no PYTHON* variable of the agent's environment counts.
ENTRY = str(Path(PRECOMPACT).resolve())
RUN = shlex.join(installed_command())
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
    """A project folder, and the user's home beside it: a HOME inside a project is refused by
    every command (docs/security.md, the agent's environment), which would then use the real one."""
    folder = tmp_path / "project"
    folder.mkdir()
    monkeypatch.chdir(folder)
    monkeypatch.setenv("HOME", str(home_of(folder)))
    return folder


def home_of(project: Path) -> Path:
    return project.parent / "home"


def settings_file(project: Path) -> Path:
    return project / ".claude" / "settings.json"


def ours(settings: dict) -> dict:
    return {
        event: [
            (g.get("matcher"), h["timeout"])
            for g in groups
            for h in g["hooks"]
            if h["command"].startswith(f"{RUN} hook")
        ]
        for event, groups in settings["hooks"].items()
        if any(h["command"].startswith(f"{RUN} hook") for g in groups for h in g["hooks"])
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
        # something is pending; with nothing pending the hook answers after three stats.
        "UserPromptSubmit": [(None, 10)],
        "PostToolUse": [(None, 10)],
    }
    commands = {event: h["command"] for event, groups in settings["hooks"].items() for g in groups for h in g["hooks"]}
    assert {
        event: command for event, command in commands.items() if event not in ("SessionStart", "UserPromptSubmit")
    } == {
        "PreCompact": f"{RUN} hook || exit 0",
        "PostCompact": f"{RUN} hook || exit 0",
        "SessionEnd": f"{RUN} hook || exit 0",
        "PostToolUse": f"{RUN} hook || exit 0",
    }, "by absolute path: nothing depends on the PATH Claude Code starts with; never exit 2, its block"
    for says in ("SessionStart", "UserPromptSubmit"):
        assert commands[says].startswith(f"{RUN} hook || "), "with the fallback that says it cannot start"
    before = settings_file(project).read_bytes()
    again = invoke("install")
    assert again.exit_code == 0 and "already installed" in again.output
    assert settings_file(project).read_bytes() == before


def sh(command: str, stdin: str, cwd: Path, shell: str = "/bin/sh") -> subprocess.CompletedProcess:
    """`command` as an agent runs a hook's (Claude Code 2.1.332: /bin/sh -c), with the agent's PATH."""
    return subprocess.run(
        [shell, "-c", command],
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


# How precompact cannot start once installed: its script gone (`pip uninstall`, a venv rebuilt
# without it: Python exits 2, the agents' "block"), its Python gone (the shell's 127) or not
# executable (126).
CANNOT_START = ("script removed", "Python removed", "Python not executable")
# What each agent runs a hook's command with: Claude Code 2.1.332 /bin/sh -c, Codex 0.171.0
# /bin/bash -c, Gemini 0.61.0 its shell (bash where there is one).
SHELLS = {"claude": ("/bin/sh",), "codex": ("/bin/bash",), "gemini": ("/bin/sh", "/bin/bash")}


def a_precompact_of_its_own(folder: Path) -> tuple[Path, Path]:
    """This precompact's console script and a virtual environment's Python, in `folder`, so that
    a test can remove either: the environment's `bin/python3` is a link to this one's (what a
    venv's is), its `lib` this one's site-packages."""
    venv = folder / "venv"
    (venv / "bin").mkdir(parents=True)
    here = Path(INSTALLED_PYTHON).parent.parent
    (venv / "pyvenv.cfg").write_bytes((here / "pyvenv.cfg").read_bytes())
    (venv / "lib").symlink_to(here / "lib")
    python = venv / "bin" / "python3"
    python.symlink_to(INSTALLED_PYTHON)
    script = venv / "bin" / "precompact"
    script.write_text(f"#!{python}\n" + Path(PRECOMPACT).read_text().split("\n", 1)[1])
    script.chmod(0o755)
    return python, script


def install_with(script: Path, project: Path, *args: str) -> subprocess.CompletedProcess:
    """`install ARGS` run by the precompact `script`, in `project`, with the agent's PATH."""
    return subprocess.run(
        [str(script), "install", *args],
        cwd=project,
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": AGENT_PATH},
        check=False,
    )


@pytest.mark.parametrize("broken", CANNOT_START)
@pytest.mark.parametrize("agent", ("claude", "codex", "gemini"))
def test_no_installed_hook_command_blocks_the_agent_when_precompact_cannot_start(project, agent, broken, monkeypatch):
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    python, script = a_precompact_of_its_own(project.parent)
    installed = install_with(script, project, "--agent", agent, "--scope", "user")
    assert installed.returncode == 0, installed.stderr
    hooks = json.loads(installer.hooks_path(agent, "user", project, home_of(project)).read_text())["hooks"]
    if broken == "script removed":
        script.unlink()
    elif broken == "Python removed":
        python.unlink()
    else:
        python.unlink()
        python.write_text("#!/bin/sh\nexit 0\n")
    ran = 0
    for event, groups in hooks.items():
        payload = json.dumps({"hook_event_name": event, "source": "resume", "cwd": str(project), "session_id": "s"})
        for command in [h["command"] for g in groups for h in g["hooks"] if installer.is_ours(h)]:
            for shell in SHELLS[agent]:
                said = sh(command, payload, project, shell)
                assert said.returncode == 0, f"{agent} {event} ({broken}): exit {said.returncode}, {said.stderr}"
                if event in installer.SAYS_NOT_STARTED[agent]:
                    told = installer.NOT_STARTED.format(command=script, fix=installer.install_fix(agent, "user"))
                    assert json.loads(said.stdout) == {"systemMessage": told}, f"{agent} {event}: the user is told"
                else:
                    assert said.stdout == "", f"{agent} {event}: its stdout is not the user's to read"
                ran += 1
    assert ran >= len(hooks) * len(SHELLS[agent]) >= 3


# What stands where SessionStart's command names precompact's Python and its script: (the Python,
# its mode), (the script, its mode), and whether precompact ran to its answer (False: it did not,
# and the user is told: `precompact hook` exits 0 once it answered, so any other status under 128
# is one that never did). The command exits 0 either way: 2 is the agents' "block".
STARTS = {
    "Python missing": ((None, 0), ("pass", 0o644), False),
    "Python not executable": (("#!/bin/sh\nexit 0\n", 0o644), ("pass", 0o644), False),
    "script missing": ((sys.executable, 0), (None, 0), False),
    "script unreadable": ((sys.executable, 0), ("pass", 0o000), False),
    "killed by a signal": ((sys.executable, 0), ("import os; os.kill(os.getpid(), 9)", 0o644), True),
    "failed with 2": ((sys.executable, 0), ("raise SystemExit(2)", 0o644), False),
    "failed": ((sys.executable, 0), ("raise SystemExit(3)", 0o644), False),
    "cannot import precompact": ((sys.executable, 0), ("import precompact_of_another_python", 0o644), False),
    "succeeded": ((sys.executable, 0), ("pass", 0o644), True),
}


@pytest.mark.parametrize("case", STARTS)
def test_session_start_says_the_hook_could_not_start_only_when_it_did_not_run_to_its_answer(tmp_path, case):
    (python, python_mode), (script, script_mode), started = STARTS[case]
    if case == "script unreadable" and os.geteuid() == 0:
        pytest.skip("root reads every file")
    interpreter = Path(sys.executable) if python == sys.executable else tmp_path / "python"
    if python not in (None, sys.executable):
        interpreter.write_text(python)
        interpreter.chmod(python_mode)
    entry = tmp_path / "precompact"
    if script is not None:
        entry.write_text(f"{script}\n")
        entry.chmod(script_mode)
    command = installer.hook_command(installer.Program(interpreter, entry), "claude", "SessionStart", "project")
    said = sh(command, "{}", tmp_path)
    assert said.returncode == 0, "never 2 (Claude Code's block); a systemMessage is shown only on 0"
    if started:
        assert said.stdout == "", "a precompact that started said what it had to"
    else:
        told = installer.NOT_STARTED.format(command=entry, fix="precompact install --scope project")
        assert json.loads(said.stdout) == {"systemMessage": told}


def test_a_python_of_another_version_than_its_environment_is_said_and_never_taken_to_start(project):
    """review15a F3: after an OS upgrade the venv's python3 link runs the next minor Python, which
    starts, cannot import precompact and exits 1: the user is told (it was silent), and
    `can_start`, which the plugin's stand-down trusts, no longer says it starts."""
    other = another_python()
    if other is None:
        pytest.skip("no Python of another minor version on this machine")
    python, script = a_precompact_of_its_own(project.parent)
    command = installer.hook_command(installer.Program(python, script), "claude", "SessionStart", "user")
    payload = json.dumps({"hook_event_name": "SessionStart", "source": "resume", "cwd": str(project)})
    assert installer.can_start(command, AGENT_PATH) and installer.other_python(python) is None
    assert sh(command, payload, project).stdout == "", "precompact ran and answered"
    python.unlink()
    python.symlink_to(other)
    said = sh(command, payload, project)
    assert said.returncode == 0 and said.stderr, said.stdout
    told = installer.NOT_STARTED.format(command=script, fix=installer.install_fix("claude", "user"))
    assert json.loads(said.stdout) == {"systemMessage": told}
    assert not installer.can_start(command, AGENT_PATH)
    made_with = f"{sys.version_info[0]}.{sys.version_info[1]}"
    now = os.path.basename(os.path.realpath(other)).removeprefix("python")
    assert (
        installer.other_python(python)
        == f"its Python {python} now runs Python {now}, not the {made_with} it was made with"
    )


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
    assert commands == [
        installer.hook_command(
            installer.Program(Path(INSTALLED_PYTHON), Path(ENTRY)), "claude", "SessionStart", "project"
        )
    ]


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
    assert json.loads(server)["mcpServers"]["precompact"] == {
        "type": "stdio",
        "command": INSTALLED_PYTHON,
        "args": installed_command("mcp")[1:],
    }
    assert '"PreCompact"' in settings and json.loads(settings)["enabledMcpjsonServers"] == ["precompact"]
    assert not settings_file(project).exists() and not mcp_json.exists()
    user = precompact(project, "install", "--dry-run", "--mcp", "--scope", "user", home=home_of(project))
    assert user.stdout.startswith(f"{home_of(project) / '.claude.json'}:\n")
    assert f"\n{home_of(project) / '.claude' / 'settings.json'}:\n" in user.stdout


def test_user_scope_and_configured_session_start_sources(project):
    (project / ".precompact.toml").write_text(
        'instance = "A #1"\n[hooks]\nsession_start_sources = ["compact", "resume", "startup"]\n'
    )
    trust(project)
    assert invoke("install", "--scope", "user").exit_code == 0
    settings = json.loads((home_of(project) / ".claude" / "settings.json").read_text())
    assert ours(settings)["SessionStart"] == [("compact|resume|startup", 30)]
    assert not settings_file(project).exists()


def test_with_claude_config_dir_set_in_your_own_shell_install_writes_and_doctor_reads_the_settings_claude_code_reads(
    project,
):
    """Claude Code 2.1.332 with CLAUDE_CONFIG_DIR set reads `$CLAUDE_CONFIG_DIR/settings.json`
    and not `~/.claude/settings.json` (seen: a SessionStart hook in each, only the first ran), and
    keeps `.claude.json` there; it hands the variable to its Bash tool with CLAUDECODE=1, and a
    project's `env` setting neither sets nor overrides it there (seen). Where it is not followed
    (test_a_claude_config_dir_precompact_does_not_follow_is_refused_never_replaced_by_the_home_folder),
    nothing is written."""
    new_project_here(project)
    folder = project.parent / "claude-config"
    home_settings = home_of(project) / ".claude" / "settings.json"
    mine = {"CLAUDE_CONFIG_DIR": str(folder)}
    done = precompact(project, "install", "--scope", "user", "--mcp", env=mine, home=home_of(project))
    assert done.returncode == 0, done.stderr
    assert ours(json.loads((folder / "settings.json").read_text()))["PreCompact"] == [("auto|manual", 60)]
    assert "precompact" in json.loads((folder / ".claude.json").read_text())["mcpServers"]
    assert not home_settings.exists() and not (home_of(project) / ".claude.json").exists()
    line = hooks_line(project, mine)
    assert line.startswith("✓ hooks: ") and line.endswith(f" in user settings ({folder / 'settings.json'})"), line
    assert hooks_line(project, {}) == (
        f"✗ hooks: Claude Code's: not installed (read {settings_file(project)} or {home_settings}); "
        "fix: precompact install (or the precompact plugin), if you use Claude Code"
    ), "without the variable, Claude Code reads ~/.claude/settings.json"

    (folder / "settings.json").unlink()
    in_claude_code = {**mine, "CLAUDECODE": "1"}
    done = precompact(project, "install", "--scope", "user", env=in_claude_code, home=home_of(project))
    assert done.returncode == 0 and ours(json.loads((folder / "settings.json").read_text())), done.stderr
    assert hooks_line(project, in_claude_code).endswith(f" in user settings ({folder / 'settings.json'})")
    assert not home_settings.exists()


# CLAUDE_CONFIG_DIR values Claude Code follows and precompact does not (Claude Code 2.1.332 with
# an empty one keeps its files in the directory it starts in; a relative one is read from there;
# one seen in another agent's session may be the project's, not what the user's Claude Code runs
# with), each with what the refusal names.
UNFOLLOWED_CONFIG_DIRS = {
    "empty": ({"CLAUDE_CONFIG_DIR": ""}, "CLAUDE_CONFIG_DIR is empty"),
    "relative": ({"CLAUDE_CONFIG_DIR": "claude-config"}, "CLAUDE_CONFIG_DIR ('claude-config') is a relative path"),
    "in the project": (None, "CLAUDE_CONFIG_DIR is empty, or a place in the project"),
    **{
        marker: (None, f"is set in another agent's session ({marker}), whose environment the project can set")
        for marker in ("GEMINI_CLI", "CODEX_THREAD_ID", "OPENCODE")
    },
}


@pytest.mark.parametrize("case", UNFOLLOWED_CONFIG_DIRS)
def test_a_claude_config_dir_precompact_does_not_follow_is_refused_never_replaced_by_the_home_folder(project, case):
    """Hooks written to ~/.claude/settings.json, which that Claude Code does not read, would never
    run, and a ✓ for them would vouch for nothing: install and uninstall --scope user refuse in one
    line naming the fix (exit 1, nothing written), doctor says ✗ naming it."""
    new_project_here(project)
    home_settings = home_of(project) / ".claude" / "settings.json"
    environment, said = UNFOLLOWED_CONFIG_DIRS[case]
    if environment is None and case == "in the project":
        environment = {"CLAUDE_CONFIG_DIR": str(project / "claude-config")}
    elif environment is None:
        environment = {"CLAUDE_CONFIG_DIR": str(project.parent / "claude-config"), case: "1"}
    done = precompact(project, "install", "--scope", "user", "--mcp", env=environment, home=home_of(project))
    [error] = [line for line in done.stderr.splitlines() if line.startswith("Error: ")]
    assert done.returncode == 1 and said in error, done.stderr
    assert "set it to an absolute path" in error or "run this in your own shell" in error, error
    assert not home_settings.exists() and not (home_of(project) / ".claude.json").exists()
    assert not (project.parent / "claude-config").exists() and not (project / "claude-config").exists()
    line = hooks_line(project, environment)
    assert line.startswith("✗ hooks: not checked: ") and said in line, line
    lines = doctor_with(project, environment)
    assert sum(said in line for line in lines) == 1, "the hooks line gives the reason; no other line repeats it"
    [sessions] = [line for line in lines if line[2:].startswith("sessions: ")]
    assert sessions == (
        "✗ sessions: not checked: Claude Code's sessions are in its folder, which is not known here (the hooks check "
        "says why and the fix)"
    ), "never a ✓ for sessions nobody read"

    assert precompact(project, "install", "--scope", "user", home=home_of(project)).returncode == 0
    before = home_settings.read_bytes()
    done = precompact(project, "uninstall", "--scope", "user", env=environment, home=home_of(project))
    assert done.returncode == 1 and said in done.stderr, done.stderr
    assert home_settings.read_bytes() == before, "the file that Claude Code does not read is left as it is"
    assert hooks_line(project, environment).startswith("✗ hooks: not checked: "), "a ✓ only for what was read"

    done = precompact(project, "install", env=environment, home=home_of(project))
    assert done.returncode == 0 and ours(json.loads(settings_file(project).read_text())), done.stderr


def new_project_here(project: Path) -> None:
    assert invoke("init", "--yes", "--keypair", str(project.parent / "k.json")).exit_code == 0


def doctor_with(project: Path, env: dict[str, str]) -> list[str]:
    """doctor's lines, run as a user runs it with `env` in the environment."""
    return precompact(project, "doctor", env=env, home=home_of(project)).stdout.splitlines()


def hooks_line(project: Path, env: dict[str, str]) -> str:
    """doctor's hooks line, run as a user runs it with `env` in the environment."""
    [line] = [line for line in doctor_with(project, env) if line[2:].startswith("hooks: ")]
    return line


def test_from_a_subdirectory_the_project_scope_goes_to_the_root_and_the_user_scope_is_advised(project, monkeypatch):
    assert invoke("init", "--yes", "--keypair", str(project.parent / "k.json")).exit_code == 0
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
    assert ours(json.loads((home_of(project) / ".claude" / "settings.json").read_text()))["PreCompact"] == [
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
    server = json.loads((project / ".mcp.json").read_text())["mcpServers"]["precompact"]
    assert [server["command"], *server["args"]] == installed_command("mcp")


def test_user_scope_mcp_goes_where_claude_code_reads_user_servers_and_uninstall_takes_it_back(project):
    state = home_of(project) / ".claude.json"
    state.parent.mkdir()
    state.write_text(json.dumps({"numStartups": 3, "mcpServers": {"other": {"command": "/bin/other"}}}))
    state.chmod(0o600)
    assert invoke("install", "--scope", "user", "--mcp").exit_code == 0
    written = json.loads(state.read_text())
    assert written["numStartups"] == 3 and written["mcpServers"]["other"] == {"command": "/bin/other"}
    assert written["mcpServers"]["precompact"] == {
        "type": "stdio",
        "command": INSTALLED_PYTHON,
        "args": installed_command("mcp")[1:],
    }
    assert state.stat().st_mode & 0o777 == 0o600
    assert not (project / ".mcp.json").exists(), "not the project's file"
    user_settings = json.loads((home_of(project) / ".claude" / "settings.json").read_text())
    assert "enabledMcpjsonServers" not in user_settings, "no project server to approve"
    assert "mcp__precompact__recall" in user_settings["permissions"]["allow"]
    assert invoke("uninstall", "--scope", "user").exit_code == 0
    assert json.loads(state.read_text()) == {"numStartups": 3, "mcpServers": {"other": {"command": "/bin/other"}}}


def test_with_the_plugin_enabled_the_user_scope_is_refused_and_the_project_scope_says_the_plugin_stands_down(project):
    user_settings = home_of(project) / ".claude" / "settings.json"
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
    done = precompact(project, "doctor", home=home_of(project))
    return [line for line in done.stdout.splitlines() if line[2:].startswith(f"{check}: ")]


def test_doctor_fails_a_bare_command_and_never_runs_a_program_a_project_names(project):
    (home_of(project)).mkdir()
    planted = project / "planted" / "precompact"
    planted.parent.mkdir()
    ran = project / "ran"
    planted.write_text(f"#!/bin/sh\ntouch {ran}\necho 'precompact, version 9'\n")
    planted.chmod(0o755)
    settings_file(project).parent.mkdir()
    hooks = {"PreCompact": [{"matcher": "auto|manual", "hooks": [{"type": "command", "command": f"{planted} hook"}]}]}
    settings_file(project).write_text(json.dumps({"hooks": hooks}))
    user_settings = home_of(project) / ".claude" / "settings.json"
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
    assert "precompact on PATH" not in precompact(project, "doctor", home=home_of(project)).stdout
    assert precompact(project, "install", "--scope", "user", home=home_of(project)).returncode == 0
    [user_line] = doctor_lines(project, "claude hook command")[1:]
    assert user_line.startswith(f'✓ claude hook command: {user_settings} runs "{RUN}", which starts with your PATH')


@pytest.mark.parametrize("agent", ("claude", "codex", "gemini"))
def test_doctor_names_an_older_hook_command_that_can_block_and_the_install_that_mends_it(project, agent, monkeypatch):
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    home_of(project).mkdir()
    hooks_file = installer.hooks_path(agent, "user", project, home_of(project))
    hooks_file.parent.mkdir(parents=True)
    run = f"{RUN} hook" + ("" if agent == "claude" else f" --agent {agent}")
    event = "BeforeAgent" if agent == "gemini" else "UserPromptSubmit"
    older = {event: [{"hooks": [{"type": "command", "command": run, "timeout": 10}]}]}  # before the fallback
    hooks_file.write_text(json.dumps({"hooks": older}))
    fix = "precompact install --scope user" if agent == "claude" else f"precompact install --agent {agent} --scope user"
    assert doctor_lines(project, f"{agent} hook command")[1:] == [
        (
            f"✗ {agent} hook command: {hooks_file}: precompact's {event} hook is an older install's, which can "
            f"block {agent}'s session (exit 2) once precompact cannot start; fix: {fix}"
        )
    ]
    assert precompact(project, *fix.split()[1:], home=home_of(project)).returncode == 0
    [mended] = doctor_lines(project, f"{agent} hook command")
    assert mended.startswith(f"✓ {agent} hook command: {hooks_file} runs")
    # The script gone: the fix names the agent and scope it was found in, never Claude Code's for another.
    gone = project.parent / "gone" / "precompact"
    hooks_file.write_text(hooks_file.read_text().replace(ENTRY, str(gone)))
    [missing] = doctor_lines(project, f"{agent} hook command")
    assert missing == (
        f'✗ {agent} hook command: {hooks_file} runs "{gone}", which does not exist (moved or removed); fix: {fix}'
    )


def test_mcp_tools_count_as_offered_only_where_the_agent_reads_a_precompact_server(project, monkeypatch):
    from precompact.config import agent_settings, install

    home = home_of(project)
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
    # Where Claude Code's folder is not known (the brief is given in a hook, which never fails on
    # it), the project's registration alone counts, never ~/.claude.json's.
    (home / ".claude.json").write_text(json.dumps(server))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", "")
    assert agent_settings.mcp_installed("claude", project, home), "the project's .mcp.json, with the folder unknown"
    (project / ".mcp.json").unlink()
    assert not agent_settings.mcp_installed("claude", project, home), "~/.claude.json is not read in its place"


def opencode_plugin(project: Path) -> Path:
    return project / ".opencode" / "plugin" / "precompact.js"


def test_opencode_gets_precompacts_plugin_running_this_precompact_and_uninstall_takes_it_back(project):
    done = invoke("install", "--agent", "opencode")
    assert done.exit_code == 0, done.output
    plugin = opencode_plugin(project)
    text = plugin.read_text()
    assert f"const PRECOMPACT = {json.dumps(installed_command())};" in text
    assert '"hook", "--agent", "opencode"]' in text
    assert plugin.stat().st_mode & 0o777 == 0o600
    assert "already installed" in invoke("install", "--agent", "opencode").output
    [line] = doctor_lines(project, "opencode hook command")
    assert line.startswith(f'✓ opencode hook command: {plugin} runs "{RUN}", which starts with your PATH')
    removed = invoke("uninstall", "--agent", "opencode")
    assert removed.exit_code == 0 and not plugin.exists(), removed.output
    assert "nothing changed" in invoke("uninstall", "--agent", "opencode").output


def test_an_older_opencode_plugin_is_named_as_precompacts_and_replaced_by_install(project, monkeypatch):
    """An older template of the plugin (one that says nothing when precompact cannot start) is
    precompact's own older form, with the install that replaces it, never "not ours"."""
    current = installer.opencode_plugin(installed_command())
    older = current.replace(
        "// precompact's plugin for OpenCode, written by", "// precompact's plugin for OpenCode (older), by", 1
    )
    template = older.replace(json.dumps(installed_command()), '"__PRECOMPACT__"', 1)
    monkeypatch.setattr(installer, "_OLDER_OPENCODE_TEMPLATES", {hashlib.sha256(template.encode()).hexdigest()})
    plugin = opencode_plugin(project)
    plugin.parent.mkdir(parents=True)
    plugin.write_text(older)
    with pytest.raises(installer.OlderPlugin, match="an older form of precompact's plugin: it says nothing when"):
        installer.opencode_command(plugin)
    plugin.write_text(older + "// a line added\n")
    with pytest.raises(installer.NotOurPlugin, match="is not the plugin precompact writes"):
        installer.opencode_command(plugin)
    plugin.write_text(older)
    assert invoke("install", "--agent", "opencode").exit_code == 0
    assert plugin.read_text() == current and installer.opencode_command(plugin) == installed_command()


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


# --- the agent's environment cannot steer the Python that starts precompact ---------------------

# A project that ships its own `precompact` package and `sitecustomize`, for an agent whose
# environment (Claude Code's `env` in .claude/settings.json, .mcp.json's) sets these.
HOSTILE_PYTHON_ENVIRONMENT = {"PYTHONPATH": ".", "PYTHONUSERBASE": "."}
PLANTED = "PWNED by the project"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "agent", "version": "1"}},
}


def plant_precompact(project: Path) -> None:
    """The reproduction: the project's own `precompact.edges.command.main` and `sitecustomize`."""
    (project / "precompact" / "edges").mkdir(parents=True)
    (project / "precompact" / "__init__.py").write_text("")
    (project / "precompact" / "edges" / "__init__.py").write_text("")
    (project / "precompact" / "edges" / "command.py").write_text(f"def main():\n    print({PLANTED!r})\n")
    (project / "sitecustomize.py").write_text(f"print({PLANTED!r})\n")


def in_shell(command: str, cwd: Path, environment: dict[str, str], stdin: str = "") -> subprocess.CompletedProcess:
    """`command` run as an agent runs an installed command line: by /bin/sh, in `cwd`."""
    return subprocess.run(
        ["/bin/sh", "-c", command],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
        env=environment,
        check=False,
    )


def installed_command_lines(project: Path) -> dict[str, str]:
    """Every command line `install` writes or registers, for each agent, as the agent's shell runs it."""
    home = home_of(project)
    for agent in ("claude", "codex", "gemini", "opencode"):
        for scope in ("project", "user"):
            done = precompact(project, "install", "--agent", agent, "--scope", scope, home=home)
            assert done.returncode == 0, done.stderr
    assert precompact(project, "install", "--mcp", home=home).returncode == 0
    lines = {}
    for name, path in (
        ("claude project", settings_file(project)),
        ("claude user", home / ".claude" / "settings.json"),
        ("codex project", project / ".codex" / "hooks.json"),
        ("codex user", home / ".codex" / "hooks.json"),
        ("gemini project", project / ".gemini" / "settings.json"),
        ("gemini user", home / ".gemini" / "settings.json"),
    ):
        for event, groups in json.loads(path.read_text())["hooks"].items():
            for group in groups:
                lines.update({f"{name} {event}": h["command"] for h in group["hooks"]})  # all ours
    for name, plugin in (
        ("opencode project", opencode_plugin(project)),
        ("opencode user", home / ".config" / "opencode" / "plugin" / "precompact.js"),
    ):
        command = installer.opencode_command(plugin)
        assert command is not None
        lines[name] = shlex.join([*command, "hook", "--agent", "opencode"])  # as its spawn() starts it
    server = json.loads((project / ".mcp.json").read_text())["mcpServers"]["precompact"]
    lines["MCP server"] = shlex.join([server["command"], *server["args"]])
    return lines


def test_no_installed_command_line_lets_the_agents_python_variables_run_the_projects_code(project, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home_of(project) / ".config"))  # OpenCode's user scope
    lines = installed_command_lines(project)
    assert len(lines) == 6 * 2 + 6 * 2 + 3 * 2 + 2 + 1, sorted(lines)
    plant_precompact(project)
    environment = {**os.environ, **HOSTILE_PYTHON_ENVIRONMENT, "HOME": str(home_of(project)), "PATH": AGENT_PATH}
    for name, command in lines.items():
        mcp = name == "MCP server"
        stdin = json.dumps(INITIALIZE) if mcp else json.dumps({"hook_event_name": "Notification", "cwd": str(project)})
        done = in_shell(command, project, environment, stdin + "\n")
        assert PLANTED not in done.stdout + done.stderr, f"{name}: {command}"
        assert done.returncode == 0, f"{name}: {done.stderr}"
        if mcp:
            assert json.loads(done.stdout)["result"]["serverInfo"]["name"] == "precompact", "the server still answers"
        else:
            assert "event 'Notification' is not handled" in done.stderr, f"{name}: the hook still runs"


def test_a_command_the_model_runs_by_the_console_script_reads_its_shells_python_variables(project):
    """What docs/security.md says holds for a `precompact …` the model runs through its shell
    tool: the `precompact` PATH finds there is pip's console script, started by its `#!` line, so
    the shell's PYTHONPATH (the project's to set) runs the project's code before any of
    precompact's, as in every Python program run in that shell; the command line `install` writes
    (`<python> -I <script>`) does not. When the console script isolates itself, this fails and the
    doc changes with it."""
    plant_precompact(project)
    environment = {**os.environ, **HOSTILE_PYTHON_ENVIRONMENT, "HOME": str(home_of(project)), "CLAUDECODE": "1"}
    environment["PATH"] = f"{Path(ENTRY).parent}:{AGENT_PATH}"

    def run(command: str) -> subprocess.CompletedProcess:
        return in_shell(command, project, environment)

    assert Path(ENTRY).read_text().startswith("#!") and "-I" not in Path(ENTRY).read_text().splitlines()[0]
    by_path = run("precompact --version")
    assert PLANTED in by_path.stdout + by_path.stderr, "the console script is not isolated: correct docs/security.md"
    isolated = run(f"{RUN} --version")
    assert PLANTED not in isolated.stdout + isolated.stderr and isolated.returncode == 0, isolated.stderr


def test_an_older_install_starting_precompact_by_its_own_shebang_is_reported_and_mended(project, monkeypatch):
    home = home_of(project)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))  # OpenCode's user scope
    user_settings = home / ".claude" / "settings.json"
    user_settings.parent.mkdir(parents=True)
    older = {"SessionEnd": [{"hooks": [{"type": "command", "command": f"{ENTRY} hook", "timeout": 5}]}]}
    user_settings.write_text(json.dumps({"hooks": older}))
    (home / ".claude.json").write_text(json.dumps({"mcpServers": {"precompact": {"command": ENTRY, "args": ["mcp"]}}}))
    plugin = home / ".config" / "opencode" / "plugin" / "precompact.js"
    plugin.parent.mkdir(parents=True)
    plugin.write_text(installer.opencode_plugin([ENTRY]).replace(json.dumps([ENTRY]), json.dumps(ENTRY)))
    said = doctor_lines(project, "claude hook command") + doctor_lines(project, "MCP server command")
    assert said == [
        f'✗ {check}: {where} runs "{ENTRY}" by its own `#!` line, whose Python reads PYTHONPATH and the other '
        "PYTHON* variables of the agent's environment, which the project sets: a `precompact/` folder it ships "
        f"would run as precompact; fix: precompact install --scope user{mcp} (it starts precompact's Python isolated, -I)"
        for check, where, mcp in (
            ("claude hook command", user_settings, ""),
            ("MCP server command", home / ".claude.json", " --mcp"),
        )
    ]
    [opencode] = doctor_lines(project, "opencode hook command")
    assert opencode == (
        f"✗ opencode hook command: {plugin} is an older form of precompact's plugin: it starts {ENTRY} by its own "
        "`#!` line, which reads the PYTHONPATH OpenCode's environment may hold; "
        "fix: precompact install --agent opencode --scope user"
    )
    for command in (("install", "--scope", "user", "--mcp"), ("install", "--agent", "opencode", "--scope", "user")):
        assert precompact(project, *command, home=home).returncode == 0
    assert [line[:1] for line in doctor_lines(project, "claude hook command")] == ["✓"]
    assert [line[:1] for line in doctor_lines(project, "MCP server command")] == ["✓"]
    assert [line[:1] for line in doctor_lines(project, "opencode hook command")] == ["✓"]
    assert [h["command"] for g in json.loads(user_settings.read_text())["hooks"]["SessionEnd"] for h in g["hooks"]] == [
        f"{RUN} hook || exit 0"
    ]


def test_install_refuses_a_precompact_under_a_path_that_is_not_utf8_and_doctor_fails_one(project):
    """review15a F6: the agents (Node) read their settings as UTF-8: a script path with a Latin-1
    byte was written as an escape they turn into U+FFFD, so the hook could never start while
    `install` said installed and doctor ✓. Now install refuses in one line naming the fix, and
    doctor fails such a command without running it."""
    from precompact.ops import doctor

    folder = Path(os.fsdecode(os.fsencode(project.parent) + b"/caf\xe9/bin"))
    folder.mkdir(parents=True)
    script = folder / "precompact"
    script.write_text(Path(PRECOMPACT).read_text())
    script.chmod(0o755)
    done = install_with(script, project, "--scope", "user")
    assert done.returncode == 1, done.stdout
    [line] = done.stderr.splitlines()
    assert "precompact is installed under a path that is not UTF-8 (" in line, line
    assert line.endswith("install precompact under a path whose names are UTF-8"), line
    assert not installer.hooks_path("claude", "user", project, home_of(project)).exists(), "nothing written"

    command = installer.Program(Path(INSTALLED_PYTHON), script).shell("hook")
    installed = installer.read_command(installer.command_words(command) or [])
    check = doctor._starts("hook command", installed, project / "settings.json", "user", home_of(project))
    assert not check.ok and "a path that is not UTF-8, which the agent can never start" in check.detail, check
