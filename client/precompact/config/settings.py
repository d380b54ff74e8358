"""`.precompact.toml`: reading, validating, environment overrides, and writing a new one.

Every problem is a `ConfigError` whose message is one line naming the key and the fix. This
module stays free of the Solana stack: the hook imports it.
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
import tomllib
import urllib.parse
from collections.abc import Mapping, MutableMapping
from pathlib import Path

from precompact.boundary import git_env, quoting, user_roots
from precompact.config import approval as config_trust
from precompact.config import discovery, endpoint
from precompact.errors import PrecompactError
from precompact.records import Record

CONFIG_NAME = discovery.CONFIG_NAME
# The program's IDL, shipped inside the package (a plain path: importlib.resources costs the hook
# 5 ms of imports).
IDL_FILE = Path(__file__).parent.parent / "idl" / "precompact.json"
DEFAULT_CLUSTER = "http://127.0.0.1:8899"
DEFAULT_KEYPAIR = "~/.config/solana/id.json"
# A Solana CLI keypair file is a JSON array of 64 numbers, a few hundred bytes: past this it is not one.
MAX_KEYPAIR_BYTES = 64 << 10
DEFAULT_BRANCH = "precompact/savepoints"
DEFAULT_REMOTE = "origin"
# Matched (fnmatch, where `*` spans `/`) against a file's path, its name and its path in the
# project: credentials files, key stores, and wallet key files (Solana CLI and Anchor keypairs,
# Ethereum keystores, Bitcoin wallets).
_SECRET_DIRECTORIES = (".docker", ".aws", ".kube", ".gnupg", ".ssh", ".config/solana", ".config/gcloud", "keystore")
DEFAULT_EXCLUDE = [
    ".env*", "*/.env*", "*.pem", "*.key", "*id_rsa*", "*id_ed25519*",
    ".netrc", ".pgpass", ".git-credentials", ".npmrc", ".pypirc",
    *(pattern for directory in _SECRET_DIRECTORIES for pattern in (f"{directory}/*", f"*/{directory}/*")),
    "id_*", "*.ppk", "*.p12", "*.pfx", "*.keystore", "*.jks", "master.key", "credentials*.json", "service-account*.json",
    "*keypair*.json", "UTC--*", "wallet.dat", "*.wallet",
]  # fmt: skip
DEFAULT_CONTEXT_WINDOW = 200_000

# Environment variable -> (section, key) it overrides.
ENV_OVERRIDES = {
    "PRECOMPACT_INSTANCE": (None, "instance"),
    "PRECOMPACT_REPO": ("git", "repository"),
    "PRECOMPACT_REMOTE": ("git", "remote"),
    "PRECOMPACT_BRANCH": ("git", "branch"),
    "PRECOMPACT_CLUSTER": ("chain", "cluster"),
    "PRECOMPACT_KEYPAIR": ("chain", "keypair"),
    "PRECOMPACT_PROGRAM_ID": ("chain", "program_id"),
    "PRECOMPACT_AUTHORITY": ("chain", "authority"),
    "PRECOMPACT_IDENTITY": ("encryption", "identity"),
}
# The PRECOMPACT_* variables a hook, the worker it starts and the MCP server keep; every other is
# dropped (drop_agent_overrides), a command the user runs keeps them all. Their environment is the
# agent's, which the project's own files can set (Claude Code's `env` in .claude/settings.json, a
# server's `env` in .mcp.json), so what is kept is only what the project cannot turn against the
# user (docs/security.md has the table):
# - PRECOMPACT_CLUSTER (the plugin's `cluster` option): a transport, whose every answer is checked
#   against the program id and the authority, which only the approved configuration gives there;
#   an endpoint the project picks is the hostile RPC endpoint docs/security.md describes.
# - PRECOMPACT_KEYPAIR (the `keypair` option) counts only when the approved configuration names
#   chain.authority: the root is then that key whichever file signs, and a file holding another
#   key is set aside where the key is used (ops/layers.keypair_counted: the file's chain.keypair
#   signs, one line says so). Checking it here would cost every hook cryptography's import, about
#   30 ms.
# Dropped: the roots verdicts are checked against (AUTHORITY, PROGRAM_ID, INSTANCE: the project
# would pick whose record and branch a savepoint joins, another project's sequence included), the
# destinations (REPO: the repository git runs in; REMOTE, BRANCH: where savepoints are pushed),
# IDENTITY (the file decryption reads: a FIFO there held the worker's locks), and any name
# precompact does not know.
AGENT_KEPT_OVERRIDES = ("PRECOMPACT_CLUSTER", "PRECOMPACT_KEYPAIR")
# What each agent sets in the environment of the commands its model runs (user_roots, which also
# honours CLAUDE_CONFIG_DIR for install and doctor only without them). A command run with one of
# them set, whatever its value, is one the model may have run in the agent's environment: it
# keeps the PRECOMPACT_* variables a hook keeps, no more (`in_agent_session`).
AGENT_SESSION_MARKERS = user_roots.AGENT_SESSION_MARKERS
AGENT_OVERRIDES_NOTE = "# A hook, its worker and the MCP server keep only _CLUSTER and _KEYPAIR (docs/security.md)."
# Public keys savepoints may be encrypted to: age X25519 recipients, and SSH ed25519 keys as
# `ssh-ed25519 AAAA… [comment]` (checked here by shape; remote_crypto parses them, off the
# hook's path).
AGE_RECIPIENT = re.compile(r"age1[02-9ac-hj-np-z]{58}")
SSH_ED25519_RECIPIENT = re.compile(r"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5[A-Za-z0-9+/]{43,}={0,2}( [ -~]*)?")
# Beside the Solana keypair, as `init` writes it.
IDENTITY_NAME = "precompact-age-identity.txt"
SESSION_START_SOURCES = ("startup", "resume", "clear", "compact", "fork")
DEFAULT_SESSION_START_SOURCES = ["compact", "resume"]
# What a compacted session is given in all: the SessionStart brief and, at the next prompt or tool
# call, what the summary left out (docs/sessions.md). Claude Code cuts a hook's text at 10,000.
DEFAULT_BRIEF_BUDGET = 4_000
BRIEF_BUDGET_RANGE = (1_500, 9_500)
# What the PreCompact hook prints: Claude Code appends it to the summariser's prompt as
# "Additional Instructions". {savepoint} becomes e.g. "savepoint 3 (sha256:0a1b2c3d4e5f)", and
# {transcript} "full pre-compaction transcript", or, when lines of it were saved only in part, the
# same without "full" and with how many (ops/compaction.py; fixed words and numbers only).
# Its advice for the summary is given alone, after fixed words, when the hook queued the savepoint
# (its number and hash not known yet, so nothing is "saved as" yet).
DEFAULT_COMPACT_ADVICE = (
    "After compaction the session gets precompact's brief with the user's newest request and the todo list, then, "
    "with its next prompt, what this summary leaves out. In the summary, keep the user's explicit requests and "
    "constraints verbatim, and the reasons for decisions and for approaches that were rejected."
)
DEFAULT_COMPACT_NOTE = "The {transcript} is saved as precompact {savepoint}. " + DEFAULT_COMPACT_ADVICE
_BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


class ConfigError(PrecompactError):
    """A setting is missing or invalid; the message names it and the fix. Given apart (`fix`),
    the fix follows the problem after "; ", and doctor shows it as its check's fix."""

    def __init__(self, problem: str, fix: str | None = None):
        super().__init__(f"{problem}; {fix}" if fix else problem)
        self.problem, self.fix = problem, fix


