"""Throwaway precompact projects for tests, trials and benchmarks: a git repository with a bare
`origin`, initialised through the real `precompact init`, with the layers chosen."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from solders.keypair import Keypair

from support.commands import PRECOMPACT, precompact
from support.localnet import REPO

CLOSED_PORT_URL = "http://127.0.0.1:9"
SOL = 1_000_000_000


def savepoint_branch(instance: str = "Trial #1") -> str:
    """The branch an instance's savepoints go to (its own, on the remote and here)."""
    from precompact.remote import gitstore

    return gitstore.instance_branch("precompact/savepoints", instance)


def store(repository: Path) -> Path:
    """precompact's own git directory for the project repository at `repository`, where its
    savepoint branches and their objects live (never the project's `.git`)."""
    from precompact.boundary import git_env

    common = git_env.common_directory(repository)
    assert common is not None, f"{repository} is not a git repository"
    return git_env.store_directory(common)[0]


def store_git(repository: Path, *args: str) -> str:
    """git run on precompact's own git directory for the project at `repository` (`store`),
    failing the test on error: what the project's savepoint branches hold here."""
    directory = store(repository)
    return subprocess.run(
        ["git", "--git-dir", str(directory), *args], cwd=directory, check=True, capture_output=True, text=True
    ).stdout


def pushed_branch(repository: Path) -> str:
    """The one instance branch (`refs/heads/precompact/savepoints-<id>`) `repository` holds: a
    bare remote, or a project (its savepoint branches are in precompact's own git directory)."""
    if (repository / ".git").exists():
        listed = store_git(repository, "for-each-ref", "--format=%(refname)", "refs/heads/precompact/").split()
    else:
        listed = subprocess.run(
            ["git", "for-each-ref", "--format=%(refname)", "refs/heads/precompact/"],
            cwd=repository,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
    [branch] = [ref for ref in listed if ref.startswith("refs/heads/precompact/savepoints-")]
    return branch


@dataclass(frozen=True)
class Project:
    path: Path
    remote: Path
    keypair_file: Path
    instance: str

    @property
    def logs(self) -> Path:
        return self.path / "logs"

    @property
    def branch(self) -> str:
        return savepoint_branch(self.instance)

    def git(self, *args: str) -> str:
        """git on precompact's own git directory for this project (`store_git`)."""
        return store_git(self.path, *args)

    def authority(self) -> Keypair:
        return Keypair.from_bytes(bytes(json.loads(self.keypair_file.read_text())))

    def set_cluster(self, url: str) -> None:
        config = self.path / ".precompact.toml"
        lines = config.read_text().splitlines(keepends=True)
        config.write_text("".join(f'cluster = "{url}"\n' if line.startswith("cluster = ") else line for line in lines))
        trust(self.path)

    def set_git_url(self, url: str) -> None:
        """Points git.url (the one URL savepoints are pushed to) at `url`, approved."""
        config = self.path / ".precompact.toml"
        lines = config.read_text().splitlines(keepends=True)
        config.write_text("".join(f'url = "{url}"\n' if line.startswith("url = ") else line for line in lines))
        trust(self.path)


def new_project(
    root: Path,
    name: str,
    git_layer: bool,
    chain_layer: bool,
    cluster: str = CLOSED_PORT_URL,
    instance: str = "Trial #1",
    airdrop: bool = False,
    encrypted: bool = True,
) -> Project:
    """With `airdrop`, `init --airdrop` funds the new keypair from the cluster's faucet; without
    `encrypted`, the remote copy is in clear (`init --no-encrypt`), as projects made before
    encryption have it."""
    remote, path, keypair_file = root / f"{name}.git", root / name, root / f"{name}-id.json"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    path.mkdir()
    for args in (
        ["init", "-q", "-b", "main"],
        ["remote", "add", "origin", str(remote)],
        ["config", "user.name", "Dev"],
        ["config", "user.email", "dev@example.invalid"],
    ):
        subprocess.run(["git", *args], cwd=path, check=True)
    subprocess.run(
        [
            PRECOMPACT,
            "init",
            "--yes",
            "--instance",
            instance,
            "--cluster",
            cluster,
            "--keypair",
            str(keypair_file),
            *(["--airdrop"] if airdrop else []),
            *([] if encrypted else ["--no-encrypt"]),
        ],
        cwd=path,
        check=True,
        capture_output=True,
    )
    config = path / ".precompact.toml"
    text = (
        config.read_text()
        .replace("git = true", f"git = {str(git_layer).lower()}")
        .replace("chain = true", f"chain = {str(chain_layer).lower()}")
    )
    config.write_text(text)
    trust(path)
    return Project(path, remote, keypair_file, instance)


def trust(path: Path, *args: str, env: dict[str, str] | None = None) -> None:
    """`precompact trust` in `path`: approves the configuration a test wrote or changed (`env`:
    over the test's environment, e.g. another machine's project registry)."""
    done = precompact(path, "trust", "--yes", *args, env=env)
    assert done.returncode == 0, done.stderr


def approve_as_is(path: Path) -> None:
    """Approves the configuration in `path` whatever it holds (`precompact trust` refuses an
    invalid one), so that a test can see how an invalid setting is reported."""
    from precompact.config import approval as config_trust
    from precompact.config import settings as config

    file = path.resolve() / config.CONFIG_NAME
    config_trust.approve(file, file.read_bytes())


def funded_project(root: Path, cluster: str, instance: str) -> Project:
    """`root`/project with both layers on against `cluster` (its remote copy in clear), its
    signing key funded there for rent and fees."""
    made = new_project(root, "project", True, True, cluster=cluster, instance=instance, encrypted=False)
    fund(cluster, made.authority())
    return made


def fund(url: str, who: Keypair, lamports: int = 2 * SOL) -> None:
    """Airdrops `who` enough for rent and fees, and waits for it."""
    from solana.rpc.api import Client
    from solana.rpc.commitment import Confirmed

    client = Client(url, commitment=Confirmed)
    client.confirm_transaction(client.request_airdrop(who.pubkey(), lamports).value, sleep_seconds=0.05)


def repository_copy(destination: Path) -> Path:
    """This repository's files as a clone has them (tracked and not ignored, as they are in the
    work tree): what a marketplace added from git, or `pip install` of a clone, gets."""
    repo = REPO
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=repo,
        check=True,
        capture_output=True,
    ).stdout
    for name in filter(None, listed.decode().split("\0")):
        source = repo / name
        if source.is_file():
            target = destination / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return destination


