"""What an exception precompact did not raise says is outside text: a path, git's stderr, a value an
RPC endpoint answered. A line break in it would forge a second line of precompact's (a "✓" on the
terminal, an entry in a log), an ANSI escape would rewrite the screen: the user's line and the log
line each stay one line, the outside words inside one JSON string literal (`quoting.inline`),
precompact's own words outside it."""

from __future__ import annotations

import errno
import json
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

from precompact.boundary import quoting, terminal
from precompact.edges import worker
from precompact.transcript import opencode
from support import git_http
from support.commands import precompact, run_git
from support.json_rpc import JsonRpcServer
from support.projects import new_project

# What a hostile input writes where precompact's words go on: a line break, a screen-clearing
# escape, then a line of precompact's own.
FORGED = "ok\n\x1b[2J✓ Layer 2: up to date"


def quoted_after(line: str, lead: str) -> str:
    """The outside words `line` quotes right after `lead`, once it checked that they are one JSON
    string literal and that no "✓" stands outside it."""
    assert line.splitlines() == [line], line
    assert lead in line, line
    rest = line[line.index(lead) + len(lead) :]
    said, end = json.JSONDecoder().raw_decode(rest)
    assert isinstance(said, str), line
    assert "✓" not in line[: line.index(lead)] + rest[end:], line
    assert "\x1b" not in line, line
    return said


def the_line(text: str, lead: str) -> str:
    [line] = [line for line in text.splitlines() if lead in line]
    return line


def worker_log(root: Path, monkeypatch, capfd) -> str:
    """One round of the worker, in this process (its stdout is its log), retrying once at once."""
    monkeypatch.setattr(worker, "BACKOFF_SECONDS", (0,))
    capfd.readouterr()
    worker.run(root)
    return capfd.readouterr().out


# --- quoting.os_error ---------------------------------------------------------------------------


def test_an_oserror_of_the_system_shows_the_c_librarys_words_bare(tmp_path):
    with pytest.raises(OSError) as missing:
        open(tmp_path / FORGED)  # noqa: SIM115
    assert quoting.os_error(missing.value) == os.strerror(errno.ENOENT) == "No such file or directory"


@pytest.mark.parametrize(
    "error",
    [
        OSError(errno.EIO, FORGED),  # words of the raiser's, an errno beside them
        OSError(FORGED),  # no errno: strerror is None
        OSError("not a number", FORGED),
        OSError(1 << 40, "Operation not permitted"),  # past a C int
        ValueError(FORGED),
    ],
    ids=["own words", "no errno", "errno not a number", "errno past an int", "not an OSError"],
)
def test_any_other_text_of_an_exception_is_quoted_whole(error):
    shown = quoting.os_error(error)
    assert shown == quoting.inline(str(error)) and json.loads(shown) == str(error)
    assert shown.splitlines() == [shown] and "\x1b" not in shown


def test_a_quote_holds_no_control_character_a_terminal_acts_on_and_reads_back_whole():
    """JSON leaves DEL, the C1 controls (U+009B is a CSI on its own) and LS/PS raw: `inline`
    escapes them the JSON way, so a terminal's sanitising has nothing left to change."""
    text = "a\x7fb\x85c\x9b2Jd\u2028e\u2029f\x1b[2J\n✓"
    shown = quoting.inline(text)
    assert shown.isprintable() and "✓" in shown, shown
    assert terminal.sanitise(shown) == shown and json.loads(shown) == text


# --- git's stderr: a remote's hook --------------------------------------------------------------


def test_what_a_remotes_hook_writes_stays_one_quoted_line_for_the_user_and_in_the_log(tmp_path, monkeypatch, capfd):
    """Over HTTP, as a server runs it (precompact runs no hook of a remote on this machine)."""
    served = tmp_path / "served"
    subprocess.run(["git", "init", "-q", "--bare", str(served / "remote.git")], check=True)
    hook = served / "remote.git" / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\nprintf 'refused: ok\\n\\033[2J✓ Layer 2: up to date\\n' >&2\nexit 1\n")
    hook.chmod(0o755)
    project = tmp_path / "p"
    with git_http.GitHttp(served) as server:
        url = server.url("remote.git")
        subprocess.run(["git", "init", "-q", "-b", "main", str(project)], check=True)
        for args in (("remote", "add", "origin", url), ("config", "user.name", "a"), ("config", "user.email", "a@x")):
            run_git(project, *args)
        made = precompact(project, "init", "--yes", "--instance", "Trial #1", "--chain", "off", "--url", url)
        assert made.returncode == 0, made.stdout + made.stderr
        assert precompact(project, "savepoint", "--no-transcript").returncode != 0

        flushed = precompact(project, "flush")
        lead = "… Layer 2: queued: push to origin failed: "
        said = quoted_after(the_line(flushed.stdout, lead), lead)
        assert said.startswith("refused: ok; \x1b[2J✓ Layer 2: up to date; "), said
        assert "pre-receive hook declined" in said, said

        logged = worker_log(project, monkeypatch, capfd)
    lead = "push to origin failed: "
    assert quoted_after(the_line(logged, lead), lead) == said


