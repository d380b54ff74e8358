//! Every method takes its parameters in every form Agave's RPC reads them: optional ones left
//! out or given as null, and, where an optional positional comes before the config, the config
//! in its place (Agave's `RpcBlocksConfigWrapper`, `RpcLeaderScheduleConfigWrapper`) or an
//! encoding in place of the config (`RpcEncodingConfigWrapper`).
mod common;

use std::time::Duration;

use common::*;
use serde_json::{json, Value};
use solana_keypair::Keypair;
use solana_pubkey::Pubkey;
use solana_signer::Signer;
use solana_transaction::Transaction;

fn transfer(net: &Localnet, payer: &Keypair, lamports: u64) -> Transaction {
    Transaction::new_signed_with_payer(
        &[solana_system_interface::instruction::transfer(
            &payer.pubkey(),
            &Pubkey::new_unique(),
            lamports,
        )],
        Some(&payer.pubkey()),
        &[payer],
        net.blockhash(),
    )
}

fn base58(tx: &Transaction) -> String {
    bs58::encode(bincode::serialize(tx).unwrap()).into_string()
}

#[test]
fn every_method_takes_every_form_agave_reads() {
    let net = Localnet::start();
    let payer = Keypair::new();
    net.airdrop(&payer, 10_000_000_000);
    let address = payer.pubkey().to_string();
    let signature = net.ok(
        "getSignaturesForAddress",
        json!([address, {"commitment": "confirmed"}]),
    )[0]["signature"]
        .clone();
    let slot = net.ok("getSignatureStatuses", json!([[signature]]))["value"][0]["slot"]
        .as_u64()
        .unwrap();
    // Read at the default level, finalized, from here on.
    net.wait_for("finalized", slot, Duration::from_secs(20));
    let blockhash = net.blockhash().to_string();
    let message = {
        let tx = transfer(&net, &payer, 1);
        base64::Engine::encode(
            &base64::engine::general_purpose::STANDARD,
            bincode::serialize(&tx.message).unwrap(),
        )
    };
    let identity = net.ok("getClusterNodes", json!([]))[0]["pubkey"].clone();
    let program = solana_sdk_ids::system_program::ID.to_string();
    let token_program = spl_token_2022_interface::ID.to_string();
    let commitment = json!({"commitment": "finalized"});
    // Distinct transfers, each enough to open the account it pays.
    let sends: Vec<Value> = (1..=6)
        .map(|i| json!(base58(&transfer(&net, &payer, 1_000_000 + i))))
        .collect();

    let answered: Vec<(&str, Value)> = vec![
        ("getHealth", json!([])),
        ("getVersion", json!([])),
        ("getGenesisHash", json!([])),
        ("getSlot", json!([])),
        ("getSlot", json!([null])),
        ("getSlot", json!([commitment])),
        ("getBlockHeight", json!([])),
        ("getBlockHeight", json!([null])),
        ("getBlockHeight", json!([commitment])),
        ("getEpochInfo", json!([])),
        ("getEpochInfo", json!([null])),
        ("getEpochInfo", json!([commitment])),
        ("getLatestBlockhash", json!([])),
        ("getLatestBlockhash", json!([null])),
        ("getLatestBlockhash", json!([commitment])),
        ("isBlockhashValid", json!([blockhash])),
        ("isBlockhashValid", json!([blockhash, null])),
        ("isBlockhashValid", json!([blockhash, commitment])),
        ("getBalance", json!([address])),
        ("getBalance", json!([address, null])),
        ("getBalance", json!([address, commitment])),
        ("getMinimumBalanceForRentExemption", json!([0])),
        ("getMinimumBalanceForRentExemption", json!([0, null])),
        ("getMinimumBalanceForRentExemption", json!([0, commitment])),
        ("requestAirdrop", json!([address, 1_000])),
        ("requestAirdrop", json!([address, 2_000, null])),
        ("requestAirdrop", json!([address, 3_000, commitment])),
        ("getAccountInfo", json!([address])),
        ("getAccountInfo", json!([address, null])),
        (
            "getAccountInfo",
            json!([address, {"encoding": "base64", "commitment": "finalized"}]),
        ),
        ("getMultipleAccounts", json!([[address]])),
        ("getMultipleAccounts", json!([[address], null])),
        (
            "getMultipleAccounts",
            json!([[address], {"encoding": "base64"}]),
        ),
        ("getProgramAccounts", json!([token_program])),
        ("getProgramAccounts", json!([token_program, null])),
        ("getProgramAccounts", json!([token_program, commitment])),
        ("getSupply", json!([])),
        ("getSupply", json!([null])),
        ("getSupply", json!([commitment])),
        ("getLargestAccounts", json!([])),
        ("getLargestAccounts", json!([null])),
        ("getLargestAccounts", json!([commitment])),
        (
            "getTokenAccountsByOwner",
            json!([address, {"programId": token_program}]),
        ),
        (
            "getTokenAccountsByOwner",
            json!([address, {"programId": token_program}, null]),
        ),
        (
            "getTokenAccountsByOwner",
            json!([address, {"programId": token_program}, commitment]),
        ),
        (
            "getTokenAccountsByDelegate",
            json!([address, {"programId": token_program}]),
        ),
        (
            "getTokenAccountsByDelegate",
            json!([address, {"programId": token_program}, null]),
        ),
        (
            "getTokenAccountsByDelegate",
            json!([address, {"programId": token_program}, commitment]),
        ),
        ("getFeeForMessage", json!([message])),
        ("getFeeForMessage", json!([message, null])),
        ("getFeeForMessage", json!([message, commitment])),
        ("sendTransaction", json!([sends[0]])),
        ("sendTransaction", json!([sends[1], null])),
        ("sendTransaction", json!([sends[2], {"encoding": "base58"}])),
        ("simulateTransaction", json!([sends[3]])),
        ("simulateTransaction", json!([sends[4], null])),
        (
            "simulateTransaction",
            json!([sends[5], {"sigVerify": true}]),
        ),
        ("getSignatureStatuses", json!([[signature]])),
        ("getSignatureStatuses", json!([[signature], null])),
        (
            "getSignatureStatuses",
            json!([[signature], {"searchTransactionHistory": true}]),
        ),
        ("getTransaction", json!([signature])),
        ("getTransaction", json!([signature, null])),
        ("getTransaction", json!([signature, "base64"])),
        ("getTransaction", json!([signature, "jsonParsed"])),
        ("getTransaction", json!([signature, commitment])),
        ("getSignaturesForAddress", json!([address])),
        ("getSignaturesForAddress", json!([address, null])),
        ("getSignaturesForAddress", json!([address, {"limit": 1}])),
        ("getBlock", json!([slot])),
        ("getBlock", json!([slot, null])),
        ("getBlock", json!([slot, "base64"])),
        (
            "getBlock",
            json!([slot, {"transactionDetails": "signatures"}]),
        ),
        ("getBlockTime", json!([slot])),
        ("getBlocks", json!([slot])),
        ("getBlocks", json!([slot, slot])),
        ("getBlocks", json!([slot, null])),
        ("getBlocks", json!([slot, commitment])),
        ("getBlocks", json!([slot, slot, commitment])),
        ("getBlocks", json!([slot, null, commitment])),
        ("getBlocksWithLimit", json!([slot, 2])),
        ("getBlocksWithLimit", json!([slot, 2, null])),
        ("getBlocksWithLimit", json!([slot, 2, commitment])),
        ("getFirstAvailableBlock", json!([])),
        ("getBlockCommitment", json!([slot])),
        ("getEpochSchedule", json!([])),
        ("getTransactionCount", json!([])),
        ("getTransactionCount", json!([null])),
        ("getTransactionCount", json!([commitment])),
        ("getSlotLeader", json!([])),
        ("getSlotLeader", json!([null])),
        ("getSlotLeader", json!([commitment])),
        ("getClusterNodes", json!([])),
        ("getVoteAccounts", json!([])),
        ("getVoteAccounts", json!([null])),
        ("getVoteAccounts", json!([commitment])),
        ("getInflationGovernor", json!([])),
        ("getInflationGovernor", json!([null])),
        ("getInflationGovernor", json!([commitment])),
        ("getInflationRate", json!([])),
        ("getRecentPerformanceSamples", json!([])),
        ("getRecentPerformanceSamples", json!([null])),
        ("getRecentPerformanceSamples", json!([5])),
        ("getLeaderSchedule", json!([])),
        ("getLeaderSchedule", json!([null])),
        ("getLeaderSchedule", json!([slot])),
        ("getLeaderSchedule", json!([{"identity": identity}])),
        ("getLeaderSchedule", json!([null, {"identity": identity}])),
        ("getLeaderSchedule", json!([slot, {"identity": identity}])),
    ];
    let mut refused = vec![];
    for (method, params) in &answered {
        let response = net.call(method, params.clone());
        if response.get("error").is_some() || response["result"].is_null() {
            refused.push(format!("{method}{params}: {response}"));
        }
    }
    // The token methods read their parameters before finding the account is no token's.
    let token_reads: Vec<(&str, Value)> = vec![
        ("getTokenAccountBalance", json!([address])),
        ("getTokenAccountBalance", json!([address, null])),
        ("getTokenAccountBalance", json!([address, commitment])),
        ("getTokenSupply", json!([address])),
        ("getTokenSupply", json!([address, null])),
        ("getTokenSupply", json!([address, commitment])),
        ("getTokenLargestAccounts", json!([address])),
        ("getTokenLargestAccounts", json!([address, null])),
        ("getTokenLargestAccounts", json!([address, commitment])),
    ];
    for (method, params) in &token_reads {
        let error = net.err(method, params.clone());
        if error["message"].as_str().unwrap().contains("params[") {
            refused.push(format!("{method}{params}: {error}"));
        }
    }
    assert!(refused.is_empty(), "refused:\n{}", refused.join("\n"));

    // The forms select what they say.
    let blocks = net.ok("getBlocks", json!([slot, slot]));
    assert_eq!(blocks, json!([slot]));
    let encoded = net.ok("getTransaction", json!([signature, "base64"]));
    assert_eq!(encoded["transaction"][1], "base64");
    let schedule = net.ok("getLeaderSchedule", json!([{"identity": program}]));
    assert_eq!(
        schedule,
        json!({}),
        "the config in the slot's place applies"
    );
}
