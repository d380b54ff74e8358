"""What the Claude Code plugin's `precompact` (bin/precompact, entered through launcher.py) does
in a project that has a `.precompact.toml`: runs the `precompact` this machine has, or prepares
one in the plugin's data folder on first use.

Standard library only, and nothing but `config`, `config_trust`, `install`, `agent_settings`,
`untrusted_reply` and `plugin_wheel` imported from the package: it runs from the plugin's folder
before any of precompact's dependencies exist. It never writes into that folder (Claude Code's copy, or
a directory marketplace's own clone); what it keeps is under ${CLAUDE_PLUGIN_DATA}.

Which `precompact` runs, in order: one on PATH other than this launcher (pip, pipx, uv tool),
then the virtual environment prepared under ${CLAUDE_PLUGIN_DATA}/venv/<version> from wheels
only: those requirements.hashes.lock pins (every file checked by its hash), fetched by pip as
the user set it up (index, mirror, proxy), and precompact's own, made from the plugin's source.
That environment does not need the plugin's folder once made; Claude Code itself does, for a
marketplace added as a folder (doctor's plugin folder check).
Nothing is ever run from the project: a PATH entry that is relative or inside it is skipped, and
the preparation runs isolated (boundary.processes) outside it.

`plugin-hook` (what hooks/hooks.json runs) exits at once, silent, in a project without a
`.precompact.toml`: the plugin is installed for every project and most do not use precompact, a
line there would be noise the user cannot turn off per project, and PreCompact's output becomes
part of the summariser's prompt, SessionStart's part of the model's context. It also stands down
where precompact's own hooks are in settings.json (`precompact install`), so a compaction is
saved once. While the environment is being prepared a compaction is not lost: its transcript is
copied into the queue and saved as soon as the environment is ready.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import tempfile
import time
import urllib.parse
from collections.abc import Callable
from pathlib import Path

from precompact import __version__
from precompact.boundary import private_file, processes, quoting, terminal, user_roots
from precompact.edges import plugin_wheel, untrusted_reply
from precompact.errors import PrecompactError

# The plugin's options (Claude Code exports them to its hooks) and the variables that override
# the configuration with them: only those a hook keeps (config/settings.AGENT_KEPT_OVERRIDES; an
# instance is a root the agent's environment may not pick, so there is no `instance` option).
OPTION_VARIABLES = {
    "CLAUDE_PLUGIN_OPTION_CLUSTER": "PRECOMPACT_CLUSTER",
    "CLAUDE_PLUGIN_OPTION_KEYPAIR": "PRECOMPACT_KEYPAIR",
}
# What Python reads from the environment, none of which the precompact it starts may get.
PYTHON_VARIABLES = "PYTHON"
QUEUED_EVENTS = ("PreCompact", "PostCompact")
# A preparation that failed is tried again after this long, not at every hook.
RETRY_AFTER_SECONDS = 3600
REPLAY_TIMEOUT_SECONDS = 300
PIP_TIMEOUT_SECONDS = 900
# Wheels the plugin ships of what the index has only as source (construct 2.10.68; wheels/README.md).
VENDORED_WHEELS = "wheels"


class LauncherError(PrecompactError):
    """The launcher cannot run precompact; the message says why and what to do."""


class Launcher:
    def __init__(self, plugin_root: Path, environ: os._Environ[str] | dict[str, str]):
        self.plugin_root = plugin_root.resolve()
        self.environ = dict(environ)

    # -- which precompact --------------------------------------------------------------------

    def installed(self, cwd: Path) -> Path | None:
        """A `precompact` on PATH that is not this launcher, nor in the project at `cwd` (an
        entry that is relative is looked up in the project too)."""
        own = (self.plugin_root / "bin").resolve()
        project = project_root(cwd)
        for directory in self.environ.get("PATH", "").split(os.pathsep):
            if not os.path.isabs(directory):
                continue
            candidate = Path(directory) / "precompact"
            try:
                found = candidate.resolve()
                in_project = project is not None and (
                    Path(directory).resolve().is_relative_to(project) or found.is_relative_to(project)
                )
                if found.parent == own or in_project or not (candidate.is_file() and os.access(candidate, os.X_OK)):
                    continue
            except OSError:
                continue
            return candidate
        return None

    def data(self) -> Path:
        """The plugin's data folder: ${CLAUDE_PLUGIN_DATA} in hooks and the MCP server. Claude Code's
        Bash tool does not set it; there the one precompact data folder Claude Code made is used.
        Either is refused when relative or in the project (boundary/user_roots.CONFINED; Claude
        Code's own under your home is kept), and HOME is confined there: the precompact prepared
        there is what runs, and the agent's environment is the project's."""
        # The detached preparation runs in "/", given the folder its starter checked: no project
        # is there ("/" holds the home: project_root), so only relative values are refused.
        environ = confined(self.environ, Path.cwd())
        for name in ("CLAUDE_PLUGIN_DATA", "CLAUDE_CONFIG_DIR"):
            given = self.environ.get(name)
            if given and not os.path.isabs(environ.get(name, "")):  # refused: unset, or left not known
                raise LauncherError(
                    f"{name} ({given}) is a relative path or a place in the project, whose settings can set it; "
                    "set it to an absolute directory outside every project, or unset it"
                )
        given = environ.get("CLAUDE_PLUGIN_DATA")
        if given:
            return Path(given)
        # HOME as confined: the project's settings cannot point it at a folder of their own.
        try:
            config_dir = Path(user_roots.claude_folder(environ=environ, in_claude_code=True))
        except user_roots.ClaudeFolderUnknown as e:
            raise LauncherError(str(e)) from None
        found = sorted((config_dir / "plugins" / "data").glob("precompact-*"))
        if len(found) != 1:
            raise LauncherError(
                "cannot tell which plugin data folder to use (CLAUDE_PLUGIN_DATA is not set); run this inside a Claude Code session, or install precompact with pipx (see its README)"
            )
        return found[0]

    def venv(self) -> Path:
        return self.data() / "venv" / __version__

    def prepared(self) -> Path | None:
        """The prepared environment's precompact; None until it is ready, and once it cannot start
        (`broken`), so that it is prepared again."""
        executable = self.venv() / "bin" / "precompact"
        ready = (self.venv() / "ready").is_file() and executable.is_file()
        return executable if ready and self.broken() is None else None

    def broken(self) -> str | None:
        """Why an environment marked ready cannot start, None when it can (or is not ready): the
        Python its precompact's `#!` line names is gone or not executable, as when the system
        python3.X it was made from is upgraded away, or now runs another version of Python (its
        python3 link followed the system's to the next one)."""
        from precompact.config import install

        executable = self.venv() / "bin" / "precompact"
        if not ((self.venv() / "ready").is_file() and executable.is_file()):
            return None
        python = install.interpreter_of(executable)
        if python is None or not (python.is_file() and os.access(python, os.X_OK)):
            return f"precompact's Python environment in {self.venv()} cannot start (its Python {python or '(none named)'} is gone)"
        other = install.other_python(python)
        return f"precompact's Python environment in {self.venv()} cannot start ({other})" if other else None

    def preparing(self) -> str:
        """What a use that prepares the environment says: the first, or one after it broke."""
        broken = self.broken()
        if broken:
            return f"{broken}: preparing it again (about a minute: {self.fetching()})"
        return f"precompact is preparing its Python environment in {self.venv()} (first use, about a minute: {self.fetching()})"

    def precompact(self, cwd: Path) -> Path | None:
        return self.installed(cwd) or self.prepared()

    def environment(self) -> dict[str, str]:
        """The environment precompact runs in: the agent's without any PYTHON* variable (the
        precompact started here runs its script by its own `#!` line, whose Python would read them:
        PYTHONPATH, which the project can set, would put its `precompact/` first), and the
        plugin's options as PRECOMPACT_* overrides (a variable the user set already wins)."""
        env = {name: value for name, value in self.environ.items() if not name.startswith(PYTHON_VARIABLES)}
        for option, variable in OPTION_VARIABLES.items():
            if env.get(option) and not env.get(variable):
                env[variable] = env[option]
        return env

    # -- hooks ---------------------------------------------------------------------------------

    def hook(self, raw: bytes) -> tuple[str, str]:
        """`plugin-hook`: what Claude Code's hook gets on stdout and stderr. Never fails."""
        try:
            payload = json.loads(raw)
        except (ValueError, RecursionError):  # RecursionError: nested deeper than json recurses
            return "", "precompact plugin: the hook's input is not JSON; nothing done"
        if (
            not isinstance(payload, dict)
            or not isinstance(payload.get("cwd"), str)
            or not isinstance(payload.get("hook_event_name"), str)
        ):
            return "", "precompact plugin: the hook's input has no cwd or hook_event_name; nothing done"
        event, cwd = payload["hook_event_name"], Path(payload["cwd"])
        env = self.environment()
        if settings_run_precompact(cwd, event, confined(self.environ, cwd)):
            return "", "precompact plugin: precompact's hooks in settings.json run here; the plugin's stand down"
        command = self.precompact(cwd)
        if command is not None:  # it checks the configuration itself
            if command == self.prepared() and self.queued():
                self.spawn_preparation(cwd)  # replays what was queued before the environment was ready
            done = processes.run_program([str(command), "hook"], input=raw, cwd=cwd if cwd.is_dir() else None, env=env)
            return done.stdout.decode(errors="replace").rstrip("\n"), done.stderr.decode(errors="replace").rstrip("\n")
        state = project_state(cwd, env)
        if state is None:
            return "", ""
        if state != "trusted":  # answered here: precompact's dependencies are not installed yet
            return untrusted_reply.reply(event, state, compaction_stdout_to_model=True)
        return self._first_use(event, payload)

    def _first_use(self, event: str, payload: dict) -> tuple[str, str]:
        failed = self.data() / "prepare-failed"
        if failed.is_file() and time.time() - failed.stat().st_mtime < RETRY_AFTER_SECONDS:
            reason = failed.read_text(errors="replace").strip()
            line = f"precompact could not prepare its Python environment ({reason}); see {self.data() / 'prepare.log'}, or install precompact with pipx (see its README)"
        else:
            line = self.preparing()
            self.spawn_preparation(Path(payload["cwd"]))
        if event in QUEUED_EVENTS:
            self.queue(payload)
            line += (
                "; this compaction's transcript is kept and saved as a savepoint as soon as it is ready"
                if event == "PreCompact"
                else ""
            )
        if event == "PreCompact":
            return line + ".", ""  # plain text: Claude Code hands PreCompact's stdout to the summariser
        return json.dumps({"systemMessage": line + "."}), ""

    # -- the queue -----------------------------------------------------------------------------

    def queue_dir(self) -> Path:
        return self.data() / "queue"

    def queued(self) -> list[Path]:
        try:
            return sorted(p for p in self.queue_dir().iterdir() if (p / "payload.json").is_file())
        except OSError:
            return []

    def queue(self, payload: dict) -> Path:
        """Keeps a hook's input for later, with a copy of the transcript as it is now (the session
        goes on writing to it)."""
        private_file.make_directory(self.queue_dir())
        entry = Path(tempfile.mkdtemp(prefix=f"{time.time():.6f}-", dir=self.queue_dir()))
        transcript = payload.get("transcript_path")
        if isinstance(transcript, str) and payload["hook_event_name"] == "PreCompact":
            try:
                copy = entry / "transcript.jsonl"
                shutil.copyfile(transcript, copy)
                payload = {**payload, "transcript_path": str(copy)}
            except OSError:
                pass  # the savepoint is made without it, and says so
        private_file.create(entry / "payload.json", json.dumps(payload).encode())
        return entry

    # -- preparation ---------------------------------------------------------------------------

    def spawn_preparation(self, cwd: Path) -> None:
        """Prepares the environment (if needed) and replays the queue in a detached process, in
        the agent's environment confined for the project at `cwd` (boundary/user_roots: no CA
        file, temporary directory or PATH entry of the project's reaches pip)."""
        data = self.data()
        data.mkdir(parents=True, exist_ok=True)
        environ = confined(self.environ, cwd)
        with open(data / "prepare.log", "ab") as log:
            processes.spawn_python(
                [*processes.isolated_python(), str(self.plugin_root / "bin" / "precompact"), "plugin-prepare"],
                log=log.fileno(),
                environ=environ,
                CLAUDE_PLUGIN_DATA=str(data),
            )

    def prepare_and_replay(self, wait: bool = False) -> None:
        """Prepares the environment if needed, then replays the queue. One preparer at a time:
        without `wait`, a second one leaves (the first replays what it queued)."""
        data = self.data()
        data.mkdir(parents=True, exist_ok=True)
        with open(data / "prepare.lock", "w") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return
            if self.prepared() is None:
                try:
                    self.prepare()
                except LauncherError as e:
                    # Whole or not at all: a hook reads the reason as soon as the file exists.
                    private_file.replace(data / "prepare-failed", f"{e}\n".encode())
                    raise
            (data / "prepare-failed").unlink(missing_ok=True)
            self.replay()

    def prepare(self) -> None:
        """A virtual environment with precompact installed from wheels only, nothing built from
        source: its dependencies as requirements.hashes.lock pins them, each file checked by its
        hash, fetched by pip from wherever pip is configured to look (construct, which has no
        wheel on the index, from the plugin's own wheels/), then precompact's own wheel, made
        from the plugin's source (plugin_wheel) and installed with no index at all."""
        venv = self.venv()
        shutil.rmtree(venv, ignore_errors=True)
        venv.parent.mkdir(parents=True, exist_ok=True)
        self.log(f"preparing {venv}: {self.fetching()}")
        self.run_python([*processes.isolated_python(), "-m", "venv", str(venv)], "python3 -m venv")
        pip = [
            *processes.isolated_python(venv / "bin" / "python"),
            *("-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-input"),
            *("--no-deps", "--only-binary", ":all:"),
        ]
        locked = ["--require-hashes", "--find-links", str(self.plugin_root / VENDORED_WHEELS), "-r", str(self.lock())]
        self.run_python([*pip, *locked], "pip install", explain=self.pip_failure)
        with tempfile.TemporaryDirectory(dir=venv.parent) as build:
            wheel = plugin_wheel.build(self.plugin_root, Path(build))
            self.run_python([*pip, "--no-index", str(wheel)], "pip install precompact")
        (venv / "ready").write_text(f"{__version__} {self.plugin_root}\n")
        for other in venv.parent.iterdir():
            if other != venv and other.is_dir():
                shutil.rmtree(other, ignore_errors=True)
        self.log("ready")

    def log(self, text: str) -> None:
        """Appends to prepare.log, which the one-line messages name (pip's whole output is there)."""
        with open(self.data() / "prepare.log", "a", encoding="utf-8") as log:
            log.write(f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} {text}\n")

    def run_python(self, args: list[str], what: str, explain: Callable[[str], str | None] = lambda _: None) -> None:
        """Runs a step of the preparation; its failure is one line (`explain`'s, or pip's last),
        its output goes to prepare.log."""
        try:
            done = processes.run_python(args, environ=self.environ, timeout=PIP_TIMEOUT_SECONDS)
        except (OSError, processes.TimeoutExpired) as e:
            raise LauncherError(f"{what} failed: {quoting.inline(str(e))}") from None
        if done.returncode != 0:
            self.log(f"{what} failed:\n{done.stdout}\n{done.stderr}")
            last = (done.stderr.strip().splitlines() or ["no message"])[-1]
            raise LauncherError(explain(done.stderr) or f"{what} failed: {last}")

    def lock(self) -> Path:
        return self.plugin_root / "requirements.hashes.lock"

    def fetching(self) -> str:
        """What the first use fetches, and from where."""
        pins = sum(
            1 for line in self.lock().read_text().splitlines() if "==" in line and not line.startswith((" ", "#"))
        )
        return f"{pins} wheels pinned by hash in requirements.hashes.lock, fetched by pip from {self.pip_source()}"

    def pip_source(self) -> str:
        """Where pip looks, as its own settings say (PIP_INDEX_URL, PIP_FIND_LINKS, PIP_NO_INDEX,
        pip.conf), a URL's password not shown."""
        if self.environ.get("PIP_NO_INDEX", "").lower() in ("1", "true", "yes", "on"):
            source = "no package index (PIP_NO_INDEX)"
        elif self.environ.get("PIP_INDEX_URL"):
            source = f"the package index {without_password(self.environ['PIP_INDEX_URL'])}"
        else:
            source = "the package index pip is set to (https://pypi.org/simple unless pip.conf names another)"
        links = self.environ.get("PIP_FIND_LINKS")
        return f"{source} and {' '.join(map(without_password, links.split()))}" if links else source

    def pip_failure(self, stderr: str) -> str | None:
        """pip's failure to fetch a pinned wheel, in one line naming the fix."""
        unreachable = any(line.startswith("WARNING: Retrying") for line in stderr.splitlines())
        missing = re.search(r"No matching distribution found for (\S+)", stderr)
        if missing and unreachable:
            return f'pip could not reach {self.pip_source()} for {missing[1]}; name a mirror (PIP_INDEX_URL) or a proxy (PIP_PROXY), or set them in pip.conf (see the README\'s "Install")'
        if missing:
            return f"no wheel of {missing[1]} where pip looked ({self.pip_source()}); precompact installs wheels only, never builds one from source: add that wheel to your mirror, or install precompact with pipx (see its README)"
        return None

    def replay(self) -> None:
        """Runs the queued hooks, oldest first, through the prepared precompact."""
        command = self.prepared()
        if command is None:
            return
        for entry in self.queued():
            payload = json.loads((entry / "payload.json").read_text())
            cwd = Path(payload["cwd"])
            env = self.environment()
            if project_state(cwd, env) is not None and not settings_run_precompact(
                cwd, payload["hook_event_name"], self.environ
            ):
                done = processes.run_program(
                    [str(command), "hook"],
                    input=json.dumps(payload).encode(),
                    cwd=cwd if cwd.is_dir() else None,
                    env=env,
                    timeout=REPLAY_TIMEOUT_SECONDS,
                )
                terminal.echo(
                    f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} replayed {payload['hook_event_name']} in {cwd}: {done.stderr.decode(errors='replace').strip() or 'done'}"
                )
            shutil.rmtree(entry, ignore_errors=True)

    # -- the MCP server and the command line ---------------------------------------------------

    def mcp(self) -> int:
        cwd = Path.cwd()
        command = self.precompact(cwd)
        if command is None:
            if project_state(cwd, self.environment()) == "trusted":
                self.spawn_preparation(cwd)
            from precompact.edges import mcp_idle  # connected, no tools: never a failed server

            mcp_idle.serve()
            return 0
        self.replace_with(command, ["mcp"])
        return 1  # not reached: the process is precompact's MCP server now

    def run(self, argv: list[str]) -> int:
        """Any other command (`precompact init`, `status`, ... from Claude Code's Bash tool): the
        environment is prepared here and now if it must be, saying so on stderr."""
        command = self.precompact(Path.cwd())
        if command is None:
            self.environ = confined(self.environ, Path.cwd())  # pip's, as spawn_preparation's
            terminal.echo(f"precompact: {self.preparing().removeprefix('precompact is ')}", err=True)
            self.prepare_and_replay(wait=True)
            command = self.prepared()
            if command is None:
                raise LauncherError(f"the environment in {self.venv()} is not ready; see {self.data() / 'prepare.log'}")
        self.replace_with(command, argv)
        return 1  # not reached: the process is precompact now

    def replace_with(self, command: Path, argv: list[str]) -> None:
        """Becomes `command ARGV`; one that cannot start (its Python gone since it was checked,
        not executable) is one line naming it, not a traceback."""
        try:
            processes.replace_with([str(command), *argv], self.environment())
        except OSError as e:
            raise LauncherError(
                f"cannot start {command} ({quoting.inline(e.strerror or str(e))}); install precompact with pipx "
                f"(see its README), or remove {self.venv()} and run this again to prepare it anew"
            ) from None


def confined(environ: dict[str, str], cwd: Path) -> dict[str, str]:
    """A copy of `environ` with user_roots.confine applied for the project at `cwd`: what the
    plugin's preparation (pip) runs in. Its refusals are not logged here (the project's `logs/`
    is precompact's to write); the precompact the launcher runs confines and logs its own."""
    environ = dict(environ)
    project = project_root(cwd)
    try:
        user_roots.confine(environ, [str(project)] if project is not None else [])
    except user_roots.NoHome as e:
        raise LauncherError(str(e)) from None
    return environ


def project_state(cwd: Path, environ: dict[str, str]) -> str | None:
    """None: no `.precompact.toml` here or above (in this repository); "trusted": an approved one
    (precompact reports anything else wrong with it); otherwise why this user has not approved
    it, naming `precompact trust`."""
    from precompact.config import settings as configuration

    try:
        configuration.discover(cwd)
    except (configuration.ConfigError, OSError):
        return None
    try:
        configuration.load(cwd, environ)
    except configuration.UntrustedConfig as e:
        return str(e)
    except (configuration.ConfigError, OSError):
        pass
    return "trusted"


def settings_run_precompact(cwd: Path, event: str, environ: dict[str, str]) -> bool:
    """Whether Claude Code's user settings (in the folder `environ`'s CLAUDE_CONFIG_DIR names, as
    Claude Code reads them: boundary/user_roots.claude_folder; none where that folder is not
    known), or the project's (read only from
    the directory Claude Code starts in), run `precompact hook` for `event` with a `precompact`
    that is there (by its path, or found on PATH when named bare). A file that does not parse, or
    is not a regular file (a project's link to a FIFO would hang every hook here), runs nothing.
    `environ` is confined (`confined`): a folder the project points into its own tree is not read."""
    from precompact.config import agent_settings, install

    home = Path(user_roots.home(environ))
    for scope in ("user", "project"):
        try:
            # Run by Claude Code alone: other agents' markers, which a project's `env` can add
            # here, do not decide its folder.
            path = agent_settings.settings_path(scope, cwd, home, environ, in_claude_code=True)
        except user_roots.ClaudeFolderUnknown:
            continue  # a file Claude Code may not read decides no stand-down: the plugin saves
        try:
            groups = agent_settings.outside_object(path)["hooks"][event]
        except (KeyError, TypeError):
            continue
        handlers = (
            [h for g in groups if isinstance(g, dict) and isinstance(g.get("hooks"), list) for h in g["hooks"]]
            if isinstance(groups, list)
            else []
        )
        if any(install.is_ours(h) and install.can_start(h["command"], environ.get("PATH")) for h in handlers):
            return True
    return False


def project_root(cwd: Path) -> Path | None:
    """The project a hook or command runs in: the directory of the `.precompact.toml` that
    applies there, else the git work tree holding `cwd`; None where neither is (no directory is
    the project there, as for discovery.discover), or where it is the user's home or holds it
    (boundary/user_roots.project_places: a home kept in git is still the user's)."""
    start = Path(os.path.realpath(cwd))
    chain = [start, *start.parents]
    worktree = next((d for d in chain if os.path.lexists(d / ".git")), None)
    for directory in chain:
        if os.path.lexists(directory / ".precompact.toml") or directory == worktree:
            kept = user_roots.project_places([str(directory)], user_roots.password_home())
            return Path(kept[0]) if kept else None
    return None


def without_password(url: str) -> str:
    """`url` with its password (a mirror's token) replaced by `***`."""
    parts = urllib.parse.urlsplit(url)
    if parts.password is None:
        return url
    return parts._replace(netloc=f"{parts.username}:***@{parts.netloc.rsplit('@', 1)[1]}").geturl()
