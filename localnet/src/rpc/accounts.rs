//! Account reads: balances, rent, airdrops, and accounts in the encodings a validator offers.
use base64::Engine;
use serde::Deserialize;
use serde_json::{json, Value};
use solana_account::Account;
use solana_pubkey::Pubkey;
use solana_rpc_client_types::request::{
    MAX_GET_PROGRAM_ACCOUNT_FILTERS as MAX_FILTERS, MAX_MULTIPLE_ACCOUNTS,
};

use super::error::{RpcError, RpcResult};
use super::params::{base58_list, Base58, ContextConfig};
use super::with_context;
use crate::chain::{Chain, SendError};

/// Agave's limit on base58-encoded account data.
const MAX_BASE58_BYTES: usize = 128;
/// No account can hold more (the runtime's MAX_PERMITTED_DATA_LENGTH).
const MAX_ACCOUNT_DATA_LEN: usize = 10 * 1024 * 1024;
/// Agave's limits on a memcmp filter's bytes.
const MAX_MEMCMP_BYTES: usize = 128;
const MAX_MEMCMP_BASE58_LEN: usize = 175;

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct AccountConfig {
    encoding: Option<AccountEncoding>,
    data_slice: Option<DataSlice>,
}

#[derive(Deserialize, Default, Clone, Copy, PartialEq)]
enum AccountEncoding {
    /// Agave's default: a bare base58 string.
    #[default]
    #[serde(rename = "binary")]
    Binary,
    #[serde(rename = "base58")]
    Base58,
    #[serde(rename = "base64")]
    Base64,
    /// What the stock Rust client (and so the Anchor and Solana CLIs) asks for.
    #[serde(rename = "base64+zstd")]
    Base64Zstd,
    /// No parser here knows this project's accounts, so it answers base64 as Agave does then.
    #[serde(rename = "jsonParsed")]
    JsonParsed,
}

/// `dataSlice`: offset and length are the client's; neither is trusted to stay in bounds.
#[derive(Deserialize, Clone, Copy)]
struct DataSlice {
    offset: usize,
    length: usize,
}

