//! Commitment levels as a single-node validator's: a transaction is processed as it commits,
//! confirmed when its slot ends and finalized 31 slots later, and every read at a level sees
//! the chain as that level's slot left it.
mod common;

use std::time::{Duration, Instant};

use common::*;
use serde_json::{json, Value};
use solana_keypair::Keypair;
use solana_pubkey::Pubkey;
use solana_signer::Signer;
use solana_transaction::Transaction;

const SOL: u64 = 1_000_000_000;
const LEVELS: [&str; 3] = ["processed", "confirmed", "finalized"];

fn slot_of(read: &Value) -> u64 {
    read["context"]["slot"].as_u64().unwrap()
}

#[test]
fn a_transaction_is_processed_then_confirmed_then_finalized_and_each_level_reads_its_slot() {
    let net = Localnet::start();
    let address = Keypair::new().pubkey().to_string();
    let committed = Instant::now();
    let signature = net.ok("requestAirdrop", json!([address, SOL]));
    let tx_slot = net.landed(&signature)["slot"].as_u64().unwrap();

    // Rooting takes 31 slots, so nothing finalized shows it yet.
    assert_eq!(net.ok("getTransaction", json!([signature])), Value::Null);
    assert_eq!(net.err("getBlock", json!([tx_slot]))["code"], -32004);

    let mut seen: Vec<String> = Vec::new();
    loop {
        // Every read names the slot it read at: the airdrop shows exactly when its slot is at
        // or below that one.
        for level in LEVELS {
            let balance = net.ok("getBalance", json!([address, {"commitment": level}]));
            let landed = tx_slot <= slot_of(&balance);
            assert_eq!(balance["value"], if landed { SOL } else { 0 }, "{level}");
            let info = net.ok(
                "getAccountInfo",
                json!([address, {"commitment": level, "encoding": "base64"}]),
            );
            assert_eq!(
                info["value"].is_null(),
                tx_slot > slot_of(&info),
                "{level}: {info}"
            );
        }
        let statuses = net.ok("getSignatureStatuses", json!([[signature]]));
        let (processed, status) = (slot_of(&statuses), &statuses["value"][0]);
        let (expected, confirmations) = if tx_slot + 32 <= processed {
            ("finalized", Value::Null)
        } else if tx_slot < processed {
            ("confirmed", json!(processed - tx_slot))
        } else {
            ("processed", json!(0))
        };
        assert_eq!(status["confirmationStatus"], expected, "{statuses}");
        assert_eq!(status["confirmations"], confirmations, "{statuses}");
        if seen.last().map(String::as_str) != Some(expected) {
            seen.push(expected.to_string());
        }
        // Well before rooting, so the block is still confirmed when read.
        if expected == "confirmed" && processed - tx_slot < 25 {
            let confirmed = json!({"commitment": "confirmed"});
            assert_eq!(
                net.ok("getTransaction", json!([signature, confirmed]))["slot"],
                tx_slot
            );
            net.ok("getBlock", json!([tx_slot, confirmed]));
            let listed = net.ok("getSignaturesForAddress", json!([address, confirmed]));
            assert_eq!(listed[0]["signature"], signature);
            let votes = net.ok("getBlockCommitment", json!([tx_slot]))["commitment"].clone();
            assert_eq!(votes.as_array().unwrap().len(), 32, "{votes}");
        }
        if expected == "finalized" {
            break;
        }
        assert!(committed.elapsed() < Duration::from_secs(30), "{seen:?}");
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(seen.last().unwrap(), "finalized");
    assert!(seen.contains(&"confirmed".to_string()), "{seen:?}");
    assert!(
        committed.elapsed() >= Duration::from_secs(11),
        "31 slots of 400 ms: {:?}",
        committed.elapsed()
    );

    // Finalized, it reads at the default level everywhere, in every form.
    assert_eq!(
        net.ok("getTransaction", json!([signature]))["slot"],
        tx_slot
    );
    let encoded = net.ok("getBlock", json!([tx_slot, "base64"]));
    assert_eq!(encoded["transactions"][0]["transaction"][1], "base64");
    let listed = net.ok("getSignaturesForAddress", json!([address]));
    assert_eq!(listed[0]["confirmationStatus"], "finalized");
    assert_eq!(
        net.ok("getBlockCommitment", json!([tx_slot]))["commitment"],
        Value::Null,
        "no commitment is kept for a rooted block"
    );
    let blocks = net.ok("getBlocks", json!([tx_slot]));
    assert_eq!(blocks[0], tx_slot);
    assert!(blocks.as_array().unwrap().last().unwrap().as_u64().unwrap() <= net.slot("finalized"));
}

#[test]
fn slots_heights_and_blockhashes_at_each_level() {
    let net = Localnet::start();
    // Genesis is the root until the validator's tower fills, about 13 s.
    assert_eq!(net.slot("finalized"), 0);
    net.wait_for("finalized", 1, Duration::from_secs(20));

    let finalized = net.slot("finalized");
    let confirmed = net.slot("confirmed");
    let processed = net.slot("processed");
    assert!(confirmed >= finalized + 31, "{finalized} {confirmed}");
    assert!(processed > confirmed, "{confirmed} {processed}");
    for level in LEVELS {
        let epoch = net.ok("getEpochInfo", json!([{"commitment": level}]));
        // Every slot is a block: heights count slots.
        assert_eq!(epoch["blockHeight"], epoch["absoluteSlot"], "{level}");
    }

    // Every level hands out a blockhash good to send with (the newest: see get_latest_blockhash),
    // read at its slot.
    let payer = Keypair::new();
    net.airdrop(&payer, SOL);
    let finalized = net.ok("getLatestBlockhash", json!([{"commitment": "finalized"}]));
    assert!(slot_of(&finalized) + 31 < net.slot("processed"));
    let blockhash = finalized["value"]["blockhash"].as_str().unwrap();
    assert_eq!(
        net.ok("isBlockhashValid", json!([blockhash]))["value"],
        true
    );
    assert!(
        finalized["value"]["lastValidBlockHeight"].as_u64().unwrap()
            >= net
                .ok("getBlockHeight", json!([{"commitment": "processed"}]))
                .as_u64()
                .unwrap()
    );
    let transfer = Transaction::new_signed_with_payer(
        &[solana_system_interface::instruction::transfer(
            &payer.pubkey(),
            &Pubkey::new_unique(),
            SOL / 2,
        )],
        Some(&payer.pubkey()),
        &[&payer],
        blockhash.parse().unwrap(),
    );
    assert!(net.send(&transfer, json!({}))["result"].is_string());
}

#[test]
fn reads_of_stored_data_refuse_processed_and_unknown_levels_are_refused() {
    let net = Localnet::start();
    let signature = solana_signature::Signature::from([7u8; 64]).to_string();
    let address = Pubkey::new_unique().to_string();
    let processed = json!({"commitment": "processed"});
    for (method, params) in [
        ("getBlock", json!([1, processed])),
        ("getTransaction", json!([signature, processed])),
        ("getSignaturesForAddress", json!([address, processed])),
        ("getBlocks", json!([1, null, processed])),
        ("getBlocksWithLimit", json!([1, 5, processed])),
    ] {
        let error = net.err(method, params);
        assert_eq!(error["code"], -32602, "{method}");
        assert!(
            error["message"]
                .as_str()
                .unwrap()
                .contains("Method does not support commitment below `confirmed`"),
            "{method}: {error}"
        );
    }
    for level in ["max", "recent", ""] {
        let error = net.err("getSlot", json!([{"commitment": level}]));
        assert_eq!(error["code"], -32602, "{level}");
    }
}
