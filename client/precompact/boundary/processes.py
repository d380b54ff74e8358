"""The one module that starts child processes (tests/python/test_architecture.py keeps it so).

A project is hostile input (DESIGN.md, trust model), so nothing started here may pick up code
from it:
- Python children run isolated: `-I` (no user site, no PYTHON* variables, and neither the
  working directory nor a script's folder on sys.path), a neutral working directory (`/`), and
  an environment made of the variables below alone. They import precompact from the folder
  this process imported it from, never through a `-m` search that a project's own
  `precompact/` could win.
- git runs only with git_env's command line and environment (git_env.run and gitstore's
  GitPython runner, which builds the same ones), by the absolute path `program_on_path` finds
  (git_env.executable), never by its bare name.
- Other programs (an installed `precompact`) are started by absolute path; the caller picks
  the path (plugin_runtime never picks one from the project).
- The user's browser is the one program looked up rather than named: the standard library's
  lookup (BROWSER, xdg-open, known browsers on PATH) finds it as the user's shell would, since
  only the user starts it (`precompact view`, from that shell; no hook or agent does), and all
  it is given is a file precompact made (never the viewer's secret address).

Standard library only: the hook and the plugin launcher import this before any dependency exists.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import precompact
from precompact.boundary import user_roots

NEUTRAL_DIRECTORY = "/"
# What a Python child of precompact's needs from the environment: where the user's files and
# programs are, the network settings the layers use, the user's own settings for precompact and
# Claude Code's plugin, and pip's settings of where and how to fetch (for the plugin's
# preparation: user_roots.PIP_HANDED, taken from its tables, which say why), each classified by
# boundary/user_roots (in the modes the agent starts, its `confine` has run on them). Nothing else passes (PYTHON* variables never).
# HOME and the XDG directories are given as boundary/user_roots decides them, spelled out.
PYTHON_KEPT = (
    "PATH", "USER", "LOGNAME", "TMPDIR", "LANG", "LC_ALL", "LC_CTYPE",
    "SSH_AUTH_SOCK", "DBUS_SESSION_BUS_ADDRESS",
    "http_proxy", "https_proxy", "no_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY",
    "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE",
    *user_roots.PIP_HANDED,
)  # fmt: skip
PYTHON_KEPT_PREFIXES = ("PRECOMPACT_", "CLAUDE_")

# More than a served program's answer is (Codex's hooks/list: a few KB a hook): read no further.
ANSWER_LIMIT = 8 << 20

TimeoutExpired = subprocess.TimeoutExpired
CompletedProcess = subprocess.CompletedProcess


def python_environment(environ: Mapping[str, str] | None = None, **ours: str) -> dict[str, str]:
    """The environment of a Python child: the kept variables of `environ` (this process's by
    default), then `ours`."""
    source = os.environ if environ is None else environ
    kept = {k: v for k, v in source.items() if k in PYTHON_KEPT or k.startswith(PYTHON_KEPT_PREFIXES)}
    return {**kept, **user_roots.for_children(source), **ours}


def isolated_python(interpreter: str | Path = sys.executable) -> list[str]:
    """The start of an isolated Python command line."""
    return [str(interpreter), "-I"]


def precompact_module(module: str, *args: str) -> list[str]:
    """An isolated command line running `module`'s main() from this process's precompact."""
    package_parent = str(Path(precompact.__file__).resolve().parent.parent)
    code = f"import sys; sys.path.insert(0, {package_parent!r}); from {module} import main; main()"
    return [*isolated_python(), "-c", code, *args]


def run_python(
    command: Sequence[str], *, environ: Mapping[str, str] | None = None, timeout: float
) -> subprocess.CompletedProcess[str]:
    """Runs an isolated Python command line (from isolated_python) in the neutral directory,
    output captured as text."""
    _require_isolated(command)
    return _run_as_group(
        list(command), cwd=NEUTRAL_DIRECTORY, env=python_environment(environ), input=None, text=True, timeout=timeout
    )


def spawn_python(command: Sequence[str], *, log: int, environ: Mapping[str, str] | None = None, **ours: str) -> int:
    """Starts an isolated Python command line detached (its own session, output to the `log`
    descriptor) in the neutral directory; returns its pid."""
    _require_isolated(command)
    process = subprocess.Popen(
        list(command),
        cwd=NEUTRAL_DIRECTORY,
        env=python_environment(environ, **ours),
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=log,
        start_new_session=True,
        close_fds=True,
    )
    return process.pid


def run_program(
    command: Sequence[str],
    *,
    cwd: Path | None,
    env: Mapping[str, str],
    input: bytes | None = None,
    timeout: float | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """Runs a program named by absolute path, output captured as bytes. With a `timeout`, ended
    with everything it started when the time is up (`_run_as_group`); without one (the plugin's
    launcher running the hook for the agent), in the agent's process group, which the agent's own
    cancel reaches."""
    _require_absolute(command[0])
    if timeout is not None:
        return _run_as_group(list(command), cwd=cwd, env=dict(env), input=input, text=False, timeout=timeout)
    return subprocess.run(list(command), cwd=cwd, env=dict(env), input=input, capture_output=True, check=False)


def ask_program(
    command: Sequence[str],
    *,
    cwd: Path | None,
    env: Mapping[str, str],
    input: bytes,
    answered: Callable[[bytes], bool],
    timeout: float,
) -> bytes:
    """What a program named by absolute path that serves requests on its stdin (Codex's
    app-server) wrote to stdout once `answered(stdout so far)` says the answer is in, `input`
    written to it and its stdin kept open meanwhile (it ends at its stdin's end, unanswered);
    then it is ended with everything it started. TimeoutExpired when no answer comes in
    `timeout`."""
    import selectors  # here: only doctor asks a program

    _require_absolute(command[0])
    with subprocess.Popen(
        list(command),
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    ) as process:
        assert process.stdin is not None and process.stdout is not None
        try:
            process.stdin.write(input)
            process.stdin.flush()
            said = b""
            deadline = time.monotonic() + timeout
            with selectors.DefaultSelector() as selector:
                selector.register(process.stdout, selectors.EVENT_READ)
                while not answered(said):
                    left = deadline - time.monotonic()
                    if left <= 0 or not selector.select(left):
                        raise subprocess.TimeoutExpired(process.args, timeout)
                    data = os.read(process.stdout.fileno(), 1 << 16)
                    if not data or len(said) > ANSWER_LIMIT:  # it ended without the answer, or is no server
                        break
                    said += data
            return said
        finally:
            _kill_group(process)


def replace_with(command: Sequence[str], env: Mapping[str, str]) -> None:
    """Replaces this process with a program named by absolute path."""
    _require_absolute(command[0])
    os.execve(command[0], list(command), dict(env))


def open_in_browser(page: Path) -> None:
    """Opens the local file `page` in the user's browser, where one exists; a machine without
    one gets nothing (the caller has printed the address). A file, never an address: the
    browser's command line, which every local user can read, names only the file. Returns at
    once: a browser command that stays until its window closes (as one BROWSER names may) must
    not hold up the server the page leads to."""
    import webbrowser  # here: every hook imports this module, and webbrowser costs it about 10 ms

    threading.Thread(target=webbrowser.open, args=(page.as_uri(),), daemon=True).start()


def run_git(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float,
    binary: bool = False,
    silence: float | None = None,
) -> subprocess.CompletedProcess:
    """Runs a git command line git_env built (git_env.run and git_env.transport are the only
    callers); on its timeout, git and every process it started (ssh, a push's pack-objects) are
    ended (`_run_as_group`). With `silence` (a transfer that shows its progress), `timeout`
    bounds the whole run and `silence` each stretch in which git writes nothing: a push still
    sending is let go on, a remote that never answers is given up on as soon."""
    return _run_as_group(
        list(argv), cwd=cwd, env=dict(env), input=None, text=not binary, timeout=timeout, silence=silence
    )


def _read_while_it_speaks(process: subprocess.Popen, silence: float, timeout: float) -> tuple[bytes, bytes]:
    """`process`'s stdout and stderr, read until both end and it exits; TimeoutExpired when it
    writes nothing for `silence` seconds, or runs past `timeout`."""
    import selectors  # here: only a transfer needs it

    assert process.stdout is not None and process.stderr is not None
    read: dict[int, list[bytes]] = {process.stdout.fileno(): [], process.stderr.fileno(): []}
    began = last = time.monotonic()

    def left() -> float:
        now = time.monotonic()
        if now - began >= timeout:
            raise subprocess.TimeoutExpired(process.args, timeout)
        if now - last >= silence:
            raise subprocess.TimeoutExpired(process.args, silence)
        return min(began + timeout, last + silence) - now

    with selectors.DefaultSelector() as selector:
        for descriptor in read:
            selector.register(descriptor, selectors.EVENT_READ)
        while selector.get_map():
            for key, _ in selector.select(left()):
                data = os.read(key.fd, 1 << 16)
                if data:
                    read[key.fd].append(data)
                    last = time.monotonic()
                else:
                    selector.unregister(key.fd)
    while process.poll() is None:
        time.sleep(min(0.05, left()))
    return b"".join(read[process.stdout.fileno()]), b"".join(read[process.stderr.fileno()])


def _run_as_group(
    command: list[str],
    *,
    cwd: Path | str | None,
    env: dict[str, str],
    input: bytes | None,
    text: bool,
    timeout: float,
    silence: float | None = None,
) -> subprocess.CompletedProcess:
    """Runs `command` in a session of its own, output captured; when `timeout` passes (or this
    process is interrupted while it waits), kills its whole process group, then waits for it, and
    raises TimeoutExpired. subprocess.run's timeout kills the child alone: what it started (git's
    ssh and pack-objects, pip's build backends) would live on, unowned, and a push it was sending
    would land after precompact recorded it failed. Its own session, not only its own group: a
    group in the background that reads the terminal (ssh asking for a passphrase) would stop
    until the timeout; without a terminal it fails at once, as GIT_TERMINAL_PROMPT=0 asks.
    `silence`: run_git's (no `input` then)."""
    with subprocess.Popen(
        command,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL if input is None else subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=text and silence is None,
        start_new_session=True,
    ) as process:
        try:
            if silence is None:
                stdout, stderr = process.communicate(input, timeout=timeout)
            else:
                stdout, stderr = _read_while_it_speaks(process, silence, timeout)
        except BaseException:
            _kill_group(process)
            raise
    if silence is not None and text:  # as text mode reads it (universal newlines: a progress line's \r ends a line)
        stdout, stderr = (
            data.decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n") for data in (stdout, stderr)
        )
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)


def _kill_group(process: subprocess.Popen) -> None:
    """Kills every process of `process`'s group (its id is the group's: `start_new_session`),
    then reaps `process`. The group's id cannot be taken by another process while any member
    lives, so the signal reaches only what `process` started."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:  # every member has exited already
        pass
    process.wait()


def program_on_path(name: str, environ: Mapping[str, str] = os.environ) -> str | None:
    """The absolute path of the program `name` as the first of PATH's absolute entries holding an
    executable file of that name gives it; None when none does. A relative entry (an empty one is
    the working directory) is never looked in: a command run in a project would find the
    project's own. (Entries in the project are dropped from PATH by `user_roots.confine`, which
    every entry point runs first.)"""
    for entry in environ.get("PATH", "").split(os.pathsep):
        if not os.path.isabs(entry):
            continue
        candidate = os.path.join(entry, name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def _require_isolated(command: Sequence[str]) -> None:
    if len(command) < 2 or command[1] != "-I":
        raise ValueError(f"a Python child runs isolated (-I): {list(command)!r}")


def _require_absolute(program: str) -> None:
    if not os.path.isabs(program):
        raise ValueError(f"a program is started by absolute path, never looked up: {program!r}")
