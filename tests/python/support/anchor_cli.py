"""The stock Anchor CLI at the version of Anchor.toml's toolchain, as scripts/setup installs it
(once per machine, beside the shared cargo target directory)."""

from __future__ import annotations

import os
import socket
import subprocess
import tomllib
from pathlib import Path

from support.localnet import REPO


def anchor_binary() -> Path:
    version = tomllib.loads((REPO / "Anchor.toml").read_text())["toolchain"]["anchor_version"]
    target = Path(os.environ.get("CARGO_TARGET_DIR", Path.home() / ".cache" / "precompact" / "target"))
    binary = target.parent / f"anchor-cli-{version}" / "bin" / "anchor"
    if not binary.exists():
        raise FileNotFoundError(f"{binary} is missing: run scripts/setup to install anchor-cli {version}")
    return binary


def anchor(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """Runs `anchor args…` in `cwd`. `anchor idl fetch` runs the Program Metadata client with npx,
    which npm downloads on its first use."""
    return subprocess.run(
        [str(anchor_binary()), *args], cwd=cwd, capture_output=True, text=True, timeout=300, check=False
    )


def npm_registry_reachable() -> bool:
    """Whether npx can download the Program Metadata client `anchor idl fetch` runs."""
    try:
        socket.create_connection(("registry.npmjs.org", 443), timeout=5).close()
    except OSError:
        return False
    return True
