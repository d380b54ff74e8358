"""After `prune --keep N`, the savepoints it removed from logs/ (git keeps them, verified) are
still named: recall (CLI and MCP) says how many it did not search and how to bring one back;
`show` and `dropped` say "pruned locally; in git" instead of "no savepoint" or "git has no
usable copy" (docs/cli.md, prune)."""

from __future__ import annotations

import json

import anyio

from support.commands import precompact
from support.projects import new_project
from test_recall import mcp_session


def test_pruned_savepoints_are_named_by_recall_show_and_dropped(tmp_path):
    project = new_project(tmp_path, "project", git_layer=True, chain_layer=False)
    transcript = tmp_path / "t.jsonl"
    said = {"type": "user", "uuid": "u1", "message": {"content": "the zebra parser keeps its colons"}}
    transcript.write_text(json.dumps(said) + "\n")
    for session in ("one", "two", "three"):
        saved = precompact(project.path, "savepoint", "--transcript", str(transcript), "--session-id", session)
        assert saved.returncode == 3, saved.stdout + saved.stderr  # Layer 3 off
    pruned = precompact(project.path, "prune", "--keep", "1")
    assert pruned.returncode == 0 and "pruned 2 savepoint(s)" in pruned.stdout, pruned.stdout + pruned.stderr

    note = "2 savepoint(s) pruned from logs/ (1, 2) are not searched; git keeps them: `precompact resurrect --sequence N` brings one back"
    found = precompact(project.path, "recall", "zebra")
    assert found.returncode == 0 and note in found.stdout, found.stdout + found.stderr
    [answer] = anyio.run(mcp_session, project, [("recall", {"query": "zebra"})])[1]
    assert note in answer.content[0].text

    shown = precompact(project.path, "show", "1:1")
    assert shown.returncode == 1 and shown.stderr.count("\n") == 1
    assert (
        "savepoint 1 of Trial #1 was pruned locally; git keeps it: `precompact resurrect --sequence 1`" in shown.stderr
    )

    dropped = precompact(project.path, "dropped", "2")
    assert dropped.returncode == 1 and "git has no usable copy" not in dropped.stderr
    assert "savepoint 2 of Trial #1 was pruned locally (`precompact prune`); it is in git as commit " in dropped.stderr
