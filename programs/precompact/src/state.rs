use anchor_lang::prelude::*;

use crate::constants::{GIT_COMMIT_LEN, METADATA_MAX_LEN, RECORD_DISCRIMINATOR};
use crate::error::PrecompactError;
use crate::signed_message::SignedSavepoint;

/// The latest savepoint of one (authority, instance) pair. Borsh lays the fields out in this
/// order with no padding; `tests/vectors/` pins every offset.
#[account(discriminator = &RECORD_DISCRIMINATOR)]
#[derive(InitSpace)]
pub struct SavepointRecord {
    /// Completes the specification's 32-byte header after the 4-byte discriminator.
    pub reserved: [u8; 28],
    /// 0 until the first savepoint, then `ENTRY_TYPE_SAVEPOINT`.
    pub entry_type: u8,
    /// Client-side unix seconds of the snapshot.
    pub timestamp: i64,
    /// SHA-256 of the UTF-8 instance name.
    pub instance_id: [u8; 32],
    /// SHA-256 of the snapshot file's bytes.
    pub snapshot_hash: [u8; 32],
    /// Lowercase hex of the git commit that holds the snapshot.
    pub git_commit: [u8; GIT_COMMIT_LEN],
    /// Authority's ed25519 signature over the signed message.
    pub signature: [u8; 64],
    pub authority: Pubkey,
    /// 1 for the first savepoint, +1 for each one after.
    pub sequence: u64,
    /// `snapshot_hash` of the savepoint before this one (zero for the first).
    pub prev_snapshot_hash: [u8; 32],
    /// Slot at which the program wrote the savepoint.
    pub slot: u64,
    /// `Clock::unix_timestamp` when the program wrote the savepoint.
    pub chain_timestamp: i64,
    pub bump: u8,
    pub metadata_len: u16,
    /// UTF-8 JSON, zero padded to the fixed width.
    pub metadata: [u8; METADATA_MAX_LEN],
}

impl SavepointRecord {
    /// Account size including the 4-byte discriminator.
    pub const SPACE: usize = RECORD_DISCRIMINATOR.len() + Self::INIT_SPACE;

    /// A record with no savepoint yet.
    pub fn empty(authority: Pubkey, instance_id: [u8; 32], bump: u8) -> Self {
        Self {
            reserved: [0; 28],
            entry_type: 0,
            timestamp: 0,
            instance_id,
            snapshot_hash: [0; 32],
            git_commit: [0; GIT_COMMIT_LEN],
            signature: [0; 64],
            authority,
            sequence: 0,
            prev_snapshot_hash: [0; 32],
            slot: 0,
            chain_timestamp: 0,
            bump,
            metadata_len: 0,
            metadata: [0; METADATA_MAX_LEN],
        }
    }

    /// Records `signed` as the next savepoint, with the authority's `signature` over it and the
    /// time the program writes it, once it extends the stored one.
    pub fn extend(
        &mut self,
        signed: &SignedSavepoint,
        signature: [u8; 64],
        entry_type: u8,
        metadata: &[u8],
        clock: &Clock,
    ) -> Result<()> {
        self.check_successor(signed)?;
        self.entry_type = entry_type;
        self.timestamp = signed.timestamp;
        self.snapshot_hash = signed.snapshot_hash;
        self.git_commit = signed.git_commit;
        self.signature = signature;
        self.sequence = signed.sequence;
        self.prev_snapshot_hash = signed.prev_snapshot_hash;
        self.slot = clock.slot;
        self.chain_timestamp = clock.unix_timestamp;
        self.metadata_len = metadata.len() as u16;
        self.metadata = [0; METADATA_MAX_LEN];
        self.metadata[..metadata.len()].copy_from_slice(metadata);
        Ok(())
    }

    /// The signed savepoint must extend the stored one: same instance, next sequence, linked by
    /// hash, not earlier in time, and naming a well-formed commit.
    fn check_successor(&self, signed: &SignedSavepoint) -> Result<()> {
        require!(
            signed.instance_id == self.instance_id,
            PrecompactError::InstanceMismatch
        );
        require!(
            Some(signed.sequence) == self.sequence.checked_add(1),
            PrecompactError::SequenceMismatch
        );
        require!(
            signed.prev_snapshot_hash == self.snapshot_hash,
            PrecompactError::PrevHashMismatch
        );
        require!(
            signed.timestamp >= self.timestamp,
            PrecompactError::TimestampRegression
        );
        require!(
            signed
                .git_commit
                .iter()
                .all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f')),
            PrecompactError::InvalidGitCommit
        );
        Ok(())
    }
}

/// Emitted once per accepted savepoint, for indexers.
#[event]
pub struct SavepointRecorded {
    pub authority: Pubkey,
    pub instance_id: [u8; 32],
    pub sequence: u64,
    pub snapshot_hash: [u8; 32],
    pub git_commit: [u8; GIT_COMMIT_LEN],
    pub slot: u64,
}
