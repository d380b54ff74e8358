"""What leaves the machine is encrypted: age (pyrage) to the configured recipients, after zlib.

A file bound for the git remote is compressed (zlib level 6, git's own: a snapshot of code
shrinks to about a quarter; it runs in the worker, on what is new, never on the hook's path) and then encrypted with age to every recipient (age X25519 `age1…` keys, or
`ssh-ed25519` public keys), so anyone holding one of their identities can read it and no one
else can. The hash chain and the on-chain record still commit to the plaintext; the
ciphertext is random (age draws a fresh file key each time), so a file is encrypted once per
recipient set and its blob reused (gitstore's cache).

Files under `logs/precompact-chunks/` are named by their plaintext SHA-256; on the remote they
are named by HMAC-SHA256 under a random per-project naming key instead, so a reader of the
remote cannot confirm a guessed content by hashing it. The naming key travels encrypted
beside them.

Imported only by the worker and commands, never on the hook's path.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import time
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pyrage  # type: ignore[import-untyped]  # ships no type information

from precompact.boundary import private_file, quoting, small_file
from precompact.errors import PrecompactError

SUFFIX = ".age"
COMPRESSION_LEVEL = 6
# A hostile ciphertext (anyone with a recipient's public key can make one) could hold a zlib
# bomb; no snapshot comes near this.
MAX_PLAINTEXT_BYTES = 4 << 30
DECOMPRESS_STEP = 64 << 20
NAMING_KEY_BYTES = 32
AGE_IDENTITY = re.compile(r"AGE-SECRET-KEY-1[02-9AC-HJ-NP-Z]{58}")
SSH_PRIVATE_KEY = b"-----BEGIN OPENSSH PRIVATE KEY-----"
# An identity file holds a few lines (an SSH key: about 400 bytes); past this it is not one.
MAX_IDENTITY_BYTES = 1 << 20


class CryptoError(PrecompactError):
    """A key or ciphertext could not be used; the message says which and what to do."""


class NotForUs(CryptoError):
    """The ciphertext is for recipients none of these identities is: its content cannot be
    checked here (which is no evidence of tampering)."""


class Undecryptable(CryptoError):
    """The ciphertext does not decrypt or authenticate: truncated, altered, or not age."""


class IdentityExposed(CryptoError):
    """The identity file is not a regular file of this user's, mode 0600: the message names the
    chmod that fixes it."""


if TYPE_CHECKING:
    from precompact.config.settings import Config


@dataclass(frozen=True)
class Keys:
    """The recipients new files are encrypted to (none: clear text, as before encryption
    existed) and the identity file that opens them on this machine."""

    recipients: tuple[str, ...] = ()
    identity: Path | None = None

    @property
    def encrypting(self) -> bool:
        return bool(self.recipients)

    @property
    def fingerprint(self) -> str:
        """Names the recipient set: a ciphertext made for one set is reused only for it."""
        return hashlib.sha256("\n".join(sorted(self.recipients)).encode()).hexdigest()[:16]

    @classmethod
    def of(cls, config: Config) -> Keys:
        """The keys a project's configuration names."""
        return cls(config.recipients, config.identity)


CLEAR = Keys()


def _recipient(text: str):
    try:
        if text.startswith("ssh-"):
            return pyrage.ssh.Recipient.from_str(text)
        return pyrage.x25519.Recipient.from_str(text)
    except pyrage.RecipientError as e:
        raise CryptoError(f"encryption.recipients entry {text[:24]!r}… is not a usable public key ({e})") from None


def seal(plaintext: bytes, keys: Keys) -> bytes:
    """zlib, then age to every recipient."""
    recipients = [_recipient(r) for r in keys.recipients]
    try:
        return pyrage.encrypt(zlib.compress(plaintext, COMPRESSION_LEVEL), recipients)
    except pyrage.EncryptError as e:
        raise CryptoError(f"encryption failed: {e}") from None


