use anchor_lang::prelude::*;
use anchor_lang::system_program::{self, Allocate, Assign, Transfer};

use crate::constants::SAVEPOINT_SEED;
use crate::error::PrecompactError;
use crate::state::SavepointRecord;

#[derive(Accounts)]
#[instruction(instance_id: [u8; 32])]
pub struct Initialize<'info> {
    #[account(mut)]
    pub payer: Signer<'info>,
    pub authority: Signer<'info>,
    /// CHECK: the PDA by its seeds; the handler creates it and refuses an occupied address.
    #[account(
        mut,
        seeds = [SAVEPOINT_SEED, authority.key().as_ref(), instance_id.as_ref()],
        bump,
    )]
    pub record: UncheckedAccount<'info>,
    pub system_program: Program<'info, System>,
}

impl Initialize<'_> {
    pub fn handler(ctx: Context<Self>, instance_id: [u8; 32]) -> Result<()> {
        let accounts = ctx.accounts;
        let authority = accounts.authority.key();
        let bump = ctx.bumps.record;
        create_record(
            &accounts.payer,
            &accounts.record,
            &accounts.system_program,
            &[
                SAVEPOINT_SEED,
                authority.as_ref(),
                instance_id.as_ref(),
                &[bump],
            ],
        )?;
        write_record(
            &accounts.record,
            &SavepointRecord::empty(authority, instance_id, bump),
        )
    }
}

/// Creates the record account at the PDA `seeds` (bump last) with the classic transfer,
/// allocate, assign sequence rather than Anchor's `init`: anyone can send lamports to the address
/// beforehand, and `init` then needs the system program's CreateAccountAllowPrefund, which
/// runtimes before it refuse, so a stranger's transfer would block the instance for good.
pub(crate) fn create_record<'info>(
    payer: &Signer<'info>,
    record: &UncheckedAccount<'info>,
    system_program: &Program<'info, System>,
    seeds: &[&[u8]],
) -> Result<()> {
    let record = record.to_account_info();
    require_keys_neq!(
        *record.owner,
        crate::ID,
        PrecompactError::RecordAlreadyInitialized
    );
    require!(
        *record.owner == system_program::ID && record.data_is_empty(),
        PrecompactError::RecordAddressInUse
    );
    let system = system_program.key();
    let shortfall = Rent::get()?
        .minimum_balance(SavepointRecord::SPACE)
        .saturating_sub(record.lamports());
    if shortfall > 0 {
        let transfer = Transfer {
            from: payer.to_account_info(),
            to: record.clone(),
        };
        system_program::transfer(CpiContext::new(system, transfer), shortfall)?;
    }
    let allocate = Allocate {
        account_to_allocate: record.clone(),
    };
    system_program::allocate(
        CpiContext::new_with_signer(system, allocate, &[seeds]),
        SavepointRecord::SPACE as u64,
    )?;
    let assign = Assign {
        account_to_assign: record.clone(),
    };
    system_program::assign(
        CpiContext::new_with_signer(system, assign, &[seeds]),
        &crate::ID,
    )?;
    Ok(())
}

/// Writes `value` into the record account `create_record` made.
pub(crate) fn write_record(record: &UncheckedAccount, value: &SavepointRecord) -> Result<()> {
    let mut data = record.try_borrow_mut_data()?;
    value.try_serialize(&mut &mut data[..])?;
    Ok(())
}
