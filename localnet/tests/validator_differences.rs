//! Where precompact-localnet once answered differently from a validator: v0 messages and
//! their fees, transaction versions a client did not ask for, memos, and a clock that runs
//! while idle.
mod common;

use base64::Engine;
use common::*;
use serde_json::{json, Value};
use solana_hash::Hash;
use solana_instruction::Instruction;
use solana_keypair::Keypair;
use solana_message::{v0, VersionedMessage};
use solana_pubkey::Pubkey;
use solana_signer::Signer;
use solana_transaction::versioned::VersionedTransaction;
use solana_transaction::Transaction;

const SOL: u64 = 1_000_000_000;
/// Enough for the new recipient to be rent-exempt.
const SENT: u64 = 1_000_000;
const MEMO_V1: Pubkey = Pubkey::from_str_const("Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo");
const MEMO_V3: Pubkey = Pubkey::from_str_const("MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr");

fn v0_transfer(from: &Keypair, cosigner: &Keypair, blockhash: Hash) -> VersionedTransaction {
    let mut transfer =
        solana_system_interface::instruction::transfer(&from.pubkey(), &Pubkey::new_unique(), SENT);
    // A second signer, so the fee is visibly per signature.
    transfer
        .accounts
        .push(solana_instruction::AccountMeta::new_readonly(
            cosigner.pubkey(),
            true,
        ));
    let message = v0::Message::try_compile(&from.pubkey(), &[transfer], &[], blockhash).unwrap();
    VersionedTransaction::try_new(VersionedMessage::V0(message), &[from, cosigner]).unwrap()
}

fn encode_versioned(tx: &VersionedTransaction) -> String {
    base64::engine::general_purpose::STANDARD.encode(bincode::serialize(tx).unwrap())
}