class InvalidSetting(ConfigError):
    """The value of setting `key` (`section.key`, or `[section]`) is not one precompact takes:
    `problem` names the key and the values it takes."""

    def __init__(self, key: str, problem: str, fix: str | None = None):
        super().__init__(problem, fix)
        self.key = key


class UntrustedConfig(ConfigError):
    """The configuration found may not be used: this user has not approved it (or not these
    bytes), or another user could have written it. Nothing may run on it."""


class Config(Record, frozen=True):
    root: Path
    instance: str
    repository: Path
    remote: str
    branch: str
    cluster: str
    keypair: Path
    program_id: str
    # The public key whose records to read; None: the keypair's. Set it on a machine that has
    # only the public half.
    authority: str | None
    git_layer: bool
    chain_layer: bool
    session_state: Path | None
    include: tuple[Path, ...]
    exclude: tuple[str, ...]
    context_window: int
    redaction: bool
    redaction_patterns: dict
    session_start_sources: tuple[str, ...]
    compact_note: str  # empty: the PreCompact hook prints nothing
    insecure_cluster: bool = False
    # Layer 2 encrypts to these public keys (none: clear text, as projects made before
    # encryption existed); `identity` is the age identity file that reads them back.
    recipients: tuple[str, ...] = ()
    identity: Path | None = None
    # SessionEnd archives what was said since the last savepoint (one more savepoint per session).
    session_end: bool = True
    # Characters a compacted session is given in all: the SessionStart brief and the addendum.
    brief_budget: int = DEFAULT_BRIEF_BUDGET
    # The one URL Layer 2 pushes to and fetches from (`git.url`, approved with the rest); None in a
    # configuration written before it was recorded: then `git.remote`'s URL in the repository's
    # own git configuration, read on every push (url_unrecorded_warning says how to record it).
    url: str | None = None
    # chain.keypair as the approved file names it, when PRECOMPACT_KEYPAIR named another file as
    # `keypair` (None: it did not). That key signs in its place where the override's key is not
    # chain.authority's (ops/layers.keypair_counted; docs/setup.md).
    keypair_in_file: Path | None = None
    # The instance the approved file names, which hooks load (they drop PRECOMPACT_INSTANCE, and
    # have no --instance); None: `instance`. A queue entry of an older precompact names no
    # instance: its savepoint is this one's (local/snapshot.py, `_hooks_settings`).
    configured_instance: str | None = None

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    @property
    def keypair_setting(self) -> str:
        """What named `keypair`, for a message naming the fix."""
        return "chain.keypair" if self.keypair_in_file is None else "PRECOMPACT_KEYPAIR"


