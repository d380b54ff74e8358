"""A key file inside the project is one the repository can ship: `chain.keypair` or
`encryption.identity` resolving there is refused when the configuration is loaded, and `trust`
shows where it resolves and refuses it before asking (review8 F1: a shipped `logs/` signed by a
shipped key verified ✓ as the user's own)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from solders.keypair import Keypair

from precompact.config import approval as config_trust
from precompact.config import settings as configuration
from precompact.config.settings import UntrustedConfig
from support.commands import precompact, wait_until

FIX = "move the key outside the project, e.g. ~/.config/precompact/…, and point chain.keypair at it"


def keypair_file(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(list(bytes(Keypair()))))
    path.chmod(0o600)
    return path


def project_naming(tmp_path: Path, keypair: str, identity: str | None = None) -> Path:
    """A git project whose configuration (layers off) names `keypair`, approved as an earlier
    version of precompact approved it: its bytes, without reading them."""
    project = tmp_path / "proj"
    project.mkdir(exist_ok=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    identity_line = f'[encryption]\nidentity = "{identity}"\n' if identity else ""
    path = project.resolve() / configuration.CONFIG_NAME
    path.write_text(
        f'instance = "Trial #1"\n[layers]\ngit = false\nchain = false\n[chain]\nkeypair = "{keypair}"\ncluster = "http://127.0.0.1:9"\n{identity_line}'
    )
    path.chmod(0o600)
    config_trust.approve(path, path.read_bytes())
    return project


def test_a_shipped_logs_signed_by_a_key_the_project_holds_is_refused_not_verified(tmp_path):
    # The author's savepoint, signed by a key that then travels inside the repository with logs/.
    outside = keypair_file(tmp_path / "author-keys" / "id.json")
    project = project_naming(tmp_path, str(outside))
    made = precompact(project, "savepoint", "--no-transcript", "--force")
    assert made.returncode in (0, 3), made.stderr
    # The worker signs the index line with the configured key, with every layer off.
    assert wait_until(lambda: any('"signer"' in f.read_text() for f in (project / "logs").glob("*.jsonl")))
    keypair_file(project / "keys" / "id.json").write_bytes(outside.read_bytes())
    project_naming(tmp_path, "keys/id.json")
    for command in (("verify",), ("status",), ("recall", "anything")):
        done = precompact(project, *command)
        assert done.returncode != 0, (command, done.stdout)
        assert "✓" not in done.stdout
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and FIX in lines[0] and "inside the project" in lines[0], (command, done.stderr)


def test_trust_shows_where_the_key_resolves_and_refuses_it_before_asking(tmp_path):
    project = project_naming(tmp_path, "keys/id.json")
    keypair_file(project / "keys" / "id.json")
    done = precompact(project, "trust", "--yes")
    assert done.returncode != 0
    resolved = (project / "keys" / "id.json").resolve()
    assert f'chain.keypair = "{resolved}" (inside the project: refused)' in done.stdout
    assert f'encryption.identity = "{resolved.parent / configuration.IDENTITY_NAME}" (inside the project: refused)' in (
        done.stdout
    )
    assert FIX in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert "trusted" not in done.stdout.splitlines()[-1]


def test_a_key_outside_the_project_still_loads(tmp_path):
    outside = keypair_file(tmp_path / "keys" / "id.json")
    project = project_naming(tmp_path, "../keys/id.json")
    loaded = configuration.load(project, environ={})
    assert loaded.keypair.resolve() == outside.resolve()
    done = precompact(project, "trust", "--yes")
    assert done.returncode == 0, done.stderr


def test_a_relative_keypair_is_the_projects_file_wherever_the_command_runs(tmp_path):
    project = project_naming(tmp_path, "keys/id.json")
    (project / "sub").mkdir()
    with pytest.raises(UntrustedConfig, match="inside the project"):
        configuration.load(project / "sub", environ={})


def test_a_link_in_the_project_is_judged_by_the_file_it_reaches(tmp_path):
    # A link inside the project to a file outside it only names the user's own key: allowed.
    # A link anywhere to a file inside the project reaches the project's file: refused.
    own = keypair_file(tmp_path / "home" / ".config" / "solana" / "id.json")
    project = project_naming(tmp_path, "keys/id.json", identity=str(own.parent / configuration.IDENTITY_NAME))
    (project / "keys").mkdir()
    (project / "keys" / "id.json").symlink_to(own)
    assert configuration.load(project, environ={}).keypair.resolve() == own.resolve()
    shipped = keypair_file(project / "shipped" / "id.json")
    pointing_in = tmp_path / "elsewhere" / "id.json"
    pointing_in.parent.mkdir()
    pointing_in.symlink_to(shipped)
    project_naming(tmp_path, str(pointing_in))
    with pytest.raises(UntrustedConfig, match="resolving to .*shipped/id.json.* is inside the project"):
        configuration.load(project, environ={})


def test_an_identity_inside_the_project_is_refused(tmp_path):
    keypair_file(tmp_path / "keys" / "id.json")
    project = project_naming(tmp_path, "../keys/id.json", identity="age.txt")
    with pytest.raises(
        UntrustedConfig, match="encryption.identity .* is inside the project.*point encryption.identity"
    ):
        configuration.load(project, environ={})


def test_a_key_in_the_git_work_tree_above_the_configuration_is_refused(tmp_path):
    project = project_naming(tmp_path, "../keys/id.json")
    sub = project / "app"
    sub.mkdir()
    (project / configuration.CONFIG_NAME).rename(sub / configuration.CONFIG_NAME)
    path = sub.resolve() / configuration.CONFIG_NAME
    config_trust.approve(path, path.read_bytes())
    keypair_file(project / "keys" / "id.json")
    with pytest.raises(UntrustedConfig, match="inside the project"):
        configuration.load(sub, environ={})


def test_a_keypair_behind_a_symlink_loop_is_refused(tmp_path):
    project = project_naming(tmp_path, "../loop")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    with pytest.raises(UntrustedConfig, match="chain.keypair"):
        configuration.load(project, environ={})


def test_init_refuses_a_key_inside_the_project_before_making_any_key_file(tmp_path):
    project = tmp_path / "proj"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    done = precompact(project, "init", "--yes", "--chain", "off", "--keypair", "keys/id.json")
    assert done.returncode == 1
    assert FIX in done.stderr.strip().splitlines()[-1]
    assert not (project / "keys").exists() and not (project / configuration.CONFIG_NAME).exists()
