"""`precompact install` / `uninstall`: our command hooks in each agent's own hook file: Claude
Code's settings.json, Codex CLI's hooks.json, Gemini CLI's settings.json. All three shape them
alike (`{"hooks": {Event: [{matcher?, hooks: [{type: "command", command, timeout}]}]}}`).

Only entries whose command runs `precompact hook` are ours; everything else in the file is kept
as it was (same keys, values and order). A file that is not valid JSON, or whose `hooks` is not
shaped as the agent expects, is refused and never overwritten. A file that uninstalling leaves
empty is removed, not left as `{}`.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from precompact.boundary import atomic_file
from precompact.errors import PrecompactError

# Claude Code 2.1.332 reads project settings from the directory it starts in, not from the
# repository root; user settings apply wherever it starts, and there the hook finds the project
# by walking up to its .precompact.toml (and does nothing outside a precompact project).
PROJECT_SCOPE_ADVICE = (
    "note: Claude Code runs these hooks only when started in {root} itself, not in a subdirectory; "
    "`precompact install --scope user` runs them wherever it starts (they do nothing outside a precompact project)"
)

# Event -> (matcher, timeout in seconds). SessionStart's matcher is filled from the configuration;
# SessionEnd has none (every reason a session ends), and Claude Code gives all its SessionEnd hooks
# 1.5 s together whatever the timeout says.
HOOKS = {
    "PreCompact": ("auto|manual", 60),
    "PostCompact": ("auto|manual", 15),
    "SessionStart": (None, 30),
    "SessionEnd": ("", 5),
}
# Codex CLI 0.171.0: the same events and fields; no matchers (the hook filters sources itself).
# Codex caps SessionEnd at 3 s whatever the timeout says.
CODEX_HOOKS = {"PreCompact": 60, "PostCompact": 15, "SessionStart": 30, "SessionEnd": 3}
# Gemini CLI 0.61.0 (timeouts in milliseconds): PreCompress before a compression (and, as
# observed, before every model round), BeforeAgent to hand the brief over after a compression
# (Gemini has no SessionStart source `compact`), SessionEnd as for Claude Code. No SessionStart:
# Gemini puts its context before the prompt, and a resume then drops that prompt.
GEMINI_HOOKS = {"PreCompress": 60_000, "BeforeAgent": 30_000, "SessionEnd": 5_000}
AGENTS = ("claude", "codex", "gemini")


class InstallError(PrecompactError):
    """settings.json cannot be changed safely; the message says why and what to do."""


@dataclass(frozen=True)
class Change:
    path: Path
    before: dict
    after: dict

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def text(self) -> str:
        return json.dumps(self.after, indent=2, ensure_ascii=False) + "\n"


def settings_path(scope: str, project: Path, home: Path | None = None) -> Path:
    return (project if scope == "project" else (home or Path.home())) / ".claude" / "settings.json"


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
    return settings_path(scope, project, home)


# What the hooks run: found on PATH wherever Claude Code runs, so a settings.json committed to a
# repository works on every machine that has precompact installed (pip, pipx, uv tool).
COMMAND = "precompact"
PLUGIN_NAME = "precompact"


def not_on_path_warning(path: str | None = None) -> str | None:
    """A line for when Claude Code, with this PATH, would not find the hooks' command."""
    if shutil.which(COMMAND, path=path) is not None:
        return None
    beside = Path(sys.executable).with_name(COMMAND)
    where = f" (this one is {beside}: add {beside.parent} to PATH)" if beside.is_file() else ""
    return f"warning: `{COMMAND}` is not on PATH, so Claude Code cannot run these hooks{where}; install precompact with pipx or pip where PATH finds it"


