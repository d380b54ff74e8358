"""precompact's user-level roots, decided here alone: the user's home, and the XDG base
directories under which it keeps what no project may write (the approvals of `.precompact.toml`
in the configuration home, the machine key and its own git directories in the state home, the
projects registry in the data home), with the same values handed to git and to the worker.

Those roots come from the environment (HOME, XDG_*), and an agent's environment is the project's
to set (Claude Code's `env` in `.claude/settings.json`, a server's in `.mcp.json`). A root the
project points into its own tree is a root the project writes: an approval it forged, a git
configuration naming its filter. So:
- everywhere, as the XDG specification says, a value that is not an absolute path is ignored
  (an empty one is unset): the default stands in;
- in the modes the agent starts (the hook, the worker, the MCP server), `confine` also refuses a
  value that lies in the project (the directory of its `.precompact.toml`, or its git work tree;
  never the user's home, nor a folder holding it: `project_places`),
  judged by every prefix of the path resolved, so that no symbolic link the project holds can
  lead out of it or into it; it puts the default in the process's environment instead (every
  reader, and every child, then sees only that) and names what it refused, which the caller logs.
The same holds for PATH, where git, ssh and credential helpers are looked up: its entries that
are relative or lie in the project are dropped (silently: an activated virtual environment of the
project's own puts one there).
Every other variable precompact, or a program it starts, reads from the environment is classified
here, once (docs/security.md, "The agent's environment"): CONFINED, a place that would steer a
reader (the CA certificates TLS trusts, the ssh agent, temporary files, the session bus, the
Claude Code plugin's folders, Codex CLI's folder), refused by `confine` as a root is (relative,
or in the project) and unset, so the reader's own default stands; DROPPED, never honoured in
those modes (where TLS keys are written), kept in a command the user runs in their own shell;
KEPT, handed on as they are, each with why (pip's: only those that say where and how to fetch). git_env
and processes hand a child only classified variables (tests/python/test_user_roots.py fails on
one that is not).
The defaults: the home the password database gives this user (never taken from the environment
there), and under the home in force `.config`, `.local/state`, `.local/share`, `.cache`; the
runtime directory has none (private_file then uses the state directory). A value equal to its
default is always the default, and a home that is itself a git work tree (dotfiles) is never the
project (`project_places`): its ssh agent, `~/.local/bin` and Claude Code's folders keep working.

Standard library only (`os`, `pwd`): the hook's quick path reads the approvals through this.
"""

from __future__ import annotations

import os
import pwd
from collections.abc import Iterable, Mapping, MutableMapping

from precompact.errors import PrecompactError

# Each base directory, and its default under the home in force (XDG Base Directory spec).
BASES = {
    "XDG_CONFIG_HOME": (".config",),
    "XDG_STATE_HOME": (".local", "state"),
    "XDG_DATA_HOME": (".local", "share"),
    "XDG_CACHE_HOME": (".cache",),
}
RUNTIME = "XDG_RUNTIME_DIR"
# Checked by `confine` in this order: HOME first, since the bases' defaults lie under it.
ROOTS = ("HOME", *BASES, RUNTIME)
# Where programs are looked up: confined entry by entry (`_confine_path`).
SEARCH_PATH = "PATH"