def find_root(start: Path) -> Path:
    """The nearest directory at or above `start` holding `.precompact.toml`."""
    return discover(start)[0]


def discover(start: Path) -> tuple[Path, Path | None]:
    """The directory holding the configuration, and the git work tree it belongs to (None
    outside one): `discovery.discover`'s walk, which the hook's entry takes before importing
    this module."""
    found = discovery.discover(str(start))
    if found is None:
        raise ConfigError(discovery.missing(str(start)))
    root, worktree = found
    return Path(root), None if worktree is None else Path(worktree)


def read_own(path: Path) -> bytes:
    """The bytes of a configuration file this user owns and only this user can change."""
    try:
        return config_trust.read_own(path)
    except config_trust.NotOwn as e:
        raise UntrustedConfig(str(e)) from None


def load(start: Path, environ: dict | None = None) -> Config:
    """The approved configuration for `start`. Raises UntrustedConfig when this user has not
    approved these exact bytes, ConfigError for anything else wrong."""
    root, worktree = discover(start)
    path = root / CONFIG_NAME
    content = read_own(path)
    approved = config_trust.approval(path)
    if approved is None:
        raise UntrustedConfig(
            f"{path} is not trusted: precompact did not write it for you",
            f"read it, then run `precompact trust` in {root}",
        )
    if approved.sha256 != config_trust.digest(content):
        raise UntrustedConfig(f"{path} changed since you trusted it", f"read it, then run `precompact trust` in {root}")
    config = read_settings(root, content, environ)
    check_keys(config, worktree)
    try:
        check_repository(config, worktree, approved.repository)
    except UntrustedConfig:
        named = (os.environ if environ is None else environ).get("PRECOMPACT_REPO")
        if not named:
            raise
        raise UntrustedConfig(
            f"PRECOMPACT_REPO {named} is not this project's own repository; unset it, or set git.repository to it in {path} and run `precompact trust --repo {named}` in {root}"
        ) from None
    return config


def drop_agent_overrides(environ: MutableMapping[str, str], root: Path | None) -> list[str]:
    """Removes from `environ` (a hook's or the MCP server's: the agent's, which the worker a hook
    starts inherits) every PRECOMPACT_* variable but AGENT_KEPT_OVERRIDES, and PRECOMPACT_KEYPAIR
    unless root's approved configuration names chain.authority (`root` None: outside every
    project, where none is approved). Returns the names of those that were set (not empty)."""
    dropped = sorted(name for name in environ if name.startswith("PRECOMPACT_") and name not in AGENT_KEPT_OVERRIDES)
    ignored = [name for name in dropped if environ.pop(name)]
    if environ.get("PRECOMPACT_KEYPAIR") and (root is None or not _names_authority(root)):
        del environ["PRECOMPACT_KEYPAIR"]
        ignored.append("PRECOMPACT_KEYPAIR")
    return ignored


def in_agent_session(environ: Mapping[str, str]) -> bool:
    """Whether `environ` is that of a command an agent's model or user ran inside the agent's
    session (AGENT_SESSION_MARKERS): an environment the project's files can set."""
    return user_roots.in_agent_session(environ)


def _names_authority(root: Path) -> bool:
    """Whether root's approved configuration names chain.authority (a key, checked by load)."""
    chain = (approved_tables(root) or {}).get("chain")
    return isinstance(chain, dict) and isinstance(chain.get("authority"), str) and bool(chain["authority"])


