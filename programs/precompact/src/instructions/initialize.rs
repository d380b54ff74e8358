use anchor_lang::prelude::*;

use crate::constants::SAVEPOINT_SEED;
use crate::state::SavepointRecord;

#[derive(Accounts)]
#[instruction(instance_id: [u8; 32])]
pub struct Initialize<'info> {
    #[account(mut)]
    pub payer: Signer<'info>,
    pub authority: Signer<'info>,
    #[account(
        init,
        payer = payer,
        space = SavepointRecord::SPACE,
        seeds = [SAVEPOINT_SEED, authority.key().as_ref(), instance_id.as_ref()],
        bump,
    )]
    pub record: Account<'info, SavepointRecord>,
    pub system_program: Program<'info, System>,
}

impl Initialize<'_> {
    pub fn handler(ctx: Context<Self>, instance_id: [u8; 32]) -> Result<()> {
        let authority = ctx.accounts.authority.key();
        ctx.accounts
            .record
            .set_inner(SavepointRecord::empty(authority, instance_id, ctx.bumps.record));
        Ok(())
    }
}
