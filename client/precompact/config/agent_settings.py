"""Where the agents keep their settings and MCP servers, and whether these name precompact's
(read only; `precompact install` writes them, config/install.py). Its own module because a
session's brief asks it at every start, whether to name the MCP tools: it imports nothing but
the standard library's json, math, os, collections.abc, pathlib and sys (and boundary/small_file and user_roots,
which import the standard library alone), and none of what installing needs.

Every file read here is outside input: one that cannot be read, is larger than
MAX_SETTINGS_BYTES or is not a JSON object names nothing. JSON is read as the agents read it
(`loads`: JavaScript's JSON.parse for Claude Code), never more leniently: a setting precompact
reads in a file the agent ignores whole is no setting. `read` is the one reader of the
agents' settings, hook, MCP and plugin files, for install and doctor too (an architecture test
holds every other module to it); what it owns is their caps and their decoding, the open and its
checks are boundary/small_file's: a committed link to a FIFO or a terminal would hang the
SessionStart hook and the plugin's launcher, a link to /dev/zero would fill the memory."""

from __future__ import annotations

import json
import math
import os
import sys
from collections.abc import Mapping
from pathlib import Path

from precompact.boundary import small_file, user_roots

PLUGIN_NAME = "precompact"
MCP_SERVER = "precompact"
CLAUDE_STATE = ".claude.json"
# An agent's settings or MCP file is a few kilobytes; one larger is not read.
MAX_SETTINGS_BYTES = 1 << 20
# ~/.claude.json is Claude Code's own state (every project it ran in): it grows past a settings
# file's size, and a user-scope MCP server lives there.
MAX_STATE_BYTES = 64 << 20


def size_limit(path: Path) -> int:
    return MAX_STATE_BYTES if path.name == CLAUDE_STATE else MAX_SETTINGS_BYTES


class Unreadable(Exception):
    """An agent's file that is there but cannot be read as one; the message names it and why."""


def read(path: Path) -> bytes | None:
    """The bytes of the agent's file at `path` (a link followed: a user's settings may live in
    their dotfiles), None when there is none; read through boundary/small_file (without
    blocking, a regular file only) up to its `size_limit`, Unreadable otherwise."""
    limit = size_limit(path)
    try:
        return small_file.read(path, limit, follow_links=True)[0]
    except (FileNotFoundError, NotADirectoryError):  # no file there (a file where a directory goes)
        return None
    except small_file.NotRegular:
        raise Unreadable(f"{path} is not a regular file") from None
    except small_file.TooLarge:
        raise Unreadable(f"{path} is larger than {limit} bytes") from None
    except small_file.Refused as e:
        raise Unreadable(str(e)) from None
    except OSError as e:
        from precompact.boundary import quoting  # only on failure: the hook's fast path reads this module

        raise Unreadable(f"cannot read {path}: {quoting.os_error(e)}") from None


class NotJson(Unreadable):
    """An agent's file that is not JSON its agent reads: the agent ignores all of it."""


def loads(text: str, path: Path) -> object:
    """The JSON value of `text` (the agent's file at `path`), read as Claude Code 2.1.332 reads its
    settings: JavaScript's JSON.parse after one leading byte order mark. NotJson for what Python's
    json takes and JSON.parse refuses (NaN, Infinity, -Infinity); a number past a double's range
    is infinite, as JSON.parse reads it (a value no JSON can hold: `refuse_infinity`)."""

    def refuse_constant(name: str) -> object:
        raise ValueError(f"{name} is not a JSON value")

    def whole(number: str) -> int | float:
        try:
            return int(number)
        except ValueError:  # more digits than Python converts: far past a double's range
            return -math.inf if number.startswith("-") else math.inf

    try:
        return json.loads(text.removeprefix("\ufeff"), parse_constant=refuse_constant, parse_int=whole)
    except ValueError as e:  # json.JSONDecodeError among them
        from precompact.boundary import quoting  # only on failure: the hook's fast path reads this module

        raise NotJson(f"{path} is not valid JSON ({quoting.inline(str(e))})") from None
    except RecursionError:
        raise NotJson(f"{path} is not valid JSON (nested too deep to read)") from None


class PastADouble(Unreadable):
    """An agent's settings holding a number past a double's range (1e400): Claude Code reads it
    as Infinity, which no JSON can hold (install could not write the file back) and which its
    settings refuse where they take a number (2.1.332 ignored a whole file for
    `"cleanupPeriodDays": 1e400`, hooks included)."""


def refuse_infinity(document: object, path: Path) -> None:
    """PastADouble when `document` (read by `loads`) holds an infinite number."""
    try:
        json.dumps(document, allow_nan=False)
    except ValueError:
        raise PastADouble(
            f"{path} holds a number past a double's range (as 1e400), which Claude Code reads as Infinity: no JSON "
            "can hold it, and Claude Code may ignore the whole file for it (it does for cleanupPeriodDays)"
        ) from None


def read_text(path: Path) -> str | None:
    """`read`, as UTF-8 text."""
    data = read(path)
    try:
        return None if data is None else data.decode("utf-8")
    except UnicodeDecodeError:
        raise Unreadable(f"{path} is not UTF-8 text") from None


def outside_object(path: Path) -> dict:
    """The JSON object in `path` (a project's file is outside input), or {} when there is none to
    read: no file, not `read`able, not a JSON object its agent reads (`loads`). The standard
    library's json: the plugin's launcher imports this module before any dependency (outside_json's
    orjson) exists."""
    try:
        text = read_text(path)
        document = loads(text, path) if text is not None else {}
    except Unreadable:
        return {}
    return document if isinstance(document, dict) else {}