# A place that steers what reads it, and who reads it: in the modes the agent starts, refused when
# it is relative or lies in the project, then unset (the reader's default stands), and logged.
CONFINED = {
    "SSL_CERT_FILE": "the CA certificates OpenSSL trusts: git's https pushes, the RPC calls (httpx)",
    "SSL_CERT_DIR": "a directory of CA certificates, read as SSL_CERT_FILE is",
    "REQUESTS_CA_BUNDLE": "the CA certificates pip trusts (the plugin's preparation)",
    "PIP_CERT": "the CA certificates pip trusts, read as REQUESTS_CA_BUNDLE is",
    "SSH_AUTH_SOCK": "the ssh agent git's ssh asks to sign a push as you",
    "TMPDIR": "where git and Python write temporary files",
    "DBUS_SESSION_BUS_ADDRESS": "the session bus (its path=, dir=, tmpdir=), where a credential helper finds your keyring",
    "CLAUDE_PLUGIN_DATA": "the Claude Code plugin's data folder, whose prepared precompact the launcher runs",
    "CLAUDE_CONFIG_DIR": "Claude Code's folder, where the launcher looks for that data folder outside a hook, whose "
    "settings.json install writes, doctor reads and the plugin's hooks read (whether they stand down), and whose "
    "projects/ holds the sessions import, doctor and savepoint read and uncompact writes (never in another "
    "agent's session: `claude_folder`)",
    "CODEX_HOME": "Codex CLI's folder: a hook reads its config.toml (whether the brief names the MCP tools)",
}
# The variable each agent sets for the commands its model runs (Claude Code's Bash tool:
# CLAUDECODE; GEMINI_CLI; Codex's CODEX_THREAD_ID; OPENCODE): a command whose environment holds
# one runs in that agent's session, an environment the project's files can set
# (config/settings.in_agent_session). A project's settings can set a variable, never remove one
# the agent sets.
AGENT_SESSION_MARKERS = ("CLAUDECODE", "GEMINI_CLI", "CODEX_THREAD_ID", "OPENCODE")
# Claude Code's folder's name, in the home (its user folder, unless CLAUDE_CONFIG_DIR names
# another: `claude_folder`) and in a project (its project settings): named here alone
# (tests/python/test_architecture.py).
CLAUDE_FOLDER = ".claude"
# Claude Code's own defaults for its CONFINED folders, under the password database's home: kept
# wherever the project is (a home that is itself a git work tree, where the agent starts in it).
CONFINED_DEFAULTS = {
    "CLAUDE_CONFIG_DIR": (CLAUDE_FOLDER,),
    "CLAUDE_PLUGIN_DATA": (CLAUDE_FOLDER, "plugins", "data"),
}
# CONFINED variables whose reader takes an empty value as a place: the directory it starts in
# (Claude Code 2.1.332 with CLAUDE_CONFIG_DIR="" keeps its sessions in `<cwd>/projects/`, seen),
# which is the project. Refused as a relative value is, and, refused, left empty rather than
# unset: the reader outside precompact (Claude Code) still reads the place it names, so its
# default would be a guess (`claude_config_dir` takes an empty value as not known).
EMPTY_IS_HERE = ("CLAUDE_CONFIG_DIR",)
# The agents other than Claude Code (AGENT_SESSION_MARKERS but CLAUDECODE): in their sessions the
# project's files may set any variable, CLAUDE_CONFIG_DIR among them.
OTHER_AGENT_MARKERS = tuple(marker for marker in AGENT_SESSION_MARKERS if marker != "CLAUDECODE")
# Read by a program precompact starts, and never honoured in the modes the agent starts (a hook,
# the worker, the MCP server, a command in an agent's session): unset, logged. A command in the
# user's own shell keeps it (`confine`'s `agent_started`).
DROPPED = {
    "SSLKEYLOGFILE": "where Python's ssl, httpx and libcurl write every TLS session's keys",
}
# Handed on as the agent's environment gives them, and why that is safe. (PRECOMPACT_* variables
# are config/settings.AGENT_KEPT_OVERRIDES's; PYTHON* ones are read by no Python of precompact's:
# each runs isolated, `-I`.)
KEPT = {
    "USER": "a name, no place",
    "LOGNAME": "a name, no place",
    "LANG": "the locale's name (git runs with LC_ALL=C)",
    "LC_ALL": "the locale's name",
    "LC_CTYPE": "the locale's name",
    **{
        proxy: "the route to a remote, not what is trusted there: TLS is checked against the CA certificates "
        "(confined), git's and the RPC's answers against the roots"
        for proxy in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")
    },
    "no_proxy": "which hosts skip the proxy",
    "NO_PROXY": "which hosts skip the proxy",
    # pip's settings that say only where and how the plugin's preparation fetches: it installs
    # `--require-hashes` from requirements.hashes.lock, so a mirror, a folder or a route can make
    # it fail, never install another file. Every other PIP_* (PIP_REQUIREMENT, PIP_CONSTRAINT,
    # PIP_TARGET, PIP_PREFIX, PIP_CONFIG_FILE, PIP_NO_DEPS...) says what is installed or where,
    # and the agent's environment is the project's to set: none reaches pip (PIP_HANDED).
    "PIP_INDEX_URL": "the package index pip fetches the pinned wheels from (a mirror): each checked by its hash",
    "PIP_EXTRA_INDEX_URL": "more package indexes, read as PIP_INDEX_URL is",
    "PIP_NO_INDEX": "fetch from no index (offline, with PIP_FIND_LINKS)",
    "PIP_FIND_LINKS": "a folder or page of wheels, read as PIP_INDEX_URL is: each checked by its hash",
    "PIP_TRUSTED_HOST": "an index host reached without TLS checks: its wheels are still checked by their hash",
    "PIP_PROXY": "the route to the index, as https_proxy is",
    "PIP_TIMEOUT": "how long pip waits for the index",
    "PIP_DEFAULT_TIMEOUT": "PIP_TIMEOUT's other name",
    "PIP_RETRIES": "how often pip retries the index",
    "PIP_NO_CACHE_DIR": "not to use pip's cache (which lies under the confined XDG_CACHE_HOME)",
}
# pip's settings a Python child is handed (processes.PYTHON_KEPT, for the plugin's preparation):
# exactly those classified above, KEPT (where and how to fetch) or CONFINED (PIP_CERT), so the
# list handed on and the reasons cannot differ.
PIP_HANDED = tuple(name for name in (*CONFINED, *KEPT) if name.startswith("PIP_"))
# Prefixes of variables handed to a Python child (processes.PYTHON_KEPT_PREFIXES), and why.
KEPT_PREFIXES = {
    "PRECOMPACT_": "precompact's own settings: a hook keeps only config/settings.AGENT_KEPT_OVERRIDES",
    "CLAUDE_": "the Claude Code plugin's options and folders (the folders confined above)",
}


