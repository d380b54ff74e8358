"""`precompact doctor`: each thing that keeps sessions from being archived, checked once, in one
line with what fixes it. Nothing here changes anything."""

from __future__ import annotations

import errno
import json
import os
import re
import shlex
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from precompact.boundary import processes, quoting, user_roots
from precompact.config import agent_settings, endpoint, install
from precompact.config import settings as configuration
from precompact.local import capture, savepoint_log

RPC_TIMEOUT_SECONDS = 5.0
CODEX_ASK_SECONDS = 20.0
# What doctor asks Codex's app-server (JSON-RPC, one message a line): who it is, then the hooks
# it would run in the project and whether each is trusted (Codex skips an untrusted one silently).
CODEX_HOOKS_ASKED = 2
GIT_TIMEOUT_SECONDS = 10.0
PROBE_SECONDS = 20.0
# Claude Code releases whose PreCompact does not fire on auto-compaction (#50467).
PRECOMPACT_MISSED = ((2, 1, 105), (2, 1, 114))
CLEANUP_PERIOD_DAYS = 30  # Claude Code's default cleanupPeriodDays
WARNING_DAYS = 7
# The sessions check where Claude Code's folder is not known: why, and the fix, are the hooks check's.
SESSIONS_NOT_CHECKED = "not checked: Claude Code's sessions are in its folder, which is not known here (the hooks check says why and the fix)"
MIN_LAMPORTS = 10_000_000  # rent of a first record and fees for a while


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""

    def line(self) -> str:
        return f"{'✓' if self.ok else '✗'} {self.name}: {self.detail}" + (f"; fix: {self.fix}" if self.fix else "")

    def to_json(self) -> dict:
        return {"check": self.name, "ok": self.ok, "detail": self.detail, "fix": self.fix or None}


def run(cwd: Path, home: Path | None = None) -> list[Check]:
    """Every check that applies; without a trusted configuration, only those that need none."""
    home = home or Path.home()
    try:
        user_roots.claude_config_dir()
        unknown = None
    except user_roots.ClaudeFolderUnknown as e:
        # Where Claude Code reads the user's settings is not known: nothing there is vouched for.
        unknown = Check("hooks", False, f"not checked: {e}")
    plugin_folder = _plugin_folder(home) if unknown is None else []
    try:
        loaded = configuration.load(cwd)
    except configuration.ConfigError as e:
        # Its message names the fix (precompact init, trust, or the setting to change), apart when given so.
        checks = [*plugin_folder, Check("configuration", False, e.problem, e.fix or "")]
        return [
            *checks,
            *([unknown] if unknown else []),
            *_commands(cwd, home),
            *_codex_trust(cwd, home),
            _claude_version(),
        ]
    checks = [*plugin_folder, Check("configuration", True, f"{loaded.root / configuration.CONFIG_NAME} trusted")]
    checks += [unknown or _hooks(loaded, home), *_commands(loaded.root, home), *_codex_trust(loaded.root, home)]
    checks.append(_claude_version())
    steps: list[tuple[str, Callable[[configuration.Config], Check | None]]] = [
        ("cluster and balance", _keypair_and_balance),
        ("git url", _recorded_url),
        ("instance", _shared_chain),
        ("git remote", _remote),
        ("encryption identity", _identity),
        ("logs/", _logs),
        ("hook failures", _hook_failures),
        ("worker", _worker),
        ("clock", _clock),
        ("snapshots", _unindexed),
        ("sessions", lambda loaded: _expiring(loaded, home)),
    ]
    for name, step in steps:
        try:
            check = step(loaded)
        except Exception as e:  # noqa: BLE001 -- a check that cannot run (a git timeout, say) is a failed check
            check = Check(name, False, f"could not check: {type(e).__name__}: {quoting.inline(str(e))}")
        if check is not None:
            checks.append(check)
    return checks


def agent_path() -> tuple[str, str]:
    """The PATH an agent has when it was started outside precompact's virtual environment (this
    PATH without the environment's `bin`: VIRTUAL_ENV's, and the one this Python runs from), and
    how to say which PATH that is."""
    environments = {os.environ.get("VIRTUAL_ENV", "")} | ({sys.prefix} if sys.prefix != sys.base_prefix else set())
    left_out = {os.path.realpath(Path(e) / "bin") for e in environments if e}
    directories = [d for d in os.environ.get("PATH", "").split(os.pathsep) if d]
    kept = [d for d in directories if os.path.realpath(d) not in left_out]
    dropped = sorted({d for d in directories if d not in kept})
    said = f"your PATH without {', '.join(dropped)}" if dropped else "your PATH"
    return os.pathsep.join(kept), said


