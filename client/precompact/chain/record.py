"""The on-chain savepoint record: the only code that knows its bytes (borsh-construct layouts).
Everywhere else the record is a typed `Record`."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass

from borsh_construct import I64, U8, U16, U64, CStruct
from construct import Bytes
from solders.pubkey import Pubkey

from precompact.chain import wire as chain
from precompact.errors import PrecompactError

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
# Written by the program, covered by no signature: shown, never relied on.
UNSIGNED_FIELDS = ("slot", "chain_timestamp", "bump", "metadata", "entry_type")


class RecordError(PrecompactError):
    """The account is not a precompact savepoint record."""


@dataclass(frozen=True)
class Record:
    magic: bytes
    version: int
    reserved: bytes
    entry_type: int
    timestamp: int
    instance_id: bytes
    snapshot_hash: bytes
    git_commit: bytes
    signature: bytes
    authority: bytes
    sequence: int
    prev_snapshot_hash: bytes
    slot: int
    chain_timestamp: int
    bump: int
    metadata_len: int
    metadata: bytes

    @property
    def commit(self) -> str:
        """The git commit as text (40 lowercase hex digits in a valid record)."""
        return self.git_commit.decode("ascii", errors="replace")

    @property
    def metadata_text(self) -> str:
        return self.metadata[: self.metadata_len].decode("utf-8", errors="replace")

    def signed_fields(self) -> chain.SavepointFields:
        """What the authority signed, as this record states it."""
        return chain.SavepointFields(
            sequence=self.sequence,
            timestamp=self.timestamp,
            instance_id=self.instance_id,
            snapshot_hash=self.snapshot_hash,
            prev_snapshot_hash=self.prev_snapshot_hash,
            git_commit=self.commit,
        )

    def continued_from(self) -> Pubkey | None:
        """For a record that continues another authority's lineage (rotated or recovered, and no
        savepoint of its own yet), that authority, as the program wrote it into the metadata:
        the savepoint the record states was signed by it, at its own record's address."""
        key = {chain.ENTRY_TYPE_ROTATED: "rotated_from", chain.ENTRY_TYPE_RECOVERED: "recovered_from"}
        return self._named(key.get(self.entry_type))

    def rotated_to(self) -> Pubkey | None:
        """For a frozen record, the authority its lineage continues under."""
        return self._named("rotated_to" if self.entry_type == chain.ENTRY_TYPE_ROTATED_OUT else None)

    @property
    def frozen(self) -> bool:
        return self.entry_type == chain.ENTRY_TYPE_ROTATED_OUT

    @property
    def recovered(self) -> bool:
        """Continued without the previous authority's signature (`recover_lineage`)."""
        return self.entry_type == chain.ENTRY_TYPE_RECOVERED

    def lineage(self) -> str:
        """What the record is in its lineage, as the program marked it (entry_type and the key
        it wrote into the metadata)."""
        signer = self.signed_by()
        shown = "that key's" if signer is None else f"{signer}'s, a key before it"
        if self.entry_type == chain.ENTRY_TYPE_ROTATED:
            return f"continues {self.continued_from()}'s lineage (rotation, both keys signed); the savepoint shown is {shown}"
        if self.entry_type == chain.ENTRY_TYPE_RECOVERED:
            return (
                f"continues {self.continued_from()}'s lineage WITHOUT that key's signature (recovery); "
                f"the savepoint shown is {shown}"
            )
        if self.frozen:
            return f"frozen: the lineage continues under {self.rotated_to()} (rotation); it takes no more savepoints"
        if self.entry_type == chain.ENTRY_TYPE_SAVEPOINT:
            return "savepoints of this authority"
        return f"unknown entry_type {self.entry_type}"

    def _named(self, key: str | None) -> Pubkey | None:
        if key is None:
            return None
        try:
            named = json.loads(self.metadata_text).get(key)
            return Pubkey.from_string(named) if isinstance(named, str) else None
        except (ValueError, AttributeError):
            return None

    def signed_by(self) -> Pubkey | None:
        """For a record the program wrote by carrying over (or freezing) a savepoint that is not
        the previous authority's own (the lineage moved again before its next savepoint), the key
        that signed it, as the program wrote it into the metadata; None otherwise."""
        program_written = (chain.ENTRY_TYPE_ROTATED, chain.ENTRY_TYPE_RECOVERED, chain.ENTRY_TYPE_ROTATED_OUT)
        return self._named("signed_by" if self.entry_type in program_written else None)

    def savepoint_signer(self, authority: Pubkey, program_id: Pubkey) -> tuple[Pubkey, Pubkey] | None:
        """Who signed the savepoint this record (of `authority`) states, and for which record
        address: the key the program names `signed_by` (a savepoint carried over more than once,
        or frozen after it was carried over), else for a savepoint carried over by rotation or
        recovery the previous authority, else the authority itself; each at its own record's
        address. None when a carried record names no previous authority."""
        signer = self.signed_by()
        if signer is None and self.entry_type in (chain.ENTRY_TYPE_ROTATED, chain.ENTRY_TYPE_RECOVERED):
            signer = self.continued_from()
            if signer is None:
                return None
        key = authority if signer is None else signer
        return key, chain.record_address(key, self.instance_id, program_id)[0]


def decode(data: bytes) -> Record:
    if len(data) != SIZE:
        raise RecordError(f"account holds {len(data)} bytes; a savepoint record has {SIZE}")
    header = HEADER.parse(data[: HEADER.sizeof()])
    if header.magic != MAGIC:
        raise RecordError(f"magic is {header.magic.hex()}, expected efbbbf: not a precompact record")
    if header.version != VERSION:
        raise RecordError(f"record version {header.version} is not supported (this client reads version {VERSION})")
    body = BODY.parse(data[HEADER.sizeof() :])
    values = {k: v for k, v in body.items() if not k.startswith("_")}
    if values["metadata_len"] > chain.METADATA_MAX_LEN:
        raise RecordError(f"metadata_len {values['metadata_len']} exceeds {chain.METADATA_MAX_LEN}")
    return Record(magic=header.magic, version=header.version, reserved=header.reserved, **values)


def to_json(found: Record, address: Pubkey) -> dict:
    """DESIGN.md's field names plus magic, version and address; other bytes as lowercase hex."""
    out: dict = {"address": str(address)}
    for name, value in dataclasses.asdict(found).items():
        out[name] = value.hex() if isinstance(value, bytes) else value
    # Already lowercase hex text and UTF-8 JSON: shown as themselves, not hex of hex.
    out["git_commit"] = found.commit
    out["metadata"] = found.metadata_text
    return out
