"""What the user reviews before `precompact trust` approves a configuration: every setting
that changes where data goes or what is kept of it, quoted so that a value cannot hide itself or
another from a terminal, and what changed since the last approval."""

from __future__ import annotations

import hashlib
from pathlib import Path

from precompact.boundary import git_env, processes, quoting
from precompact.config import endpoint
from precompact.config import settings as configuration
from precompact.config.settings import Config

# Every setting of a configuration, as `trust` shows it: where data goes (remote, cluster,
# recipients), what is kept of it (redaction, includes, session state), and what is said to the
# model (the compact note). Config field -> (name in the file, what it decides).
SHOWN = {
    "instance": ("instance", "whose savepoints these are"),
    "repository": ("git.repository", "the repository the savepoint branch is committed in"),
    "remote": ("git.remote", "the remote savepoints are pushed to"),
    "url": ("git.url", "the one URL they are pushed to and fetched from"),
    "branch": ("git.branch", "the branch they are committed on"),
    "git_layer": ("layers.git", "push savepoints to the remote"),
    "chain_layer": ("layers.chain", "post their hashes on chain"),
    "cluster": ("chain.cluster", "the Solana RPC endpoint"),
    "insecure_cluster": ("chain.allow_insecure_http", "plain http to another host in use"),
    "keypair": ("chain.keypair", "the key that signs savepoints"),
    "program_id": ("chain.program_id", "the program that records them"),
    "authority": (
        "chain.authority",
        "the key whose records and signed savepoints count as yours (none: the keypair's)",
    ),
    "recipients": ("encryption.recipients", "who can read the pushed copies (none: clear text)"),
    "identity": ("encryption.identity", "the age identity that reads them back"),
    "redaction": ("redaction.enabled", "secrets are removed before saving"),
    "redaction_patterns": ("redaction.patterns", "extra patterns removed"),
    "compact_note": ("hooks.compact_note", "what PreCompact tells Claude Code's summariser"),
    "session_start_sources": ("hooks.session_start_sources", "when a session gets the brief"),
    "session_end": ("hooks.session_end", "each session is saved when it ends"),
    "brief_budget": ("hooks.brief_budget", "the characters a compacted session is given back, both parts together"),
    "session_state": ("snapshot.session_state", "the session-state file saved"),
    "include": ("snapshot.include", "files always saved"),
    "exclude": ("snapshot.exclude", "files never saved"),
    "context_window": ("snapshot.context_window", "tokens, for a model precompact does not know"),
}


def settings(config: Config) -> dict[str, str]:
    """Every setting of `config` as the user reads it (strings quoted and escaped, so that a value
    cannot hide itself or another one from a terminal), with the one URL savepoints are pushed to
    after the remote's name: `git.url`, or in a configuration that does not record it, the URL the
    repository's git configuration gives the remote now, each without its credentials
    (`git_url`). The RPC endpoint is shown without the
    parts that hold a hosted endpoint's API key, with a digest that still shows their change
    (`endpoint.hidden_digest`)."""
    shown = {}
    for attribute, (name, _) in SHOWN.items():
        if attribute == "url":
            if config.url is None:
                shown["git.remote URL"] = remote_url(config)
            else:
                shown[name] = git_url(config.url)
        elif attribute == "cluster":
            hidden = endpoint.hidden_digest(config.cluster)
            digest = f" (its path, query and credentials not shown; sha256 {hidden})" if hidden else ""
            shown[name] = quoting.inline(endpoint.shown(config.cluster)) + digest
        elif attribute in ("keypair", "identity"):
            shown[name] = _key_file(config, getattr(config, attribute))
        else:
            shown[name] = _shown(getattr(config, attribute))
    return shown


def _key_file(config: Config, path: Path | None) -> str:
    """A key file's setting, with the file it resolves to when a link leads elsewhere, and its
    refusal when that is inside the project (configuration.check_keys)."""
    if path is None:
        return _shown(path)
    inside = configuration.key_inside_project(path, [config.root])
    if inside is not None:
        where = "" if inside == path else f"resolves to {_shown(inside)}, "
        return f"{_shown(path)} ({where}inside the project: refused)"
    try:
        resolved = path.resolve()
    except (OSError, RuntimeError):
        resolved = path
    return _shown(path) if resolved == path else f"{_shown(path)} (resolves to {_shown(resolved)})"


def remote_url(config: Config) -> str:
    """The URL savepoints are pushed to when `git.url` is not recorded (git_env.remote_url:
    `git.remote`'s first pushurl, else its first url, with no rewriting of the project's), and
    that it is not recorded."""
    try:
        url = git_env.remote_url(config.repository, config.remote)
    except (OSError, processes.TimeoutExpired) as e:
        return f"(git cannot tell: {quoting.inline(str(e))})"
    if url is None:
        return f"(no remote {quoting.inline(config.remote)} in {quoting.inline(str(config.repository))})"
    return f"{git_url(url)} (read from the repository at each push: git.url is not recorded)"


def git_url(url: str) -> str:
    """A git URL as `trust` shows it: without its credentials, query or fragment
    (`endpoint.git_url_shown`), with a digest of the whole URL when they are left out, so a
    change to them still shows as a change."""
    shown = endpoint.git_url_shown(url)
    if shown == url:
        return quoting.inline(url)
    digest = hashlib.sha256(url.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"{quoting.inline(shown)} (its credentials, query or fragment not shown; sha256 {digest})"


def changes(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """What `trust` shows: every setting when nothing was approved before (or the approval kept no
    settings), else each changed one as `- old` / `+ new` lines."""
    meaning = {name: what for name, what in SHOWN.values()} | {"git.remote URL": "the one URL they are pushed to"}
    if not before:
        return [f"  {name} = {value}    # {meaning.get(name, '')}" for name, value in after.items()]
    lines = []
    for name in after.keys() | before.keys():
        if before.get(name) != after.get(name):
            if name in before:
                lines.append(f"- {name} = {before[name]}")
            if name in after:
                lines.append(f"+ {name} = {after[name]}    # {meaning.get(name, '')}")
    return sorted(lines, key=lambda line: (line[2:].split(" = ")[0], line[0] == "+"))


def _shown(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "(none)"
    if isinstance(value, (tuple, list)):
        return "[" + ", ".join(_shown(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{quoting.inline(str(k))}: {_shown(v)}" for k, v in sorted(value.items())) + "}"
    if isinstance(value, int):
        return str(value)
    return quoting.inline(str(value))