def classified(name: str) -> bool:
    """Whether `name` is a variable this module decided: a root, PATH, or one of the tables."""
    return name in (*ROOTS, SEARCH_PATH, *CONFINED, *DROPPED, *KEPT) or name.startswith(tuple(KEPT_PREFIXES))


class NoHome(PrecompactError):
    """The password database has no home for this user, and the environment gives none usable."""


def password_home() -> str | None:
    """This user's home as the password database gives it (None: no entry)."""
    try:
        return pwd.getpwuid(os.geteuid()).pw_dir
    except KeyError:
        return None


def home(environ: Mapping[str, str] = os.environ) -> str:
    """The user's home: HOME when it is an absolute path, else the password database's."""
    value = environ.get("HOME", "")
    if os.path.isabs(value):
        return value
    found = password_home()
    if found is None or not os.path.isabs(found):
        raise NoHome(f"uid {os.geteuid()} has no home directory: set HOME to an absolute directory of your own")
    return found


def base(name: str, environ: Mapping[str, str] = os.environ) -> str:
    """The XDG base directory `name` (a key of BASES): its variable when that is an absolute
    path, else its default under `home`."""
    value = environ.get(name, "")
    return value if os.path.isabs(value) else os.path.join(home(environ), *BASES[name])


def config_home(environ: Mapping[str, str] = os.environ) -> str:
    return base("XDG_CONFIG_HOME", environ)


def state_home(environ: Mapping[str, str] = os.environ) -> str:
    return base("XDG_STATE_HOME", environ)


def data_home(environ: Mapping[str, str] = os.environ) -> str:
    return base("XDG_DATA_HOME", environ)


def runtime_home(environ: Mapping[str, str] = os.environ) -> str | None:
    """XDG_RUNTIME_DIR when it is an absolute path to a directory; None otherwise."""
    value = environ.get(RUNTIME, "")
    return value if os.path.isabs(value) and os.path.isdir(value) else None


