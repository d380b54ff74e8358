//! Solana PubSub over WebSocket, as a validator serves it on its RPC port + 1: account,
//! program, signature, logs, block, slot, slotsUpdates and root subscriptions, each answered
//! with its subscription id and then notified in Agave's shapes, at the commitment level each
//! asked for (finalized by default): processed as a transaction commits, confirmed as its slot
//! ends, finalized as the slot is rooted (see `commitment`).
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use futures_util::{SinkExt, StreamExt};
use serde::Deserialize;
use serde_json::{json, Value};
use solana_account::Account;
use solana_commitment_config::CommitmentLevel;
use solana_pubkey::Pubkey;
use solana_rpc_client_types::response::{SlotTransactionStats, SlotUpdate};
use solana_signature::Signature;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::broadcast::error::RecvError;
use tokio_tungstenite::tungstenite::Message;

use super::accounts::CheckedFilter;
use super::blocks::block_value;
use super::call::{error_response, read_call, respond, typed};
use super::config::{
    at_least_confirmed, level, AccountConfig, BlockConfig, ContextConfig, ProgramAccountsConfig,
    TransactionDetails, TransactionEncoding,
};
use super::error::{RpcError, RpcResult};
use super::params::Base58;
use crate::chain::{Chain, ChainEvent, CommittedTransaction};
use crate::commitment::CommitmentSlots;

/// Serves PubSub on `listener` for as long as the task runs.
pub async fn serve_pubsub(chain: Arc<Chain>, listener: TcpListener) {
    let ids = Arc::new(AtomicU64::new(0));
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        tokio::spawn(connection(chain.clone(), ids.clone(), stream));
    }
}

enum Subscription {
    Account {
        address: Pubkey,
        config: AccountConfig,
    },
    Program {
        program: Pubkey,
        config: AccountConfig,
        filters: Vec<CheckedFilter>,
    },
    Signature {
        signature: Signature,
        level: CommitmentLevel,
    },
    Logs {
        filter: LogsFilter,
        level: CommitmentLevel,
    },
    Block {
        mentions: Option<Pubkey>,
        config: BlockConfig,
    },
    Slot,
    SlotsUpdates,
    Root,
}

impl Subscription {
    /// The method its notifications are sent as, and the one that ends it.
    fn methods(&self) -> (&'static str, &'static str) {
        match self {
            Self::Account { .. } => ("accountNotification", "accountUnsubscribe"),
            Self::Program { .. } => ("programNotification", "programUnsubscribe"),
            Self::Signature { .. } => ("signatureNotification", "signatureUnsubscribe"),
            Self::Logs { .. } => ("logsNotification", "logsUnsubscribe"),
            Self::Block { .. } => ("blockNotification", "blockUnsubscribe"),
            Self::Slot => ("slotNotification", "slotUnsubscribe"),
            Self::SlotsUpdates => ("slotsUpdatesNotification", "slotsUpdatesUnsubscribe"),
            Self::Root => ("rootNotification", "rootUnsubscribe"),
        }
    }

    /// The level it is notified at; `None` for the slot subscriptions, which follow the clock.
    fn level(&self) -> Option<CommitmentLevel> {
        match self {
            Self::Account { config, .. } | Self::Program { config, .. } => Some(config.level()),
            Self::Signature { level, .. } | Self::Logs { level, .. } => Some(*level),
            Self::Block { config, .. } => Some(config.commitment.unwrap_or_default()),
            Self::Slot | Self::SlotsUpdates | Self::Root => None,
        }
    }
}

/// `logsSubscribe`'s filter: `"all"`, `"allWithVotes"` or `{"mentions": [address]}`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
enum LogsFilter {
    All,
    AllWithVotes,
    Mentions(Vec<Base58<Pubkey>>),
}

/// `blockSubscribe`'s filter: `"all"` or `{"mentionsAccountOrProgram": address}`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
enum BlockFilter {
    All,
    MentionsAccountOrProgram(Base58<Pubkey>),
}

