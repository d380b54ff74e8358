"""solana-py and solders, unmodified, against a running precompact-localnet: the same code path
the client runs against devnet or solana-test-validator."""

import json
import time

import pytest
from solana.rpc.async_api import AsyncClient
from solana.rpc.commitment import Confirmed
from solana.rpc.core import RPCException
from solana.rpc.types import TxOpts
from solders.instruction import Instruction
from solders.keypair import Keypair
from solders.transaction import Transaction
from solders.transaction_status import InstructionErrorCustom

from precompact.chain import rpc
from precompact.chain import wire as chain

SOL = 1_000_000_000
INSTANCE = "Gabriel #215"


def savepoint_fields(sequence: int, prev: bytes) -> chain.SavepointFields:
    return chain.SavepointFields(
        sequence=sequence,
        timestamp=int(time.time()),
        instance_id=chain.instance_id(INSTANCE),
        snapshot_hash=bytes([sequence]) * 32,
        prev_snapshot_hash=prev,
        git_commit=f"{sequence:040x}",
    )


async def send(client: AsyncClient, instructions, payer: Keypair, signers=()) -> str:
    blockhash = (await client.get_latest_blockhash()).value.blockhash
    tx = Transaction.new_signed_with_payer(instructions, payer.pubkey(), [payer, *signers], blockhash)
    signature = (await client.send_raw_transaction(bytes(tx), opts=TxOpts(preflight_commitment=Confirmed))).value
    await client.confirm_transaction(signature, commitment=Confirmed, sleep_seconds=0.05)
    return signature


async def test_initialize_savepoint_decode_reject_and_survive_restart(localnet):
    authority = Keypair()
    record, _ = chain.record_address(authority.pubkey(), chain.instance_id(INSTANCE))
    async with AsyncClient(localnet.url, commitment=Confirmed) as client:
        assert (await client.is_connected()) is True
        airdrop = (await client.request_airdrop(authority.pubkey(), 5 * SOL)).value
        await client.confirm_transaction(airdrop, sleep_seconds=0.05)
        assert (await client.get_balance(authority.pubkey())).value == 5 * SOL

        await send(
            client,
            [chain.initialize_instruction(authority.pubkey(), authority.pubkey(), chain.instance_id(INSTANCE))],
            authority,
        )
        metadata = json.dumps({"trigger": "auto", "tokens_used": 171234}).encode()
        signature = await send(
            client, chain.savepoint_instructions(authority, savepoint_fields(1, bytes(32)), metadata), authority
        )

        account = (await client.get_account_info(record)).value
        assert account.owner == chain.PROGRAM_ID
        data = bytes(account.data)
        assert data[:4] == bytes([0xEF, 0xBB, 0xBF, 0x01])
        assert data[73:105] == bytes([1]) * 32  # snapshot_hash
        assert data[105:145] == f"{1:040x}".encode()  # git_commit
        assert int.from_bytes(data[241:249], "little") == 1  # sequence
        assert data[300 : 300 + len(metadata)] == metadata

        tx = (await client.get_transaction(signature, max_supported_transaction_version=0)).value
        assert tx.transaction.meta.err is None

        bad = chain.savepoint_instructions(authority, savepoint_fields(2, bytes([1]) * 32), b"{}")
        bad_data = bytearray(bytes(bad[0].data))
        bad_data[60] ^= 1  # a bit of the signature
        tampered = [Instruction(bad[0].program_id, bytes(bad_data), bad[0].accounts), bad[1]]
        with pytest.raises(RPCException) as rejected:
            await send(client, tampered, authority)
        err = rejected.value.args[0].data.err
        # The Ed25519 precompile (instruction 0) refuses it: PrecompileError::InvalidSignature.
        assert err.index == 0
        assert err.err == InstructionErrorCustom(2)

    localnet.stop()
    localnet.start()
    async with AsyncClient(localnet.url, commitment=Confirmed) as client:
        again = (await client.get_account_info(record)).value
        assert again is not None, "the record survives a restart with --state"
        assert bytes(again.data) == data
        await send(
            client, chain.savepoint_instructions(authority, savepoint_fields(2, bytes([1]) * 32), b"{}"), authority
        )
        after = bytes((await client.get_account_info(record)).value.data)
        assert int.from_bytes(after[241:249], "little") == 2


def test_an_unreachable_cluster_is_named_with_what_it_did(localnet):
    url = localnet.url
    localnet.stop()
    with pytest.raises(rpc.Unreachable, match=f"cluster {url} unreachable \\("):
        rpc.Cluster(url, timeout=2).call("getSlot", [])
