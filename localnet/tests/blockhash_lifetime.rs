//! A blockhash lives as long as on a validator: 150 slots (about a minute) from the slot that
//! ended with it, whatever the hosted runtime's own clock does.
mod common;

use std::time::{Duration, Instant};

use common::*;
use serde_json::{json, Value};
use solana_hash::Hash;
use solana_keypair::Keypair;
use solana_pubkey::Pubkey;
use solana_signer::Signer;
use solana_transaction::Transaction;

/// Agave's MAX_PROCESSING_AGE: how many blockhashes after its own a transaction's may be.
const WINDOW: u64 = 150;

fn transfer(payer: &Keypair, lamports: u64, blockhash: Hash) -> Transaction {
    Transaction::new_signed_with_payer(
        &[solana_system_interface::instruction::transfer(
            &payer.pubkey(),
            &Pubkey::new_unique(),
            lamports,
        )],
        Some(&payer.pubkey()),
        &[payer],
        blockhash,
    )
}

fn height(net: &Localnet) -> u64 {
    net.ok("getBlockHeight", json!([{"commitment": "processed"}]))
        .as_u64()
        .unwrap()
}

fn valid(net: &Localnet, blockhash: &Hash, commitment: &str) -> Value {
    net.ok(
        "isBlockhashValid",
        json!([blockhash.to_string(), {"commitment": commitment}]),
    )["value"]
        .clone()
}

#[test]
fn a_blockhash_lands_for_150_slots_and_is_refused_after_as_on_a_validator() {
    let net = Localnet::start();
    let payer = Keypair::new();
    net.airdrop(&payer, 1_000_000_000);
    let latest = net.ok("getLatestBlockhash", json!([{"commitment": "processed"}]));
    let fetched_at = Instant::now();
    let blockhash: Hash = latest["value"]["blockhash"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let last_valid = latest["value"]["lastValidBlockHeight"].as_u64().unwrap();
    let fetched_height = height(&net);
    assert!(
        (fetched_height..=fetched_height + 1).contains(&(last_valid - WINDOW)),
        "valid for 150 blocks from about now: {latest}, height {fetched_height}"
    );

    std::thread::sleep(Duration::from_secs(30).saturating_sub(fetched_at.elapsed()));
    assert_eq!(valid(&net, &blockhash, "processed"), true);
    let landed = net.send(&transfer(&payer, 1_000_001, blockhash), json!({}));
    let signature = landed["result"].clone();
    assert!(signature.is_string(), "30 s later it lands: {landed}");
    assert_eq!(
        net.ok("getSignatureStatuses", json!([[signature]]))["value"][0]["err"],
        Value::Null
    );

    let deadline = Instant::now() + Duration::from_secs(60);
    while height(&net) <= last_valid {
        assert!(
            Instant::now() < deadline,
            "the clock stopped before it expired"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(valid(&net, &blockhash, "processed"), false);
    let refused = net.send(&transfer(&payer, 1_000_002, blockhash), json!({}))["error"].clone();
    assert_eq!(refused["code"], -32002, "{refused}");
    assert_eq!(
        refused["message"],
        "Transaction simulation failed: Blockhash not found"
    );
    assert_eq!(refused["data"]["err"], "BlockhashNotFound");
    let dropped = net.send(
        &transfer(&payer, 1_000_003, blockhash),
        json!({"skipPreflight": true}),
    );
    let dropped = dropped["result"].clone();
    assert!(
        dropped.is_string(),
        "accepted for sending, as a validator does"
    );
    net.confirmed_through(net.slot("processed") + 1);
    assert_eq!(
        net.ok("getSignatureStatuses", json!([[dropped]]))["value"][0],
        Value::Null,
        "and dropped by the bank"
    );
}

#[test]
fn each_level_hands_out_the_blockhash_its_slot_ended_with() {
    let net = Localnet::start();
    net.wait_for(
        "finalized",
        net.slot("finalized") + 1,
        Duration::from_secs(20),
    );
    for level in ["confirmed", "finalized"] {
        let latest = net.ok("getLatestBlockhash", json!([{"commitment": level}]));
        let slot = latest["context"]["slot"].as_u64().unwrap();
        let block = net.ok(
            "getBlock",
            json!([slot, {"commitment": level, "transactionDetails": "none"}]),
        );
        assert_eq!(latest["value"]["blockhash"], block["blockhash"], "{level}");
        assert_eq!(
            latest["value"]["lastValidBlockHeight"].as_u64().unwrap(),
            block["blockHeight"].as_u64().unwrap() + WINDOW,
            "{level}"
        );
    }

    // A hash only the working bank has registered is unknown to the finalized bank, which
    // isBlockhashValid asks by default, as a validator's does.
    let fresh: Hash = net.ok("getLatestBlockhash", json!([{"commitment": "processed"}]))["value"]
        ["blockhash"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(valid(&net, &fresh, "processed"), true);
    assert_eq!(
        net.ok("isBlockhashValid", json!([fresh.to_string()]))["value"],
        false
    );
    assert_eq!(valid(&net, &fresh, "finalized"), false);
}

#[test]
fn the_same_airdrop_within_a_slot_is_one_transfer_with_one_signature() {
    let net = Localnet::start();
    // Two requests sent as one batch reach the bank within the same slot (400 ms) unless a
    // slot boundary falls between them; retry until they share one.
    for _ in 0..5 {
        let to = Keypair::new().pubkey().to_string();
        let request = json!({"jsonrpc": "2.0", "id": 1, "method": "requestAirdrop", "params": [to, 1_000_000_000]});
        let responses = net.post(&json!([request, request]).to_string());
        let (first, second) = (&responses[0]["result"], &responses[1]["result"]);
        assert!(first.is_string() && second.is_string(), "{responses}");
        if first == second {
            net.confirmed_through(net.slot("processed"));
            let balance = net.ok("getBalance", json!([to, {"commitment": "confirmed"}]));
            assert_eq!(balance["value"], 1_000_000_000, "one transfer");
            return;
        }
    }
    panic!("five batches never landed in one slot");
}
