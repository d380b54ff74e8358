"""Private files have one maker, boundary/private_file (issue 38): mode 0600 from the first instant
whatever the umask, new directories 0700, never written through a link, whole or not at all, and
what is already there kept unless replaced on purpose. The architecture test holds every other
module to it; these tests hold it to its promises, and init's keypair through the binary."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from precompact.boundary import private_file
from support.commands import precompact


@pytest.fixture
def permissive_umask():
    """umask 000, as a user who shares everything by default has it: only the mode given at
    creation keeps a private file private."""
    before = os.umask(0)
    try:
        yield
    finally:
        os.umask(before)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def test_a_new_file_is_0600_and_its_new_directories_0700_whatever_the_umask(tmp_path, permissive_umask):
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    path = shared / "a" / "b" / "key.json"
    private_file.create(path, b"secret")
    assert path.read_bytes() == b"secret" and _mode(path) == 0o600
    assert _mode(shared / "a") == _mode(shared / "a" / "b") == 0o700
    assert _mode(shared) == 0o755, "a directory that was there is left as it was"
    assert os.listdir(path.parent) == ["key.json"], "no temporary file is left behind"


def test_create_never_replaces_what_is_there(tmp_path):
    path = tmp_path / "key.json"
    path.write_bytes(b"old")
    with pytest.raises(FileExistsError):
        private_file.create(path, b"new")
    assert path.read_bytes() == b"old" and os.listdir(tmp_path) == ["key.json"]
    (tmp_path / "dir").mkdir()
    with pytest.raises(FileExistsError):
        private_file.create(tmp_path / "dir", b"new")


@pytest.mark.parametrize("target_exists", [True, False])
def test_create_never_writes_through_a_link(tmp_path, target_exists):
    target = tmp_path / "victim"
    if target_exists:
        target.write_bytes(b"theirs")
    link = tmp_path / "key.json"
    link.symlink_to(target)
    with pytest.raises(FileExistsError):
        private_file.create(link, b"secret")
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert (target.read_bytes() == b"theirs") if target_exists else not target.exists()


def test_replace_renames_over_a_file_or_a_link_and_is_0600(tmp_path, permissive_umask):
    path = tmp_path / "state.json"
    path.write_bytes(b"old")
    path.chmod(0o644)
    private_file.replace(path, b"new")
    assert path.read_bytes() == b"new" and _mode(path) == 0o600
    target = tmp_path / "victim"
    target.write_bytes(b"theirs")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    private_file.replace(link, b"new")
    assert not link.is_symlink() and link.read_bytes() == b"new" and _mode(link) == 0o600
    assert target.read_bytes() == b"theirs"
    assert sorted(os.listdir(tmp_path)) == ["link.json", "state.json", "victim"]


def test_init_makes_the_keypairs_directories_private_under_a_permissive_umask(tmp_path, permissive_umask):
    project = tmp_path / "project"
    project.mkdir()
    keypair = tmp_path / "keys" / "solana" / "id.json"
    result = precompact(project, "init", "--yes", "--keypair", str(keypair))
    assert result.returncode == 0, result.stderr
    assert _mode(keypair) == 0o600
    assert _mode(tmp_path / "keys") == _mode(tmp_path / "keys" / "solana") == 0o700
    assert _mode(project / ".precompact.toml") == 0o600


def test_init_refuses_a_link_to_nothing_at_the_keypair_path(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    elsewhere = tmp_path / "elsewhere" / "stolen.json"
    link = tmp_path / "id.json"
    link.symlink_to(elsewhere)
    result = precompact(project, "init", "--yes", "--keypair", str(link))
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == (
        f"Error: {link} is taken (by a link to nothing?); a new key is written only where nothing is: remove it, or pass another --keypair"
    )
    assert link.is_symlink() and not elsewhere.exists() and not elsewhere.parent.exists()
