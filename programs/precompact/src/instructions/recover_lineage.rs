use anchor_lang::prelude::*;

use crate::constants::{ENTRY_TYPE_RECOVERED, SAVEPOINT_SEED};
use crate::error::PrecompactError;
use crate::instructions::initialize::{create_record, write_record};
use crate::state::{LineageRecovered, SavepointRecord};

#[derive(Accounts)]
#[instruction(instance_id: [u8; 32])]
pub struct RecoverLineage<'info> {
    /// The new authority, alone: the previous key is not asked.
    pub authority: Signer<'info>,
    /// CHECK: the new authority's PDA for the instance; the handler creates it and refuses an
    /// occupied address.
    #[account(
        mut,
        seeds = [SAVEPOINT_SEED, authority.key().as_ref(), instance_id.as_ref()],
        bump,
    )]
    pub record: UncheckedAccount<'info>,
    /// CHECK: the record to continue; the handler reads it and checks it is this program's
    /// record of the same instance, at its own address, holding a savepoint.
    pub previous: UncheckedAccount<'info>,
    #[account(mut)]
    pub payer: Signer<'info>,
    pub system_program: Program<'info, System>,
}

impl RecoverLineage<'_> {
    pub fn handler(ctx: Context<Self>, instance_id: [u8; 32]) -> Result<()> {
        let accounts = ctx.accounts;
        let authority = accounts.authority.key();
        let previous = read_previous(&accounts.previous)?;
        require!(
            previous.instance_id == instance_id,
            PrecompactError::ContinuedInstanceMismatch
        );
        previous.check_continuable(&authority)?;
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
        let next = previous.continuation(authority, bump, ENTRY_TYPE_RECOVERED, "recovered_from");
        write_record(&accounts.record, &next)?;

        emit!(LineageRecovered {
            instance_id,
            old_authority: previous.authority,
            new_authority: authority,
            old_record: accounts.previous.key(),
            new_record: accounts.record.key(),
            sequence: previous.sequence,
            snapshot_hash: previous.snapshot_hash,
        });
        Ok(())
    }
}

/// The record `account` holds, once it is one of this program's records at its own address.
fn read_previous(account: &UncheckedAccount) -> Result<SavepointRecord> {
    require!(
        !account.data_is_empty(),
        PrecompactError::ContinuedRecordUninitialized
    );
    require_keys_eq!(
        *account.owner,
        crate::ID,
        PrecompactError::ContinuedRecordForeign
    );
    let data = account.try_borrow_data()?;
    let record = SavepointRecord::try_deserialize(&mut &data[..])
        .map_err(|_| error!(PrecompactError::ContinuedRecordForeign))?;
    let address = Pubkey::create_program_address(
        &[
            SAVEPOINT_SEED,
            record.authority.as_ref(),
            record.instance_id.as_ref(),
            &[record.bump],
        ],
        &crate::ID,
    );
    require!(
        address.ok() == Some(account.key()),
        PrecompactError::ContinuedRecordForeign
    );
    Ok(record)
}
