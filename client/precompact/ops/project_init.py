"""What `precompact init` does to a project: the configuration (0600, trusted as written), the
signing keypair, the age identity that reads the encrypted savepoints, the faucet on local and
test clusters, and logs kept out of git status."""

from __future__ import annotations

import copy
import dataclasses
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from precompact.boundary import git_exclude, private_file, quoting
from precompact.config import approval as config_trust
from precompact.config import endpoint
from precompact.config import review as config_review
from precompact.config import settings as configuration
from precompact.config.init_choices import InitChoices
from precompact.config.settings import Config, ConfigError
from precompact.errors import PrecompactError
from precompact.ops import instance_collision

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
    except ConfigError as e:  # its message shows the URL as config/endpoint does: no API key
        raise InitError(f"--chain is not off, devnet, local or a cluster URL precompact accepts ({e})") from None
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


def write_config(root: Path, values: dict, force: bool, kept: dict | None = None) -> Config:
    """Writes `values` as root's .precompact.toml (mode 0600, never through a link), over the
    settings `kept` from the one there when given, and approves exactly those bytes. What does
    not parse is refused before anything is written; a file that does not load is removed again,
    so a failed init leaves no configuration behind."""
    path = config_path(root, force)
    content = _rendered(values, kept)
    _parsed(root, content)
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
        if kept is None:
            path.unlink()
        raise InitError(str(e)) from None


def _rendered(values: dict, kept: dict | None) -> bytes:
    """The bytes of the configuration `values` make (over the settings `kept`, when given)."""
    text = configuration.render(values) if kept is None else configuration.render_kept(_over(kept, values), values)
    return text.encode("utf-8")


def _parsed(root: Path, content: bytes) -> Config:
    """The configuration `content` is at `root`, as its hooks will read it (no environment);
    InitError when it does not parse."""
    try:
        return configuration.parse(root, content, environ={})
    except ConfigError as e:
        raise InitError(str(e)) from None


def _over(kept: dict, values: dict) -> dict:
    """`kept` (a configuration's TOML tables) with the settings in `values` set in it."""
    tables = copy.deepcopy(kept)

    def table(name: str) -> dict:
        if not isinstance(tables.get(name), dict):
            tables[name] = {}
        return tables[name]

    tables["instance"] = values["instance"]
    git = table("git")
    for key in ("repository", "remote", "branch"):
        git[key] = values[key]
    if values.get("url"):
        git["url"] = values["url"]
    else:
        git.pop("url", None)
    chain = table("chain")
    chain["cluster"], chain["keypair"] = values["cluster"], values["keypair"]
    if values.get("program_id"):
        chain["program_id"] = values["program_id"]
    table("layers")["chain"] = values["chain"]
    encryption = table("encryption")
    encryption["recipients"] = values.get("recipients", [])
    if values.get("identity"):
        encryption["identity"] = values["identity"]
    else:
        encryption.pop("identity", None)
    return tables


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
                    f"the airdrop to {pubkey} was not confirmed by {cluster.shown} within {AIRDROP_WAIT_SECONDS} s; fund the key yourself"
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


def remote_url(root: Path, choices: InitChoices) -> str | None:
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


def init(root: Path, choices: InitChoices, say: Callable[[str], None], warn: Callable[[str], None]) -> dict:
    """Writes root's .precompact.toml as `choices` say (with --force over an approved one, only
    the settings named on the command line change), creates the signing keypair and, when
    encrypting, the age identity, funds the key from the faucet when asked, and keeps logs out
    of git status. Tells the user each step through `say` (`warn` for what needs their
    attention) as it is done; returns what was written and created."""
    from precompact.remote import gitstore

    path = config_path(root, choices.force)
    kept = choices.kept
    values = _settings(root, choices)
    # Before anything is written or made: another project on this machine writing this instance
    # to the same branch or record would hide this one's savepoints, and this one its.
    instance_collision.refuse(_parsed(root, _rendered(values, kept)), "init")
    done: dict = {
        "config": str(path),
        "instance": values["instance"],
        "chain": endpoint.shown(values["cluster"]) if values["chain"] else "off",
        "identity": None,
    }
    if values["url"] is None:
        warn(
            f"warning: remote {values['remote']!r} has no URL yet, so git.url is not recorded; once it has one, run `precompact init --force --url URL`"
        )
    # Before any key file is made: one inside the project would be refused when the file loads.
    for setting, value in (("chain.keypair", values["keypair"]), ("encryption.identity", values.get("identity"))):
        problem = value and configuration.key_inside_problem(setting, configuration.project_path(root, value), [root])
        if problem:
            raise InitError(problem)
    if values.get("identity"):
        found = _identity(values, choices)
        values["recipients"] = found.recipients
        done["identity"] = {"path": str(found.path), "created": found.created, "recipients": found.recipients}
        if found.created:
            say(
                f"created age identity {found.path} (public key {found.recipients[0]}); back it up, only it (or another recipient's) reads your savepoints on the remote"
            )
        else:
            say(f"using age identity {found.path}")
    loaded = write_config(root, values, choices.force, kept)
    say(f"wrote {path}" if kept is None else f"wrote {path}, keeping every setting not named on the command line")
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
        say(f"airdropped {AIRDROP_LAMPORTS / 1e9:g} SOL to {key.pubkey} on {endpoint.shown(loaded.cluster)}")
    if not loaded.chain_layer and choices.say_chain_off:
        say(f"Layer 3 (the chain) is off: savepoints are kept locally and in git; {TURN_CHAIN_ON}")
    done["logs_excluded"] = keep_out_of_git(root, say, warn)
    _register(loaded, warn)
    try:
        repo = gitstore.open_repository(gitstore.Target.of(loaded))
    except gitstore.GitStoreError as e:
        warn(f"warning: {e}; Layer 2 stays queued until it is fixed")
        return done
    if done["identity"] and done["identity"]["created"] and loaded.git_layer:
        _sealed_for_others(repo, loaded, warn)
    return done


