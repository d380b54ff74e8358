"""A project forgotten on this machine (`precompact projects --forget`) keeps nothing new outside
it until `projects --add` or `init` there, whichever agent's hooks save there: a Codex CLI,
Gemini CLI or OpenCode session's savepoint reads its session file into a document held only
while the savepoint is made (transcript/agents.held), never one under precompact's state
directory, and `flush` and `status` say Layer 2 waits as they do for Claude Code's
(local/registry.keeps_outside, layers_wait)."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from pathlib import Path

import pytest

from support.claude_code import wait_for_worker
from support.commands import precompact
from support.projects import Project, new_project
from test_opencode_reader import SESSION as OPENCODE_SESSION
from test_opencode_reader import database

WORD = "quagga"
SESSION = "01a2355d-d3df-7661-851d-76b764947144"


def codex_session(tmp_path: Path, project: Path) -> Path:
    said = [
        {"type": "session_meta", "payload": {"id": SESSION, "cwd": str(project), "cli_version": "0.171.0"}},
        {"type": "response_item", "payload": _message("user", f"Feed the {WORD} before noon.")},
        {"type": "response_item", "payload": _message("assistant", f"The {WORD} is fed.")},
    ]
    rollout = tmp_path / "rollout.jsonl"
    rollout.write_text(
        "".join(
            json.dumps({"timestamp": f"2026-12-02T06:07:0{n}.000Z", "ordinal": n, **r}) + "\n"
            for n, r in enumerate(said)
        )
    )
    return rollout


def _message(role: str, text: str) -> dict:
    kind = "output_text" if role == "assistant" else "input_text"
    return {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}


def gemini_session(tmp_path: Path, project: Path) -> Path:
    chat = [
        {"sessionId": SESSION, "projectHash": "2e59", "startTime": "2026-12-02T06:17:10.112Z", "kind": "main"},
        {"id": "u1", "timestamp": "t1", "type": "user", "content": [{"text": f"Feed the {WORD} before noon."}]},
        {"id": "g1", "timestamp": "t2", "type": "gemini", "content": f"The {WORD} is fed.", "model": "gemini"},
    ]
    path = tmp_path / "chat.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in chat))
    return path


def opencode_session(tmp_path: Path, project: Path) -> Path:
    return database(
        tmp_path / "opencode.db",
        [("msg_1", "prt_1", json.dumps({"type": "text", "text": f"Feed the {WORD} before noon."}))],
        directory=str(project),
    )


AGENTS = {
    "codex": (codex_session, SESSION),
    "gemini": (gemini_session, SESSION),
    "opencode": (opencode_session, OPENCODE_SESSION),
}


def outside(tmp_path: Path) -> dict[str, str]:
    """Every file under precompact's state and data directories (the test's own), with its digest."""
    found = {}
    for home in ("XDG_STATE_HOME", "XDG_DATA_HOME"):
        for path in Path(os.environ[home]).rglob("*"):
            if path.is_file():
                found[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


# Each agent's event before a compaction (Gemini CLI's compression), then the others that read the
# session file: they find nothing said since (no savepoint), but read it all the same.
BEFORE = {"codex": "PreCompact", "gemini": "PreCompress", "opencode": "PreCompact"}
AFTER = {"codex": ("PostCompact", "SessionEnd"), "gemini": ("SessionEnd",), "opencode": ("PostCompact", "SessionEnd")}


def compact(project: Project, agent: str, session_file: Path, session_id: str, event: str | None = None):
    payload = {
        "hook_event_name": event or BEFORE[agent],
        "session_id": session_id,
        "transcript_path": str(session_file),
        "cwd": str(project.path),
        "trigger": "manual",
    }
    done = precompact(project.path, "hook", "--agent", agent, stdin=payload, env={"HOME": str(project.path.parent)})
    assert done.returncode == 0, done.stderr
    return done


def created(project: Project) -> list[dict]:
    index = project.logs / "precompact-savepoint.jsonl"
    return [e for e in map(json.loads, index.read_text().splitlines()) if e["event"] == "SAVEPOINT_CREATED"]


def documents() -> list[Path]:
    folder = Path(os.environ["XDG_STATE_HOME"]) / "precompact" / "agent-documents"
    return [p for p in folder.rglob("*") if p.is_file() and WORD.encode() in p.read_bytes()]


def go_on(agent: str, session_file: Path, session_id: str, text: str, number: int) -> None:
    """The session says `text` (its `number`th line of this test)."""
    if agent == "codex":
        with session_file.open("a") as f:
            said = {"type": "response_item", "payload": _message("user", text)}
            f.write(json.dumps({"timestamp": f"2026-12-02T06:08:0{number}.000Z", "ordinal": number, **said}) + "\n")
    elif agent == "gemini":
        with session_file.open("a") as f:
            f.write(
                json.dumps({"id": f"u{number}", "timestamp": f"t{number}", "type": "user", "content": [{"text": text}]})
            )
            f.write("\n")
    else:
        db = sqlite3.connect(session_file)
        data = json.dumps({"role": "user", "time": {"created": 1796308390000 + number}})
        db.execute("INSERT INTO message VALUES (?, ?, 0, 0, ?)", (f"msg_{number}", session_id, data))
        said = json.dumps({"type": "text", "text": text})
        db.execute("INSERT INTO part VALUES (?, ?, ?, 0, 0, ?)", (f"prt_{number}", f"msg_{number}", session_id, said))
        db.commit()
        db.close()


@pytest.mark.parametrize("agent", AGENTS)
def test_a_forgotten_projects_savepoints_of_any_agent_keep_nothing_outside_it(tmp_path, agent):
    project = new_project(tmp_path, "project", git_layer=True, chain_layer=False)
    make, session_id = AGENTS[agent]
    session_file = make(tmp_path, project.path)
    compact(project, agent, session_file, session_id)  # before: its document is kept
    wait_for_worker(project)
    assert documents() and precompact(project.path, "flush").returncode == 0
    forgot = precompact(tmp_path, "projects", "--forget", str(project.path))
    assert forgot.returncode == 0, forgot.stderr
    assert not documents(), "--forget removed it"
    before = outside(tmp_path)

    go_on(agent, session_file, session_id, f"Feed the {WORD} before noon again.", 8)
    compact(project, agent, session_file, session_id)
    for event in AFTER[agent]:  # nothing said since: no third savepoint
        compact(project, agent, session_file, session_id, event)
    wait_for_worker(project)
    assert [(e["agent"], e["sequence"]) for e in created(project)] == [(agent, 1), (agent, 2)], "saved in its logs/"
    assert outside(tmp_path) == before, "no document, read position, lock or git directory outside the project"
    found = precompact(project.path, "recall", WORD)
    assert found.returncode == 0 and f"Feed the {WORD}" in found.stdout, "the savepoint holds the session"

    fix = f"`precompact projects --add {project.path}`"
    flushed = precompact(project.path, "flush", "--json")
    assert flushed.returncode == 3 and json.loads(flushed.stdout)["layer_2"]["state"] == "waiting", flushed.stderr
    assert f"… Layer 2: waits: {project.path} is forgotten on this machine" in flushed.stderr and fix in flushed.stderr
    status = precompact(project.path, "status")
    assert status.returncode == 0 and any(
        line.startswith("Layer 2 waits") and line.endswith(fix) for line in status.stdout.splitlines()
    ), status.stdout
    assert outside(tmp_path) == before, "nor do flush and status make anything there"

    added = precompact(tmp_path, "projects", "--add", str(project.path))
    assert added.returncode == 0, added.stderr
    go_on(agent, session_file, session_id, f"Weigh the {WORD} too.", 9)
    compact(project, agent, session_file, session_id)
    wait_for_worker(project)
    assert len(created(project)) == 3 and documents(), "added again: its document is kept as any project's"
    assert precompact(project.path, "flush").returncode == 0


@pytest.mark.parametrize("agent", ["codex", "opencode"])
def test_a_savepoint_queued_in_a_forgotten_project_is_written_from_its_session_file(tmp_path, agent):
    """SessionEnd queues its savepoint at once while another save holds the index lock: the
    document the hook held is gone with it, so the worker reads the session file again, into a
    document of its own that lasts the savepoint, and the savepoint is not lost."""
    from test_hook_lock_wait import index_lock, queue_entries

    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    make, session_id = AGENTS[agent]
    session_file = make(tmp_path, project.path)
    compact(project, agent, session_file, session_id)
    wait_for_worker(project)
    assert precompact(tmp_path, "projects", "--forget", str(project.path)).returncode == 0
    before = outside(tmp_path)
    go_on(agent, session_file, session_id, "Count the okapi herd.", 8)
    holder = index_lock(project)
    try:
        compact(project, agent, session_file, session_id, "SessionEnd")
        assert len(queue_entries(project)) == 1 and len(created(project)) == 1, "queued, not written"
    finally:
        holder.stop()
    wait_for_worker(project)
    assert not queue_entries(project) and [e["trigger"] for e in created(project)] == ["manual", "session_end"]
    assert "Count the okapi herd." in precompact(project.path, "recall", "okapi").stdout
    assert outside(tmp_path) == before


@pytest.mark.parametrize("by_path", [True, False], ids=["/proc names descriptors", "no /proc (macOS)"])
def test_a_held_document_is_read_by_path_and_gone_after_where_or_not_the_system_names_descriptors(
    tmp_path, monkeypatch, by_path
):
    from precompact.transcript import agents

    monkeypatch.setattr(agents, "_descriptors_by_path", lambda: by_path)
    rollout = codex_session(tmp_path, tmp_path / "project")
    with agents.held(agents.CODEX, str(rollout), None) as document:
        path = Path(document.transcript_path)
        assert agents.is_held(document.transcript_path)
        assert WORD in path.read_text(encoding="utf-8")
        assert path.read_bytes() == path.read_bytes()  # each open reads from the start
        if not by_path:
            assert path.stat().st_mode & 0o077 == 0
    assert not by_path or str(path).startswith(agents.HELD_PREFIX)
    assert by_path or not path.exists()
    assert not agents.is_held(str(rollout)) and not agents.is_held(None)


def _replaced(session_file: Path) -> None:
    """Another file of the same bytes put in the session file's place (a new inode)."""
    copy = session_file.with_name(session_file.name + ".new")
    copy.write_bytes(session_file.read_bytes())
    os.replace(copy, session_file)


