"""The root that travels with the user: each savepoint's SAVEPOINT_CREATED line signed with the
user's signing key (the ed25519 keypair `precompact init` creates, `chain.keypair`), so that a
savepoint read back from the git remote verifies on any machine that has the public key, chain
on or off.

What is signed: the domain `precompact/index-line/v1`, a zero byte, then the whole
SAVEPOINT_CREATED line as canonical JSON (savepoint_log.signed_content): instance, sequence,
snapshot hash, predecessor hash, snapshot file, times, everything the line says. The line is the
savepoint's description, and the snapshot's hash in it commits to the bytes; the predecessor
hash, written inside each snapshot too, links the savepoints into a chain.

Whose signature counts: only the configured public key's (`chain.authority`, else the
keypair's), a root the user approved with `precompact trust`. A SAVEPOINT_SIGNED line names its
signer, but that name is evidence: a line signed by any other key vouches for nothing.

The background worker signs only the lines this machine wrote (their machine tag checks,
local.provenance), each once per key, before Layer 2 commits the index: every index copy pushed
carries the signatures of the savepoints it holds.

A savepoint's compaction summary travels the same way: the worker signs each summary this
machine recorded (its seal checks, local.savepoint_log) over the domain
`precompact/compact-summary/v1`, a zero byte, the savepoint's SAVEPOINT_CREATED line as above, a
zero byte, and the SHA-256 (hex) of the summary's text: bound to that savepoint, and to no other
text. `precompact restore` takes a summary back only when that signature by the configured key
checks (`offered_summary`).

Verification uses `cryptography` (a dependency already), never the Solana stack, so that the
SessionStart hook can take this root without paying for solders (and pays for cryptography only for
a line this machine did not write).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from pathlib import Path

from precompact.boundary import quoting, small_file
from precompact.config.settings import MAX_KEYPAIR_BYTES, Config
from precompact.errors import PrecompactError
from precompact.local import chunks
from precompact.local.savepoint_log import LineSignature, Savepoint, SummarySignature, signed_content, summary_sha256
from precompact.records import Record
from precompact.verifier import verdicts

DOMAIN = b"precompact/index-line/v1\0"
SUMMARY_DOMAIN = b"precompact/compact-summary/v1\0"
_BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


class SigningKeyError(PrecompactError):
    """The signing key cannot be read; the message names the file and the fix."""


def root(signer: str) -> str:
    """How a verdict that holds bytes to this root names it (as verdicts.LOCAL_ROOT names the
    local one: "…, but {root} sha256:…")."""
    return f"the index line signed by {signer} states"


def message(savepoint: Savepoint) -> bytes:
    return DOMAIN + signed_content(savepoint)


def summary_message(savepoint: Savepoint, sha256: str) -> bytes:
    """What a signature of `savepoint`'s compaction summary covers: its SAVEPOINT_CREATED line
    (canonical JSON holds no zero byte) and the summary's SHA-256 (hex)."""
    return SUMMARY_DOMAIN + signed_content(savepoint) + b"\0" + sha256.encode()


def summary_signed_by(savepoint: Savepoint, summary: str, key: str | None) -> bool:
    """Whether one of the savepoint's summary signatures is `key`'s over `summary` and its line."""
    sha256 = summary_sha256(summary)
    return key is not None and any(
        s.signer == key and s.summary_sha256 == sha256 and _valid(key, s.signature, summary_message(savepoint, sha256))
        for s in savepoint.summary_signatures
    )


class OfferedSummary(Record, frozen=True):
    """A compaction summary an index copy offers for a savepoint, judged against the configured
    key: `text` when that key's signature binds it to the savepoint's line; `refused` (why, in
    precompact's words) when it claims a signature that does not bind it; `unsigned` when the
    copy holds a summary and no signature of it at all (a version before summaries were signed)."""

    text: str | None = None
    refused: str | None = None
    unsigned: bool = False


def offered_summary(savepoint: Savepoint, key: str) -> OfferedSummary:
    """The compaction summary the index read offers for `savepoint` (its last COMPACT_SUMMARY
    line), held to `key`'s SUMMARY_SIGNED lines: a summary altered after it was signed, a
    signature moved from another savepoint (its line is in the message), another key's, or a
    signature whose summary line is gone, is refused, never taken."""
    summary, signatures = savepoint.compact_summary, savepoint.summary_signatures
    if summary is None and not signatures:
        return OfferedSummary()
    if summary is None:
        return OfferedSummary(refused="the index holds its signature but no summary line")
    if not isinstance(summary, str):
        return OfferedSummary(refused="its summary line holds no text")
    if not signatures:
        return OfferedSummary(unsigned=True)
    if summary_signed_by(savepoint, summary, key):
        return OfferedSummary(text=summary)
    if any(s.signer == key for s in signatures):
        return OfferedSummary(
            refused=f"its signature by {key} does not verify over it and its savepoint's index line (altered, or signed for another savepoint)"
        )
    others = sorted({quoting.inline(s.signer) for s in signatures})
    return OfferedSummary(refused=f"signed by {', '.join(others)}, not by {key}")


