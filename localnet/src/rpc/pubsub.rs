//! Solana PubSub over WebSocket, as a validator serves it on its RPC port + 1: account,
//! program, signature, logs, block, slot, slotsUpdates and root subscriptions, each answered
//! with its subscription id and then notified in Agave's shapes. Every commitment level is
//! notified at once: the one validator holds all the stake, so each block is final as it ends.
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use futures_util::{SinkExt, StreamExt};
use serde::Deserialize;
use serde_json::{json, Value};
use solana_account::Account;
use solana_pubkey::Pubkey;
use solana_rpc_client_types::response::{SlotTransactionStats, SlotUpdate};
use solana_signature::Signature;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::broadcast::error::RecvError;
use tokio_tungstenite::tungstenite::Message;

use super::accounts::{AccountConfig, CheckedFilter, ProgramAccountsConfig};
use super::blocks::{block_value, BlockConfig, TransactionDetails};
use super::error::{RpcError, RpcResult};
use super::params::{Base58, ContextConfig};
use super::transactions::TransactionEncoding;
use super::{error_response, read_call, respond, typed};
use crate::chain::{Chain, ChainEvent, CommittedTransaction};

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
    Signature(Signature),
    Logs(LogsFilter),
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
            Self::Signature(_) => ("signatureNotification", "signatureUnsubscribe"),
            Self::Logs(_) => ("logsNotification", "logsUnsubscribe"),
            Self::Block { .. } => ("blockNotification", "blockUnsubscribe"),
            Self::Slot => ("slotNotification", "slotUnsubscribe"),
            Self::SlotsUpdates => ("slotsUpdatesNotification", "slotsUpdatesUnsubscribe"),
            Self::Root => ("rootNotification", "rootUnsubscribe"),
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
                if let Subscription::Signature(signature) = &subscription {
                    if let Some(committed) = chain.committed(signature) {
                        owed.push(notification(
                            "signatureNotification",
                            id,
                            signature_value(&committed),
                        ));
                    } else {
                        subscriptions.insert(id, subscription);
                    }
                } else {
                    subscriptions.insert(id, subscription);
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
            |(Base58(signature), _): (Base58<Signature>, Option<ContextConfig>)| {
                Subscription::Signature(signature)
            },
        ),
        "logsSubscribe" => typed(params).and_then(
            |(filter, _): (LogsFilter, Option<ContextConfig>)| match &filter {
                LogsFilter::Mentions(addresses) if addresses.len() != 1 => Err(
                    RpcError::InvalidParams("only 1 address supported in mentions".into()),
                ),
                _ => Ok(Subscription::Logs(filter)),
            },
        ),
        "blockSubscribe" => typed(params).map(
            |(filter, config): (BlockFilter, Option<BlockSubscribeConfig>)| {
                let config = config.unwrap_or_default();
                Subscription::Block {
                    mentions: match filter {
                        BlockFilter::All => None,
                        BlockFilter::MentionsAccountOrProgram(Base58(address)) => Some(address),
                    },
                    config: BlockConfig {
                        encoding: config.encoding,
                        transaction_details: config.transaction_details,
                        rewards: config.show_rewards,
                        max_supported_transaction_version: config.max_supported_transaction_version,
                    },
                }
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
/// notification, as Agave's do.
async fn notifications(
    chain: &Chain,
    subscriptions: &mut BTreeMap<u64, Subscription>,
    event: &ChainEvent,
) -> Vec<Value> {
    let mut out = Vec::new();
    match event {
        ChainEvent::Committed {
            signature,
            transaction,
        } => {
            let changed = changed_accounts(chain, transaction).await;
            let mut done = Vec::new();
            for (&id, subscription) in subscriptions.iter() {
                let method = subscription.methods().0;
                for result in
                    committed_results(chain, subscription, signature, transaction, &changed).await
                {
                    out.push(notification(method, id, result));
                }
                if matches!(subscription, Subscription::Signature(s) if s == signature) {
                    done.push(id);
                }
            }
            for id in done {
                subscriptions.remove(&id);
            }
        }
        ChainEvent::Slot { slot, parent } => {
            for (&id, subscription) in subscriptions.iter() {
                let method = subscription.methods().0;
                for result in slot_results(chain, subscription, *slot, *parent).await {
                    out.push(notification(method, id, result));
                }
            }
        }
    }
    out
}

/// The writable accounts `transaction` may have changed, as they are now (a closed one as the
/// empty system account Agave notifies for it).
async fn changed_accounts(
    chain: &Chain,
    committed: &CommittedTransaction,
) -> Vec<(Pubkey, Account)> {
    let message = &committed.transaction.message;
    let mut changed = Vec::new();
    for (i, address) in message.static_account_keys().iter().enumerate() {
        if message.is_maybe_writable(i, None) {
            let account = chain
                .account(address)
                .await
                .ok()
                .flatten()
                .unwrap_or_default();
            changed.push((*address, account));
        }
    }
    changed
}

async fn committed_results(
    chain: &Chain,
    subscription: &Subscription,
    signature: &Signature,
    committed: &CommittedTransaction,
    changed: &[(Pubkey, Account)],
) -> Vec<Value> {
    let slot = committed.slot;
    match subscription {
        Subscription::Signature(wanted) if wanted == signature => vec![signature_value(committed)],
        Subscription::Logs(filter) => {
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
            if !mentioned {
                return vec![];
            }
            vec![with_slot(
                slot,
                json!({"signature": signature.to_string(), "err": committed.err, "logs": committed.logs}),
            )]
        }
        Subscription::Account { address, config } => {
            let mut out = Vec::new();
            for (changed_address, account) in changed {
                if changed_address == address {
                    if let Ok(value) = config.encode(chain, address, account).await {
                        out.push(with_slot(slot, value));
                    }
                }
            }
            out
        }
        Subscription::Program {
            program,
            config,
            filters,
        } => {
            let mut out = Vec::new();
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
            out
        }
        _ => vec![],
    }
}

fn unix_millis() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// A slot began and its parent ended (and, final at once, became the root).
async fn slot_results(
    chain: &Chain,
    subscription: &Subscription,
    slot: u64,
    parent: u64,
) -> Vec<Value> {
    match subscription {
        Subscription::Slot => vec![json!({"parent": parent, "root": parent, "slot": slot})],
        Subscription::Root => vec![json!(parent)],
        Subscription::SlotsUpdates => {
            let timestamp = unix_millis();
            let block = chain.block(parent).await.ok().flatten();
            let transactions = block.map(|b| b.transactions).unwrap_or_default();
            let failed = transactions.iter().filter(|(_, c)| c.err.is_some()).count() as u64;
            let stats = SlotTransactionStats {
                num_transaction_entries: transactions.len() as u64,
                num_successful_transactions: transactions.len() as u64 - failed,
                num_failed_transactions: failed,
                max_transactions_per_entry: 1,
            };
            [
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
                SlotUpdate::Root {
                    slot: parent,
                    timestamp,
                },
            ]
            .iter()
            .map(|update| json!(update))
            .collect()
        }
        Subscription::Block { mentions, config } => {
            if let Some(address) = mentions {
                let block = chain.block(parent).await.ok().flatten();
                let mentioned = block.is_some_and(|b| {
                    b.transactions.iter().any(|(_, c)| {
                        c.transaction
                            .message
                            .static_account_keys()
                            .contains(address)
                    })
                });
                if !mentioned {
                    return vec![];
                }
            }
            let (block, err) = match block_value(chain, parent, config).await {
                Ok(block) => (block, Value::Null),
                Err(error) => (Value::Null, error.to_json()["message"].clone()),
            };
            vec![with_slot(
                parent,
                json!({"slot": parent, "err": err, "block": block}),
            )]
        }
        _ => vec![],
    }
}
