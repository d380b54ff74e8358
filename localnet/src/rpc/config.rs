//! The requests' configuration objects and wrapper forms, as Agave's rpc-client-types shape
//! them (`config.rs`): what each method's optional parameters may say, and nothing they do.
//! Below every method module; imports only the parameter types and the error.
use serde::Deserialize;
use solana_commitment_config::CommitmentLevel;
use solana_pubkey::Pubkey;
use solana_rpc_client_types::config::RpcLargestAccountsFilter;
use solana_signature::Signature;

use super::error::RpcError;
use super::params::Base58;

/// An optional slot with the method's config allowed in its place, as Agave's
/// `RpcBlocksConfigWrapper` and `RpcLeaderScheduleConfigWrapper` read getBlocks' end slot and
/// getLeaderSchedule's slot.
#[derive(Deserialize)]
#[serde(untagged)]
pub enum SlotOrConfig<C> {
    Slot(u64),
    Config(C),
}

impl<C> SlotOrConfig<C> {
    /// The slot, and the config: the one given in the slot's place, else `config`.
    pub fn unzip(slot_or_config: Option<Self>, config: Option<C>) -> (Option<u64>, Option<C>) {
        match slot_or_config {
            Some(Self::Slot(slot)) => (Some(slot), config),
            Some(Self::Config(in_place)) => (None, Some(in_place)),
            None => (None, config),
        }
    }
}

/// The configuration most methods take: the commitment level to read at (Agave's default,
/// finalized, when absent).
#[derive(Deserialize, Default, Clone, Copy)]
pub struct ContextConfig {
    pub commitment: Option<CommitmentLevel>,
}

/// The level a config asks for, finalized by default as on a validator.
pub fn level(config: Option<ContextConfig>) -> CommitmentLevel {
    config.and_then(|c| c.commitment).unwrap_or_default()
}

/// Refuses `processed` where Agave serves only confirmed and finalized data (blocks, stored
/// transactions, signatures for an address, block subscriptions).
pub fn at_least_confirmed(level: CommitmentLevel) -> Result<CommitmentLevel, RpcError> {
    match level {
        CommitmentLevel::Processed => Err(RpcError::InvalidParams(
            "Method does not support commitment below `confirmed`".to_string(),
        )),
        level => Ok(level),
    }
}

#[derive(Deserialize, Default, Clone)]
#[serde(rename_all = "camelCase")]
pub struct AccountConfig {
    pub encoding: Option<AccountEncoding>,
    pub data_slice: Option<DataSlice>,
    pub commitment: Option<CommitmentLevel>,
}

#[derive(Deserialize, Default, Clone, Copy, PartialEq)]
pub enum AccountEncoding {
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
    /// Parsed where Agave has a parser for the account's program, else base64 as Agave answers.
    #[serde(rename = "jsonParsed")]
    JsonParsed,
}

/// `dataSlice`: offset and length are the client's; neither is trusted to stay in bounds.
#[derive(Deserialize, Clone, Copy)]
pub struct DataSlice {
    pub offset: usize,
    pub length: usize,
}

/// A `getProgramAccounts` filter.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Filter {
    DataSize(u64),
    Memcmp(Memcmp),
}

#[derive(Deserialize)]
pub struct Memcmp {
    pub offset: usize,
    pub bytes: String,
    #[serde(default)]
    pub encoding: BytesEncoding,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub enum BytesEncoding {
    #[default]
    Base58,
    Base64,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct ProgramAccountsConfig {
    #[serde(flatten)]
    pub account: AccountConfig,
    pub filters: Option<Vec<Filter>>,
    #[serde(default)]
    pub with_context: bool,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct SupplyConfig {
    pub commitment: Option<CommitmentLevel>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct LargestAccountsConfig {
    pub filter: Option<RpcLargestAccountsFilter>,
    pub commitment: Option<CommitmentLevel>,
}

#[derive(Deserialize, Default, Clone, Copy, PartialEq)]
#[serde(rename_all = "camelCase")]
pub enum TransactionDetails {
    #[default]
    Full,
    Signatures,
    None,
}

/// Every member may be absent or null (solana-py sends nulls), each then taking its default.
#[derive(Deserialize, Default, Clone)]
#[serde(rename_all = "camelCase")]
pub struct BlockConfig {
    pub encoding: Option<TransactionEncoding>,
    pub transaction_details: Option<TransactionDetails>,
    /// Rewards are listed unless the client says `false`.
    pub rewards: Option<bool>,
    pub max_supported_transaction_version: Option<u8>,
    pub commitment: Option<CommitmentLevel>,
}

impl From<TransactionEncoding> for BlockConfig {
    fn from(encoding: TransactionEncoding) -> Self {
        Self {
            encoding: Some(encoding),
            ..Self::default()
        }
    }
}

/// How a transaction arrives on the wire.
#[derive(Deserialize, Default, Clone, Copy)]
#[serde(rename_all = "camelCase")]
pub enum WireEncoding {
    #[default]
    Base58,
    Base64,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct SendConfig {
    #[serde(default)]
    pub skip_preflight: bool,
    #[serde(default)]
    pub encoding: WireEncoding,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct SimulateConfig {
    #[serde(default)]
    pub sig_verify: bool,
    #[serde(default)]
    pub replace_recent_blockhash: bool,
    #[serde(default)]
    pub encoding: WireEncoding,
}

/// How `getTransaction` returns the transaction.
#[derive(Deserialize, Default, Clone, Copy)]
pub enum TransactionEncoding {
    #[default]
    #[serde(rename = "json")]
    Json,
    #[serde(rename = "jsonParsed")]
    JsonParsed,
    #[serde(rename = "base64")]
    Base64,
    #[serde(rename = "base58")]
    Base58,
}

/// getBlock's and getTransaction's config, or (the older form, Agave's
/// `RpcEncodingConfigWrapper`) just an encoding in its place.
#[derive(Deserialize)]
#[serde(untagged)]
pub enum EncodingOrConfig<C> {
    Encoding(TransactionEncoding),
    Config(C),
}

impl<C: Default + From<TransactionEncoding>> EncodingOrConfig<C> {
    pub fn config(wrapper: Option<Self>) -> C {
        match wrapper {
            None => C::default(),
            Some(Self::Encoding(encoding)) => C::from(encoding),
            Some(Self::Config(config)) => config,
        }
    }
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct TransactionConfig {
    #[serde(default)]
    pub encoding: TransactionEncoding,
    pub max_supported_transaction_version: Option<u8>,
    pub commitment: Option<CommitmentLevel>,
}

impl From<TransactionEncoding> for TransactionConfig {
    fn from(encoding: TransactionEncoding) -> Self {
        Self {
            encoding,
            ..Self::default()
        }
    }
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct SignaturesForAddressConfig {
    pub limit: Option<usize>,
    pub before: Option<Base58<Signature>>,
    pub until: Option<Base58<Signature>>,
    pub commitment: Option<CommitmentLevel>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct VoteAccountsConfig {
    pub vote_pubkey: Option<Base58<Pubkey>>,
}

#[derive(Deserialize, Default)]
pub struct LeaderScheduleConfig {
    pub identity: Option<Base58<Pubkey>>,
}

/// Which token accounts: those of one mint, or all of one token program's.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum TokenAccountsFilter {
    Mint(Base58<Pubkey>),
    ProgramId(Base58<Pubkey>),
}