def _plugin_folder(home: Path) -> list[Check]:
    """The folder Claude Code loads the plugin from, where it is one the user added: moved or
    deleted, Claude Code silently runs none of the plugin's hooks."""
    plugin = agent_settings.enabled_plugin(home)
    folder = install.plugin_folder(plugin, home) if plugin else None
    if plugin is None or folder is None:
        return []
    if install.holds_plugin(folder):
        return [
            Check(
                "plugin folder",
                True,
                f"Claude Code runs {plugin}'s hooks and MCP server from {folder}, which holds it (keep it there)",
            )
        ]
    marketplace = plugin.split("@", 1)[1]
    return [
        Check(
            "plugin folder",
            False,
            f"{folder}, the folder Claude Code runs {plugin}'s hooks and MCP server from, no longer holds it (moved or deleted): Claude Code runs none of them, so nothing is saved",
            f'put the clone back at {folder}, or from where it is now: claude plugin marketplace remove {marketplace} && claude plugin marketplace add "$PWD" && claude plugin install {plugin}',
        )
    ]


def _commands(root: Path, home: Path) -> list[Check]:
    """Each program an installed hook (every agent, both scopes) or MCP server runs, started as
    the agent would start it."""
    checks = []
    for agent in install.AGENTS:
        for scope in ("project", "user"):
            try:
                hooks = install.hooks_path(agent, scope, root, home)
            except user_roots.ClaudeFolderUnknown:
                continue  # said by the hooks check
            try:
                found = {tuple(words): install.read_command(words) for words in _ours(hooks).values()}
            except (agent_settings.NotJson, agent_settings.PastADouble):
                # Claude Code's is the hooks check's; another agent may read what JSON does not (comments).
                continue
            except (agent_settings.Unreadable, install.NotOurPlugin) as e:
                checks.append(_unusable(f"{agent} hook command", e, agent, scope))
                continue
            started = {installed.programs if installed else (): installed for installed in found.values()}
            starts = [
                _starts(f"{agent} hook command", started[programs], hooks, scope, home, agent)
                for programs in sorted(started)
            ]
            # A command that does not start says so, with the same fix; one that starts may still lack the fallback.
            checks += starts if not all(check.ok for check in starts) else starts + _older_forms(agent, scope, hooks)
    try:
        servers = agent_settings.mcp_commands(root, home)
    except user_roots.ClaudeFolderUnknown:
        servers = {}  # said by the hooks check
    for settings, words in servers.items():
        scope = "project" if settings == agent_settings.mcp_json_path(root) else "user"
        checks.append(_starts("MCP server command", install.read_command(words), settings, scope, home))
    return checks


def _older_forms(agent: str, scope: str, hooks: Path) -> list[Check]:
    """Our hooks in `hooks` whose command is not the one `install` writes now: an older install's,
    which may exit 2 (the agent's "block") once precompact cannot start. OpenCode's plugin is
    checked whole by `install.opencode_command`."""
    if hooks.name == install.OPENCODE_PLUGIN:
        return []
    try:
        older = sorted(
            {
                event
                for event, listed in (agent_settings.settings_object(hooks).get("hooks") or {}).items()
                for group in listed
                for handler in group.get("hooks", [])
                if install.is_ours(handler) and not install.is_current(handler["command"], agent, event, scope)
            }
        )
    except (AttributeError, TypeError):  # misshapen: as `_ours`, the hooks check's to say
        return []
    if not older:
        return []
    return [
        Check(
            f"{agent} hook command",
            False,
            f"{hooks}: precompact's {', '.join(older)} hook{' is' if len(older) == 1 else 's are'} an older install's, "
            f"which can block {agent}'s session (exit 2) once precompact cannot start",
            install.install_fix(agent, scope),
        )
    ]


