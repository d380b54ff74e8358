"""Layer 3 on the wire: addresses, the signed savepoint message and the program's instructions.

The program's instructions are built by anchorpy from the committed IDL (converted to the
legacy form it reads); the address, the signed message and the Ed25519 instruction, which
anchorpy does not know about, are built here. The tests pin all of it to the shared vectors in
`tests/vectors/savepoint-v1.json`, which the Rust program tests check too.
"""

from __future__ import annotations

import functools
import hashlib
import json
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from solders.instruction import Instruction
from solders.keypair import Keypair
from solders.pubkey import Pubkey

from precompact.boundary import quoting, small_file
from precompact.config import settings as configuration
from precompact.errors import PrecompactError

if TYPE_CHECKING:
    from anchorpy import Program

IDL = json.loads(configuration.IDL_FILE.read_bytes())
PROGRAM_ID = Pubkey.from_string(IDL["address"])
ED25519_PROGRAM_ID = Pubkey.from_string("Ed25519SigVerify111111111111111111111111111")
INSTRUCTIONS_SYSVAR_ID = Pubkey.from_string("Sysvar1nstructions1111111111111111111111111")
SYSTEM_PROGRAM_ID = Pubkey.from_string("11111111111111111111111111111111")


def _idl_constant(name: str) -> bytes:
    value = next(c["value"] for c in IDL["constants"] if c["name"] == name)
    return bytes(json.loads(value))


def _idl_number(name: str) -> int:
    return int(next(c["value"] for c in IDL["constants"] if c["name"] == name))


SAVEPOINT_SEED = _idl_constant("SAVEPOINT_SEED")
SIGNED_MESSAGE_DOMAIN = _idl_constant("SIGNED_MESSAGE_DOMAIN")
ENTRY_TYPE_SAVEPOINT = _idl_number("ENTRY_TYPE_SAVEPOINT")
# A record continuing another authority's lineage, carried over with that key's signature on the
# rotation (ROTATED) or without it (RECOVERED); a record whose lineage moved on (ROTATED_OUT).
ENTRY_TYPE_ROTATED = _idl_number("ENTRY_TYPE_ROTATED")
ENTRY_TYPE_RECOVERED = _idl_number("ENTRY_TYPE_RECOVERED")
ENTRY_TYPE_ROTATED_OUT = _idl_number("ENTRY_TYPE_ROTATED_OUT")
METADATA_MAX_LEN = 256
GIT_COMMIT_LEN = 40
# The Ed25519 instruction carries, in order: pubkey, signature, message, all inside itself.
_ED25519_PUBKEY_OFFSET = 16
_ED25519_SIGNATURE_OFFSET = _ED25519_PUBKEY_OFFSET + 32
_ED25519_MESSAGE_OFFSET = _ED25519_SIGNATURE_OFFSET + 64
_THIS_INSTRUCTION = 0xFFFF


@functools.cache
def program() -> Program:
    """The program as anchorpy sees it. Only its instruction builders are used: transactions go
    out through the synchronous client, so the provider never connects."""
    # Imported here: anchorpy takes a few hundred ms to import, and reading or checking a
    # record (SessionStart, inspect, verify) never needs it.
    from anchorpy import Idl, Program, Provider, Wallet
    from solana.rpc.async_api import AsyncClient

    from precompact.chain import idl_legacy

    idl = Idl.from_json(json.dumps(idl_legacy.convert(IDL)))
    return Program(idl, PROGRAM_ID, Provider(AsyncClient(), Wallet.dummy()))


class KeypairError(PrecompactError):
    """The keypair file is missing or not a Solana CLI keypair; the message names the fix."""


def load_keypair(path: Path) -> Keypair:
    try:
        values = json.loads(small_file.read(path, configuration.MAX_KEYPAIR_BYTES, follow_links=True)[0])
    except FileNotFoundError:
        raise KeypairError(
            f"keypair {quoting.path(path)} does not exist; run `precompact init` or set chain.keypair",
            unquoted=f"keypair {path} does not exist; run `precompact init` or set chain.keypair",
        ) from None
    except small_file.Refused as e:
        fix = "point chain.keypair (or PRECOMPACT_KEYPAIR) at a Solana CLI keypair file"
        raise KeypairError(
            f"keypair {quoting.path(path)} {e.reason}; {fix}", unquoted=f"keypair {path} {e.reason}; {fix}"
        ) from None
    except (OSError, ValueError, RecursionError) as e:
        raise _unusable(
            path, "is unreadable or not JSON", e, "; point chain.keypair at a Solana CLI keypair file"
        ) from None
    if not (
        isinstance(values, list) and len(values) == 64 and all(isinstance(v, int) and 0 <= v < 256 for v in values)
    ):
        what = "is not a Solana CLI keypair (a JSON array of 64 bytes)"
        raise KeypairError(f"keypair {quoting.path(path)} {what}", unquoted=f"keypair {path} {what}")
    try:
        return Keypair.from_bytes(bytes(values))
    except ValueError as e:
        raise _unusable(path, "is not a valid ed25519 keypair", e) from None


