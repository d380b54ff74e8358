"""Running precompact as Claude Code and users do: the installed command (its hook mode
included) as a process, the click CLI in-process, and waiting for the background worker."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from click.testing import CliRunner, Result
from solders.keypair import Keypair

from precompact import savepoint_log
from precompact.cli import main

PRECOMPACT = str(Path(sys.executable).with_name("precompact"))
INSTANCE = "Gabriel #215"


def run_git(cwd: Path, *args: str) -> str:
    """Runs git in `cwd`, failing the test on error."""
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def hook(
    stdin: dict | bytes, cwd: Path | None = None, timeout: float = 120, env: dict | None = None
) -> subprocess.CompletedProcess:
    """`precompact hook` as Claude Code runs it: the event's JSON on stdin, output as bytes."""
    data = stdin if isinstance(stdin, bytes) else json.dumps(stdin).encode()
    return subprocess.run(
        [PRECOMPACT, "hook"], input=data, capture_output=True, cwd=cwd, timeout=timeout, env=env, check=False
    )


def wait_until(predicate: Callable[[], bool], timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def landed(logs: Path, instance: str, count: int) -> bool:
    """Exactly `count` savepoints of `instance`, every one pushed and confirmed on chain."""
    states = savepoint_log.savepoints(logs, instance)
    return len(states) == count and all(
        (s.layer_2, s.layer_3) == (savepoint_log.Layer2.PUSHED, savepoint_log.Layer3.CONFIRMED) for s in states
    )


def invoke(*args: str, env: dict | None = None) -> Result:
    return CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)


def initialized(project: Path, monkeypatch, cluster: str) -> Keypair:
    monkeypatch.chdir(project)
    keypair_path = project.parent / "id.json"
    result = invoke("init", "--yes", "--instance", INSTANCE, "--cluster", cluster, "--keypair", str(keypair_path))
    assert result.exit_code == 0, result.output
    assert stat.S_IMODE(keypair_path.stat().st_mode) == 0o600
    return Keypair.from_bytes(bytes(json.loads(keypair_path.read_text())))


def initialized_and_funded(project: Path, monkeypatch, localnet_url: str) -> Keypair:
    """`precompact init` against the localnet, with the authority funded to pay for its record."""
    from support.projects import fund

    authority = initialized(project, monkeypatch, localnet_url)
    fund(localnet_url, authority)
    return authority


def statuses(project: Path) -> list[dict]:
    result = invoke("status", "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.output)["savepoints"]
