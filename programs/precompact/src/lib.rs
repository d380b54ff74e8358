//! precompact: on-chain proof of Claude Code session savepoints.
//!
//! One account per (authority, instance) holds the latest savepoint: the snapshot's SHA-256,
//! the git commit that stores it, and the authority's ed25519 signature, verified through the
//! Ed25519 precompile. Each savepoint must extend the previous one by sequence and hash. A
//! lineage moves to a new authority's record by rotation (both keys sign) or, when the old key is
//! lost, by recovery (the new key alone, marked as such).
use anchor_lang::prelude::*;

pub mod constants;
pub mod ed25519;
pub mod error;
pub mod instructions;
pub mod signed_message;
pub mod state;

pub use instructions::*;

declare_id!("CQgNWSVqkwgUVHZ1aqdTv8YJnJqPVXHhZxxcCDABBZwa");

#[program]
pub mod precompact {
    use super::*;

    /// Creates the instance's record at `[b"savepoint", authority, instance_id]`, paid by
    /// `payer`, with the header written and no savepoint yet. Lamports someone sent to the
    /// address beforehand are kept; `payer` tops them up to rent exemption.
    pub fn initialize(ctx: Context<Initialize>, instance_id: [u8; 32]) -> Result<()> {
        Initialize::handler(ctx, instance_id)
    }

    /// Records the next savepoint. The preceding instruction must be an Ed25519-program
    /// instruction carrying the authority's signature over the signed message, which supplies
    /// the sequence, timestamps, hashes and commit.
    #[access_control(ctx.accounts.validate(&args))]
    pub fn savepoint(ctx: Context<Savepoint>, args: SavepointArgs) -> Result<()> {
        Savepoint::handler(ctx, args)
    }

    /// Closes the record and returns its rent to the authority. A frozen record cannot be closed.
    pub fn close(ctx: Context<Close>) -> Result<()> {
        Close::handler(ctx)
    }

    /// Continues the lineage under `new_authority`, with the current authority's consent (both
    /// sign): creates the new authority's record for the same instance holding this record's
    /// last savepoint (`ENTRY_TYPE_ROTATED`, metadata naming the old authority), so the next
    /// savepoint under the new key extends it, and freezes this record (`ENTRY_TYPE_ROTATED_OUT`).
    pub fn rotate_authority(ctx: Context<RotateAuthority>) -> Result<()> {
        RotateAuthority::handler(ctx)
    }

    /// Continues a lineage whose authority's key is lost: the new authority alone creates its
    /// record for `instance_id` holding `previous`'s last savepoint, marked
    /// `ENTRY_TYPE_RECOVERED` (not signed by the old key) with metadata naming the old authority.
    /// `previous` is left as it is: without its key nothing may change it.
    pub fn recover_lineage(ctx: Context<RecoverLineage>, instance_id: [u8; 32]) -> Result<()> {
        RecoverLineage::handler(ctx, instance_id)
    }
}