def _unusable(path: Path, what: str, error: Exception, fix: str = "") -> KeypairError:
    """The keypair at `path` is `what`, and `error` what Python or a library said of it: quoted in
    the message, as said in `unquoted` (an index line's reason, quoted whole by its printers)."""
    return KeypairError(
        f"keypair {quoting.path(path)} {what} ({quoting.inline(str(error))}){fix}",
        unquoted=f"keypair {path} {what} ({error}){fix}",
    )


def instance_id(name: str) -> bytes:
    """SHA-256 of the UTF-8 instance name: the id stored on chain."""
    return hashlib.sha256(name.encode("utf-8")).digest()


def record_address(authority: Pubkey, instance: bytes, program_id: Pubkey = PROGRAM_ID) -> tuple[Pubkey, int]:
    """The instance's record PDA and bump."""
    return Pubkey.find_program_address([SAVEPOINT_SEED, bytes(authority), instance], program_id)


@dataclass(frozen=True)
class SavepointFields:
    """What the authority signs for one savepoint."""

    sequence: int
    timestamp: int
    instance_id: bytes
    snapshot_hash: bytes
    prev_snapshot_hash: bytes
    git_commit: str

    def signed_message(self, record: Pubkey, program_id: Pubkey = PROGRAM_ID) -> bytes:
        commit = self.git_commit.encode("ascii")
        if len(commit) != GIT_COMMIT_LEN:
            raise ValueError(f"git commit must be {GIT_COMMIT_LEN} hex characters, got {len(commit)}")
        return b"".join(
            [
                SIGNED_MESSAGE_DOMAIN,
                bytes(program_id),
                bytes(record),
                struct.pack("<Q", self.sequence),
                struct.pack("<q", self.timestamp),
                self.instance_id,
                self.snapshot_hash,
                self.prev_snapshot_hash,
                commit,
            ]
        )


def ed25519_instruction_data(pubkey: bytes, signature: bytes, message: bytes) -> bytes:
    """Ed25519-program data with one signature whose offsets all point inside itself."""
    offsets = struct.pack(
        "<7H",
        _ED25519_SIGNATURE_OFFSET,
        _THIS_INSTRUCTION,
        _ED25519_PUBKEY_OFFSET,
        _THIS_INSTRUCTION,
        _ED25519_MESSAGE_OFFSET,
        len(message),
        _THIS_INSTRUCTION,
    )
    return bytes([1, 0]) + offsets + pubkey + signature + message


def initialize_instruction(payer: Pubkey, authority: Pubkey, instance: bytes) -> Instruction:
    record, _ = record_address(authority, instance)
    accounts = {"payer": payer, "authority": authority, "record": record, "system_program": SYSTEM_PROGRAM_ID}
    return program().instruction["initialize"](list(instance), ctx=_context(accounts))


def savepoint_instructions(authority: Keypair, fields: SavepointFields, metadata: bytes) -> list[Instruction]:
    """The Ed25519 signature over the signed message, then `savepoint`."""
    if len(metadata) > METADATA_MAX_LEN:
        raise ValueError(f"metadata is {len(metadata)} bytes; the limit is {METADATA_MAX_LEN}")
    record, _ = record_address(authority.pubkey(), fields.instance_id)
    message = fields.signed_message(record)
    signature = bytes(authority.sign_message(message))
    ed25519 = Instruction(
        ED25519_PROGRAM_ID, ed25519_instruction_data(bytes(authority.pubkey()), signature, message), []
    )
    args = program().type["SavepointArgs"](entry_type=ENTRY_TYPE_SAVEPOINT, metadata=metadata)
    accounts = {"authority": authority.pubkey(), "record": record, "instructions": INSTRUCTIONS_SYSVAR_ID}
    return [ed25519, program().instruction["savepoint"](args, ctx=_context(accounts))]


def close_instruction(authority: Pubkey, record: Pubkey) -> Instruction:
    return program().instruction["close"](ctx=_context({"authority": authority, "record": record}))


def _context(accounts: dict):
    from anchorpy import Context

    return Context(accounts=accounts)


def rotate_authority_instruction(
    payer: Pubkey, authority: Pubkey, new_authority: Pubkey, instance: bytes
) -> Instruction:
    """`rotate_authority`: `authority`'s record of `instance` continues under `new_authority`
    (both sign)."""
    accounts = {
        "authority": authority,
        "record": record_address(authority, instance)[0],
        "new_authority": new_authority,
        "new_record": record_address(new_authority, instance)[0],
        "payer": payer,
        "system_program": SYSTEM_PROGRAM_ID,
    }
    return program().instruction["rotate_authority"](ctx=_context(accounts))


def recover_lineage_instruction(payer: Pubkey, authority: Pubkey, previous: Pubkey, instance: bytes) -> Instruction:
    """`recover_lineage`: `authority` alone starts its record of `instance` from the record at
    `previous`."""
    accounts = {
        "authority": authority,
        "record": record_address(authority, instance)[0],
        "previous": previous,
        "payer": payer,
        "system_program": SYSTEM_PROGRAM_ID,
    }
    return program().instruction["recover_lineage"](list(instance), ctx=_context(accounts))
