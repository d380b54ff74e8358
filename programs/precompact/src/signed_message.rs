//! The bytes the authority signs for a savepoint. Binding the program id, the PDA and the
//! sequence makes a signature useless for any other program, account or position in the chain.
use anchor_lang::prelude::*;

use crate::constants::{GIT_COMMIT_LEN, SIGNED_MESSAGE_DOMAIN, SIGNED_MESSAGE_LEN};
use crate::error::PrecompactError;

/// The savepoint fields carried by a signed message.
pub struct SignedSavepoint {
    pub sequence: u64,
    pub timestamp: i64,
    pub instance_id: [u8; 32],
    pub snapshot_hash: [u8; 32],
    pub prev_snapshot_hash: [u8; 32],
    pub git_commit: [u8; GIT_COMMIT_LEN],
}

impl SignedSavepoint {
    /// Parses `domain || program_id || pda || sequence || timestamp || instance_id ||
    /// snapshot_hash || prev_snapshot_hash || git_commit`, requiring it to target this program
    /// and this account.
    pub fn parse(message: &[u8], program_id: &Pubkey, pda: &Pubkey) -> Result<Self> {
        require!(
            message.len() == SIGNED_MESSAGE_LEN && message.starts_with(SIGNED_MESSAGE_DOMAIN),
            PrecompactError::MalformedSignedMessage
        );
        let mut rest = &message[SIGNED_MESSAGE_DOMAIN.len()..];
        let mut take = |len: usize| {
            let (head, tail) = rest.split_at(len);
            rest = tail;
            head
        };
        let target_program = take(32);
        let target_account = take(32);
        require!(
            target_program == program_id.as_ref() && target_account == pda.as_ref(),
            PrecompactError::SignedMessageTargetMismatch
        );
        Ok(Self {
            sequence: u64::from_le_bytes(take(8).try_into().unwrap()),
            timestamp: i64::from_le_bytes(take(8).try_into().unwrap()),
            instance_id: take(32).try_into().unwrap(),
            snapshot_hash: take(32).try_into().unwrap(),
            prev_snapshot_hash: take(32).try_into().unwrap(),
            git_commit: take(GIT_COMMIT_LEN).try_into().unwrap(),
        })
    }
}
