"""One CLI contract (docs/cli.md): every command that reports or acts takes `--json` and prints
one document its schema in docs/schemas/ accepts, errors included; the exit codes mean the same
for every command (0 done, 1 failed, 2 usage, 3 saved but a layer queued or off) and every
--help shows them; `uncompact` is a command; `key rekey` is under `key` (`rekey` still works)."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest
from jsonschema import Draft202012Validator

from precompact.edges import cli
from support import transcript_gen
from support.commands import INSTANCE, initialized_and_funded, invoke
from support.localnet import REPO

SCHEMAS = REPO / "docs" / "schemas"
DONE, FAILED, USAGE, LAYER_PENDING = 0, 1, 2, 3
# Commands that neither report nor act on savepoints: servers and the hook (which always exits
# 0), the hooks' own installers, and `key export`, whose output is the secret key itself.
WITHOUT_JSON = {"hook", "mcp", "install", "uninstall", "key export", "view"}


def schema(name: str) -> Draft202012Validator:
    return Draft202012Validator(json.loads((SCHEMAS / f"{name}.schema.json").read_text()))


def run(name: str, *args: str, exit_code: int = DONE):
    """`precompact ARGS --json`: its exit code as expected, stdout one document `name`'s schema
    accepts (the error schema when it failed). The document."""
    result = invoke(*args, "--json")
    assert result.exit_code == exit_code, result.output
    document = json.loads(result.stdout)
    errors = [e.message for e in schema(name).iter_errors(document)]
    assert not errors, (args, errors, document)
    return document


def commands(group: click.Group = cli.main, prefix: str = ""):
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            yield from commands(command, f"{prefix}{name} ")
        elif not command.hidden:
            yield f"{prefix}{name}", command


def test_every_schema_is_valid_and_belongs_to_a_command():
    names = {path.name.removesuffix(".schema.json") for path in SCHEMAS.iterdir()}
    for name in names:
        Draft202012Validator.check_schema(json.loads((SCHEMAS / f"{name}.schema.json").read_text()))
    with_json = {
        name.replace(" ", "-") for name, command in commands() if any(p.name == "as_json" for p in command.params)
    }
    assert names == with_json | {"error"}


def test_every_command_that_reports_or_acts_takes_json_and_shows_the_exit_codes():
    for name, command in commands():
        if name not in WITHOUT_JSON:
            assert "--json" in [o for p in command.params for o in getattr(p, "opts", [])], name
        shown = invoke(*name.split(), "--help")
        assert shown.exit_code == DONE
        assert "3  saved, but not on every layer" in shown.output, name
    assert "Exit codes" in invoke("--help").output


@pytest.fixture
def git_only(workspace, monkeypatch, tmp_path):
    """A project with Layer 3 off, one savepoint of a realistic session, and a HOME of its own."""
    project, _ = workspace
    monkeypatch.chdir(project)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    document = run("init", "init", "--instance", INSTANCE, "--chain", "off")
    assert (document["chain"], document["config"]) == ("off", str(project / ".precompact.toml"))
    transcript = transcript_gen.generate(tmp_path / "session.jsonl", project=project, planted=["zebracorn"])
    saved = run("savepoint", "savepoint", "--transcript", str(transcript.path), exit_code=LAYER_PENDING)
    assert (saved["layer_2"], saved["layer_3"]) == (
        {"state": "done", "problem": None},
        {"state": "off", "problem": None},
    )
    return project


def test_a_git_only_project_answers_every_command_in_json_with_the_documented_exit_codes(git_only, tmp_path):
    run("trust", "trust", "--yes")
    assert run("trust", "trust", "--yes")["approved"] is False, "trusted as it is already"
    assert run("flush", "flush")["layer_3"]["state"] == "off", "nothing left to retry"
    [row] = run("status", "status")["savepoints"]
    assert (row["layer_2"], row["layer_3"]) == ("PUSHED", "OFF")
    assert run("inspect", "inspect")["layer_3"] == "OFF"
    verified = run("verify", "verify")
    assert (verified["verified"], verified["checked"], verified["chain"]) == (True, [1], "off")
    assert run("verify", "verify", "--all")["checked"] == [1], "--all: every savepoint, spelled out"
    assert run("restore", "restore")["present"] == 1, "logs/ holds what the remote holds"
    restored = run("resurrect", "resurrect")
    assert restored["verified"] and restored["messages"] > 0
    assert json.loads(invoke("resurrect", "--format", "json").stdout) == restored, "the older spelling still works"
    hits = run("recall", "recall", "zebracorn")
    assert hits["matched"] >= 1 and all(h["ref"] == f"{h['sequence']}:{h['position']}" for h in hits["hits"])
    first = hits["hits"][0]["ref"]
    assert len(run("show", "show", first)) == 1
    written = tmp_path / "export.json"
    assert run("export", "export", "--output", str(written))["bytes"] == written.stat().st_size
    assert run("key-show", "key", "show")["public_keys"][0]["recipient"] is True
    assert run("key-rekey", "key", "rekey")["commit"] is None, "already encrypted to the recipients"
    assert run("import", "import")["counts"]["failed"] == 0
    doctor = invoke("doctor", "--json")
    assert not list(schema("doctor").iter_errors(json.loads(doctor.stdout)))
    assert run("prune", "prune", "--keep", "1")["pruned"] == []
    uncompacted = run("uncompact", "uncompact")
    assert uncompacted["messages"] == restored["messages"] and uncompacted["entries"] >= uncompacted["messages"]
    # A proof needs the chain, which is off here: an error, as JSON.
    assert "chain" in run("error", "prove", "1", exit_code=FAILED)["error"]


def test_key_import_reports_where_the_identity_went(git_only, tmp_path, monkeypatch):
    exported = tmp_path / "identity.txt"
    exported.write_text(invoke("key", "export").stdout)
    monkeypatch.setenv("PRECOMPACT_IDENTITY", str(tmp_path / "elsewhere" / "identity.txt"))
    imported = run("key-import", "key", "import", str(exported))
    assert imported["identity"] == str(tmp_path / "elsewhere" / "identity.txt")
    assert imported["public_keys"] == [run("key-show", "key", "show")["public_keys"][0]["public_key"]]


def test_with_the_chain_on_every_layer_is_done_and_the_proof_commands_answer_in_json(workspace, monkeypatch, localnet):
    project, _ = workspace
    initialized_and_funded(project, monkeypatch, localnet.url)
    saved = run("savepoint", "savepoint", "--no-transcript")  # exit 0: on all three layers
    assert saved["layer_2"]["state"] == saved["layer_3"]["state"] == "done"
    record = run("inspect", "inspect")
    assert (record["sequence"], record["verdict"], record["signature_valid"]) == (1, "verified", True)
    bundle = project.parent / "bundle.json"
    assert run("prove", "prove", "1", "--output", str(bundle))["bytes"] == bundle.stat().st_size
    assert run("verify-bundle", "verify-bundle", str(bundle))["status"] == "verified"
    ledger = run("verify", "verify", "--ledger")["ledger"]
    assert [(v["instance"], v["status"]) for v in ledger] == [(INSTANCE, "verified")]


def test_errors_are_json_when_asked_and_one_line_otherwise(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    unconfigured = (
        *("status", "verify", "flush", "savepoint", "import", "inspect", "resurrect", "uncompact", "export"),
        *("show 1:1", "prove 1", "prune --keep 1", "key show", "key import -", "key rekey", "restore"),
    )
    for command in unconfigured:
        failed = run("error", *command.split(), exit_code=FAILED)
        assert failed["exit_code"] == FAILED and "precompact init" in failed["error"], command
        plain = invoke(*command.split())
        assert plain.exit_code == FAILED and plain.output.count("\n") == 1 and plain.output.startswith("Error: ")
    # Outside a project, recall searches every project this machine archived (none here).
    assert run("recall", "recall", "x")["projects"] == 0
    for usage in ("verify --sequence 0", "status --no-such-option", "savepoint --transcript x --no-transcript"):
        assert run("error", *usage.split(), exit_code=USAGE)["exit_code"] == USAGE, usage
    assert "precompact init" in run("error", "trust", "--yes", exit_code=FAILED)["error"]
    checks = invoke("doctor", "--json")
    assert checks.exit_code == FAILED and not list(schema("doctor").iter_errors(json.loads(checks.stdout)))
    run("init", "init", "--chain", "off")
    assert "already exists" in run("error", "init", "--chain", "off", exit_code=FAILED)["error"]
    bundle = tmp_path / "bundle.json"
    bundle.write_text("{}")
    assert run("verify-bundle", "verify-bundle", str(bundle), exit_code=FAILED)["status"] == "FAILED"


def test_a_queued_layer_exits_3_and_names_each_distinct_problem_once(git_only):
    # The remote git.url names is gone.
    (git_only.parent / "remote.git").rename(git_only.parent / "gone.git")
    for _ in range(3):
        saved = run("savepoint", "savepoint", "--no-transcript", exit_code=LAYER_PENDING)
        assert saved["layer_2"]["state"] == "queued" and "push" in saved["layer_2"]["problem"]
    flushed = run("flush", "flush", exit_code=LAYER_PENDING)
    assert flushed["layer_2"]["state"] == "queued"
    rows = run("status", "status")["savepoints"]
    assert [r["layer_2"] for r in rows] == ["PUSHED", "FAILED", "FAILED", "FAILED"]
    assert all(len(r["failures"]) == len(set(r["failures"])) for r in rows), rows


def test_uncompact_is_a_command_and_resurrect_uncompact_still_writes_the_same(git_only):
    home = Path.home()
    done = invoke("uncompact")
    assert done.exit_code == DONE, done.output
    said = done.output.splitlines()
    assert (
        said[0].startswith("wrote savepoint 1's conversation (") and "transcript entries) as a new session" in said[0]
    )
    restored = json.loads(invoke("resurrect", "--json").stdout)
    assert f"({restored['messages']} messages, " in said[0]
    assert f"({restored['messages']} messages, " in invoke("resurrect").output, "the report counts the same thing"
    old = invoke("resurrect", "--uncompact")
    assert old.exit_code == DONE and old.output.splitlines()[0].startswith("wrote savepoint 1's conversation (")
    sessions = sorted((home / ".claude" / "projects").rglob("*.jsonl"))
    assert len(sessions) == 2 and sessions[0].read_bytes().count(b"\n") == sessions[1].read_bytes().count(b"\n")
    assert invoke("resurrect", "--uncompact", "--restore-state").exit_code == USAGE


def test_key_rekey_lives_under_key_and_the_old_name_still_works(git_only):
    rekeyed = run("key-rekey", "key", "rekey")
    assert run("key-rekey", "rekey") == rekeyed
    assert "rekey" not in invoke("--help").output.split("Commands:")[1].split()
    assert "rekey" in invoke("key", "--help").output


def test_instance_picks_whose_savepoints(git_only):
    assert run("status", "status", "--instance", "someone else")["savepoints"] == []
    assert len(run("status", "status", "--instance", INSTANCE)["savepoints"]) == 1
    assert run("recall", "recall", "zebracorn", "--instance", "someone else")["hits"] == []
    other = run("verify", "verify", "--instance", "someone else", "--sequence", "1", exit_code=FAILED)
    assert other["findings"][0]["problem"] == "no such savepoint in the index"
    assert run("error", "verify", "--instance", INSTANCE, exit_code=USAGE)["exit_code"] == USAGE
    assert "--instance is empty" in run("error", "status", "--instance", " ", exit_code=USAGE)["error"]


def test_show_prints_an_entry_without_text_as_it_is_stored_instead_of_quoting_nothing(git_only, tmp_path):
    said = [
        {"type": "user", "uuid": "u1", "message": {"role": "user", "content": "Which files hold the parser?"}},
        {
            "type": "assistant",
            "uuid": "a1",
            "message": {
                "id": "m1",
                "role": "assistant",
                "content": [{"type": "thinking", "thinking": "", "signature": "c2ln"}],
            },
        },
        {
            "type": "assistant",
            "uuid": "a2",
            "message": {"id": "m1", "role": "assistant", "content": [{"type": "text", "text": "parser.py"}]},
        },
    ]
    transcript = tmp_path / "thinking.jsonl"
    transcript.write_text("".join(json.dumps({"sessionId": "s-thinking", **entry}) + "\n" for entry in said))
    run("savepoint", "savepoint", "--transcript", str(transcript), exit_code=LAYER_PENDING)
    shown = invoke("show", "2:1-3")
    assert shown.exit_code == DONE, shown.output
    blocks = shown.output.rstrip("\n").split("\n\n")
    assert (
        len(blocks) == 3 and blocks[0].endswith("> Which files hold the parser?") and blocks[2].endswith("> parser.py")
    )
    stored = blocks[1].splitlines()[1]
    assert stored.startswith("> {") and '"type":"thinking"' in stored, blocks[1]
    assert run("show", "show", "2:2")[0]["message"]["content"][0]["type"] == "thinking"
