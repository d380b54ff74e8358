"""A savepoint PreCompact queued under the real OpenCode (1.18.33, support/opencode_cli.py) is
written by the worker even though OpenCode rewrote an earlier part of the session meanwhile: its
compaction's part gains `tail_start_id` once the summary is written, so the conversation document
precompact keeps under its own name no longer holds what the hook saw before its end. The hook
pins the document as it saw it (transcript/agents.pin), and the worker reads that
(docs/sessions.md, "a queued savepoint of another agent")."""

from __future__ import annotations

import json
import sqlite3

from precompact.local import savepoint_log, snapshot
from precompact.transcript import agents
from support import opencode_cli
from support.claude_code import wait_for_worker
from support.projects import new_project

PHRASE = "the flux capacitor misaligned at 88 mph"
# Four tool outputs of 40 KB each: the session's document is well past what PreCompact writes
# itself (config/hook_timeouts.pre_compact_writes), so its savepoint is queued.
BIG = f"python3 -c \"print(('{PHRASE} ' + 'x' * 60 + chr(10)) * 400)\""


def test_a_savepoint_queued_before_opencode_rewrites_the_session_is_written_as_the_hook_saw_it(
    tmp_path, opencode_binary
):
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    script = opencode_cli.Script(commands={"work": [BIG] * 4, "more": ["echo more"]}, heavy={"more": 50_000})
    with opencode_cli.session_in(project, tmp_path / "home", opencode_binary, script=script) as setup:
        session_id = setup.session.run("Build the header parser. [[run:work]]")
        # Another save holds the index lock (a long session's): the worker that PreCompact starts
        # waits for it, as it waits for any, until OpenCode has finished the compaction.
        with savepoint_log.locked(project.logs, 5):
            setup.session.run("Go on. [[run:more]]", session=session_id)
            [entry] = [e for e in snapshot.queue_entries(project.logs) if e.session is not None]
            assert entry.session_file is not None and entry.session_file.pinned, entry
            with sqlite3.connect(setup.session.database) as db:
                parts = [json.loads(data) for (data,) in db.execute("SELECT data FROM part")]
            assert any(p["type"] == "compaction" and p.get("tail_start_id") for p in parts), "OpenCode rewrote it"
            kept = entry.replace(session_file=entry.session_file.replace(pinned=None))
            assert "no longer holds the bytes the hook saw" in (snapshot._transcript_changed(project.logs, kept) or "")
        wait_for_worker(project)

        index = setup.index()
        [created] = [e for e in index if e["event"] == "SAVEPOINT_CREATED"]
        assert created["queue_entry"] == entry.name and created["session_id"] == session_id
        assert "recovered" not in created, "the compaction's savepoint is the hook's, not a recovery"
        [summary] = [e["summary"] for e in index if e["event"] == "COMPACT_SUMMARY"]
        assert summary == script.summary, "the summary bound to it is recorded with it"
        assert not snapshot.queued(project.logs), "nothing is left queued"
        status = setup.precompact("status", "--json")
        assert status.returncode == 0 and json.loads(status.stdout)["queued"] is None, status.stdout
        found = setup.precompact("recall", "flux capacitor", "--json")
        assert any(PHRASE in json.dumps(hit) for hit in json.loads(found.stdout)["hits"]), found.stdout
        verified = setup.precompact("verify", "--all")
        assert verified.returncode == 0, verified.stdout + verified.stderr
        pins = agents.documents_dir(project.logs) / agents.PINNED_DIR
        assert not list(pins.iterdir()), "the pin went with its entry"
