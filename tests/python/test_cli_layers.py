"""The CLI end to end: init, savepoint through all three layers against a real git remote and a
running precompact-localnet, offline queueing and flush, and one-line errors."""

from __future__ import annotations

import json

from solana.rpc.api import Client
from solana.rpc.commitment import Confirmed
from solders.keypair import Keypair
from solders.pubkey import Pubkey

from precompact.chain import wire as chain
from support.commands import INSTANCE, initialized, initialized_and_funded, invoke, key_beside, run_git, statuses
from support.localnet import free_port
from support.projects import fund, pushed_branch


def chain_record(url: str, authority: Keypair) -> bytes:
    record, _ = chain.record_address(authority.pubkey(), chain.instance_id(INSTANCE))
    return bytes(Client(url, commitment=Confirmed).get_account_info(record).value.data)


def test_savepoint_reaches_git_and_chain(workspace, localnet, monkeypatch):
    project, remote = workspace
    authority = initialized_and_funded(project, monkeypatch, localnet.url)
    transcript = project.parent / "t.jsonl"
    transcript.write_text(json.dumps({"type": "user", "message": {"content": "hi"}}) + "\n")

    result = invoke("savepoint", "--transcript", str(transcript), "--trigger", "auto")
    assert result.exit_code == 0, result.output
    assert "✓ Layer 1: savepoint 1 saved locally" in result.output
    assert "✓ Layer 2: up to date" in result.output and "✓ Layer 3: up to date" in result.output

    [row] = statuses(project)
    assert (row["layer_2"], row["layer_3"]) == ("PUSHED", "CONFIRMED")
    assert run_git(remote, "rev-parse", pushed_branch(remote)).strip() == row["commit"]
    data = chain_record(localnet.url, authority)
    assert int.from_bytes(data[241:249], "little") == 1
    assert data[73:105].hex() == row["snapshot_hash"]
    assert data[105:145].decode() == row["commit"][:40]
    assert "logs" not in run_git(project, "status", "--porcelain")


def test_offline_savepoints_queue_then_flush_lands_them_in_order(workspace, localnet, monkeypatch):
    project, _ = workspace
    down = f"http://127.0.0.1:{free_port()}"
    authority = initialized(project, monkeypatch, down)
    fund(localnet.url, authority)
    # The remote git.url names is offline until it is moved back.
    (project.parent / "remote.git").rename(project.parent / "offline.git")
    for _ in range(3):
        result = invoke("savepoint", "--no-transcript")
        assert result.exit_code == 3, result.output  # saved, Layers 2 and 3 queued
        assert "… Layer 3: queued: cluster" in result.output and "unreachable" in result.output
        assert "… Layer 2: queued: push to origin failed" in result.output
    rows = statuses(project)
    assert [r["layer_2"] for r in rows] == ["FAILED"] * 3
    assert all(r["commit"] for r in rows), "commits are made locally even while the push fails"
    # Posting stops at the first savepoint that cannot go: the others wait behind it.
    assert [r["layer_3"] for r in rows] == ["FAILED", "QUEUED_FOR_BLOCKCHAIN", "QUEUED_FOR_BLOCKCHAIN"]

    (project.parent / "offline.git").rename(project.parent / "remote.git")
    result = invoke("flush", env={"PRECOMPACT_CLUSTER": localnet.url})
    assert result.exit_code == 0, result.output
    rows = statuses(project)
    assert [(r["layer_2"], r["layer_3"]) for r in rows] == [("PUSHED", "CONFIRMED")] * 3
    data = chain_record(localnet.url, authority)
    assert int.from_bytes(data[241:249], "little") == 3
    assert data[73:105].hex() == rows[2]["snapshot_hash"]
    assert data[249:281].hex() == rows[1]["snapshot_hash"], "prev hash links to savepoint 2"


