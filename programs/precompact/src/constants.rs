//! Fixed values shared by every instruction. Clients mirror them; the shared test vectors
//! (`tests/vectors/`) pin them so the two sides cannot drift.
use anchor_lang::prelude::*;

/// First PDA seed: `[SAVEPOINT_SEED, authority, instance_id]`.
#[constant]
pub const SAVEPOINT_SEED: &[u8] = b"savepoint";

/// Custom account discriminator: the specification's magic `EF BB BF` and version 1, so the
/// 32-byte header (discriminator + 28 reserved zero bytes) is the first thing in the account.
pub const RECORD_DISCRIMINATOR: [u8; 4] = [0xEF, 0xBB, 0xBF, 0x01];

/// Domain separator that opens every signed savepoint message.
#[constant]
pub const SIGNED_MESSAGE_DOMAIN: &[u8] = b"precompact/savepoint/v1";

/// Length of the signed message: domain, program id, PDA, sequence, timestamp, instance id,
/// snapshot hash, previous snapshot hash, git commit.
pub const SIGNED_MESSAGE_LEN: usize =
    SIGNED_MESSAGE_DOMAIN.len() + 32 + 32 + 8 + 8 + 32 + 32 + 32 + GIT_COMMIT_LEN;

/// A savepoint the record's authority signed and posted.
#[constant]
pub const ENTRY_TYPE_SAVEPOINT: u8 = 0x01;

/// A new authority's record whose savepoint was carried over from the previous authority's record
/// by `rotate_authority`, which both keys signed. Metadata names the previous authority.
#[constant]
pub const ENTRY_TYPE_ROTATED: u8 = 0x02;

/// A new authority's record whose savepoint was carried over by `recover_lineage`, signed by the
/// new authority alone: the previous key did not consent. Metadata names the previous authority.
#[constant]
pub const ENTRY_TYPE_RECOVERED: u8 = 0x03;

/// A record whose authority was rotated: frozen at its last savepoint, which the record still
/// states as written. Metadata names the authority the lineage continues under.
#[constant]
pub const ENTRY_TYPE_ROTATED_OUT: u8 = 0x04;

/// Git commits are stored as 40 lowercase hex characters.
pub const GIT_COMMIT_LEN: usize = 40;

/// Upper bound of the UTF-8 JSON metadata stored with a savepoint.
pub const METADATA_MAX_LEN: usize = 256;

/// Ed25519 precompile layout: a count byte, a padding byte, then one 14-byte offsets block per
/// signature. An instruction index of `u16::MAX` means "this instruction".
pub const ED25519_HEADER_LEN: usize = 2;
pub const ED25519_OFFSETS_LEN: usize = 14;
pub const ED25519_THIS_INSTRUCTION: u16 = u16::MAX;
