//! Transactions: fees, sending, simulating, statuses and history.
use base64::Engine;
use serde_json::{json, Value};
use solana_message::VersionedMessage;
use solana_pubkey::Pubkey;
use solana_rpc_client_types::request::{
    MAX_GET_CONFIRMED_SIGNATURES_FOR_ADDRESS2_LIMIT as MAX_SIGNATURES_FOR_ADDRESS,
    MAX_GET_SIGNATURE_STATUSES_QUERY_ITEMS as MAX_SIGNATURE_STATUSES,
};
use solana_signature::Signature;
use solana_transaction::versioned::{TransactionVersion, VersionedTransaction};

use super::config::{
    at_least_confirmed, ContextConfig, EncodingOrConfig, SendConfig, SignaturesForAddressConfig,
    SimulateConfig, TransactionConfig, WireEncoding,
};
use super::error::{RpcError, RpcResult};
use super::params::{base58_list, Base58};
use super::parsed_transaction::memos;
use super::response::{
    encode_transaction, meta_value, result_value, simulation_value, with_context, with_context_at,
};
use crate::chain::{Chain, CommittedTransaction, SendError};
use crate::commitment::{level_name, CommitmentSlots};

impl WireEncoding {
    fn decode_transaction(self, text: &str) -> Result<VersionedTransaction, RpcError> {
        let bytes = match self {
            Self::Base58 => bs58::decode(text).into_vec().ok(),
            Self::Base64 => base64::engine::general_purpose::STANDARD.decode(text).ok(),
        }
        .ok_or_else(|| {
            RpcError::InvalidParams("params[0] does not decode with the given encoding".to_string())
        })?;
        bincode::deserialize(&bytes).map_err(|_| {
            RpcError::InvalidParams("params[0] is not a serialized transaction".to_string())
        })
    }
}

pub async fn get_fee_for_message(
    chain: &Chain,
    (encoded, _): (String, Option<ContextConfig>),
) -> RpcResult {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(&encoded)
        .map_err(|_| RpcError::InvalidParams("params[0] is not valid base64".to_string()))?;
    let message: VersionedMessage = bincode::deserialize(&bytes).map_err(|_| {
        RpcError::InvalidParams("params[0] is not a serialized message".to_string())
    })?;
    let fee = chain
        .fee_for_message(&message)
        .await
        .map_err(RpcError::Internal)?;
    Ok(with_context(chain, json!(fee)))
}

pub async fn send_transaction(
    chain: &Chain,
    (encoded, config): (String, Option<SendConfig>),
) -> RpcResult {
    let config = config.unwrap_or_default();
    let transaction = config.encoding.decode_transaction(&encoded)?;
    match chain.send(transaction, !config.skip_preflight).await {
        Ok(signature) => Ok(json!(signature.to_string())),
        Err(SendError::SignatureVerification) => Err(RpcError::SignatureVerification),
        Err(SendError::Preflight(simulation)) => Err(RpcError::PreflightFailure {
            simulation: simulation_value(&simulation),
            err: simulation.err,
        }),
        Err(SendError::Internal(e)) => Err(RpcError::Internal(e)),
    }
}

pub async fn simulate_transaction(
    chain: &Chain,
    (encoded, config): (String, Option<SimulateConfig>),
) -> RpcResult {
    let config = config.unwrap_or_default();
    let mut transaction = config.encoding.decode_transaction(&encoded)?;
    let mut replacement = Value::Null;
    if config.replace_recent_blockhash {
        let (blockhash, last_valid_block_height) =
            chain.latest_blockhash().await.map_err(RpcError::Internal)?;
        transaction.message.set_recent_blockhash(blockhash);
        replacement = json!({"blockhash": blockhash.to_string(), "lastValidBlockHeight": last_valid_block_height});
    }
    if config.sig_verify && transaction.verify_with_results().iter().any(|ok| !ok) {
        return Err(RpcError::SignatureVerification);
    }
    let simulation = chain
        .simulate(transaction)
        .await
        .map_err(RpcError::Internal)?;
    let mut value = simulation_value(&simulation);
    value["replacementBlockhash"] = replacement;
    Ok(with_context(chain, value))
}

