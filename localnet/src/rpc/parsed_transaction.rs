//! A transaction in Agave's `jsonParsed` shape: account keys with their roles, and instructions
//! of the System and Memo programs parsed; any other instruction keeps its accounts (as
//! addresses) and base58 data, as Agave leaves instructions no parser knows.
use serde_json::{json, Value};
use solana_message::compiled_instruction::CompiledInstruction;
use solana_pubkey::Pubkey;
use solana_system_interface::instruction::SystemInstruction;
use solana_transaction::versioned::VersionedTransaction;

use super::programs::MEMO_PROGRAMS;

pub fn transaction_json_parsed(transaction: &VersionedTransaction) -> Value {
    let message = &transaction.message;
    let keys = message.static_account_keys();
    let account_keys: Vec<Value> = keys
        .iter()
        .enumerate()
        .map(|(i, key)| {
            json!({
                "pubkey": key.to_string(),
                "writable": message.is_maybe_writable(i, None),
                "signer": message.is_signer(i),
                "source": "transaction",
            })
        })
        .collect();
    let instructions: Vec<Value> = message
        .instructions()
        .iter()
        .map(|ix| instruction_json_parsed(ix, keys))
        .collect();
    let mut parsed_message = json!({
        "accountKeys": account_keys,
        "recentBlockhash": message.recent_blockhash().to_string(),
        "instructions": instructions,
    });
    if let Some(lookups) = message.address_table_lookups() {
        parsed_message["addressTableLookups"] = lookups
            .iter()
            .map(|lookup| {
                json!({
                    "accountKey": lookup.account_key.to_string(),
                    "writableIndexes": lookup.writable_indexes,
                    "readonlyIndexes": lookup.readonly_indexes,
                })
            })
            .collect();
    }
    json!({
        "signatures": transaction.signatures.iter().map(ToString::to_string).collect::<Vec<_>>(),
        "message": parsed_message,
    })
}

fn instruction_json_parsed(ix: &CompiledInstruction, keys: &[Pubkey]) -> Value {
    // Committed transactions passed sanitization, so every index is within the static keys
    // (accounts loaded from lookup tables aside, which show as unknown).
    let key = |index: u8| keys.get(usize::from(index)).copied();
    let program = key(ix.program_id_index).unwrap_or_default();
    let accounts: Vec<Option<Pubkey>> = ix.accounts.iter().map(|&i| key(i)).collect();
    let parsed = if MEMO_PROGRAMS.contains(&program) {
        std::str::from_utf8(&ix.data)
            .ok()
            .map(|text| ("spl-memo", json!(text)))
    } else if program == solana_sdk_ids::system_program::ID {
        parse_system(&ix.data, &accounts).map(|parsed| ("system", parsed))
    } else {
        None
    };
    match parsed {
        Some((name, parsed)) => json!({
            "program": name,
            "programId": program.to_string(),
            "parsed": parsed,
            "stackHeight": null,
        }),
        None => json!({
            "programId": program.to_string(),
            "accounts": accounts
                .iter()
                .map(|a| a.map(|a| a.to_string()).unwrap_or_default())
                .collect::<Vec<_>>(),
            "data": bs58::encode(&ix.data).into_string(),
            "stackHeight": null,
        }),
    }
}

/// The System instructions a wallet sends, as Agave names them and their accounts; `None` for
/// the rest (nonce and seed variants), which then show unparsed.
fn parse_system(data: &[u8], accounts: &[Option<Pubkey>]) -> Option<Value> {
    let account = |i: usize| Some(accounts.get(i).copied()??.to_string());
    let (kind, info) = match bincode::deserialize::<SystemInstruction>(data).ok()? {
        SystemInstruction::CreateAccount {
            lamports,
            space,
            owner,
        } => (
            "createAccount",
            json!({"source": account(0)?, "newAccount": account(1)?, "lamports": lamports,
                   "space": space, "owner": owner.to_string()}),
        ),
        SystemInstruction::Assign { owner } => (
            "assign",
            json!({"account": account(0)?, "owner": owner.to_string()}),
        ),
        SystemInstruction::Transfer { lamports } => (
            "transfer",
            json!({"source": account(0)?, "destination": account(1)?, "lamports": lamports}),
        ),
        SystemInstruction::Allocate { space } => {
            ("allocate", json!({"account": account(0)?, "space": space}))
        }
        _ => return None,
    };
    Some(json!({"type": kind, "info": info}))
}