impl AccountConfig {
    /// The account as `getAccountInfo` shows it.
    pub fn encode(&self, account: &Account) -> RpcResult {
        let data = match self.data_slice {
            Some(slice) => slice_data(&account.data, slice),
            None => &account.data[..],
        };
        let encoding = self.encoding.unwrap_or_default();
        if matches!(encoding, AccountEncoding::Binary | AccountEncoding::Base58)
            && data.len() > MAX_BASE58_BYTES
        {
            return Err(RpcError::InvalidParams(
                "Encoded binary (base 58) data should be less than 128 bytes, please use Base64 encoding.".to_string(),
            ));
        }
        let encoded = match encoding {
            AccountEncoding::Binary => json!(bs58::encode(data).into_string()),
            AccountEncoding::Base58 => json!([bs58::encode(data).into_string(), "base58"]),
            AccountEncoding::Base64 | AccountEncoding::JsonParsed => {
                json!([
                    base64::engine::general_purpose::STANDARD.encode(data),
                    "base64"
                ])
            }
            AccountEncoding::Base64Zstd => {
                let compressed = zstd::encode_all(data, 0)
                    .map_err(|e| RpcError::Internal(format!("zstd: {e}")))?;
                json!([
                    base64::engine::general_purpose::STANDARD.encode(compressed),
                    "base64+zstd"
                ])
            }
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

/// At most `length` bytes from `offset`, empty past the end; no arithmetic on client numbers.
fn slice_data(data: &[u8], slice: DataSlice) -> &[u8] {
    let rest = data.get(slice.offset..).unwrap_or_default();
    &rest[..slice.length.min(rest.len())]
}

/// A `getProgramAccounts` filter.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
enum Filter {
    DataSize(u64),
    Memcmp(Memcmp),
}

#[derive(Deserialize)]
struct Memcmp {
    offset: usize,
    bytes: String,
    #[serde(default)]
    encoding: BytesEncoding,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
enum BytesEncoding {
    #[default]
    Base58,
    Base64,
}

/// A filter with its bytes decoded and checked.
enum CheckedFilter {
    DataSize(u64),
    Memcmp { offset: usize, bytes: Vec<u8> },
}

impl Filter {
    fn check(self) -> Result<CheckedFilter, RpcError> {
        let memcmp = match self {
            Self::DataSize(size) => return Ok(CheckedFilter::DataSize(size)),
            Self::Memcmp(memcmp) => memcmp,
        };
        let invalid = |why: &str| RpcError::InvalidParams(format!("memcmp: {why}"));
        let bytes = match memcmp.encoding {
            BytesEncoding::Base58 if memcmp.bytes.len() > MAX_MEMCMP_BASE58_LEN => {
                return Err(invalid("base58 encoded bytes longer than 175"))
            }
            BytesEncoding::Base58 => bs58::decode(&memcmp.bytes).into_vec().ok(),
            BytesEncoding::Base64 => base64::engine::general_purpose::STANDARD
                .decode(&memcmp.bytes)
                .ok(),
        }
        .ok_or_else(|| invalid("bytes do not decode with their encoding"))?;
        if bytes.len() > MAX_MEMCMP_BYTES {
            return Err(invalid("decoded bytes longer than 128"));
        }
        Ok(CheckedFilter::Memcmp {
            offset: memcmp.offset,
            bytes,
        })
    }
}

impl CheckedFilter {
    fn matches(&self, data: &[u8]) -> bool {
        match self {
            Self::DataSize(size) => data.len() as u64 == *size,
            Self::Memcmp { offset, bytes } => data
                .get(*offset..)
                .is_some_and(|rest| rest.starts_with(bytes)),
        }
    }
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct ProgramAccountsConfig {
    #[serde(flatten)]
    account: AccountConfig,
    filters: Option<Vec<Filter>>,
    #[serde(default)]
    with_context: bool,
}

pub async fn get_balance(
    chain: &Chain,
    (Base58(address), _): (Base58<Pubkey>, Option<ContextConfig>),
) -> RpcResult {
    with_context(
        chain,
        json!(chain.balance(&address).await.map_err(RpcError::Internal)?),
    )
    .await
}

pub async fn get_minimum_balance_for_rent_exemption(
    chain: &Chain,
    (data_len, _): (usize, Option<ContextConfig>),
) -> RpcResult {
    if data_len > MAX_ACCOUNT_DATA_LEN {
        return Err(RpcError::InvalidParams(format!(
            "params[0]: no account holds more than {MAX_ACCOUNT_DATA_LEN} bytes"
        )));
    }
    let lamports = chain
        .minimum_balance_for_rent_exemption(data_len)
        .await
        .map_err(RpcError::Internal)?;
    Ok(json!(lamports))
}

pub async fn request_airdrop(
    chain: &Chain,
    (Base58(to), lamports, _): (Base58<Pubkey>, u64, Option<ContextConfig>),
) -> RpcResult {
    match chain.airdrop(&to, lamports).await {
        Ok(signature) => Ok(json!(signature.to_string())),
        Err(SendError::Preflight(simulation)) => Err(RpcError::Internal(format!(
            "airdrop request failed: {}",
            simulation.err.map(|e| e.to_string()).unwrap_or_default()
        ))),
        Err(SendError::Internal(e)) => Err(RpcError::Internal(e)),
        Err(SendError::SignatureVerification) => {
            Err(RpcError::Internal("faucet signature rejected".to_string()))
        }
    }
}

pub async fn get_account_info(
    chain: &Chain,
    (Base58(address), config): (Base58<Pubkey>, Option<AccountConfig>),
) -> RpcResult {
    let config = config.unwrap_or_default();
    let account = chain.account(&address).await.map_err(RpcError::Internal)?;
    let value = account.map(|a| config.encode(&a)).transpose()?;
    with_context(chain, value.unwrap_or(Value::Null)).await
}

pub async fn get_multiple_accounts(
    chain: &Chain,
    (addresses, config): (Vec<Base58<Pubkey>>, Option<AccountConfig>),
) -> RpcResult {
    let addresses = base58_list(addresses, MAX_MULTIPLE_ACCOUNTS)?;
    let config = config.unwrap_or_default();
    let mut values = Vec::with_capacity(addresses.len());
    for address in addresses {
        let account = chain.account(&address).await.map_err(RpcError::Internal)?;
        values.push(
            account
                .map(|a| config.encode(&a))
                .transpose()?
                .unwrap_or(Value::Null),
        );
    }
    with_context(chain, Value::Array(values)).await
}

pub async fn get_program_accounts(
    chain: &Chain,
    (Base58(program), config): (Base58<Pubkey>, Option<ProgramAccountsConfig>),
) -> RpcResult {
    let config = config.unwrap_or_default();
    let filters = config.filters.unwrap_or_default();
    if filters.len() > MAX_FILTERS {
        return Err(RpcError::InvalidParams(format!(
            "Too many filters provided; max {MAX_FILTERS}"
        )));
    }
    let filters = filters
        .into_iter()
        .map(Filter::check)
        .collect::<Result<Vec<_>, _>>()?;
    let mut matches = Vec::new();
    for (address, account) in chain
        .program_accounts(&program)
        .await
        .map_err(RpcError::Internal)?
    {
        if filters.iter().all(|f| f.matches(&account.data)) {
            matches.push(
                json!({"pubkey": address.to_string(), "account": config.account.encode(&account)?}),
            );
        }
    }
    if config.with_context {
        with_context(chain, Value::Array(matches)).await
    } else {
        Ok(Value::Array(matches))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_never_reach_past_the_data_whatever_the_numbers() {
        let data = [1u8, 2, 3, 4];
        let slice = |offset, length| slice_data(&data, DataSlice { offset, length });
        assert_eq!(slice(1, 2), &[2, 3]);
        assert_eq!(slice(2, usize::MAX), &[3, 4]);
        assert_eq!(slice(4, 1), &[] as &[u8]);
        assert_eq!(slice(usize::MAX, usize::MAX), &[] as &[u8]);
    }

    #[test]
    fn memcmp_at_any_offset_is_a_plain_comparison() {
        let memcmp = |offset| CheckedFilter::Memcmp {
            offset,
            bytes: vec![3, 4],
        };
        assert!(memcmp(2).matches(&[1, 2, 3, 4]));
        assert!(!memcmp(3).matches(&[1, 2, 3, 4]));
        assert!(!memcmp(usize::MAX).matches(&[1, 2, 3, 4]));
        assert!(!memcmp(usize::MAX - 1).matches(&[1, 2, 3, 4]));
    }
}
