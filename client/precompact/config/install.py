"""`precompact install` / `uninstall`: our command hooks in each agent's own hook file: Claude
Code's settings.json, Codex CLI's hooks.json, Gemini CLI's settings.json. All three shape them
alike (`{"hooks": {Event: [{matcher?, hooks: [{type: "command", command, timeout}]}]}}`).

Only entries whose command runs `precompact hook` are ours; everything else in the file is kept
as it was (same keys, values and order). A file that is not valid JSON, or whose `hooks` is not
shaped as the agent expects, is refused and never overwritten. A file that uninstalling leaves
empty is removed, not left as `{}`.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

from precompact.boundary import atomic_file, private_file, quoting, small_file
from precompact.config import agent_settings
from precompact.config.agent_settings import (
    CLAUDE_STATE,
    MCP_SERVER,
    PLUGIN_NAME,
    enabled_plugin,
    mcp_json_path,
    settings_path,
    user_mcp_path,
)
from precompact.config.hook_timeouts import INSTALLED_SECONDS
from precompact.errors import PrecompactError

# Claude Code 2.1.332 reads project settings from the directory it starts in, not from the
# repository root; user settings apply wherever it starts, and there the hook finds the project
# by walking up to its .precompact.toml (and does nothing outside a precompact project).
PROJECT_SCOPE_ADVICE = (
    "note: Claude Code runs these hooks only when started in {root} itself, not in a subdirectory; "
    "`precompact install --scope user` runs them wherever it starts (they do nothing outside a precompact project)"
)

# Event -> (matcher, timeout in seconds: config/hook_timeouts.py's). SessionStart's matcher is
# filled from the configuration; SessionEnd has none (every reason a session ends).
# UserPromptSubmit and PostToolUse (every prompt, every tool) give a compacted session what its
# summary left out; Claude Code has no way to register a hook only while something is pending, so
# they are always registered, and the hook answers at once when nothing is (edges/hook.py).
_MATCHERS = {
    "PreCompact": "auto|manual",
    "PostCompact": "auto|manual",
    "SessionStart": None,
    "SessionEnd": "",
    "UserPromptSubmit": "",
    "PostToolUse": "",
}
HOOKS = {event: (matcher, INSTALLED_SECONDS["claude"][event]) for event, matcher in _MATCHERS.items()}
# Codex CLI 0.171.0: the same events and fields; no matchers (the hook filters sources itself).
CODEX_HOOKS = dict(INSTALLED_SECONDS["codex"])
# Gemini CLI 0.61.0 (timeouts in milliseconds): PreCompress before a compression (and, as
# observed, before every model round), BeforeAgent to hand the brief over after a compression
# (Gemini has no SessionStart source `compact`), SessionEnd as for Claude Code. No SessionStart:
# Gemini puts its context before the prompt, and a resume then drops that prompt.
GEMINI_HOOKS = {event: seconds * 1000 for event, seconds in INSTALLED_SECONDS["gemini"].items()}
AGENTS = ("claude", "codex", "gemini", "opencode")
# OpenCode 1.18.33 has no command hooks: precompact's own plugin (config/opencode_plugin.js, one
# file) runs `precompact hook --agent opencode` by the path written into it.
OPENCODE_PLUGIN = "precompact.js"
_OPENCODE_TEMPLATE = Path(__file__).with_name("opencode_plugin.js")
_OPENCODE_MARK = "// precompact's plugin for OpenCode"
_OPENCODE_COMMAND = re.compile(r"^const PRECOMPACT = (.*);$", re.MULTILINE)
# The SHA-256 of the plugin's template as older versions wrote it (the command line left as its
# placeholder): a file that is one of them, for a command line, is precompact's older plugin, which
# says nothing when precompact cannot start (review14b F10), and `install` replaces it.
_OLDER_OPENCODE_TEMPLATES = {"11721c1fe2a002572e1f38d1ffb8dde4e5d4a6d65bc94dfab006cb52ca3f8d56"}


class InstallError(PrecompactError):
    """settings.json cannot be changed safely; the message says why and what to do."""


@dataclass(frozen=True)
class Change:
    path: Path
    before: dict
    after: dict
    # ~/.claude.json (Claude Code's own state, credentials among it) stays readable by its owner only.
    private: bool = False

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def text(self) -> str:
        """The new file: JSON the agent reads (never NaN or Infinity: `_read_object` refuses a
        file that would need them), UTF-8 text but for a lone surrogate (which JSON's "\\ud800"
        may carry and UTF-8 cannot), written as the escape it was read from."""
        written = json.dumps(self.after, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
        return _LONE_SURROGATE.sub(lambda found: f"\\u{ord(found.group()):04x}", written)


# json.loads joins an escaped pair into one character: a surrogate left in a string stood alone.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def hooks_path(agent: str, scope: str, project: Path, home: Path | None = None) -> Path:
    """The file `agent` reads its hooks from: Claude Code's settings.json, Codex's hooks.json
    (user scope under $CODEX_HOME, ~/.codex by default), Gemini's settings.json."""
    if agent == "codex":
        if scope == "project":
            return project / ".codex" / "hooks.json"
        codex_home = os.environ.get("CODEX_HOME")
        return (Path(codex_home) if codex_home else (home or Path.home()) / ".codex") / "hooks.json"
    if agent == "gemini":
        return (project if scope == "project" else (home or Path.home())) / ".gemini" / "settings.json"
    if agent == "opencode":
        return opencode_plugin_path(scope, project, home)
    return settings_path(scope, project, home)


