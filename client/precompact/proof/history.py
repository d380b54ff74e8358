"""The ledger's history as JSON-RPC gives it: the transactions that touched an address, and each
transaction's bytes, slot, block time and status. Every answer is checked for shape here; what
the bytes say is judged by `proof.transaction`."""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass

from solders.pubkey import Pubkey

from precompact.boundary import quoting
from precompact.chain import rpc
from precompact.proof import transaction as parsing

_SIGNATURE = re.compile(r"[1-9A-HJ-NP-Za-km-z]{32,88}")  # base58, so safe to print
PAGE = 1000  # getSignaturesForAddress's largest page
STATUS_BATCH = 256  # getSignatureStatuses' largest batch


@dataclass(frozen=True)
class Fetched:
    """One transaction as the cluster returned it."""

    signature: str
    slot: int
    block_time: int | None
    data: bytes  # the wire transaction (getTransaction, encoding base64)
    failed: bool  # meta.err is set: it changed nothing but the fee payer's balance
    loaded_writable: tuple[str, ...]  # addresses an address lookup table loaded writable


def _malformed(cluster: rpc.Cluster, method: str, what: str) -> rpc.RpcError:
    return rpc.RpcError(f"cluster {cluster.shown} answered {method} with something unusable ({what})")


def transaction(cluster: rpc.Cluster, signature: str, commitment: str = rpc.COMMITMENT) -> Fetched | None:
    """The transaction `signature` at `commitment`, None when the cluster does not have it."""
    config = {"encoding": "base64", "commitment": commitment, "maxSupportedTransactionVersion": 0}
    result = cluster.call("getTransaction", [signature, config])
    if result is None:
        return None
    try:
        encoded, encoding = result["transaction"]
        if encoding != "base64":
            raise ValueError(f"encoded as {encoding}")
        meta = result.get("meta") or {}
        loaded = (meta.get("loadedAddresses") or {}).get("writable") or []
        slot, block_time = result["slot"], result.get("blockTime")
        if not isinstance(slot, int) or not (block_time is None or isinstance(block_time, int)):
            raise ValueError("slot or blockTime is not an integer")
        return Fetched(
            signature,
            slot,
            block_time,
            base64.b64decode(encoded, validate=True),
            meta.get("err") is not None,
            tuple(str(a) for a in loaded),
        )
    except (KeyError, TypeError, ValueError, binascii.Error) as e:
        raise _malformed(cluster, "getTransaction", quoting.inline(str(e))) from None


def signatures_for_address(cluster: rpc.Cluster, address: str) -> list[dict]:
    """Every transaction signature that touched `address`, oldest first, each with its slot and
    err, read page by page (`before` the oldest of the last page) until a short page."""
    found: list[dict] = []
    before = None
    while True:
        config: dict = {"limit": PAGE, "commitment": rpc.COMMITMENT}
        if before is not None:
            config["before"] = before
        page = cluster.call("getSignaturesForAddress", [address, config])
        if not isinstance(page, list) or not all(
            isinstance(entry, dict)
            and isinstance(entry.get("slot"), int)
            and isinstance(entry.get("signature"), str)
            and _SIGNATURE.fullmatch(entry["signature"])
            for entry in page
        ):
            raise _malformed(cluster, "getSignaturesForAddress", "not a list of signatures with slots")
        found.extend(page)
        if len(page) < PAGE:
            break
        before = page[-1]["signature"]
    seen = set()
    for entry in found:
        if entry["signature"] in seen:
            raise _malformed(cluster, "getSignaturesForAddress", f"signature {entry['signature']} listed twice")
        seen.add(entry["signature"])
    return found[::-1]


def statuses(cluster: rpc.Cluster, signatures: list[str]) -> list[dict | None]:
    """Each signature's status, searched through the whole history (not only recent blocks)."""
    found: list[dict | None] = []
    for start in range(0, len(signatures), STATUS_BATCH):
        batch = signatures[start : start + STATUS_BATCH]
        result = cluster.call("getSignatureStatuses", [batch, {"searchTransactionHistory": True}])
        value = result.get("value") if isinstance(result, dict) else None
        if not isinstance(value, list) or len(value) != len(batch):
            raise _malformed(cluster, "getSignatureStatuses", "not one status per signature")
        if not all(v is None or isinstance(v, dict) for v in value):
            raise _malformed(cluster, "getSignatureStatuses", "a status that is not an object")
        found.extend(value)
    return found


def first_write(cluster: rpc.Cluster, program_id: Pubkey, address: Pubkey) -> parsing.Parsed | None:
    """The first transaction that succeeded and wrote to the program's record at `address`, parsed
    (lamports anyone sends to the address first write nothing, so they are passed over): how the
    record began. None when the history holds none, or it is not one whose signatures verify."""
    for entry in signatures_for_address(cluster, str(address)):
        if entry.get("err") is not None:
            continue
        fetched = transaction(cluster, entry["signature"])
        if fetched is None or fetched.failed:
            continue
        try:
            parsed = parsing.parse(fetched.data, program_id, address)
        except parsing.Unreadable:
            return None
        if parsed.writes:
            return parsed
    return None
