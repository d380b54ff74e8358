"""A new user's first day (#40's papercuts, #48's first-day failures), through the installed
binary: what `init` keeps out of git status wherever git keeps its exclude file, and says only
after git confirms it; the exit codes docs/cli.md's table gives; what `init` and the first
`trust` say."""

from __future__ import annotations

import json
import socket
import subprocess
import tomllib
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from precompact.config import settings as configuration
from precompact.local import savepoint_log
from precompact.ops.project_init import TURN_CHAIN_ON
from support.commands import INSTANCE, invoke, precompact, run_git
from support.conversations import START, Conversation, save
from support.mock_http import MockServer
from support.projects import new_project


def repository(path: Path) -> Path:
    """A git repository at `path` with one commit."""
    path.mkdir(parents=True)
    run_git(path, "init", "-q", "-b", "main")
    run_git(
        path,
        "-c",
        "user.name=Dev",
        "-c",
        "user.email=dev@example.invalid",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "initial",
    )
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


def test_init_off_a_terminal_without_an_instance_names_the_option(tmp_path):
    """#40.7: `! precompact init` inside Claude Code (no terminal, no --instance) ended in a bare
    "Aborted!"."""
    project = repository(tmp_path / "project")
    done = precompact(project, "init", "--chain", "off")
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        'Error: not at a terminal, so init cannot ask for the instance name: give --instance NAME (e.g. --instance "project #1"), or --yes for that one'
    ]
    assert not (project / ".precompact.toml").exists()


def nothing_at_the_local_cluster() -> None:
    with socket.socket() as probe:
        if probe.connect_ex(("127.0.0.1", 8899)) == 0:
            pytest.skip("something listens at 127.0.0.1:8899, where init looks for the local cluster")


def test_init_chain_local_with_nothing_listening_says_so(tmp_path):
    """#40.7: `init --chain local` with no cluster at 127.0.0.1:8899 was silent."""
    nothing_at_the_local_cluster()
    project = repository(tmp_path / "project")
    done = precompact(project, "init", "--instance", INSTANCE, "--chain", "local", "--no-encrypt")
    assert done.returncode == 0, done.stderr
    assert (
        "warning: no cluster answers at http://127.0.0.1:8899 yet: savepoints stay queued for Layer 3 until one does"
        in done.stderr
    )


def test_with_the_chain_off_the_config_names_no_cluster(tmp_path):
    """#40.7: with the chain off the file still read `cluster = "http://127.0.0.1:8899"`."""
    project = repository(tmp_path / "project")
    assert init(project).returncode == 0
    written = (project / ".precompact.toml").read_text()
    assert "127.0.0.1" not in written and "\ncluster =" not in written
    assert tomllib.loads(written)["layers"]["chain"] is False


class Answering(MockServer):
    """Whatever answers at the local cluster's address: `result` to every JSON-RPC call."""

    def __init__(self, result: object):
        super().__init__()
        self.result = result

    def answer(self, exchange, body):
        exchange.send_json(200, {"jsonrpc": "2.0", "id": body.get("id"), "result": self.result})


@pytest.mark.parametrize(("health", "on"), [("ok", True), ({"hello": "a web app"}, False)])
def test_init_says_it_turned_the_chain_on_because_a_cluster_answered(tmp_path, monkeypatch, health, on):
    """#48: `init` turned the chain on without saying so when anything answered at
    127.0.0.1:8899; now only a healthy node's "ok" does, and init says so in one line."""
    monkeypatch.chdir(repository(tmp_path / "project"))
    with Answering(health) as server:
        monkeypatch.setattr(configuration, "DEFAULT_CLUSTER", server.url)
        result = invoke("init", "--yes", "--instance", INSTANCE, "--no-encrypt")
    assert result.exit_code == 0, result.output
    said = [line for line in result.output.splitlines() if line.startswith("Layer 3")]
    if on:
        assert said == [
            f"Layer 3 (the chain) is on: a Solana cluster answers at {server.url}, so savepoints are anchored there; `precompact init --force --chain off` turns it off"
        ]
    else:
        assert said == [f"Layer 3 (the chain) is off: no cluster answers at {server.url}; {TURN_CHAIN_ON}"]
    assert tomllib.loads((tmp_path / "project" / ".precompact.toml").read_text())["layers"]["chain"] is on


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("show", "abc"), '"abc" is not an entry reference; give SAVEPOINT:ENTRY or SAVEPOINT:FIRST-LAST'),
        (("show", "3:0"), '"3:0": give entries from 1 up'),
        (("resurrect", "--at", "yesterday"), "--at 'yesterday' is not an ISO 8601 time"),
        (("uncompact", "--at", "yesterday"), "--at 'yesterday' is not an ISO 8601 time"),
        (("recall", "tests", "--since", "yesterday"), "since 'yesterday' is not an ISO 8601 time"),
    ],
)
def test_a_value_not_of_its_form_exits_2_as_the_exit_code_table_says(tmp_path, args, said):
    """#48: these exited 1, where docs/cli.md gives 2 to a wrong option or argument."""
    project = repository(tmp_path / "project")
    assert init(project).returncode == 0
    done = precompact(project, *args)
    assert done.returncode == 2, done.stderr
    assert len(done.stderr.splitlines()) == 1 and done.stderr.startswith(f"Error: {said}")
    as_json = precompact(project, *args, "--json")
    assert as_json.returncode == 2
    assert json.loads(as_json.stdout)["exit_code"] == 2