def opencode_plugin_path(scope: str, project: Path, home: Path | None = None) -> Path:
    """Where OpenCode loads precompact's plugin from: the project's .opencode/plugin/, or the
    user's $XDG_CONFIG_HOME/opencode/plugin/ (~/.config by default)."""
    if scope == "project":
        return project / ".opencode" / "plugin" / OPENCODE_PLUGIN
    config_home = os.environ.get("XDG_CONFIG_HOME")
    base = Path(config_home) if config_home and os.path.isabs(config_home) else (home or Path.home()) / ".config"
    return base / "opencode" / "plugin" / OPENCODE_PLUGIN


@dataclass(frozen=True)
class PluginFile:
    """OpenCode's plugin file as it is (None: no file) and as it is to be (None: removed)."""

    path: Path
    before: str | None
    after: str | None

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def text(self) -> str:
        return self.after or ""


def plan_opencode_install(path: Path, program: Program) -> PluginFile:
    """precompact's plugin at `path`, running `program`; a file there that is not ours is refused."""
    _refuse_link(path)
    return PluginFile(path, _our_plugin(path), opencode_plugin(program.argv()))


def opencode_plugin(command: list[str]) -> str:
    """The plugin file `install --agent opencode` writes, starting the command line `command`."""
    return _OPENCODE_TEMPLATE.read_text(encoding="utf-8").replace('"__PRECOMPACT__"', json.dumps(command), 1)


def plan_opencode_uninstall(path: Path) -> PluginFile:
    _refuse_link(path)
    before = _our_plugin(path)
    return PluginFile(path, before, None)


class NotOurPlugin(PrecompactError):
    """A file at the plugin's path that is not, byte for byte, the plugin precompact writes."""


class OlderPlugin(NotOurPlugin):
    """precompact's plugin as an older `install` wrote it: starting the script by its own `#!`
    line, which reads the agent's PYTHON* variables. `install --agent opencode` replaces it."""


