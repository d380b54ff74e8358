"""The Python client builds exactly the bytes the shared vectors pin (the Rust tests check the
same file against the program running in the runtime)."""

import json
import struct

from solders.keypair import Keypair
from solders.pubkey import Pubkey

from precompact.chain import rpc
from precompact.chain import wire as chain
from support.localnet import VECTORS

V = json.loads(VECTORS.read_text())


def fields() -> chain.SavepointFields:
    s = V["savepoint"]
    return chain.SavepointFields(
        sequence=s["sequence"],
        timestamp=s["timestamp"],
        instance_id=chain.instance_id(V["instance_name"]),
        snapshot_hash=bytes.fromhex(s["snapshot_hash_hex"]),
        prev_snapshot_hash=bytes.fromhex(s["prev_snapshot_hash_hex"]),
        git_commit=s["git_commit"],
    )


def authority() -> Keypair:
    return Keypair.from_seed(bytes.fromhex(V["authority_secret_hex"]))


def test_program_id_and_authority():
    assert str(chain.PROGRAM_ID) == V["program_id"]
    assert str(authority().pubkey()) == V["authority"]


def test_instance_id_and_record_address():
    assert chain.instance_id(V["instance_name"]).hex() == V["instance_id_hex"]
    record, bump = chain.record_address(authority().pubkey(), chain.instance_id(V["instance_name"]))
    assert str(record) == V["record_address"]
    assert bump == V["record_bump"]


def test_signed_message_and_signature():
    record = Pubkey.from_string(V["record_address"])
    message = fields().signed_message(record)
    assert message.hex() == V["signed_message_hex"]
    assert bytes(authority().sign_message(message)).hex() == V["signature_hex"]


def test_instruction_data():
    ed25519, savepoint = chain.savepoint_instructions(authority(), fields(), V["savepoint"]["metadata"].encode())
    assert bytes(ed25519.data).hex() == V["ed25519_instruction_data_hex"]
    assert bytes(savepoint.data).hex() == V["savepoint_instruction_data_hex"]
    initialize = chain.initialize_instruction(
        authority().pubkey(), authority().pubkey(), chain.instance_id(V["instance_name"])
    )
    assert bytes(initialize.data).hex() == V["initialize_instruction_data_hex"]


def test_account_layout_is_contiguous_and_matches_the_bytes():
    account = bytes.fromhex(V["account"]["data_hex"])
    offset = 0
    for field in V["account"]["fields"]:
        assert field["offset"] == offset, field
        offset += field["size"]
    assert offset == V["account"]["size"] == len(account) == 556
    at = {f["name"]: account[f["offset"] : f["offset"] + f["size"]] for f in V["account"]["fields"]}
    assert at["discriminator"] == bytes([0xEF, 0xBB, 0xBF, 0x01])
    assert struct.unpack("<Q", at["sequence"])[0] == V["savepoint"]["sequence"]
    assert at["git_commit"].decode() == V["savepoint"]["git_commit"]
    assert at["authority"] == bytes(authority().pubkey())


def test_pinned_rent_is_what_the_runtime_charges_for_the_record(localnet):
    charged = rpc.Cluster(localnet.url, timeout=10).call("getMinimumBalanceForRentExemption", [V["account"]["size"]])
    assert V["account"]["rent_exempt_lamports"] == charged


def test_metadata_and_commit_bounds_are_enforced_before_signing():
    import pytest

    with pytest.raises(ValueError, match="limit is 256"):
        chain.savepoint_instructions(authority(), fields(), b"x" * 257)
    short = chain.SavepointFields(**{**fields().__dict__, "git_commit": "abc"})
    with pytest.raises(ValueError, match="40 hex characters"):
        short.signed_message(Pubkey.from_string(V["record_address"]))
