"""Running precompact as Claude Code and users do: the installed command (its hook mode
included) as a process, the click CLI in-process, and waiting for the background worker."""

from __future__ import annotations

import contextlib
import glob
import json
import os
import pwd
import re
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from click.testing import CliRunner, Result
from solders.keypair import Keypair

from precompact.edges.cli import main
from precompact.local import savepoint_log

PRECOMPACT = str(Path(sys.executable).with_name("precompact"))
# How `precompact install` has the agents start it: the Python its script's `#!` line names,
# isolated (-I), running that script by absolute path.
INSTALLED_PYTHON = Path(PRECOMPACT).read_text().splitlines()[0].removeprefix("#!")


def installed_command(*args: str) -> list[str]:
    """The command line `precompact install` writes for `precompact ARGS`."""
    return [INSTALLED_PYTHON, "-I", str(Path(PRECOMPACT).resolve()), *args]


def another_python() -> Path | None:
    """A real Python of another minor version than this one on this machine (pyenv's, the
    system's): what a venv's python3 link runs once an OS upgrade moved the system's."""
    here = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    home = pwd.getpwuid(os.getuid()).pw_dir  # the tests' HOME is a throwaway one
    found = [*glob.glob(f"{home}/.pyenv/versions/3.*/bin/python3"), *glob.glob("/usr/bin/python3.*")]
    for candidate in sorted(found):
        name = os.path.basename(os.path.realpath(candidate))
        if re.fullmatch(r"python3\.\d+", name) and name != here and os.access(candidate, os.X_OK):
            return Path(candidate)
    return None


INSTANCE = "Gabriel #215"
# Generous for a loaded machine: a command that outlives it is stuck, not slow.
RUN_SECONDS = 120


def run_git(cwd: Path, *args: str) -> str:
    """Runs git in `cwd`, failing the test on error."""
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def precompact(
    cwd: Path,
    *args: str,
    env: dict[str, str] | None = None,
    stdin: str | bytes | dict | None = None,
    cluster: str | None = None,
    home: Path | None = None,
    text: bool = True,
    timeout: float = RUN_SECONDS,
) -> subprocess.CompletedProcess:
    """The installed `precompact` as a user runs it in `cwd`, exit code left to the test: the
    test's environment plus `env`, `cluster` as PRECOMPACT_CLUSTER, `home` as HOME; a dict on
    stdin goes as JSON; output as str, or as bytes when `text` is false."""
    overrides = {
        **(env or {}),
        **({"PRECOMPACT_CLUSTER": cluster} if cluster else {}),
        **({"HOME": str(home)} if home else {}),
    }
    data = json.dumps(stdin) if isinstance(stdin, dict) else (stdin or "")
    if text and isinstance(data, bytes):
        data = data.decode()
    if not text and isinstance(data, str):
        data = data.encode()
    return subprocess.run(
        [PRECOMPACT, *args],
        cwd=cwd,
        input=data,
        env={**os.environ, **overrides},
        capture_output=True,
        text=text,
        timeout=timeout,
        check=False,
    )


def hook(
    stdin: dict | bytes, cwd: Path | None = None, timeout: float = RUN_SECONDS, env: dict | None = None
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


def key_beside(project: Path, name: str = "id.json") -> Path:
    """A key file's path beside the project folder, not in it (a key inside the project is
    refused: docs/security.md), in a folder of this project's own."""
    return project.parent / f"{project.name}-keys" / name


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


def processes_under(folder: Path) -> list[int]:
    """The pids of this user's live processes, other than this one, with an argument inside
    `folder`: a background worker (its project root), a plugin's preparer (its plugin folder)."""
    inside = str(folder.resolve()).encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if entry.stat().st_uid != os.getuid():
                continue
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:  # exited meanwhile
            continue
        if any(arg == inside or arg.startswith(inside + b"/") for arg in argv):
            found.append(int(entry.name))
    return found


def stop_processes_under(folder: Path, grace: float = 5.0) -> list[int]:
    """Stops (SIGTERM, then SIGKILL after `grace` seconds) the processes `processes_under` finds,
    by pid; returns them."""
    found = processes_under(folder)
    for pid in found:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while (left := [pid for pid in found if pid in processes_under(folder)]) and time.monotonic() < deadline:
        time.sleep(0.05)
    for pid in left:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return found


def worker_finished(project: Path) -> bool:
    """Whether the worker a hook started has indexed the savepoint for recall (it does whether the
    layers are on or off) and no worker of the project is running. On the processes, not on the
    worker's lock: a worker takes its lock only once Python has started and imported, and lets
    go of it between rounds, so the lock was found free while a just-spawned worker was still to
    sign over what the test did next; and a probe of the lock makes a worker that tries it at
    that moment leave its work undone."""
    import sqlite3

    index = project / "logs" / "precompact-recall.sqlite"
    if not index.exists():
        return False
    try:
        if sqlite3.connect(index).execute("SELECT count(*) FROM savepoints").fetchone()[0] == 0:
            return False
    except sqlite3.OperationalError:  # the worker has created the file, not yet its table
        return False
    return not workers_of(project)


def workers_of(project: Path) -> list[int]:
    """The pids of the live `precompact.edges.worker` processes for the project at `project`
    (ops/background.py passes the resolved root as its one argument; an exited one's cmdline
    reads empty)."""
    root = str(project.resolve()).encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:  # exited meanwhile
            continue
        if root in argv and any(b"precompact.edges.worker" in arg for arg in argv):
            found.append(int(entry.name))
    return found