def opencode_command(path: Path) -> list[str] | None:
    """The command line precompact's plugin at `path` starts (None: no file there); NotOurPlugin
    for a file that is not exactly what `install --agent opencode` writes for the command line it
    names (a line added anywhere in it would run in OpenCode as the user), OlderPlugin for one that
    names a program alone, as older versions wrote it."""
    try:
        text = agent_settings.read_text(path)
    except agent_settings.Unreadable as e:
        raise NotOurPlugin(str(e)) from None
    if text is None:
        return None
    found = _OPENCODE_COMMAND.search(text)
    try:
        command = json.loads(found.group(1)) if found else None
    except ValueError:
        command = None
    if isinstance(command, str) and text.startswith(_OPENCODE_MARK):
        raise OlderPlugin(
            f"{path} is an older form of precompact's plugin: it starts {command} by its own `#!` line, which reads "
            "the PYTHONPATH OpenCode's environment may hold"
        )
    if not isinstance(command, list) or not all(isinstance(word, str) for word in command):
        raise NotOurPlugin(f"{path} is not the plugin precompact writes")
    if text != opencode_plugin(command):
        template = text.replace(f"const PRECOMPACT = {json.dumps(command)};", 'const PRECOMPACT = "__PRECOMPACT__";', 1)
        if hashlib.sha256(template.encode("utf-8")).hexdigest() in _OLDER_OPENCODE_TEMPLATES:
            raise OlderPlugin(
                f"{path} is an older form of precompact's plugin: it says nothing when precompact cannot start"
            )
        raise NotOurPlugin(f"{path} is not the plugin precompact writes")
    return command


def _our_plugin(path: Path) -> str | None:
    """The text of precompact's plugin at `path`, None when there is no file; InstallError for a
    file that is not ours (never overwritten or removed)."""
    try:
        data = agent_settings.read(path)
    except agent_settings.Unreadable as e:
        raise InstallError(f"{e}; move it away, precompact will not overwrite it") from None
    if data is None:
        return None
    text = data.decode("utf-8", errors="replace")
    if not text.startswith(_OPENCODE_MARK):
        raise InstallError(f"{path} is not precompact's plugin; move it away, precompact will not overwrite it")
    return text


COMMAND = "precompact"
# Every agent runs a hook's command with a shell (Claude Code 2.1.332 /bin/sh -c, Codex 0.171.0
# /bin/bash -c, Gemini 0.61.0 its shell) and reads exit 2 as "block": Claude Code and Codex drop
# the prompt, Gemini the turn. `precompact hook` itself always exits 0, so each command `install`
# writes ends in a fallback that exits 0 whatever the status: the shell cannot start precompact's
# Python (126: not executable, 127: not found), that Python cannot read precompact's script (2,
# the script gone: `pip uninstall`, a rebuilt virtual environment), or a precompact that started
# was killed. Where the event has a word the agent shows the user and keeps from the model (a
# `systemMessage` on stdout: SessionStart and every prompt for Claude Code and Codex, every turn
# for Gemini; never PreCompact or PostCompact, whose stdout Claude Code gives the summariser) the
# cannot-start cases say so, naming the `install` that mends it.
NOT_STARTED = (
    "precompact: its hook could not start ({command} is missing or broken), so this session is not being saved; "
    "run `{fix}` with the precompact you use"
)
SAYS_NOT_STARTED = {
    "claude": ("SessionStart", "UserPromptSubmit"),
    "codex": ("SessionStart", "UserPromptSubmit"),
    "gemini": ("BeforeAgent",),
}


def install_fix(agent: str, scope: str) -> str:
    """The command that writes `agent`'s hooks again in `scope` (Claude Code's is the default agent)."""
    return f"precompact install {'' if agent == 'claude' else f'--agent {agent} '}--scope {scope}"


class NotInstalled(PrecompactError):
    """The running precompact is not an installed command whose path the hooks could name."""


def entry_point() -> Path:
    """The installed `precompact` that is running, by absolute path with links resolved: what the
    hooks and the MCP server run, so they never depend on the PATH the agent was started with."""
    started = Path(sys.argv[0])
    candidates = [started] if started.name == COMMAND else []
    candidates.append(Path(sys.executable).with_name(COMMAND))
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate.absolute().resolve()
    raise NotInstalled(
        f"cannot tell where this precompact is installed (no executable {COMMAND} beside {sys.executable}); "
        "install it with pip, pipx or uv tool and run that `precompact install`"
    )


# Python's isolated mode: no PYTHON* variable is read (PYTHONPATH, PYTHONHOME, PYTHONSTARTUP...),
# no user site, and neither the working directory nor the script's folder is put on sys.path.
ISOLATED = "-I"


