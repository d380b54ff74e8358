//! The methods a solana-test-validator serves beyond what precompact needs: blocks, the
//! validator, epochs and inflation, each in a validator's shape.
mod common;

use common::*;
use serde_json::{json, Value};
use solana_keypair::Keypair;
use solana_pubkey::Pubkey;
use solana_signer::Signer;

fn slot_of(net: &Localnet, signature: &Value) -> u64 {
    net.landed(signature)["slot"].as_u64().unwrap()
}

#[test]
fn blocks_hold_their_transactions_and_chain_by_blockhash() {
    let net = Localnet::start();
    let signature = net.ok(
        "requestAirdrop",
        json!([Keypair::new().pubkey().to_string(), 1_000_000_000]),
    );
    let slot = slot_of(&net, &signature);
    net.confirmed_through(slot + 1);
    // Confirmed, so every slot up to this airdrop's is a confirmed block.
    net.airdrop(&Keypair::new(), 1_000_000_000);
    let later = net.slot("confirmed");

    let block = net.ok(
        "getBlock",
        json!([slot, {"commitment": "confirmed", "maxSupportedTransactionVersion": 0}]),
    );
    assert_eq!(block["parentSlot"], slot - 1);
    assert!(block["blockHeight"].is_u64());
    let [entry] = block["transactions"].as_array().unwrap().as_slice() else {
        panic!("one transaction: {block}")
    };
    assert_eq!(entry["transaction"]["signatures"][0], signature);
    assert_eq!(entry["meta"]["err"], Value::Null);
    assert_eq!(entry["version"], "legacy");
    assert_eq!(block["rewards"], json!([]));
    let time = net.ok("getBlockTime", json!([slot]));
    assert_eq!(block["blockTime"], time);
    assert_eq!(
        net.ok(
            "getTransaction",
            json!([signature, {"commitment": "confirmed"}])
        )["blockTime"],
        time
    );

    let next = net.ok(
        "getBlock",
        json!([slot + 1, {"commitment": "confirmed", "transactionDetails": "none", "rewards": false}]),
    );
    assert_eq!(
        next["previousBlockhash"], block["blockhash"],
        "blocks link by blockhash"
    );
    assert!(next.get("transactions").is_none() && next.get("rewards").is_none());
    let signatures = net.ok(
        "getBlock",
        json!([slot, {"commitment": "confirmed", "transactionDetails": "signatures"}]),
    );
    assert_eq!(signatures["signatures"], json!([signature]));
    let encoded = net.ok(
        "getBlock",
        json!([slot, {"commitment": "confirmed", "encoding": "base64"}]),
    );
    assert_eq!(encoded["transactions"][0]["transaction"][1], "base64");

    let first = net
        .ok("getFirstAvailableBlock", json!([]))
        .as_u64()
        .unwrap();
    let all = net.ok("getBlocks", json!([0, null, {"commitment": "confirmed"}]));
    let all: Vec<u64> = all
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_u64().unwrap())
        .collect();
    assert_eq!(all[0], first);
    assert!(
        all.windows(2).all(|pair| pair[1] == pair[0] + 1),
        "every slot from the first is a block: {all:?}"
    );
    assert!(*all.last().unwrap() >= later);
    let confirmed = json!({"commitment": "confirmed"});
    assert_eq!(
        net.ok("getBlocks", json!([slot, slot, confirmed])),
        json!([slot])
    );
    assert_eq!(
        net.ok("getBlocks", json!([slot, slot - 1, confirmed])),
        json!([])
    );
    assert_eq!(
        net.ok("getBlocksWithLimit", json!([first, 2, confirmed])),
        json!([first, first + 1])
    );
    assert_eq!(
        net.ok("getBlocksWithLimit", json!([u64::MAX, 3])),
        json!([])
    );
    assert_eq!(net.ok("getBlocksWithLimit", json!([first, 0])), json!([]));
    assert_eq!(
        net.err("getBlocksWithLimit", json!([first, 500_001]))["code"],
        -32602
    );

    for missing in [first - 1, later + 1_000] {
        let error = net.err("getBlock", json!([missing]));
        assert_eq!(error["code"], -32004);
        assert_eq!(
            error["message"],
            format!("Block not available for slot {missing}")
        );
        assert_eq!(net.err("getBlockTime", json!([missing]))["code"], -32004);
    }
    assert_eq!(
        net.err(
            "getBlock",
            json!([slot, {"transactionDetails": "everything"}])
        )["code"],
        -32602
    );

    // Confirmed, not yet rooted: the one validator's stake, at the count of votes on the block.
    let commitment = net.ok("getBlockCommitment", json!([slot]));
    let stake = net.ok("getVoteAccounts", json!([]))["current"][0]["activatedStake"].clone();
    assert_eq!(commitment["totalStake"], stake);
    let by_votes = commitment["commitment"].as_array().unwrap();
    assert_eq!(by_votes.len(), 32);
    let voted: Vec<&Value> = by_votes.iter().filter(|s| **s != 0).collect();
    assert_eq!(voted, [&stake]);
    assert_eq!(by_votes[31], 0, "31 votes root a block");
}

