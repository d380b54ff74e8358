"""What `precompact init` does to a project: the configuration (0600, trusted as written), the
signing keypair, the age identity that reads the encrypted savepoints, the faucet on local and
test clusters, and logs kept out of git status."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from precompact.boundary import git_exclude, private_file
from precompact.config import approval as config_trust
from precompact.config import review as config_review
from precompact.config import settings as configuration
from precompact.config.settings import Config, ConfigError
from precompact.errors import PrecompactError

AIRDROP_LAMPORTS = 1_000_000_000
AIRDROP_WAIT_SECONDS = 30
DEVNET = "https://api.devnet.solana.com"
PROBE_SECONDS = 2
TURN_CHAIN_ON = "`precompact init --force --chain devnet` (or a cluster URL) turns it on"
# What `init` shows at a terminal before asking; `--chain` takes the same answers.
CHAIN_QUESTION = f"""Layer 3, a signed proof of each savepoint on Solana, is a choice:
  off     git only (Layers 1 and 2); set [layers] chain = true later to anchor what is pending, in order
  devnet  {DEVNET}: free test SOL (`solana airdrop 1 KEY --url devnet`, or https://faucet.solana.com)
  URL     any cluster's JSON-RPC URL, e.g. mainnet: about 0.0048 SOL of rent per instance (returned by
          `precompact close`) and 0.000005 SOL per savepoint, paid by the signing key: send it SOL
  local   {configuration.DEFAULT_CLUSTER}, the cluster `scripts/localnet` serves from a clone, for trying it out"""


class InitError(PrecompactError):
    """A one-line reason `init` could not do its part, naming the fix."""


@dataclass
class Keypair:
    path: Path
    pubkey: str
    created: bool


def chain_cluster(answer: str) -> str | None:
    """The cluster an answer to CHAIN_QUESTION (or `--chain`) names; None for off."""
    named = {"off": None, "devnet": DEVNET, "local": configuration.DEFAULT_CLUSTER}
    if answer in named:
        return named[answer]
    try:
        configuration.check_cluster_url(answer, allow_insecure_http=False)
    except ConfigError:
        raise InitError(f"--chain {answer!r} is not off, devnet, local or an http(s) cluster URL") from None
    return answer


def answers(cluster: str) -> bool:
    """Whether a Solana JSON-RPC endpoint answers at `cluster` within PROBE_SECONDS: a healthy
    node's "ok" to getHealth, not any JSON that happens to be served there."""
    from precompact.chain import rpc

    try:
        return rpc.Cluster(cluster, timeout=PROBE_SECONDS).call("getHealth", []) == "ok"
    except rpc.RpcError:
        return False


def own_keypair_path(instance: str) -> str:
    """Where init keeps the signing key it creates for `instance`: precompact's own config
    directory, never the Solana CLI's wallet (which may hold funds). "~/..." when under HOME, so
    the configuration stays portable."""
    slug = re.sub(r"[^a-z0-9]+", "-", instance.lower()).strip("-") or "instance"
    path = config_trust.store().parent / "keys" / f"{slug}.json"
    home = Path.home()
    return f"~/{path.relative_to(home)}" if path.is_relative_to(home) else str(path)


def config_path(root: Path, force: bool) -> Path:
    """Where init writes the configuration; refuses to overwrite one unless forced."""
    path = root / configuration.CONFIG_NAME
    if path.exists() and not force:
        raise _config_exists(path)
    return path


def _config_exists(path: Path) -> InitError:
    return InitError(f"{path} already exists; edit it, or pass --force to overwrite it")


def write_config(root: Path, values: dict, force: bool) -> Config:
    """Writes `values` as root's .precompact.toml (mode 0600, never through a link) and approves
    exactly those bytes; a file that does not load is removed again, so a failed init leaves no
    configuration behind."""
    path = config_path(root, force)
    content = configuration.render(values).encode("utf-8")
    try:
        (private_file.replace if force else private_file.create)(path, content)
    except FileExistsError:
        raise _config_exists(path) from None
    repository = values["repository"]
    try:
        # As `trust` shows them, so that the first `trust` after init shows what changed since.
        shown = config_review.settings(configuration.parse(root, content, environ={}))
        # What init writes is trusted, and so is a repository named here.
        config_trust.approve(path.resolve(), content, Path(repository).resolve() if repository != "." else None, shown)
        return configuration.load(root)
    except ConfigError as e:
        path.unlink()
        raise InitError(str(e)) from None