/// blockSubscribe names getBlock's `rewards` `showRewards`.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct BlockSubscribeConfig {
    encoding: Option<TransactionEncoding>,
    transaction_details: Option<TransactionDetails>,
    show_rewards: Option<bool>,
    max_supported_transaction_version: Option<u8>,
    commitment: Option<CommitmentLevel>,
}

/// One client: its calls answered in order, then the chain's events as notifications.
async fn connection(chain: Arc<Chain>, ids: Arc<AtomicU64>, stream: TcpStream) {
    let Ok(socket) = tokio_tungstenite::accept_async(stream).await else {
        return;
    };
    let (mut sink, mut source) = socket.split();
    let mut events = chain.events();
    let mut subscriptions: BTreeMap<u64, Subscription> = BTreeMap::new();
    loop {
        let outgoing = tokio::select! {
            message = source.next() => match message {
                Some(Ok(Message::Text(text))) => {
                    handle_text(&chain, &ids, &mut subscriptions, text.as_str()).await
                }
                Some(Ok(Message::Binary(_))) => vec![error_response(
                    Value::Null,
                    RpcError::InvalidRequest("send JSON-RPC as text messages"),
                )],
                Some(Ok(_)) => vec![],
                Some(Err(_)) | None => return,
            },
            event = events.recv() => match event {
                Ok(event) => notifications(&chain, &mut subscriptions, &event).await,
                // Too slow to keep up: what was missed is gone, as on a validator.
                Err(RecvError::Lagged(_)) => vec![],
                Err(RecvError::Closed) => return,
            },
        };
        for message in outgoing {
            if sink.send(Message::text(message.to_string())).await.is_err() {
                return;
            }
        }
    }
}

/// The replies to one text message (a call or a batch), then any notification a new
/// subscription is owed at once (a signature already committed).
async fn handle_text(
    chain: &Chain,
    ids: &AtomicU64,
    subscriptions: &mut BTreeMap<u64, Subscription>,
    text: &str,
) -> Vec<Value> {
    let request: Value = match serde_json::from_str(text) {
        Ok(value) => value,
        Err(e) => return vec![error_response(Value::Null, RpcError::Parse(e))],
    };
    let (calls, batch) = match request {
        Value::Array(calls) if !calls.is_empty() => (calls, true),
        call => (vec![call], false),
    };
    let mut replies = Vec::with_capacity(calls.len());
    let mut owed = Vec::new();
    for call in calls {
        let (id, method, params) = match read_call(&call) {
            Ok(call) => call,
            Err(refusal) => {
                replies.push(refusal);
                continue;
            }
        };
        let outcome = match subscription(method, params) {
            Some(Ok(subscription)) => {
                let id = ids.fetch_add(1, Ordering::Relaxed);
                match already_reached(chain, &subscription).await {
                    Some(committed) => owed.push(notification(
                        "signatureNotification",
                        id,
                        signature_value(&committed),
                    )),
                    None => {
                        subscriptions.insert(id, subscription);
                    }
                }
                Ok(json!(id))
            }
            Some(Err(error)) => Err(error),
            None => unsubscribe(subscriptions, method, &call),
        };
        replies.push(respond(id, outcome));
    }
    let mut outgoing = if batch {
        vec![Value::Array(replies)]
    } else {
        replies
    };
    outgoing.extend(owed);
    outgoing
}

/// The transaction a signature subscription names, when it has already reached the level
/// asked for: the subscription is then notified at once and ends.
async fn already_reached(
    chain: &Chain,
    subscription: &Subscription,
) -> Option<CommittedTransaction> {
    let Subscription::Signature { signature, level } = subscription else {
        return None;
    };
    let committed = chain.committed(signature)?;
    let slots = chain.commitment_slots();
    slots.reached(committed.slot, *level).then_some(committed)
}