def _rewritten(session_file: Path) -> None:
    """The session file's bytes changed in place (the same file, the same size)."""
    data = session_file.read_bytes()
    assert b"okapi" in data
    with session_file.open("r+b") as f:
        f.write(data.replace(b"okapi", b"zebra"))


@pytest.mark.parametrize("agent", AGENTS)
@pytest.mark.parametrize("forgotten", [False, True], ids=["document kept", "document held"])
def test_a_queued_savepoint_of_another_agent_whose_session_changed_before_its_writer_is_never_written(
    tmp_path, agent, forgotten
):
    """fix13b: Codex's, Gemini's and OpenCode's queue entries say what the hook saw as Claude
    Code's do: the document's last bytes before its end and the session file. Queued (the index
    busy) and then, before the worker writes it: the document the hook kept removed (`prune`
    forgets documents), or, in a forgotten project whose document is read again from the session
    file, another file in the session file's place. fix15c: Codex's and Gemini's SessionEnd queue
    their session file unread (its size and last bytes): the file's bytes before that end
    rewritten in place, or another file in its place. No savepoint is written; the entry stays,
    named by `status` with the fix, and `flush --drop-queued` gives it up."""
    from precompact.local import snapshot
    from test_hook_lock_wait import index_lock, queue_entries

    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    make, session_id = AGENTS[agent]
    session_file = make(tmp_path, project.path)
    compact(project, agent, session_file, session_id)
    wait_for_worker(project)
    if forgotten:
        assert precompact(tmp_path, "projects", "--forget", str(project.path)).returncode == 0
    go_on(agent, session_file, session_id, "Count the okapi herd.", 8)
    holder = index_lock(project)
    try:
        compact(project, agent, session_file, session_id, "SessionEnd")
        [name] = queue_entries(project)
        if agent != "opencode" and forgotten:
            _replaced(session_file)
            said = "is another file than the one the hook saw"
        elif agent != "opencode":
            _rewritten(session_file)
            said = "no longer holds the bytes the hook saw before byte"
        elif forgotten:
            _replaced(session_file)
            said = "is another file than the one the hook read"
        else:
            for document in documents():
                if document.suffix == ".jsonl":
                    document.unlink()
            said = "its conversation document"
    finally:
        holder.stop()
    wait_for_worker(project)

    assert queue_entries(project) == [name] and len(created(project)) == 1, "never written"
    flushed = precompact(project.path, "flush")
    assert (
        flushed.returncode == 1 and f"queued savepoint logs/{snapshot.QUEUE_DIR}/{name} not written:" in flushed.stderr
    )
    assert said in flushed.stderr, flushed.stderr
    status = precompact(project.path, "status").stdout
    assert f"`precompact flush --drop-queued {name}` gives it up" in status, status
    assert precompact(project.path, "flush", "--drop-queued", name).returncode == 0
    assert queue_entries(project) == [] and len(created(project)) == 1