def in_agent_session(environ: Mapping[str, str] = os.environ) -> bool:
    """Whether `environ` is that of a command run inside an agent's session (AGENT_SESSION_MARKERS)."""
    return any(marker in environ for marker in AGENT_SESSION_MARKERS)


class ClaudeFolderUnknown(PrecompactError):
    """CLAUDE_CONFIG_DIR is set, but not to a value precompact follows: where Claude Code reads the
    user's files is not known here, and is never guessed (`~/.claude` would be a folder it does not
    read: hooks installed there never run, a ✓ for them vouches for nothing)."""


def claude_config_dir(environ: Mapping[str, str] = os.environ, *, in_claude_code: bool = False) -> str | None:
    """Claude Code's folder for the user as CLAUDE_CONFIG_DIR names it, where Claude Code 2.1.332
    then reads their `settings.json` (not `~/.claude/settings.json`) and keeps `.claude.json`,
    `plugins/` and the sessions (`projects/`): its value when it is an absolute path (one in the
    project `confine` has refused, leaving it empty); None when it is unset (`~/.claude`).
    Claude Code hands its hooks and its Bash tool the value it runs with, and a project's `env`
    setting neither sets nor overrides it there (seen with 2.1.332: the hook and the Bash tool got
    the user's value, or none). ClaudeFolderUnknown, naming the fix, where it is set but not
    followed: empty or relative (Claude Code would read it from the directory it starts in), or
    refused by `confine`; or set in another agent's session (OTHER_AGENT_MARKERS), an
    environment the project's files can set (Gemini CLI's `.env`), where it may not be the value
    the user's Claude Code runs with. `in_claude_code`: the caller is Claude Code's own hook (its
    entry says so: the plugin's launcher), so those markers, which a project's `env` can add
    there, decide nothing."""
    value = environ.get("CLAUDE_CONFIG_DIR")
    if value is None:
        return None
    fix = "set it to an absolute path outside every project where you run Claude Code and here, or unset it (for ~/.claude)"
    if value == "":
        raise ClaudeFolderUnknown(
            "CLAUDE_CONFIG_DIR is empty, or a place in the project, which precompact does not follow: Claude Code keeps "
            f"your settings and sessions in the folder it names (empty: the directory Claude Code starts in), not ~/.claude; {fix}"
        )
    if not os.path.isabs(value):
        raise ClaudeFolderUnknown(
            f"CLAUDE_CONFIG_DIR ({value!r}) is a relative path: Claude Code keeps your settings and sessions in that folder of the "
            f"directory it starts in, which is not known here; {fix}"
        )
    other_agents = [marker for marker in OTHER_AGENT_MARKERS if marker in environ]
    if other_agents and not in_claude_code:
        raise ClaudeFolderUnknown(
            f"CLAUDE_CONFIG_DIR ({value!r}) is set in another agent's session ({', '.join(other_agents)}), whose "
            "environment the project can set: your Claude Code keeps its settings and sessions there only if it runs with that "
            "value; run this in your own shell, where CLAUDE_CONFIG_DIR is as your Claude Code has it (unset: ~/.claude)"
        )
    return value


def claude_folder(
    home_folder: str | None = None, environ: Mapping[str, str] = os.environ, *, in_claude_code: bool = False
) -> str:
    """Claude Code's folder for the user: `claude_config_dir` (ClaudeFolderUnknown where it is
    set but not followed), else `.claude` in `home_folder` (default: `home`). Every reader of
    Claude Code's user files (settings, `.claude.json`, plugins, sessions) goes through this."""
    given = claude_config_dir(environ, in_claude_code=in_claude_code)
    return given if given else os.path.join(home_folder if home_folder is not None else home(environ), CLAUDE_FOLDER)


def for_children(environ: Mapping[str, str] = os.environ) -> dict[str, str]:
    """The roots a child process (git, the worker) is given: each one as decided here, spelled
    out, so no child falls back on a value of its own reading."""
    roots = {"HOME": home(environ), **{name: base(name, environ) for name in BASES}}
    runtime = runtime_home(environ)
    return {**roots, RUNTIME: runtime} if runtime else roots