def ignored_overrides_notice(names: list[str]) -> str:
    """What a hook or the MCP server logs of the overrides it ignored, naming the fix."""
    keypair = (
        " (PRECOMPACT_KEYPAIR counts only where chain.authority is set, and signs only as that key)"
        if "PRECOMPACT_KEYPAIR" in names
        else ""
    )
    return f"{', '.join(names)} ignored: the agent's environment is the project's to set; set the value in .precompact.toml and run `precompact trust` (docs/security.md lists what a hook keeps){keypair}"


def approved_tables(root: Path) -> dict | None:
    """The settings of root's configuration as TOML tables, when this user approved exactly its
    bytes; None when there is none, or it is not approved as it is, or it is not TOML (what
    nobody approved is never carried into a file `init` approves)."""
    path = root.resolve() / CONFIG_NAME
    try:
        content = read_own(path)
    except ConfigError:
        return None
    approved = config_trust.approval(path)
    if approved is None or approved.sha256 != config_trust.digest(content):
        return None
    try:
        return tomllib.loads(content.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        return None


def read_settings(root: Path, content: bytes, environ: dict | None = None) -> Config:
    """`parse` of root's configuration file as a command reads or approves it: a value it cannot
    use is named with where it was set (the file, or the PRECOMPACT_* variable that overrides
    it) and the fix there (`precompact trust` after the file is edited)."""
    try:
        return parse(root, content, environ)
    except InvalidSetting as e:
        path = root / CONFIG_NAME
        overrides = os.environ if environ is None else environ
        variable = next(
            (name for name, place in ENV_OVERRIDES.items() if overrides.get(name) and _name(*place) == e.key), None
        )
        if variable is not None:
            fix = f"correct or unset {variable}" + (f": {e.fix}" if e.fix else "")
            raise InvalidSetting(e.key, f"{e.problem} (set by {variable})", fix) from None
        fix = f"{e.fix or 'correct it'} in that file, then run `precompact trust` in {quoting.path(root)}"
        raise InvalidSetting(e.key, f"{quoting.path(path)}: {e.problem}", fix) from None


def parse(root: Path, content: bytes, environ: dict | None = None) -> Config:
    """The configuration in `content` (the file at `root`), with environment overrides; not
    checked for approval."""
    path = root / CONFIG_NAME
    try:
        raw = tomllib.loads(content.decode("utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(
            f"{path} is not valid TOML ({quoting.inline(str(e))})", "fix the file or re-run `precompact init --force`"
        ) from None
    except UnicodeDecodeError as e:
        raise ConfigError(f"cannot read {path}: {quoting.inline(str(e))}") from None
    overrides = os.environ if environ is None else environ
    in_file = _keypair(root, raw) if overrides.get("PRECOMPACT_KEYPAIR") else None
    named = raw.get("instance")
    for variable, (section, key) in ENV_OVERRIDES.items():
        if overrides.get(variable):
            (raw.setdefault(section, {}) if section else raw)[key] = overrides[variable]
    config = _validate(root, raw)
    if isinstance(named, str) and named.strip() and named != config.instance:
        config = config.replace(configured_instance=named)
    return config if in_file in (None, config.keypair) else config.replace(keypair_in_file=in_file)


def _keypair(root: Path, raw: dict) -> Path:
    # Relative to the project, as every other path of the file is: not to wherever a command runs.
    return project_path(root, _Reader(raw).string("chain", "keypair", DEFAULT_KEYPAIR))


def key_inside_project(path: Path, project: list[Path]) -> Path | None:
    """Where `path` resolves when that is inside one of the `project` directories (the
    configuration's directory, its git work tree), else None. Symlinks are followed: a link
    inside the project to a file outside it is judged by that file, the user's own key the link
    only names; a link out of the project to a file inside it is the project's file. A path
    that cannot be resolved (a symlink loop) counts as inside: nothing shows it is the user's."""
    try:
        resolved = path.resolve()
    except (OSError, RuntimeError):
        return path
    return resolved if any(resolved.is_relative_to(p.resolve()) for p in project) else None


def check_keys(config: Config, worktree: Path | None) -> None:
    """`chain.keypair` and `encryption.identity` must be files outside the project: a key the
    project holds is one its repository can ship, and a key the repository ships would make
    the savepoints in the `logs/` it ships verify as the user's own (and is a secret committed
    to the repository)."""
    project = [p for p in (config.root, worktree) if p is not None]
    for setting, path in ((config.keypair_setting, config.keypair), ("encryption.identity", config.identity)):
        problem = None if path is None else key_inside_problem(setting, path, project)
        if problem is not None:
            raise UntrustedConfig(problem)


def key_inside_problem(setting: str, path: Path, project: list[Path]) -> str | None:
    """The one line refusing `setting`'s key file `path` when it resolves inside `project`."""
    inside = key_inside_project(path, project)
    if inside is None:
        return None
    resolving = "" if inside == path else f" (resolving to {quoting.inline(str(inside))})"
    return f"{setting} {quoting.inline(str(path))}{resolving} is inside the project, where a repository can ship it; move the key outside the project, e.g. ~/.config/precompact/…, and point {setting} at it"


def check_repository(config: Config, worktree: Path | None, approved: str | None) -> None:
    """`git.repository` must be the project's own (the work tree holding the configuration, or
    its `.git`) unless the user named it at `init` or `trust`: a repository the project ships
    could carry hooks and configuration that run commands."""
    repository = config.repository.resolve()
    own = {p for p in (worktree, config.root) if p is not None}
    if str(repository) == approved or repository in {p / ".git" for p in own}:
        return
    # The project directory itself, unless its files make it look like a bare repository
    # (HEAD, objects/, refs/ committed at its top) that git would use instead.
    if repository in own and (os.path.lexists(repository / ".git") or not os.path.lexists(repository / "HEAD")):
        return
    raise UntrustedConfig(
        f"git.repository {config.repository} is not this project's own repository; if you mean it, run `precompact trust --repo {config.repository}` in {config.root}"
    )


def _validate(root: Path, raw: dict) -> Config:
    r = _Reader(raw)
    instance = r.string(None, "instance")
    if not instance.strip():
        raise InvalidSetting("instance", "instance is empty", 'set instance = "<name> #<n>"')
    cluster = r.string("chain", "cluster", DEFAULT_CLUSTER)
    insecure = r.boolean("chain", "allow_insecure_http", False)
    check_cluster_url(cluster, insecure)
    program_id = r.string("chain", "program_id", _default_program_id())
    if not is_pubkey(program_id):
        raise InvalidSetting(
            "chain.program_id",
            f"chain.program_id {program_id!r} is not a base58 public key",
            "set it to the deployed program's address",
        )
    authority = r.string("chain", "authority", "") or None
    if authority is not None and not is_pubkey(authority):
        raise InvalidSetting(
            "chain.authority",
            f"chain.authority {authority!r} is not a base58 public key",
            "set it to the public key that signs your savepoints",
        )
    sources = r.strings("hooks", "session_start_sources", DEFAULT_SESSION_START_SOURCES)
    unknown = sorted(set(sources) - set(SESSION_START_SOURCES))
    if unknown:
        raise InvalidSetting(
            "hooks.session_start_sources",
            f"hooks.session_start_sources has unknown source(s) {', '.join(unknown)}",
            f"list any of {', '.join(SESSION_START_SOURCES)}",
        )
    budget = r.integer("hooks", "brief_budget", DEFAULT_BRIEF_BUDGET, BRIEF_BUDGET_RANGE, "characters")
    window = r.integer("snapshot", "context_window", DEFAULT_CONTEXT_WINDOW, (1, None), "tokens")
    session_state = r.string("snapshot", "session_state", "")
    patterns = r.table("redaction", "patterns")
    for name, regex in patterns.items():
        if not isinstance(regex, str):
            raise InvalidSetting(
                "redaction.patterns",
                f"redaction.patterns.{name} must be a regular expression string",
                "put the pattern in quotes",
            )
        try:
            re.compile(regex)
        except re.error as e:
            raise InvalidSetting(
                "redaction.patterns",
                f"redaction.patterns.{name} is not a valid regular expression ({e})",
                "correct the pattern (Python's re syntax)",
            ) from None
    recipients = r.strings("encryption", "recipients", [])
    for recipient in recipients:
        if not (AGE_RECIPIENT.fullmatch(recipient) or SSH_ED25519_RECIPIENT.fullmatch(recipient)):
            raise InvalidSetting(
                "encryption.recipients",
                f"encryption.recipients entry {recipient[:40]!r} is not an age public key (age1…) or an ssh-ed25519 public key",
                "copy it from `precompact key show` or the .pub file",
            )
    if len(set(recipients)) != len(recipients):
        raise InvalidSetting("encryption.recipients", "encryption.recipients lists a key twice", "remove the duplicate")
    keypair = _keypair(root, raw)
    identity = r.string("encryption", "identity", "")
    git_table = raw.get("git")
    url = r.string("git", "url", "") if isinstance(git_table, dict) and "url" in git_table else None
    if url is not None:
        check_git_url(url, "git.url")
    return Config(
        root=root,
        instance=instance,
        repository=project_path(root, r.string("git", "repository", ".")),
        remote=r.string("git", "remote", DEFAULT_REMOTE),
        branch=r.string("git", "branch", DEFAULT_BRANCH),
        cluster=cluster,
        keypair=keypair,
        program_id=program_id,
        authority=authority,
        git_layer=r.boolean("layers", "git", True),
        chain_layer=r.boolean("layers", "chain", True),
        session_state=project_path(root, session_state) if session_state else None,
        include=tuple(project_path(root, p) for p in r.strings("snapshot", "include", [])),
        exclude=tuple(r.strings("snapshot", "exclude", DEFAULT_EXCLUDE)),
        context_window=window,
        redaction=r.boolean("redaction", "enabled", True),
        redaction_patterns=patterns,
        session_start_sources=tuple(sources),
        compact_note=r.string("hooks", "compact_note", DEFAULT_COMPACT_NOTE),
        session_end=r.boolean("hooks", "session_end", True),
        brief_budget=budget,
        insecure_cluster=cluster.startswith("http://") and not is_loopback_url(cluster),
        recipients=tuple(recipients),
        identity=project_path(root, identity) if identity else keypair.parent / IDENTITY_NAME,
        url=url,
    )


def check_git_url(url: str, name: str) -> None:
    """Refuses a URL git must not be given as the remote (git_env.url_problem says why)."""
    problem = git_env.url_problem(url)
    if problem:
        without = endpoint.git_url_shown(url)
        # A URL that holds credentials is named only in its shown form: as the fix when nothing
        # but them is left out, else (a token in its path) as the one named.
        usable = endpoint.HIDDEN not in without and git_env.url_problem(without) is None
        shown = f" {quoting.inline(without[:80])}" if without == url or not usable else ""
        if without != url and usable:
            fix = f"give {quoting.inline(without)} and let a credential helper of your git configuration supply the rest (`git help gitcredentials`)"
        elif git_env.holds_token(url):
            fix = "give the URL without the token and let a credential helper of your git configuration supply it (`git help gitcredentials`)"
        else:
            fix = "give an https://, ssh:// or file:// URL, user@host:path, or an absolute path"
        raise InvalidSetting(name, f"{name}{shown} {problem}", fix)


def url_unrecorded_warning(config: Config) -> str | None:
    """What a project configured before `git.url` existed is told: its pushes follow whatever the
    repository's git configuration names, which nobody approved."""
    if not config.git_layer or config.url is not None:
        return None
    return (
        f"warning: git.url is not recorded in {CONFIG_NAME}: savepoints go to whatever URL remote {quoting.inline(config.remote)} "
        'has in the repository\'s git configuration at each push; add `url = "<that URL>"` under [git], then run '
        "`precompact trust` (or `precompact init --force`, which records it)"
    )


def is_loopback_url(url: str) -> bool:
    host = urllib.parse.urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_cluster_url(url: str, allow_insecure_http: bool) -> None:
    """http:// only to this machine: anyone on the path of plain http could answer in the
    cluster's place (the verifier would catch a forged record, but not a withheld one)."""
    try:
        parts = urllib.parse.urlsplit(url)
        _ = parts.port  # raises on a port that is not one, as httpx would refuse it
        host = parts.hostname
    except ValueError:  # that, or an unclosed IPv6 bracket
        host = None
    if not url.startswith(("http://", "https://")) or not host:
        shown = "" if endpoint.shown(url) == endpoint.NO_HOST else f" {endpoint.shown(url)}"
        raise InvalidSetting(
            "chain.cluster",
            f"chain.cluster{shown} is not an http(s) URL with a host and a valid port",
            f"set e.g. {DEFAULT_CLUSTER} or https://api.devnet.solana.com",
        )
    if url.startswith("http://") and not is_loopback_url(url) and not allow_insecure_http:
        raise InvalidSetting(
            "chain.cluster",
            f"chain.cluster {endpoint.shown(url)} is plain http to another host",
            "use https://, or set chain.allow_insecure_http = true to accept it (warned on every run)",
        )


def insecure_cluster_warning(config: Config) -> str | None:
    if not config.insecure_cluster:
        return None
    return f"warning: chain.cluster {endpoint.shown(config.cluster)} is plain http to another host (chain.allow_insecure_http): anyone on the path can withhold or replay what the cluster answers"


class _Reader:
    def __init__(self, raw: dict):
        self.raw = raw

    def _get(self, section, key, default):
        table = self.raw if section is None else self.raw.get(section, {})
        if not isinstance(table, dict):
            raise InvalidSetting(
                f"[{section}]", f"[{section}] must be a table", f"write its settings under [{section}]"
            )
        if key not in table:
            if default is _REQUIRED:
                raise InvalidSetting(_name(section, key), f"{_name(section, key)} is missing", "set it")
            return default
        return table[key]

    def string(self, section, key, default=None):
        value = self._get(section, key, _REQUIRED if default is None else default)
        if not isinstance(value, str):
            raise InvalidSetting(
                _name(section, key), f"{_name(section, key)} must be a string, got {value!r}", "put the value in quotes"
            )
        return value

    def integer(self, section, key, default, bounds: tuple[int, int | None], unit: str):
        """An integer in `bounds` (the least and the most it may be, None: no most) of `unit`s."""
        value = self._get(section, key, default)
        low, high = bounds
        if isinstance(value, int) and not isinstance(value, bool) and low <= value <= (value if high is None else high):
            return value
        allowed = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise InvalidSetting(
            _name(section, key),
            f"{_name(section, key)} must be a whole number of {unit}, {allowed}, got {value!r}",
            f"set e.g. {key} = {default}" + ("" if section is None else f" under [{section}]"),
        )

    def boolean(self, section, key, default):
        value = self._get(section, key, default)
        if not isinstance(value, bool):
            raise InvalidSetting(
                _name(section, key),
                f"{_name(section, key)} must be true or false, got {value!r}",
                f"set {key} = true or {key} = false, without quotes",
            )
        return value

    def strings(self, section, key, default):
        value = self._get(section, key, default)
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise InvalidSetting(
                _name(section, key),
                f"{_name(section, key)} must be a list of strings",
                f'write it as {key} = ["…", "…"]',
            )
        return value

    def table(self, section, key):
        value = self._get(section, key, {})
        if not isinstance(value, dict):
            raise InvalidSetting(
                f"[{section}.{key}]",
                f"[{section}.{key}] must be a table",
                f"write its settings under [{section}.{key}]",
            )
        return value


_REQUIRED = object()


def _name(section, key) -> str:
    return key if section is None else f"{section}.{key}"


def project_path(root: Path, value: str) -> Path:
    """A path setting of root's configuration: relative ones are relative to the project."""
    path = Path(value).expanduser()
    return path if path.is_absolute() else root / path


def _default_program_id() -> str:
    return json.loads(IDL_FILE.read_bytes())["address"]


def is_pubkey(text: str) -> bool:
    """Whether `text` is base58 for exactly 32 bytes (checked without the Solana stack)."""
    if not text or any(c not in _BASE58 for c in text):
        return False
    number = 0
    for c in text:
        number = number * 58 + _BASE58.index(c)
    leading_zeros = len(text) - len(text.lstrip("1"))
    return leading_zeros + (number.bit_length() + 7) // 8 == 32


def render(values: dict) -> str:
    """TOML for a new configuration; `values` holds the keys `init` asks for."""
    q = _toml_string
    lines = [
        "# precompact configuration, written by `precompact init`. Environment variables",
        "# PRECOMPACT_INSTANCE, _REPO, _REMOTE, _BRANCH, _CLUSTER, _KEYPAIR, _PROGRAM_ID, _AUTHORITY, _IDENTITY override it.",
        AGENT_OVERRIDES_NOTE,
        f"instance = {q(values['instance'])}",
        "",
        "[git]",
        f"repository = {q(values.get('repository', '.'))}",
        f"remote = {q(values.get('remote', DEFAULT_REMOTE))}",
        f"url = {q(values['url'])}  # the one URL savepoints are pushed to and fetched from"
        if values.get("url")
        else '# url = "<URL>"  # the one URL savepoints are pushed to (none: the remote\'s URL in the repository)',
        f"branch = {q(values.get('branch', DEFAULT_BRANCH))}",
        "",
        "[chain]",
        f"cluster = {q(values.get('cluster', DEFAULT_CLUSTER))}"
        if values.get("chain", True)
        else '# cluster = "<URL>"  # Layer 3 is off: a cluster here, with [layers] chain = true, turns it on',
        f"keypair = {q(values.get('keypair', DEFAULT_KEYPAIR))}",
        f"program_id = {q(values.get('program_id', _default_program_id()))}",
        "",
        '# authority = "<public key>"  # read records signed by this key (default: the keypair\'s)',
        "# allow_insecure_http = false  # plain http:// is accepted only for this machine's addresses",
        "",
        "[encryption]",
        "# Layer 2 encrypts savepoints (age) to these public keys: age1… or ssh-ed25519 (teammates' too).",
        "# recipients = [] keeps them in clear text on the remote.",
        "recipients = [" + ", ".join(q(r) for r in values.get("recipients", [])) + "]",
        f"identity = {q(values['identity'])}"
        if values.get("identity")
        else '# identity = "<path>"  # the age identity that reads them (default: beside the keypair)',
        "",
        "[layers]",
        "git = true",
        "chain = true"
        if values.get("chain", True)
        else "chain = false  # true: every savepoint not yet on chain.cluster is anchored there, in order",
        "",
        "[snapshot]",
        f"session_state = {q(values.get('session_state', 'session_current.json'))}",
        "include = []",
        "exclude = [" + ", ".join(q(p) for p in DEFAULT_EXCLUDE) + "]",
        f"context_window = {DEFAULT_CONTEXT_WINDOW}  # tokens, for a model precompact does not know",
        "",
        "[hooks]",
        "# SessionStart sources that get the restore brief: " + ", ".join(SESSION_START_SOURCES),
        "session_start_sources = [" + ", ".join(q(s) for s in DEFAULT_SESSION_START_SOURCES) + "]",
        '# What PreCompact tells Claude Code\'s summariser ({savepoint} names the savepoint; "" for nothing)',
        '# compact_note = "..."',
        "# Archive each session when it ends (one savepoint, so one transaction, per session)",
        "session_end = true",
        "# Characters a compacted session is given in all: the brief, then what the summary left out",
        f"brief_budget = {DEFAULT_BRIEF_BUDGET}",
        "",
        "[redaction]",
        "enabled = true",
        "",
        "[redaction.patterns]",
        '# name = "regular expression"',
        "",
    ]
    return "\n".join(lines)


def render_kept(tables: dict, values: dict) -> str:
    """TOML for `tables` (a configuration's settings, with those in `values` already set in
    them): `render(values)`, with its comments, when that holds exactly these settings; else
    every setting written out, so that none the user added is lost."""
    template = render(values)
    if tomllib.loads(template) == tables:
        return template
    lines = [
        "# precompact configuration, rewritten by `precompact init --force`, which changed only the",
        "# settings its command line named. Environment variables PRECOMPACT_INSTANCE, _REPO,",
        "# _REMOTE, _BRANCH, _CLUSTER, _KEYPAIR, _PROGRAM_ID, _AUTHORITY, _IDENTITY override it.",
        AGENT_OVERRIDES_NOTE,
    ]
    _render_table(lines, (), tables)
    return "\n".join(lines) + "\n"


def with_recipients(content: bytes, recipients: list[str]) -> bytes:
    """The configuration `content` with encryption.recipients set to `recipients`: its one
    `recipients = [...]` line replaced (every comment kept) when that says it, else the whole
    file written out again."""
    tables = tomllib.loads(content.decode("utf-8"))
    encryption = tables.setdefault("encryption", {})
    encryption["recipients"] = recipients
    line = "recipients = [" + ", ".join(_toml_string(r) for r in recipients) + "]"
    text, count = re.subn(r"(?m)^recipients = \[[^\n]*\]$", lambda _: line, content.decode("utf-8"))
    if count == 1 and tomllib.loads(text) == tables:
        return text.encode("utf-8")
    lines = ["# precompact configuration (encryption.recipients set by `precompact key import`)."]
    _render_table(lines, (), tables)
    return ("\n".join(lines) + "\n").encode("utf-8")


def _render_table(lines: list[str], name: tuple[str, ...], table: dict) -> None:
    if name:
        lines += ["", "[" + ".".join(_toml_key(part) for part in name) + "]"]
    for key, value in table.items():
        if not isinstance(value, dict):
            lines.append(f"{_toml_key(key)} = {_toml_value(value)}")
    for key, value in table.items():
        if isinstance(value, dict):
            _render_table(lines, (*name, key), value)


def _toml_key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else _toml_string(key)


def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)  # TOML spells numbers as Python does, inf and nan included
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in value.items()) + "}"
    return value.isoformat()  # type: ignore[attr-defined]  # TOML's dates and times


def _toml_string(value: str) -> str:
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    escaped = "".join(c if c >= " " and c != "\x7f" else f"\\u{ord(c):04x}" for c in escaped)
    return f'"{escaped}"'
