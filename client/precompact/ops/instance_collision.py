"""Which projects on this machine would write one chain of savepoints: the one owner of the rule
`init`, `trust` and `projects --add` refuse by (each puts a configuration's instance to work on the
user's word), as do `savepoint` and `import` writing an instance the approved file does not name
(--instance, PRECOMPACT_INSTANCE), or to a branch or record it does not (PRECOMPACT_BRANCH and the
other destination variables: `refuse_chosen`), and `doctor` reports.

Two projects collide when their savepoints land in one chain: the same instance pushed to the
same Layer-2 branch (the same remote URL, as precompact compares them: the URL git pushes to,
the user's `url.<base>.insteadOf` and `pushInsteadOf` aliases applied, a local path resolved, a
URL without its credentials; and the same instance branch), or the same instance recorded at
the same on-chain account (the PDA of program, authority and instance, Layer 3 on in both). Each
then pushes its own savepoint N and hides the other's. A project with its own remote and its own
key collides with nothing, whatever its instance is called. A linked worktree (or another
project) of the same repository shares its git store, where two chains are told apart
(docs/cli.md, "two chains"), so it may share an instance.

The other projects are those of this machine's registry (local/registry), each judged by its
approved configuration as it is now: one no longer there, not approved as it is, or set up
with another instance since, writes nothing of this instance. A registry that cannot be read
refuses nothing (`precompact projects` names what is wrong with it).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from precompact.boundary import git_env, quoting
from precompact.config import endpoint
from precompact.config import settings as configuration
from precompact.config.settings import Config
from precompact.errors import PrecompactError


class InstanceInUse(PrecompactError):
    """Another project on this machine writes the instance to the same chain; the message names
    it and the fix."""


@dataclass(frozen=True)
class Destinations:
    """Where one project's savepoints of its instance go: each None when that layer is off or
    cannot be told (then it collides with nothing)."""

    branch: tuple[str, str] | None  # (the remote URL as compared, the instance's branch)
    record: tuple[str, str] | None  # (program id, authority): with the instance, its account's PDA

    @classmethod
    def of(cls, config: Config, rewrites: tuple[git_env.Rewrites, git_env.Rewrites]) -> Destinations:
        """`config`'s, its remote URL read through the user's `rewrites` (git_env.user_url_rewrites)."""
        return cls(
            _branch(config, rewrites) if config.git_layer else None, _record(config) if config.chain_layer else None
        )

    def shared_with(self, other: Destinations) -> list[str]:
        """What of these `other` writes too, in words."""
        shared = []
        if self.branch is not None and self.branch == other.branch:
            url, branch = self.branch
            shared.append(f"the same git branch ({branch} at {quoting.inline(url)})")
        if self.record is not None and self.record == other.record:
            shared.append(f"the same on-chain record (authority {self.record[1]})")
        return shared


@dataclass(frozen=True)
class Collision:
    instance: str
    other: Path  # the other project's root
    shared: tuple[str, ...]  # what both write, in words (Destinations.shared_with)

    def refusal(self, rename: str) -> str:
        """The one line `init` and `trust` refuse with; `rename` says how this project names
        another instance (`init`'s option, or the file's setting)."""
        other = quoting.path(self.other)
        return (
            f"the instance {quoting.inline(self.instance)} is already this machine's project {other}, which writes "
            f"it to {self.written_to}: two projects writing one chain hide each other's savepoints; "
            f"{rename} (e.g. {quoting.inline(another_name(self.instance))}), or work in {other}"
        )

    @property
    def written_to(self) -> str:
        return " and ".join(self.shared)


def another_name(instance: str) -> str:
    return f"{instance} (2)"


def refuse(
    config: Config,
    command: Literal["init", "trust", "projects --add", "savepoint", "import"],
    chosen: list[str] | None = None,
) -> None:
    """InstanceInUse naming the first other project `config`'s savepoints would share a chain
    with (`Collision.refusal`), and how `command` is run again with another instance, or without
    the `chosen` variables that took its savepoints there (`refuse_chosen`); nothing when there
    is none."""
    found = collisions(config)
    if not found:
        return
    if command == "init":
        rename = "pass another --instance"
    elif chosen:
        rename = f"unset {', '.join(chosen)}, which chose where these savepoints go, or name another instance with --instance or PRECOMPACT_INSTANCE"
    elif command in ("savepoint", "import"):
        rename = "name another instance with --instance or PRECOMPACT_INSTANCE, or none to save as the configured one"
    else:
        rename = f"set another instance in {quoting.path(config.root / configuration.CONFIG_NAME)} and trust it again"
    raise InstanceInUse(found[0].refusal(rename))


# The settings that say where savepoints go (`Destinations`: the repository, its remote and
# branch, the program and the key of the record), by the Config field each environment variable
# of settings.ENV_OVERRIDES sets.
_DESTINATION_SETTINGS = ("repository", "remote", "branch", "program_id", "authority", "keypair")


def refuse_chosen(config: Config, command: Literal["savepoint", "import"]) -> None:
    """`refuse` for `command` writing savepoints of an instance the command line or the
    environment chose (--instance, PRECOMPACT_INSTANCE; hooks take neither), or to a destination
    the environment chose (PRECOMPACT_REPO, _REMOTE, _BRANCH, _PROGRAM_ID, _AUTHORITY, _KEYPAIR; a
    user's shell keeps them, hooks drop them): `init` and `trust` checked only what the approved
    file names, so a refused `init` would otherwise be walked around by saving into that instance,
    or to that branch or record, from another project. Nothing to check for the approved file's
    own instance and destinations: a pair that writes them from before the refusal is `doctor`'s
    to name, never a savepoint refused."""
    approved = _approved(Path(os.path.realpath(config.root)))
    if approved is None:
        refuse(config, command)
        return
    chosen = [
        variable
        for variable, (_, setting) in configuration.ENV_OVERRIDES.items()
        if setting in _DESTINATION_SETTINGS and getattr(config, setting) != getattr(approved, setting)
    ]
    if approved.instance != config.instance:
        refuse(config, command, chosen)
    elif chosen:
        rewrites = git_env.user_url_rewrites()
        if Destinations.of(config, rewrites) != Destinations.of(approved, rewrites):
            refuse(config, command, chosen)


def collisions(config: Config) -> list[Collision]:
    """Every other project of this machine's registry whose savepoints would land in the same
    chain as `config`'s (the module's rule), in the registry's order; none when the registry
    cannot be read."""
    from precompact.local import registry

    try:
        found = registry.projects()
    except registry.RegistryError:
        return []
    here = Path(os.path.realpath(config.root))
    repository = _repository_of(here)
    mine: Destinations | None = None
    rewrites: tuple[git_env.Rewrites, git_env.Rewrites] | None = None
    colliding = []
    for other in found:
        if other.path == here or config.instance not in other.instances or not other.present():
            continue
        if repository is not None and _repository_of(other.path) == repository:
            continue
        theirs = _approved(other.path)
        if theirs is None or theirs.instance != config.instance:
            continue  # writes nothing, or another instance since: the registry keeps every name it had
        rewrites = rewrites or git_env.user_url_rewrites()
        mine = mine or Destinations.of(config, rewrites)
        shared = mine.shared_with(Destinations.of(theirs, rewrites))
        if shared:
            colliding.append(Collision(config.instance, other.path, tuple(shared)))
    return colliding


def _approved(root: Path) -> Config | None:
    """The configuration at `root` as its hooks load it (approved as it is; the environment of
    this command counts for nothing there), None when it does not load: then nothing there
    writes savepoints."""
    try:
        loaded = configuration.load(root, environ={})
    except (PrecompactError, OSError):
        return None
    return loaded if Path(os.path.realpath(loaded.root)) == root else None


def _repository_of(place: Path) -> Path | None:
    """The common git directory of the repository `place` is in (its own, or one above it, as
    git finds it), None outside any."""
    return next((c for c in map(git_env.common_directory, (place, *place.parents)) if c is not None), None)


def _branch(config: Config, rewrites: tuple[git_env.Rewrites, git_env.Rewrites]) -> tuple[str, str] | None:
    """The remote URL Layer 2 pushes the instance to (the URL it gives git, as the user's
    `rewrites` make it), as compared, and the instance's branch; None when the URL cannot be read."""
    from precompact.remote import gitstore

    target = gitstore.Target.of(config)
    try:
        url = gitstore.remote_url(target)
    except gitstore.GitStoreError:
        return None
    return _compared_url(git_env.pushed_url(url, rewrites), config.repository), target.branch