def confine(environ: MutableMapping[str, str], project: Iterable[str], *, agent_started: bool = True) -> list[str]:
    """Removes from `environ` (the process's) every root that is not an absolute path or lies in
    one of the `project` directories (as `project_places` keeps them), putting its default in
    its place (HOME: the password database's; a base directory: unset, so its default under
    HOME); then PATH's such entries; then every CONFINED variable naming such a place (unset;
    EMPTY_IS_HERE's left empty: not known), and, where the agent started this process (`agent_started`: not a command in the user's own
    shell), every DROPPED one. Returns the names of the variables refused, in that order (an
    empty root is unset, said by nobody)."""
    places = project_places(project, password_home())
    resolved: dict[str, str] = {}  # PATH's entries and the roots share their first prefixes
    refused: list[str] = []
    for name in ROOTS:
        value = environ.get(name)
        if value is None:
            continue
        if value == "":
            _fall_back(environ, name)
            continue
        if os.path.isabs(value) and (_is_default(name, value, environ) or not _reaches(value, places, resolved)):
            continue
        refused.append(name)
        _fall_back(environ, name)
    _confine_path(environ, places, resolved)
    for name in CONFINED:
        value = environ.get(name)
        if value == "" and name in EMPTY_IS_HERE:
            refused.append(name)
        elif value == "":
            del environ[name]  # unset, as a root's: nobody reads an empty one as a place
        elif value is not None and _refuses(name, value, places, resolved):
            refused.append(name)
            if name not in EMPTY_IS_HERE:
                del environ[name]
            elif os.path.isabs(value):
                environ[name] = ""  # in the project: followed by no reader of precompact's
            # a relative one stays, followed by none either, and named by claude_config_dir's refusal
    for name in DROPPED if agent_started else ():
        if name in environ:
            refused.append(name)
            del environ[name]
    return refused


def project_places(project: Iterable[str], home: str | None) -> list[str]:
    """The `project` directories (its configuration's, its git work tree), resolved, that
    `confine` judges against: all but the user's `home` (the password database's) and a folder
    holding it. A home kept in git is still the user's: its ssh agent socket, `~/.local/bin` and
    `~/.claude` are theirs, not a repository's, so a project inside it with no repository of its
    own is judged against its configuration's directory alone."""
    resolved_home = os.path.realpath(home) if home is not None and os.path.isabs(home) else None
    places = [os.path.realpath(place) for place in project]
    return [place for place in places if resolved_home is None or not _within(resolved_home, place)]


def refuses(name: str, value: str, project: Iterable[str]) -> bool:
    """Whether `confine` refuses the CONFINED variable `name` set to `value` for the `project`
    directories (for a reader that decides alone, the plugin's launcher)."""
    return _refuses(name, value, project_places(project, password_home()), {})


def _refuses(name: str, value: str, places: list[str], resolved: dict[str, str]) -> bool:
    if name in CONFINED_DEFAULTS and (found := password_home()) is not None:
        default = os.path.join(found, *CONFINED_DEFAULTS[name])
        # Compared as written, as `_is_default` does: `..` after a link is not what it reads as.
        if ".." not in value.split(os.sep) and _within(value.rstrip(os.sep), default):
            return False
    return any(
        not os.path.isabs(place) or "%" in place or _reaches(place, places, resolved)
        for place in _places_named(name, value)
    )


# The keys of a D-Bus address that name a place in the file system (its other keys, `abstract=`
# among them, name none the project could make).
_BUS_PLACES = ("path", "dir", "tmpdir")


def _places_named(name: str, value: str) -> list[str]:
    """The file-system places a CONFINED variable's `value` names: the value itself, or for the
    session bus each place its addresses name (one with an escape, `%`, which D-Bus would decode
    into another path than it reads as, is refused by `_refuses`)."""
    if name != "DBUS_SESSION_BUS_ADDRESS":
        return [value]
    places = []
    for address in value.split(";"):
        _, _, fields = address.partition(":")
        for field in fields.split(","):
            key, _, place = field.partition("=")
            if key in _BUS_PLACES:
                places.append(place)
    return places