def _starts(
    name: str, installed: install.Installed | None, where: Path, scope: str, home: Path, agent: str = "claude"
) -> Check:
    """Whether an installed command line of precompact's starts, asked for `--version` with the
    agent's PATH and nothing else of this environment. A program a project's file names is run
    only if it is this very precompact (its interpreter and its script): a repository's settings
    are outside input. The older form, the script started by its own `#!` line, is not run: it
    reads the agent's PYTHON* variables, which the project sets."""
    fix = install.install_fix(agent, scope) + (" --mcp" if name.startswith("MCP") else "")
    if installed is None:
        return Check(name, False, f"{where}: cannot read its command", fix)
    path, said_path = agent_path()
    shown = quoting.inline(
        installed.entry
        if installed.interpreter is None
        else f"{installed.interpreter} {install.ISOLATED} {installed.entry}"
    )
    for program in installed.programs:
        if "/" not in program:
            found = shutil.which(program, path=path)
            result = f"with {said_path} it finds {found}" if found else f"with {said_path} it is not found"
            return Check(
                name,
                False,
                f"{where} runs a bare {quoting.inline(program)}, which depends on the PATH the agent starts with ({result})",
                f"{fix} (it writes the absolute path)",
            )
    for program in installed.programs:
        if install.not_utf8(program):
            return Check(
                name,
                False,
                f"{where} runs {quoting.inline(program)}, a path that is not UTF-8, which the agent can never start "
                "(it reads its settings as UTF-8)",
                f"install precompact under a path whose names are UTF-8, then {fix}",
            )
        if not os.path.exists(program):
            return Check(
                name, False, f"{where} runs {quoting.inline(program)}, which does not exist (moved or removed)", fix
            )
    if scope == "project" and not _is_this_precompact(installed):
        return Check(name, False, f"{where} runs {shown}, not this precompact ({_this_precompact()}); not started", fix)
    if installed.interpreter is None:
        return Check(
            name,
            False,
            f"{where} runs {shown} by its own `#!` line, whose Python reads PYTHONPATH and the other PYTHON* variables "
            "of the agent's environment, which the project sets: a `precompact/` folder it ships would run as precompact",
            f"{fix} (it starts precompact's Python isolated, {install.ISOLATED})",
        )
    try:
        done = processes.run_program(
            [installed.interpreter, install.ISOLATED, installed.entry, "--version"],
            cwd=None,
            env={"PATH": path, "HOME": str(home)},
            timeout=PROBE_SECONDS,
        )
    except (OSError, ValueError, processes.TimeoutExpired) as e:
        return Check(name, False, f"{where} runs {shown}, which cannot start: {quoting.inline(str(e))}", fix)
    answer = done.stdout.decode(errors="replace").strip()
    if done.returncode != 0 or not answer.startswith(install.COMMAND):
        reason = (done.stderr.decode(errors="replace").strip().splitlines() or [f"exit {done.returncode}"])[-1]
        return Check(name, False, f"{where} runs {shown}, which fails to start: {quoting.inline(reason)}", fix)
    return Check(name, True, f"{where} runs {shown}, which starts with {said_path} ({quoting.inline(answer)})")


def _codex_trust(root: Path, home: Path) -> list[Check]:
    """Whether Codex trusts precompact's hooks: it runs none it does not, silently (it keeps
    `[hooks.state."<key>"] trusted_hash` in its config.toml, the hash of its own making), so the
    answer is Codex's, asked of its app-server (`hooks/list`: each hook's `trustStatus`). None
    when no hook file of Codex's holds precompact's."""
    files = []
    for scope in ("project", "user"):
        hooks_file = install.hooks_path("codex", scope, root, home)
        try:
            if _ours(hooks_file):
                files.append(str(hooks_file))
        except (agent_settings.NotJson, agent_settings.PastADouble, agent_settings.Unreadable, install.NotOurPlugin):
            continue  # the hook command check says so
    if not files:
        return []
    name, fix = "codex hooks trusted", "open codex, run /hooks and trust precompact's hooks"
    path, said_path = agent_path()
    codex = processes.program_on_path("codex", {"PATH": path})
    if codex is None:
        return [Check(name, False, f"not checked: `codex` is not on {said_path}", "install Codex, or add it to PATH")]
    asked = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"clientInfo": {"name": "precompact-doctor", "version": "1"}},
        },
        {"jsonrpc": "2.0", "method": "initialized"},
        {"jsonrpc": "2.0", "id": CODEX_HOOKS_ASKED, "method": "hooks/list", "params": {"cwds": [str(root)]}},
    ]
    environment = {"PATH": path, "HOME": str(home)} | (
        {"CODEX_HOME": os.environ["CODEX_HOME"]} if os.environ.get("CODEX_HOME") else {}
    )
    try:
        said = processes.ask_program(
            [codex, "app-server"],
            cwd=root,
            env=environment,
            input=b"".join(json.dumps(m).encode() + b"\n" for m in asked),
            answered=lambda out: _codex_answer(out) is not None,
            timeout=CODEX_ASK_SECONDS,
        )
    except processes.TimeoutExpired:
        return [Check(name, False, f"not checked: {codex} app-server did not answer in {CODEX_ASK_SECONDS:.0f} s")]
    except OSError as e:
        return [Check(name, False, f"not checked: {codex} app-server cannot start: {quoting.os_error(e)}")]
    hooks = _codex_answer(said)
    if hooks is None:
        return [Check(name, False, f"not checked: {codex} app-server gave no list of hooks")]
    listed = [h for h in hooks if isinstance(h, dict) and h.get("sourcePath") in files and install.is_ours(h)]
    if not listed:
        return [
            Check(
                name,
                False,
                f"Codex runs none of precompact's hooks in {' and '.join(files)} (it does not load that file: a project's .codex/ only once you trust the project)",
                "trust the project in codex, or precompact install --agent codex --scope user",
            )
        ]
    skipped = sorted(
        {
            f"{h.get('eventName')} ({quoting.inline(str(h.get('trustStatus')))})"
            for h in listed
            if h.get("trustStatus") != "trusted"
        }
    )
    if skipped:
        return [
            Check(
                name,
                False,
                f"Codex skips precompact's hooks it does not trust, silently: {', '.join(skipped)}: what they do (saving, the brief) is not done in Codex sessions",
                fix,
            )
        ]
    # Codex runs only the hooks it lists: one of ours it leaves out (an event this Codex does not
    # have, a file it reads in part) is skipped as silently as an untrusted one.
    seen = {(h.get("sourcePath"), str(h.get("eventName")).casefold()) for h in listed}
    unlisted = [
        f"{event} in {hooks_file}"
        for hooks_file in files
        for event in _ours(Path(hooks_file))
        if (hooks_file, event.casefold()) not in seen
    ]
    if unlisted:
        return [
            Check(
                name,
                False,
                f"Codex does not load precompact's hooks for {', '.join(unlisted)}: it runs none of them, silently (it lists {len(listed)} of ours)",
                "update Codex (an older one lacks the event), then precompact install --agent codex again",
            )
        ]
    return [
        Check(
            name,
            True,
            f"Codex trusts precompact's {len(listed)} hooks in {' and '.join(files)} (asked {codex} app-server)",
        )
    ]