def test_a_manual_savepoint_with_nothing_new_makes_none_and_exits_5(tmp_path):
    """#40.9: `precompact savepoint` with nothing said since the last savepoint made another one
    (the hook already skipped that case)."""
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    talk = Conversation(tmp_path / "talk.jsonl", "s-talk", START)
    talk.turn_with("Run the tests.", "pytest -q", "3 passed", "The tests pass.")
    again = ("savepoint", "--transcript", str(talk.path), "--session-id", talk.session_id)
    assert precompact(project.path, *again).returncode == 3  # saved; Layers 2 and 3 are off
    unchanged = precompact(project.path, *again)
    assert unchanged.returncode == 5, unchanged.stderr
    assert unchanged.stdout == (
        "nothing new since savepoint 1: the session has said nothing since it, so no savepoint was made (`precompact savepoint --force` makes one anyway)\n"
    )
    as_json = precompact(project.path, *again, "--json")
    assert as_json.returncode == 5
    assert json.loads(as_json.stdout) == {"instance": project.instance, "savepoint": None, "unchanged_since": 1}
    schema = json.loads((Path(__file__).parents[2] / "docs" / "schemas" / "savepoint.schema.json").read_text())
    Draft202012Validator(schema).validate(json.loads(as_json.stdout))
    assert len(savepoint_log.savepoints(project.path / "logs", project.instance)) == 1
    forced = precompact(project.path, *again, "--force")
    assert forced.returncode == 3, forced.stderr
    talk.turn_with("And the linter.", "ruff check", "All checks passed!", "Clean.")
    assert precompact(project.path, *again).returncode == 3
    assert [s.sequence for s in savepoint_log.savepoints(project.path / "logs", project.instance)] == [1, 2, 3]


def test_recall_shows_an_entry_saved_in_several_copies_once_naming_the_others(tmp_path):
    """#40.8: recall returned the same entry once per copy (the original session and each
    uncompacted copy saved again): 6 hits for 2 lines."""
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    for copy in ("s-original", "s-uncompacted-1", "s-uncompacted-2"):
        talk = Conversation(tmp_path / f"{copy}.jsonl", copy, START)
        talk.turn_with("Deploy the frobnicator.", "deploy frobnicator", "frobnicator deployed", "Done.")
        save(project, talk)
    found = precompact(project.path, "recall", "frobnicator", "--json")
    assert found.returncode == 0, found.stderr
    document = json.loads(found.stdout)
    schema = json.loads((Path(__file__).parents[2] / "docs" / "schemas" / "recall.schema.json").read_text())
    Draft202012Validator(schema).validate(document)
    hits = document["hits"]
    assert len(hits) == 3 and document["matched"] == 3, "three entries say it: the request, the command, the result"
    assert [len(hit["also"]) for hit in hits] == [2, 2, 2]
    assert len({hit["ref"] for hit in hits} | {ref for hit in hits for ref in hit["also"]}) == 9
    text = precompact(project.path, "recall", "frobnicator")
    headers = [line for line in text.stdout.splitlines() if line.startswith("[")]
    assert len(headers) == 3 and all(" · also in " in line for line in headers)


def test_install_keeps_mcp_json_out_of_git_status_and_names_an_untracked_shared_hook_file(tmp_path):
    """#40.5: `install --mcp` and `install --agent codex` left `?? .mcp.json` and `?? .codex/`
    for the agent to see in every session. `.mcp.json` names this machine's precompact
    (docs/sessions.md): excluded, checked. A hook file may hold the team's other settings: the
    user decides, told once in one line that its command is this machine's path."""
    project = repository(tmp_path / "project")
    assert init(project).returncode == 0
    home = tmp_path / "home"
    home.mkdir()
    claude = precompact(project, "install", "--mcp", home=home)
    assert claude.returncode == 0, claude.stderr
    assert "added /.mcp.json to " in claude.stdout and "git status no longer shows it (checked)" in claude.stdout
    assert (
        "note: .claude/settings.json is untracked: it runs precompact by this machine's path, so commit it only if every teammate has precompact there, or add it to .git/info/exclude (or install with --scope user)"
        in claude.stdout.splitlines()
    )
    codex = precompact(project, "install", "--agent", "codex", home=home)
    assert codex.returncode == 0, codex.stderr
    assert "note: .codex/hooks.json is untracked: it runs precompact by this machine's path" in codex.stdout
    assert git_status(project) == "?? .claude/settings.json\n?? .codex/hooks.json\n"