def _sealed_for_others(repo, loaded: configuration.Config, warn: Callable[[str], None]) -> None:
    """With an age identity made now, a remote whose branch of the instance holds savepoints
    already (another machine's `init`, whose identity sealed them): this one cannot read them, said
    in one line naming the fix. A remote that cannot be asked is said by Layer 2, not here."""
    from precompact.remote import gitstore

    target = gitstore.Target.of(loaded)
    try:
        held = gitstore.remote_has_branch(repo, target)
    except gitstore.GitStoreError:
        return
    if held:
        warn(
            f"warning: {loaded.remote} already holds savepoints of {quoting.name(loaded.instance)} (branch {target.branch}), "
            "sealed to another age identity: the one made now cannot read or restore them; fix: precompact key import "
            "FILE (the identity that sealed them, from `precompact key export` on that machine; docs/setup.md)"
        )


def add(path: Path) -> Path:
    """`projects --add`: the project at `path` in this machine's registry again, a forgotten one
    too, its configuration one the user approved; refused (InstanceInUse) as `init` refuses, when
    another project here writes its instance to the same chain: a project forgotten while
    another took its instance would otherwise come back as the pair `init` refuses. Its root.
    The configuration as its hooks load it (no environment: a shell's PRECOMPACT_INSTANCE or
    PRECOMPACT_BRANCH changes nothing a hook writes), so the instance registered and compared is
    the one its savepoints are written as."""
    from precompact.local import registry

    loaded = configuration.load(path, environ={})
    instance_collision.refuse(loaded, "projects --add")
    registry.add(loaded.root, loaded.instance)
    return loaded.root


def _register(loaded: configuration.Config, warn: Callable[[str], None]) -> None:
    """The project in this machine's registry (`precompact projects`), a forgotten one too: `init`
    is the user's own command for it. A registry that cannot be written costs the project nothing
    but a warning naming the fix."""
    from precompact.local import registry

    try:
        registry.add(loaded.root, loaded.instance)
    except PrecompactError as e:
        warn(f"warning: this project is not in the machine's registry: {e}")
    except OSError as e:
        warn(f"warning: this project is not in the machine's registry: {quoting.inline(str(e))}")


def _settings(root: Path, choices: InitChoices) -> dict:
    """The settings `init` writes: as `choices` say; over a kept configuration, its own for
    every setting the command line did not name."""
    kept, named = choices.kept, choices.named
    git = _table(kept, "git")
    chain = _table(kept, "chain")
    encryption = _table(kept, "encryption")

    def setting(option: str, given: object, table: dict, key: str, default: object) -> object:
        return given if kept is None or option in named else table.get(key, default)

    values: dict = {
        "instance": choices.instance,
        "repository": setting("repo", choices.repository, git, "repository", "."),
        "remote": setting("remote", choices.remote, git, "remote", configuration.DEFAULT_REMOTE),
        "branch": setting("branch", choices.branch, git, "branch", configuration.DEFAULT_BRANCH),
    }
    if kept is None or named & {"chain", "cluster"}:
        values["cluster"] = choices.cluster or configuration.DEFAULT_CLUSTER
        values["chain"] = choices.cluster is not None
    else:
        values["cluster"] = chain.get("cluster", configuration.DEFAULT_CLUSTER)
        values["chain"] = _table(kept, "layers").get("chain", True)
    if kept is None or "keypair" in named:
        values["keypair"] = choices.keypair or own_keypair_path(choices.instance)
    else:
        values["keypair"] = chain.get("keypair", configuration.DEFAULT_KEYPAIR)
    program_id = setting("program_id", choices.program_id, chain, "program_id", None)
    if program_id:
        values["program_id"] = program_id
    if choices.url is not None:
        values["url"] = choices.url
    elif kept is not None and "remote" not in named and git.get("url"):
        values["url"] = git["url"]
    else:
        values["url"] = remote_url(
            root, dataclasses.replace(choices, repository=values["repository"], remote=values["remote"])
        )
    beside_keypair = str(Path(values["keypair"]).parent / configuration.IDENTITY_NAME)
    if kept is None or named & {"identity", "no_encrypt"}:
        # As given, or beside the keypair as given ("~/..." stays portable in the file).
        values["identity"] = (choices.identity or beside_keypair) if choices.encrypt else None
    elif encryption.get("recipients") or choices.recipients:
        values["identity"] = encryption.get("identity", beside_keypair)
    else:
        values["identity"] = None  # encryption was off and nothing here turns it on
    values["recipients"] = []
    return values