#[test]
fn v0_messages_are_priced_charged_and_hidden_from_clients_that_read_legacy_only() {
    let net = Localnet::start();
    let (payer, cosigner) = (Keypair::new(), Keypair::new());
    net.airdrop(&payer, SOL);
    let tx = v0_transfer(&payer, &cosigner, net.blockhash());

    let message =
        base64::engine::general_purpose::STANDARD.encode(bincode::serialize(&tx.message).unwrap());
    assert_eq!(
        net.ok("getFeeForMessage", json!([message]))["value"],
        10_000
    );

    let signature = net.ok(
        "sendTransaction",
        json!([encode_versioned(&tx), {"encoding": "base64"}]),
    );
    net.confirmed_through(net.slot("processed"));
    let balance = net.ok(
        "getBalance",
        json!([payer.pubkey().to_string(), {"commitment": "confirmed"}]),
    )["value"]
        .clone();
    assert_eq!(balance, SOL - 10_000 - SENT);

    let error = net.err(
        "getTransaction",
        json!([signature, {"commitment": "confirmed"}]),
    );
    assert_eq!(error["code"], -32015);
    assert_eq!(
        error["message"],
        "Transaction version (0) is not supported by the requesting client. Please try the \
         request again with the following configuration parameter: \
         \"maxSupportedTransactionVersion\": 0"
    );
    let fetched = net.ok(
        "getTransaction",
        json!([signature, {"commitment": "confirmed", "maxSupportedTransactionVersion": 0}]),
    );
    assert_eq!(fetched["version"], 0);
    assert_eq!(fetched["meta"]["fee"], 10_000);

    let slot = fetched["slot"].clone();
    assert_eq!(
        net.err("getBlock", json!([slot, {"commitment": "confirmed"}]))["code"],
        -32015
    );
    let block = net.ok(
        "getBlock",
        json!([slot, {"commitment": "confirmed", "maxSupportedTransactionVersion": 0}]),
    );
    let entry = block["transactions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|entry| entry["transaction"]["signatures"][0] == signature)
        .expect("the block holds the transaction");
    assert_eq!(entry["version"], 0);
}

#[test]
fn signatures_for_address_carry_the_memos_as_a_validator_formats_them() {
    let net = Localnet::start();
    let payer = Keypair::new();
    net.airdrop(&payer, SOL);
    let memo = |program: Pubkey, data: &[u8]| Instruction::new_with_bytes(program, data, vec![]);
    let send = |instructions: &[Instruction]| {
        let tx = Transaction::new_signed_with_payer(
            instructions,
            Some(&payer.pubkey()),
            &[&payer],
            net.blockhash(),
        );
        net.send(&tx, json!({"skipPreflight": true}))["result"].clone()
    };
    let two = send(&[memo(MEMO_V3, b"hello"), memo(MEMO_V1, "wörld".as_bytes())]);
    // Not UTF-8: the memo program refuses it, and the committed failure still lists it.
    let unparseable = send(&[memo(MEMO_V3, &[0xff, 0xfe])]);

    let listed = net.ok(
        "getSignaturesForAddress",
        json!([payer.pubkey().to_string(), {"commitment": "confirmed"}]),
    );
    let memo_of = |signature: &Value| {
        listed
            .as_array()
            .unwrap()
            .iter()
            .find(|entry| entry["signature"] == *signature)
            .unwrap_or_else(|| panic!("{signature} listed: {listed}"))["memo"]
            .clone()
    };
    assert_eq!(memo_of(&two), "[5] hello; [6] wörld");
    assert_eq!(memo_of(&unparseable), "[2] (unparseable)");
    let airdrop = listed.as_array().unwrap().last().unwrap();
    assert_eq!(airdrop["memo"], Value::Null);
}

#[test]
fn slots_and_blocks_advance_while_idle() {
    let net = Localnet::start();
    let first = net.slot("processed");
    std::thread::sleep(std::time::Duration::from_millis(2_000));
    let now = net.slot("processed");
    assert!(now >= first + 3, "2 s of 400 ms slots: {first} -> {now}");
    let blocks = net.ok(
        "getBlocks",
        json!([first, now - 1, {"commitment": "confirmed"}]),
    );
    assert_eq!(blocks, json!((first..now).collect::<Vec<_>>()));
    let block = net.ok("getBlock", json!([now - 1, {"commitment": "confirmed", "encoding": "base64", "transactionDetails": null, "rewards": null, "maxSupportedTransactionVersion": null}]));
    assert_eq!(block["transactions"], json!([]));
}

#[test]
fn jsonparsed_transactions_name_account_roles_and_parse_system_and_memo() {
    let net = Localnet::start();
    let payer = Keypair::new();
    net.airdrop(&payer, SOL);
    let to = Pubkey::new_unique();
    let other_program = Pubkey::new_unique();
    let tx = Transaction::new_signed_with_payer(
        &[
            solana_system_interface::instruction::transfer(&payer.pubkey(), &to, SENT),
            Instruction::new_with_bytes(MEMO_V3, b"test", vec![]),
            Instruction::new_with_bytes(other_program, &[1, 2, 3], vec![]),
        ],
        Some(&payer.pubkey()),
        &[&payer],
        net.blockhash(),
    );
    // The unknown program fails the transaction; it is committed all the same.
    let signature = net.send(&tx, json!({"skipPreflight": true}))["result"].clone();
    let fetched = net.ok(
        "getTransaction",
        json!([signature, {"commitment": "confirmed", "encoding": "jsonParsed"}]),
    );
    let message = &fetched["transaction"]["message"];
    assert_eq!(
        message["accountKeys"][0],
        json!({"pubkey": payer.pubkey().to_string(), "writable": true, "signer": true,
               "source": "transaction"})
    );
    assert_eq!(message["accountKeys"][1]["signer"], false);
    assert_eq!(message["accountKeys"][1]["writable"], true);
    let [transfer, memo, other] = message["instructions"].as_array().unwrap().as_slice() else {
        panic!("three instructions: {message}")
    };
    assert_eq!(transfer["program"], "system");
    assert_eq!(
        transfer["parsed"],
        json!({"type": "transfer", "info": {"source": payer.pubkey().to_string(),
               "destination": to.to_string(), "lamports": SENT}})
    );
    assert_eq!(memo["program"], "spl-memo");
    assert_eq!(memo["programId"], MEMO_V3.to_string());
    assert_eq!(memo["parsed"], "test");
    assert_eq!(other["programId"], other_program.to_string());
    assert_eq!(other["data"], bs58::encode([1, 2, 3]).into_string());
    assert_eq!(other["accounts"], json!([]));
    assert!(other.get("parsed").is_none());
}