def _compared_url(url: str, repository: Path) -> str:
    """`url` as two projects' remotes are compared, so that two spellings git takes to one
    repository are one (review15a F2): a path on this machine resolved (from the repository,
    where git reads a relative one) to the repository git opens there (`DIR` and `DIR/.git`, `X`
    and `X.git`: `_opened_repository`); any other URL as `_network_key` reads it."""
    if git_env.is_local_url(url):
        path = url.removeprefix("file://")
        return _opened_repository(os.path.realpath(repository / path))
    return _network_key(endpoint.git_url_shown(url))


# The names git tries, in its order, for a local repository given as `path` (enter_repo).
_LOCAL_SUFFIXES = ("/.git", "", ".git/.git", ".git")
# The port each scheme is reached on when the URL names none.
_DEFAULT_PORTS = {"https": "443", "http": "80", "ssh": "22", "git+ssh": "22", "ssh+git": "22", "git": "9418"}


def _opened_repository(path: str) -> str:
    """The git directory git opens for the local `path` (the first of `_LOCAL_SUFFIXES` that is a
    directory), resolved; `path` itself when none is (not made yet: it is compared as named)."""
    for suffix in _LOCAL_SUFFIXES:
        if os.path.isdir(path + suffix):
            return os.path.realpath(path + suffix)
    return path


def _network_key(shown: str) -> str:
    """A network remote (credentials, query and fragment left out already: `git_url_shown`) as
    the repository it names: the host lower-cased, without the user, the scheme or the scheme's
    default port (`https://github.com/o/r`, `git@github.com:o/r.git` and
    `ssh://git@GitHub.com:22/o/r.git/` are one), the path without a trailing `/` or `.git`, and
    lower-cased: the hosts teams share (GitHub, GitLab, Bitbucket, Gitea) take any case of a
    repository's name to it (review16a F6), and two repositories whose names differ only in case
    on a host that keeps them apart are refused as one, with the refusal's fix (another instance),
    never written to one branch."""
    scheme, separator, rest = shown.partition("://")
    if not separator:  # scp-like `[user@]host:path`
        scheme, (host, _, path) = "ssh", shown.partition(":")
    else:
        host, _, path = rest.partition("/")
    host = host.rpartition("@")[2].lower()
    name, colon, port = host.rpartition(":")
    if colon and port == _DEFAULT_PORTS.get(scheme.lower()):
        host = name
    path = path.strip("/").lower().removesuffix(".git").rstrip("/")
    return f"{host}/{path}"


def _record(config: Config) -> tuple[str, str] | None:
    """The program and authority of the instance's on-chain account; None when the authority
    cannot be told (no chain.authority, and no keypair yet: `init` makes a new key)."""
    from precompact.verifier import signed

    authority = signed.configured_key(config)
    return None if authority is None else (config.program_id, authority)