def summary_verdict(savepoint: Savepoint, key: str | None, owed: str | None) -> verdicts.Check | None:
    """The verdict on `savepoint`'s compaction summary as one index holds it, held to `key`'s
    SUMMARY_SIGNED lines, the root `restore` takes a summary back by (`offered_summary`):
    VERIFIED when that key's signature binds it to the savepoint's line; FAILED for one altered
    after it was signed, a signature moved from another savepoint, another key's, or a signature
    whose summary line is gone; NOT_VERIFIED for one that carries no signature, and, in logs/
    (`owed`: the fix that gets it signed here; None for the remote's copy, judged by restore's
    rule alone), for one this machine recorded that the key has not signed over these words yet
    (a worker that did not run after PostCompact). None when there is neither summary nor
    signature."""
    summary = savepoint.compact_summary
    if summary is None and not savepoint.summary_signatures:
        return None
    if isinstance(summary, str) and summary_signed_by(savepoint, summary, key):
        return verdicts.Check(
            verdicts.VERIFIED,
            f"compaction summary signed by {key}, bound to this savepoint's index line",
            summary_sha256(summary),
        )
    if key is None:
        return verdicts.Check(
            verdicts.NOT_VERIFIED,
            f"compaction summary not checked: no signing key here ({owed or 'run `precompact init`'})",
        )
    if owed is not None and isinstance(summary, str) and savepoint.summary_written_here:
        sha256 = summary_sha256(summary)
        # A signature this key made over other words is an earlier summary's of the savepoint.
        if not any(s.signer == key and s.summary_sha256 == sha256 for s in savepoint.summary_signatures):
            return verdicts.Check(
                verdicts.NOT_VERIFIED,
                f"compaction summary not signed yet by {key} (recorded here; `restore` brings it back only once it is): {owed}",
            )
    offered = offered_summary(savepoint, key)
    if offered.refused is not None:
        return verdicts.Check(verdicts.FAILED, f"compaction summary: {offered.refused}")
    return verdicts.Check(
        verdicts.NOT_VERIFIED,
        "compaction summary carries no signature (recorded by a version before summaries were signed, or pushed before a flush signed it): `restore` does not bring it back",
    )


def summaries_not_signed(config: Config, savepoints: list[Savepoint]) -> dict[tuple[str, int], str]:
    """The compaction summaries this machine recorded that the configured key has not signed
    yet, by (instance, sequence) of their savepoint, each with what that means and the fix: the
    worker signs each after PostCompact records it, so one left was recorded by a PostCompact
    whose worker never ran (killed, the machine off) or could not sign."""
    key = configured_key(config)
    owed = [
        s
        for s in savepoints
        if isinstance(s.compact_summary, str)
        and s.summary_written_here
        and not summary_signed_by(s, s.compact_summary, key)
    ]
    if not owed:
        return {}
    said = f"compaction summary not signed yet by {key or 'your signing key'}: `precompact restore` brings it back only once it is; {signing_fix(config, key)}"
    return {(s.instance, s.sequence): said for s in owed}


def signing_fix(config: Config, key: str | None) -> str:
    """What makes the worker's flush sign with `key` (the configured key) here, in words: a
    flush, or the keypair to point at first."""
    try:
        own = Signer.load(config.keypair).public_key
    except SigningKeyError as e:
        return f"{e}"
    if key in (None, own):
        return "`precompact flush` signs it"
    return (
        f"{config.keypair} holds {own}: point {config.keypair_setting} at {key}'s keypair file, then `precompact flush`"
    )


def configured_key(config: Config) -> str | None:
    """The public key whose signatures count (base58): `chain.authority`, else the keypair's;
    None when neither is there (no root of this kind on this machine)."""
    if config.authority is not None:
        return config.authority
    try:
        return Signer.load(config.keypair).public_key
    except SigningKeyError:
        return None


def signed_by(savepoint: Savepoint, key: str | None) -> bool:
    """Whether one of the savepoint's signatures is `key`'s over its SAVEPOINT_CREATED line."""
    if key is None:
        return False
    wanted = [s for s in savepoint.signatures if s.signer == key]
    return bool(wanted) and any(_valid(key, s.signature, message(savepoint)) for s in wanted)


