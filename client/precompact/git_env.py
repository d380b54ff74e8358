"""How precompact runs git. Every git process it starts, through GitPython (Layer 2, see
gitstore.open_repository) or its own subprocess (the snapshot's git state, the logs/ check),
gets the environment and the overrides built here, so a repository's configuration cannot make
precompact run code. (No GitPython here: the hook imports this module.)

The overrides, on every command line (`-c` beats every configuration file):
- `core.hooksPath` is /dev/null: none of the repository's hooks can run (a remote runs its own
  hooks on its side, as a server would);
- `core.fsmonitor` off: the repository cannot name a program for `git status` to start;
- `commit.gpgSign` off: `commit-tree` would run `gpg.program`, which the repository names;
- `safe.bareRepository=explicit`: a bare repository committed inside a project is never found
  by directory search (precompact names its own repository explicitly);
- `protocol.ext.allow=never`: no remote URL of the form `ext::<command>`.
`hash-object --no-filters` (gitstore) keeps `.gitattributes` filters away from what is hashed.

The environment is fixed: the variables below, taken from precompact's own environment, plus
what precompact sets (GIT_DIR, a private index, an identity, no terminal prompts, no optional
locks so that `git status` never rewrites the user's index); no other
GIT_* variable passes. Kept on purpose, so pushing to a real remote works as it does for the
user: HOME (the user's ~/.gitconfig with its credential helpers, `core.sshCommand` and
`url.<base>.insteadOf`, and ~/.ssh), PATH (git, ssh and credential helpers), the ssh agent's
socket, the desktop session bus (keyring credential helpers), proxies and CA bundles. The
repository's own configuration (.git/config, which the user's clone wrote) still applies: the
only repository precompact uses is the project's own, or one the user named with
`precompact trust --repo`.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

KEPT = (
    "PATH", "HOME", "USER", "LOGNAME", "TMPDIR", "XDG_CONFIG_HOME", "XDG_RUNTIME_DIR", "SSH_AUTH_SOCK", "DBUS_SESSION_BUS_ADDRESS",
    "http_proxy", "https_proxy", "no_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "SSL_CERT_FILE", "SSL_CERT_DIR",
)  # fmt: skip
OVERRIDES = (
    "core.hooksPath=" + os.devnull,
    "core.fsmonitor=false",
    "commit.gpgSign=false",
    "safe.bareRepository=explicit",
    "protocol.ext.allow=never",
)
FIXED = {"LC_ALL": "C", "LANGUAGE": "C", "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0"}


def environment(**ours: str) -> dict[str, str]:
    """The whole environment of a git process: the kept variables, the fixed ones, `ours`."""
    return {**{k: os.environ[k] for k in KEPT if k in os.environ}, **FIXED, **ours}


def argv(*args: str, executable: str = "git") -> list[str]:
    """A git command line with the overrides."""
    overrides = [option for pair in OVERRIDES for option in ("-c", pair)]
    return [executable, *overrides, *args]


def run(cwd: Path, *args: str, timeout: float) -> subprocess.CompletedProcess:
    """`git args...` in `cwd` (found by git's own search from there), isolated."""
    return subprocess.run(
        argv(*args),
        cwd=cwd,
        env=environment(),
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        check=False,
    )
