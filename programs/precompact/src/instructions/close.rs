use anchor_lang::prelude::*;

use crate::constants::SAVEPOINT_SEED;
use crate::error::PrecompactError;
use crate::state::SavepointRecord;

#[derive(Accounts)]
pub struct Close<'info> {
    /// Receives the record's lamports.
    #[account(mut)]
    pub authority: Signer<'info>,
    #[account(
        mut,
        close = authority,
        has_one = authority @ PrecompactError::WrongAuthority,
        // A frozen record stays: closing it would let the old key initialize the address again.
        constraint = !record.is_frozen() @ PrecompactError::RecordFrozen,
        seeds = [SAVEPOINT_SEED, record.authority.as_ref(), record.instance_id.as_ref()],
        bump = record.bump,
    )]
    pub record: Account<'info, SavepointRecord>,
}

impl Close<'_> {
    pub fn handler(_ctx: Context<Self>) -> Result<()> {
        Ok(())
    }
}
