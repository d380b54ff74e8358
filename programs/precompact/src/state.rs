use anchor_lang::prelude::*;

use crate::constants::{
    ENTRY_TYPE_RECOVERED, ENTRY_TYPE_ROTATED, ENTRY_TYPE_ROTATED_OUT, GIT_COMMIT_LEN,
    METADATA_MAX_LEN, RECORD_DISCRIMINATOR,
};
use crate::error::PrecompactError;
use crate::signed_message::SignedSavepoint;

/// The metadata key naming the key whose signature a carried-over savepoint is, when that is not
/// the key the record continues from (the lineage moved twice before its next savepoint).
const SIGNED_BY: &str = "signed_by";

/// The latest savepoint of one (authority, instance) pair. Borsh lays the fields out in this
/// order with no padding; `tests/vectors/` pins every offset.
#[account(discriminator = &RECORD_DISCRIMINATOR)]
#[derive(InitSpace)]
pub struct SavepointRecord {
    /// Completes the specification's 32-byte header after the 4-byte discriminator.
    pub reserved: [u8; 28],
    /// 0 until the first savepoint, then `ENTRY_TYPE_SAVEPOINT`; a record that continues another
    /// authority's lineage starts at `ENTRY_TYPE_ROTATED` or `ENTRY_TYPE_RECOVERED`, and a record
    /// whose authority was rotated away is frozen at `ENTRY_TYPE_ROTATED_OUT`.
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

    /// The new `authority`'s record continuing this one's lineage: this record's last savepoint
    /// exactly as it was written (signed by the key that posted it, at that key's record address),
    /// so the next savepoint under the new key extends it. `entry_type` says how it was carried
    /// over; the metadata names this record's authority under `named_as` and, when the savepoint
    /// was not this authority's own (a lineage continued again before its next savepoint), the
    /// key that signed it under `signed_by`.
    pub fn continuation(
        &self,
        authority: Pubkey,
        bump: u8,
        entry_type: u8,
        named_as: &str,
    ) -> Self {
        let mut next = Self::empty(authority, self.instance_id, bump);
        next.entry_type = entry_type;
        next.timestamp = self.timestamp;
        next.snapshot_hash = self.snapshot_hash;
        next.git_commit = self.git_commit;
        next.signature = self.signature;
        next.sequence = self.sequence;
        next.prev_snapshot_hash = self.prev_snapshot_hash;
        next.slot = self.slot;
        next.chain_timestamp = self.chain_timestamp;
        next.set_metadata(
            self.naming(named_as, &self.authority.to_string())
                .as_bytes(),
        );
        next
    }

    /// Whether the lineage has moved to another authority's record.
    pub fn is_frozen(&self) -> bool {
        self.entry_type == ENTRY_TYPE_ROTATED_OUT
    }

    /// A record can be continued under `new_authority` once it holds a savepoint, while it is
    /// not frozen, and only by another key.
    pub fn check_continuable(&self, new_authority: &Pubkey) -> Result<()> {
        require!(!self.is_frozen(), PrecompactError::RecordAlreadyRotated);
        require!(self.sequence > 0, PrecompactError::NothingToContinue);
        require_keys_neq!(
            *new_authority,
            self.authority,
            PrecompactError::RotationToSameAuthority
        );
        Ok(())
    }

    /// Freezes the record at its last savepoint; metadata names where the lineage went (and the
    /// key that signed the savepoint, when it is not this record's authority).
    pub fn freeze(&mut self, successor: &Pubkey) {
        let metadata = self.naming("rotated_to", &successor.to_string());
        self.entry_type = ENTRY_TYPE_ROTATED_OUT;
        self.set_metadata(metadata.as_bytes());
    }

    /// `{"<key>":"<value>"}`, with `"signed_by":"<signer>"` after it when the savepoint this
    /// record states was signed by another key than its authority.
    fn naming(&self, key: &str, value: &str) -> String {
        let signer = self.savepoint_signer();
        if signer == self.authority.to_string() {
            format!(r#"{{"{key}":"{value}"}}"#)
        } else {
            format!(r#"{{"{key}":"{value}","{SIGNED_BY}":"{signer}"}}"#)
        }
    }

    /// The key that signed the savepoint this record states (base58): the authority for one it
    /// posted; for one the program carried over, the `signed_by` it wrote, else the previous
    /// authority it named (a record carried over once).
    pub fn savepoint_signer(&self) -> String {
        let named = |key: &str| self.metadata_value(key);
        match self.entry_type {
            ENTRY_TYPE_ROTATED => named(SIGNED_BY).or_else(|| named("rotated_from")),
            ENTRY_TYPE_RECOVERED => named(SIGNED_BY).or_else(|| named("recovered_from")),
            ENTRY_TYPE_ROTATED_OUT => named(SIGNED_BY),
            _ => None,
        }
        .unwrap_or_else(|| self.authority.to_string())
    }

    /// The string value of `key` in metadata this program wrote (a record it carried over or froze).
    fn metadata_value(&self, key: &str) -> Option<String> {
        let text = std::str::from_utf8(&self.metadata[..self.metadata_len as usize]).ok()?;
        let opening = format!(r#""{key}":""#);
        let start = text.find(&opening)? + opening.len();
        let end = start + text[start..].find('"')?;
        Some(text[start..end].to_string())
    }

    fn set_metadata(&mut self, metadata: &[u8]) {
        self.metadata_len = metadata.len() as u16;
        self.metadata = [0; METADATA_MAX_LEN];
        self.metadata[..metadata.len()].copy_from_slice(metadata);
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
        require!(!self.is_frozen(), PrecompactError::RecordFrozen);
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
        self.set_metadata(metadata);
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

/// Emitted when `rotate_authority` moves a lineage to a new authority's record.
#[event]
pub struct AuthorityRotated {
    pub instance_id: [u8; 32],
    pub old_authority: Pubkey,
    pub new_authority: Pubkey,
    pub old_record: Pubkey,
    pub new_record: Pubkey,
    pub sequence: u64,
    pub snapshot_hash: [u8; 32],
}

/// Emitted when `recover_lineage` continues a lineage without the previous authority's signature.
#[event]
pub struct LineageRecovered {
    pub instance_id: [u8; 32],
    pub old_authority: Pubkey,
    pub new_authority: Pubkey,
    pub old_record: Pubkey,
    pub new_record: Pubkey,
    pub sequence: u64,
    pub snapshot_hash: [u8; 32],
}
