"""Where the agents keep their settings and MCP servers, and whether these name precompact's
(read only; `precompact install` writes them, config/install.py). Its own module because a
session's brief asks it at every start, whether to name the MCP tools: it imports nothing but
the standard library's json, os and pathlib, and boundary/small_file (reads that never wait on a FIFO), and none of what installing needs.

Every file read here is outside input: one that cannot be read, is larger than
MAX_SETTINGS_BYTES or is not a JSON object names nothing."""

from __future__ import annotations

import json
import os
from pathlib import Path

from precompact.boundary import small_file

PLUGIN_NAME = "precompact"
MCP_SERVER = "precompact"
CLAUDE_STATE = ".claude.json"
# An agent's settings or MCP file is a few kilobytes; one larger is not read.
MAX_SETTINGS_BYTES = 1 << 20


def settings_path(scope: str, project: Path, home: Path | None = None) -> Path:
    return (project if scope == "project" else (home or Path.home())) / ".claude" / "settings.json"


def enabled_plugin(home: Path | None = None) -> str | None:
    """The id of the precompact plugin if it is enabled in Claude Code's user settings: its hooks
    already run in every project."""
    enabled = outside_object(settings_path("user", Path(), home)).get("enabledPlugins")
    if not isinstance(enabled, dict):
        return None
    return next((plugin for plugin, on in enabled.items() if on is True and plugin.split("@")[0] == PLUGIN_NAME), None)


def mcp_json_path(project: Path) -> Path:
    return project / ".mcp.json"


def user_mcp_path(home: Path | None = None) -> Path:
    """Where Claude Code 2.1.332 keeps user-scope MCP servers (`claude mcp add --scope user`
    writes `mcpServers` there): ~/.claude.json, not ~/.claude/settings.json."""
    return (home or Path.home()) / CLAUDE_STATE


def mcp_commands(project: Path, home: Path | None = None) -> dict[Path, str]:
    """The command of each `precompact` MCP server Claude Code would start in `project`: the
    project's `.mcp.json`, ~/.claude.json's user scope and its local scope for `project`."""
    found = {}
    for path in (mcp_json_path(project), user_mcp_path(home)):
        document = outside_object(path)
        projects = document.get("projects") if path.name == CLAUDE_STATE else None
        local = projects.get(str(project)) if isinstance(projects, dict) else None
        for scope in (document, local if isinstance(local, dict) else {}):
            servers = scope.get("mcpServers")
            server = servers.get(MCP_SERVER) if isinstance(servers, dict) else None
            if isinstance(server, dict) and isinstance(server.get("command"), str):
                found[path] = server["command"]
    return found


def mcp_installed(agent: str, project: Path, home: Path | None = None) -> bool:
    """Whether `agent` offers precompact's MCP tools in `project`: a server named `precompact`
    where the agent reads its servers (for Claude Code also the plugin, which brings its own)."""
    home = home or Path.home()
    if agent == "codex":
        import tomllib

        codex_home = os.environ.get("CODEX_HOME")
        config = (Path(codex_home) if codex_home else home / ".codex") / "config.toml"
        try:
            servers = tomllib.loads(small_file.read(config, MAX_SETTINGS_BYTES, follow_links=True)[0].decode()).get(
                "mcp_servers"
            )
        except (OSError, ValueError):
            return False
        return isinstance(servers, dict) and MCP_SERVER in servers
    if agent == "gemini":
        for path in (project / ".gemini" / "settings.json", home / ".gemini" / "settings.json"):
            servers = outside_object(path).get("mcpServers")
            if isinstance(servers, dict) and MCP_SERVER in servers:
                return True
        return False
    return bool(mcp_commands(project, home)) or enabled_plugin(home) is not None


def outside_object(path: Path) -> dict:
    """The JSON object in `path` (a project's file is outside input), or {} when there is none to
    read: no larger than MAX_SETTINGS_BYTES, nested no deeper than json's recursion takes. The
    standard library's json: the plugin's launcher imports this module before any dependency
    (outside_json's orjson) exists."""
    try:
        data, _ = small_file.read(path, MAX_SETTINGS_BYTES, follow_links=True)
    except OSError:  # missing, larger than MAX_SETTINGS_BYTES, or a FIFO or device (never waited on)
        return {}
    try:
        document = json.loads(data)
    except (ValueError, RecursionError):
        return {}
    return document if isinstance(document, dict) else {}
