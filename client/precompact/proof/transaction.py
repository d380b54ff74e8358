"""What one Solana transaction did to a savepoint record, read from its wire bytes alone.

The bundle verifier and the ledger walk both ask this module; neither reads a transaction's
instructions itself. A transaction is judged by its bytes (every signature checked over its
message), never by what an endpoint says about it beside them.
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass

from solders.message import Message
from solders.pubkey import Pubkey
from solders.signature import Signature
from solders.solders import SanitizeError
from solders.transaction import VersionedTransaction

from precompact.boundary import quoting
from precompact.chain import wire as chain


def _discriminator(name: str) -> bytes:
    """Anchor's instruction discriminator: the first 8 bytes of sha256("global:<name>")."""
    return hashlib.sha256(f"global:{name}".encode()).digest()[:8]


INITIALIZE = _discriminator("initialize")
SAVEPOINT = _discriminator("savepoint")
CLOSE = _discriminator("close")
ROTATE_AUTHORITY = _discriminator("rotate_authority")
RECOVER_LINEAGE = _discriminator("recover_lineage")
_KINDS = {
    INITIALIZE: "initialize",
    SAVEPOINT: "savepoint",
    CLOSE: "close",
    ROTATE_AUTHORITY: "rotate_authority",
    RECOVER_LINEAGE: "recover_lineage",
}
# Programs whose instructions can move lamports to an address but never change its data or owner
# unless that address signs, which a program address cannot.
LAMPORTS_ONLY_PROGRAMS = {
    chain.SYSTEM_PROGRAM_ID,
    Pubkey.from_string("ComputeBudget111111111111111111111111111111"),
}
_SIGNED_MESSAGE_LEN = len(chain.SIGNED_MESSAGE_DOMAIN) + 32 + 32 + 8 + 8 + 32 + 32 + 32 + chain.GIT_COMMIT_LEN
_ED25519_DATA_LEN = 16 + 32 + 64 + _SIGNED_MESSAGE_LEN


class Unreadable(Exception):
    """The bytes are not a transaction whose every signature verifies."""


@dataclass(frozen=True)
class Write:
    """One instruction of the precompact program on the record, as the transaction states it.
    For a savepoint, `fields` and `signature` are what the Ed25519 instruction before it
    verified (None when that instruction is not the one the program requires)."""

    kind: str  # initialize | savepoint | close | rotated_out | rotated_in | recovered_in | unknown
    authority: Pubkey | None
    fields: chain.SavepointFields | None = None
    signature: bytes | None = None
    problem: str | None = None
    # The other side of a rotation: for rotated_out the new authority, for rotated_in the old
    # authority (both signed), for recovered_in the address of the record continued (unsigned).
    other: Pubkey | None = None


@dataclass(frozen=True)
class Parsed:
    signature: str  # the transaction's id: its first signature, base58
    keys: list[Pubkey]
    signers: int
    writes: list[Write]  # the program's instructions on the record, in order
    writable: bool  # the record is a writable account of the message
    foreign_programs: list[Pubkey]  # programs other than ours, the Ed25519 program and lamports-only ones
    legacy: bool  # a legacy message (not a versioned one)


def parse(data: bytes, program_id: Pubkey, record: Pubkey) -> Parsed:
    """The transaction in `data`, once every signature verifies over its message; Unreadable
    otherwise."""
    try:
        tx = VersionedTransaction.from_bytes(data)
        tx.sanitize()  # every index in range, so reading keys by index cannot fail below
    except (ValueError, SanitizeError) as e:
        raise Unreadable(f"not a Solana transaction ({quoting.inline(str(e))})") from None
    if bytes(tx) != data:
        raise Unreadable("the bytes are not one transaction's canonical encoding")
    message = tx.message
    header = message.header
    keys = list(message.account_keys)
    signers = header.num_required_signatures
    if len(tx.signatures) != signers or not signers:
        raise Unreadable(f"carries {len(tx.signatures)} signature(s) for {signers} required signer(s)")
    results = tx.verify_with_results()
    if not all(results):
        bad = results.index(False)
        raise Unreadable(f"signature {bad} ({keys[bad]}) does not verify over the transaction's message")
    writes = []
    foreign = []
    instructions = list(message.instructions)
    for position, instruction in enumerate(instructions):
        program = keys[instruction.program_id_index]
        if program == program_id:
            accounts = [keys[i] for i in bytes(instruction.accounts)]
            if record in accounts:
                writes.append(_write(bytes(instruction.data), accounts, instructions, keys, position, signers, record))
        elif program != chain.ED25519_PROGRAM_ID and program not in LAMPORTS_ONLY_PROGRAMS:
            foreign.append(program)
    legacy = isinstance(message, Message)
    return Parsed(str(tx.signatures[0]), keys, signers, writes, _is_writable(message, keys, record), foreign, legacy)


