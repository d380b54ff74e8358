//! Solana JSON-RPC 2.0 over the chain, with Agave's request and response shapes so solana-py,
//! anchorpy and the Solana CLI work unmodified. Each method is one function over its typed
//! positional parameters (`params`), failing with a typed `RpcError`.
//!
//! Modules depend downwards only: `error`; `params` (positional parameters); `config` (what
//! the configuration objects say) and `response` (the shapes answers take); `call` (the
//! JSON-RPC envelope); the method modules; `pubsub`; and this dispatch over them.
mod accounts;
mod blocks;
mod call;
mod cluster;
mod config;
mod error;
mod node;
mod params;
mod parsed_transaction;
pub mod pubsub;
mod response;
mod tokens;
mod transactions;

use serde_json::Value;

use crate::chain::Chain;
use call::{error_response, read_call, respond, typed};
use error::{RpcError, RpcResult};

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