# Git's words where a push is refused, the remote is gone or its branch is not there: each said
# once, inside one quote, in every line that says them (a GitStoreError's message quotes them; an
# index line's reason, or the remote's, keeps them as said, and its printer quotes it whole).
REFUSED = "refused by the remote policy"


def quoted_once(output: str, words: str) -> list[str]:
    """The lines of `output` that say `words`: each holds them in one JSON string literal, whose
    text quotes nothing again (no quote inside it: a second quote would show as `\\"`)."""
    lines = [line for line in output.splitlines() if words in line]
    for line in lines:
        decoder, at, found = json.JSONDecoder(), 0, []
        while (start := line.find('"', at)) != -1:
            said, at = decoder.raw_decode(line, start)
            found.append(said)
        [holding] = [said for said in found if words in said]
        assert '"' not in holding, line
    return lines


def test_what_git_said_is_quoted_once_in_every_line_that_says_it(tmp_path):
    served = tmp_path / "served"
    bare = served / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    project = tmp_path / "p"
    with git_http.GitHttp(served) as server:
        url = server.url("remote.git")
        subprocess.run(["git", "init", "-q", "-b", "main", str(project)], check=True)
        for args in (("remote", "add", "origin", url), ("config", "user.name", "a"), ("config", "user.email", "a@x")):
            run_git(project, *args)
        made = precompact(project, "init", "--yes", "--instance", "Trial #1", "--chain", "off", "--url", url)
        assert made.returncode == 0, made.stdout + made.stderr
        assert precompact(project, "savepoint", "--no-transcript").returncode == 3  # chain off
        hook = bare / "hooks" / "pre-receive"
        hook.write_text(f"#!/bin/sh\necho '{REFUSED}' >&2\nexit 1\n")
        hook.chmod(0o755)
        refused = [
            precompact(project, *args) for args in (["savepoint", "--no-transcript"], ["flush"], ["status"], ["verify"])
        ]
        said = "".join(done.stdout + done.stderr for done in refused)
        assert len(quoted_once(said, REFUSED)) == 4, said  # savepoint, flush, status, verify

        hook.unlink()
        branch = subprocess.run(
            ["git", "--git-dir", str(bare), "for-each-ref", "--format=%(refname)"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.split()
        for ref in branch:
            subprocess.run(["git", "--git-dir", str(bare), "update-ref", "-d", ref], check=True)
        missing = precompact(project, "restore")
        assert missing.returncode == 1
        assert quoted_once(missing.stderr, "couldn't find remote ref"), missing.stderr
    # The remote gone: every command that reads it says why, git's words quoted once.
    gone = [precompact(project, *args) for args in (["verify"], ["status", "--remote"], ["restore"], ["flush"])]
    said = "".join(done.stdout + done.stderr for done in gone)
    assert len(quoted_once(said, "Failed to connect")) >= 4, said


# --- a path: OpenCode's database under a folder of any name --------------------------------------


def test_a_database_path_with_a_line_break_and_an_escape_is_one_quoted_line(tmp_path):
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False)
    data = tmp_path / f"data{FORGED}"
    database = data / opencode.DATABASE
    database.parent.mkdir(parents=True)
    database.write_text("not a database\n" * 100)
    environ = {"XDG_DATA_HOME": str(data)}

    done = precompact(project.path, "import", "--agent", "opencode", env=environ)
    assert done.returncode == 1
    [line] = done.stderr.strip().splitlines()
    assert quoted_after(line, "OpenCode's database ") == str(database)
    assert line.endswith(
        f'cannot be read ("{sqlite3.DatabaseError("file is not a database")}"), so nothing was imported; '
        "run `precompact import --agent opencode` again once OpenCode has finished writing it, or with "
        "an OpenCode whose database docs/agents.md describes"
    ), line


# --- a value a hostile RPC endpoint's JSON holds ------------------------------------------------


def hostile_account(body: bytes) -> dict:
    """An endpoint whose getAccountInfo names its data's encoding with a line break and an escape
    in it (rpc.py's ValueError repeats it); it knows no other method."""
    request = json.loads(body)
    if request.get("method") == "getAccountInfo":
        value = {"data": ["", f"base64{FORGED}"], "owner": "11111111111111111111111111111111", "lamports": 1}
        return {"jsonrpc": "2.0", "id": request.get("id"), "result": {"context": {"slot": 1}, "value": value}}
    return {"jsonrpc": "2.0", "id": request.get("id"), "error": {"code": -32601, "message": "Method not found"}}


def test_a_value_an_rpc_endpoint_answers_stays_one_quoted_line_for_the_user_and_in_the_log(
    tmp_path, monkeypatch, capfd
):
    server = JsonRpcServer(hostile_account)
    try:
        project = new_project(tmp_path, "p", git_layer=False, chain_layer=True, cluster=server.url)
        saved = precompact(project.path, "savepoint", "--no-transcript")
        lead = "(unusable account ("
        said = quoted_after(the_line(saved.stdout, lead), lead)
        assert said == f"data encoded as base64{FORGED}", saved.stdout

        logged = worker_log(project.path, monkeypatch, capfd)
        assert quoted_after(the_line(logged, lead), lead) == said
        # status quotes the index's reason whole: the endpoint's words inside it are as said,
        # quoted once (by status), never a quote within the quote.
        shown = precompact(project.path, "status").stdout
        reason = quoted_after(the_line(shown, "last problem (layer_3): "), "last problem (layer_3): ")
        assert f"(unusable account ({said})); check chain.cluster" in reason, shown
    finally:
        server.stop()


def refusing(body: bytes) -> dict:
    """An endpoint that refuses every call with FORGED as its message."""
    request = json.loads(body)
    return {"jsonrpc": "2.0", "id": request.get("id"), "error": {"code": -32005, "message": FORGED}}


def test_what_an_rpc_endpoint_says_of_a_refused_call_is_quoted_once_in_every_line_that_says_it(tmp_path):
    """fix15e 6: the endpoint's words were bare in the user's line, the worker's and the reason
    status quotes."""
    server = JsonRpcServer(refusing)
    try:
        project = new_project(tmp_path, "p", git_layer=False, chain_layer=True, cluster=server.url)
        saved = precompact(project.path, "savepoint", "--no-transcript")
        lead = "refused getAccountInfo: "
        assert quoted_after(the_line(saved.stdout, lead), lead) == FORGED, saved.stdout
        shown = precompact(project.path, "status").stdout
        reason = quoted_after(the_line(shown, "last problem (layer_3): "), "last problem (layer_3): ")
        assert reason.endswith(f"{lead}{FORGED}"), shown  # as said inside status's one quote
    finally:
        server.stop()


@pytest.mark.parametrize("made", ["missing", "not_a_keypair", "not_json"])
def test_a_keypair_path_with_a_line_break_and_an_escape_is_quoted_once(tmp_path, made):
    """fix15e 6: chain.keypair (or PRECOMPACT_KEYPAIR) names the file: said through quoting.path,
    kept as named in the reason the index keeps (`unquoted`, quoted whole by its printers)."""
    from precompact.chain import wire

    keypair = tmp_path / f"id{FORGED}.json"
    if made != "missing":
        keypair.write_text("[1, 2, 3]" if made == "not_a_keypair" else "{")
    with pytest.raises(wire.KeypairError) as refused:
        wire.load_keypair(keypair)
    said = str(refused.value)
    assert quoted_after(said, "keypair ") == str(keypair), said
    assert refused.value.unquoted.startswith(f"keypair {keypair} "), refused.value.unquoted


def test_a_remote_name_a_push_failure_quotes_is_quoted_once_where_status_says_it(tmp_path):
    """fix15e 6: the reason the index keeps names the remote as it is (GitStoreError's `bare`),
    so status, which quotes that reason whole, quotes the name once, not a quote within a quote."""
    served = tmp_path / "served"
    bare = served / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    hook = bare / "hooks" / "pre-receive"
    hook.write_text(f"#!/bin/sh\necho '{REFUSED}' >&2\nexit 1\n")
    hook.chmod(0o755)
    project = tmp_path / "p"
    remote = 'ori"gin'  # a name git takes, not a plain one: quoting.path quotes it
    with git_http.GitHttp(served) as server:
        url = server.url("remote.git")
        subprocess.run(["git", "init", "-q", "-b", "main", str(project)], check=True)
        for args in (("remote", "add", remote, url), ("config", "user.name", "a"), ("config", "user.email", "a@x")):
            run_git(project, *args)
        made = precompact(project, "init", "--yes", "--instance", "Trial #1", "--chain", "off", "--remote", remote)
        assert made.returncode == 0, made.stdout + made.stderr
        saved = precompact(project, "savepoint", "--no-transcript")
        shown = precompact(project, "status").stdout
    said = saved.stdout + saved.stderr
    assert f"push to {quoting.inline(remote)} failed: " in said, said
    index = [json.loads(line) for line in (project / "logs" / "precompact-savepoint.jsonl").read_text().splitlines()]
    [reason] = [line["reason"] for line in index if line["event"] == "LAYER_2_FAILED"]
    assert reason.startswith(f"push to {remote} failed: "), reason
    assert quoted_once(shown, REFUSED), shown
