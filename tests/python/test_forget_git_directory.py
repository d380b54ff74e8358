"""`precompact projects --forget PATH` and the project's Layer 2 git directory (#45): precompact's
own git directory under $XDG_STATE_HOME/precompact/git/ holds a copy of every savepoint, so
forgetting the project removes it, unless another registered project uses it (kept, said) or it
holds savepoints the remote never got (the whole forget refused, nothing removed: they may be the
only copy). Through the installed command, each test with its own XDG directories."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from support.commands import precompact
from support.conversations import START, Conversation, save
from support.projects import CLOSED_PORT_URL, Project, new_project


def stores() -> set[Path]:
    top = Path(os.environ["XDG_STATE_HOME"]) / "precompact" / "git"
    return {p for p in top.iterdir() if p.name.endswith(".git")} if top.is_dir() else set()


def saved_project(root: Path, name: str):
    project = new_project(root, name, git_layer=True, chain_layer=False)
    talk = Conversation(root / f"{name}.jsonl", f"s-{name}", START)
    talk.turn_with("Rename the heron service.", "rename heron", "heron renamed", "The heron is renamed.")
    save(project, talk)
    return project, talk


def test_forget_removes_the_projects_git_directory_once_the_remote_has_every_savepoint(tmp_path):
    kept, _ = saved_project(tmp_path, "kept")
    gone, _ = saved_project(tmp_path, "gone")
    before = stores()
    assert len(before) == 2

    done = precompact(tmp_path, "projects", "--forget", str(gone.path), "--json")
    assert done.returncode == 0, done.stderr
    [removed] = before - stores()
    answer = json.loads(done.stdout)
    assert answer["removed_git_directories"] == [str(removed)] and answer["kept_git_directories"] == []
    assert f"removed its git directory {removed}" in done.stderr
    assert [p["path"] for p in answer["projects"]] == [str(kept.path)]
    status = precompact(kept.path, "status")
    assert status.returncode == 0 and "PUSHED" in status.stdout, "the other project's git directory is untouched"


def test_forget_is_refused_while_the_git_directory_holds_a_savepoint_the_remote_never_got(tmp_path):
    project, talk = saved_project(tmp_path, "api")
    remote = tmp_path / "api.git"
    remote.rename(tmp_path / "away.git")
    talk.turn_with("Now the egret queue.", "egret", "egret ok", "The egret queue is up.")
    save(project, talk)
    [store] = stores()

    refused = precompact(tmp_path, "projects", "--forget", str(project.path))
    assert refused.returncode == 1
    [line] = refused.stderr.strip().splitlines()
    assert line.startswith(f"Error: not forgotten: its git directory {store} holds savepoints the remote never got (")
    assert line.endswith("`precompact flush` there pushes them, or remove that directory by hand first"), line
    assert store.is_dir()
    listed = json.loads(precompact(tmp_path, "projects", "--json").stdout)
    assert [p["path"] for p in listed["projects"]] == [str(project.path)], "nothing was forgotten"

    (tmp_path / "away.git").rename(remote)
    assert precompact(project.path, "flush").returncode == 0
    done = precompact(tmp_path, "projects", "--forget", str(project.path))
    assert done.returncode == 0, done.stderr
    assert not store.exists()


def test_a_git_directory_another_registered_project_uses_is_kept(tmp_path):
    """Two precompact projects in one repository (a linked work tree of it): one git directory."""
    main, _ = saved_project(tmp_path, "main")
    linked = tmp_path / "linked"
    subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", "start"], cwd=main.path, check=True)
    subprocess.run(["git", "worktree", "add", "-q", str(linked)], cwd=main.path, check=True)
    made = precompact(
        linked,
        "init",
        "--yes",
        "--instance",
        "Trial #2",
        "--cluster",
        CLOSED_PORT_URL,
        "--keypair",
        str(tmp_path / "linked-id.json"),
    )
    assert made.returncode == 0, made.stderr
    talk = Conversation(tmp_path / "linked.jsonl", "s-linked", START)
    talk.turn_with("Tune the ibis cache.", "ibis", "ibis tuned", "The ibis cache is tuned.")
    save(Project(linked, main.remote, tmp_path / "linked-id.json", "Trial #2"), talk)
    [store] = stores()

    done = precompact(tmp_path, "projects", "--forget", str(main.path))
    assert done.returncode == 0, done.stderr
    assert f"kept its git directory {store}: {linked} uses it too" in done.stdout
    assert store.is_dir()
    done = precompact(tmp_path, "projects", "--forget", str(linked))
    assert done.returncode == 0, done.stderr
    assert not store.exists(), "the last project that used it is forgotten"