@dataclass(frozen=True)
class Program:
    """How an agent starts precompact: the interpreter of the installed `precompact`, isolated,
    running that command's script by absolute path. The agent's environment is the project's to
    set (Claude Code's `env` in `.claude/settings.json`, `.mcp.json`'s): started by its own `#!`
    line, the script's interpreter would read PYTHONPATH, and a `precompact/` of the project's that
    it names would run as precompact."""

    interpreter: Path
    entry: Path

    def argv(self, *args: str) -> list[str]:
        return [str(self.interpreter), ISOLATED, str(self.entry), *args]

    def shell(self, *args: str) -> str:
        """The command line quoted for a POSIX shell (what a hook's `command` is)."""
        return shlex.join(self.argv(*args))


def program() -> Program:
    """The running precompact as the agents are to start it: `entry_point`, and the Python its
    installer wrote into it (pip's and uv's `#!<python>`, or for a long path the `/bin/sh` line
    that execs it), by the path written there: a virtual environment's `bin/python` is a link that
    must stay one (resolved, it is a Python without precompact). This Python when the script
    names none."""
    entry = entry_point()
    interpreter = interpreter_of(entry) or Path(sys.executable)
    if not (interpreter.is_absolute() and interpreter.is_file() and os.access(interpreter, os.X_OK)):
        raise NotInstalled(
            f"cannot tell which Python runs {entry} ({interpreter}); run `precompact install` from an installed precompact"
        )
    for named in (entry, interpreter):
        if not_utf8(str(named)):
            raise NotInstalled(
                f"precompact is installed under a path that is not UTF-8 ({quoting.path(named)}): the agents read "
                "their settings as UTF-8 and could never start it; install precompact under a path whose names are UTF-8"
            )
    return Program(interpreter, entry)


