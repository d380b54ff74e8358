"""precompact's user-level roots (boundary/user_roots.py, docs/security.md "The agent's
environment"): in the modes the agent starts, HOME and the XDG directories are never relative and
never a place in the project; a relative value is ignored everywhere. And the PRECOMPACT_*
variables a hook keeps are an allow-list.

The two attacks a review reproduced, each run on the real hook with a throwaway HOME outside the
project: a forged approval under a project-set XDG_CONFIG_HOME, and a project-set git
configuration naming a filter."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest
from solders.keypair import Keypair

from precompact.boundary import git_env, processes, user_roots
from precompact.config import approval
from precompact.config import settings as configuration
from support import commands
from support.commands import wait_until
from support.projects import new_project
from support.transcript_gen import payload

TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def transcript_with_secret(path: Path, cwd: Path) -> Path:
    lines = [
        {"type": "user", "uuid": "u1", "sessionId": "s1", "cwd": str(cwd), "message": {"role": "user", "content": f"the token is {TOKEN}"}},
        {"type": "assistant", "uuid": "a1", "parentUuid": "u1", "sessionId": "s1", "cwd": str(cwd), "requestId": "r1",
         "message": {"id": "m1", "role": "assistant", "content": [{"type": "text", "text": "noted"}],
                     "usage": {"input_tokens": 100, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 5}}},
    ]  # fmt: skip
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    """A throwaway home outside every project, with the XDG directories at their defaults under it
    (as a user has them), in this process and every precompact it starts."""
    home = tmp_path / "home"
    (home / ".config").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    for name in user_roots.BASES:
        monkeypatch.delenv(name, raising=False)
    return home


def refs(repository: Path) -> str:
    return subprocess.run(
        ["git", "--git-dir", str(repository), "for-each-ref"], capture_output=True, text=True, check=True
    ).stdout


# --- the two reproductions --------------------------------------------------------------------


def test_an_approval_forged_under_a_project_set_config_home_is_never_an_approval(tmp_path, home, monkeypatch):
    """Review finding 1a: the project's `.precompact.toml`, turned to redaction off and an
    attacker's git.url, with an approval record forged under `$PROJECT/.cfg` and the agent's
    XDG_CONFIG_HOME pointing there. Before: the hook took it as approved and the worker pushed
    the unredacted token to the attacker. Now the hook refuses the root, reads the user's own
    store (which has no approval of these bytes), and does nothing but say so."""
    project = new_project(tmp_path, "project", git_layer=True, chain_layer=False)
    attacker = tmp_path / "attacker.git"
    subprocess.run(["git", "init", "-q", "--bare", str(attacker)], check=True)
    config = project.path / ".precompact.toml"
    text = config.read_text()
    assert "\n[redaction]\nenabled = true\n" in text and f'url = "{project.remote}"' in text
    text = text.replace("\n[redaction]\nenabled = true\n", "\n[redaction]\nenabled = false\n", 1)
    config.write_text(text.replace(f'url = "{project.remote}"', f'url = "{attacker}"', 1))
    forged = project.path / ".cfg"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(forged))
    approval.approve(config.resolve(), config.read_bytes())
    assert approval.approved_as_is(str(config.resolve())), "the forged record is of the right shape"
    monkeypatch.delenv("XDG_CONFIG_HOME")

    transcript = transcript_with_secret(tmp_path / "t.jsonl", project.path)
    env = {**os.environ, "XDG_CONFIG_HOME": str(forged)}
    done = commands.hook(payload("PreCompact", project.path, transcript), cwd=project.path, timeout=60, env=env)
    assert done.returncode == 0
    assert b"changed since you trusted it" in done.stdout + done.stderr, done.stdout + done.stderr
    assert (
        not (project.logs / "precompact-savepoint.jsonl").exists()
        or b"SAVEPOINT_CREATED" not in (project.logs / "precompact-savepoint.jsonl").read_bytes()
    )
    assert refs(attacker) == "", "nothing reached the attacker's remote"
    logged = (project.logs / "precompact-errors.log").read_text()
    assert "PreCompact (notice): XDG_CONFIG_HOME ignored: a relative path, or a place in the project" in logged


@pytest.mark.parametrize("relative", [True, False], ids=["relative", "absolute"])
def test_a_git_configuration_under_a_config_home_in_the_project_runs_no_filter(tmp_path, home, monkeypatch, relative):
    """Review finding 1b: `XDG_CONFIG_HOME=.cfg` (relative: git reads it from the directory it
    runs in, the project), or the same place spelled out, with `.cfg/git/config` defining
    `filter.evil.clean` and a `.gitattributes` of `* filter=evil`. Before: the `git status` of the
    snapshot's git state ran the project's program. Now the value is refused: the hook saves
    with the user's own roots, the worker pushes, and the program never runs."""
    marker = tmp_path / "PWNED"
    project = new_project(tmp_path, "project", git_layer=True, chain_layer=False)
    (project.path / ".gitattributes").write_text("* filter=evil\n")
    (project.path / "a.txt").write_text("hi\n")
    subprocess.run(["git", "add", "a.txt", ".gitattributes"], cwd=project.path, check=True)
    subprocess.run(["git", "commit", "-qm", "init"], cwd=project.path, check=True)
    # Same size, another time: `git status` must read the file again, through its clean filter.
    (project.path / "a.txt").write_text("ho\n")
    os.utime(project.path / "a.txt", (1, 1))
    cfg = project.path / ".cfg"
    (cfg / "git").mkdir(parents=True)
    (cfg / "git" / "config").write_text(f'[filter "evil"]\n\tclean = "touch {marker}; cat"\n')
    # The approval, where a relative root would find it too (read from the project's directory).
    monkeypatch.setenv("XDG_CONFIG_HOME", str(cfg))
    approval.approve((project.path / ".precompact.toml").resolve(), (project.path / ".precompact.toml").read_bytes())
    monkeypatch.delenv("XDG_CONFIG_HOME")

    transcript = transcript_with_secret(tmp_path / "t.jsonl", project.path)
    env = {**os.environ, "XDG_CONFIG_HOME": ".cfg" if relative else str(cfg)}
    done = commands.hook(payload("PreCompact", project.path, transcript), cwd=project.path, timeout=60, env=env)
    assert done.returncode == 0 and b"saved" in done.stdout, done.stdout + done.stderr
    assert not marker.exists(), "the project's filter ran"
    assert wait_until(lambda: b"LAYER_2_PUSHED" in (project.logs / "precompact-savepoint.jsonl").read_bytes(), 90), (
        project.logs / "precompact-worker.log"
    ).read_text()
    assert not marker.exists(), "the project's filter ran in the worker"
    logged = (project.logs / "precompact-errors.log").read_text()
    assert "PreCompact (notice): XDG_CONFIG_HOME ignored" in logged