def _is_writable(message, keys: list[Pubkey], address: Pubkey) -> bool:
    """Solana's rule for a static account key: signed keys before the read-only signed ones,
    unsigned keys before the read-only unsigned ones."""
    if address not in keys:
        return False
    i = keys.index(address)
    header = message.header
    signers = header.num_required_signatures
    if i < signers:
        return i < signers - header.num_readonly_signed_accounts
    return i < len(keys) - header.num_readonly_unsigned_accounts


def _write(
    data: bytes, accounts: list[Pubkey], instructions, keys, position: int, signers: int, record: Pubkey
) -> Write:
    kind = _KINDS.get(data[:8], "unknown")
    if kind in ("rotate_authority", "recover_lineage"):
        return _continuation(kind, data, accounts, keys, signers, record)
    # initialize: payer, authority, record; savepoint and close: authority, record.
    authority_at = 1 if kind == "initialize" else 0
    authority = accounts[authority_at] if len(accounts) > authority_at else None
    if len(accounts) <= authority_at + 1 or accounts[authority_at + 1] != record:
        return Write(kind, authority, problem="the record is not the account the instruction writes")
    if authority is not None and keys.index(authority) >= signers:
        return Write(kind, authority, problem=f"its authority {authority} did not sign the transaction")
    if kind != "savepoint":
        return Write(kind, authority)
    if position == 0:
        return Write(kind, authority, problem="no Ed25519 instruction precedes it")
    before = instructions[position - 1]
    if keys[before.program_id_index] != chain.ED25519_PROGRAM_ID:
        return Write(kind, authority, problem="the instruction before it is not the Ed25519 program's")
    signed = bytes(before.data)
    if len(signed) != _ED25519_DATA_LEN:
        return Write(
            kind, authority, problem=f"its Ed25519 instruction holds {len(signed)} bytes, not {_ED25519_DATA_LEN}"
        )
    pubkey, signature, message = signed[16:48], signed[48:112], signed[112:]
    if signed != chain.ed25519_instruction_data(pubkey, signature, message):
        return Write(kind, authority, problem="its Ed25519 instruction is not the one-signature form the program reads")
    if authority is None or pubkey != bytes(authority):
        return Write(
            kind,
            authority,
            problem=f"its Ed25519 instruction is signed by {Pubkey.from_bytes(pubkey)}, not the authority",
        )
    if not Signature.from_bytes(signature).verify(authority, message):
        return Write(kind, authority, problem="its Ed25519 signature does not verify over the message")
    read = read_message(message)
    if read is None:
        return Write(kind, authority, problem="its Ed25519 instruction signs something that is not a savepoint message")
    program_id = keys[instructions[position].program_id_index]
    if (read.program_id, read.record) != (program_id, record):
        return Write(
            kind, authority, problem=f"its signed message is for program {read.program_id} and record {read.record}"
        )
    return Write(kind, authority, read.fields, signature)


def _continuation(kind: str, data: bytes, accounts: list[Pubkey], keys, signers: int, record: Pubkey) -> Write:
    """A rotation on the old record (accounts: authority, record, new authority, new record, ...)
    or on the new one, or a recovery on the new record (authority, record, previous, ...)."""
    signed = [a for a in accounts[:3] if a in keys[:signers]]
    if kind == "rotate_authority" and len(accounts) >= 4 and record in (accounts[1], accounts[3]):
        old, new = accounts[0], accounts[2]
        write = Write("rotated_out", old, other=new) if record == accounts[1] else Write("rotated_in", new, other=old)
        if old not in signed or new not in signed:
            return Write(write.kind, write.authority, problem="its old and new authorities did not both sign it")
        return write
    if kind == "recover_lineage" and len(accounts) >= 3 and record == accounts[1]:
        if accounts[0] not in signed:
            return Write(
                "recovered_in", accounts[0], problem=f"its authority {accounts[0]} did not sign the transaction"
            )
        return Write("recovered_in", accounts[0], other=accounts[2])
    return Write(
        kind, accounts[0] if accounts else None, problem="the record is not the account the instruction writes"
    )


@dataclass(frozen=True)
class SignedMessage:
    program_id: Pubkey
    record: Pubkey
    fields: chain.SavepointFields


def read_message(message: bytes) -> SignedMessage | None:
    """The signed message's parts (DESIGN.md gives its bytes), None when it is not one."""
    domain = chain.SIGNED_MESSAGE_DOMAIN
    if len(message) != _SIGNED_MESSAGE_LEN or not message.startswith(domain):
        return None
    rest = message[len(domain) :]
    program_id, record, rest = rest[:32], rest[32:64], rest[64:]
    sequence, timestamp = struct.unpack("<Qq", rest[:16])
    instance, snapshot_hash, prev, commit = rest[16:48], rest[48:80], rest[80:112], rest[112:]
    try:
        git_commit = commit.decode("ascii")
    except UnicodeDecodeError:
        return None
    fields = chain.SavepointFields(sequence, timestamp, instance, snapshot_hash, prev, git_commit)
    return SignedMessage(Pubkey.from_bytes(program_id), Pubkey.from_bytes(record), fields)