def tree_digest(root: Path) -> dict[str, str]:
    """Every file under `root` (links and folders included) and a digest of what it holds."""
    found = {}
    for path in sorted(root.rglob("*")):
        name = str(path.relative_to(root))
        found[name] = (
            "link" if path.is_symlink() else "dir" if path.is_dir() else hashlib.sha256(path.read_bytes()).hexdigest()
        )
    return found


def full_document(snapshot_file: Path) -> bytes:
    """The whole document a snapshot file in logs/precompact-saves/ stands for (a chunked one
    rebuilt from the chunks beside it, each checked)."""
    from precompact.local import chunks

    return chunks.document(snapshot_file.read_bytes(), chunks.local_fetch(snapshot_file.parent.parent))


def tamper_history(snapshot_file: Path, old: bytes, new: bytes) -> Path:
    """Replaces `old` with `new` in the chunk of a chunked snapshot that holds it (as someone
    editing logs/ would); returns that chunk's path."""
    from precompact.local import chunks

    listed = chunks.refs(json.loads(snapshot_file.read_bytes()))
    for ref in listed:
        path = snapshot_file.parent.parent / chunks.CHUNKS_DIR / ref.sha256
        data = path.read_bytes()
        if old in data:
            path.write_bytes(data.replace(old, new))
            return path
    raise AssertionError(f"no chunk of {snapshot_file} holds {old!r}")


def queue_entries(project: Project) -> list[str]:
    """The names in `project`'s hook queue (logs/precompact-queue/), sorted; none without one."""
    queue = project.logs / "precompact-queue"
    return sorted(p.name for p in queue.iterdir()) if queue.is_dir() else []
