"""`precompact projects --forget PATH` and the project's Layer 2 git directory (#45): precompact's
own git directory under $XDG_STATE_HOME/precompact/git/ holds a copy of every savepoint, so
forgetting the project removes it, unless another registered project uses it (kept, said) or it
holds savepoints the remote never got, or does not hold when asked (the whole forget refused,
nothing removed: they may be the only copy). Through the installed command, each test with its
own XDG directories."""

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


# The remote is asked, not remembered (review 5, F10): a remote-tracking ref says only what the
# remote had at the last push; a branch deleted or forced over since is gone all the same.


def remote_git(project: Project, *args: str) -> str:
    done = subprocess.run(["git", "--git-dir", str(project.remote), *args], capture_output=True, text=True, check=True)
    return done.stdout.strip()


def forget(root: Path, project: Project, *args: str) -> subprocess.CompletedProcess:
    return precompact(root, "projects", "--forget", str(project.path), *args)


def registered(root: Path) -> list[str]:
    return [p["path"] for p in json.loads(precompact(root, "projects", "--json").stdout)["projects"]]


def test_forget_is_refused_when_the_remote_no_longer_holds_the_branch_and_flush_puts_it_back(tmp_path):
    project, _ = saved_project(tmp_path, "api")
    [store] = stores()
    remote_git(project, "update-ref", "-d", f"refs/heads/{project.branch}")  # a cleanup on the remote

    refused = forget(tmp_path, project)
    assert refused.returncode == 1
    [line] = refused.stderr.strip().splitlines()
    assert line.startswith(
        f'Error: not forgotten: "{project.remote}" does not hold what its git directory {store} holds ("{project.branch}": deleted or forced over since they were pushed)'
    ), line
    assert line.endswith("`precompact flush` there pushes them again, or remove that directory by hand first"), line
    as_json = json.loads(forget(tmp_path, project, "--json").stdout)
    assert as_json["exit_code"] == 1 and "does not hold what its git directory" in as_json["error"]
    assert store.is_dir() and registered(tmp_path) == [str(project.path)], "nothing was removed"

    assert precompact(project.path, "flush").returncode == 0
    assert remote_git(project, "rev-parse", f"refs/heads/{project.branch}")
    done = forget(tmp_path, project)
    assert done.returncode == 0, done.stderr
    assert not store.exists()


def test_a_project_gone_is_forgotten_only_once_the_remote_it_names_is_asked(tmp_path):
    project, _ = saved_project(tmp_path, "api")
    [store] = stores()
    (tmp_path / "api").rename(tmp_path / "deleted")  # the project is gone: its git.url with it

    refused = forget(tmp_path, project)
    assert refused.returncode == 1
    assert refused.stderr.strip().endswith(
        f'holds the savepoints of its git directory {store}: the project, whose git.url names the remote, is no longer there; `precompact projects --forget "{project.path}" --url URL` asks the remote at URL, or remove that directory by hand first'
    ), refused.stderr

    unreadable = forget(tmp_path, project, "--url", str(tmp_path / "no-such.git"))
    assert unreadable.returncode == 1
    assert (
        f'cannot tell whether "{tmp_path / "no-such.git"}" still holds the savepoints of its git directory ('
        in unreadable.stderr
    )
    empty = tmp_path / "empty.git"
    subprocess.run(["git", "init", "-q", "--bare", str(empty)], check=True)
    lacking = forget(tmp_path, project, "--url", str(empty))
    assert lacking.returncode == 1
    fix = f"`git --git-dir {store} push {empty} 'refs/heads/*:refs/heads/*'` puts them back"
    assert fix in lacking.stderr, lacking.stderr
    assert store.is_dir() and registered(tmp_path) == [str(project.path)]

    subprocess.run(["git", "--git-dir", str(store), "push", "-q", str(empty), "refs/heads/*:refs/heads/*"], check=True)
    done = forget(tmp_path, project, "--url", str(empty))
    assert done.returncode == 0, done.stderr
    assert not store.exists() and registered(tmp_path) == []


def test_a_remote_branch_moved_on_top_holds_the_savepoints_and_one_forced_over_does_not(tmp_path):
    project, _ = saved_project(tmp_path, "api")
    [store] = stores()
    ref = f"refs/heads/{project.branch}"
    ours = remote_git(project, "rev-parse", ref)
    forced = remote_git(project, "commit-tree", f"{ours}^{{tree}}", "-m", "forced over: no parent")
    remote_git(project, "update-ref", ref, forced)
    refused = forget(tmp_path, project)
    assert refused.returncode == 1 and "deleted or forced over since they were pushed" in refused.stderr
    assert store.is_dir()

    on_top = remote_git(project, "commit-tree", f"{ours}^{{tree}}", "-p", ours, "-m", "another machine's savepoint")
    remote_git(project, "update-ref", ref, on_top)
    done = forget(tmp_path, project)
    assert done.returncode == 0, done.stderr
    assert not store.exists()


def test_forget_asks_only_an_approved_url(tmp_path):
    """A configuration changed since it was approved (its git.url pointed at a remote that would
    say yes) is not asked: the forget is refused naming trust, or --url."""
    project, _ = saved_project(tmp_path, "api")
    [store] = stores()
    config = project.path / ".precompact.toml"
    config.write_text(config.read_text().replace(f'url = "{project.remote}"', f'url = "{tmp_path / "elsewhere.git"}"'))
    refused = forget(tmp_path, project)
    assert refused.returncode == 1
    assert (
        f"not forgotten: cannot tell whether the remote holds the savepoints of its git directory {store}: "
        in refused.stderr
    )
    assert "precompact trust" in refused.stderr and "--url URL" in refused.stderr, refused.stderr
    assert store.is_dir()


def test_url_goes_only_with_forget_and_must_be_one_git_url_takes(tmp_path):
    project, _ = saved_project(tmp_path, "api")
    alone = precompact(tmp_path, "projects", "--url", str(project.remote))
    assert alone.returncode == 2 and "--url goes with --forget PATH" in alone.stderr
    relative = forget(tmp_path, project, "--url", "api.git")
    assert relative.returncode == 1 and 'Error: --url "api.git" is a relative path' in relative.stderr
    assert registered(tmp_path) == [str(project.path)]
