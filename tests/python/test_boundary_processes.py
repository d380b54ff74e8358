"""Code from the repository never runs (issue 27): each test ships what a cloned repository or a
downloaded archive of a project can carry (Python modules named like precompact's or the
standard library's, a fake `precompact` on a relative PATH entry, programs named in .git/config
and .gitattributes), runs the real hook, binary or plugin launcher as Claude Code does, and
checks that the planted program left no marker, while what the user set up still works."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from precompact.boundary import git_env
from support import commands, transcript_gen
from support.commands import precompact, run_git, wait_until, worker_finished
from support.projects import Project, new_project, repository_copy, savepoint_branch

BARE_PATH = "/usr/bin:/bin"
BRANCH = savepoint_branch()


class Planted:
    """A program of the attacker's: running it appends its arguments to `marker`."""

    def __init__(self, root: Path):
        self.marker = root / "PWNED"
        self.script = root / "payload.sh"
        self.script.write_text(f'#!/bin/sh\necho "$0 $*" >> {self.marker}\ncat >/dev/null\nexit 1\n')
        self.script.chmod(0o755)
        self.python = f"open({str(self.marker)!r}, 'a').write(__file__ + '\\n')\n"

    def ran(self) -> str:
        return self.marker.read_text() if self.marker.exists() else ""


@pytest.fixture
def planted(tmp_path) -> Planted:
    return Planted(tmp_path)


def hook(project: Path, event: str, env: dict | None = None, **extra) -> subprocess.CompletedProcess:
    transcript = transcript_gen.generate(project.parent / f"{event}.jsonl", project=project).path
    return commands.hook(
        transcript_gen.payload(event, project, transcript, **extra),
        cwd=project,
        timeout=60,
        env={**os.environ, **(env or {})},
    )


def worker_done(project: Path, planted: Planted) -> None:
    """Waits until the worker PreCompact started has indexed the savepoint and let go of its lock
    (or the planted code ran, which is the end of the test)."""

    def done() -> bool:
        return bool(planted.ran()) or worker_finished(project)

    assert wait_until(done, timeout=120), (project / "logs" / "precompact-worker.log").read_text()


def git_layer_project(tmp_path: Path, git_layer: bool = False) -> Project:
    project = new_project(tmp_path, "project", git_layer=git_layer, chain_layer=False)
    (project.path / "tracked.json").write_text("{}\n")
    run_git(project.path, "add", "tracked.json")
    run_git(project.path, "commit", "-q", "-m", "first")
    return project


# -- Python children ----------------------------------------------------------------------------


def test_a_precompact_package_in_the_project_never_runs_in_the_worker(tmp_path, planted):
    project = git_layer_project(tmp_path).path
    (project / "precompact").mkdir()
    (project / "precompact" / "__init__.py").write_text(planted.python)
    (project / "precompact" / "worker.py").write_text(planted.python)
    pre = hook(project, "PreCompact")
    assert "saved" in pre.stdout.decode(), pre.stderr
    worker_done(project, planted)
    assert planted.ran() == ""
    assert "stopped" not in (project / "logs" / "precompact-worker.log").read_text()


@pytest.fixture
def plugin(tmp_path) -> Path:
    return repository_copy(tmp_path / "plugin")