def enabled_plugin(home: Path | None = None) -> str | None:
    """The id of the precompact plugin if it is enabled in Claude Code's user settings: its hooks
    already run in every project."""
    try:
        settings = json.loads(settings_path("user", Path(), home).read_text(encoding="utf-8"))
        enabled = settings["enabledPlugins"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not isinstance(enabled, dict):
        return None
    return next((plugin for plugin, on in enabled.items() if on is True and plugin.split("@")[0] == PLUGIN_NAME), None)


def is_ours(handler) -> bool:
    if not isinstance(handler, dict) or not isinstance(handler.get("command"), str):
        return False
    try:
        words = shlex.split(handler["command"])
    except ValueError:
        return False
    if len(words) < 2 or Path(words[0]).name != "precompact" or words[1] != "hook":
        return False
    return words[2:] == [] or (len(words) == 4 and words[2] == "--agent" and words[3] in AGENTS)


def plan_install(path: Path, command: str, session_start_sources: tuple[str, ...], agent: str = "claude") -> Change:
    before = _read(path)
    after = _without_ours(before)
    hooks = after.setdefault("hooks", {})
    run = f"{shlex.quote(command)} hook" + ("" if agent == "claude" else f" --agent {agent}")
    for event, matcher, handler in _entries(agent, session_start_sources):
        entry = {
            **({} if matcher is None else {"matcher": matcher}),
            "hooks": [{"type": "command", "command": run, **handler}],
        }
        hooks.setdefault(event, []).append(entry)
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


def apply(change: Change) -> None:
    """Writes the new settings atomically, keeping the file's mode; removes a file left empty."""
    if not change.after and change.before:
        change.path.unlink(missing_ok=True)
        return
    mode = change.path.stat().st_mode & 0o777 if change.path.exists() else 0o644
    atomic_file.write(change.path, change.text().encode("utf-8"), mode)


def _read(path: Path) -> dict:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as e:
        raise InstallError(f"cannot read {path}: {e}") from None
    if not text.strip():
        return {}
    try:
        settings = json.loads(text)
    except ValueError as e:
        raise InstallError(
            f"{path} is not valid JSON ({e}); fix it by hand, precompact will not overwrite it"
        ) from None
    if not isinstance(settings, dict):
        raise InstallError(f"{path} must hold a JSON object; fix it by hand, precompact will not overwrite it")
    hooks = settings.get("hooks", {})
    if not isinstance(hooks, dict) or not all(isinstance(groups, list) for groups in hooks.values()):
        raise InstallError(
            f'{path}: "hooks" must map event names to lists; fix it by hand, precompact will not overwrite it'
        )
    return settings


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

MCP_SERVER = "precompact"
MCP_TOOLS = tuple(f"mcp__{MCP_SERVER}__{tool}" for tool in ("recall", "show", "savepoints"))


def mcp_json_path(project: Path) -> Path:
    return project / ".mcp.json"


# Whose is each file install writes in a project. `.mcp.json` names this machine's precompact by
# absolute path (docs/sessions.md): this user's, so install keeps it out of git status. A hook
# file runs `precompact` from PATH, the same on every teammate's machine (docs/setup.md), so the
# user decides: install says, once, that it is not in git.
PER_USER = (".mcp.json",)


def shared_file_note(path: str) -> str:
    return f"note: {path} is untracked: commit it to give your team these hooks, or add it to .git/info/exclude to keep them yours"


def plan_mcp_server(path: Path, command: str) -> Change:
    """The project's `.mcp.json` with the server `precompact mcp` (other servers kept)."""
    before = _read_object(path)
    after = json.loads(json.dumps(before))
    servers = after.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise InstallError(f'{path}: "mcpServers" must be an object; fix it by hand, precompact will not overwrite it')
    servers[MCP_SERVER] = {"type": "stdio", "command": command, "args": ["mcp"]}
    return Change(path, before, after)


def with_mcp_approval(change: Change) -> Change:
    """The settings change, also approving the project's `.mcp.json` server (Claude Code asks
    before starting a project server otherwise) and allowing its read-only tools."""
    after = json.loads(json.dumps(change.after))
    enabled = after.setdefault("enabledMcpjsonServers", [])
    permissions = after.setdefault("permissions", {})
    allowed = permissions.setdefault("allow", []) if isinstance(permissions, dict) else None
    if not isinstance(enabled, list) or not isinstance(allowed, list):
        raise InstallError(
            f'{change.path}: "enabledMcpjsonServers" and "permissions.allow" must be lists; fix it by hand, precompact will not overwrite it'
        )
    for value, into in ((MCP_SERVER, enabled), *((tool, allowed) for tool in MCP_TOOLS)):
        if value not in into:
            into.append(value)
    return Change(change.path, change.before, after)


def _read_object(path: Path) -> dict:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as e:
        raise InstallError(f"cannot read {path}: {e}") from None
    try:
        value = json.loads(text) if text.strip() else {}
    except ValueError as e:
        raise InstallError(
            f"{path} is not valid JSON ({e}); fix it by hand, precompact will not overwrite it"
        ) from None
    if not isinstance(value, dict):
        raise InstallError(f"{path} must hold a JSON object; fix it by hand, precompact will not overwrite it")
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
    """The project's `.mcp.json` without the server `install --mcp` added."""
    before = _read_object(path)
    after = json.loads(json.dumps(before))
    servers = after.get("mcpServers")
    if isinstance(servers, dict) and MCP_SERVER in servers:
        del servers[MCP_SERVER]
        if not servers:
            del after["mcpServers"]
    return Change(path, before, after)
