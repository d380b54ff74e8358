//! Blocks: every slot from the chain's first on is one, holding the transactions committed in it.
use serde_json::{json, Value};
use solana_rpc_client_types::request::MAX_GET_CONFIRMED_BLOCKS_RANGE;
use solana_rpc_client_types::response::RpcBlockCommitment;

use super::config::{
    at_least_confirmed, level, BlockConfig, ContextConfig, EncodingOrConfig, SlotOrConfig,
    TransactionDetails,
};
use super::error::{RpcError, RpcResult};
use super::response::{encode_transaction, meta_value};
use super::transactions::checked_version;
use crate::chain::Chain;

pub async fn get_block(
    chain: &Chain,
    (slot, config): (u64, Option<EncodingOrConfig<BlockConfig>>),
) -> RpcResult {
    let config = EncodingOrConfig::config(config);
    let level = at_least_confirmed(config.commitment.unwrap_or_default())?;
    if slot > chain.level_slot(level) {
        return Err(RpcError::BlockNotAvailable(slot));
    }
    block_value(chain, slot, &config).await
}

/// The block at `slot` as `config` asks to see it.
pub async fn block_value(chain: &Chain, slot: u64, config: &BlockConfig) -> RpcResult {
    let block = chain.block(slot).ok_or(RpcError::BlockNotAvailable(slot))?;
    let mut value = json!({
        "blockHeight": block.block_height,
        "blockTime": block.block_time,
        "blockhash": block.blockhash.to_string(),
        "parentSlot": block.parent_slot,
        "previousBlockhash": block.previous_blockhash.to_string(),
    });
    let encoding = config.encoding.unwrap_or_default();
    match config.transaction_details.unwrap_or_default() {
        TransactionDetails::Full => {
            let mut transactions = Vec::with_capacity(block.transactions.len());
            for (_, committed) in &block.transactions {
                let version = checked_version(
                    &committed.transaction,
                    config.max_supported_transaction_version,
                )?;
                let mut entry = json!({
                    "transaction": encode_transaction(&committed.transaction, encoding),
                    "meta": meta_value(committed),
                });
                if let Some(version) = version {
                    entry["version"] = version;
                }
                transactions.push(entry);
            }
            value["transactions"] = Value::Array(transactions);
        }
        TransactionDetails::Signatures => {
            value["signatures"] = block
                .transactions
                .iter()
                .map(|(signature, _)| signature.to_string())
                .collect();
        }
        TransactionDetails::None => {}
    }
    if config.rewards.unwrap_or(true) {
        value["rewards"] = json!([]);
    }
    Ok(value)
}

pub async fn get_block_time(chain: &Chain, (slot,): (u64,)) -> RpcResult {
    chain
        .block_time(slot)
        .map(|time| json!(time))
        .ok_or(RpcError::BlockNotAvailable(slot))
}

/// The newest block `config`'s level (confirmed or finalized) lists.
fn newest_block(chain: &Chain, config: Option<ContextConfig>) -> Result<u64, RpcError> {
    Ok(chain.level_slot(at_least_confirmed(level(config))?))
}

/// Blocks from `start` to `end` inclusive (default: the newest at the level), at most Agave's
/// range.
pub async fn get_blocks(
    chain: &Chain,
    (start, end, config): (
        u64,
        Option<SlotOrConfig<ContextConfig>>,
        Option<ContextConfig>,
    ),
) -> RpcResult {
    let (end, config) = SlotOrConfig::unzip(end, config);
    let latest = newest_block(chain, config)?;
    let end = end.unwrap_or(latest).min(latest);
    if end < start {
        return Ok(json!([]));
    }
    if end - start > MAX_GET_CONFIRMED_BLOCKS_RANGE {
        return Err(RpcError::InvalidParams(format!(
            "Slot range too large; max {MAX_GET_CONFIRMED_BLOCKS_RANGE}"
        )));
    }
    Ok(json!(chain.slots_in(start..=end)))
}

pub async fn get_blocks_with_limit(
    chain: &Chain,
    (start, limit, config): (u64, u64, Option<ContextConfig>),
) -> RpcResult {
    let latest = newest_block(chain, config)?;
    if limit > MAX_GET_CONFIRMED_BLOCKS_RANGE {
        return Err(RpcError::InvalidParams(format!(
            "Limit too large; max {MAX_GET_CONFIRMED_BLOCKS_RANGE}"
        )));
    }
    let Some(last) = limit.checked_sub(1) else {
        return Ok(json!([]));
    };
    Ok(json!(
        chain.slots_in(start..=start.saturating_add(last).min(latest))
    ))
}

pub async fn get_first_available_block(chain: &Chain, (): ()) -> RpcResult {
    Ok(json!(chain.first_slot()))
}

/// The stake voting on a block, by how many votes are stacked on it (index 0: one). Only a
/// confirmed block not yet rooted has any: the working slot has no vote yet, and Agave keeps no
/// commitment for a rooted block.
pub async fn get_block_commitment(chain: &Chain, (slot,): (u64,)) -> RpcResult {
    let slots = chain.commitment_slots();
    let stake = chain.validator().activated_stake;
    let commitment = match slots.status(slot).confirmations {
        Some(votes) if votes > 0 => {
            let mut by_votes = [0u64; 32];
            by_votes[(votes - 1) as usize] = stake;
            Some(by_votes)
        }
        _ => None,
    };
    let commitment: RpcBlockCommitment<[u64; 32]> = RpcBlockCommitment {
        commitment,
        total_stake: stake,
    };
    Ok(json!(commitment))
}
