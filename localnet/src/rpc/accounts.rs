//! Account reads: balances, rent, airdrops, and accounts in the encodings a validator offers.
use base64::Engine;
use serde_json::{json, Value};
use solana_account::Account;
use solana_account_decoder::parse_account_data::{
    parse_account_data_v3, AccountAdditionalDataV3, SplTokenAdditionalDataV2,
};
use solana_account_decoder::parse_token::{get_token_account_mint, is_known_spl_token_id};
use solana_commitment_config::CommitmentLevel;
use solana_pubkey::Pubkey;
use solana_rpc_client_types::config::RpcLargestAccountsFilter;
use solana_rpc_client_types::request::{
    MAX_GET_PROGRAM_ACCOUNT_FILTERS as MAX_FILTERS, MAX_MULTIPLE_ACCOUNTS,
};
use solana_rpc_client_types::response::{RpcAccountBalance, RpcSupply};

use super::config::{
    level, AccountConfig, AccountEncoding, BytesEncoding, ContextConfig, DataSlice, Filter,
    LargestAccountsConfig, ProgramAccountsConfig, SupplyConfig,
};
use super::error::{RpcError, RpcResult};
use super::params::{base58_list, Base58};
use super::response::with_context_at;
use super::tokens::mint_decimals;
use crate::chain::{Chain, SendError};

/// Agave's limit on base58-encoded account data.
const MAX_BASE58_BYTES: usize = 128;
/// No account can hold more (the runtime's MAX_PERMITTED_DATA_LENGTH).
const MAX_ACCOUNT_DATA_LEN: usize = 10 * 1024 * 1024;
/// Agave's limits on a memcmp filter's bytes.
const MAX_MEMCMP_BYTES: usize = 128;
const MAX_MEMCMP_BASE58_LEN: usize = 175;

impl AccountConfig {
    /// The level to read at, finalized unless the client says otherwise.
    pub fn level(&self) -> CommitmentLevel {
        self.commitment.unwrap_or_default()
    }

    /// The account at `address` as `getAccountInfo` shows it.
    pub async fn encode(&self, chain: &Chain, address: &Pubkey, account: &Account) -> RpcResult {
        if self.encoding == Some(AccountEncoding::JsonParsed) {
            if let Some(parsed) = parse(chain, address, account).await {
                return Ok(account_value(account, parsed));
            }
        }
        self.encode_bytes(account)
    }

    /// The account with its bytes in the requested encoding (base64 for jsonParsed, as Agave
    /// falls back to when no parser knows the account).
    fn encode_bytes(&self, account: &Account) -> RpcResult {
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
        Ok(account_value(account, encoded))
    }
}

fn account_value(account: &Account, data: Value) -> Value {
    json!({
        "data": data,
        "executable": account.executable,
        "lamports": account.lamports,
        "owner": account.owner.to_string(),
        "rentEpoch": account.rent_epoch,
        "space": account.data.len(),
    })
}

/// The account's data as Agave's parsers read it (SPL Token and Token-2022 with their mint's
/// decimals, nonce, stake, vote, sysvars, lookup tables, the upgradeable loader, config), or
/// `None` where no parser knows it.
async fn parse(chain: &Chain, address: &Pubkey, account: &Account) -> Option<Value> {
    let mut additional = AccountAdditionalDataV3::default();
    if is_known_spl_token_id(&account.owner) {
        if let Some(mint) = get_token_account_mint(&account.data) {
            let decimals = mint_decimals(chain, &mint).await?;
            additional.spl_token_additional_data =
                Some(SplTokenAdditionalDataV2::with_decimals(decimals));
        }
    }
    let parsed = parse_account_data_v3(address, &account.owner, &account.data, Some(additional));
    parsed
        .ok()
        .and_then(|parsed| serde_json::to_value(parsed).ok())
}

/// At most `length` bytes from `offset`, empty past the end; no arithmetic on client numbers.
fn slice_data(data: &[u8], slice: DataSlice) -> &[u8] {
    let rest = data.get(slice.offset..).unwrap_or_default();
    &rest[..slice.length.min(rest.len())]
}

/// A filter with its bytes decoded and checked.
pub enum CheckedFilter {
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
    pub fn matches(&self, data: &[u8]) -> bool {
        match self {
            Self::DataSize(size) => data.len() as u64 == *size,
            Self::Memcmp { offset, bytes } => data
                .get(*offset..)
                .is_some_and(|rest| rest.starts_with(bytes)),
        }
    }
}