/// The subscription a `…Subscribe` call asks for; `None` for any other method.
fn subscription(method: &str, params: Vec<Value>) -> Option<Result<Subscription, RpcError>> {
    Some(match method {
        "accountSubscribe" => typed(params).map(
            |(Base58(address), config): (Base58<Pubkey>, Option<AccountConfig>)| {
                Subscription::Account {
                    address,
                    config: config.unwrap_or_default(),
                }
            },
        ),
        "programSubscribe" => typed(params).and_then(
            |(Base58(program), config): (Base58<Pubkey>, Option<ProgramAccountsConfig>)| {
                let (config, filters) = config.unwrap_or_default().into_parts()?;
                Ok(Subscription::Program {
                    program,
                    config,
                    filters,
                })
            },
        ),
        "signatureSubscribe" => typed(params).map(
            |(Base58(signature), config): (Base58<Signature>, Option<ContextConfig>)| {
                Subscription::Signature {
                    signature,
                    level: level(config),
                }
            },
        ),
        "logsSubscribe" => {
            typed(params).and_then(|(filter, config): (LogsFilter, Option<ContextConfig>)| {
                match &filter {
                    LogsFilter::Mentions(addresses) if addresses.len() != 1 => Err(
                        RpcError::InvalidParams("only 1 address supported in mentions".into()),
                    ),
                    _ => Ok(Subscription::Logs {
                        filter,
                        level: level(config),
                    }),
                }
            })
        }
        "blockSubscribe" => typed(params).and_then(
            |(filter, config): (BlockFilter, Option<BlockSubscribeConfig>)| {
                let config = config.unwrap_or_default();
                let commitment = at_least_confirmed(config.commitment.unwrap_or_default())?;
                Ok(Subscription::Block {
                    mentions: match filter {
                        BlockFilter::All => None,
                        BlockFilter::MentionsAccountOrProgram(Base58(address)) => Some(address),
                    },
                    config: BlockConfig {
                        encoding: config.encoding,
                        transaction_details: config.transaction_details,
                        rewards: config.show_rewards,
                        max_supported_transaction_version: config.max_supported_transaction_version,
                        commitment: Some(commitment),
                    },
                })
            },
        ),
        "slotSubscribe" => typed(params).map(|()| Subscription::Slot),
        "slotsUpdatesSubscribe" => typed(params).map(|()| Subscription::SlotsUpdates),
        "rootSubscribe" => typed(params).map(|()| Subscription::Root),
        _ => return None,
    })
}

/// `…Unsubscribe [id]`: true once the subscription is gone; -32602 for an id this connection
/// does not hold under that kind, -32601 for a method PubSub does not have.
fn unsubscribe(
    subscriptions: &mut BTreeMap<u64, Subscription>,
    method: &str,
    call: &Value,
) -> RpcResult {
    let known = [
        "accountUnsubscribe",
        "programUnsubscribe",
        "signatureUnsubscribe",
        "logsUnsubscribe",
        "blockUnsubscribe",
        "slotUnsubscribe",
        "slotsUpdatesUnsubscribe",
        "rootUnsubscribe",
    ];
    if !known.contains(&method) {
        return Err(RpcError::MethodNotFound(method.to_string()));
    }
    let params = call.get("params").cloned().unwrap_or(Value::Null);
    let (id,): (u64,) = typed(params.as_array().cloned().unwrap_or_default())?;
    match subscriptions.get(&id) {
        Some(subscription) if subscription.methods().1 == method => {
            subscriptions.remove(&id);
            Ok(json!(true))
        }
        _ => Err(RpcError::InvalidParams(
            "Invalid subscription id.".to_string(),
        )),
    }
}

fn notification(method: &str, subscription: u64, result: Value) -> Value {
    json!({
        "jsonrpc": "2.0",
        "method": method,
        "params": {"result": result, "subscription": subscription},
    })
}

fn with_slot(slot: u64, value: Value) -> Value {
    json!({"context": {"slot": slot}, "value": value})
}

fn signature_value(committed: &CommittedTransaction) -> Value {
    with_slot(committed.slot, json!({"err": committed.err}))
}

