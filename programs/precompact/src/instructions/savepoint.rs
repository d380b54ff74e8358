use anchor_lang::prelude::*;

use crate::constants::{ENTRY_TYPE_SAVEPOINT, METADATA_MAX_LEN, SAVEPOINT_SEED};
use crate::ed25519;
use crate::error::PrecompactError;
use crate::signed_message::SignedSavepoint;
use crate::state::{SavepointRecord, SavepointRecorded};

/// Instruction arguments. Everything else the savepoint stores comes from the Ed25519
/// instruction, so the transaction carries those bytes once.
#[derive(AnchorSerialize, AnchorDeserialize, Clone)]
pub struct SavepointArgs {
    pub entry_type: u8,
    /// UTF-8 JSON, at most 256 bytes.
    pub metadata: Vec<u8>,
}

#[derive(Accounts)]
pub struct Savepoint<'info> {
    pub authority: Signer<'info>,
    #[account(
        mut,
        has_one = authority @ PrecompactError::WrongAuthority,
        seeds = [SAVEPOINT_SEED, record.authority.as_ref(), record.instance_id.as_ref()],
        bump = record.bump,
    )]
    pub record: Account<'info, SavepointRecord>,
    /// CHECK: pinned to the instructions sysvar by address; read through its checked loaders.
    #[account(address = solana_sdk_ids::sysvar::instructions::ID @ PrecompactError::NotInstructionsSysvar)]
    pub instructions: UncheckedAccount<'info>,
}

impl Savepoint<'_> {
    pub fn validate(&self, args: &SavepointArgs) -> Result<()> {
        require!(
            args.entry_type == ENTRY_TYPE_SAVEPOINT,
            PrecompactError::UnknownEntryType
        );
        require!(
            args.metadata.len() <= METADATA_MAX_LEN,
            PrecompactError::MetadataTooLong
        );
        require!(
            std::str::from_utf8(&args.metadata).is_ok(),
            PrecompactError::MetadataNotUtf8
        );
        Ok(())
    }

    pub fn handler(ctx: Context<Self>, args: SavepointArgs) -> Result<()> {
        let verified = ed25519::load_preceding(&ctx.accounts.instructions)?;
        let record = &mut ctx.accounts.record;
        require_keys_eq!(
            verified.pubkey,
            record.authority,
            PrecompactError::SignerMismatch
        );
        let signed = SignedSavepoint::parse(&verified.message, ctx.program_id, &record.key())?;
        record.extend(
            &signed,
            verified.signature,
            args.entry_type,
            &args.metadata,
            &Clock::get()?,
        )?;

        emit!(SavepointRecorded {
            authority: record.authority,
            instance_id: record.instance_id,
            sequence: record.sequence,
            snapshot_hash: record.snapshot_hash,
            git_commit: record.git_commit,
            slot: record.slot,
        });
        Ok(())
    }
}
