"""The entry of the Claude Code plugin's `precompact` (bin/precompact). Its hooks run in every
project Claude Code opens; in one without a `.precompact.toml` this module answers alone, with
nothing but `os`, `sys` and `json` imported, and says nothing (plugin_runtime.py says why).
Everything else is plugin_runtime.py's."""

from __future__ import annotations

import json
import os
import sys

MINIMUM_PYTHON = (3, 11)


def main(argv: list[str], plugin_root: str) -> int:
    if sys.version_info < MINIMUM_PYTHON:
        from precompact.boundary import terminal

        terminal.echo(
            f"precompact needs Python {'.'.join(map(str, MINIMUM_PYTHON))} or newer as `python3` (this one is {sys.version.split()[0]}); install it, or install precompact with pipx (see its README)",
            err=True,
        )
        return 0 if argv[:1] == ["plugin-hook"] else 1
    raw = b""
    if argv == ["plugin-hook"]:
        raw = sys.stdin.buffer.read()
        try:
            event = json.loads(raw)
            cwd = event.get("cwd")
            if isinstance(cwd, str) and (not configuration_above(cwd) or nothing_pending(event, cwd)):
                return 0
        except (ValueError, AttributeError, RecursionError, OSError):
            pass  # not an event the quick answer reads (or a cwd no path can be): the hook itself says why
    from pathlib import Path

    from precompact.boundary import terminal
    from precompact.edges.plugin_runtime import Launcher, LauncherError

    launcher = Launcher(Path(plugin_root), os.environ)
    try:
        if argv == ["plugin-hook"]:
            try:
                stdout, stderr = launcher.hook(raw)
            except LauncherError as e:  # its message names the fix
                stdout, stderr = "", f"precompact: {e}"
            except Exception as e:  # noqa: BLE001  a hook never blocks Claude Code: said, exit 0
                from precompact.boundary import quoting

                said = f"{type(e).__name__}: {quoting.inline(str(e))}"
                stdout, stderr = "", f"precompact plugin: the hook failed ({said}); nothing done"
            if stdout:
                terminal.answer(stdout)
            if stderr:
                terminal.echo(stderr, err=True)
            return 0
        if argv == ["plugin-prepare"]:
            launcher.prepare_and_replay()
            return 0
        if argv == ["mcp"]:
            return launcher.mcp()
        return launcher.run(argv)
    except LauncherError as e:
        terminal.echo(f"precompact: {e}", err=True)
        return 0 if argv == ["plugin-hook"] else 1


def nothing_pending(event: dict, cwd: str) -> bool:
    """Whether `event` is a prompt or a tool call (every one fires the hook) of a session with no
    addendum pending (edges/hook.py answers those the same way)."""
    from precompact.config import discovery

    if event.get("hook_event_name") not in ("UserPromptSubmit", "PostToolUse"):
        return False
    found = discovery.discover(cwd)
    return found is None or not discovery.something_pending(found[0], event.get("session_id"))


def configuration_above(cwd: str) -> bool:
    """Whether `config.discover` would find a `.precompact.toml` from `cwd`: in it or a directory
    above, not past the git work tree's root (config/discovery.py, standard library only)."""
    from precompact.config import discovery

    return discovery.discover(cwd) is not None
