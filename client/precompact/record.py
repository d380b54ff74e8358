"""Decodes the on-chain savepoint record with borsh-construct layouts and checks it offline."""

from __future__ import annotations

from borsh_construct import CStruct, I64, U8, U16, U64
from construct import Bytes
from solders.pubkey import Pubkey
from solders.signature import Signature

from precompact import chain

MAGIC = bytes([0xEF, 0xBB, 0xBF])
VERSION = 1
HEADER = CStruct("magic" / Bytes(3), "version" / U8, "reserved" / Bytes(28))
BODY = CStruct(
    "entry_type" / U8,
    "timestamp" / I64,
    "instance_id" / Bytes(32),
    "snapshot_hash" / Bytes(32),
    "git_commit" / Bytes(40),
    "signature" / Bytes(64),
    "authority" / Bytes(32),
    "sequence" / U64,
    "prev_snapshot_hash" / Bytes(32),
    "slot" / U64,
    "chain_timestamp" / I64,
    "bump" / U8,
    "metadata_len" / U16,
    "metadata" / Bytes(chain.METADATA_MAX_LEN),
)
SIZE = HEADER.sizeof() + BODY.sizeof()


class RecordError(Exception):
    """The account is not a precompact savepoint record."""


def decode(data: bytes) -> dict:
    """Every field of the record, plus `magic` and `version` from the header."""
    if len(data) != SIZE:
        raise RecordError(f"account holds {len(data)} bytes; a savepoint record has {SIZE}")
    header = HEADER.parse(data[: HEADER.sizeof()])
    if header.magic != MAGIC:
        raise RecordError(f"magic is {header.magic.hex()}, expected efbbbf: not a precompact record")
    if header.version != VERSION:
        raise RecordError(f"record version {header.version} is not supported (this client reads version {VERSION})")
    body = BODY.parse(data[HEADER.sizeof() :])
    fields = {"magic": header.magic, "version": header.version, "reserved": header.reserved}
    fields.update({k: v for k, v in body.items() if not k.startswith("_")})
    if fields["metadata_len"] > chain.METADATA_MAX_LEN:
        raise RecordError(f"metadata_len {fields['metadata_len']} exceeds {chain.METADATA_MAX_LEN}")
    return fields


def signature_valid(fields: dict, address: Pubkey, program_id: Pubkey = chain.PROGRAM_ID) -> bool:
    """Whether the stored signature is the authority's over the stored savepoint."""
    if fields["sequence"] == 0:
        return False
    signed = chain.SavepointFields(
        sequence=fields["sequence"],
        timestamp=fields["timestamp"],
        instance_id=fields["instance_id"],
        snapshot_hash=fields["snapshot_hash"],
        prev_snapshot_hash=fields["prev_snapshot_hash"],
        git_commit=fields["git_commit"].decode("ascii", errors="replace"),
    )
    try:
        message = signed.signed_message(address, program_id)
    except ValueError:
        return False
    return Signature.from_bytes(fields["signature"]).verify(Pubkey.from_bytes(fields["authority"]), message)


def to_json(fields: dict, address: Pubkey) -> dict:
    """DESIGN.md's field names plus magic, version and address; other bytes as lowercase hex."""
    out = {"address": str(address)}
    for name, value in fields.items():
        out[name] = value.hex() if isinstance(value, bytes) else value
    # Already lowercase hex text and UTF-8 JSON: shown as themselves, not hex of hex.
    out["git_commit"] = fields["git_commit"].decode("ascii", errors="replace")
    out["metadata"] = fields["metadata"][: fields["metadata_len"]].decode("utf-8", errors="replace")
    return out
