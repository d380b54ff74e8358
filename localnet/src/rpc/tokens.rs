//! SPL Token and Token-2022: balances, supplies and the token accounts of an owner or a mint,
//! read from the accounts the chain knows (every account a transaction touched, and genesis's).
use serde_json::{json, Value};
use solana_account::Account;
use solana_account_decoder::parse_account_data::SplTokenAdditionalDataV2;
use solana_account_decoder::parse_token::{
    is_known_spl_token_id, token_amount_to_ui_amount_v3, UiTokenAmount,
};
use solana_pubkey::Pubkey;
use solana_rpc_client_types::response::RpcTokenAccountBalance;
use spl_token_2022_interface::extension::StateWithExtensions;
use spl_token_2022_interface::state::{Account as TokenAccount, Mint};

use super::config::{level, AccountConfig, ContextConfig, TokenAccountsFilter};
use super::error::{RpcError, RpcResult};
use super::params::Base58;
use super::response::with_context_at;
use crate::chain::Chain;

/// Agave lists at most this many of a mint's largest accounts.
const MAX_LARGEST_TOKEN_ACCOUNTS: usize = 20;

fn invalid(why: &str) -> RpcError {
    RpcError::InvalidParams(why.to_string())
}

/// The mint at `address`, at `slot`, with the program that owns it.
async fn mint(chain: &Chain, address: &Pubkey, slot: u64) -> Result<(Pubkey, Mint), RpcError> {
    let account = chain
        .account_at(address, slot)
        .await
        .map_err(RpcError::Internal)?
        .ok_or_else(|| invalid("could not find mint"))?;
    if !is_known_spl_token_id(&account.owner) {
        return Err(invalid("not a Token mint"));
    }
    let mint = StateWithExtensions::<Mint>::unpack(&account.data)
        .map_err(|_| invalid("not a Token mint"))?
        .base;
    Ok((account.owner, mint))
}

/// `amount` of a mint with `decimals`, as a validator shows token amounts.
fn ui_amount(amount: u64, decimals: u8) -> UiTokenAmount {
    token_amount_to_ui_amount_v3(amount, &SplTokenAdditionalDataV2::with_decimals(decimals))
}

/// The decimals token amounts of `mint` are shown with, for the jsonParsed account parser.
pub async fn mint_decimals(chain: &Chain, mint_address: &Pubkey) -> Option<u8> {
    // A mint's decimals never change once it is initialized: its newest state will do.
    mint(chain, mint_address, u64::MAX)
        .await
        .ok()
        .map(|(_, m)| m.decimals)
}

fn unpack_token_account(account: &Account) -> Option<TokenAccount> {
    if !is_known_spl_token_id(&account.owner) {
        return None;
    }
    StateWithExtensions::<TokenAccount>::unpack(&account.data)
        .ok()
        .map(|state| state.base)
}

/// Every known token account of `program` at `slot` that `keep` accepts.
async fn token_accounts(
    chain: &Chain,
    program: &Pubkey,
    slot: u64,
    keep: impl Fn(&TokenAccount) -> bool,
) -> Result<Vec<(Pubkey, Account, TokenAccount)>, RpcError> {
    let owned = chain
        .program_accounts(program, slot)
        .await
        .map_err(RpcError::Internal)?;
    Ok(owned
        .into_iter()
        .filter_map(|(address, account)| {
            let token = unpack_token_account(&account)?;
            keep(&token).then_some((address, account, token))
        })
        .collect())
}

pub async fn get_token_account_balance(
    chain: &Chain,
    (Base58(address), config): (Base58<Pubkey>, Option<ContextConfig>),
) -> RpcResult {
    let slot = chain.level_slot(level(config));
    let account = chain
        .account_at(&address, slot)
        .await
        .map_err(RpcError::Internal)?
        .ok_or_else(|| invalid("could not find account"))?;
    let token = unpack_token_account(&account).ok_or_else(|| invalid("not a Token account"))?;
    let (_, mint) = mint(chain, &token.mint, slot).await?;
    Ok(with_context_at(
        slot,
        json!(ui_amount(token.amount, mint.decimals)),
    ))
}

