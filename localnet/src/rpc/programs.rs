//! Programs whose instructions and accounts a validator's RPC reads for its callers.
use solana_pubkey::Pubkey;

/// The SPL Memo program, v1 and v3: their instructions' data are a transaction's memos.
pub const MEMO_PROGRAMS: [Pubkey; 2] = [
    Pubkey::from_str_const("Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo"),
    Pubkey::from_str_const("MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr"),
];
