"""The savepoint index is read through one typed record: only local/savepoint_log.py knows the
keys of a SAVEPOINT_CREATED line, and a hostile line reads as absent fields, never as a crash."""

from __future__ import annotations

import ast
from pathlib import Path

from precompact.local import savepoint_log

CLIENT = Path(__file__).resolve().parents[2] / "client" / "precompact"
# provenance computes the line's tag over the line itself, which is what it must see.
OWNERS = {"local/savepoint_log.py", "local/provenance.py"}


def string_key_reads(tree: ast.AST) -> list[int]:
    """Lines reading `<x>.created["key"]` or `<x>.created.get("key", ...)`."""
    found = []
    for node in ast.walk(tree):
        target = None
        if isinstance(node, ast.Subscript):
            target = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
            target = node.func.value
        if isinstance(target, ast.Attribute) and target.attr == "created":
            found.append(node.lineno)
    return found


def test_only_the_index_module_reads_index_lines_by_key():
    outside = {
        str(path.relative_to(CLIENT)): lines
        for path in CLIENT.rglob("*.py")
        if str(path.relative_to(CLIENT)) not in OWNERS and (lines := string_key_reads(ast.parse(path.read_text())))
    }
    assert not outside, f"index fields read by string key outside savepoint_log (add a typed property): {outside}"


def test_the_rule_sees_both_forms():
    sample = ast.parse('a = s.created["snapshot_file"]\nb = s.created.get("trigger", None)\nc = s.trigger\n')
    assert string_key_reads(sample) == [1, 2]


def test_a_hostile_line_reads_as_absent_fields():
    hostile = {
        "event": "SAVEPOINT_CREATED",
        "sequence": 1,
        "instance": "x",
        "snapshot_hash": "sha256:" + "0" * 64,
        "snapshot_file": ["not", "a", "name"],
        "unix_timestamp": "yesterday",
        "transcript_end": True,
        "messages": 2.5,
        "session_id": {"id": 1},
        "trigger": 7,
    }
    [savepoint] = savepoint_log.fold([hostile])
    assert savepoint.snapshot_file == ""
    assert savepoint.unix_timestamp == 0
    assert savepoint.transcript_end is None and savepoint.messages is None
    assert savepoint.session_id is None and savepoint.trigger is None