def refused_notice(names: list[str]) -> str:
    """What a hook, the worker, the MCP server or a command logs of the variables `confine` refused: roots
    (the default under the home used), other places (unset), and those never honoured there."""
    roots = [name for name in names if name in ROOTS]
    places = [name for name in names if name in CONFINED and name not in EMPTY_IS_HERE]
    unknown = [name for name in names if name in EMPTY_IS_HERE]
    dropped = [name for name in names if name in DROPPED]
    said = []
    if roots:
        said.append(
            f"{', '.join(roots)} ignored: a relative path, or a place in the project, which the agent's environment lets "
            "the project set; precompact used the default under your home instead (set each to an absolute directory "
            "outside every project, or unset it)"
        )
    if places:
        said.append(
            f"{', '.join(places)} ignored: a relative path, or a place in the project, which the agent's environment lets "
            "the project set; unset for precompact and the programs it starts, whose defaults stand (set each to an "
            "absolute path outside every project, or unset it)"
        )
    if unknown:
        said.append(
            f"{', '.join(unknown)} not followed: empty, relative, or a place in the project; the folder it names is not "
            "known here, so precompact neither reads nor writes it (set it to an absolute path outside every project, "
            "or unset it)"
        )
    if dropped:
        said.append(
            f"{', '.join(dropped)} ignored: never honoured where the agent starts precompact, whose environment the "
            "project can set (it is honoured in a command you run in your own shell; unset it in the agent's environment)"
        )
    return "; ".join(said)


def _confine_path(environ: MutableMapping[str, str], places: list[str], resolved: dict[str, str]) -> None:
    """Drops from PATH every entry that is relative (an empty one is the working directory, which
    for git is the project) or lies in the project: git, ssh and credential helpers are looked up
    there, and the project would name them. Silently: a virtual environment activated in the
    project puts its folder there, and none of precompact's children needs it."""
    value = environ.get("PATH")
    if value is not None:
        environ["PATH"] = os.pathsep.join(
            entry for entry in value.split(os.pathsep) if os.path.isabs(entry) and not _reaches(entry, places, resolved)
        )


def _fall_back(environ: MutableMapping[str, str], name: str) -> None:
    if name != "HOME":
        del environ[name]
        return
    found = password_home()
    if found is None or not os.path.isabs(found):
        raise NoHome(
            f"HOME ({environ['HOME']}) is refused (relative, or in the project) and uid {os.geteuid()} has no home "
            "in the password database: set HOME to an absolute directory outside the project"
        )
    environ["HOME"] = found


def _is_default(name: str, value: str, environ: Mapping[str, str]) -> bool:
    """Whether `value` is `name`'s default (HOME: the password database's home)."""
    if name == "HOME":
        default = password_home()
    elif name in BASES:
        default = os.path.join(home(environ), *BASES[name])
    else:
        return False
    # Compared as written: `..` after a link is not what it reads as.
    return default is not None and value.rstrip(os.sep) == default.rstrip(os.sep)


def _reaches(value: str, places: list[str], resolved: dict[str, str]) -> bool:
    """Whether the path `value`, or any of its prefixes once resolved, lies in one of `places`
    (resolved directories): a prefix in the project makes the rest the project's, whatever a
    link further on points to, and a link outside that points in leads there too. `resolved`
    keeps each prefix's resolution for the next value."""
    prefix = os.sep
    for part in ["", *(part for part in value.split(os.sep) if part)]:
        prefix = os.path.join(prefix, part)
        if prefix not in resolved:
            resolved[prefix] = os.path.realpath(prefix)  # `..` as the kernel resolves it, after any link
        if any(_within(resolved[prefix], place) for place in places):
            return True
    return False


def _within(path: str, place: str) -> bool:
    return path == place or path.startswith(place.rstrip(os.sep) + os.sep)