pub async fn get_signature_statuses(
    chain: &Chain,
    (signatures, _): (Vec<Base58<Signature>>, Option<ContextConfig>),
) -> RpcResult {
    let signatures = base58_list(signatures, MAX_SIGNATURE_STATUSES)?;
    let slots = chain.commitment_slots();
    let statuses: Vec<Value> = signatures
        .iter()
        .map(|s| {
            chain
                .committed(s)
                .map(|c| status_value(&c, &slots))
                .unwrap_or(Value::Null)
        })
        .collect();
    Ok(with_context_at(slots.processed, Value::Array(statuses)))
}

pub async fn get_transaction(
    chain: &Chain,
    (Base58(signature), config): (
        Base58<Signature>,
        Option<EncodingOrConfig<TransactionConfig>>,
    ),
) -> RpcResult {
    let config = EncodingOrConfig::config(config);
    let level = at_least_confirmed(config.commitment.unwrap_or_default())?;
    let visible_to = chain.level_slot(level);
    let Some(committed) = chain.committed(&signature).filter(|c| c.slot <= visible_to) else {
        return Ok(Value::Null);
    };
    let version = checked_version(
        &committed.transaction,
        config.max_supported_transaction_version,
    )?;
    let mut value = json!({
        "slot": committed.slot,
        "blockTime": committed.block_time,
        "meta": meta_value(&committed),
        "transaction": encode_transaction(&committed.transaction, config.encoding),
    });
    if let Some(version) = version {
        value["version"] = version;
    }
    Ok(value)
}

pub async fn get_signatures_for_address(
    chain: &Chain,
    (Base58(address), config): (Base58<Pubkey>, Option<SignaturesForAddressConfig>),
) -> RpcResult {
    let config = config.unwrap_or_default();
    let level = at_least_confirmed(config.commitment.unwrap_or_default())?;
    let slots = chain.commitment_slots();
    let visible_to = slots.slot(level);
    let limit = match config.limit {
        None => MAX_SIGNATURES_FOR_ADDRESS,
        Some(n) if (1..=MAX_SIGNATURES_FOR_ADDRESS).contains(&n) => n,
        Some(_) => {
            return Err(RpcError::InvalidParams(
                "limit must be between 1 and 1000".to_string(),
            ))
        }
    };
    let until = config.until.map(|Base58(s)| s);
    let mut found = chain
        .signatures_for_address(&address)
        .into_iter()
        .filter(|(_, c)| c.slot <= visible_to);
    if let Some(Base58(before)) = config.before {
        found.by_ref().find(|(s, _)| *s == before);
    }
    let list: Vec<Value> = found
        .take_while(|(s, _)| Some(*s) != until)
        .take(limit)
        .map(|(signature, c)| {
            json!({
                "signature": signature.to_string(),
                "slot": c.slot,
                "err": c.err,
                "memo": memos(&c.transaction),
                "blockTime": c.block_time,
                "confirmationStatus": level_name(slots.status(c.slot).level),
            })
        })
        .collect();
    Ok(Value::Array(list))
}

fn status_value(committed: &CommittedTransaction, slots: &CommitmentSlots) -> Value {
    let status = slots.status(committed.slot);
    json!({
        "slot": committed.slot,
        "confirmations": status.confirmations,
        "err": committed.err,
        "status": result_value(&committed.err),
        "confirmationStatus": level_name(status.level),
    })
}

/// The `version` member a validator adds when the client says which versions it reads
/// (`max_supported`), or -32015 for a transaction above them; a client that says nothing reads
/// legacy transactions only.
pub(super) fn checked_version(
    transaction: &VersionedTransaction,
    max_supported: Option<u8>,
) -> Result<Option<Value>, RpcError> {
    match (transaction.version(), max_supported) {
        (TransactionVersion::Legacy(_), None) => Ok(None),
        (TransactionVersion::Legacy(_), Some(_)) => Ok(Some(json!("legacy"))),
        (TransactionVersion::Number(n), Some(max)) if n <= max => Ok(Some(json!(n))),
        (TransactionVersion::Number(n), _) => Err(RpcError::UnsupportedTransactionVersion(n)),
    }
}
