"""With the chain layer off, nothing asks a cluster and nothing says a savepoint waits for one
(#48): `verify --ledger` says the ledger needs the chain (exit 4: asked for, not checked), the MCP
`savepoints` tool says the chain is off as `status` does; and a cluster that does not answer is
named as unreachable without claiming a queue that a read-only command does not have."""

from __future__ import annotations

import json

import anyio

from support.commands import precompact
from support.mock_http import Exchange, MockServer
from support.projects import new_project
from support.transcript_gen import generate
from test_recall import mcp_session

EXIT_NOT_VERIFIED = 4


class Cluster(MockServer):
    """A JSON-RPC endpoint that records what is asked and answers every call with an error."""

    def answer(self, exchange: Exchange, body: dict) -> None:
        exchange.send_json(200, {"jsonrpc": "2.0", "id": body.get("id"), "error": {"message": "nothing here"}})


def saved(tmp_path, cluster_url: str):
    project = new_project(tmp_path, "project", git_layer=False, chain_layer=False, cluster=cluster_url)
    transcript = generate(tmp_path / "session.jsonl", 30_000, project=project.path)
    done = precompact(project.path, "savepoint", "--transcript", str(transcript.path))
    assert done.returncode == 3, done.stdout + done.stderr  # saved; Layers 2 and 3 off
    return project


def test_verify_ledger_with_the_chain_off_calls_no_cluster_and_says_it_needs_the_chain(tmp_path):
    with Cluster() as cluster:
        project = saved(tmp_path, cluster.url)
        checked = precompact(project.path, "verify", "--ledger")
        as_json = precompact(project.path, "verify", "--ledger", "--json")
        assert cluster.requests == [], "the chain is off: no cluster is called"
    assert checked.returncode == EXIT_NOT_VERIFIED, checked.stdout + checked.stderr
    assert checked.stdout.strip().splitlines()[-1] == (
        "– ledger of Trial #1 not checked: the ledger is the on-chain record's history, and the chain layer is off in "
        ".precompact.toml; `precompact init --force --chain devnet` (or a cluster URL) turns it on"
    )
    assert "queued" not in checked.stdout + checked.stderr and "✓ ledger" not in checked.stdout
    found = json.loads(as_json.stdout)
    assert as_json.returncode == EXIT_NOT_VERIFIED and found["verified"] is False
    assert [(v["instance"], v["status"]) for v in found["ledger"]] == [("Trial #1", "off")]


def test_an_unreachable_cluster_is_named_without_a_queue_that_is_not_there(tmp_path):
    project = saved(tmp_path, "http://127.0.0.1:9")
    config = project.path / ".precompact.toml"
    config.write_text(config.read_text().replace("chain = false", "chain = true"))
    assert precompact(project.path, "trust", "--yes").returncode == 0
    checked = precompact(project.path, "verify", "--ledger")
    assert checked.returncode == EXIT_NOT_VERIFIED, checked.stdout + checked.stderr
    assert "✗ ledger not verified: Trial #1: cluster http://127.0.0.1:9 unreachable (" in checked.stdout
    assert "stay queued" not in checked.stdout + checked.stderr


def test_the_mcp_savepoints_tool_says_the_chain_is_off_as_status_does(tmp_path):
    project = saved(tmp_path, "http://127.0.0.1:9")
    status = precompact(project.path, "status")
    assert "chain off" in status.stdout and "queued" not in status.stdout
    _, [listed] = anyio.run(mcp_session, project, [("savepoints", {})])
    text = listed.content[0].text
    assert text.startswith("savepoint 1 of Trial #1: ") and "chain off (" in text
    assert "QUEUED" not in text and "queued" not in text


def test_status_says_git_is_off_not_pending_when_the_git_layer_is_off(tmp_path):
    """fix15e 5: as the MCP tool and `verify` say it (the verifier's recorded verdict), not PENDING."""
    project = saved(tmp_path, "http://127.0.0.1:9")
    status = precompact(project.path, "status")
    [row] = [line for line in status.stdout.splitlines() if line.startswith("  #1 ")]
    assert " git off " in row and "PENDING" not in status.stdout, status.stdout
    [listed] = json.loads(precompact(project.path, "status", "--json").stdout)["savepoints"]
    assert listed["layer_2"] == "OFF" and listed["layer_3"] == "OFF", listed