@pytest.mark.parametrize("relative", [True, False], ids=["relative", "absolute"])
def test_a_git_on_a_path_entry_in_the_project_never_runs(tmp_path, relative):
    """PATH, where git is looked up, set by the agent's environment to a folder of the project's
    (`bin`, which git's working directory, the project, resolves; or spelled out): the hook drops
    that entry, saves with the user's git, and the project's `git` never runs."""
    marker = tmp_path / "PWNED"
    project = new_project(tmp_path, "project", git_layer=True, chain_layer=False)
    (project.path / "bin").mkdir()
    (project.path / "bin" / "git").write_text(f"#!/bin/sh\ntouch {marker}\nexit 1\n")
    (project.path / "bin" / "git").chmod(0o755)
    entry = "bin" if relative else str(project.path / "bin")
    env = {**os.environ, "PATH": f"{entry}{os.pathsep}{os.environ['PATH']}"}
    done = commands.hook(payload("PreCompact", project.path), cwd=project.path, timeout=60, env=env)
    assert done.returncode == 0 and b"saved" in done.stdout, done.stdout + done.stderr
    assert wait_until(lambda: b"LAYER_2_PUSHED" in (project.logs / "precompact-savepoint.jsonl").read_bytes(), 90), (
        project.logs / "precompact-worker.log"
    ).read_text()
    assert not marker.exists(), "the project's git ran"


# --- the commands precompact tells the model to run (review5 F1) --------------------------------


def saved_project(tmp_path: Path):
    """A project with one savepoint pushed, made with the user's own environment."""
    project = new_project(tmp_path, "project", git_layer=True, chain_layer=False)
    transcript = transcript_with_secret(tmp_path / "t.jsonl", project.path)
    done = commands.hook(payload("PreCompact", project.path, transcript), cwd=project.path, timeout=60)
    assert b"saved" in done.stdout, done.stdout + done.stderr
    assert wait_until(lambda: b"LAYER_2_PUSHED" in (project.logs / "precompact-savepoint.jsonl").read_bytes(), 90)
    assert wait_until(lambda: commands.worker_finished(project.path), 60)
    return project


