"""Every MCP tool answer on failure is one line the model may read: precompact's own words (a
PrecompactError, naming its fix), or, for any other error (an OSError mid-read, a damaged file a
reader did not expect, a bug), fixed words naming what the user runs in their own shell, while the
error's own text (paths, words of the transcript) goes to the project's error log only
(edges/mcp_server.py). Each path is called through the real MCP stdio protocol, as Claude Code
calls the tools."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import pytest

from support.commands import PRECOMPACT
from support.conversations import START, Conversation, save
from support.projects import Project, new_project

SECRET = "the wombat password is hunter2"
# Installed in the server's process only (its PYTHONPATH): a read of a file of logs/ whose name
# starts with FAULT_PREFIX fails as FAULT_KIND says. `eio`: the read fails with an OSError whose
# text names the file and SECRET (as a transcript-derived name would); `eisdir`: the descriptor
# handed back is a directory's, so the read itself fails halfway, in the kernel; `value`: an
# error that is no OSError, its text holding SECRET.
FAULT = f"""
import errno, os
from precompact.boundary import logs_dir

_open_file = logs_dir.open_file


def open_file(logs, name, flags, *args, **kwargs):
    if name.startswith(os.environ["FAULT_PREFIX"]) and not flags & (os.O_WRONLY | os.O_RDWR):
        kind = os.environ["FAULT_KIND"]
        if kind == "eio":
            raise OSError(errno.EIO, "Input/output error", f"{{logs / name}} ({SECRET})")
        if kind == "eisdir":
            return os.open(logs, os.O_RDONLY)
        raise ValueError(f"unexpected bytes in {{logs / name}}: {SECRET}")
    return _open_file(logs, name, flags, *args, **kwargs)


