//! Solana JSON-RPC 2.0 over the chain, with Agave's request and response shapes so solana-py,
//! anchorpy and the Solana CLI work unmodified. Each method is one function over its typed
//! positional parameters (`params`), failing with a typed `RpcError`.
mod accounts;
mod blocks;
mod cluster;
mod error;
mod node;
mod params;
mod parsed_transaction;
pub mod pubsub;
mod tokens;
mod transactions;

use serde_json::{json, Value};
use solana_commitment_config::CommitmentLevel;

use crate::chain::Chain;
use error::{RpcError, RpcResult};
use params::Params;

/// Answers one HTTP request body: a single call or a batch.
pub async fn handle_body(chain: &Chain, body: &[u8]) -> Value {
    let request: Value = match serde_json::from_slice(body) {
        Ok(value) => value,
        Err(e) => return error_response(Value::Null, RpcError::Parse(e)),
    };
    match request {
        Value::Array(calls) if !calls.is_empty() => {
            let mut responses = Vec::with_capacity(calls.len());
            for call in calls {
                responses.push(handle_call(chain, call).await);
            }
            Value::Array(responses)
        }
        call => handle_call(chain, call).await,
    }
}

async fn handle_call(chain: &Chain, call: Value) -> Value {
    let (id, method, params) = match read_call(&call) {
        Ok(call) => call,
        Err(refusal) => return refusal,
    };
    respond(id, dispatch(chain, method, params).await)
}

/// A call's id, method and positional parameters, or the response refusing it.
fn read_call(call: &Value) -> Result<(Value, &str, Vec<Value>), Value> {
    let id = call.get("id").cloned().unwrap_or(Value::Null);
    let Some(method) = call.get("method").and_then(Value::as_str) else {
        return Err(error_response(
            id,
            RpcError::InvalidRequest("missing \"method\""),
        ));
    };
    if call.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(error_response(
            id,
            RpcError::InvalidRequest("\"jsonrpc\" must be \"2.0\""),
        ));
    }
    let params = match call.get("params") {
        None | Some(Value::Null) => vec![],
        Some(Value::Array(params)) => params.clone(),
        Some(_) => {
            return Err(error_response(
                id,
                RpcError::InvalidParams("params must be an array".to_string()),
            ))
        }
    };
    Ok((id, method, params))
}

fn respond(id: Value, outcome: RpcResult) -> Value {
    match outcome {
        Ok(result) => json!({"jsonrpc": "2.0", "result": result, "id": id}),
        Err(error) => error_response(id, error),
    }
}

fn error_response(id: Value, error: RpcError) -> Value {
    json!({"jsonrpc": "2.0", "error": error.to_json(), "id": id})
}

/// Reads a method's parameters into the tuple its function takes.
fn typed<P: Params>(params: Vec<Value>) -> Result<P, RpcError> {
    P::from_positional(params)
}

async fn dispatch(chain: &Chain, method: &str, params: Vec<Value>) -> RpcResult {
    match method {
        "getHealth" => node::get_health(chain, typed(params)?).await,
        "getVersion" => node::get_version(chain, typed(params)?).await,
        "getGenesisHash" => node::get_genesis_hash(chain, typed(params)?).await,
        "getSlot" => node::get_slot(chain, typed(params)?).await,
        "getBlockHeight" => node::get_block_height(chain, typed(params)?).await,
        "getEpochInfo" => node::get_epoch_info(chain, typed(params)?).await,
        "getLatestBlockhash" => node::get_latest_blockhash(chain, typed(params)?).await,
        "isBlockhashValid" => node::is_blockhash_valid(chain, typed(params)?).await,
        "getBalance" => accounts::get_balance(chain, typed(params)?).await,
        "getMinimumBalanceForRentExemption" => {
            accounts::get_minimum_balance_for_rent_exemption(chain, typed(params)?).await
        }
        "requestAirdrop" => accounts::request_airdrop(chain, typed(params)?).await,
        "getAccountInfo" => accounts::get_account_info(chain, typed(params)?).await,
        "getMultipleAccounts" => accounts::get_multiple_accounts(chain, typed(params)?).await,
        "getProgramAccounts" => accounts::get_program_accounts(chain, typed(params)?).await,
        "getSupply" => accounts::get_supply(chain, typed(params)?).await,
        "getLargestAccounts" => accounts::get_largest_accounts(chain, typed(params)?).await,
        "getTokenAccountBalance" => tokens::get_token_account_balance(chain, typed(params)?).await,
        "getTokenSupply" => tokens::get_token_supply(chain, typed(params)?).await,
        "getTokenLargestAccounts" => {
            tokens::get_token_largest_accounts(chain, typed(params)?).await
        }
        "getTokenAccountsByOwner" => {
            tokens::get_token_accounts_by_owner(chain, typed(params)?).await
        }
        "getTokenAccountsByDelegate" => {
            tokens::get_token_accounts_by_delegate(chain, typed(params)?).await
        }
        "getFeeForMessage" => transactions::get_fee_for_message(chain, typed(params)?).await,
        "sendTransaction" => transactions::send_transaction(chain, typed(params)?).await,
        "simulateTransaction" => transactions::simulate_transaction(chain, typed(params)?).await,
        "getSignatureStatuses" => transactions::get_signature_statuses(chain, typed(params)?).await,
        "getTransaction" => transactions::get_transaction(chain, typed(params)?).await,
        "getSignaturesForAddress" => {
            transactions::get_signatures_for_address(chain, typed(params)?).await
        }
        "getBlock" => blocks::get_block(chain, typed(params)?).await,
        "getBlockTime" => blocks::get_block_time(chain, typed(params)?).await,
        "getBlocks" => blocks::get_blocks(chain, typed(params)?).await,
        "getBlocksWithLimit" => blocks::get_blocks_with_limit(chain, typed(params)?).await,
        "getFirstAvailableBlock" => blocks::get_first_available_block(chain, typed(params)?).await,
        "getBlockCommitment" => blocks::get_block_commitment(chain, typed(params)?).await,
        "getEpochSchedule" => cluster::get_epoch_schedule(chain, typed(params)?).await,
        "getTransactionCount" => cluster::get_transaction_count(chain, typed(params)?).await,
        "getSlotLeader" => cluster::get_slot_leader(chain, typed(params)?).await,
        "getClusterNodes" => cluster::get_cluster_nodes(chain, typed(params)?).await,
        "getVoteAccounts" => cluster::get_vote_accounts(chain, typed(params)?).await,
        "getInflationGovernor" => cluster::get_inflation_governor(chain, typed(params)?).await,
        "getInflationRate" => cluster::get_inflation_rate(chain, typed(params)?).await,
        "getRecentPerformanceSamples" => {
            cluster::get_recent_performance_samples(chain, typed(params)?).await
        }
        "getLeaderSchedule" => cluster::get_leader_schedule(chain, typed(params)?).await,
        other => Err(RpcError::MethodNotFound(other.to_string())),
    }
}

/// `value`, read at the working slot, with the `context` a validator wraps it in.
fn with_context(chain: &Chain, value: Value) -> RpcResult {
    Ok(with_context_at(chain.slot(), value))
}

/// `value`, read at `slot` (a commitment level's), with its `context`.
fn with_context_at(slot: u64, value: Value) -> Value {
    json!({"context": {"slot": slot, "apiVersion": solana_version::Version::default().to_string()}, "value": value})
}

/// The slot `level` reads now.
fn level_slot(chain: &Chain, level: CommitmentLevel) -> u64 {
    chain.commitment_slots().slot(level)
}
