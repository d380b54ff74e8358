"""The stock Anchor CLI (Anchor.toml's toolchain version, installed by scripts/setup) against
precompact-localnet, as against solana-test-validator: `anchor idl fetch` finds the program's IDL
on chain and `anchor account` decodes a savepoint record posted there."""

from __future__ import annotations

import json
import time

import pytest
from solana.rpc.api import Client
from solana.rpc.commitment import Confirmed
from solana.rpc.types import TxOpts
from solders.keypair import Keypair
from solders.transaction import Transaction

from precompact.chain import wire as chain
from precompact.config import settings as configuration
from support.anchor_cli import anchor, npm_registry_reachable
from support.projects import fund

INSTANCE = "Anchor CLI #1"


def post_first_savepoint(url: str) -> tuple[Keypair, chain.SavepointFields]:
    """A record holding savepoint 1, posted as the client posts it."""
    authority = Keypair()
    fund(url, authority)
    client = Client(url, commitment=Confirmed)
    instance = chain.instance_id(INSTANCE)
    fields = chain.SavepointFields(
        sequence=1,
        timestamp=int(time.time()),
        instance_id=instance,
        snapshot_hash=bytes([7]) * 32,
        prev_snapshot_hash=bytes(32),
        git_commit="c0ffee".ljust(40, "0"),
    )
    for instructions in (
        [chain.initialize_instruction(authority.pubkey(), authority.pubkey(), instance)],
        chain.savepoint_instructions(authority, fields, b'{"trigger":"auto"}'),
    ):
        blockhash = client.get_latest_blockhash().value.blockhash
        tx = Transaction.new_signed_with_payer(instructions, authority.pubkey(), [authority], blockhash)
        signature = client.send_raw_transaction(bytes(tx), opts=TxOpts(preflight_commitment=Confirmed)).value
        client.confirm_transaction(signature, commitment=Confirmed, sleep_seconds=0.05)
    return authority, fields


@pytest.mark.network
def test_anchor_idl_fetch_reads_the_program_idl_from_the_chain(localnet, tmp_path):
    if not npm_registry_reachable():
        pytest.skip("npm cannot reach its registry: `anchor idl fetch` runs the Program Metadata client with npx")
    out = tmp_path / "fetched.json"
    # Outside any workspace: the cluster comes from the flag alone.
    fetched = anchor(
        "idl", "fetch", str(chain.PROGRAM_ID), "-o", str(out), "--provider.cluster", localnet.url, cwd=tmp_path
    )
    assert fetched.returncode == 0, fetched.stdout + fetched.stderr
    assert json.loads(out.read_text()) == json.loads(configuration.IDL_FILE.read_bytes())


def test_anchor_account_decodes_a_posted_savepoint_record(localnet, tmp_path):
    authority, fields = post_first_savepoint(localnet.url)
    record, _ = chain.record_address(authority.pubkey(), fields.instance_id)
    shown = anchor(
        "account",
        "precompact.SavepointRecord",
        str(record),
        "--idl",
        str(configuration.IDL_FILE),
        "--provider.cluster",
        localnet.url,
        cwd=tmp_path,
    )
    assert shown.returncode == 0, shown.stdout + shown.stderr
    decoded = json.loads(shown.stdout)
    assert decoded["sequence"] == 1
    assert decoded["authority"] == str(authority.pubkey())
    assert bytes(decoded["snapshot_hash"]) == fields.snapshot_hash
    assert bytes(decoded["instance_id"]) == fields.instance_id
    assert bytes(decoded["git_commit"]).decode() == fields.git_commit
    assert bytes(decoded["prev_snapshot_hash"]) == bytes(32)