#[test]
fn the_one_validator_leads_votes_and_is_listed() {
    let net = Localnet::start();
    let leader = net
        .ok("getSlotLeader", json!([]))
        .as_str()
        .unwrap()
        .to_string();
    leader.parse::<Pubkey>().unwrap();
    let nodes = net.ok("getClusterNodes", json!([]));
    assert_eq!(nodes.as_array().unwrap().len(), 1);
    assert_eq!(nodes[0]["pubkey"], leader);
    assert_eq!(
        nodes[0]["version"],
        net.ok("getVersion", json!([]))["solana-core"]
    );
    assert!(nodes[0]["featureSet"].is_u64());

    let votes = net.ok("getVoteAccounts", json!([]));
    assert_eq!(votes["delinquent"], json!([]));
    let vote = &votes["current"][0];
    assert_eq!(vote["nodePubkey"], leader);
    assert!(vote["activatedStake"].as_u64().unwrap() > 0);
    assert!(vote["commission"].as_u64().unwrap() <= 100);
    assert_eq!(vote["epochVoteAccount"], true);
    let last_vote = vote["lastVote"].as_u64().unwrap();
    assert!(last_vote <= net.slot("confirmed"));
    assert_eq!(vote["rootSlot"], last_vote.saturating_sub(31));
    let by_key = net.ok(
        "getVoteAccounts",
        json!([{"votePubkey": vote["votePubkey"]}]),
    );
    assert_eq!(by_key["current"].as_array().unwrap().len(), 1);
    let other = net.ok(
        "getVoteAccounts",
        json!([{"votePubkey": Pubkey::new_unique().to_string()}]),
    );
    assert_eq!(other["current"], json!([]));
    assert_eq!(
        net.err("getVoteAccounts", json!([{"votePubkey": "x"}]))["code"],
        -32602
    );

    let epoch = net.ok("getEpochInfo", json!([]));
    let schedule = net.ok("getLeaderSchedule", json!([]));
    assert_eq!(schedule.as_object().unwrap().len(), 1);
    assert_eq!(
        schedule[&leader].as_array().unwrap().len() as u64,
        epoch["slotsInEpoch"].as_u64().unwrap()
    );
    assert_eq!(
        net.ok(
            "getLeaderSchedule",
            json!([null, {"identity": Pubkey::new_unique().to_string()}])
        ),
        json!({})
    );
    assert_eq!(
        net.ok("getLeaderSchedule", json!([{"identity": leader}]))
            .as_object()
            .unwrap()
            .len(),
        1
    );
    assert_eq!(
        net.ok("getLeaderSchedule", json!([u64::MAX])),
        Value::Null,
        "beyond the next epoch"
    );
}

#[test]
fn epochs_inflation_and_throughput() {
    let net = Localnet::start();
    let schedule = net.ok("getEpochSchedule", json!([]));
    for key in [
        "slotsPerEpoch",
        "leaderScheduleSlotOffset",
        "firstNormalEpoch",
        "firstNormalSlot",
    ] {
        assert!(schedule[key].is_u64(), "{key} in {schedule}");
    }
    assert!(schedule["warmup"].is_boolean());
    let epoch = net.ok("getEpochInfo", json!([]));
    if schedule["warmup"] == false {
        assert_eq!(schedule["slotsPerEpoch"], epoch["slotsInEpoch"]);
    }

    assert_eq!(net.ok("getTransactionCount", json!([])), 0);
    net.airdrop(&Keypair::new(), 1_000_000_000);
    net.airdrop(&Keypair::new(), 1_000_000_000);
    assert_eq!(
        net.ok("getTransactionCount", json!([{"commitment": "confirmed"}])),
        2
    );

    let governor = net.ok("getInflationGovernor", json!([]));
    for key in [
        "initial",
        "terminal",
        "taper",
        "foundation",
        "foundationTerm",
    ] {
        assert!(governor[key].is_f64(), "{key} in {governor}");
    }
    let rate = net.ok("getInflationRate", json!([]));
    assert_eq!(rate["epoch"], epoch["epoch"]);
    let (total, validator, foundation) = (
        rate["total"].as_f64().unwrap(),
        rate["validator"].as_f64().unwrap(),
        rate["foundation"].as_f64().unwrap(),
    );
    assert!(
        (total - validator - foundation).abs() < 1e-12
            && total <= governor["initial"].as_f64().unwrap()
    );

    // A sample covers a completed minute; a chain younger than that has none yet.
    assert_eq!(net.ok("getRecentPerformanceSamples", json!([])), json!([]));
    assert_eq!(
        net.ok("getRecentPerformanceSamples", json!([720])),
        json!([])
    );
    assert_eq!(
        net.err("getRecentPerformanceSamples", json!([721]))["code"],
        -32602
    );
}