impl ProgramAccountsConfig {
    /// The encoding, and the filters checked as Agave bounds them.
    pub fn into_parts(self) -> Result<(AccountConfig, Vec<CheckedFilter>), RpcError> {
        let filters = self.filters.unwrap_or_default();
        if filters.len() > MAX_FILTERS {
            return Err(RpcError::InvalidParams(format!(
                "Too many filters provided; max {MAX_FILTERS}"
            )));
        }
        let filters = filters
            .into_iter()
            .map(Filter::check)
            .collect::<Result<_, _>>()?;
        Ok((self.account, filters))
    }
}

pub async fn get_balance(
    chain: &Chain,
    (Base58(address), config): (Base58<Pubkey>, Option<ContextConfig>),
) -> RpcResult {
    let slot = chain.level_slot(level(config));
    let account = chain
        .account_at(&address, slot)
        .await
        .map_err(RpcError::Internal)?;
    Ok(with_context_at(
        slot,
        json!(account.map_or(0, |account| account.lamports)),
    ))
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
    let slot = chain.level_slot(config.level());
    let account = chain
        .account_at(&address, slot)
        .await
        .map_err(RpcError::Internal)?;
    let value = match account {
        Some(account) => config.encode(chain, &address, &account).await?,
        None => Value::Null,
    };
    Ok(with_context_at(slot, value))
}

pub async fn get_multiple_accounts(
    chain: &Chain,
    (addresses, config): (Vec<Base58<Pubkey>>, Option<AccountConfig>),
) -> RpcResult {
    let addresses = base58_list(addresses, MAX_MULTIPLE_ACCOUNTS)?;
    let config = config.unwrap_or_default();
    let slot = chain.level_slot(config.level());
    let mut values = Vec::with_capacity(addresses.len());
    for address in addresses {
        let account = chain
            .account_at(&address, slot)
            .await
            .map_err(RpcError::Internal)?;
        values.push(match account {
            Some(account) => config.encode(chain, &address, &account).await?,
            None => Value::Null,
        });
    }
    Ok(with_context_at(slot, Value::Array(values)))
}

pub async fn get_program_accounts(
    chain: &Chain,
    (Base58(program), config): (Base58<Pubkey>, Option<ProgramAccountsConfig>),
) -> RpcResult {
    let config = config.unwrap_or_default();
    let contextual = config.with_context;
    let (encoding, filters) = config.into_parts()?;
    let slot = chain.level_slot(encoding.level());
    let mut matches = Vec::new();
    for (address, account) in chain
        .program_accounts(&program, slot)
        .await
        .map_err(RpcError::Internal)?
    {
        if filters.iter().all(|f| f.matches(&account.data)) {
            let encoded = encoding.encode(chain, &address, &account).await?;
            matches.push(json!({"pubkey": address.to_string(), "account": encoded}));
        }
    }
    if contextual {
        Ok(with_context_at(slot, Value::Array(matches)))
    } else {
        Ok(Value::Array(matches))
    }
}

/// The supply over every account the chain knows; no account is non-circulating (no lockups
/// here).
pub async fn get_supply(chain: &Chain, (config,): (Option<SupplyConfig>,)) -> RpcResult {
    let slot = chain.level_slot(config.and_then(|c| c.commitment).unwrap_or_default());
    let total = chain
        .known_accounts(slot)
        .await
        .map_err(RpcError::Internal)?
        .iter()
        .map(|(_, account)| account.lamports)
        .sum::<u64>();
    let supply = RpcSupply {
        total,
        circulating: total,
        non_circulating: 0,
        non_circulating_accounts: vec![],
    };
    Ok(with_context_at(slot, json!(supply)))
}

/// Agave lists the 20 largest.
const MAX_LARGEST_ACCOUNTS: usize = 20;

/// The largest accounts by balance; all of them circulate, so the `nonCirculating` filter
/// leaves none.
pub async fn get_largest_accounts(
    chain: &Chain,
    (config,): (Option<LargestAccountsConfig>,),
) -> RpcResult {
    let config = config.unwrap_or_default();
    let slot = chain.level_slot(config.commitment.unwrap_or_default());
    let mut accounts = match config.filter {
        Some(RpcLargestAccountsFilter::NonCirculating) => vec![],
        _ => chain
            .known_accounts(slot)
            .await
            .map_err(RpcError::Internal)?,
    };
    accounts.sort_by_key(|(_, account)| std::cmp::Reverse(account.lamports));
    let largest: Vec<RpcAccountBalance> = accounts
        .into_iter()
        .take(MAX_LARGEST_ACCOUNTS)
        .map(|(address, account)| RpcAccountBalance {
            address: address.to_string(),
            lamports: account.lamports,
        })
        .collect();
    Ok(with_context_at(slot, json!(largest)))
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