def ensure_keypair(path: Path) -> Keypair:
    """The Solana CLI keypair at `path`, created (0600, never over an existing file) if absent."""
    from solders.keypair import Keypair as SoldersKeypair

    from precompact.chain import wire as chain

    if path.exists():
        try:
            return Keypair(path, str(chain.load_keypair(path).pubkey()), created=False)
        except chain.KeypairError as e:
            raise InitError(str(e)) from None
    keypair = SoldersKeypair()
    try:
        private_file.create(path, json.dumps(list(bytes(keypair))).encode())
    except FileExistsError:
        raise InitError(
            f"{path} is taken (by a link to nothing?); a new key is written only where nothing is: remove it, or pass another --keypair"
        ) from None
    return Keypair(path, str(keypair.pubkey()), created=True)


@dataclass
class Identity:
    path: Path
    recipients: list[str]  # the identity's public key first, then the others given
    created: bool


def encryption_identity(path: Path, others: tuple[str, ...]) -> Identity:
    """The age identity at `path` (created, 0600, if absent) and the recipients savepoints are
    encrypted to: its public key and `others`."""
    from precompact.remote import encryption as remote_crypto

    try:
        own, created = remote_crypto.ensure_identity(path.expanduser())
    except remote_crypto.CryptoError as e:
        raise InitError(str(e)) from None
    if not own and not others:
        raise InitError(
            f"{path} is an SSH key, whose public half precompact cannot derive; pass it with --recipient 'ssh-ed25519 …'"
        )
    return Identity(path.expanduser(), list(dict.fromkeys([*own, *others])), created)


def airdrop(config: Config, pubkey: str) -> None:
    """Funds `pubkey` from the cluster's faucet and waits until the airdrop is confirmed."""
    from precompact.chain import rpc

    cluster = rpc.Cluster(config.cluster, timeout=10)
    try:
        signature = cluster.request_airdrop(pubkey, AIRDROP_LAMPORTS)
        deadline = time.monotonic() + AIRDROP_WAIT_SECONDS
        while (cluster.signature_status(signature) or {}).get("confirmationStatus") not in ("confirmed", "finalized"):
            if time.monotonic() > deadline:
                raise InitError(
                    f"the airdrop to {pubkey} was not confirmed by {config.cluster} within {AIRDROP_WAIT_SECONDS} s; fund the key yourself"
                )
            time.sleep(0.1)
    except rpc.RpcError as e:
        raise InitError(f"airdrop failed: {e}; on a cluster without a faucet, fund {pubkey} yourself") from None


# What init leaves in a project that is this user's alone (docs/setup.md, "Should
# `.precompact.toml` be committed?": no), kept out of `git status` so that no `git add -A`
# publishes the conversation, and no agent is shown `?? .precompact.toml` in every session.
LOGS = git_exclude.Kept("logs/precompact-*", "logs/precompact-savepoint.jsonl")
OWN_CONFIG = git_exclude.Kept(configuration.CONFIG_NAME, configuration.CONFIG_NAME)


def keep_out_of_git(root: Path, say: Callable[[str], None], warn: Callable[[str], None]) -> bool:
    """Keeps logs/precompact-* and .precompact.toml out of `git status` of the work tree `root`
    is in (git's own exclude file for it: a linked worktree's main repository, a submodule's own
    directory; anchored at root's place in it), says what git confirmed, and returns whether git
    now ignores the logs."""
    kept = git_exclude.keep_out(root, (LOGS, OWN_CONFIG))
    if kept.exclude_file is None and kept.problem is None:
        return False  # not in a git work tree: git status shows nothing of it
    if kept.problem is not None:
        warn(
            f"warning: {kept.problem}; add logs/precompact-* and .precompact.toml to git's exclude file yourself, and never commit logs/"
        )
    elif kept.added:
        checked = "" if kept.shown else ": git status no longer shows them (checked)"
        say(f"added {' and '.join(kept.added)} to {kept.exclude_file}{checked}")
    elif not kept.shown:
        say(f"{kept.exclude_file} already keeps logs/precompact-* and .precompact.toml out of git status (checked)")
    for shown in kept.shown if kept.problem is None else ():
        if shown is LOGS:
            warn(
                f"warning: git does not ignore {root / 'logs'} although {kept.exclude_file} lists it (a `!` pattern in a .gitignore?): never commit logs/, it holds the whole conversation"
            )
        else:
            warn(
                f"warning: git status still shows {root / shown.probe} (tracked, or un-ignored by a `!` pattern): it is your own setup, keep it out of your commits"
            )
    return LOGS in kept.ignored


