//! Reads the Ed25519-program instruction that precedes `savepoint`. The precompile has already
//! verified the signature when the transaction reaches the program; this module makes sure the
//! bytes it verified are the ones the program is about to trust.
use anchor_lang::prelude::*;
use solana_instructions_sysvar::{load_current_index_checked, load_instruction_at_checked};

use crate::constants::{ED25519_HEADER_LEN, ED25519_OFFSETS_LEN, ED25519_THIS_INSTRUCTION};
use crate::error::PrecompactError;

/// What one Ed25519 precompile instruction verified.
pub struct VerifiedSignature {
    pub pubkey: Pubkey,
    pub signature: [u8; 64],
    pub message: Vec<u8>,
}

/// Loads the instruction right before the current one and returns its verified signature.
pub fn load_preceding(instructions_sysvar: &AccountInfo) -> Result<VerifiedSignature> {
    let current = load_current_index_checked(instructions_sysvar)?;
    let index = current
        .checked_sub(1)
        .ok_or(PrecompactError::MissingEd25519Instruction)?;
    let instruction = load_instruction_at_checked(usize::from(index), instructions_sysvar)?;
    require_keys_eq!(
        instruction.program_id,
        solana_sdk_ids::ed25519_program::ID,
        PrecompactError::MissingEd25519Instruction
    );
    parse(&instruction.data, index)
}

/// Parses Ed25519 instruction data that must carry exactly one signature whose offsets all
/// point inside the instruction itself (`own_index` is its position in the transaction).
pub fn parse(data: &[u8], own_index: u16) -> Result<VerifiedSignature> {
    let count = *data
        .first()
        .ok_or(PrecompactError::MalformedEd25519Instruction)?;
    require!(count == 1, PrecompactError::Ed25519SignatureCount);
    let offsets = data
        .get(ED25519_HEADER_LEN..ED25519_HEADER_LEN + ED25519_OFFSETS_LEN)
        .ok_or(PrecompactError::MalformedEd25519Instruction)?;
    let field = |i: usize| usize::from(u16::from_le_bytes([offsets[2 * i], offsets[2 * i + 1]]));
    let (signature_offset, signature_ix) = (field(0), field(1));
    let (pubkey_offset, pubkey_ix) = (field(2), field(3));
    let (message_offset, message_len, message_ix) = (field(4), field(5), field(6));
    for instruction_index in [signature_ix, pubkey_ix, message_ix] {
        let instruction_index = instruction_index as u16;
        require!(
            instruction_index == ED25519_THIS_INSTRUCTION || instruction_index == own_index,
            PrecompactError::Ed25519ForeignOffsets
        );
    }
    let slice = |offset: usize, len: usize| {
        data.get(offset..offset + len)
            .ok_or(PrecompactError::MalformedEd25519Instruction)
    };
    Ok(VerifiedSignature {
        pubkey: Pubkey::new_from_array(slice(pubkey_offset, 32)?.try_into().unwrap()),
        signature: slice(signature_offset, 64)?.try_into().unwrap(),
        message: slice(message_offset, message_len)?.to_vec(),
    })
}