def settings_path(
    scope: str,
    project: Path,
    home: Path | None = None,
    environ: Mapping[str, str] = os.environ,
    *,
    in_claude_code: bool = False,
) -> Path:
    """Claude Code's settings file of `scope` (`in_claude_code`: see user_roots.claude_config_dir)."""
    return (
        project_folder(project) / "settings.json"
        if scope == "project"
        else user_folder(home, environ, in_claude_code=in_claude_code) / "settings.json"
    )


def project_folder(project: Path) -> Path:
    """Claude Code's folder in `project` (its project settings)."""
    return project / user_roots.CLAUDE_FOLDER


def user_folder(
    home: Path | None = None, environ: Mapping[str, str] = os.environ, *, in_claude_code: bool = False
) -> Path:
    """Claude Code's folder for the user: `~/.claude`, or `$CLAUDE_CONFIG_DIR` (in your own shell
    or Claude Code's session; boundary/user_roots.claude_folder decides, and raises
    ClaudeFolderUnknown where it is set but not followed)."""
    return Path(user_roots.claude_folder(str(home or Path.home()), environ, in_claude_code=in_claude_code))


def sessions_folder(home: Path | None = None) -> Path:
    """Where Claude Code 2.1.332 keeps its sessions: `projects/` in its user folder."""
    return user_folder(home) / "projects"


# Where Claude Code 2.1.332 reads managed (policy) settings: `managed-settings.json`, then each
# `*.json` of `managed-settings.d/` in name order (Windows' places are not read here).
MANAGED_DIRECTORY = (
    Path("/Library/Application Support/ClaudeCode") if sys.platform == "darwin" else Path("/etc/claude-code")
)


def merged_settings_files(project: Path, home: Path | None = None) -> list[tuple[str, Path]]:
    """(scope, path) of every settings file Claude Code 2.1.332 merges for a session started in
    `project`, in its order: user, project, local (`.claude/settings.local.json`, which Claude Code
    keeps out of git), managed (`MANAGED_DIRECTORY`). A managed folder that cannot be listed is
    Unreadable (what it holds cannot be vouched for). Settings it takes from elsewhere (`--settings`,
    an MDM policy, a server) are no file here."""
    drop_ins = MANAGED_DIRECTORY / "managed-settings.d"
    try:
        with os.scandir(drop_ins) as entries:
            # As Claude Code lists them: regular files and links, named *.json, not hidden.
            names = sorted(
                e.name
                for e in entries
                if (e.is_file() or e.is_symlink()) and e.name.endswith(".json") and not e.name.startswith(".")
            )
    except (FileNotFoundError, NotADirectoryError):
        names = []
    except OSError as e:
        from precompact.boundary import quoting  # only on failure: the hook's fast path reads this module

        raise Unreadable(f"cannot list {drop_ins}: {quoting.os_error(e)}") from None
    return [
        ("user", settings_path("user", project, home)),
        ("project", settings_path("project", project, home)),
        ("local", project_folder(project) / "settings.local.json"),
        ("managed", MANAGED_DIRECTORY / "managed-settings.json"),
        *(("managed", drop_ins / name) for name in names),
    ]


def settings_object(path: Path) -> dict:
    """The settings in the agent's file at `path` as the agent reads them: {} for no file, an
    empty one or one that holds no JSON object; Unreadable for a file the agent cannot read
    (NotJson), which it then ignores whole, or may ignore (PastADouble)."""
    text = read_text(path)
    document = loads(text, path) if text is not None and text.strip() else {}
    refuse_infinity(document, path)
    return document if isinstance(document, dict) else {}


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
    writes `mcpServers` there): ~/.claude.json, not ~/.claude/settings.json; with
    `$CLAUDE_CONFIG_DIR` (`user_folder`), `.claude.json` in that folder."""
    given = user_roots.claude_config_dir()
    return (Path(given) if given else home or Path.home()) / CLAUDE_STATE


def mcp_commands(project: Path, home: Path | None = None, *, with_user: bool = True) -> dict[Path, list[str]]:
    """The command line (command, then its args) of each `precompact` MCP server Claude Code would
    start in `project`: the project's `.mcp.json`, and `with_user`, ~/.claude.json's user scope and
    its local scope for `project`."""
    found = {}
    for path in (mcp_json_path(project), *([user_mcp_path(home)] if with_user else [])):
        document = outside_object(path)
        projects = document.get("projects") if path.name == CLAUDE_STATE else None
        local = projects.get(str(project)) if isinstance(projects, dict) else None
        for scope in (document, local if isinstance(local, dict) else {}):
            servers = scope.get("mcpServers")
            server = servers.get(MCP_SERVER) if isinstance(servers, dict) else None
            if isinstance(server, dict) and isinstance(server.get("command"), str):
                args = server.get("args")
                words = args if isinstance(args, list) and all(isinstance(w, str) for w in args) else []
                found[path] = [server["command"], *words]
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
            servers = tomllib.loads(read_text(config) or "").get("mcp_servers")
        except (Unreadable, ValueError):
            return False
        return isinstance(servers, dict) and MCP_SERVER in servers
    if agent == "gemini":
        for path in (project / ".gemini" / "settings.json", home / ".gemini" / "settings.json"):
            servers = outside_object(path).get("mcpServers")
            if isinstance(servers, dict) and MCP_SERVER in servers:
                return True
        return False
    try:
        return bool(mcp_commands(project, home)) or enabled_plugin(home) is not None
    except user_roots.ClaudeFolderUnknown:
        # The user's files are not known (a hook never fails on it): the project's registration alone counts.
        return mcp_json_path(project) in mcp_commands(project, home, with_user=False)
