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

/// The only entry type defined so far.
pub const ENTRY_TYPE_SAVEPOINT: u8 = 0x01;

/// Git commits are stored as 40 lowercase hex characters.
pub const GIT_COMMIT_LEN: usize = 40;

/// Upper bound of the UTF-8 JSON metadata stored with a savepoint.
pub const METADATA_MAX_LEN: usize = 256;

/// Ed25519 precompile layout: a count byte, a padding byte, then one 14-byte offsets block per
/// signature. An instruction index of `u16::MAX` means "this instruction".
pub const ED25519_HEADER_LEN: usize = 2;
pub const ED25519_OFFSETS_LEN: usize = 14;
pub const ED25519_THIS_INSTRUCTION: u16 = u16::MAX;