def _codex_answer(said: bytes) -> list | None:
    """The hooks Codex's app-server listed in its answer to doctor's `hooks/list`, once that
    answer is among the lines it wrote; None before (or if it never is)."""
    for line in said.split(b"\n"):
        if b'"id":' not in line:
            continue
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if not isinstance(message, dict) or message.get("id") != CODEX_HOOKS_ASKED:
            continue
        data = (message.get("result") or {}).get("data") if isinstance(message.get("result"), dict) else None
        if not isinstance(data, list):
            return []
        return [
            h
            for entry in data
            if isinstance(entry, dict) and isinstance(entry.get("hooks"), list)
            for h in entry["hooks"]
        ]
    return None


def _this_precompact() -> str:
    try:
        return str(install.entry_point())
    except install.NotInstalled:
        return "not an installed command"


def _is_this_precompact(installed: install.Installed) -> bool:
    """Whether `installed` starts this precompact: its script, and its interpreter (when it names
    one) this Python."""
    try:
        return os.path.samefile(installed.entry, install.entry_point()) and (
            installed.interpreter is None or os.path.samefile(installed.interpreter, sys.executable)
        )
    except (OSError, install.NotInstalled):
        return False


def _unusable(name: str, e: Exception, agent: str, scope: str) -> Check:
    """The check of a hook file doctor cannot read as one, or an OpenCode plugin file that is not
    the one precompact writes: never a ✓ (its content was not checked, or is someone else's)."""
    if isinstance(e, install.OlderPlugin):
        return Check(name, False, str(e), f"precompact install --agent {agent} --scope {scope}")
    if isinstance(e, install.NotOurPlugin):
        return Check(name, False, str(e), f"move it away, then precompact install --agent {agent} --scope {scope}")
    return Check(name, False, str(e), "make it a regular file of JSON (or remove it)")


def _ours(path: Path) -> dict[str, list[str]]:
    """Event -> the command line of our handler for it (up to its fallback), in the hook file at
    `path` (OpenCode's plugin file: every event, one command line). Unreadable, or NotOurPlugin,
    for a file doctor cannot vouch for."""
    if path.name == install.OPENCODE_PLUGIN:
        command = install.opencode_command(path)
        return {"plugin": command} if command else {}
    hooks = agent_settings.settings_object(path).get("hooks") or {}
    try:
        return {
            event: install.command_words(h["command"]) or []
            for event, groups in hooks.items()
            for g in groups
            for h in g.get("hooks", [])
            if install.is_ours(h)
        }
    except (AttributeError, TypeError):
        return {}


def _hooks(loaded: configuration.Config, home: Path) -> Check:
    plugin = install.loadable_plugin(home)  # one Claude Code cannot load is said by the plugin folder check
    files = {scope: agent_settings.settings_path(scope, loaded.root, home) for scope in ("project", "user")}
    try:
        for path in files.values():
            if install.hooks_misshapen(agent_settings.settings_object(path)):
                return Check(
                    "hooks",
                    False,
                    f'{path}: "hooks" is not an object mapping event names to lists, so Claude Code runs none of the hooks it holds',
                    f'make "hooks" in {path} such an object (or remove it); then precompact install if precompact\'s were among them',
                )
        places = {scope: _ours(path) for scope, path in files.items()}
        switched_off = _switched_off(loaded.root, home, plugin)
    except agent_settings.PastADouble as e:
        return Check("hooks", False, str(e), "write that number within a double's range (or remove it)")
    except agent_settings.Unreadable as e:
        # Claude Code ignores a settings file it cannot parse whole: the hooks it holds, too.
        return Check("hooks", False, str(e), "make it a regular file of JSON (or remove it)")
    if switched_off is not None:
        return switched_off
    where = [f"{scope} settings ({files[scope]})" for scope, events in places.items() if events] + (
        [f"plugin {plugin}"] if plugin else []
    )
    if not where:
        read = " or ".join(str(path) for path in files.values())
        return Check(
            "hooks",
            False,
            f"Claude Code's: not installed (read {read})",
            "precompact install (or the precompact plugin), if you use Claude Code",
        )
    if len(where) > 1:
        return Check(
            "hooks",
            False,
            f"installed twice ({', '.join(where)}): each compaction would be saved twice",
            "keep one: precompact uninstall --scope project|user, or claude plugin uninstall",
        )
    events = next((set(e) for e in places.values() if e), set(install.HOOKS))
    missing = sorted(set(install.HOOKS) - events)
    if missing:
        return Check("hooks", False, f"{where[0]} lacks {', '.join(missing)}", "precompact install (again)")
    return Check("hooks", True, f"{', '.join(install.HOOKS)} in {where[0]}")