pub async fn get_token_supply(
    chain: &Chain,
    (Base58(address), config): (Base58<Pubkey>, Option<ContextConfig>),
) -> RpcResult {
    let slot = chain.level_slot(level(config));
    let (_, mint) = mint(chain, &address, slot).await?;
    Ok(with_context_at(
        slot,
        json!(ui_amount(mint.supply, mint.decimals)),
    ))
}

pub async fn get_token_largest_accounts(
    chain: &Chain,
    (Base58(address), config): (Base58<Pubkey>, Option<ContextConfig>),
) -> RpcResult {
    let slot = chain.level_slot(level(config));
    let (program, mint) = mint(chain, &address, slot).await?;
    let mut holders = token_accounts(chain, &program, slot, |token| token.mint == address).await?;
    holders.sort_by_key(|(_, _, token)| std::cmp::Reverse(token.amount));
    let largest: Vec<RpcTokenAccountBalance> = holders
        .into_iter()
        .take(MAX_LARGEST_TOKEN_ACCOUNTS)
        .map(|(address, _, token)| RpcTokenAccountBalance {
            address: address.to_string(),
            amount: ui_amount(token.amount, mint.decimals),
        })
        .collect();
    Ok(with_context_at(slot, json!(largest)))
}

/// The token program and (for a mint filter) the mint a filter names.
async fn filter_scope(
    chain: &Chain,
    filter: TokenAccountsFilter,
    slot: u64,
) -> Result<(Pubkey, Option<Pubkey>), RpcError> {
    match filter {
        TokenAccountsFilter::Mint(Base58(address)) => {
            let (program, _) = mint(chain, &address, slot).await?;
            Ok((program, Some(address)))
        }
        TokenAccountsFilter::ProgramId(Base58(program)) if is_known_spl_token_id(&program) => {
            Ok((program, None))
        }
        TokenAccountsFilter::ProgramId(_) => Err(invalid("unrecognized Token program id")),
    }
}

/// Whose token accounts `getTokenAccountsBy…` lists.
enum Holder {
    Owner(Pubkey),
    Delegate(Pubkey),
}

async fn token_accounts_of(
    chain: &Chain,
    holder: Holder,
    filter: TokenAccountsFilter,
    config: Option<AccountConfig>,
) -> RpcResult {
    let config = config.unwrap_or_default();
    let slot = chain.level_slot(config.level());
    let (program, wanted_mint) = filter_scope(chain, filter, slot).await?;
    let found = token_accounts(chain, &program, slot, |token| {
        let held = match holder {
            Holder::Owner(owner) => token.owner == owner,
            Holder::Delegate(delegate) => token.delegate == Some(delegate).into(),
        };
        held && wanted_mint.is_none_or(|mint| token.mint == mint)
    })
    .await?;
    let mut listed = Vec::with_capacity(found.len());
    for (address, account, _) in found {
        listed.push(json!({
            "pubkey": address.to_string(),
            "account": config.encode(chain, &address, &account).await?,
        }));
    }
    Ok(with_context_at(slot, Value::Array(listed)))
}

pub async fn get_token_accounts_by_owner(
    chain: &Chain,
    (Base58(owner), filter, config): (Base58<Pubkey>, TokenAccountsFilter, Option<AccountConfig>),
) -> RpcResult {
    token_accounts_of(chain, Holder::Owner(owner), filter, config).await
}

pub async fn get_token_accounts_by_delegate(
    chain: &Chain,
    (Base58(delegate), filter, config): (
        Base58<Pubkey>,
        TokenAccountsFilter,
        Option<AccountConfig>,
    ),
) -> RpcResult {
    token_accounts_of(chain, Holder::Delegate(delegate), filter, config).await
}