@pytest.mark.parametrize("how", ["relative PATH entry", "PATH entry in the project", "GIT_PYTHON_GIT_EXECUTABLE"])
def test_the_commands_the_brief_names_never_run_the_projects_git(tmp_path, how):
    """The brief sends the model to `verify`, `resurrect`, `recall`, `show`; it runs them in the
    agent's environment, which the project sets: a `bin` of its own first on PATH (relative, as a
    repository that does not know where it is cloned writes it, or spelled out), or GitPython's
    GIT_PYTHON_GIT_EXECUTABLE. Each command runs the user's git, and the project's never runs
    (before: its `git version` probe, or every git call, went to the project's program)."""
    project = saved_project(tmp_path)
    marker = tmp_path / "PWNED"
    (project.path / "bin").mkdir()
    (project.path / "bin" / "git").write_text(f'#!/bin/sh\necho "$*" >> {marker}\nexec {shutil.which("git")} "$@"\n')
    (project.path / "bin" / "git").chmod(0o755)
    env = {
        "relative PATH entry": {"PATH": f"bin{os.pathsep}{os.environ['PATH']}"},
        "PATH entry in the project": {"PATH": f"{project.path / 'bin'}{os.pathsep}{os.environ['PATH']}"},
        "GIT_PYTHON_GIT_EXECUTABLE": {"GIT_PYTHON_GIT_EXECUTABLE": "bin/git"},
    }[how]
    verified = commands.precompact(project.path, "verify", env=env)
    assert verified.returncode == 0 and "1 savepoint(s) verified" in verified.stdout, verified.stdout + verified.stderr
    for args in (["resurrect", "--format", "report"], ["recall", "noted"], ["show", "1:1"], ["status"], ["flush"]):
        done = commands.precompact(project.path, *args, env=env)
        assert done.returncode == 0, (args, done.stdout, done.stderr)
    assert not marker.exists(), f"the project's git ran: {marker.read_text()}"


def test_git_is_looked_up_only_on_absolute_path_entries(tmp_path, monkeypatch):
    """The lookup git_env's command lines name git by: an empty or relative entry (the working
    directory's, the project's when git runs there) is never looked in, nor a file that cannot
    be run; the first absolute entry holding an executable `git` gives its absolute path."""
    for folder, mode in (("rel", 0o755), ("plain", 0o644), ("first", 0o755), ("second", 0o755)):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "git").write_text("#!/bin/sh\n")
        (tmp_path / folder / "git").chmod(mode)
    monkeypatch.chdir(tmp_path)
    path = os.pathsep.join(["", "rel", str(tmp_path / "plain"), str(tmp_path / "first"), str(tmp_path / "second")])
    assert processes.program_on_path("git", {"PATH": path}) == str(tmp_path / "first" / "git")
    assert processes.program_on_path("git", {"PATH": os.pathsep.join(["", "rel"])}) is None
    assert git_env.argv("status")[0] == shutil.which("git"), "the process's own PATH, looked up once"


def test_every_command_refuses_a_root_the_project_sets(tmp_path, home, monkeypatch):
    """An approval forged under a project-set XDG_CONFIG_HOME is no approval for a command either
    (`verify`, `flush` as the model runs them): the command reads the user's own store, says it
    ignored the variable, and refuses the changed configuration (before: it took it as approved)."""
    project = saved_project(tmp_path)
    config = project.path / ".precompact.toml"
    config.write_text(config.read_text().replace('instance = "Trial #1"', 'instance = "Forged #9"', 1))
    forged = project.path / ".cfg"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(forged))
    approval.approve(config.resolve(), config.read_bytes())
    monkeypatch.delenv("XDG_CONFIG_HOME")
    for command in ("verify", "flush"):
        done = commands.precompact(project.path, command, env={"XDG_CONFIG_HOME": str(forged)})
        assert done.returncode == 1, (command, done.stdout, done.stderr)
        assert "XDG_CONFIG_HOME ignored: a relative path, or a place in the project" in done.stderr, done.stderr
        assert "changed since you trusted it" in done.stderr, done.stderr


@pytest.mark.parametrize("marker", configuration.AGENT_SESSION_MARKERS)
def test_a_command_run_in_an_agents_session_keeps_only_the_overrides_a_hook_keeps(tmp_path, marker):
    """Run where an agent marks its commands (Claude Code's Bash tool sets CLAUDECODE=1, which a
    project's settings can set but not remove), a command drops the PRECOMPACT_* roots as the hook
    does and says so; the same command in the user's own shell keeps them (docs/security.md)."""
    project = saved_project(tmp_path)
    roots = {"PRECOMPACT_INSTANCE": "Other #2", "PRECOMPACT_AUTHORITY": str(Keypair().pubkey())}
    in_session = commands.precompact(project.path, "status", env={**roots, marker: "1"})
    assert in_session.returncode == 0, in_session.stderr
    assert "Other #2" not in in_session.stdout and "Trial #1: 1 savepoint(s)" in in_session.stdout
    assert "PRECOMPACT_AUTHORITY, PRECOMPACT_INSTANCE ignored: the agent's environment" in in_session.stderr
    own_shell = commands.precompact(project.path, "status", env=roots)
    assert "Other #2: 0 savepoint(s)" in own_shell.stdout and "ignored" not in own_shell.stderr, own_shell


