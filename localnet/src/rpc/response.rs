//! The responses' shapes, as Agave's rpc-client-types and transaction-status lay them out: the
//! `context` wrapper, simulations, transactions and their metadata. Pure values from what the
//! chain recorded; no method logic and no errors.
use base64::Engine;
use serde_json::{json, Value};
use solana_transaction::versioned::VersionedTransaction;
use solana_transaction_error::TransactionError;

use super::config::TransactionEncoding;
use super::parsed_transaction::transaction_json_parsed;
use crate::chain::{Chain, CommittedTransaction, Simulation};

/// `value`, read at the working slot, with the `context` a validator wraps it in.
pub fn with_context(chain: &Chain, value: Value) -> Value {
    with_context_at(chain.slot(), value)
}

/// `value`, read at `slot` (a commitment level's), with its `context`.
pub fn with_context_at(slot: u64, value: Value) -> Value {
    json!({"context": {"slot": slot, "apiVersion": solana_version::Version::default().to_string()}, "value": value})
}

pub fn simulation_value(simulation: &Simulation) -> Value {
    json!({
        "err": simulation.err,
        "logs": simulation.logs,
        "accounts": null,
        "unitsConsumed": simulation.units_consumed,
        "loadedAccountsDataSize": simulation.loaded_accounts_data_size,
        "returnData": null,
        "innerInstructions": null,
        "replacementBlockhash": null,
    })
}

pub fn result_value(err: &Option<TransactionError>) -> Value {
    match err {
        None => json!({"Ok": null}),
        Some(err) => json!({"Err": err}),
    }
}

pub fn encode_transaction(
    transaction: &VersionedTransaction,
    encoding: TransactionEncoding,
) -> Value {
    let wire = || bincode::serialize(transaction).expect("a committed transaction serializes");
    match encoding {
        TransactionEncoding::Json => transaction_json(transaction),
        TransactionEncoding::JsonParsed => transaction_json_parsed(transaction),
        TransactionEncoding::Base64 => json!([
            base64::engine::general_purpose::STANDARD.encode(wire()),
            "base64"
        ]),
        TransactionEncoding::Base58 => json!([bs58::encode(wire()).into_string(), "base58"]),
    }
}

pub fn meta_value(committed: &CommittedTransaction) -> Value {
    json!({
        "err": committed.err,
        "status": result_value(&committed.err),
        "fee": committed.fee,
        "preBalances": committed.pre_balances,
        "postBalances": committed.post_balances,
        "innerInstructions": [],
        "logMessages": committed.logs,
        "preTokenBalances": [],
        "postTokenBalances": [],
        "rewards": [],
        "loadedAddresses": {"writable": [], "readonly": []},
        "computeUnitsConsumed": committed.units_consumed,
    })
}

fn transaction_json(transaction: &VersionedTransaction) -> Value {
    let message = &transaction.message;
    let header = message.header();
    let instructions: Vec<Value> = message
        .instructions()
        .iter()
        .map(|ix| {
            json!({
                "programIdIndex": ix.program_id_index,
                "accounts": ix.accounts,
                "data": bs58::encode(&ix.data).into_string(),
                "stackHeight": null,
            })
        })
        .collect();
    json!({
        "signatures": transaction.signatures.iter().map(ToString::to_string).collect::<Vec<_>>(),
        "message": {
            "accountKeys": message.static_account_keys().iter().map(ToString::to_string).collect::<Vec<_>>(),
            "header": {
                "numRequiredSignatures": header.num_required_signatures,
                "numReadonlySignedAccounts": header.num_readonly_signed_accounts,
                "numReadonlyUnsignedAccounts": header.num_readonly_unsigned_accounts,
            },
            "instructions": instructions,
            "recentBlockhash": message.recent_blockhash().to_string(),
        },
    })
}