# What age adds around the compressed bytes: its header (a line of its version, a stanza of a
# few hundred bytes at most per recipient, its MAC), a 16-byte nonce and a 16-byte tag for each
# 64 KiB chunk of payload. The header is allowed far more than any configured recipients need.
AGE_HEADER_ALLOWANCE = 64 << 10
AGE_NONCE_BYTES = 16
AGE_CHUNK_BYTES = 64 << 10
AGE_TAG_BYTES = 16


def sealed_size_bound(plaintext_size: int) -> int:
    """The most bytes `seal` makes of `plaintext_size` bytes, to any recipients: zlib's worst
    case (its compressBound: stored blocks of incompressible input) in age's chunks. A ciphertext
    larger than this holds other content, with nothing of it read."""
    compressed = plaintext_size + (plaintext_size >> 12) + (plaintext_size >> 14) + (plaintext_size >> 25) + 13
    chunks = compressed // AGE_CHUNK_BYTES + 1
    return AGE_HEADER_ALLOWANCE + AGE_NONCE_BYTES + compressed + chunks * AGE_TAG_BYTES


def open_sealed(ciphertext: bytes, identities: list) -> bytes:
    """The plaintext of `seal`; NotForUs or Undecryptable when it cannot be had."""
    try:
        compressed = pyrage.decrypt(ciphertext, identities)
    except pyrage.DecryptError as e:
        if "No matching keys" in str(e):
            raise NotForUs("it is encrypted to other recipients than this identity") from None
        raise Undecryptable(f"it does not decrypt or authenticate ({e}): truncated, altered or not age") from None
    inflater = zlib.decompressobj()
    parts, size = [], 0
    try:
        data = compressed
        while data:
            part = inflater.decompress(data, DECOMPRESS_STEP)
            size += len(part)
            if size > MAX_PLAINTEXT_BYTES:
                raise Undecryptable(f"it inflates past {MAX_PLAINTEXT_BYTES >> 30} GiB: not a snapshot")
            parts.append(part)
            data = inflater.unconsumed_tail
        if not inflater.eof or inflater.unused_data:
            raise Undecryptable("its decrypted content is not one whole zlib stream")
    except zlib.error as e:
        raise Undecryptable(f"its decrypted content is not zlib ({quoting.inline(str(e))})") from None
    return b"".join(parts)


# --- identities -------------------------------------------------------------------------------


def generate_identity(path: Path) -> str:
    """Writes a new age identity to `path` (mode 0600, never over an existing file); returns
    its public key."""
    identity = pyrage.x25519.Identity.generate()
    public = str(identity.to_public())
    private_file.create(path, f"# precompact age identity; public key: {public}\n{identity}\n".encode())
    return public


def read_identity_file(path: Path) -> bytes:
    """The identity file's bytes, if only this user can read it (as ssh demands of a key)."""
    try:
        data, info = small_file.read(path, MAX_IDENTITY_BYTES, follow_links=False)
    except FileNotFoundError:
        raise CryptoError(
            f"no age identity at {path}: copy yours there with `precompact key import FILE` (or set encryption.identity)"
        ) from None
    except small_file.Refused as e:
        raise CryptoError(
            f"the age identity {path} {e.reason}; it must be a regular file: point encryption.identity (or PRECOMPACT_IDENTITY) at the file itself"
        ) from None
    except OSError as e:
        raise CryptoError(
            f"cannot read the age identity {path}: {quoting.os_error(e)}; it must be a regular file"
        ) from None
    if info.st_uid != os.geteuid() or info.st_mode & 0o077:
        raise IdentityExposed(f"the age identity {path} must be a regular file of yours, mode 0600: `chmod 600 {path}`")
    return data