def launch(plugin: Path, payload: dict, data: Path, cwd: Path, path: str = BARE_PATH, **env: str):
    """The plugin's hook as Claude Code runs it: in the project, with the plugin's data folder."""
    environment = {
        "PATH": path,
        "HOME": os.environ["HOME"],
        "XDG_CONFIG_HOME": os.environ["XDG_CONFIG_HOME"],
        "CLAUDE_PLUGIN_DATA": str(data),
        **env,
    }
    return subprocess.run(
        [sys.executable, str(plugin / "bin" / "precompact"), "plugin-hook"],
        input=json.dumps(payload),
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.slow
def test_the_plugins_first_use_preparation_runs_no_venv_or_pip_from_the_project(tmp_path, planted, plugin):
    project = git_layer_project(tmp_path).path
    (project / "venv.py").write_text(planted.python)
    (project / "pip").mkdir()
    (project / "pip" / "__main__.py").write_text(planted.python)
    (project / "pip" / "__init__.py").write_text(planted.python)
    data = tmp_path / "data"
    # No index: the real pip fails at once, offline, after the real venv was made.
    start = launch(
        plugin, transcript_gen.payload("SessionStart", project, source="startup"), data, project, PIP_NO_INDEX="1"
    )
    assert "preparing its Python environment" in start.stdout, start.stderr
    assert wait_until(lambda: (data / "prepare-failed").is_file() or planted.ran() != "", timeout=300), (
        data / "prepare.log"
    ).read_text()
    assert planted.ran() == ""
    log = (data / "prepare.log").read_text()
    assert (next((data / "venv").iterdir()) / "bin" / "python").exists(), log
    assert "pip install failed:" in log and "no wheel of " in (data / "prepare-failed").read_text(), log


@pytest.mark.parametrize("entry", ["node_modules/.bin", "{project}/node_modules/.bin"])
def test_the_plugin_never_runs_a_precompact_found_on_path_inside_the_project(tmp_path, planted, plugin, entry):
    project = tmp_path / "project"
    (project / "node_modules" / ".bin").mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    (project / ".precompact.toml").write_text('instance = "Stranger #1"\n')  # not approved by this user
    fake = project / "node_modules" / ".bin" / "precompact"
    fake.write_text(planted.script.read_text())
    fake.chmod(0o755)
    path = f"{entry.format(project=project)}:{BARE_PATH}"
    answer = launch(plugin, transcript_gen.payload("SessionStart", project), tmp_path / "data", project, path)
    assert planted.ran() == ""
    assert "precompact did nothing" in answer.stdout, answer.stdout + answer.stderr


# -- git ----------------------------------------------------------------------------------------


def test_session_starts_brief_runs_no_fsmonitor_of_the_repository(tmp_path, planted):
    project = git_layer_project(tmp_path).path
    assert "saved" in hook(project, "PreCompact").stdout.decode()
    worker_done(project, planted)
    (project / "src").mkdir()
    (project / "src" / "module_1.py").write_text("# edited, not committed\n")
    run_git(project, "config", "core.fsmonitor", str(planted.script))
    start = hook(project, "SessionStart", source="resume")
    context = json.loads(start.stdout)["hookSpecificOutput"]["additionalContext"]
    assert '- "src/module_1.py" (not in git)' in context, context
    assert planted.ran() == ""


def test_pre_compacts_git_status_runs_no_clean_filter_of_the_repository(tmp_path, planted):
    project = git_layer_project(tmp_path).path
    (project / ".gitattributes").write_text("*.json filter=evil\n")
    run_git(project, "add", ".gitattributes")
    run_git(project, "commit", "-q", "-m", "attributes")
    # What an archive's .git/config can carry; set after the user's own commits, then the
    # tracked file's stat changes so that `git status` must read it again.
    run_git(project, "config", "filter.evil.clean", str(planted.script))
    run_git(project, "config", "filter.evil.required", "true")
    os.utime(project / "tracked.json", (1_000_000_000, 1_000_000_000))
    (project / "draft.txt").write_text("work in progress\n")  # the tree is dirty: status read it all
    pre = hook(project, "PreCompact")
    assert "saved" in pre.stdout.decode(), pre.stderr
    worker_done(project, planted)
    assert planted.ran() == ""
    [snapshot] = (project / "logs" / "precompact-saves").iterdir()
    assert '"dirty": true' in snapshot.read_text() or '"dirty":true' in snapshot.read_text()


def test_the_push_runs_no_receive_pack_of_the_repository_and_still_pushes(tmp_path, planted):
    project = git_layer_project(tmp_path, git_layer=True)
    run_git(project.path, "config", "remote.origin.receivepack", str(planted.script))
    run_git(project.path, "config", "remote.origin.uploadpack", str(planted.script))
    assert "saved" in hook(project.path, "PreCompact").stdout.decode()
    worker_done(project.path, planted)
    flushed = precompact(project.path, "flush")
    assert planted.ran() == ""
    assert flushed.returncode == 0, flushed.stdout + flushed.stderr
    assert run_git(project.remote, "rev-parse", f"refs/heads/{BRANCH}").strip()


def test_a_remote_that_is_a_path_on_this_machine_runs_none_of_its_hooks(tmp_path, planted):
    """The repository's .git/config names the remote: a path (inside the project, say) is code
    of the repository's, not a server's."""
    project = git_layer_project(tmp_path, git_layer=True)
    for hook_name in ("pre-receive", "update", "post-receive", "reference-transaction"):
        (project.remote / "hooks" / hook_name).write_text(planted.script.read_text())
        (project.remote / "hooks" / hook_name).chmod(0o755)
    assert "saved" in hook(project.path, "PreCompact").stdout.decode()
    worker_done(project.path, planted)
    flushed = precompact(project.path, "flush")
    assert planted.ran() == ""
    assert flushed.returncode == 0, flushed.stdout + flushed.stderr
    assert run_git(project.remote, "rev-parse", f"refs/heads/{BRANCH}").strip()


@pytest.mark.slow
def test_the_push_runs_the_users_ssh_command_never_the_repositorys(tmp_path, planted):
    home = tmp_path / "home"
    home.mkdir()
    users = tmp_path / "users-ssh"
    users.write_text(f'#!/bin/sh\necho "$*" >> {tmp_path / "users-ssh-ran"}\nexit 1\n')
    users.chmod(0o755)
    (home / ".gitconfig").write_text(f"[core]\n\tsshCommand = {users}\n")
    project = git_layer_project(tmp_path, git_layer=True)
    project.set_git_url("ssh://git@127.0.0.1/backup.git")
    run_git(project.path, "config", "core.sshCommand", str(planted.script))
    assert "saved" in hook(project.path, "PreCompact", env={"HOME": str(home)}).stdout.decode()
    worker_done(project.path, planted)
    precompact(project.path, "flush", home=home)
    assert planted.ran() == ""
    assert "127.0.0.1" in (tmp_path / "users-ssh-ran").read_text()


def test_git_env_gives_the_users_programs_or_neutral_ones_in_place_of_the_repositorys(tmp_path, planted):
    """What git itself says it would run, asked through git_env (no push needed): the editor and
    pager the repository names (also through an include.path into the project) are replaced."""
    repository = tmp_path / "repo"
    repository.mkdir()
    run_git(repository, "init", "-q")
    (repository / "included.cfg").write_text(f"[core]\n\tpager = {planted.script}\n")
    run_git(repository, "config", "include.path", "../included.cfg")
    run_git(repository, "config", "core.editor", str(planted.script))
    assert run_git(repository, "var", "GIT_PAGER").strip() == str(planted.script), "the include applies"
    for variable, neutral in (("GIT_PAGER", "cat"), ("GIT_EDITOR", "cat")):
        answer = git_env.run(repository, "var", variable, timeout=10)
        assert answer.stdout.strip() == neutral, answer.stderr


# -- what the plugin installs -------------------------------------------------------------------

ROOT = Path(__file__).resolve().parents[2]


def pins(lock: Path) -> dict[str, str]:
    from packaging.utils import canonicalize_name

    found = {}
    for line in lock.read_text().splitlines():
        if "==" in line and not line.startswith((" ", "#")):
            name, version = line.split(" ")[0].split("==")
            found[canonicalize_name(name)] = version
    return found


def test_the_hashed_lock_pins_every_runtime_dependency_at_the_plain_locks_version():
    import importlib.metadata
    import tomllib

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    hashed, plain = pins(ROOT / "requirements.hashes.lock"), pins(ROOT / "requirements.lock")
    blocks = re.split(r"\n(?=\S)", (ROOT / "requirements.hashes.lock").read_text())
    assert all("--hash=sha256:" in block for block in blocks if "==" in block), "every pin has hashes"
    for wheel in (ROOT / "wheels").glob("*.whl"):  # a wheel the plugin ships is pinned by its hash
        name, version = wheel.name.split("-")[:2]
        [block] = [b for b in blocks if b.startswith(f"{name}=={version} ")]
        assert f"--hash=sha256:{hashlib.sha256(wheel.read_bytes()).hexdigest()}" in block
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert hashed == {name: plain[name] for name in hashed}, "the same versions as requirements.lock"
    needed: set[tuple[str, str]] = set()
    todo = [(Requirement(r), "") for r in project["project"]["dependencies"]]
    while todo:
        requirement, extra = todo.pop()
        if requirement.marker and not requirement.marker.evaluate({"extra": extra}):
            continue
        name = canonicalize_name(requirement.name)
        for wanted in {"", *requirement.extras}:
            if (name, wanted) in needed:
                continue
            needed.add((name, wanted))
            requires = importlib.metadata.distribution(name).requires or []
            todo += [(Requirement(r), wanted) for r in requires]
    assert {name for name, _ in needed} == set(hashed)


def test_only_the_users_credential_helpers_answer_git(tmp_path, planted, monkeypatch):
    """`git credential fill` with git_env's command line and environment: the helper the
    repository's .git/config names never runs, the user's global one does."""
    home = tmp_path / "home"
    home.mkdir()
    users = tmp_path / "users-helper"
    users.write_text("#!/bin/sh\necho username=me\necho password=users-own\n")
    users.chmod(0o755)
    (home / ".gitconfig").write_text(f"[credential]\n\thelper = {users}\n")
    monkeypatch.setenv("HOME", str(home))
    repository = tmp_path / "repo"
    repository.mkdir()
    run_git(repository, "init", "-q")
    run_git(repository, "config", "credential.helper", str(planted.script))
    run_git(repository, "config", "credential.https://example.com.helper", str(planted.script))
    answer = subprocess.run(
        git_env.argv("credential", "fill"),
        cwd=repository,
        env=git_env.environment(repository),
        input="protocol=https\nhost=example.com\n\n",
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert planted.ran() == ""
    assert "password=users-own" in answer.stdout, answer.stderr