/// What `event` tells this connection's subscribers; a signature subscription ends with its
/// notification, as Agave's do. A commit is news at the processed level; the end of a slot
/// brings the slot it confirmed and the slot that vote rooted to the other two levels.
async fn notifications(
    chain: &Chain,
    subscriptions: &mut BTreeMap<u64, Subscription>,
    event: &ChainEvent,
) -> Vec<Value> {
    let mut out = Vec::new();
    let mut done = Vec::new();
    match event {
        ChainEvent::Committed {
            signature,
            transaction,
        } => {
            let block = [(*signature, transaction.as_ref().clone())];
            let changed = changed_accounts(chain, &block, transaction.slot).await;
            for (&id, subscription) in subscriptions.iter() {
                if subscription.level() != Some(CommitmentLevel::Processed) {
                    continue;
                }
                let results = transaction_results(chain, subscription, &block, &changed).await;
                notify(&mut out, &mut done, id, subscription, results);
            }
        }
        ChainEvent::Slot {
            slot,
            parent,
            rooted,
        } => {
            for (&id, subscription) in subscriptions.iter() {
                let results = slot_results(chain, subscription, *slot, *parent, *rooted).await;
                notify(&mut out, &mut done, id, subscription, results);
            }
            let levels = [
                (CommitmentLevel::Confirmed, Some(*parent)),
                (CommitmentLevel::Finalized, *rooted),
            ];
            for (level, block_slot) in levels {
                let Some(block_slot) = block_slot else {
                    continue;
                };
                let block = chain
                    .block(block_slot)
                    .map(|b| b.transactions)
                    .unwrap_or_default();
                let changed = changed_accounts(chain, &block, block_slot).await;
                for (&id, subscription) in subscriptions.iter() {
                    if subscription.level() != Some(level) {
                        continue;
                    }
                    let results = match subscription {
                        Subscription::Block { mentions, config } => {
                            block_results(chain, *mentions, config, block_slot, &block).await
                        }
                        _ => transaction_results(chain, subscription, &block, &changed).await,
                    };
                    notify(&mut out, &mut done, id, subscription, results);
                }
            }
        }
    }
    for id in done {
        subscriptions.remove(&id);
    }
    out
}

/// Queues `results` for subscription `id`, noting a signature subscription as done.
fn notify(
    out: &mut Vec<Value>,
    done: &mut Vec<u64>,
    id: u64,
    subscription: &Subscription,
    results: Vec<Value>,
) {
    if results.is_empty() {
        return;
    }
    if matches!(subscription, Subscription::Signature { .. }) {
        done.push(id);
    }
    let method = subscription.methods().0;
    out.extend(results.into_iter().map(|r| notification(method, id, r)));
}

/// The writable accounts `transactions` may have changed, each once, as they are at `slot`
/// (a closed one as the empty system account Agave notifies for it).
async fn changed_accounts(
    chain: &Chain,
    transactions: &[(Signature, CommittedTransaction)],
    slot: u64,
) -> Vec<(Pubkey, Account)> {
    let mut changed: Vec<(Pubkey, Account)> = Vec::new();
    for (_, committed) in transactions {
        let message = &committed.transaction.message;
        for (i, address) in message.static_account_keys().iter().enumerate() {
            if message.is_maybe_writable(i, None) && !changed.iter().any(|(a, _)| a == address) {
                let account = chain
                    .account_at(address, slot)
                    .await
                    .ok()
                    .flatten()
                    .unwrap_or_default();
                changed.push((*address, account));
            }
        }
    }
    changed
}