def parse_identities(data: bytes, where: str) -> list:
    """The identities in an age identity file (AGE-SECRET-KEY lines) or an OpenSSH ed25519
    private key."""
    if data.lstrip().startswith(SSH_PRIVATE_KEY):
        try:
            return [pyrage.ssh.Identity.from_buffer(data)]
        except pyrage.IdentityError as e:
            raise CryptoError(f"{where} is not a usable unencrypted OpenSSH ed25519 key ({e})") from None
    found = []
    for line in data.decode("utf-8", "replace").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if not AGE_IDENTITY.fullmatch(line):
            raise CryptoError(f"{where} holds a line that is not an age identity (AGE-SECRET-KEY-1…)")
        found.append(pyrage.x25519.Identity.from_str(line))
    if not found:
        raise CryptoError(f"{where} holds no age identity")
    return found


def load_identities(keys: Keys) -> list:
    if keys.identity is None:
        raise CryptoError("no age identity is configured; set encryption.identity")
    return parse_identities(read_identity_file(keys.identity), str(keys.identity))


def public_keys(data: bytes, where: str) -> list[str]:
    """The recipients the identities in `data` open (SSH keys have no public half here: empty)."""
    return [str(i.to_public()) for i in parse_identities(data, where) if isinstance(i, pyrage.x25519.Identity)]


PROBE = b"precompact: which recipients does this identity open?"


def opened_recipients(identities: list, recipients: tuple[str, ...]) -> list[str]:
    """Those of `recipients` that `identities` open: a probe sealed to each recipient alone is
    decrypted with them, so an SSH key (no public half to compare here) is judged as an age key
    is, by what Layer 2's ciphertexts need."""
    opened = []
    for text in recipients:
        try:
            pyrage.decrypt(pyrage.encrypt(PROBE, [_recipient(text)]), identities)
        except pyrage.DecryptError:
            continue
        except pyrage.EncryptError as e:
            raise CryptoError(f"encryption.recipients entry {text[:24]!r}… cannot be encrypted to ({e})") from None
        opened.append(text)
    return opened


# --- chunk names ------------------------------------------------------------------------------


def new_naming_key() -> bytes:
    return os.urandom(NAMING_KEY_BYTES)


def keyed_name(naming_key: bytes, name: str) -> str:
    """A chunk's name on the remote: HMAC-SHA256 of its plaintext-hash name."""
    return hmac.new(naming_key, name.encode(), hashlib.sha256).hexdigest()


def ensure_identity(path: Path) -> tuple[list[str], bool]:
    """The public keys of the identity at `path`, creating one there if there is none; and
    whether it was created."""
    if not os.path.lexists(path):
        try:
            return [generate_identity(path)], True
        except FileExistsError:
            pass  # made at this moment by another precompact (two inits sharing a folder): that one
    return public_keys(read_identity_file(path), str(path)), False


def import_identity(
    data: bytes, source: str, destination: Path, in_use: bool
) -> tuple[list[str], list[str], Path | None]:
    """Writes the identity `data` (read from `source`) to `destination`, mode 0600. Another
    identity there is replaced only when nothing can be lost: the imported file holds every key
    of it, or no savepoint here is encrypted to it (`in_use` false; it is then kept beside, as
    `<name>.replaced-<UTC time>`). Returns the imported public keys, those of the identity it
    replaced, and where that one was kept (None: nowhere, the imported file holds it)."""
    own = public_keys(data, source)
    if not os.path.lexists(destination):
        private_file.create(destination, data)
        return own, [], None
    existing = read_identity_file(destination)
    if existing == data:
        return own, [], None
    replaced = public_keys(existing, str(destination))
    if _secret_lines(existing) and _secret_lines(existing) <= _secret_lines(data):
        private_file.replace(destination, data)
        return own, replaced, None
    if in_use:
        raise CryptoError(
            f"{destination} holds another identity ({', '.join(replaced) or 'an SSH key'}) that savepoints here are encrypted to; to keep reading them, add its AGE-SECRET-KEY line to the file you import (`cat {destination} >> FILE`), then import that"
        )
    aside = destination.with_name(f"{destination.name}.replaced-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}")
    os.rename(destination, aside)
    private_file.create(destination, data)
    return own, replaced, aside


def _secret_lines(data: bytes) -> set[bytes]:
    return {line.strip() for line in data.splitlines() if line.strip().startswith(b"AGE-SECRET-KEY-")}