def _table(kept: dict | None, name: str) -> dict:
    table = (kept or {}).get(name)
    return table if isinstance(table, dict) else {}


def _identity(values: dict, choices: InitChoices) -> Identity:
    """The age identity `values` names and the recipients: for a new configuration (or a new
    --identity) its public key and the --recipient keys; over a kept one, the recipients it had
    (the old identity's own key replaced by a new --identity's) and the --recipient keys. An
    identity the kept configuration encrypts to is never replaced by a new one unasked."""
    kept = choices.kept
    recipients = _table(kept, "encryption").get("recipients", [])
    if kept is None or not recipients or "identity" in choices.named:
        found = encryption_identity(Path(values["identity"]), choices.recipients)
        if kept is not None and "identity" in choices.named:
            gone = set(_public_keys(_table(kept, "encryption").get("identity")))
            others = [r for r in recipients if r not in gone]
            found.recipients = list(dict.fromkeys([*found.recipients, *others]))
        return found
    path = Path(values["identity"]).expanduser()
    if not path.exists():
        raise InitError(
            f"the age identity {path} that .precompact.toml names is missing, and savepoints are encrypted to it: put your copy back (`precompact key import FILE`), or pass --identity FILE"
        )
    return Identity(path, list(dict.fromkeys([*recipients, *choices.recipients])), created=False)


def _public_keys(identity: object) -> list[str]:
    """The public keys of the identity file at `identity`; none when it cannot be read."""
    from precompact.remote import encryption as remote_crypto

    if not isinstance(identity, str):
        return []
    path = Path(identity).expanduser()
    try:
        return remote_crypto.public_keys(remote_crypto.read_identity_file(path), str(path))
    except remote_crypto.CryptoError:
        return []


@dataclass
class IdentityImported:
    public_keys: list[str]
    kept_aside: Path | None  # where the identity it replaced went (None: none, or held in the new file)
    recipients: list[str]  # encryption.recipients now
    others: list[str]  # recipients besides the imported keys


def import_identity(config: Config, data: bytes, source: str) -> IdentityImported:
    """Installs the identity `data` at encryption.identity (remote.encryption.import_identity:
    another one there is replaced only when no savepoint here is encrypted to it, or the new
    file holds it) and makes it the one savepoints are encrypted to: its keys replace the
    replaced identity's among encryption.recipients, in .precompact.toml and its approval."""
    from precompact.local import savepoint_log
    from precompact.remote import encryption as remote_crypto

    if config.identity is None:
        raise InitError("encryption.identity is not set; set it to where the identity should go")
    in_use = bool(savepoint_log.savepoints(config.logs))
    try:
        own, replaced, aside = remote_crypto.import_identity(data, source, config.identity, in_use)
    except remote_crypto.CryptoError as e:
        raise InitError(str(e)) from None
    recipients = list(config.recipients)
    if own and recipients:
        recipients = list(dict.fromkeys([*own, *(r for r in recipients if r not in replaced)]))
        if recipients != list(config.recipients):
            _write_recipients(config.root, recipients)
    return IdentityImported(own, aside, recipients, [r for r in recipients if r not in own])


def _write_recipients(root: Path, recipients: list[str]) -> None:
    """encryption.recipients in root's approved configuration set to `recipients`, and those
    bytes approved as the rest was."""
    path = root.resolve() / configuration.CONFIG_NAME
    content = configuration.read_own(path)
    approved = config_trust.approval(path)
    if approved is None or approved.sha256 != config_trust.digest(content):
        raise InitError(f"{path} changed since you trusted it; read it, then run `precompact trust`")
    changed = configuration.with_recipients(content, recipients)
    private_file.replace(path, changed)
    repository = Path(approved.repository) if approved.repository else None
    config_trust.approve(path, changed, repository, approved.settings)