def line_vouched(savepoint: Savepoint, key: str | None) -> bool:
    """Whether a root vouches for the savepoint's index line: this machine's tag, or `key`'s
    signature over it. What the line states (its time, its summary) counts only then; its
    snapshot's bytes are held to it where they are read (`local_document`)."""
    return savepoint.written_here or signed_by(savepoint, key)


def vouching(config: Config) -> Callable[[Savepoint], bool]:
    """`line_vouched` under the configured key, for Layers 1 and 2 (which may not import this
    module's rules): the key is read, and a signature checked, only for a line this machine did
    not write, so a hook whose index holds only its own lines pays for neither."""
    keys: list[str | None] = []

    def vouched(savepoint: Savepoint) -> bool:
        if savepoint.written_here:
            return True
        if not keys:
            keys.append(configured_key(config))
        return signed_by(savepoint, keys[0])

    return vouched


def refuted(savepoint: Savepoint, key: str) -> bool:
    """Whether a line claims `key`'s signature over the savepoint and it does not verify: an
    altered line or an altered signature (another key's claims are not this root's to judge)."""
    return any(s.signer == key for s in savepoint.signatures) and not signed_by(savepoint, key)


def integrity(found: verdicts.Snapshot, savepoint: Savepoint, before: Savepoint | None, signer: str) -> verdicts.Check:
    """The snapshot against its index line, which `signer`'s signature vouches for: its hash,
    sequence, instance and predecessor, and the link to the savepoint before it in the index
    (`verdicts.unlinked`: FAILED when the index holds none before it)."""
    try:
        verdicts.check_local_root(found, savepoint, root(signer))
    except verdicts.Broken as e:
        return verdicts.Check(verdicts.FAILED, str(e))
    broken = verdicts.unlinked(savepoint, before)
    if broken is not None:
        return verdicts.Check(verdicts.FAILED, broken)
    return verdicts.Check(
        verdicts.VERIFIED,
        f"hash matches the index line signed by {signer}; hash link to the previous savepoint holds",
        found.sha256,
    )


def local_document(
    savepoint: Savepoint, found: verdicts.Snapshot | None, fetch: chunks.Fetch, where: str, signer: str | None
) -> bytes:
    """verdicts.local_root_document, with `signer`'s signature over the index line as a root
    beside this machine's record: the full document of a savepoint whose local bytes either
    vouches for. Raises Unrooted when neither does, Broken when the bytes contradict it."""
    return verdicts.contents(locally_rooted(savepoint, found, signer), fetch, where)


def locally_rooted(savepoint: Savepoint, found: verdicts.Snapshot | None, signer: str | None) -> verdicts.Snapshot:
    """`found`, once this machine's record or `signer`'s signature vouches for its bytes (not
    yet for the chunks they list, which the caller checks). Raises as `local_document` does."""
    if savepoint.written_here or not signed_by(savepoint, signer):
        return verdicts.locally_rooted(savepoint, found)
    if found is None:
        raise verdicts.Unrooted(
            f"its snapshot {savepoint.snapshot_file!r} is missing, misnamed or not a plain file in logs/"
        )
    verdicts.check_local_root(found, savepoint, root(str(signer)))
    return found


class Signer(Record, frozen=True):
    """The user's signing key, read from a Solana CLI keypair file (64 bytes: seed, public key)."""

    seed: bytes
    public_key: str

    @classmethod
    def load(cls, path: Path) -> Signer:
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
        from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

        try:
            values = json.loads(small_file.read(path, MAX_KEYPAIR_BYTES, follow_links=True)[0])
        except FileNotFoundError:
            raise SigningKeyError(
                f"keypair {path} does not exist; run `precompact init` or set chain.keypair"
            ) from None
        except small_file.Refused as e:
            raise SigningKeyError(
                f"keypair {path} {e.reason}; point chain.keypair (or PRECOMPACT_KEYPAIR) at a Solana CLI keypair file"
            ) from None
        except (OSError, ValueError, RecursionError) as e:
            raise SigningKeyError(f"keypair {path} is unreadable or not JSON ({quoting.inline(str(e))})") from None
        if not (
            isinstance(values, list)
            and len(values) == 64
            and all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 256 for v in values)
        ):
            raise SigningKeyError(f"keypair {path} is not a Solana CLI keypair (a JSON array of 64 bytes)")
        seed, public = bytes(values[:32]), bytes(values[32:])
        derived = Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        if derived != public:
            raise SigningKeyError(f"keypair {path} is not a valid ed25519 keypair (its public key is not its seed's)")
        return cls(seed, b58encode(public))

    def sign(self, savepoint: Savepoint) -> LineSignature:
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        signature = Ed25519PrivateKey.from_private_bytes(self.seed).sign(message(savepoint))
        return LineSignature(self.public_key, signature.hex())

    def sign_summary(self, savepoint: Savepoint, summary: str) -> SummarySignature:
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        sha256 = summary_sha256(summary)
        signature = Ed25519PrivateKey.from_private_bytes(self.seed).sign(summary_message(savepoint, sha256))
        return SummarySignature(self.public_key, sha256, signature.hex())