def test_a_lost_confirmation_is_recovered_not_posted_twice(workspace, localnet, monkeypatch):
    project, _ = workspace
    authority = initialized_and_funded(project, monkeypatch, localnet.url)
    assert invoke("savepoint", "--no-transcript").exit_code == 0
    # Drop the LAYER_3_CONFIRMED line, as if the process died right after the post.
    index = project / "logs" / "precompact-savepoint.jsonl"
    lines = [l for l in index.read_text().splitlines() if '"LAYER_3_CONFIRMED"' not in l]
    index.write_text("\n".join(lines) + "\n")
    assert statuses(project)[0]["layer_3"] != "CONFIRMED"
    assert invoke("flush").exit_code == 0
    assert statuses(project)[0]["layer_3"] == "CONFIRMED"
    assert int.from_bytes(chain_record(localnet.url, authority)[241:249], "little") == 1


def test_layer_3_problems_are_named_and_queued(workspace, localnet, monkeypatch):
    project, _ = workspace
    initialized(project, monkeypatch, localnet.url)  # never funded
    result = invoke("savepoint", "--no-transcript")
    assert result.exit_code == 3  # queued
    assert "… Layer 3: queued: cluster" in result.output and "refused the transaction" in result.output

    (project.parent / "id.json").write_text("[1, 2, 3]")
    result = invoke("flush")
    assert result.exit_code == 3  # queued
    assert "is not a Solana CLI keypair (a JSON array of 64 bytes)" in result.output

    result = invoke("flush", env={"PRECOMPACT_PROGRAM_ID": str(Pubkey.new_unique())})
    assert "is not the program this client was built for" in result.output


def test_commands_without_configuration_fail_with_one_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = invoke("savepoint", "--no-transcript")
    assert result.exit_code == 1
    assert result.output.strip().startswith("Error: no .precompact.toml")
    assert len(result.output.strip().splitlines()) == 1
    for command in ("flush", "status"):
        result = invoke(command)
        assert result.exit_code == 1 and "run `precompact init`" in result.output


