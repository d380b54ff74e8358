"""A new user's first day (#40's papercuts, #48's first-day failures), through the installed
binary: what `init` keeps out of git status wherever git keeps its exclude file, and says only
after git confirms it; the exit codes docs/cli.md's table gives; what `init` and the first
`trust` say."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from support.commands import INSTANCE, precompact, run_git


def repository(path: Path) -> Path:
    """A git repository at `path` with one commit."""
    path.mkdir(parents=True)
    run_git(path, "init", "-q", "-b", "main")
    run_git(path, "-c", "user.name=Dev", "-c", "user.email=dev@example.invalid", "commit", "-q", "--allow-empty", "-m", "initial")
    return path


def init(project: Path, *args: str) -> subprocess.CompletedProcess:
    return precompact(project, "init", "--json", "--instance", INSTANCE, "--chain", "off", "--no-encrypt", *args)


def logs_written(project: Path) -> None:
    """What the hook leaves in logs/: the index, a snapshot, the errors log."""
    (project / "logs" / "precompact-saves").mkdir(parents=True)
    (project / "logs" / "precompact-saves" / "snapshot_20261203T000000Z.json").write_text("{}")
    (project / "logs" / "precompact-savepoint.jsonl").write_text("{}\n")
    (project / "logs" / "precompact-errors.log").write_text("")


def git_status(cwd: Path) -> str:
    return run_git(cwd, "status", "--porcelain", "--untracked-files=all")


def linked_worktree(tmp_path: Path) -> Path:
    main = repository(tmp_path / "main")
    run_git(main, "worktree", "add", "-q", str(tmp_path / "feature"), "-b", "feature")
    return tmp_path / "feature"


def subfolder_project(tmp_path: Path) -> Path:
    """A repository whose project lives in its subfolder `service`; the repository's root."""
    root = repository(tmp_path / "monorepo")
    (root / "service").mkdir()
    return root


def submodule(tmp_path: Path) -> Path:
    library = repository(tmp_path / "library")
    outer = repository(tmp_path / "outer")
    run_git(outer, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(library), "lib")
    return outer / "lib"


@pytest.mark.parametrize("where", ["linked worktree", "subfolder of its repository", "submodule"])
def test_init_keeps_logs_and_its_config_out_of_git_status_wherever_git_keeps_its_exclude_file(tmp_path, where):
    """#48: in a linked worktree and a subfolder project `init` said "added logs/precompact-* to
    .git/info/exclude" and `git status` still showed `?? logs/`; #40.5: `?? .precompact.toml`."""
    if where == "linked worktree":
        project, args = linked_worktree(tmp_path), ()
    elif where == "submodule":
        project, args = submodule(tmp_path), ()
    else:
        project = subfolder_project(tmp_path) / "service"
        args = ("--repo", "..")
    done = init(project, *args)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["logs_excluded"] is True
    logs_written(project)
    assert git_status(project) == "", "git status shows nothing init or the hook wrote"
    assert "git status no longer shows them (checked)" in done.stderr
    again = init(project, "--force", *args)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["logs_excluded"] is True, "#48: `init --force --json` said false"
    assert "already keeps logs/precompact-* and .precompact.toml out of git status (checked)" in again.stderr


def test_a_subfolder_projects_pattern_leaves_the_roots_own_logs_alone(tmp_path):
    root = subfolder_project(tmp_path)
    done = init(root / "service", "--repo", "..")
    assert done.returncode == 0, done.stderr
    exclude = (root / ".git" / "info" / "exclude").read_text().splitlines()
    assert exclude[-2:] == ["/service/logs/precompact-*", "/service/.precompact.toml"]
    (root / "logs").mkdir()
    (root / "logs" / "precompact-build.txt").write_text("the root's own\n")
    assert git_status(root) == "?? logs/precompact-build.txt\n"


def test_init_says_when_git_still_shows_logs_after_writing_the_exclude(tmp_path):
    """Checked after writing: a .gitignore that un-ignores logs/ wins over the exclude file, and
    init says so instead of claiming it kept them out."""
    project = repository(tmp_path / "project")
    (project / ".gitignore").write_text("!/logs/precompact-*\n")
    done = init(project)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["logs_excluded"] is False
    assert "warning: git does not ignore" in done.stderr and "never commit logs/" in done.stderr
    assert "(checked)" not in done.stderr


def test_init_never_writes_the_exclude_file_through_a_link(tmp_path):
    project = repository(tmp_path / "project")
    elsewhere = tmp_path / "bashrc"
    elsewhere.write_text("# the user's own file\n")
    exclude = project / ".git" / "info" / "exclude"
    exclude.unlink()
    exclude.symlink_to(elsewhere)
    done = init(project)
    assert done.returncode == 0, done.stderr
    assert elsewhere.read_text() == "# the user's own file\n"
    assert json.loads(done.stdout)["logs_excluded"] is False
    assert f"warning: {exclude} cannot be written (it is a symbolic link)" in done.stderr


def test_the_first_trust_after_init_shows_only_what_changed_since_init(tmp_path):
    """#48: the first `trust` after `init` listed every setting, as for a stranger's file."""
    project = repository(tmp_path / "project")
    assert init(project).returncode == 0
    unchanged = precompact(project, "trust", "--yes")
    assert unchanged.returncode == 0, unchanged.stderr
    assert unchanged.stdout.endswith("is trusted as it is; nothing changed since you approved it\n")
    config = project / ".precompact.toml"
    config.write_text(config.read_text().replace("session_end = true", "session_end = false"))
    edited = precompact(project, "trust", "--yes")
    assert edited.returncode == 0, edited.stderr
    assert edited.stdout.splitlines()[1:] == [
        "- hooks.session_end = true",
        "+ hooks.session_end = false    # each session is saved when it ends",
        edited.stdout.splitlines()[-1],
    ]
    assert edited.stdout.splitlines()[-1].startswith("trusted ")