def not_signed(config: Config, savepoints: list[Savepoint]) -> dict[tuple[str, int], str]:
    """The savepoints git holds (committed) whose index line this machine wrote and the
    configured key has not signed, by (instance, sequence), each with what that means and the
    fix: the worker signs before it commits, so such a line was committed unsigned, and its copy
    on the remote verifies only where this machine's logs/ is."""
    key = configured_key(config)
    held = [s for s in savepoints if s.written_here and s.commit and not signed_by(s, key)]
    if not held:
        return {}
    said = f"not signed by {key or 'your signing key'}: the copy on the git remote verifies only on this machine; {signing_fix(config, key)}"
    return {(s.instance, s.sequence): said for s in held}


def unsigned(savepoints: list[Savepoint], signer: Signer) -> list[Savepoint]:
    """This machine's savepoints (their machine tag checks) that `signer` has not signed yet:
    signing a line another machine wrote would vouch for a logs/ that came with the project."""
    return [s for s in savepoints if s.written_here and not signed_by(s, signer.public_key)]


def unsigned_summaries(savepoints: list[Savepoint], signer: Signer) -> list[tuple[Savepoint, str]]:
    """The compaction summaries this machine recorded (their seal checks) that `signer` has not
    signed yet, each with its savepoint, whose index line a root vouches for: a summary line
    another machine's logs/ holds is never signed as the user's."""
    return [
        (s, s.compact_summary)
        for s in savepoints
        if isinstance(s.compact_summary, str)
        and s.summary_written_here
        and line_vouched(s, signer.public_key)
        and not summary_signed_by(s, s.compact_summary, signer.public_key)
    ]


def carried_over(savepoints: list[Savepoint], old_key: str, up_to: int, signer: Signer) -> list[Savepoint]:
    """The index lines a key rotation hands on to `signer`, the new key: savepoints 1..`up_to`
    (the one the chain carried over) that a root vouches for under `old_key` (this machine's tag,
    or the old key's signature, checked here), not signed by `signer` yet. So lines `restore`
    took under the old key stay vouched for under the new one, and verify on the next machine.
    None past `up_to`: after a recovery the old key may be someone else's."""
    return [
        s
        for s in savepoints
        if s.sequence <= up_to and line_vouched(s, old_key) and not signed_by(s, signer.public_key)
    ]


def carried_over_summaries(
    savepoints: list[Savepoint], old_key: str, up_to: int, signer: Signer
) -> list[tuple[Savepoint, str]]:
    """The compaction summaries a key rotation hands on to `signer` with their savepoints'
    lines (`carried_over`): of savepoints 1..`up_to`, each this machine recorded or `old_key`
    signed for its savepoint, not signed by `signer` yet, so a summary `restore` took under the
    old key still comes back under the new one."""
    return [
        (s, s.compact_summary)
        for s in savepoints
        if s.sequence <= up_to
        and isinstance(s.compact_summary, str)
        and line_vouched(s, old_key)
        and (s.summary_written_here or summary_signed_by(s, s.compact_summary, old_key))
        and not summary_signed_by(s, s.compact_summary, signer.public_key)
    ]


# Remembered: `status --remote` and `restore` check a line's signature where they read it and
# again where `team.rollback` asks which snapshot files your key's lines name (review15a F8).
@functools.lru_cache(maxsize=1 << 13)
def _valid(key: str, signature: str, data: bytes) -> bool:
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    try:
        public = Ed25519PublicKey.from_public_bytes(b58decode(key))
        public.verify(bytes.fromhex(signature), data)
    except (ValueError, InvalidSignature):
        return False
    return True


def b58encode(data: bytes) -> str:
    number = int.from_bytes(data, "big")
    digits = ""
    while number:
        number, digit = divmod(number, 58)
        digits = _BASE58[digit] + digits
    return "1" * (len(data) - len(data.lstrip(b"\0"))) + digits


def b58decode(text: str) -> bytes:
    """The 32 bytes `text` spells in base58; ValueError for anything else."""
    if not text or any(c not in _BASE58 for c in text):
        raise ValueError(f"{text!r} is not base58")
    number = 0
    for c in text:
        number = number * 58 + _BASE58.index(c)
    body = number.to_bytes((number.bit_length() + 7) // 8, "big")
    data = b"\0" * (len(text) - len(text.lstrip("1"))) + body
    if len(data) != 32:
        raise ValueError(f"{text!r} is not a 32-byte public key")
    return data
