"""`precompact close` on precompact-localnet, through the installed binary (#48): it confirms
(or `--yes`), refuses while savepoints are queued for the chain unless `--force`, closes the
record with the instance's authority and reports the lamports returned; afterwards `flush` and
`savepoint` say plainly that the record is closed and what to do, and `verify` says the chain can
no longer vouch for the savepoints (never ✓)."""

from __future__ import annotations

import json
from pathlib import Path

from jsonschema import Draft202012Validator

from precompact.chain import rpc
from precompact.chain import wire as chain
from precompact.config import settings as configuration
from support.commands import INSTANCE, precompact, run_git
from support.localnet import REPO, free_port
from support.projects import funded_project

FAILED, LAYER_PENDING, NOT_VERIFIED = 1, 3, 4
FEE = 5000  # lamports: one signature


def test_close_returns_the_rent_and_every_command_after_it_says_the_record_is_closed(localnet, tmp_path):
    made = funded_project(tmp_path, localnet.url, INSTANCE)
    project, authority = made.path, made.authority()
    for _ in range(2):
        saved = precompact(project, "savepoint", "--no-transcript")
        assert saved.returncode == 0, saved.stdout + saved.stderr
    client = rpc.Cluster(localnet.url, timeout=10)
    address = str(chain.record_address(authority.pubkey(), chain.instance_id(INSTANCE))[0])
    rent = client.balance(address)
    assert rent > 0

    # Off a terminal, without --yes: nothing is sent.
    asked = precompact(project, "close")
    assert asked.returncode == FAILED
    assert "not at a terminal: run `precompact close --yes` to close the record" in asked.stderr
    assert f"the record of {INSTANCE} at {address} holds savepoint 2 and {rent} lamports" in asked.stdout
    assert client.account(address) is not None

    # A savepoint queued for the chain (the cluster was down) stops it, unless --force.
    queued = precompact(project, "savepoint", "--no-transcript", "--force", cluster=f"http://127.0.0.1:{free_port()}")
    assert queued.returncode == LAYER_PENDING, queued.stdout + queued.stderr
    refused = precompact(project, "close", "--yes")
    assert refused.returncode == FAILED
    assert (
        f"1 savepoint(s) of {INSTANCE!r} are still queued for the chain (3): run `precompact flush` first, or `precompact close --force` to close without anchoring them"
        in refused.stderr
    ), refused.stderr
    assert precompact(project, "flush").returncode == 0

    before = client.balance(str(authority.pubkey()))
    closed = precompact(project, "close", "--yes", "--json")
    assert closed.returncode == 0, closed.stdout + closed.stderr
    said = json.loads(closed.stdout)
    Draft202012Validator(json.loads((REPO / "docs" / "schemas" / "close.schema.json").read_text())).validate(said)
    assert (said["address"], said["authority"], said["sequence"]) == (address, str(authority.pubkey()), 3)
    assert said["lamports"] == rent  # the balance read before it held savepoint 3: the rent does not change
    assert client.account(address) is None
    assert client.balance(str(authority.pubkey())) == before + rent - FEE
    assert f"closed the record of {INSTANCE} at {address} (after savepoint 3): {rent} lamports returned to {authority.pubkey()}, transaction {said['signature']}" in closed.stderr  # fmt: skip

    # Later savepoints, flush and verify say what happened: no retry, no re-initialize, no ✓.
    note = f"the on-chain record of {INSTANCE!r} at {address} was closed by `precompact close` (transaction {said['signature']}): no savepoint of it is anchored on chain any more"
    after = precompact(project, "savepoint", "--no-transcript", "--force")
    assert after.returncode == LAYER_PENDING and note in after.stdout + after.stderr, after.stdout + after.stderr
    assert "precompact init --force --chain <cluster> --instance <new name>" in after.stdout + after.stderr
    flushed = precompact(project, "flush")
    assert flushed.returncode == LAYER_PENDING and note in flushed.stdout + flushed.stderr
    assert client.account(address) is None, "nothing initialized the record again"
    verified = precompact(project, "verify")
    assert verified.returncode == NOT_VERIFIED, verified.stdout + verified.stderr
    assert "✓" not in verified.stdout.splitlines()[0]
    assert f"was closed by `precompact close` after savepoint 3 (transaction {said['signature']}" in verified.stdout
    assert "the chain can no longer vouch for any savepoint of it" in verified.stdout

    again = precompact(project, "close", "--yes")
    assert again.returncode == FAILED and "is already closed" in again.stderr and "nothing to do" in again.stderr

    config = project / configuration.CONFIG_NAME
    config.write_text(config.read_text().replace("chain = true", "chain = false"))
    assert precompact(project, "trust", "--yes").returncode == 0
    off = precompact(project, "close", "--yes")
    assert off.returncode == FAILED and "the chain layer is off in .precompact.toml" in off.stderr


