//! The node and its clock: health, version, slots, epochs and blockhashes.
use serde_json::{json, Value};
use solana_hash::Hash;

use super::error::{RpcError, RpcResult};
use super::params::{level, Base58, ContextConfig};
use super::{level_slot, with_context, with_context_at};
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
    Ok(json!(level_slot(chain, level(config))))
}

pub async fn get_block_height(chain: &Chain, (config,): (Option<ContextConfig>,)) -> RpcResult {
    let slot = level_slot(chain, level(config));
    Ok(json!(chain.block_height_at(slot)))
}

pub async fn get_epoch_info(chain: &Chain, (config,): (Option<ContextConfig>,)) -> RpcResult {
    let slot = level_slot(chain, level(config));
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

/// The newest blockhash at every level, read at the level's slot. A validator hands out the
/// hash its level's slot ended with, still valid for over 100 slots; the runtime hosted here
/// (solana-program-test) registers a new blockhash every 6.4 ms, which ages any older one out
/// of the 150 a transaction may name within about a second.
pub async fn get_latest_blockhash(chain: &Chain, (config,): (Option<ContextConfig>,)) -> RpcResult {
    let slot = level_slot(chain, level(config));
    let (blockhash, last_valid_block_height) =
        chain.latest_blockhash().await.map_err(RpcError::Internal)?;
    Ok(with_context_at(
        slot,
        json!({"blockhash": blockhash.to_string(), "lastValidBlockHeight": last_valid_block_height}),
    ))
}

pub async fn is_blockhash_valid(
    chain: &Chain,
    (Base58(blockhash), _): (Base58<Hash>, Option<ContextConfig>),
) -> RpcResult {
    let valid = chain
        .is_blockhash_valid(blockhash)
        .await
        .map_err(RpcError::Internal)?;
    with_context(chain, Value::Bool(valid))
}
