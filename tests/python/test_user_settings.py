"""What the user set stays as they set it: `init --force` changes only what its command line
names, `key import` makes the imported identity the one used, `key rekey` works after the
recipients changed, and what precompact creates only this user can read (docs/setup.md,
docs/cli.md, docs/security.md)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import tomllib
from pathlib import Path

from precompact.config import settings as configuration
from precompact.remote import encryption as remote_crypto
from support.commands import PRECOMPACT, precompact
from support.projects import store


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
        store(project).parent,  # precompact's own git directories
        store(project) / "precompact-ciphertexts",
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


def public_key_of(identity: Path) -> str:
    [key] = [line.split("public key: ")[1] for line in identity.read_text().splitlines() if "public key: " in line]
    return key


def test_key_import_on_a_second_machine_makes_the_imported_identity_the_one_used(tmp_path):
    """docs/setup.md, "On another machine": `key import` there is not refused because `init`
    made an identity no savepoint uses yet; the imported one becomes the recipient, in place of
    the one it replaced. Where savepoints use the identity there, the refusal names a fix that
    works (the imported file holding both keys)."""
    from test_encryption import encrypted_project, saved, second_machine

    project = encrypted_project(tmp_path)
    saved(project, tmp_path)
    there = second_machine(tmp_path, project)
    made_by_init = configuration.load(there).identity
    unused_key = public_key_of(made_by_init)
    exported = precompact(project.path, "key", "export")
    mine = configuration.load(project.path).recipients[0]

    imported = precompact(there, "key", "import", "-", stdin=exported.stdout)
    assert imported.returncode == 0, imported.stderr
    assert "is kept at" in imported.stdout
    assert configuration.load(there).recipients == (mine,), "the imported key, never the one put away"
    assert unused_key not in (there / ".precompact.toml").read_text()
    shown = precompact(there, "key", "show")
    assert f"{mine} (a recipient)" in shown.stdout
    [aside] = made_by_init.parent.glob(f"{made_by_init.name}.replaced-*")
    assert public_key_of(aside) == unused_key and stat.S_IMODE(aside.stat().st_mode) == 0o600

    # Here savepoints are encrypted to the identity: another one is refused, and the fix works.
    other = tmp_path / "other-identity.txt"
    remote_crypto.generate_identity(other)
    refused = precompact(project.path, "key", "import", str(other))
    assert refused.returncode == 1 and refused.stderr.count("\n") == 1, refused.stderr
    mine_file = configuration.load(project.path).identity
    assert f"`cat {mine_file} >> FILE`" in refused.stderr
    both = tmp_path / "both.txt"
    both.write_bytes(other.read_bytes() + mine_file.read_bytes())
    taken = precompact(project.path, "key", "import", str(both))
    assert taken.returncode == 0, taken.stderr
    assert set(configuration.load(project.path).recipients) == {mine, public_key_of(other)}
    saved(project, tmp_path)
    assert precompact(project.path, "verify").returncode == 0, "both savepoints read with the imported file"


def test_key_rekey_after_the_identity_changed(tmp_path):
    """docs/security.md: `key rekey` re-encrypts the branch to the current recipients. After
    the identity changed, it re-encrypts what the current identity reads, leaves what only the
    old one reads and says how to finish (exit 1); run with the old identity it finishes."""
    from test_encryption import encrypted_project, saved

    project = encrypted_project(tmp_path)
    saved(project, tmp_path)
    old = configuration.load(project.path).identity
    new = tmp_path / "new-identity.txt"
    switched = precompact(project.path, "init", "--force", "--identity", str(new))
    assert switched.returncode == 0, switched.stderr
    assert configuration.load(project.path).recipients == (public_key_of(new),)
    saved(project, tmp_path)

    first = precompact(project.path, "key", "rekey")
    assert first.returncode == 1, first.stdout + first.stderr
    assert "were left as they are" in first.stderr and "PRECOMPACT_IDENTITY=" in first.stderr
    assert first.stderr.count("\n") == 1
    finished = precompact(project.path, "key", "rekey", "--json", env={"PRECOMPACT_IDENTITY": str(old)})
    assert finished.returncode == 0, finished.stdout + finished.stderr
    done = json.loads(finished.stdout)
    assert done["left"] == 0 and done["files"] > 0 and done["commit"]
    assert precompact(project.path, "verify").returncode == 0, "the new identity reads every savepoint"