def test_close_refuses_when_there_is_no_record(localnet, tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    run_git(project, "init", "-q", "-b", "main")
    keypair = tmp_path / "id.json"
    made = precompact(project, "init", "--yes", "--no-encrypt", "--instance", INSTANCE, "--cluster", localnet.url, "--keypair", str(keypair))  # fmt: skip
    assert made.returncode == 0, made.stderr
    refused = precompact(project, "close", "--yes")
    assert refused.returncode == FAILED and "nothing to close" in refused.stderr, refused.stderr
    assert Path(project / "logs").exists() is False or "RECORD_CLOSED" not in (project / "logs" / "precompact-savepoint.jsonl").read_text(errors="replace")  # fmt: skip


def test_close_with_force_closes_and_a_queued_savepoint_is_never_anchored(localnet, tmp_path):
    """docs/cli.md: "`--force` closes anyway, and they are never anchored"."""
    made = funded_project(tmp_path, localnet.url, INSTANCE)
    project, authority = made.path, made.authority()
    saved = precompact(project, "savepoint", "--no-transcript")
    assert saved.returncode == 0, saved.stdout + saved.stderr
    queued = precompact(project, "savepoint", "--no-transcript", "--force", cluster=f"http://127.0.0.1:{free_port()}")
    assert queued.returncode == LAYER_PENDING, queued.stdout + queued.stderr
    address = str(chain.record_address(authority.pubkey(), chain.instance_id(INSTANCE))[0])

    closed = precompact(project, "close", "--yes", "--force")
    assert closed.returncode == 0, closed.stdout + closed.stderr
    assert f"closed the record of {INSTANCE} at {address} (after savepoint 1)" in closed.stdout, closed.stdout
    client = rpc.Cluster(localnet.url, timeout=10)
    assert client.account(address) is None

    flushed = precompact(project, "flush")
    assert flushed.returncode == LAYER_PENDING and "was closed by `precompact close`" in flushed.stdout + flushed.stderr
    assert client.account(address) is None, "savepoint 2 was not posted: nothing initialized the record again"
    status = precompact(project, "status", "--json")
    assert [s["layer_3"] for s in json.loads(status.stdout)["savepoints"]][1] != "CONFIRMED", status.stdout


def test_the_closing_is_recorded_in_the_index_sealed_and_an_altered_line_claims_nothing(localnet, tmp_path):
    """docs/cli.md: `close` "records the closing in the index (sealed with this machine's key)":
    `verify` reads the closing from that line only while its seal holds."""
    project = funded_project(tmp_path, localnet.url, INSTANCE).path
    assert precompact(project, "savepoint", "--no-transcript").returncode == 0
    closed = precompact(project, "close", "--yes", "--json")
    assert closed.returncode == 0, closed.stdout + closed.stderr
    said = json.loads(closed.stdout)
    index = project / "logs" / "precompact-savepoint.jsonl"
    lines = index.read_text().splitlines()
    [line] = [json.loads(x) for x in lines if '"event":"RECORD_CLOSED"' in x]
    assert {k: line[k] for k in ("instance", "address", "sequence", "lamports", "signature")} == {
        k: said[k] for k in ("instance", "address", "sequence", "lamports", "signature")
    }
    assert len(line["seal"]) == 64
    note = f"was closed by `precompact close` after savepoint 1 (transaction {said['signature']}"
    assert note in precompact(project, "verify").stdout

    altered = [x.replace(f'"lamports":{said["lamports"]},', f'"lamports":{said["lamports"] + 1},') for x in lines]
    assert altered != lines
    index.write_text("".join(x + "\n" for x in altered))
    verified = precompact(project, "verify")
    assert verified.returncode != 0 and "✓" not in verified.stdout.splitlines()[0]
    assert "closed by `precompact close`" not in verified.stdout, verified.stdout
