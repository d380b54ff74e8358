//! Solana JSON-RPC 2.0 over the chain, with Agave's request and response shapes so solana-py,
//! anchorpy and the Solana CLI work unmodified.
use std::str::FromStr;

use base64::Engine;
use serde_json::{json, Value};
use solana_account::Account;
use solana_hash::Hash;
use solana_message::Message;
use solana_pubkey::Pubkey;
use solana_signature::Signature;
use solana_transaction::versioned::VersionedTransaction;
use solana_transaction_error::TransactionError;

use crate::chain::{Chain, CommittedTransaction, SendError, Simulation};

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
pub const INTERNAL_ERROR: i64 = -32603;
pub const PREFLIGHT_FAILURE: i64 = -32002;
pub const SIGNATURE_VERIFICATION_FAILURE: i64 = -32003;

/// Agave's limit on base58-encoded account data.
const MAX_BASE58_BYTES: usize = 128;
const MAX_SIGNATURES_FOR_ADDRESS: usize = 1000;

#[derive(Debug)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    pub data: Option<Value>,
}

impl RpcError {
    fn new(code: i64, message: impl Into<String>) -> Self {
        Self { code, message: message.into(), data: None }
    }

    fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(INVALID_PARAMS, format!("Invalid params: {}", message.into()))
    }

    fn internal(message: impl Into<String>) -> Self {
        Self::new(INTERNAL_ERROR, format!("Internal error: {}", message.into()))
    }
}

type RpcResult = Result<Value, RpcError>;

/// Answers one HTTP request body: a single call or a batch.
pub async fn handle_body(chain: &Chain, body: &[u8]) -> Value {
    let request: Value = match serde_json::from_slice(body) {
        Ok(value) => value,
        Err(e) => return error_response(Value::Null, RpcError::new(PARSE_ERROR, format!("Parse error: {e}"))),
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
    let id = call.get("id").cloned().unwrap_or(Value::Null);
    let Some(method) = call.get("method").and_then(Value::as_str) else {
        return error_response(id, RpcError::new(INVALID_REQUEST, "Invalid request: missing \"method\""));
    };
    if call.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return error_response(id, RpcError::new(INVALID_REQUEST, "Invalid request: \"jsonrpc\" must be \"2.0\""));
    }
    let params = match call.get("params") {
        None | Some(Value::Null) => vec![],
        Some(Value::Array(params)) => params.clone(),
        Some(_) => return error_response(id, RpcError::invalid_params("params must be an array")),
    };
    match dispatch(chain, method, &Params(params)).await {
        Ok(result) => json!({"jsonrpc": "2.0", "result": result, "id": id}),
        Err(error) => error_response(id, error),
    }
}

fn error_response(id: Value, error: RpcError) -> Value {
    let mut body = json!({"code": error.code, "message": error.message});
    if let Some(data) = error.data {
        body["data"] = data;
    }
    json!({"jsonrpc": "2.0", "error": body, "id": id})
}

