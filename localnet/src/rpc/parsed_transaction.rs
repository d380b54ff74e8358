//! A transaction as Agave's RPC shows it, by Agave's own encoders: the `jsonParsed` shape
//! (account keys with their roles; instructions of every program Agave parses: System, SPL Token
//! and Token-2022, associated token accounts, Memo, stake, vote, the loaders and lookup tables;
//! any other keeps its accounts and base58 data) and the memos `getSignaturesForAddress` lists.
//! Addresses loaded from lookup tables are not recorded here, so a v0 transaction lists its
//! static keys only.
use serde_json::Value;
use solana_transaction::versioned::VersionedTransaction;
use solana_transaction_status::extract_memos::extract_and_fmt_memos;
use solana_transaction_status::{
    EncodableWithMeta, TransactionStatusMeta, UiTransactionEncoding,
    VersionedTransactionWithStatusMeta,
};

pub fn transaction_json_parsed(transaction: &VersionedTransaction) -> Value {
    let encoded = transaction.encode_with_meta(
        UiTransactionEncoding::JsonParsed,
        &TransactionStatusMeta::default(),
    );
    serde_json::to_value(encoded).expect("an encoded transaction serializes")
}

/// The transaction's memos: each `[length] text` (text "(unparseable)" when not UTF-8), joined
/// by "; "; `None` when there are none.
pub fn memos(transaction: &VersionedTransaction) -> Option<String> {
    extract_and_fmt_memos(&VersionedTransactionWithStatusMeta {
        transaction: transaction.clone(),
        meta: TransactionStatusMeta::default(),
    })
}
