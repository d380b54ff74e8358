use anchor_lang::prelude::*;

use crate::constants::{ENTRY_TYPE_ROTATED, SAVEPOINT_SEED};
use crate::error::PrecompactError;
use crate::instructions::initialize::{create_record, write_record};
use crate::state::{AuthorityRotated, SavepointRecord};

#[derive(Accounts)]
pub struct RotateAuthority<'info> {
    /// The record's current authority: its signature is the old key's consent.
    pub authority: Signer<'info>,
    #[account(
        mut,
        has_one = authority @ PrecompactError::WrongAuthority,
        seeds = [SAVEPOINT_SEED, record.authority.as_ref(), record.instance_id.as_ref()],
        bump = record.bump,
    )]
    pub record: Account<'info, SavepointRecord>,
    /// Signs to prove the new key is held by whoever rotates to it.
    pub new_authority: Signer<'info>,
    /// CHECK: the new authority's PDA for the same instance; the handler creates it and refuses
    /// an occupied address.
    #[account(
        mut,
        seeds = [SAVEPOINT_SEED, new_authority.key().as_ref(), record.instance_id.as_ref()],
        bump,
    )]
    pub new_record: UncheckedAccount<'info>,
    #[account(mut)]
    pub payer: Signer<'info>,
    pub system_program: Program<'info, System>,
}

impl RotateAuthority<'_> {
    pub fn handler(ctx: Context<Self>) -> Result<()> {
        let accounts = ctx.accounts;
        let new_authority = accounts.new_authority.key();
        accounts.record.check_continuable(&new_authority)?;
        let instance_id = accounts.record.instance_id;
        let bump = ctx.bumps.new_record;
        create_record(
            &accounts.payer,
            &accounts.new_record,
            &accounts.system_program,
            &[
                SAVEPOINT_SEED,
                new_authority.as_ref(),
                instance_id.as_ref(),
                &[bump],
            ],
        )?;
        let old = &mut accounts.record;
        let next = old.continuation(new_authority, bump, ENTRY_TYPE_ROTATED, "rotated_from");
        write_record(&accounts.new_record, &next)?;
        old.freeze(&new_authority);

        emit!(AuthorityRotated {
            instance_id,
            old_authority: old.authority,
            new_authority,
            old_record: old.key(),
            new_record: accounts.new_record.key(),
            sequence: old.sequence,
            snapshot_hash: old.snapshot_hash,
        });
        Ok(())
    }
}