async fn dispatch(chain: &Chain, method: &str, p: &Params) -> RpcResult {
    match method {
        "getHealth" => Ok(json!("ok")),
        "getVersion" => {
            let version = solana_version::Version::default();
            Ok(json!({"solana-core": version.to_string(), "feature-set": version.feature_set}))
        }
        "getGenesisHash" => Ok(json!(chain.genesis_hash().to_string())),
        "getSlot" => Ok(json!(chain.slot().await.map_err(RpcError::internal)?)),
        "getBlockHeight" => Ok(json!(chain.block_height().await.map_err(RpcError::internal)?)),
        "getEpochInfo" => {
            let slot = chain.slot().await.map_err(RpcError::internal)?;
            let (epoch, slot_index) = chain.epoch_schedule().get_epoch_and_slot_index(slot);
            Ok(json!({
                "absoluteSlot": slot,
                "blockHeight": chain.block_height().await.map_err(RpcError::internal)?,
                "epoch": epoch,
                "slotIndex": slot_index,
                "slotsInEpoch": chain.epoch_schedule().get_slots_in_epoch(epoch),
                "transactionCount": chain.transaction_count(),
            }))
        }
        "getLatestBlockhash" => {
            let (blockhash, last_valid_block_height) = chain.latest_blockhash().await.map_err(RpcError::internal)?;
            with_context(chain, json!({"blockhash": blockhash.to_string(), "lastValidBlockHeight": last_valid_block_height})).await
        }
        "isBlockhashValid" => {
            let blockhash: Hash = p.parsed(0, "a base58 blockhash")?;
            let valid = chain.is_blockhash_valid(blockhash).await.map_err(RpcError::internal)?;
            with_context(chain, json!(valid)).await
        }
        "getFeeForMessage" => {
            let bytes = p.base64(0, "a base64 message")?;
            let message: Message = bincode::deserialize(&bytes)
                .map_err(|_| RpcError::invalid_params("params[0] is not a serialized legacy message"))?;
            let fee = chain.fee_for_message(message).await.map_err(RpcError::internal)?;
            with_context(chain, json!(fee)).await
        }
        "getMinimumBalanceForRentExemption" => {
            let len = p.u64(0, "a data length")?;
            Ok(json!(chain.minimum_balance_for_rent_exemption(len as usize).await.map_err(RpcError::internal)?))
        }
        "getBalance" => {
            let address = p.pubkey(0)?;
            with_context(chain, json!(chain.balance(&address).await.map_err(RpcError::internal)?)).await
        }
        "requestAirdrop" => {
            let to = p.pubkey(0)?;
            let lamports = p.u64(1, "a lamport amount")?;
            match chain.airdrop(&to, lamports).await {
                Ok(signature) => Ok(json!(signature.to_string())),
                Err(SendError::Preflight(simulation)) => Err(RpcError::internal(format!(
                    "airdrop request failed: {}",
                    simulation.err.map(|e| e.to_string()).unwrap_or_default()
                ))),
                Err(SendError::Internal(e)) => Err(RpcError::internal(e)),
                Err(SendError::SignatureVerification) => Err(RpcError::internal("faucet signature rejected")),
            }
        }
        "getAccountInfo" => {
            let address = p.pubkey(0)?;
            let view = AccountView::from_config(p.config(1)?)?;
            let account = chain.account(&address).await.map_err(RpcError::internal)?;
            let value = account.map(|a| view.encode(&a)).transpose()?;
            with_context(chain, value.unwrap_or(Value::Null)).await
        }
        "getMultipleAccounts" => {
            let addresses = p.pubkeys(0)?;
            let view = AccountView::from_config(p.config(1)?)?;
            let mut values = Vec::with_capacity(addresses.len());
            for address in addresses {
                let account = chain.account(&address).await.map_err(RpcError::internal)?;
                values.push(account.map(|a| view.encode(&a)).transpose()?.unwrap_or(Value::Null));
            }
            with_context(chain, Value::Array(values)).await
        }
        "getProgramAccounts" => {
            let program = p.pubkey(0)?;
            let config = p.config(1)?;
            let view = AccountView::from_config(config.clone())?;
            let filters = Filter::parse_all(config.get("filters"))?;
            let mut matches = Vec::new();
            for (address, account) in chain.program_accounts(&program).await.map_err(RpcError::internal)? {
                if filters.iter().all(|f| f.matches(&account.data)) {
                    matches.push(json!({"pubkey": address.to_string(), "account": view.encode(&account)?}));
                }
            }
            if config.get("withContext").and_then(Value::as_bool) == Some(true) {
                with_context(chain, Value::Array(matches)).await
            } else {
                Ok(Value::Array(matches))
            }
        }
        "sendTransaction" => {
            let config = p.config(1)?;
            let transaction = p.transaction(0, &config)?;
            let preflight = !config.get("skipPreflight").and_then(Value::as_bool).unwrap_or(false);
            match chain.send(transaction, preflight).await {
                Ok(signature) => Ok(json!(signature.to_string())),
                Err(SendError::SignatureVerification) => {
                    Err(RpcError::new(SIGNATURE_VERIFICATION_FAILURE, "Transaction signature verification failure"))
                }
                Err(SendError::Preflight(simulation)) => Err(preflight_failure(simulation)),
                Err(SendError::Internal(e)) => Err(RpcError::internal(e)),
            }
        }
        "simulateTransaction" => {
            let config = p.config(1)?;
            let mut transaction = p.transaction(0, &config)?;
            let mut replacement = Value::Null;
            if config.get("replaceRecentBlockhash").and_then(Value::as_bool) == Some(true) {
                let (blockhash, last_valid_block_height) = chain.latest_blockhash().await.map_err(RpcError::internal)?;
                transaction.message.set_recent_blockhash(blockhash);
                replacement = json!({"blockhash": blockhash.to_string(), "lastValidBlockHeight": last_valid_block_height});
            }
            if config.get("sigVerify").and_then(Value::as_bool) == Some(true)
                && transaction.verify_with_results().iter().any(|ok| !ok)
            {
                return Err(RpcError::new(SIGNATURE_VERIFICATION_FAILURE, "Transaction signature verification failure"));
            }
            let simulation = chain.simulate(transaction).await.map_err(RpcError::internal)?;
            let mut value = simulation_value(&simulation);
            value["replacementBlockhash"] = replacement;
            with_context(chain, value).await
        }
        "getSignatureStatuses" => {
            let signatures = p.signatures(0)?;
            let statuses: Vec<Value> = signatures
                .iter()
                .map(|s| chain.committed(s).map(|c| status_value(&c)).unwrap_or(Value::Null))
                .collect();
            with_context(chain, Value::Array(statuses)).await
        }
        "getTransaction" => {
            let signature = p.signature(0)?;
            let config = p.config(1)?;
            let encoding = config.get("encoding").and_then(Value::as_str).unwrap_or("json");
            let Some(committed) = chain.committed(&signature) else { return Ok(Value::Null) };
            let transaction = match encoding {
                "json" | "jsonParsed" => transaction_json(&committed.transaction),
                "base64" => json!([base64::engine::general_purpose::STANDARD.encode(bincode::serialize(&committed.transaction).unwrap()), "base64"]),
                "base58" => json!([bs58::encode(bincode::serialize(&committed.transaction).unwrap()).into_string(), "base58"]),
                other => return Err(RpcError::invalid_params(format!("unknown transaction encoding {other:?}"))),
            };
            let mut value = json!({
                "slot": committed.slot,
                "blockTime": committed.block_time,
                "meta": meta_value(&committed),
                "transaction": transaction,
            });
            if config.get("maxSupportedTransactionVersion").is_some() {
                value["version"] = match committed.transaction.version() {
                    solana_transaction::versioned::TransactionVersion::Legacy(_) => json!("legacy"),
                    solana_transaction::versioned::TransactionVersion::Number(n) => json!(n),
                };
            }
            Ok(value)
        }
        "getSignaturesForAddress" => {
            let address = p.pubkey(0)?;
            let config = p.config(1)?;
            let limit = match config.get("limit") {
                None | Some(Value::Null) => MAX_SIGNATURES_FOR_ADDRESS,
                Some(v) => v
                    .as_u64()
                    .filter(|n| (1..=MAX_SIGNATURES_FOR_ADDRESS as u64).contains(n))
                    .ok_or_else(|| RpcError::invalid_params("limit must be between 1 and 1000"))? as usize,
            };
            let before = config_signature(&config, "before")?;
            let until = config_signature(&config, "until")?;
            let mut found = chain.signatures_for_address(&address).into_iter();
            if let Some(before) = before {
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
                        "memo": null,
                        "blockTime": c.block_time,
                        "confirmationStatus": "finalized",
                    })
                })
                .collect();
            Ok(Value::Array(list))
        }
        other => Err(RpcError::new(METHOD_NOT_FOUND, format!("Method not found: {other}"))),
    }
}

