"""The README's install commands, each run exactly as written there (read from the README, so
the two cannot drift), in a fresh clone and with a throwaway HOME: each gives a working
`precompact` and leaves the clone as it was. Needs PyPI (skipped with one line where it is
unreachable); `test_pip_install.py` checks what the installed command then does."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

import precompact
from support.localnet import REPO
from support.projects import repository_copy
from test_pip_install import INSTALL_TIMEOUT_SECONDS, installers  # noqa: F401 -- the installers fixture

INSTALLERS = ("pipx", "uv", "pip")


def readme_install_commands() -> dict[str, str]:
    """The shell lines of the fenced block in the README's "## Install" section that installs
    into the shell, keyed by the installer they run."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Install\n", 1)[1].split("\n## ", 1)[0]
    commands = {}
    for block in re.findall(r"```bash\n(.*?)```", section, flags=re.DOTALL):
        for line in block.splitlines():
            words = shlex.split(line, comments=True)
            if words and words[0] in INSTALLERS:
                commands[words[0]] = line
    return commands


def test_the_readme_gives_one_install_command_per_installer():
    commands = readme_install_commands()
    assert sorted(commands) == sorted(INSTALLERS), commands
    for line in commands.values():
        # Run from the clone, as the README says: a path into it would be relative to elsewhere.
        assert shlex.split(line, comments=True)[-1] == ".", line


def committed_clone(destination: Path) -> Path:
    """This repository's files as a fresh clone has them, committed, so `git status` shows
    anything an install leaves behind."""
    clone = repository_copy(destination)
    for args in (
        ["init", "-q"],
        ["add", "-A"],
        ["-c", "user.name=T", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "clone"],
    ):
        subprocess.run(["git", *args], cwd=clone, check=True, capture_output=True)
    return clone


@pytest.mark.parametrize("installer", INSTALLERS)
def test_readme_install_command_works_as_written_and_leaves_the_clone_clean(tmp_path, installers, installer):  # noqa: F811
    line = readme_install_commands()[installer]
    clone = committed_clone(tmp_path / "precompact")
    home = tmp_path / "home"
    home.mkdir()
    bin_dir = home / ".local" / "bin"  # where pipx and uv put commands by default
    path = [str(bin_dir), os.environ["PATH"]]
    # The user's download caches are kept: they change how fast, not what gets installed.
    real_cache = Path.home() / ".cache"
    env = {
        **os.environ,
        "HOME": str(home),
        "PIP_CACHE_DIR": str(real_cache / "pip"),
        "UV_CACHE_DIR": str(real_cache / "uv"),
    }
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "VIRTUAL_ENV"):
        env.pop(name, None)
    if installer == "pip":
        venv = tmp_path / "venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        # What `source venv/bin/activate` does.
        env["VIRTUAL_ENV"] = str(venv)
        path.insert(0, str(venv / "bin"))
        bin_dir = venv / "bin"
    else:
        path.insert(0, str(installers[installer].parent))
        env["PIPX_DEFAULT_PYTHON"] = sys.executable
        env["UV_PYTHON"] = sys.executable
    env["PATH"] = os.pathsep.join(path)
    done = subprocess.run(
        line,
        shell=True,
        executable="/bin/bash",
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT_SECONDS,
        check=False,
    )
    assert done.returncode == 0, f"$ {line}\n{done.stdout}{done.stderr}"
    version = subprocess.run(
        [str(bin_dir / "precompact"), "--version"], env=env, capture_output=True, text=True, check=False
    )
    assert version.stdout.strip() == f"precompact, version {precompact.__version__}", version.stderr
    left = subprocess.run(
        ["git", "status", "--porcelain", "--ignored"], cwd=clone, capture_output=True, text=True, check=True
    )
    assert left.stdout == "", f"`{line}` left this in the clone:\n{left.stdout}"


def test_the_readme_is_short_and_links_only_files_of_the_repository():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert readme.count("\n") <= 200, "the README is the newcomer's page; details go in docs/"
    assert "OWNER/" not in readme and "://" not in readme, "no placeholder, no link out of the repository"
    for document in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        for target in re.findall(r"\]\(([^)]+)\)", document.read_text(encoding="utf-8")):
            if "://" not in target:  # the pages under docs/ may cite the web
                path = target.split("#", 1)[0]
                assert path and (document.parent / path).exists(), f"{document.name} links {target}"
