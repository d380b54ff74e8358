"""What the user set stays as they set it: `init --force` changes only what its command line
names, `key import` makes the imported identity the one used, `key rekey` works after the
recipients changed, and what precompact creates only this user can read (docs/setup.md,
docs/cli.md, docs/security.md)."""

from __future__ import annotations

import stat
import subprocess
from pathlib import Path

from support.commands import precompact


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def bare_project(root: Path) -> Path:
    """A git repository with a bare `origin`, no precompact yet."""
    subprocess.run(["git", "init", "-q", "--bare", str(root / "origin.git")], check=True)
    project = root / "project"
    project.mkdir()
    for args in (["init", "-q", "-b", "main"], ["remote", "add", "origin", str(root / "origin.git")]):
        subprocess.run(["git", *args], cwd=project, check=True)
    return project


def test_what_precompact_creates_only_this_user_reads(tmp_path):
    """docs/security.md: keys, identities and the directories precompact makes are 0700/0600;
    `install` writes .claude/settings.json 0600 when it creates it and keeps an existing file's
    mode."""
    home = tmp_path / "home"
    home.mkdir()
    project = bare_project(tmp_path)
    env = {"XDG_CONFIG_HOME": ""}  # ~/.config, as on a machine without it set
    done = precompact(project, "init", "--instance", "Modes #1", "--chain", "off", "--yes", home=home, env=env)
    assert done.returncode == 0, done.stderr
    saved = precompact(project, "savepoint", "--no-transcript", home=home, env=env)
    assert saved.returncode == 3, saved.stderr  # Layer 3 off
    installed = precompact(project, "install", home=home, env=env)
    assert installed.returncode == 0, installed.stderr
    for directory in (
        home / ".config" / "precompact",
        home / ".config" / "precompact" / "keys",
        project / ".git" / "precompact-ciphertexts",
        project / ".claude",
    ):
        assert mode(directory) == 0o700, f"{directory} is {mode(directory):o}"
    assert mode(project / ".claude" / "settings.json") == 0o600

    # An existing settings.json keeps its mode: install and uninstall never widen nor narrow it.
    settings = project / ".claude" / "settings.json"
    settings.write_text(settings.read_text().replace("{", '{"model": "opus", ', 1))
    settings.chmod(0o640)
    assert precompact(project, "uninstall", home=home, env=env).returncode == 0
    assert '"model": "opus"' in settings.read_text() and mode(settings) == 0o640
    assert precompact(project, "install", home=home, env=env).returncode == 0
    assert mode(settings) == 0o640