logs_dir.open_file = open_file
"""
SNAPSHOTS, INDEX = "precompact-saves/", "precompact-savepoint.jsonl"


async def mcp_calls(project: Project, calls: list[tuple[str, dict]], env: dict[str, str] | None = None) -> list:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    server = StdioServerParameters(
        command=PRECOMPACT,
        args=["mcp"],
        cwd=str(project.path),
        env={**{k: v for k, v in os.environ.items() if k in ("XDG_CONFIG_HOME", "XDG_STATE_HOME")}, **(env or {})},
    )
    async with stdio_client(server, errlog=sys.stderr) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        return [await session.call_tool(name, arguments) for name, arguments in calls]


@pytest.fixture
def saved(tmp_path) -> Project:
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    talk = Conversation(tmp_path / "t.jsonl", "s-ledger", START)
    talk.turn_with("Check the ledger.", "ledger-check", "totals agree", "The ledger is fine.")
    save(project, talk)
    return project


def faulted(project: Project, tmp_path: Path, prefix: str, kind: str) -> dict[str, str]:
    site = tmp_path / "site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(FAULT)
    return {"PYTHONPATH": str(site), "FAULT_PREFIX": prefix, "FAULT_KIND": kind}


def unexplained(tool: str, command: str) -> str:
    return (
        f"{tool} could not answer: precompact met an error it does not show here (kept in "
        f"logs/precompact-errors.log); the user runs `{command}` and then `precompact verify` in their own shell, "
        "which say what is wrong in logs/ and the fix"
    )


CALLS = {
    "recall": ({"query": "ledger"}, "precompact recall QUERY"),
    "show": ({"ref": "1:3"}, "precompact show REF"),
    "savepoints": ({}, "precompact status"),
}


@pytest.mark.parametrize("kind", ["eio", "eisdir", "value"])
@pytest.mark.parametrize(
    ("prefix", "tools"), [(SNAPSHOTS, ("recall", "show")), (INDEX, ("recall", "show", "savepoints"))]
)
def test_an_error_not_precompacts_own_reaches_the_model_as_fixed_words_and_the_log_keeps_it(
    saved, tmp_path, prefix, tools, kind
):
    answers = anyio.run(
        mcp_calls, saved, [(tool, CALLS[tool][0]) for tool in tools], faulted(saved, tmp_path, prefix, kind)
    )
    for tool, answer in zip(tools, answers, strict=True):
        [said] = [part.text for part in answer.content]
        assert answer.is_error and said == unexplained(tool, CALLS[tool][1]), said
        assert str(saved.path) not in said and SECRET not in said and "Errno" not in said
    logged = (saved.logs / "precompact-errors.log").read_text()
    assert logged.count(" mcp: ") == len(tools), logged
    if kind != "eisdir":  # the kernel's EISDIR names no file
        assert SECRET in logged and prefix in logged, "the raw error is the log's, for the user"
    if kind == "value":
        assert "(traceback in logs/precompact-debug.log)" in logged


def test_without_a_log_to_keep_it_the_line_says_so(saved, tmp_path):
    """logs/precompact-errors.log refused (a directory in its place): the fixed words say where it
    was kept instead (precompact's state directory, which status and doctor read: review14b F2),
    never pointing at a log that does not hold it."""
    from precompact.ops import compaction

    (saved.logs / "precompact-errors.log").mkdir()
    [answer] = anyio.run(mcp_calls, saved, [("show", {"ref": "1:3"})], faulted(saved, tmp_path, SNAPSHOTS, "eio"))
    assert answer.is_error and answer.content[0].text == unexplained("show", "precompact show REF").replace(
        "kept in logs/precompact-errors.log", f"kept in {compaction.KEPT_IN_STATE}"
    )


@pytest.mark.parametrize(
    ("damage", "calls", "said"),
    [
        (
            "the recall index is a directory",
            [("recall", {"query": "ledger"}), ("show", {"ref": "1:3"})],
            "logs/precompact-recall.sqlite is not a regular file; precompact refuses it: remove it",
        ),
        (
            "the snapshot is a directory",
            [("show", {"ref": "1:3"})],
            "is missing, misnamed or not a plain file in logs/; run `precompact verify`",
        ),
        (
            "the index is a directory",
            [("recall", {"query": "ledger"}), ("show", {"ref": "1:3"}), ("savepoints", {})],
            "logs/precompact-savepoint.jsonl is not a regular file; precompact refuses it: remove it",
        ),
    ],
)
def test_a_damaged_logs_entry_is_precompacts_own_line_naming_the_fix(saved, damage, calls, said):
    anyio.run(mcp_calls, saved, [("recall", {"query": "ledger"})])  # the recall index made
    target = {
        "the recall index is a directory": saved.logs / "precompact-recall.sqlite",
        "the snapshot is a directory": next((saved.logs / "precompact-saves").iterdir()),
        "the index is a directory": saved.logs / "precompact-savepoint.jsonl",
    }[damage]
    target.unlink()
    target.mkdir()
    for answer in anyio.run(mcp_calls, saved, calls):
        [text] = [part.text for part in answer.content]
        assert answer.is_error and said in text and len(text.splitlines()) == 1, text
        assert "Errno" not in text


@pytest.mark.parametrize(
    ("name", "arguments", "said"),
    [
        ("recall", {"query": "ledger", "savepoint": 10**30}, "Trial #1 has no indexed savepoint 1000000000000000"),
        ("show", {"ref": "9999999999999999999:1"}, "Trial #1 has no savepoint 9999999999999999999;"),
        ("show", {"ref": "1:1", "instance": "a\x00b"}, '"a\\u0000b" has no savepoint 1;'),
        ("recall", {"query": "ledger", "since": "99999-01-01"}, "since '99999-01-01' is not an ISO 8601 time"),
        ("recall", {"query": "ledger", "run": "sh"}, 'recall takes no "run"; it takes query'),
        ("show", {"ref": "1:1\n"}, '`ref` "1:1\\n" is not of the form'),
    ],
)
def test_bad_arguments_through_the_protocol_are_one_line_of_precompacts_own(saved, name, arguments, said):
    [answer] = anyio.run(mcp_calls, saved, [(name, arguments)])
    [text] = [part.text for part in answer.content]
    assert answer.is_error and text.startswith(said) and len(text.splitlines()) == 1, text