def test_init_refuses_to_overwrite_and_warns_outside_git(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    args = ["init", "--yes", "--keypair", str(key_beside(tmp_path))]
    first = invoke(*args)
    assert first.exit_code == 0
    assert "is not a git repository" in first.output
    assert (tmp_path / ".precompact.toml").read_text().count("instance = ") == 1
    second = invoke(*args)
    assert second.exit_code == 1 and "already exists" in second.output
    before = (tmp_path / ".precompact.toml").read_bytes()
    bad = invoke(*args, "--force", "--cluster", "ftp://nope")
    assert bad.exit_code == 1 and "chain.cluster" in bad.output
    assert (tmp_path / ".precompact.toml").read_bytes() == before, "an invalid configuration is never written"


def test_init_airdrop_funds_the_key_or_names_the_cluster_without_a_faucet(tmp_path, monkeypatch, localnet):
    monkeypatch.chdir(tmp_path)
    keypair = key_beside(tmp_path)
    funded = invoke("init", "--yes", "--airdrop", "--cluster", localnet.url, "--keypair", str(keypair))
    assert funded.exit_code == 0 and "airdropped 1 SOL to" in funded.output
    pubkey = Keypair.from_bytes(bytes(json.loads(keypair.read_text()))).pubkey()
    assert Client(localnet.url, commitment=Confirmed).get_balance(pubkey).value == 1_000_000_000
    closed = f"http://127.0.0.1:{free_port()}"
    refused = invoke("init", "--yes", "--force", "--airdrop", "--cluster", closed, "--keypair", str(keypair))
    assert refused.exit_code == 1
    line = refused.output.strip().splitlines()[-1]
    assert line.startswith(f"Error: airdrop failed: cluster {closed} unreachable") and f"fund {pubkey} yourself" in line


def test_inspect_decodes_checks_and_compares(workspace, localnet, monkeypatch):
    project, _ = workspace
    authority = initialized_and_funded(project, monkeypatch, localnet.url)
    assert invoke("savepoint", "--no-transcript").exit_code == 0
    [row] = statuses(project)

    human = invoke("inspect")
    assert human.exit_code == 0, human.output
    assert "magic efbbbf version 1" in human.output
    assert (
        "valid (the configured authority's ed25519 over the savepoint)" in human.output
        and "verdict: verified" in human.output
    )
    assert "matches local savepoint 1" in human.output

    as_json = json.loads(invoke("inspect", "--json").output)
    assert as_json["snapshot_hash"] == row["snapshot_hash"]
    assert as_json["git_commit"] == row["commit"][:40]
    assert (as_json["magic"], as_json["version"], as_json["sequence"]) == ("efbbbf", 1, 1)
    assert as_json["signature_valid"] is True
    by_address = json.loads(invoke("inspect", "--json", "--address", as_json["address"]).output)
    assert by_address["snapshot_hash"] == row["snapshot_hash"]

    missing = invoke("inspect", "--instance", "Nobody #1")
    assert missing.exit_code == 1 and "no savepoint record at" in missing.output
    bad = invoke("inspect", "--address", "zz")
    assert bad.exit_code == 1 and "is not a base58 public key" in bad.output
    foreign = invoke("inspect", "--address", str(authority.pubkey()))
    assert foreign.exit_code == 1 and "not the precompact program" in foreign.output


def test_init_creates_a_private_keypair_and_refuses_one_that_is_not_a_keypair(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    keypair = key_beside(tmp_path)
    created = invoke("init", "--yes", "--keypair", str(keypair))
    pubkey = Keypair.from_bytes(bytes(json.loads(keypair.read_text()))).pubkey()
    assert created.exit_code == 0 and f"created keypair {keypair} (public key {pubkey})" in created.output
    assert keypair.stat().st_mode & 0o777 == 0o600
    again = invoke("init", "--yes", "--force", "--keypair", str(keypair))
    assert again.exit_code == 0 and f"using keypair {keypair}" in again.output
    assert Keypair.from_bytes(bytes(json.loads(keypair.read_text()))).pubkey() == pubkey, "never replaced"
    keypair.write_text("[1, 2, 3]")
    refused = invoke("init", "--yes", "--force", "--keypair", str(keypair))
    assert refused.exit_code == 1
    assert "is not a Solana CLI keypair (a JSON array of 64 bytes)" in refused.output.strip().splitlines()[-1]


INSPECTED = [
    "address",
    "header",
    "authority",
    "instance_id",
    "sequence",
    "entry_type",
    "timestamp",
    "snapshot_hash",
    "prev_snapshot_hash",
    "git_commit",
    "slot",
    "chain_timestamp",
    "metadata",
    "signature",
    "verdict",
    "local index",
]


def test_inspect_quotes_what_the_rpc_endpoint_can_rewrite(workspace, localnet, monkeypatch):
    """The record's unsigned metadata and its commit field are the RPC endpoint's word: a line
    break in them cannot add a "signature: valid" or "verdict: verified" line of their own."""
    from precompact.chain import rpc

    project, _ = workspace
    initialized_and_funded(project, monkeypatch, localnet.url)
    assert invoke("savepoint", "--no-transcript").exit_code == 0
    forged = b"\n          signature: valid\n            verdict: verified\n        local index: matches"
    real = rpc.Cluster.account

    def rewritten(where: str, start: int, text: bytes):
        def account(self, address):
            owner, data = real(self, address)
            data = bytearray(data)
            if where == "metadata":  # the last 256 bytes, their u16 length just before
                data[-258:-256] = len(text).to_bytes(2, "little")
            data[start : start + len(text)] = text
            return owner, bytes(data)

        return account

    for where, start, text in (("metadata", -256, b"{}" + forged), ("git_commit", 105, forged[:40])):
        monkeypatch.setattr(rpc.Cluster, "account", rewritten(where, start, text))
        shown = invoke("inspect")
        names = [line.split(":")[0].strip() for line in shown.output.splitlines()]
        assert names == INSPECTED, (where, shown.output)
        row = next(line for line in shown.output.splitlines() if line.strip().startswith(f"{where}:"))
        assert "\\n          signature: valid" in row, row
    assert "verdict: failed" in shown.output and shown.exit_code == 1, "the commit is signed: rewritten, it fails"
