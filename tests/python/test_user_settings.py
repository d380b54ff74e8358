"""What the user set stays as they set it: `init --force` changes only what its command line
names, `key import` makes the imported identity the one used, `key rekey` works after the
recipients changed, and what precompact creates only this user can read (docs/setup.md,
docs/cli.md, docs/security.md)."""

from __future__ import annotations

import os
import stat
import subprocess
import tomllib
from pathlib import Path

from support.commands import PRECOMPACT, precompact


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


TEAMMATE = "age1qyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqs3290gq"


def configured(project: Path) -> dict:
    return tomllib.loads((project / ".precompact.toml").read_text())


def test_init_force_changes_only_what_its_command_line_names(tmp_path):
    """docs/setup.md: `precompact init --force --chain devnet` turns Layer 3 on; everything else
    the user set stays: the instance (off a terminal without --instance, and as the prompt's
    default at one), an --identity given earlier, extra recipients, redaction patterns,
    `session_end = false`."""
    project = bare_project(tmp_path)
    identity = tmp_path / "backed-up-identity.txt"
    first = precompact(project, "init", "--yes", "--instance", "Mine #7", "--chain", "off", "--identity", str(identity))
    assert first.returncode == 0, first.stderr
    identity_bytes = identity.read_bytes()
    [own] = configured(project)["encryption"]["recipients"]
    config = project / ".precompact.toml"
    text = config.read_text().replace(f'recipients = ["{own}"]', f'recipients = ["{own}", "{TEAMMATE}"]')
    text = text.replace("session_end = true", "session_end = false")
    text = text.replace("[redaction.patterns]\n", '[redaction.patterns]\nticket = "TKT-[0-9]{6}"\n')
    config.write_text(text)
    assert precompact(project, "trust", "--yes").returncode == 0

    # Off a terminal, no --instance, no --yes: the chain changes, nothing else.
    on = precompact(project, "init", "--force", "--chain", "local")
    assert on.returncode == 0, on.stderr
    assert "keeping every setting not named on the command line" in on.stdout
    after = configured(project)
    assert after["instance"] == "Mine #7"
    assert (after["chain"]["cluster"], after["layers"]["chain"]) == ("http://127.0.0.1:8899", True)
    assert after["encryption"] == {"recipients": [own, TEAMMATE], "identity": str(identity)}
    assert after["hooks"]["session_end"] is False
    assert after["redaction"]["patterns"] == {"ticket": "TKT-[0-9]{6}"}
    assert identity.read_bytes() == identity_bytes
    assert not (Path(os.environ["XDG_CONFIG_HOME"]) / "precompact" / "keys" / "precompact-age-identity.txt").exists(), (
        "no new identity made beside the key"
    )
    assert precompact(project, "status").returncode == 0, "written approved"

    # At a terminal the prompt offers the instance as it is: Enter keeps it.
    from test_first_hour import at_a_terminal

    shown = at_a_terminal([PRECOMPACT, "init", "--force"], project, [""])
    assert "Instance name [Mine #7]:" in shown
    assert configured(project)["instance"] == "Mine #7" and configured(project)["layers"]["chain"] is True

    # A new --identity replaces the old one's key among the recipients, and only it.
    other = tmp_path / "other-identity.txt"
    moved = precompact(project, "init", "--force", "--identity", str(other))
    assert moved.returncode == 0, moved.stderr
    [new_own] = [line.split("public key: ")[1] for line in other.read_text().splitlines() if "public key" in line]
    assert configured(project)["encryption"] == {"recipients": [new_own, TEAMMATE], "identity": str(other)}
    assert configured(project)["hooks"]["session_end"] is False

    # A configuration the user has not approved as it is lends none of its settings.
    config.write_text(config.read_text().replace("Mine #7", "Planted #1"))
    fresh = precompact(project, "init", "--force", "--yes", "--chain", "off")
    assert fresh.returncode == 0, fresh.stderr
    assert "is not approved as it is" in fresh.stderr and "none of its settings are kept" in fresh.stderr
    assert configured(project)["instance"] == "project #1"
