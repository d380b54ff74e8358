//! The node and its clock: health, version, slots, epochs and blockhashes.
use serde_json::{json, Value};
use solana_hash::Hash;

use super::config::{level, ContextConfig};
use super::error::{RpcError, RpcResult};
use super::params::Base58;
use super::response::with_context_at;
use crate::chain::Chain;

pub async fn get_health(_: &Chain, (): ()) -> RpcResult {
    Ok(json!("ok"))
}

pub async fn get_version(_: &Chain, (): ()) -> RpcResult {
    let version = solana_version::Version::default();
    Ok(json!({"solana-core": version.to_string(), "feature-set": version.feature_set}))
}

pub async fn get_genesis_hash(chain: &Chain, (): ()) -> RpcResult {
    Ok(json!(chain.genesis_hash().to_string()))
}

pub async fn get_slot(chain: &Chain, (config,): (Option<ContextConfig>,)) -> RpcResult {
    Ok(json!(chain.level_slot(level(config))))
}

pub async fn get_block_height(chain: &Chain, (config,): (Option<ContextConfig>,)) -> RpcResult {
    let slot = chain.level_slot(level(config));
    Ok(json!(chain.block_height_at(slot)))
}

pub async fn get_epoch_info(chain: &Chain, (config,): (Option<ContextConfig>,)) -> RpcResult {
    let slot = chain.level_slot(level(config));
    let schedule = chain.epoch_schedule();
    let (epoch, slot_index) = schedule.get_epoch_and_slot_index(slot);
    Ok(json!({
        "absoluteSlot": slot,
        "blockHeight": chain.block_height_at(slot),
        "epoch": epoch,
        "slotIndex": slot_index,
        "slotsInEpoch": schedule.get_slots_in_epoch(epoch),
        "transactionCount": chain.transaction_count(),
    }))
}

/// The newest blockhash of the level's bank, as a validator hands it out: a level whose slot
/// has ended gives the hash that slot ended with. It stays valid for 150 slots.
pub async fn get_latest_blockhash(chain: &Chain, (config,): (Option<ContextConfig>,)) -> RpcResult {
    let slot = chain.level_slot(level(config));
    let (blockhash, last_valid_block_height) = chain
        .latest_blockhash_at(slot)
        .await
        .map_err(RpcError::Internal)?;
    Ok(with_context_at(
        slot,
        json!({"blockhash": blockhash.to_string(), "lastValidBlockHeight": last_valid_block_height}),
    ))
}

/// Whether the level's bank (finalized by default, as on a validator) accepts `blockhash`.
pub async fn is_blockhash_valid(
    chain: &Chain,
    (Base58(blockhash), config): (Base58<Hash>, Option<ContextConfig>),
) -> RpcResult {
    let slot = chain.level_slot(level(config));
    let valid = chain.is_blockhash_valid_at(blockhash, slot);
    Ok(with_context_at(slot, Value::Bool(valid)))
}
