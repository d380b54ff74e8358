//! precompact: on-chain proof of Claude Code session savepoints.
//!
//! One account per (authority, instance) holds the latest savepoint: the snapshot's SHA-256,
//! the git commit that stores it, and the authority's ed25519 signature, verified through the
//! Ed25519 precompile. Each savepoint must extend the previous one by sequence and hash.
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

    /// Closes the record and returns its rent to the authority.
    pub fn close(ctx: Context<Close>) -> Result<()> {
        Close::handler(ctx)
    }
}
