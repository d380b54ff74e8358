//! The cluster: its one validator, epochs, inflation and throughput.
use serde_json::{json, Value};
use solana_rpc_client_types::response::{
    RpcContactInfo, RpcInflationGovernor, RpcInflationRate, RpcPerfSample, RpcVoteAccountInfo,
    RpcVoteAccountStatus,
};

use super::config::{ContextConfig, LeaderScheduleConfig, SlotOrConfig, VoteAccountsConfig};
use super::error::{RpcError, RpcResult};
use super::params::Base58;
use crate::chain::Chain;

/// A validator samples performance once a minute and keeps 720 samples (12 hours).
const SAMPLE_PERIOD_SECS: u16 = 60;
const MAX_PERFORMANCE_SAMPLES: usize = 720;

pub async fn get_epoch_schedule(chain: &Chain, (): ()) -> RpcResult {
    Ok(json!(chain.epoch_schedule()))
}

pub async fn get_transaction_count(chain: &Chain, _: (Option<ContextConfig>,)) -> RpcResult {
    Ok(json!(chain.transaction_count()))
}

pub async fn get_slot_leader(chain: &Chain, _: (Option<ContextConfig>,)) -> RpcResult {
    Ok(json!(chain.validator().identity.to_string()))
}

/// The one node. It does not gossip or take transactions over TPU, so those sockets are absent.
pub async fn get_cluster_nodes(chain: &Chain, (): ()) -> RpcResult {
    let version = solana_version::Version::default();
    let node = RpcContactInfo {
        pubkey: chain.validator().identity.to_string(),
        gossip: None,
        tvu: None,
        tpu: None,
        tpu_quic: None,
        tpu_forwards: None,
        tpu_forwards_quic: None,
        tpu_vote: None,
        serve_repair: None,
        rpc: None,
        pubsub: None,
        version: Some(version.to_string()),
        feature_set: Some(version.feature_set),
        shred_version: None,
    };
    Ok(json!([node]))
}

/// The validator votes on every slot as it ends: its last vote is the confirmed slot, its root
/// the finalized one.
pub async fn get_vote_accounts(
    chain: &Chain,
    (config,): (Option<VoteAccountsConfig>,),
) -> RpcResult {
    let validator = chain.validator();
    let slots = chain.commitment_slots();
    let wanted = config
        .unwrap_or_default()
        .vote_pubkey
        .map(|Base58(key)| key);
    let current = if wanted.is_none_or(|key| key == validator.vote_account) {
        vec![RpcVoteAccountInfo {
            vote_pubkey: validator.vote_account.to_string(),
            node_pubkey: validator.identity.to_string(),
            activated_stake: validator.activated_stake,
            commission: validator.commission,
            epoch_vote_account: true,
            epoch_credits: vec![],
            last_vote: slots.confirmed,
            root_slot: slots.finalized,
        }]
    } else {
        vec![]
    };
    Ok(json!(RpcVoteAccountStatus {
        current,
        delinquent: vec![]
    }))
}

pub async fn get_inflation_governor(chain: &Chain, _: (Option<ContextConfig>,)) -> RpcResult {
    Ok(json!(RpcInflationGovernor::from(*chain.inflation())))
}

pub async fn get_inflation_rate(chain: &Chain, (): ()) -> RpcResult {
    let slot = chain.slot();
    let (inflation, year) = (chain.inflation(), chain.years_at(slot));
    Ok(json!(RpcInflationRate {
        total: inflation.total(year),
        validator: inflation.validator(year),
        foundation: inflation.foundation(year),
        epoch: chain.epoch_schedule().get_epoch(slot),
    }))
}

pub async fn get_recent_performance_samples(
    chain: &Chain,
    (limit,): (Option<usize>,),
) -> RpcResult {
    let limit = limit.unwrap_or(MAX_PERFORMANCE_SAMPLES);
    if limit > MAX_PERFORMANCE_SAMPLES {
        return Err(RpcError::InvalidParams(format!(
            "Invalid limit; max {MAX_PERFORMANCE_SAMPLES}"
        )));
    }
    let samples: Vec<RpcPerfSample> = chain
        .performance_samples(i64::from(SAMPLE_PERIOD_SECS))
        .into_iter()
        .take(limit)
        .map(|(slot, num_slots, num_transactions)| RpcPerfSample {
            slot,
            num_transactions,
            num_non_vote_transactions: Some(num_transactions),
            num_slots,
            sample_period_secs: SAMPLE_PERIOD_SECS,
        })
        .collect();
    Ok(json!(samples))
}

/// The one validator leads every slot of the epoch of `slot` (default: the current one); a
/// validator knows the schedule up to the next epoch and answers null beyond.
pub async fn get_leader_schedule(
    chain: &Chain,
    (slot, config): (
        Option<SlotOrConfig<LeaderScheduleConfig>>,
        Option<LeaderScheduleConfig>,
    ),
) -> RpcResult {
    let (slot, config) = SlotOrConfig::unzip(slot, config);
    let current = chain.slot();
    let schedule = chain.epoch_schedule();
    let epoch = schedule.get_epoch(slot.unwrap_or(current));
    if epoch > schedule.get_epoch(current).saturating_add(1) {
        return Ok(Value::Null);
    }
    let identity = chain.validator().identity;
    if config
        .and_then(|c| c.identity)
        .is_some_and(|Base58(wanted)| wanted != identity)
    {
        return Ok(json!({}));
    }
    let slots: Vec<u64> = (0..schedule.get_slots_in_epoch(epoch)).collect();
    Ok(json!({ identity.to_string(): slots }))
}
