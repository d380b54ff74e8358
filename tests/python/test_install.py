"""`precompact install` / `uninstall` merge into Claude Code's settings.json and touch nothing else."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from support.commands import invoke
from support.projects import trust

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
            if h["command"].endswith("precompact hook")
        ]
        for event, groups in settings["hooks"].items()
        if any(h["command"].endswith("precompact hook") for g in groups for h in g["hooks"])
    }


def test_install_into_a_new_file_then_again_changes_nothing(project):
    result = invoke("install")
    assert (
        result.exit_code == 0
        and "installed the PreCompact, PostCompact, SessionStart and SessionEnd hooks" in result.output
    )
    settings = json.loads(settings_file(project).read_text())
    assert ours(settings) == {
        "PreCompact": [("auto|manual", 60)],
        "PostCompact": [("auto|manual", 15)],
        "SessionStart": [("compact|resume", 30)],
        "SessionEnd": [(None, 5)],
    }
    assert {h["command"] for groups in settings["hooks"].values() for g in groups for h in g["hooks"]} == {
        "precompact hook"
    }, "found on PATH, no path into one machine's venv"
    before = settings_file(project).read_bytes()
    again = invoke("install")
    assert again.exit_code == 0 and "already installed" in again.output
    assert settings_file(project).read_bytes() == before


def test_the_installed_command_runs_the_hook(project):
    invoke("install")
    command = json.loads(settings_file(project).read_text())["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    stdin = json.dumps({"hook_event_name": "Notification", "cwd": str(project)})
    on_path = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    result = subprocess.run(
        shlex.split(command), input=stdin, capture_output=True, text=True, timeout=30, env=on_path, check=False
    )
    assert result.returncode == 0 and "event 'Notification' is not handled" in result.stderr


def test_other_settings_and_hooks_are_preserved_and_uninstall_restores_them(project):
    settings_file(project).parent.mkdir()
    settings_file(project).write_text(json.dumps(OTHERS, indent=4))
    assert invoke("install").exit_code == 0
    merged = json.loads(settings_file(project).read_text())
    assert merged["hooks"]["PreCompact"][0] == OTHERS["hooks"]["PreCompact"][0]
    assert {k: v for k, v in merged.items() if k != "hooks"} == {k: v for k, v in OTHERS.items() if k != "hooks"}
    assert merged["hooks"]["PostToolUse"] == OTHERS["hooks"]["PostToolUse"] and merged["hooks"]["Stop"] == []
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


def test_dry_run_prints_and_writes_nothing(project):
    result = invoke("install", "--dry-run")
    assert result.exit_code == 0 and '"PreCompact"' in result.output
    assert not settings_file(project).exists()


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


def test_a_precompact_that_path_does_not_find_is_named_with_the_fix(project):
    result = invoke("install", env={"PATH": "/usr/bin:/bin"})
    assert result.exit_code == 0
    assert (
        f"warning: `precompact` is not on PATH, so Claude Code cannot run these hooks (this one is {Path(sys.executable).with_name('precompact')}: add {Path(sys.executable).parent} to PATH)"
        in result.output
    )
    found = invoke("install", "--scope", "user", env={"PATH": str(Path(sys.executable).parent)})
    assert found.exit_code == 0 and "warning" not in found.output


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
