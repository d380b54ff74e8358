"""An agent's CLI pinned on npm, installed once into a cache outside the clone (shared by every
clone and CI run on this machine) and reused; where it cannot be (no npm, the registry
unreachable), `Unavailable` says why in npm's own words, and the end-to-end tests skip with it."""

from __future__ import annotations

import fcntl
import shutil
import subprocess
from pathlib import Path


class Unavailable(Exception):
    """The CLI cannot be installed here (no npm, or the registry is unreachable)."""


def installed(
    package: str, version: str, prefix: Path, binary: Path, timeout: float, probe_timeout: float = 60
) -> Path:
    """`binary` (under `prefix`) of `package`@`version`, installed by npm into `prefix` unless it
    already runs and names that version; one install at a time per prefix."""
    if runs(binary, version, probe_timeout):
        return binary
    npm = shutil.which("npm")
    if npm is None:
        raise Unavailable("npm is not installed")
    prefix.mkdir(parents=True, exist_ok=True)
    with (prefix / ".install.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if runs(binary, version, probe_timeout):
            return binary
        done = subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--no-save", "--prefix", str(prefix), f"{package}@{version}"],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if done.returncode != 0:
            raise Unavailable(f"npm install {package}@{version} failed: {npm_reason(done.stderr)}")
    if not runs(binary, version, probe_timeout):
        raise Unavailable(f"{binary} does not run after npm install")
    return binary


def runs(binary: Path, version: str, timeout: float) -> bool:
    """Whether `binary --version` runs and names `version`."""
    if not binary.exists():
        return False
    try:
        out = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0 and version in out.stdout


def npm_reason(stderr: str) -> str:
    """npm's own one-line reason ("FetchError: request to ... failed, reason: ..."), or its code."""
    errors = [line.removeprefix("npm error").strip() for line in stderr.splitlines() if line.startswith("npm error")]
    for line in errors:
        if "Error:" in line or "reason:" in line:
            return line
    return next((line for line in errors if line.startswith("code ")), "no reason given")