def _switched_off(project: Path, home: Path, plugin: str | None) -> Check | None:
    """The hooks check when the settings files Claude Code merges keep it from running
    precompact's hooks, wherever they are installed (the hooks cannot say it: they do not run).
    `disableAllHooks`: the user's, project's and local files merge, the later one's value winning
    (seen with Claude Code 2.1.332: the user's true undone by a local false, not the other way),
    and a managed file's true wins over them all. `allowManagedHooksOnly`, read from managed files
    only: it stops every hook but the managed settings' own and those of plugins they enable."""
    merged: tuple[object, str, Path] | None = None
    managed_plugins: dict = {}
    only_managed: Path | None = None
    for scope, path in agent_settings.merged_settings_files(project, home):
        settings = agent_settings.settings_object(path)
        switch = settings.get("disableAllHooks")
        if switch is not None and (scope != "managed" or _switches_off(switch)):
            merged = (switch, scope, path)
        if scope == "managed":
            enabled = settings.get("enabledPlugins")
            managed_plugins.update(enabled if isinstance(enabled, dict) else {})
            if settings.get("allowManagedHooksOnly") is True:
                only_managed = path
    if merged is not None and _switches_off(merged[0]):
        switch, scope, path = merged
        return Check(
            "hooks",
            False,
            f"disableAllHooks is {'true' if switch is True else 'set'} in {path} ({scope} settings): "
            "Claude Code runs no hooks of settings files or plugins, precompact's among them, so no compaction is saved",
            f"remove disableAllHooks from {path}",
        )
    if only_managed is None or (plugin is not None and managed_plugins.get(plugin) is True):
        return None
    return Check(
        "hooks",
        False,
        f"allowManagedHooksOnly is set in {only_managed}: Claude Code runs only the managed settings' hooks "
        "and the plugins they enable, not precompact's, so no compaction is saved",
        f"ask whoever manages {only_managed} to enable the precompact plugin there (enabledPlugins), or to lift allowManagedHooksOnly",
    )


def _switches_off(switch: object) -> bool:
    """Claude Code's own test of a `disableAllHooks` value (JavaScript's strict comparisons: 0 is
    no false)."""
    return not (switch is None or switch is False or switch == "false")