def test_the_worker_and_the_mcp_server_confine_their_roots(tmp_path, home):
    """Each mode the agent starts confines its own roots: the worker (where the pushes happen)
    and the MCP server, each logging what it refused."""
    project = new_project(tmp_path, "project", git_layer=True, chain_layer=False)
    inside = project.path / ".state"
    env = {**os.environ, "XDG_STATE_HOME": str(inside), "XDG_DATA_HOME": "data"}
    worker = subprocess.run(
        [*processes.precompact_module("precompact.edges.worker", str(project.path))],
        env=env, cwd=project.path, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert "XDG_STATE_HOME, XDG_DATA_HOME ignored" in worker.stdout, worker.stdout + worker.stderr
    served = commands.precompact(project.path, "mcp", env={"XDG_STATE_HOME": str(inside)}, stdin="")
    assert served.returncode == 0, served.stderr
    assert "mcp (notice): XDG_STATE_HOME ignored" in (project.logs / "precompact-errors.log").read_text()
    assert not inside.exists() and not (project.path / "data").exists()


def test_with_no_home_in_the_password_database_a_refused_home_stops_the_hook(tmp_path, monkeypatch):
    from precompact.edges import hook

    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    monkeypatch.setattr(user_roots, "password_home", lambda: None)
    monkeypatch.setenv("HOME", str(project.path / "home"))
    answer = hook.handle(json.dumps(payload("PreCompact", project.path)).encode())
    assert answer.stdout == "" and "no home in the password database" in answer.stderr, answer.stderr
    assert "nothing done" in answer.stderr and not project.logs.exists()


# --- the owner's rules ------------------------------------------------------------------------


@pytest.fixture
def layout(tmp_path) -> dict[str, Path]:
    """A project (a git work tree holding `.precompact.toml` in a subdirectory), a directory of
    the user's outside it, and links: one in the project leading out, one outside leading in."""
    worktree, outside = tmp_path / "repo", tmp_path / "mine"
    project = worktree / "sub"
    for place in (project / ".cfg", worktree / ".git", outside / ".config"):
        place.mkdir(parents=True)
    (project / "out").symlink_to(outside)
    (tmp_path / "in").symlink_to(project)
    return {"worktree": worktree, "project": project, "outside": outside, "tmp": tmp_path}


def confined(environ: dict[str, str], layout: dict[str, Path]) -> tuple[list[str], dict[str, str]]:
    refused = user_roots.confine(environ, [str(layout["project"]), str(layout["worktree"])])
    return refused, environ


def test_a_root_in_the_project_or_its_work_tree_is_refused_and_falls_back_to_the_default(layout):
    outside = str(layout["outside"])
    refused, environ = confined(
        {
            "HOME": outside,
            "XDG_CONFIG_HOME": str(layout["project"] / ".cfg"),
            "XDG_STATE_HOME": str(layout["worktree"] / "state"),
            "XDG_DATA_HOME": str(layout["worktree"]),
            "XDG_CACHE_HOME": str(layout["outside"] / ".cache"),
        },
        layout,
    )
    assert refused == ["XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME"]
    assert environ == {"HOME": outside, "XDG_CACHE_HOME": str(layout["outside"] / ".cache")}
    assert user_roots.config_home(environ) == os.path.join(outside, ".config")
    assert user_roots.state_home(environ) == os.path.join(outside, ".local", "state")


def test_a_root_reached_through_a_link_either_way_is_refused(layout):
    """A link the project holds that leads out is still the project's to repoint; a link outside
    that leads in reaches the project's files: neither is a root."""
    refused, _ = confined({"XDG_CONFIG_HOME": str(layout["project"] / "out" / ".config")}, layout)
    assert refused == ["XDG_CONFIG_HOME"]
    refused, _ = confined({"XDG_STATE_HOME": str(layout["tmp"] / "in" / ".cfg")}, layout)
    assert refused == ["XDG_STATE_HOME"]
    refused, _ = confined({"XDG_DATA_HOME": str(layout["outside"] / ".." / "repo" / "sub")}, layout)
    assert refused == ["XDG_DATA_HOME"]


def test_a_relative_home_is_replaced_by_the_password_databases(layout):
    refused, environ = confined({"HOME": "home", "XDG_RUNTIME_DIR": "run"}, layout)
    assert refused == ["HOME", "XDG_RUNTIME_DIR"]
    assert environ == {"HOME": user_roots.password_home()}


def test_a_home_in_the_project_is_replaced_by_the_password_databases(layout):
    refused, environ = confined({"HOME": str(layout["worktree"])}, layout)
    assert refused == ["HOME"] and environ["HOME"] == user_roots.password_home()


def test_path_loses_its_relative_entries_and_those_in_the_project_silently(layout):
    path = os.pathsep.join(["/usr/bin", "", "bin", str(layout["worktree"] / "node_modules" / ".bin"), "/bin"])
    refused, environ = confined({"PATH": path}, layout)
    assert refused == [] and environ["PATH"] == os.pathsep.join(["/usr/bin", "/bin"])


def test_roots_outside_the_project_are_kept_and_an_empty_one_is_unset_silently(layout):
    environ = {
        "HOME": str(layout["outside"]),
        "XDG_CONFIG_HOME": str(layout["outside"] / ".config"),
        "XDG_DATA_HOME": "",
    }
    refused, after = confined(dict(environ), layout)
    assert refused == [] and after == {
        "HOME": str(layout["outside"]),
        "XDG_CONFIG_HOME": str(layout["outside"] / ".config"),
    }


def test_a_root_that_is_its_default_is_kept_even_where_the_home_is_a_work_tree(tmp_path):
    """A home kept in git (dotfiles) is the project's work tree for a project without a `.git`
    of its own: the password database's home, and the defaults under it, still stand."""
    own = user_roots.password_home()
    assert own is not None
    environ = {"HOME": own, "XDG_CONFIG_HOME": os.path.join(own, ".config")}
    assert user_roots.confine(environ, [own]) == [] and environ["XDG_CONFIG_HOME"] == os.path.join(own, ".config")


def test_everywhere_a_relative_root_is_ignored_and_children_get_the_owners_values(tmp_path):
    """The CLI confines nothing, but no relative value is ever used, here or by a child."""
    environ = {"HOME": str(tmp_path), "XDG_CONFIG_HOME": ".cfg", "XDG_STATE_HOME": "state", "XDG_RUNTIME_DIR": "run"}
    assert user_roots.config_home(environ) == str(tmp_path / ".config")
    assert user_roots.state_home(environ) == str(tmp_path / ".local" / "state")
    assert user_roots.runtime_home(environ) is None
    children = user_roots.for_children(environ)
    assert children["XDG_CONFIG_HOME"] == str(tmp_path / ".config") and "XDG_RUNTIME_DIR" not in children
    assert processes.python_environment(environ)["XDG_STATE_HOME"] == str(tmp_path / ".local" / "state")


def test_git_is_given_the_owners_home_and_config_home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CONFIG_HOME", "relative")
    env = git_env.environment(tmp_path)
    assert env["HOME"] == str(tmp_path) and env["XDG_CONFIG_HOME"] == str(tmp_path / ".config")


def test_the_approval_store_is_the_owners(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CONFIG_HOME", ".cfg")
    assert approval.store() == tmp_path / ".config" / "precompact" / "trusted"


# --- the PRECOMPACT_* allow-list --------------------------------------------------------------


def test_an_agent_keeps_only_the_precompact_variables_it_knows_to_keep(tmp_path):
    """docs/security.md's table: a hook, the worker it starts and the MCP server keep
    PRECOMPACT_CLUSTER (and PRECOMPACT_KEYPAIR where an authority is approved); every other
    PRECOMPACT_* variable, one precompact does not know included, is dropped and named."""
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    environ = {
        "PRECOMPACT_CLUSTER": "https://x",
        "PRECOMPACT_INSTANCE": "another project's",
        "PRECOMPACT_REMOTE": "upstream",
        "PRECOMPACT_BRANCH": "gh-pages",
        "PRECOMPACT_IDENTITY": "/tmp/fifo",
        "PRECOMPACT_FOO": "x",
        "PRECOMPACT_EMPTY": "",
        "PATH": "/usr/bin",
    }
    ignored = configuration.drop_agent_overrides(environ, project.path)
    assert ignored == [
        "PRECOMPACT_BRANCH",
        "PRECOMPACT_FOO",
        "PRECOMPACT_IDENTITY",
        "PRECOMPACT_INSTANCE",
        "PRECOMPACT_REMOTE",
    ]
    assert environ == {"PRECOMPACT_CLUSTER": "https://x", "PATH": "/usr/bin"}


def test_a_hook_drops_an_unknown_precompact_variable_and_logs_it(tmp_path):
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    env = {**os.environ, "PRECOMPACT_FOO": "x", "PRECOMPACT_INSTANCE": "Elsewhere #9"}
    done = commands.hook(payload("PreCompact", project.path), cwd=project.path, timeout=60, env=env)
    assert done.returncode == 0 and b"saved" in done.stdout, done.stdout + done.stderr
    created = [json.loads(line) for line in (project.logs / "precompact-savepoint.jsonl").read_text().splitlines()]
    assert {e["instance"] for e in created if e["event"] == "SAVEPOINT_CREATED"} == {"Trial #1"}
    logged = (project.logs / "precompact-errors.log").read_text()
    assert "PreCompact (notice): PRECOMPACT_FOO, PRECOMPACT_INSTANCE ignored" in logged


# --- the other variables precompact or its children read --------------------------------------

# What precompact's in-process readers take from the environment besides the roots: httpx (the
# RPC calls, trust_env) and Python's ssl (its key log, unless the interpreter is isolated).
READ_IN_PROCESS = (
    "SSL_CERT_FILE", "SSL_CERT_DIR", "SSLKEYLOGFILE",
    "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "all_proxy", "no_proxy",
)  # fmt: skip


def test_every_variable_handed_on_or_read_is_classified_in_one_place():
    handed = [*git_env.KEPT, *processes.PYTHON_KEPT, *READ_IN_PROCESS]
    assert [name for name in handed if not user_roots.classified(name)] == []
    assert set(processes.PYTHON_KEPT_PREFIXES) <= set(user_roots.KEPT_PREFIXES)
    tables = [set(user_roots.ROOTS), {user_roots.SEARCH_PATH}, set(user_roots.CONFINED), set(user_roots.DROPPED)]
    tables.append(set(user_roots.KEPT))
    assert sum(len(t) for t in tables) == len(set().union(*tables)), "each variable has one treatment"
    assert not set(user_roots.DROPPED) & set(handed[: len(git_env.KEPT) + len(processes.PYTHON_KEPT)]), (
        "a dropped variable is handed to no child"
    )


def not_handed_on(kept: Mapping[str, str], handed: Iterable[str]) -> list[str]:
    """The variables `kept` gives a reason for that nothing hands on or reads."""
    return sorted(set(kept) - set(handed))


def test_every_kept_variables_reason_names_one_handed_on_and_pips_are_taken_from_the_table():
    handed = [*git_env.KEPT, *processes.PYTHON_KEPT, *READ_IN_PROCESS]
    assert not_handed_on(user_roots.KEPT, handed) == []
    assert not_handed_on({**user_roots.KEPT, "PIP_NO_LONGER_HANDED": "why"}, handed) == ["PIP_NO_LONGER_HANDED"]
    pips = {name for name in (*user_roots.KEPT, *user_roots.CONFINED) if name.startswith("PIP_")}
    environment = processes.python_environment({name: "x" for name in (*pips, "PIP_REQUIREMENT", "PIP_TARGET")})
    assert {name for name in environment if name.startswith("PIP_")} == pips, "exactly the classified ones"


def naming(name: str, place: str) -> str:
    """A value of the CONFINED variable `name` that names `place` (the session bus: an address)."""
    return f"unix:path={place}" if name == "DBUS_SESSION_BUS_ADDRESS" else place


@pytest.mark.parametrize("name", user_roots.CONFINED)
def test_a_confined_variable_that_is_relative_or_in_the_project_is_refused_and_one_outside_kept(layout, name):
    for place in (
        "relative/place",
        str(layout["worktree"] / "ca.pem"),
        str(layout["project"] / "out" / "ca.pem"),  # a link in the project, leading out: still the project's
        str(layout["tmp"] / "in" / "ca.pem"),  # a link outside, leading in
    ):
        refused, environ = confined({name: naming(name, place), "PATH": "/usr/bin"}, layout)
        # Claude Code's folder, refused, is left relative or empty: not known here, never its default
        # (user_roots.claude_config_dir refuses either).
        kept = {name: place if place.startswith("relative") else ""} if name in user_roots.EMPTY_IS_HERE else {}
        assert (refused, environ) == ([name], {**kept, "PATH": "/usr/bin"}), place
        assert user_roots.refused_notice(refused).startswith(
            f"{name} not followed: empty, relative, or a place in the project"
            if kept
            else f"{name} ignored: a relative path, or a place in the project"
        )
    outside = naming(name, str(layout["outside"] / "ca.pem"))
    refused, environ = confined({name: outside}, layout)
    assert (refused, environ) == ([], {name: outside}), "an absolute place outside the project is the user's: kept"
    refused, environ = confined({name: ""}, layout)
    if name in user_roots.EMPTY_IS_HERE:  # its reader's place is then the directory it starts in
        assert (refused, environ) == ([name], {name: ""}), "an empty one is the working directory: refused, said"
    else:
        assert (refused, environ) == ([], {}), "an empty one is unset, silently"


def test_a_session_bus_with_any_address_in_the_project_is_refused_and_an_abstract_one_kept(layout):
    mine = f"unix:path={layout['outside'] / 'bus'}"
    for address in (
        f"{mine};unix:path={layout['worktree'] / 'bus'}",
        f"unix:tmpdir={layout['project']},guid=1",
        "unix:dir=tmp",
        f"unix:path={layout['tmp']}/repo%2fbus",  # D-Bus decodes it into the work tree
    ):
        refused, _ = confined({"DBUS_SESSION_BUS_ADDRESS": address}, layout)
        assert refused == ["DBUS_SESSION_BUS_ADDRESS"], address
    for address in (mine, "unix:abstract=/tmp/dbus-x,guid=1"):
        assert confined({"DBUS_SESSION_BUS_ADDRESS": address}, layout)[0] == [], address


def test_a_dropped_variable_is_never_honoured_where_the_agent_starts_precompact(layout):
    refused, environ = confined({"SSLKEYLOGFILE": str(layout["outside"] / "keys"), "LANG": "C.UTF-8"}, layout)
    assert (refused, environ) == (["SSLKEYLOGFILE"], {"LANG": "C.UTF-8"})
    assert user_roots.refused_notice(refused).startswith("SSLKEYLOGFILE ignored: never honoured")
    own_shell = {"SSLKEYLOGFILE": str(layout["outside"] / "keys")}
    assert user_roots.confine(own_shell, [str(layout["project"])], agent_started=False) == []
    assert own_shell == {"SSLKEYLOGFILE": str(layout["outside"] / "keys")}


def test_a_command_keeps_sslkeylogfile_in_your_own_shell_and_drops_it_in_an_agents_session(tmp_path):
    """docs/security.md: SSLKEYLOGFILE is a debugging setting of the user's; only where the agent
    starts precompact (its environment the project's to set) is it refused, with a fix that works."""
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    keys = {"SSLKEYLOGFILE": str(tmp_path / "keys.log")}
    own_shell = commands.precompact(project.path, "status", env=keys)
    assert own_shell.returncode == 0 and "SSLKEYLOGFILE" not in own_shell.stderr, own_shell.stderr
    in_session = commands.precompact(project.path, "status", env={**keys, "CLAUDECODE": "1"})
    assert in_session.returncode == 0, in_session.stderr
    assert (
        "SSLKEYLOGFILE ignored: never honoured where the agent starts precompact, whose environment the project can "
        "set (it is honoured in a command you run in your own shell; unset it in the agent's environment)"
    ) in in_session.stderr


def test_the_users_home_kept_in_git_is_never_the_project(tmp_path):
    """A home kept in git (dotfiles): discovery gives the home as the work tree of a project in
    it with no repository of its own; the places confined are its configuration's directory
    alone, so the user's ssh agent, `~/.local/bin` and `~/.claude` under the home stay theirs. A
    project with its own repository inside the home, or the home's own configuration, keeps
    what it owns."""
    home = tmp_path / "home"
    notes, repository = home / "notes", home / "code" / "repo"
    for place in (notes, repository / "sub"):
        place.mkdir(parents=True)
    assert user_roots.project_places([str(notes), str(home)], str(home)) == [str(notes.resolve())]
    assert user_roots.project_places([str(repository / "sub"), str(repository)], str(home)) == [
        str((repository / "sub").resolve()),
        str(repository.resolve()),
    ]
    assert user_roots.project_places([str(home), str(home)], str(home)) == [], "the home's own configuration"
    assert user_roots.project_places(["/"], str(home)) == [], "a folder holding the home"
    (tmp_path / "home-link").symlink_to(home)
    assert user_roots.project_places([str(notes), str(home)], str(tmp_path / "home-link")) == [str(notes.resolve())]
    assert user_roots.project_places([str(notes), str(home)], None) == [str(notes.resolve()), str(home.resolve())], (
        "no home in the password database: nothing is spared"
    )
    assert user_roots.project_places([str(tmp_path / "homestead")], str(home)) == [
        str((tmp_path / "homestead").resolve())
    ], "a sibling whose name starts as the home's is not the home"


def test_pip_is_handed_only_where_and_how_to_fetch(tmp_path):
    """review6 F2: the agent's environment is the project's to set, and pip reads PIP_* as its
    command line. PIP_REQUIREMENT would add a wheel of the project's to the plugin's environment
    (its `.pth` then runs in every precompact process): it, and every PIP_* that says what is
    installed or where, never reaches pip; the index, proxy and timeouts do."""
    fetching = {
        "PIP_INDEX_URL": "https://mirror.example/simple",
        "PIP_EXTRA_INDEX_URL": "https://other.example/simple",
        "PIP_TRUSTED_HOST": "mirror.example",
        "PIP_PROXY": "http://127.0.0.1:9",
        "PIP_TIMEOUT": "5",
        "PIP_RETRIES": "1",
        "PIP_NO_CACHE_DIR": "1",
        "PIP_FIND_LINKS": str(tmp_path / "wheels"),
        "PIP_NO_INDEX": "1",
    }
    hostile = {
        name: f"file://{tmp_path / 'evil.txt'}"
        for name in ("PIP_REQUIREMENT", "PIP_CONSTRAINT", "PIP_TARGET", "PIP_PREFIX", "PIP_CONFIG_FILE", "PIP_NO_DEPS")
    }
    environ = {**{k: v for k, v in os.environ.items() if not k.startswith("PIP_")}, **fetching, **hostile}
    seen = processes.run_python(
        [
            *processes.isolated_python(),
            "-c",
            "import json, os; print(json.dumps({k: v for k, v in os.environ.items() if k.startswith('PIP_')}))",
        ],
        environ=environ,
        timeout=60,
    )
    assert json.loads(seen.stdout) == fetching, seen.stderr


def test_the_hook_refuses_the_projects_places_logs_them_and_hands_git_none_of_them(tmp_path, home):
    """The hook and the worker it starts, on the real binary: a CA file, an ssh agent socket, a
    temporary directory and a TLS key log the project's settings point into its own tree."""
    project = new_project(tmp_path, "project", git_layer=True, chain_layer=False)
    planted = {
        "SSL_CERT_FILE": str(project.path / "ca.pem"),
        "SSL_CERT_DIR": "certs",
        "SSH_AUTH_SOCK": str(project.path / "agent.sock"),
        "TMPDIR": str(project.path / "tmp"),
        "SSLKEYLOGFILE": str(project.path / "keys.log"),
        "https_proxy": "http://127.0.0.1:9",  # kept: the route, not what is trusted
    }
    (project.path / "tmp").mkdir()
    env = {**os.environ, **planted, "no_proxy": "*"}
    done = commands.hook(payload("PreCompact", project.path), cwd=project.path, timeout=60, env=env)
    assert done.returncode == 0 and b"saved" in done.stdout, done.stdout + done.stderr
    logged = (project.logs / "precompact-errors.log").read_text()
    assert (
        "PreCompact (notice): SSL_CERT_FILE, SSL_CERT_DIR, SSH_AUTH_SOCK, TMPDIR ignored: a relative path, or a place in the project"
        in logged
    )
    assert "; SSLKEYLOGFILE ignored: never honoured where the agent starts precompact" in logged
    assert "https_proxy" not in logged
    assert wait_until(lambda: b"LAYER_2_PUSHED" in (project.logs / "precompact-savepoint.jsonl").read_bytes(), 90), (
        "the worker pushed: the project's ssh agent, CA file and temporary directory unset, its proxy kept"
    )
    assert not (project.path / "keys.log").exists() and list((project.path / "tmp").iterdir()) == []


def test_git_is_handed_only_what_confine_left(tmp_path, monkeypatch):
    for name, value in {
        "SSL_CERT_FILE": str(tmp_path / "ca.pem"),
        "SSH_AUTH_SOCK": "agent.sock",
        "TMPDIR": "/var/tmp",
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("SSLKEYLOGFILE", "/var/tmp/keys")
    assert user_roots.confine(os.environ, [str(tmp_path)]) == ["SSL_CERT_FILE", "SSH_AUTH_SOCK", "SSLKEYLOGFILE"]
    handed = git_env.environment(tmp_path)
    assert "SSL_CERT_FILE" not in handed and "SSH_AUTH_SOCK" not in handed and "SSLKEYLOGFILE" not in handed
    assert handed["TMPDIR"] == "/var/tmp", "a place outside the project is kept"
    assert (
        "SSL_CERT_FILE" not in processes.python_environment() and processes.python_environment()["TMPDIR"] == "/var/tmp"
    )


def test_what_a_shell_reads_at_start_reaches_none_of_precompacts_children(tmp_path, monkeypatch):
    """docs/agents.md, "A project's `.env`": a project's `.env` sets BASH_ENV (or ENV, SHELLOPTS,
    PS4) in Gemini CLI's hook environment; neither git nor the worker precompact starts is handed
    one, so no shell they might start runs the project's file."""
    for name in ("BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "PS4"):
        monkeypatch.setenv(name, str(tmp_path / "evil.sh"))
    handed = {**git_env.environment(tmp_path), **processes.python_environment()}
    assert not {"BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "PS4"} & set(handed), handed


def test_a_home_that_is_the_work_tree_is_judged_by_the_configurations_directory_alone(layout, monkeypatch):
    """A home kept in git, a project in it with no repository of its own (review6 F5): the home
    is the user's, not the project's, so its ssh agent, `~/.local/bin` and Claude Code's folders
    are kept; what lies in the configuration's directory is still refused."""
    home = layout["worktree"]
    monkeypatch.setattr(user_roots, "password_home", lambda: str(home))
    mine = {
        "CLAUDE_PLUGIN_DATA": str(home / ".claude" / "plugins" / "data" / "precompact-precompact"),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "SSH_AUTH_SOCK": str(home / ".1password" / "agent.sock"),
        "CODEX_HOME": str(home / ".codex"),
        "PATH": f"{home / '.local' / 'bin'}:/usr/bin",
    }
    assert confined(dict(mine), layout) == ([], mine)
    for name, value in (
        ("CLAUDE_PLUGIN_DATA", str(home / ".claude" / ".." / "sub" / "venv")),
        ("CLAUDE_CONFIG_DIR", str(layout["project"] / ".claude")),
        ("SSH_AUTH_SOCK", str(layout["project"] / "agent.sock")),
    ):
        left = {name: ""} if name in user_roots.EMPTY_IS_HERE else {}  # not known: never ~/.claude
        assert confined({name: value}, layout) == ([name], left), value
    assert confined({"PATH": f"{layout['project'] / 'bin'}:/usr/bin"}, layout) == ([], {"PATH": "/usr/bin"})