def remote_url(root: Path, choices: configuration.InitChoices) -> str | None:
    """The URL `init` records as git.url when none is given: the remote's, as the repository
    gives it now (a relative path made absolute from the work tree, where git would read it)."""
    from precompact.boundary import git_env, processes

    repository = (root / choices.repository).resolve()
    try:
        url = git_env.remote_url(repository, choices.remote)
    except (OSError, processes.TimeoutExpired):
        return None
    if url and git_env.is_local_url(url) and not url.startswith(("/", "file://")):
        url = str((repository / url).resolve())
    if url is not None:
        try:
            configuration.check_git_url(url, f"remote {choices.remote!r}'s URL")
        except ConfigError as e:
            raise InitError(f"{e}; or pass --url") from None
    return url


def init(
    root: Path, choices: configuration.InitChoices, say: Callable[[str], None], warn: Callable[[str], None]
) -> dict:
    """Writes root's .precompact.toml as `choices` say, creates the signing keypair and, when
    encrypting, the age identity, funds the key from the faucet when asked, and keeps logs out
    of git status. Tells the user each step through `say` (`warn` for what needs their
    attention) as it is done; returns what was written and created."""
    from precompact.remote import gitstore

    path = config_path(root, choices.force)
    keypair = choices.keypair or own_keypair_path(choices.instance)
    done: dict = {
        "config": str(path),
        "instance": choices.instance,
        "chain": choices.cluster or "off",
        "identity": None,
    }
    url = choices.url or remote_url(root, choices)
    if url is None:
        warn(
            f"warning: remote {choices.remote!r} has no URL yet, so git.url is not recorded; once it has one, run `precompact init --force --url URL`"
        )
    values: dict = {
        "instance": choices.instance,
        "repository": choices.repository,
        "remote": choices.remote,
        "url": url,
        "branch": choices.branch,
        "cluster": choices.cluster or configuration.DEFAULT_CLUSTER,
        "chain": choices.cluster is not None,
        "keypair": keypair,
    }
    if choices.program_id:
        values["program_id"] = choices.program_id
    if choices.encrypt:
        # As given, or beside the keypair as given ("~/..." stays portable in the file).
        values["identity"] = choices.identity or str(Path(keypair).parent / configuration.IDENTITY_NAME)
        found = encryption_identity(Path(values["identity"]), choices.recipients)
        values["recipients"] = found.recipients
        done["identity"] = {"path": str(found.path), "created": found.created, "recipients": found.recipients}
        if found.created:
            say(
                f"created age identity {found.path} (public key {found.recipients[0]}); back it up, only it (or another recipient's) reads your savepoints on the remote"
            )
        else:
            say(f"using age identity {found.path}")
    loaded = write_config(root, values, choices.force)
    say(f"wrote {path}")
    key = ensure_keypair(loaded.keypair)
    done["keypair"] = {"path": str(key.path), "created": key.created, "pubkey": str(key.pubkey)}
    if key.created:
        say(f"created keypair {key.path} (public key {key.pubkey}); back it up, it signs your savepoints")
    else:
        say(f"using keypair {key.path}")
    done["airdropped_lamports"] = 0
    if choices.airdrop:
        airdrop(loaded, key.pubkey)
        done["airdropped_lamports"] = AIRDROP_LAMPORTS
        say(f"airdropped {AIRDROP_LAMPORTS / 1e9:g} SOL to {key.pubkey} on {loaded.cluster}")
    if not loaded.chain_layer and choices.say_chain_off:
        say(f"Layer 3 (the chain) is off: savepoints are kept locally and in git; {TURN_CHAIN_ON}")
    done["logs_excluded"] = keep_out_of_git(root, say, warn)
    try:
        gitstore.open_repository(loaded.repository)
    except gitstore.GitStoreError as e:
        warn(f"warning: {e}; Layer 2 stays queued until it is fixed")
    return done