def _claude_version() -> Check:
    """The version of the `claude` on PATH, read from where it is installed (npm's package.json
    beside it, or the native installer's versions/<version> file): doctor runs nothing."""
    claude = shutil.which("claude")
    if claude is None:
        return Check("Claude Code", False, "`claude` not on PATH", "install Claude Code, or add it to PATH")
    installed = Path(claude).resolve()
    found = re.search(r"(?:^|/)(\d+)\.(\d+)\.(\d+)$", str(installed))
    for folder in installed.parents:
        if found is not None:
            break
        try:
            package = json.loads((folder / "package.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        version = package.get("version") if isinstance(package, dict) else None
        found = re.fullmatch(r"(\d+)\.(\d+)\.(\d+)", version) if isinstance(version, str) else None
        break
    if found is None:
        return Check("Claude Code", False, f"cannot tell the version of {installed}", "reinstall Claude Code")
    version = tuple(int(n) for n in found.groups())
    text = ".".join(found.groups())
    low, high = PRECOMPACT_MISSED
    if low <= version <= high:
        return Check(
            "Claude Code",
            False,
            f"{text}: PreCompact does not fire on auto-compaction (#50467); "
            "precompact recovers those savepoints at SessionStart",
            "claude update",
        )
    return Check("Claude Code", True, text)


def _keypair_and_balance(loaded: configuration.Config) -> Check | None:
    if not loaded.chain_layer:
        return None
    from precompact.chain import rpc
    from precompact.chain import wire as chain

    try:
        keypair = chain.load_keypair(loaded.keypair)
    except chain.KeypairError as e:
        return Check("keypair", False, str(e), "precompact init, or set chain.keypair")
    check_cluster = f"check chain.cluster ({endpoint.shown(loaded.cluster)})"
    try:
        client = rpc.Cluster(loaded.cluster, RPC_TIMEOUT_SECONDS)
        lamports = client.call("getBalance", [str(keypair.pubkey()), {"commitment": "confirmed"}])["value"]
    except rpc.RpcError as e:
        return Check("cluster and balance", False, str(e), check_cluster)
    except (KeyError, TypeError) as e:
        said = f"the cluster's getBalance answer holds no balance ({type(e).__name__}: {quoting.inline(str(e))})"
        return Check("cluster and balance", False, said, check_cluster)
    if lamports < MIN_LAMPORTS:
        return Check(
            "cluster and balance",
            False,
            f"{keypair.pubkey()} holds {lamports / 1e9:g} SOL at {client.shown}",
            f"fund it: solana transfer {keypair.pubkey()} 0.05 (or precompact init --airdrop on devnet)",
        )
    return Check("cluster and balance", True, f"{keypair.pubkey()} holds {lamports / 1e9:g} SOL at {client.shown}")


def _recorded_url(loaded: configuration.Config) -> Check | None:
    """Whether pushes go to a URL the user approved (`git.url`), and whether the repository's own
    configuration now names another one for `git.remote` (read as data, never pushed to). The
    repository's URL is shown without its credentials (a token in `https://user:TOKEN@...`):
    doctor's output is pasted into issues, and git.url refuses them anyway."""
    if not loaded.git_layer:
        return None
    from precompact.boundary import git_env, quoting

    in_repository = git_env.remote_url(loaded.repository, loaded.remote)
    shown = endpoint.git_url_shown(in_repository) if in_repository is not None else None
    remote = quoting.inline(loaded.remote)
    # The credentials the shown URL leaves out are not lost: git.url refuses them, and the user's
    # own credential helper gives them to the push (git_env keeps the user's git configuration).
    helper = (
        " (as shown: its credentials, which git.url refuses, belong in a credential helper of your own git configuration, `git help gitcredentials`)"
        if shown != in_repository
        else ""
    )
    if loaded.url is None:
        named = quoting.inline(shown) if shown is not None and endpoint.HIDDEN not in shown else "<URL>"
        return Check(
            "git url",
            False,
            f"git.url is not recorded in {configuration.CONFIG_NAME}: pushes go to whatever remote {remote} names in the repository's git configuration",
            f"add url = {named} under [git] in {configuration.CONFIG_NAME}{helper}, then `precompact trust` (or `precompact init --force`)",
        )
    approved = quoting.inline(endpoint.git_url_shown(loaded.url))
    if shown is not None and shown != endpoint.git_url_shown(loaded.url):
        return Check(
            "git url",
            False,
            f"remote {remote} in the repository's git configuration is {quoting.inline(shown)}, not git.url {approved}; savepoints go only to git.url",
            f"if savepoints should go to the new URL, set git.url to it in {configuration.CONFIG_NAME}{helper} and run `precompact trust`",
        )
    if in_repository is not None and in_repository != loaded.url:
        return Check(
            "git url",
            True,
            f"savepoints go only to git.url {approved}, as approved; remote {remote} names the same URL with credentials, which precompact does not use (a push authenticates through your own git configuration: the git remote check says whether it does)",
        )
    return Check("git url", True, f"savepoints go only to git.url {approved}, as approved")


def _shared_chain(loaded: configuration.Config) -> Check | None:
    """Other projects on this machine that write this instance to the same branch or record (set
    up before `init` and `trust` refused it: ops.instance_collision): each hides the other's
    savepoints. Nothing to say when there are none."""
    from precompact.ops import instance_collision

    found = instance_collision.collisions(loaded)
    if not found:
        return None
    others = "; ".join(f"{quoting.path(c.other)} writes it to {c.written_to}" for c in found)
    renamed = shlex.quote(instance_collision.another_name(loaded.instance))
    return Check(
        "instance",
        False,
        f"{quoting.inline(loaded.instance)} is also another project's on this machine ({others}): two projects writing one chain hide each other's savepoints",
        f"give one of them another instance: `precompact init --force --instance {renamed}` there",
    )


def _remote(loaded: configuration.Config) -> Check | None:
    """A dry-run push of the savepoint branch (its remote refuses, or cannot be reached); before
    the first savepoint there is no branch to push, and the remote is only asked for its refs."""
    if not loaded.git_layer:
        return None
    from precompact.boundary import git_env
    from precompact.remote import gitstore

    target = gitstore.Target.of(loaded)
    url = loaded.url or git_env.remote_url(loaded.repository, loaded.remote)
    if url is None:
        return Check("git remote", False, f"no remote {loaded.remote} in {loaded.repository}", "check git.remote")
    try:
        repo = gitstore.open_repository(target)
    except gitstore.GitStoreError as e:
        return Check("git remote", False, str(e), "check git.repository")
    tip = gitstore.branch_tip(repo, target)
    # Through git_env.transport, as the worker's push: the one URL, none of the project's settings.
    command, args, options = (
        ("push", (f"{tip}:{target.ref}",), ("--dry-run", "--porcelain"))
        if tip is not None
        else ("ls-remote", ("refs/heads/*",), ("--heads",))
    )
    done = git_env.transport(Path(repo.git_dir), command, url, *args, options=options, timeout=GIT_TIMEOUT_SECONDS)
    if done.returncode != 0:
        reason = gitstore.refusal(done.stdout + done.stderr, done.returncode)
        return Check(
            "git remote",
            False,
            f"{command} to {loaded.remote} failed: {quoting.inline(reason)}",
            "check git.remote and its access",
        )
    shown = endpoint.git_url_shown(url)
    return Check(
        "git remote",
        True,
        f"{loaded.remote} ({shown}) accepts a dry-run push"
        if command == "push"
        else f"{loaded.remote} ({shown}) answers",
    )


def unreadable_here(loaded: configuration.Config) -> str | None:
    """`status`'s one line (unmarked: the text form puts ✗ before it, `--json` gives it as
    `unreadable_here`) when the age identity here opens none of what Layer 2 seals every copy to
    (`_identity`'s check): the savepoints sealed to them, another machine's and every copy on the
    remote, cannot be read or restored here; None when it opens one (or nothing is sealed)."""
    check = _identity(loaded)
    if check is None or check.ok:
        return None
    return (
        f"{check.detail}; the savepoints sealed to encryption.recipients (another machine's, every copy on "
        f"{loaded.remote}) cannot be read or restored here; fix: {check.fix}"
    )


def _identity(loaded: configuration.Config) -> Check | None:
    """Whether the identity opens what Layer 2 seals every copy to (`encryption.recipients`):
    read and parsed as Layer 2 reads it, then tried against each recipient. A file that is there
    but opens none of them is the backup that cannot be read on a new machine."""
    if not loaded.recipients:
        return None
    from precompact.remote import encryption

    keys = encryption.Keys.of(loaded)
    restore = "precompact key import FILE (the identity you backed up)"
    if keys.identity is None or not os.path.lexists(keys.identity):
        return Check(
            "encryption identity", False, f"{keys.identity} missing: the pushed copies cannot be read back", restore
        )
    try:
        opened = encryption.opened_recipients(encryption.load_identities(keys), keys.recipients)
    except encryption.IdentityExposed as e:
        return Check("encryption identity", False, str(e), f"chmod 600 {shlex.quote(str(keys.identity))}")
    except encryption.CryptoError as e:
        return Check("encryption identity", False, f"{e}: the pushed copies cannot be read back", restore)
    sealed_to = ", ".join(keys.recipients)
    if not opened:
        return Check(
            "encryption identity",
            False,
            f"{keys.identity} opens none of the recipients your savepoints are sealed to ({sealed_to}): the remote copies cannot be read here",
            restore,
        )
    return Check(
        "encryption identity",
        True,
        f"{keys.identity} opens {', '.join(opened)}, of the recipients savepoints are sealed to (encryption.recipients)",
    )


def logs_open_notice(loaded: configuration.Config) -> str | None:
    """`status`'s line while other users may change what is in logs/ (with the fix); None otherwise."""
    from precompact.boundary import logs_dir

    mode = logs_dir.others_may_change(loaded.logs)
    if mode is None:
        return None
    return (
        f"logs/ ({quoting.path(loaded.logs)}) can be changed by other users (mode {mode:o}): "
        f"run `chmod 700 {shlex.quote(str(loaded.logs))}`"
    )


def clock_behind_notice(loaded: configuration.Config) -> str | None:
    """`status`'s line while this clock is behind the newest savepoint's time; None otherwise."""
    from precompact.local import snapshot

    behind = snapshot.clock_behind(loaded.logs, loaded.instance)
    return f"{behind}; sync the clock (`precompact doctor` names it)" if behind else None


# What to do about a worker that cannot start: the reason says what to remove or make writable.
WORKER_FIX = "do what that names, then run `precompact flush`"


def worker_cannot_start(loaded: configuration.Config) -> str | None:
    """Why the background worker cannot start in this project, with the fix, in one line
    (PreCompact's line for the user); None when it can."""
    from precompact.ops import background

    cannot = background.cannot_start(loaded.root)
    if cannot is None:
        return None
    return f"the background worker could not start: {quoting.os_error(cannot)}; {WORKER_FIX}"


def _logs(loaded: configuration.Config) -> Check:
    """logs/ takes a write now (a probe file created and removed), and no other user may change
    what is in it."""
    from precompact.boundary import logs_dir

    shown = quoting.path(loaded.logs)
    refused = logs_dir.writable(loaded.logs)
    if isinstance(refused, FileNotFoundError) and not os.path.lexists(loaded.logs):
        # A project set up and never saved yet: nothing to refuse a write; the first save makes it.
        return Check("logs/", True, f"{shown} not made yet: the first savepoint makes it")
    if refused is not None:
        fix = "free space on its disk" if refused.errno in (errno.ENOSPC, errno.EDQUOT) else "make it writable"
        return Check(
            "logs/",
            False,
            f"{shown} cannot be written: {quoting.os_error(refused)}",
            f"{fix}, then precompact savepoint",
        )
    mode = logs_dir.others_may_change(loaded.logs)
    if mode is not None:
        return Check(
            "logs/",
            False,
            f"{shown} can be changed by other users (mode {mode:o}): they can remove or replace the index, snapshots and locks in it",
            f"chmod 700 {shlex.quote(str(loaded.logs))}",
        )
    return Check("logs/", True, f"{shown} takes writes, and only its owner may change it")


def _hook_failures(loaded: configuration.Config) -> Check:
    from precompact.ops import compaction

    standing = compaction.standing_failures(loaded)
    if standing is not None:
        return Check("hook failures", False, standing.said(), standing.fix())
    return Check("hook failures", True, "none logged since the newest savepoint was written")


def _clock(loaded: configuration.Config) -> Check | None:
    from precompact.local import snapshot

    behind = snapshot.clock_behind(loaded.logs, loaded.instance)
    if behind is not None:
        return Check("clock", False, behind, "sync the clock (timedatectl set-ntp true, or the system's NTP client)")
    return None


def _worker(loaded: configuration.Config) -> Check:
    from precompact.local import snapshot
    from precompact.ops import background

    cannot = background.cannot_start(loaded.root)
    if cannot is not None:  # every savepoint's Layers 2 and 3 would wait for it
        return Check("worker", False, f"the background worker cannot start: {quoting.os_error(cannot)}", WORKER_FIX)
    waiting = snapshot.queued_notice(loaded.logs)
    if waiting is not None:  # no ✓ while a savepoint exists only as a queue entry
        return Check("worker", False, waiting)
    saved = savepoint_log.savepoints(loaded.logs, loaded.instance)
    failed = [
        s
        for s in saved
        if (loaded.git_layer and s.layer_2 == savepoint_log.Layer2.FAILED)
        or (loaded.chain_layer and s.layer_3 == savepoint_log.Layer3.FAILED)
    ]
    if failed:
        return Check(
            "worker",
            False,
            f"{len(failed)} savepoint(s) failed a layer (first: {failed[0].sequence})",
            "precompact status, then precompact flush",
        )
    return Check("worker", True, f"{len(saved)} savepoint(s), none failed")


def _unindexed(loaded: configuration.Config) -> Check:
    """Snapshot files no index line names: a save killed between its snapshot and its line."""
    from precompact.local import snapshot

    found = snapshot.unindexed(loaded.logs)
    if found:
        return Check(
            "snapshots",
            False,
            f"{len(found)} snapshot file(s) in logs/{snapshot.SAVES_DIR}/ that no index line names "
            f"(a save killed before its index line; first: {found[0]})",
            f"the next save removes them once {snapshot.UNINDEXED_SNAPSHOT_SECONDS // 60} minutes old, or delete them",
        )
    return Check("snapshots", True, "every snapshot file has its index line")


def _expiring(loaded: configuration.Config, home: Path) -> Check:
    """Sessions Claude Code deletes within a week that no savepoint holds as they are. Where
    Claude Code's folder is not known, not checked, in words of its own: the hooks check above
    gives the reason and its fix once."""
    try:
        user_settings = agent_settings.settings_path("user", loaded.root, home)
    except user_roots.ClaudeFolderUnknown:
        return Check("sessions", False, SESSIONS_NOT_CHECKED)
    period = agent_settings.outside_object(user_settings).get("cleanupPeriodDays", CLEANUP_PERIOD_DAYS)
    if not isinstance(period, int):
        period = CLEANUP_PERIOD_DAYS
    from precompact.transcript import conversation

    saved = savepoint_log.savepoints(loaded.logs, loaded.instance)
    deadline = time.time() - (period - WARNING_DAYS) * 86_400
    expiring = [
        t
        for t in capture.transcripts(loaded.root, home)
        if t.stat().st_mtime < deadline
        and (said := conversation.last_said(t)) is not None
        and not any(s.last_said == said for s in saved)  # its own, or a copy of one (importer.py)
    ]
    if expiring:
        return Check(
            "sessions",
            False,
            f"{len(expiring)} session(s) Claude Code deletes within {WARNING_DAYS} days are not archived",
            "precompact import",
        )
    return Check("sessions", True, f"no unarchived session due for deletion within {WARNING_DAYS} days")
