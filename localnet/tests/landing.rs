//! A sent transaction lands in the block of the slot it arrived in, when that slot ends, as a
//! leader's does: its status is unknown the instant `sendTransaction` returns, and a client that
//! waits for it reads a new blockhash afterwards, so the same transfer sent again is a new
//! transaction (solana-py's own suite sends the same transfer test after test).
mod common;

use std::time::{Duration, Instant};

use common::*;
use serde_json::{json, Value};
use solana_hash::Hash;
use solana_keypair::Keypair;
use solana_pubkey::Pubkey;
use solana_signer::Signer;
use solana_transaction::Transaction;

fn transfer(payer: &Keypair, to: &Pubkey, blockhash: Hash) -> Transaction {
    Transaction::new_signed_with_payer(
        &[solana_system_interface::instruction::transfer(
            &payer.pubkey(),
            to,
            1_000_000,
        )],
        Some(&payer.pubkey()),
        &[payer],
        blockhash,
    )
}

fn send_now(net: &Localnet, tx: &Transaction) -> Value {
    net.call(
        "sendTransaction",
        json!([encode64(tx), {"encoding": "base64"}]),
    )
}

/// The working bank's blockhash, as solana-py's client (processed commitment) asks for it.
fn processed_blockhash(net: &Localnet) -> Hash {
    net.ok("getLatestBlockhash", json!([{"commitment": "processed"}]))["value"]["blockhash"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap()
}

fn status(net: &Localnet, signature: &Value) -> Value {
    net.ok(
        "getSignatureStatuses",
        json!([[signature], {"searchTransactionHistory": true}]),
    )["value"][0]
        .clone()
}

/// Polls the status as a client does, until it is known (at most two slots).
fn wait_for_status(net: &Localnet, signature: &Value) -> Value {
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        let status = status(net, signature);
        if !status.is_null() {
            return status;
        }
        assert!(Instant::now() < deadline, "{signature} never landed");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_transaction_lands_when_its_slot_ends_not_when_it_is_sent() {
    let net = Localnet::start();
    let payer = Keypair::new();
    net.airdrop(&payer, 1_000_000_000);
    let sent_in = net.slot("processed");
    let sent = send_now(
        &net,
        &transfer(&payer, &Pubkey::new_unique(), net.blockhash()),
    );
    let signature = sent["result"].clone();
    assert!(signature.is_string(), "accepted: {sent}");
    assert_eq!(status(&net, &signature), Value::Null, "not landed yet");

    let landed = wait_for_status(&net, &signature);
    assert_eq!(landed["err"], Value::Null);
    let slot = landed["slot"].as_u64().unwrap();
    assert!(
        (sent_in..=sent_in + 1).contains(&slot),
        "lands in the slot it arrived in: sent in {sent_in}, landed in {slot}"
    );
    net.confirmed_through(slot);
    let block = net.ok(
        "getBlock",
        json!([slot, {"commitment": "confirmed", "transactionDetails": "signatures", "rewards": false}]),
    );
    assert!(
        block["signatures"].as_array().unwrap().contains(&signature),
        "its block lists it: {block}"
    );
}

#[test]
fn the_same_transfer_after_waiting_for_the_first_is_a_new_transaction() {
    let net = Localnet::start();
    let payer = Keypair::new();
    let receiver = Pubkey::new_unique();
    net.airdrop(&payer, 1_000_000_000);

    let first_hash = processed_blockhash(&net);
    let first = send_now(&net, &transfer(&payer, &receiver, first_hash));
    wait_for_status(&net, &first["result"]);

    let second_hash = processed_blockhash(&net);
    assert_ne!(first_hash, second_hash, "a new block, a new blockhash");
    let second = send_now(&net, &transfer(&payer, &receiver, second_hash));
    assert!(second["result"].is_string(), "accepted: {second}");
    assert_ne!(first["result"], second["result"]);
    assert_eq!(wait_for_status(&net, &second["result"])["err"], Value::Null);
    assert_eq!(
        net.ok(
            "getBalance",
            json!([receiver.to_string(), {"commitment": "processed"}])
        )["value"],
        2_000_000
    );
}

#[test]
fn a_copy_of_a_waiting_transaction_is_dropped_and_one_of_a_landed_one_refused() {
    let net = Localnet::start();
    let payer = Keypair::new();
    let receiver = Pubkey::new_unique();
    net.airdrop(&payer, 1_000_000_000);
    let tx = transfer(&payer, &receiver, net.blockhash());

    let original = send_now(&net, &tx);
    let copy = send_now(&net, &tx);
    assert_eq!(
        copy["result"], original["result"],
        "the copy is dropped: {copy}"
    );
    wait_for_status(&net, &original["result"]);

    let refused = send_now(&net, &tx);
    assert_eq!(
        refused["error"]["data"]["err"],
        json!("AlreadyProcessed"),
        "preflight refuses a landed copy: {refused}"
    );
    net.confirmed_through(net.slot("processed"));
    assert_eq!(
        net.ok(
            "getBalance",
            json!([receiver.to_string(), {"commitment": "confirmed"}])
        )["value"],
        1_000_000,
        "paid once"
    );
}