def not_utf8(text: str) -> bool:
    """Whether `text` (a path as Python decodes the system's bytes: surrogate-escaped) has bytes
    that are not UTF-8, which an agent reading its settings as UTF-8 (JSON, TOML) gets as U+FFFD."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


# The second line pip and uv write below `#!/bin/sh` in a script whose `#!` line would be too
# long: '''exec' "<python>" "$0" "$@"
_SHELL_EXEC = re.compile(r"""^'''exec' (.+) "\$0" "\$@"$""")


def interpreter_of(script: Path) -> Path | None:
    """The Python the installer's `script` starts by its first lines; None when they name none."""
    try:
        with script.open("rb") as f:
            lines = f.read(4096).decode("utf-8", "replace").splitlines()
    except OSError:
        return None
    first = lines[0] if lines else ""
    if first == "#!/bin/sh" and len(lines) > 1 and (found := _SHELL_EXEC.match(lines[1])):
        try:
            words = shlex.split(found.group(1))
        except ValueError:
            return None
        return Path(words[0]) if len(words) == 1 else None
    named = first.removeprefix("#!").strip()
    return Path(named) if first.startswith("#!") and named and " " not in named else None


@dataclass(frozen=True)
class Installed:
    """A command line of precompact's read back from an agent's file: the interpreter that starts
    it isolated (None: the older form, the script started by its own `#!` line, which reads the
    agent's PYTHON* variables), the script, and its arguments."""

    interpreter: str | None
    entry: str
    args: tuple[str, ...]

    @property
    def programs(self) -> tuple[str, ...]:
        """What the agent's shell starts: the interpreter and the script, or the script alone."""
        return (self.entry,) if self.interpreter is None else (self.interpreter, self.entry)


def read_command(words: list[str]) -> Installed | None:
    """`words` (a command line split as a shell would, up to any `||`) read as precompact's, in
    either form `install` has written: `<python> -I </abs/.../precompact> ARGS` (a script by a
    relative path would be the working directory's, the project's: not ours) or
    `<.../precompact> ARGS`."""
    if len(words) >= 3 and words[1] == ISOLATED and Path(words[2]).name == COMMAND and os.path.isabs(words[2]):
        return Installed(words[0], words[2], tuple(words[3:]))
    if words and Path(words[0]).name == COMMAND:
        return Installed(None, words[0], tuple(words[1:]))
    return None


def command_words(command: str) -> list[str] | None:
    """A hook's `command` split as a POSIX shell would, up to the fallback `hook_command` adds
    after `||` (None: not a line a shell reads)."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    return words[: words.index("||")] if "||" in words else words


def hook_command(program: Program, agent: str, event: str, scope: str) -> str:
    """The command line a hook of `agent` runs for `event`: `program` quoted for a POSIX shell,
    then the fallback (see NOT_STARTED) that always exits 0, saying so where the event can when
    precompact did not run to its answer: `precompact hook` exits 0 once it answered, whatever
    went wrong inside, so any other status under 128 is a precompact that could not run (the
    shell cannot start the interpreter, 126 or 127; the interpreter cannot read the script, 2; a
    Python of another version than its environment's that cannot import precompact, 1). A status
    of 128 and over is a signal: the agent's own timeout, which says so itself."""
    run = program.shell("hook", *(() if agent == "claude" else ("--agent", agent)))
    if event not in SAYS_NOT_STARTED.get(agent, ()):
        return f"{run} || exit 0"
    said = json.dumps({"systemMessage": NOT_STARTED.format(command=program.entry, fix=install_fix(agent, scope))})
    return f"{run} || {{ s=$?; if [ $s -lt 128 ]; then printf '%s\\n' {shlex.quote(said)}; fi; exit 0; }}"


def is_current(command: str, agent: str, event: str, scope: str) -> bool:
    """Whether our hook `command` for `event` is the one `install` writes now for the program it
    names (an older one may lack the fallback, and block the agent when precompact cannot start)."""
    words = command_words(command)
    installed = read_command(words) if words else None
    if installed is None or installed.interpreter is None:
        return False
    return command == hook_command(Program(Path(installed.interpreter), Path(installed.entry)), agent, event, scope)


def can_start(command: str, path: str | None) -> bool:
    """Whether each program the precompact `command` names (its interpreter and its script, or the
    script alone) is there to run: by its path, or found on `path` when it is a bare name."""
    words = command_words(command)
    installed = read_command(words) if words else None
    if installed is None:
        return False
    for program in installed.programs:
        # The shell executes the first; an interpreter only reads the script it is given.
        mode = os.X_OK if program == installed.programs[0] else os.R_OK
        if "/" not in program:
            import shutil  # and with it bz2 and lzma: not for the hook

            if shutil.which(program, mode=mode, path=path) is None:
                return False
        elif not (os.path.isfile(program) and os.access(program, mode)):
            return False
    return (
        installed.interpreter is None
        or "/" not in installed.interpreter
        or not other_python(Path(installed.interpreter))
    )


# pyvenv.cfg's line of the Python a virtual environment was made with ("version = 3.11.7";
# "version_info" in some builders), and the name a Python's executable resolves to (python3.11).
_VENV_VERSION = re.compile(rb"^version(?:_info)?[ \t]*=[ \t]*(\d+)\.(\d+)", re.MULTILINE)
_VERSIONED_EXECUTABLE = re.compile(r"python(\d+)\.(\d+)")


def other_python(interpreter: Path) -> str | None:
    """Why a virtual environment's `interpreter` (its bin/python3) now runs a Python of another
    version than the environment was made with, None when it does not or that cannot be told. A
    venv's python3 is a link to the system's, which an OS upgrade moves to the next minor version:
    that one starts, finds nothing in lib/python3.X and cannot import precompact (exit 1)."""
    try:
        made, _ = small_file.read(interpreter.parent.parent / "pyvenv.cfg", 1 << 16, follow_links=False)
    except OSError:
        return None
    made_with = _VENV_VERSION.search(made)
    runs = _VERSIONED_EXECUTABLE.fullmatch(os.path.basename(os.path.realpath(interpreter)))
    if made_with is None or runs is None:
        return None
    made_for, now = f"{int(made_with[1])}.{int(made_with[2])}", f"{int(runs[1])}.{int(runs[2])}"
    return (
        None
        if made_for == now
        else f"its Python {interpreter} now runs Python {now}, not the {made_for} it was made with"
    )


def plugin_folder(plugin: str, home: Path | None = None) -> Path | None:
    """The folder Claude Code loads `plugin` ("precompact@<marketplace>") from when its
    marketplace was added as a folder (`claude plugin marketplace add <path>`): Claude Code
    2.1.332 runs the plugin's hooks and MCP server from that folder itself, not from its cache
    copy, and loads none of them once it is gone. None for a marketplace of another kind."""
    marketplace = plugin.split("@", 1)[1] if "@" in plugin else ""
    registry = agent_settings.user_folder(home) / "plugins" / "known_marketplaces.json"
    try:
        source = agent_settings.outside_object(registry)[marketplace]["source"]
    except (KeyError, TypeError):
        return None
    if not isinstance(source, dict) or source.get("source") != "directory" or not isinstance(source.get("path"), str):
        return None
    return Path(source["path"])


def loadable_plugin(home: Path | None = None) -> str | None:
    """The enabled precompact plugin, unless the folder it is loaded from no longer holds it."""
    plugin = enabled_plugin(home)
    folder = plugin_folder(plugin, home) if plugin else None
    return plugin if folder is None or holds_plugin(folder) else None


def holds_plugin(folder: Path) -> bool:
    """Whether `folder` is a marketplace that lists the precompact plugin."""
    listed = agent_settings.outside_object(folder / ".claude-plugin" / "marketplace.json").get("plugins")
    return isinstance(listed, list) and any(isinstance(p, dict) and p.get("name") == PLUGIN_NAME for p in listed)


def is_ours(handler) -> bool:
    """Whether a hook handler runs `precompact hook [--agent A]` (bare or by path, isolated or in
    the older form), with or without the fallback `hook_command` adds after `||`."""
    if not isinstance(handler, dict) or not isinstance(handler.get("command"), str):
        return False
    words = command_words(handler["command"])
    installed = read_command(words) if words else None
    if installed is None:
        return False
    args = list(installed.args)
    return args == ["hook"] or (len(args) == 3 and args[:2] == ["hook", "--agent"] and args[2] in AGENTS)


def plan_install(
    path: Path, program: Program, session_start_sources: tuple[str, ...], scope: str, agent: str = "claude"
) -> Change:
    """`path` (`scope`'s hook file) with our hooks (any older ones of ours replaced), each running `program`."""
    before = _read(path)
    after = _without_ours(before)
    hooks = after.setdefault("hooks", {})
    for event, matcher, handler in _entries(agent, session_start_sources):
        run = hook_command(program, agent, event, scope)
        group = {
            **({} if matcher is None else {"matcher": matcher}),
            "hooks": [{"type": "command", "command": run, **handler}],
        }
        hooks.setdefault(event, []).append(group)
    return Change(path, before, after)


def _entries(agent: str, session_start_sources: tuple[str, ...]) -> list[tuple[str, str | None, dict]]:
    """(event, matcher, the handler's other fields) of each hook `agent` gets."""
    if agent == "codex":
        return [(event, None, {"timeout": timeout}) for event, timeout in CODEX_HOOKS.items()]
    if agent == "gemini":
        return [(event, None, {"name": PLUGIN_NAME, "timeout": timeout}) for event, timeout in GEMINI_HOOKS.items()]
    return [
        (event, None if matcher == "" else matcher or "|".join(session_start_sources), {"timeout": timeout})
        for event, (matcher, timeout) in HOOKS.items()
    ]


def plan_uninstall(path: Path) -> Change:
    before = _read(path)
    return Change(path, before, _without_ours(before))


def apply(change: Change | PluginFile) -> None:
    """Writes the new settings atomically, keeping the file's mode (a new file is this user's
    only, 0600, in directories made 0700: its hooks run commands); removes a file left empty."""
    if isinstance(change, PluginFile):
        if change.after is None:
            change.path.unlink(missing_ok=True)
        else:
            private_file.replace(change.path, change.after.encode("utf-8"))
        return
    if not change.after and change.before:
        change.path.unlink(missing_ok=True)
        return
    if change.private:
        private_file.replace(change.path, change.text().encode("utf-8"))
    elif change.path.exists():
        atomic_file.write(change.path, change.text().encode("utf-8"), change.path.stat().st_mode & 0o777)
    else:
        try:
            private_file.create(change.path, change.text().encode("utf-8"))
        except FileExistsError:
            raise InstallError(
                f"{change.path} is taken (by a link to nothing?); remove it, then run this again"
            ) from None


def _read(path: Path) -> dict:
    settings = _read_object(path)
    if hooks_misshapen(settings):
        raise InstallError(
            f'{path}: "hooks" must map event names to lists; fix it by hand, precompact will not overwrite it'
        )
    return settings


def hooks_misshapen(settings: dict) -> bool:
    """Whether `settings` has a `hooks` key that is not an object mapping event names to lists
    (a string, a list...): Claude Code 2.1.332 then runs none of the file's hooks (and keeps its
    other settings)."""
    hooks = settings.get("hooks", {})
    return not isinstance(hooks, dict) or not all(isinstance(groups, list) for groups in hooks.values())


def _refuse_link(path: Path) -> None:
    """install and uninstall never write through a link, nor replace it with a file (the link
    would silently stop being one, or a file elsewhere would change): refused, naming its target."""
    try:
        target = os.readlink(path)
    except OSError:
        return
    raise InstallError(
        f"{path} is a link to {target}; precompact will not replace it nor write through it: "
        "replace the link with a copy of its target (cp --remove-destination), or edit the target by hand"
    )


def check_writable(change: Change | PluginFile) -> None:
    """Refuses, before anything is written, a change `apply` could not make: the file is a link
    (now) or not a regular file, or its directory cannot be made or written to."""
    if not change.changed:
        return
    _refuse_link(change.path)
    if change.path.exists() and not change.path.is_file():
        raise InstallError(f"{change.path} is not a regular file; remove it, then run this again")
    directory = change.path.parent
    while not directory.exists() and directory != directory.parent:
        directory = directory.parent
    if not directory.is_dir():
        raise InstallError(f"{directory} is not a directory; move it away, then run this again")
    if not os.access(directory, os.W_OK | os.X_OK):
        raise InstallError(f"cannot write in {directory}; make it writable for you, then run this again")


def _without_ours(settings: dict) -> dict:
    """A copy with our handlers removed, and any group, event or `hooks` they alone filled."""
    out = json.loads(json.dumps(settings))
    hooks = out.get("hooks")
    if not isinstance(hooks, dict):
        return out
    for event in list(hooks):
        kept_groups = []
        for group in hooks[event]:
            handlers = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(handlers, list) or not any(is_ours(h) for h in handlers):
                kept_groups.append(group)
                continue
            remaining = [h for h in handlers if not is_ours(h)]
            if remaining:
                kept_groups.append({**group, "hooks": remaining})
        if kept_groups or not hooks[event]:
            hooks[event] = kept_groups
        else:
            del hooks[event]
    if not hooks and settings.get("hooks"):
        del out["hooks"]
    return out


# --- the MCP server (`precompact install --mcp`) ----------------------------------------------

MCP_TOOLS = tuple(f"mcp__{MCP_SERVER}__{tool}" for tool in ("recall", "show", "savepoints"))


# Whose is each file install writes in a project. `.mcp.json` is this user's (kept out of git
# status). A hook file may hold the team's other settings: install says, once, that it is not in
# git, and that its command is this machine's path (docs/setup.md recommends --scope user).
PER_USER = (".mcp.json",)


def shared_file_note(path: str) -> str:
    return (
        f"note: {path} is untracked: it runs precompact by this machine's path, so commit it only if every teammate "
        "has precompact there, or add it to .git/info/exclude (or install with --scope user)"
    )


def mcp_path(scope: str, project: Path, home: Path | None = None) -> Path:
    return mcp_json_path(project) if scope == "project" else user_mcp_path(home)


def plan_mcp_server(path: Path, program: Program) -> Change:
    """`path` (the project's `.mcp.json`, or ~/.claude.json) with the server `<program> mcp`,
    other servers and keys kept."""
    before = _read_object(path)
    after = json.loads(json.dumps(before))
    servers = after.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise InstallError(f'{path}: "mcpServers" must be an object; fix it by hand, precompact will not overwrite it')
    command, *args = program.argv("mcp")
    servers[MCP_SERVER] = {"type": "stdio", "command": command, "args": args}
    return Change(path, before, after, private=path.name == CLAUDE_STATE)


def with_mcp_approval(change: Change, project_server: bool) -> Change:
    """The settings change, also allowing the server's read-only tools and, for a `project_server`
    (in `.mcp.json`), approving it: Claude Code asks before starting a project server otherwise."""
    after = json.loads(json.dumps(change.after))
    enabled = after.setdefault("enabledMcpjsonServers", []) if project_server else []
    permissions = after.setdefault("permissions", {})
    allowed = permissions.setdefault("allow", []) if isinstance(permissions, dict) else None
    if not isinstance(enabled, list) or not isinstance(allowed, list):
        raise InstallError(
            f'{change.path}: "enabledMcpjsonServers" and "permissions.allow" must be lists; fix it by hand, precompact will not overwrite it'
        )
    approvals = ((MCP_SERVER, enabled),) if project_server else ()
    for value, into in (*approvals, *((tool, allowed) for tool in MCP_TOOLS)):
        if value not in into:
            into.append(value)
    return Change(change.path, change.before, after)


def _read_object(path: Path) -> dict:
    """The JSON object of the file install is to rewrite at `path` ({} for none), refused when it
    is a link (see `_refuse_link`) or cannot be read as a settings file."""
    _refuse_link(path)
    try:
        text = agent_settings.read_text(path) or ""
    except agent_settings.Unreadable as e:
        raise InstallError(f"{e}; make it a regular file of JSON (or remove it), then run this again") from None
    try:
        value = agent_settings.loads(text, path) if text.strip() else {}
    except agent_settings.NotJson as e:
        raise InstallError(f"{e}; fix it by hand, precompact will not overwrite it") from None
    if not isinstance(value, dict):
        raise InstallError(f"{path} must hold a JSON object; fix it by hand, precompact will not overwrite it")
    try:
        agent_settings.refuse_infinity(value, path)
    except agent_settings.PastADouble as e:
        raise InstallError(f"{e}; fix it by hand, precompact will not overwrite it") from None
    return value


def without_mcp(change: Change) -> Change:
    """The settings change, also dropping what `with_mcp_approval` added (lists left empty go)."""
    after = json.loads(json.dumps(change.after))
    enabled = after.get("enabledMcpjsonServers")
    if isinstance(enabled, list) and MCP_SERVER in enabled:
        enabled.remove(MCP_SERVER)
        if not enabled:
            del after["enabledMcpjsonServers"]
    permissions = after.get("permissions")
    allowed = permissions.get("allow") if isinstance(permissions, dict) else None
    if isinstance(permissions, dict) and isinstance(allowed, list):
        permissions["allow"] = [rule for rule in allowed if rule not in MCP_TOOLS]
        if not permissions["allow"]:
            del permissions["allow"]
        if not permissions:
            del after["permissions"]
    return Change(change.path, change.before, after)


def plan_mcp_server_removal(path: Path) -> Change:
    """`path` (the project's `.mcp.json`, or ~/.claude.json) without the server `install --mcp`
    added."""
    before = _read_object(path)
    after = json.loads(json.dumps(before))
    servers = after.get("mcpServers")
    if isinstance(servers, dict) and MCP_SERVER in servers:
        del servers[MCP_SERVER]
        if not servers:
            del after["mcpServers"]
    return Change(path, before, after, private=path.name == CLAUDE_STATE)