/// What a signature, logs, account or program subscription hears of `transactions` (one
/// commit, or a block reaching the subscription's level) and the accounts they `changed`.
async fn transaction_results(
    chain: &Chain,
    subscription: &Subscription,
    transactions: &[(Signature, CommittedTransaction)],
    changed: &[(Pubkey, Account)],
) -> Vec<Value> {
    let Some((_, first)) = transactions.first() else {
        return vec![];
    };
    let slot = first.slot;
    let mut out = Vec::new();
    match subscription {
        Subscription::Signature { signature, .. } => {
            if let Some((_, committed)) = transactions.iter().find(|(s, _)| s == signature) {
                out.push(signature_value(committed));
            }
        }
        Subscription::Logs { filter, .. } => {
            for (signature, committed) in transactions {
                let mentioned = match filter {
                    LogsFilter::All | LogsFilter::AllWithVotes => true,
                    LogsFilter::Mentions(addresses) => addresses.iter().any(|Base58(address)| {
                        committed
                            .transaction
                            .message
                            .static_account_keys()
                            .contains(address)
                    }),
                };
                if mentioned {
                    out.push(with_slot(
                        slot,
                        json!({"signature": signature.to_string(), "err": committed.err, "logs": committed.logs}),
                    ));
                }
            }
        }
        Subscription::Account { address, config } => {
            for (changed_address, account) in changed {
                if changed_address == address {
                    if let Ok(value) = config.encode(chain, address, account).await {
                        out.push(with_slot(slot, value));
                    }
                }
            }
        }
        Subscription::Program {
            program,
            config,
            filters,
        } => {
            for (address, account) in changed {
                if account.owner == *program && filters.iter().all(|f| f.matches(&account.data)) {
                    if let Ok(value) = config.encode(chain, address, account).await {
                        out.push(with_slot(
                            slot,
                            json!({"pubkey": address.to_string(), "account": value}),
                        ));
                    }
                }
            }
        }
        _ => {}
    }
    out
}

/// The block at `slot` for a block subscription, unless it mentions nothing `mentions` names.
async fn block_results(
    chain: &Chain,
    mentions: Option<Pubkey>,
    config: &BlockConfig,
    slot: u64,
    transactions: &[(Signature, CommittedTransaction)],
) -> Vec<Value> {
    if let Some(address) = mentions {
        let mentioned = transactions.iter().any(|(_, c)| {
            c.transaction
                .message
                .static_account_keys()
                .contains(&address)
        });
        if !mentioned {
            return vec![];
        }
    }
    let (block, err) = match block_value(chain, slot, config).await {
        Ok(block) => (block, Value::Null),
        Err(error) => (Value::Null, error.to_json()["message"].clone()),
    };
    vec![with_slot(
        slot,
        json!({"slot": slot, "err": err, "block": block}),
    )]
}

fn unix_millis() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// A slot began, its parent ended (and was confirmed), and that vote rooted `rooted`.
async fn slot_results(
    chain: &Chain,
    subscription: &Subscription,
    slot: u64,
    parent: u64,
    rooted: Option<u64>,
) -> Vec<Value> {
    let root = CommitmentSlots::at_working_slot(slot).finalized;
    match subscription {
        Subscription::Slot => vec![json!({"parent": parent, "root": root, "slot": slot})],
        Subscription::Root => rooted.map(|root| json!(root)).into_iter().collect(),
        Subscription::SlotsUpdates => {
            let timestamp = unix_millis();
            let block = chain.block(parent);
            let transactions = block.map(|b| b.transactions).unwrap_or_default();
            let failed = transactions.iter().filter(|(_, c)| c.err.is_some()).count() as u64;
            let stats = SlotTransactionStats {
                num_transaction_entries: transactions.len() as u64,
                num_successful_transactions: transactions.len() as u64 - failed,
                num_failed_transactions: failed,
                max_transactions_per_entry: 1,
            };
            let mut updates = vec![
                SlotUpdate::CreatedBank {
                    slot,
                    parent,
                    timestamp,
                },
                SlotUpdate::Frozen {
                    slot: parent,
                    timestamp,
                    stats,
                },
                SlotUpdate::OptimisticConfirmation {
                    slot: parent,
                    timestamp,
                },
            ];
            if let Some(root) = rooted {
                updates.push(SlotUpdate::Root {
                    slot: root,
                    timestamp,
                });
            }
            updates.iter().map(|update| json!(update)).collect()
        }
        _ => vec![],
    }
}
