//! The node and its clock: health, version, slots, epochs and blockhashes.
use serde_json::{json, Value};
use solana_hash::Hash;

use super::error::{RpcError, RpcResult};
use super::params::{Base58, ContextConfig};
use super::with_context;
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

pub async fn get_slot(chain: &Chain, _: (Option<ContextConfig>,)) -> RpcResult {
    Ok(json!(chain.slot().await.map_err(RpcError::Internal)?))
}

pub async fn get_block_height(chain: &Chain, _: (Option<ContextConfig>,)) -> RpcResult {
    Ok(json!(chain
        .block_height()
        .await
        .map_err(RpcError::Internal)?))
}

pub async fn get_epoch_info(chain: &Chain, _: (Option<ContextConfig>,)) -> RpcResult {
    let slot = chain.slot().await.map_err(RpcError::Internal)?;
    let schedule = chain.epoch_schedule();
    let (epoch, slot_index) = schedule.get_epoch_and_slot_index(slot);
    Ok(json!({
        "absoluteSlot": slot,
        "blockHeight": chain.block_height().await.map_err(RpcError::Internal)?,
        "epoch": epoch,
        "slotIndex": slot_index,
        "slotsInEpoch": schedule.get_slots_in_epoch(epoch),
        "transactionCount": chain.transaction_count(),
    }))
}

pub async fn get_latest_blockhash(chain: &Chain, _: (Option<ContextConfig>,)) -> RpcResult {
    let (blockhash, last_valid_block_height) =
        chain.latest_blockhash().await.map_err(RpcError::Internal)?;
    with_context(chain, json!({"blockhash": blockhash.to_string(), "lastValidBlockHeight": last_valid_block_height})).await
}

pub async fn is_blockhash_valid(
    chain: &Chain,
    (Base58(blockhash), _): (Base58<Hash>, Option<ContextConfig>),
) -> RpcResult {
    let valid = chain
        .is_blockhash_valid(blockhash)
        .await
        .map_err(RpcError::Internal)?;
    with_context(chain, Value::Bool(valid)).await
}