async fn with_context(chain: &Chain, value: Value) -> RpcResult {
    let slot = chain.slot().await.map_err(RpcError::internal)?;
    Ok(json!({"context": {"slot": slot, "apiVersion": solana_version::Version::default().to_string()}, "value": value}))
}

fn preflight_failure(simulation: Simulation) -> RpcError {
    let reason = simulation.err.as_ref().map(ToString::to_string).unwrap_or_default();
    RpcError {
        code: PREFLIGHT_FAILURE,
        message: format!("Transaction simulation failed: {reason}"),
        data: Some(simulation_value(&simulation)),
    }
}

fn simulation_value(simulation: &Simulation) -> Value {
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

fn status_value(committed: &CommittedTransaction) -> Value {
    json!({
        "slot": committed.slot,
        "confirmations": null,
        "err": committed.err,
        "status": result_value(&committed.err),
        "confirmationStatus": "finalized",
    })
}

fn result_value(err: &Option<TransactionError>) -> Value {
    match err {
        None => json!({"Ok": null}),
        Some(err) => json!({"Err": err}),
    }
}

fn meta_value(committed: &CommittedTransaction) -> Value {
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

fn config_signature(config: &Value, key: &str) -> Result<Option<Signature>, RpcError> {
    match config.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_str()
            .and_then(|s| Signature::from_str(s).ok())
            .map(Some)
            .ok_or_else(|| RpcError::invalid_params(format!("{key} is not a base58 signature"))),
    }
}

/// How account data is returned: encoding and optional slice.
struct AccountView {
    encoding: String,
    slice: Option<(usize, usize)>,
}

impl AccountView {
    fn from_config(config: Value) -> Result<Self, RpcError> {
        let encoding = match config.get("encoding") {
            None | Some(Value::Null) => "binary".to_string(),
            Some(Value::String(e)) if ["base58", "base64", "jsonParsed", "binary"].contains(&e.as_str()) => e.clone(),
            Some(other) => return Err(RpcError::invalid_params(format!("unsupported account encoding {other}; use base58, base64 or jsonParsed"))),
        };
        let slice = match config.get("dataSlice") {
            None | Some(Value::Null) => None,
            Some(slice) => {
                let field = |name: &str| {
                    slice.get(name).and_then(Value::as_u64).map(|n| n as usize).ok_or_else(|| {
                        RpcError::invalid_params(format!("dataSlice.{name} must be a non-negative integer"))
                    })
                };
                Some((field("offset")?, field("length")?))
            }
        };
        Ok(Self { encoding, slice })
    }

    fn encode(&self, account: &Account) -> RpcResult {
        let data = match self.slice {
            Some((offset, length)) => {
                let start = offset.min(account.data.len());
                &account.data[start..(start + length).min(account.data.len())]
            }
            None => &account.data[..],
        };
        if matches!(self.encoding.as_str(), "base58" | "binary") && data.len() > MAX_BASE58_BYTES {
            return Err(RpcError::invalid_params(
                "Encoded binary (base 58) data should be less than 128 bytes, please use Base64 encoding.",
            ));
        }
        let encoded = match self.encoding.as_str() {
            "binary" => json!(bs58::encode(data).into_string()),
            "base58" => json!([bs58::encode(data).into_string(), "base58"]),
            // jsonParsed falls back to base64 for programs without a parser, as Agave does.
            _ => json!([base64::engine::general_purpose::STANDARD.encode(data), "base64"]),
        };
        Ok(json!({
            "data": encoded,
            "executable": account.executable,
            "lamports": account.lamports,
            "owner": account.owner.to_string(),
            "rentEpoch": account.rent_epoch,
            "space": account.data.len(),
        }))
    }
}

/// A `getProgramAccounts` filter.
enum Filter {
    DataSize(usize),
    Memcmp { offset: usize, bytes: Vec<u8> },
}

impl Filter {
    fn parse_all(filters: Option<&Value>) -> Result<Vec<Self>, RpcError> {
        let Some(filters) = filters.filter(|f| !f.is_null()) else { return Ok(vec![]) };
        let filters = filters.as_array().ok_or_else(|| RpcError::invalid_params("filters must be an array"))?;
        filters.iter().map(Self::parse).collect()
    }

    fn parse(filter: &Value) -> Result<Self, RpcError> {
        if let Some(size) = filter.get("dataSize") {
            let size = size.as_u64().ok_or_else(|| RpcError::invalid_params("dataSize must be a non-negative integer"))?;
            return Ok(Self::DataSize(size as usize));
        }
        let memcmp = filter
            .get("memcmp")
            .ok_or_else(|| RpcError::invalid_params("each filter must be {\"dataSize\": n} or {\"memcmp\": {...}}"))?;
        let offset = memcmp
            .get("offset")
            .and_then(Value::as_u64)
            .ok_or_else(|| RpcError::invalid_params("memcmp.offset must be a non-negative integer"))? as usize;
        let text = memcmp
            .get("bytes")
            .and_then(Value::as_str)
            .ok_or_else(|| RpcError::invalid_params("memcmp.bytes must be a string"))?;
        let bytes = match memcmp.get("encoding").and_then(Value::as_str).unwrap_or("base58") {
            "base58" => bs58::decode(text).into_vec().ok(),
            "base64" => base64::engine::general_purpose::STANDARD.decode(text).ok(),
            other => return Err(RpcError::invalid_params(format!("unknown memcmp encoding {other:?}"))),
        }
        .ok_or_else(|| RpcError::invalid_params("memcmp.bytes does not decode with its encoding"))?;
        Ok(Self::Memcmp { offset, bytes })
    }

    fn matches(&self, data: &[u8]) -> bool {
        match self {
            Self::DataSize(size) => data.len() == *size,
            Self::Memcmp { offset, bytes } => data.get(*offset..offset + bytes.len()) == Some(&bytes[..]),
        }
    }
}

/// Positional parameters with errors that name the parameter at fault.
struct Params(Vec<Value>);

impl Params {
    fn get(&self, i: usize, what: &str) -> Result<&Value, RpcError> {
        self.0.get(i).filter(|v| !v.is_null()).ok_or_else(|| RpcError::invalid_params(format!("params[{i}] is missing; expected {what}")))
    }

    fn str(&self, i: usize, what: &str) -> Result<&str, RpcError> {
        self.get(i, what)?.as_str().ok_or_else(|| RpcError::invalid_params(format!("params[{i}] must be {what}")))
    }

    fn u64(&self, i: usize, what: &str) -> Result<u64, RpcError> {
        self.get(i, what)?.as_u64().ok_or_else(|| RpcError::invalid_params(format!("params[{i}] must be {what} (a non-negative integer)")))
    }

    /// A base58 value at `i`, e.g. `what` = "a base58 public key".
    fn parsed<T: FromStr>(&self, i: usize, what: &str) -> Result<T, RpcError> {
        T::from_str(self.str(i, what)?).map_err(|_| RpcError::invalid_params(format!("params[{i}] is not {what}")))
    }

    /// An array of base58 values at `i`: `item` names one ("a base58 signature"), `items` many.
    fn parsed_list<T: FromStr>(&self, i: usize, item: &str, items: &str) -> Result<Vec<T>, RpcError> {
        let list = self
            .get(i, &format!("an array of {items}"))?
            .as_array()
            .ok_or_else(|| RpcError::invalid_params(format!("params[{i}] must be an array of {items}")))?;
        list.iter()
            .enumerate()
            .map(|(j, v)| {
                v.as_str()
                    .and_then(|s| T::from_str(s).ok())
                    .ok_or_else(|| RpcError::invalid_params(format!("params[{i}][{j}] is not {item}")))
            })
            .collect()
    }

    fn pubkey(&self, i: usize) -> Result<Pubkey, RpcError> {
        self.parsed(i, "a base58 public key")
    }

    fn pubkeys(&self, i: usize) -> Result<Vec<Pubkey>, RpcError> {
        self.parsed_list(i, "a base58 public key", "base58 public keys")
    }

    fn signature(&self, i: usize) -> Result<Signature, RpcError> {
        self.parsed(i, "a base58 signature")
    }

    fn signatures(&self, i: usize) -> Result<Vec<Signature>, RpcError> {
        self.parsed_list(i, "a base58 signature", "base58 signatures")
    }

    fn base64(&self, i: usize, what: &str) -> Result<Vec<u8>, RpcError> {
        base64::engine::general_purpose::STANDARD
            .decode(self.str(i, what)?)
            .map_err(|_| RpcError::invalid_params(format!("params[{i}] is not valid base64")))
    }

    /// The optional configuration object at `i` (missing or null: empty).
    fn config(&self, i: usize) -> Result<Value, RpcError> {
        match self.0.get(i) {
            None | Some(Value::Null) => Ok(json!({})),
            Some(v @ Value::Object(_)) => Ok(v.clone()),
            Some(_) => Err(RpcError::invalid_params(format!("params[{i}] must be a configuration object"))),
        }
    }

    /// A wire transaction in the encoding the config names (base58 by default).
    fn transaction(&self, i: usize, config: &Value) -> Result<VersionedTransaction, RpcError> {
        let text = self.str(i, "an encoded transaction")?;
        let bytes = match config.get("encoding").and_then(Value::as_str).unwrap_or("base58") {
            "base58" => bs58::decode(text).into_vec().ok(),
            "base64" => base64::engine::general_purpose::STANDARD.decode(text).ok(),
            other => return Err(RpcError::invalid_params(format!("unsupported transaction encoding {other:?}; use base58 or base64"))),
        }
        .ok_or_else(|| RpcError::invalid_params(format!("params[{i}] does not decode with the given encoding")))?;
        bincode::deserialize(&bytes)
            .map_err(|_| RpcError::invalid_params(format!("params[{i}] is not a serialized transaction")))
    }
}
