"""What `precompact init` is asked for, as the command line gives it to ops/project_init.py: a
module of its own, so that loading a configuration (settings.py, on every hook event) does not
build it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class InitChoices:
    """What `precompact init` is asked for: the configuration it writes (Layer 3 on `cluster`,
    off when None; precompact's own signing key for the instance unless `keypair` names one) and
    what it creates or does beside it."""

    instance: str
    repository: str
    remote: str
    # The URL savepoints are pushed to; None: the remote's URL as the repository gives it now.
    url: str | None
    branch: str
    cluster: str | None
    keypair: str | None
    program_id: str | None
    identity: str | None
    recipients: tuple[str, ...]
    encrypt: bool
    airdrop: bool
    force: bool
    say_chain_off: bool  # whether to say that Layer 3 is off, when it is
    # With --force over an approved configuration: its settings (approved_tables), of which only
    # those `named` on the command line (option names: "instance", "repo", "chain", ...) change.
    kept: dict | None = None
    named: frozenset[str] = frozenset()
