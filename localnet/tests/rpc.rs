//! Every JSON-RPC method and every error the localnet serves, against the real runtime.
mod common;

use base64::Engine;
use common::*;
use precompact::error::PrecompactError;
use precompact_harness::*;
use serde_json::{json, Value};
use solana_keypair::Keypair;
use solana_pubkey::Pubkey;
use solana_signer::Signer;
use solana_transaction::Transaction;

const SOL: u64 = 1_000_000_000;
const RECORD_SIZE: usize = 556;
const AUTHORITY_OFFSET: usize = 209;

/// An authority with an initialized record holding one savepoint.
struct Instance {
    authority: Keypair,
    record: Pubkey,
    savepoint_signature: String,
}

fn savepoint_fields(sequence: u64, snapshot_byte: u8, prev: [u8; 32]) -> SavepointFields {
    SavepointFields {
        sequence,
        timestamp: 1_764_087_300 + sequence as i64,
        instance_id: instance_id("Gabriel #215"),
        snapshot_hash: [snapshot_byte; 32],
        prev_snapshot_hash: prev,
        git_commit: format!("{snapshot_byte:040x}").into_bytes(),
    }
}

fn signed(
    net: &Localnet,
    instructions: &[solana_instruction::Instruction],
    payer: &Keypair,
    signers: &[&Keypair],
) -> Transaction {
    let mut all = vec![payer];
    all.extend_from_slice(signers);
    Transaction::new_signed_with_payer(instructions, Some(&payer.pubkey()), &all, net.blockhash())
}

fn instance_with_savepoint(net: &Localnet) -> Instance {
    let authority = Keypair::new();
    net.airdrop(&authority, 10 * SOL);
    let id = instance_id("Gabriel #215");
    let (record, _) = record_address(&authority.pubkey(), &id);
    let init = signed(
        net,
        &[initialize_instruction(
            &authority.pubkey(),
            &authority.pubkey(),
            id,
        )],
        &authority,
        &[],
    );
    assert!(net.send(&init, json!({}))["result"].is_string());
    let tx = signed(
        net,
        &savepoint_instructions(&authority, &savepoint_fields(1, 1, [0; 32]), b"{}"),
        &authority,
        &[],
    );
    let response = net.send(&tx, json!({}));
    let savepoint_signature = response["result"]
        .as_str()
        .unwrap_or_else(|| panic!("savepoint accepted: {response}"))
        .to_string();
    Instance {
        authority,
        record,
        savepoint_signature,
    }
}

fn custom_error(index: u8, error: PrecompactError) -> Value {
    json!({"InstructionError": [index, {"Custom": u32::from(error)}]})
}

#[test]
fn node_information_methods() {
    let net = Localnet::start();
    assert_eq!(net.ok("getHealth", json!([])), json!("ok"));
    let version = net.ok("getVersion", json!([]));
    assert_eq!(version["solana-core"], "3.1.12");
    assert!(version["feature-set"].is_u64());
    let genesis = net.ok("getGenesisHash", json!([]));
    assert_eq!(
        bs58::decode(genesis.as_str().unwrap())
            .into_vec()
            .unwrap()
            .len(),
        32
    );
    let slot = net
        .ok("getSlot", json!([{"commitment": "confirmed"}]))
        .as_u64()
        .unwrap();
    net.airdrop(&Keypair::new(), SOL);
    let advanced = (0..50).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(100));
        net.slot("processed") > slot
    });
    assert!(advanced, "the slot advances within a slot time");
    assert!(net.ok("getBlockHeight", json!([])).is_u64());
    let before = net.ok("getSlot", json!([])).as_u64().unwrap();
    let epoch = net.ok("getEpochInfo", json!([]));
    let after = net.ok("getSlot", json!([])).as_u64().unwrap();
    assert!((before..=after).contains(&epoch["absoluteSlot"].as_u64().unwrap()));
    assert_eq!(epoch["transactionCount"], 1);
    for key in ["blockHeight", "epoch", "slotIndex", "slotsInEpoch"] {
        assert!(epoch[key].is_u64(), "{key} in {epoch}");
    }
}

#[test]
fn blockhashes_fees_and_rent() {
    let net = Localnet::start();
    let latest = net.ok("getLatestBlockhash", json!([{"commitment": "finalized"}]));
    assert!(latest["context"]["slot"].is_u64());
    assert!(latest["value"]["lastValidBlockHeight"].is_u64());
    let blockhash = latest["value"]["blockhash"].as_str().unwrap();
    assert_eq!(
        net.ok("isBlockhashValid", json!([blockhash]))["value"],
        true
    );
    let never_issued = Pubkey::new_unique().to_string();
    assert_eq!(
        net.ok("isBlockhashValid", json!([never_issued]))["value"],
        false
    );

    let payer = Keypair::new();
    let mut message = solana_message::Message::new(
        &[solana_system_interface::instruction::transfer(
            &payer.pubkey(),
            &Pubkey::new_unique(),
            1,
        )],
        Some(&payer.pubkey()),
    );
    message.recent_blockhash = blockhash.parse().unwrap();
    let encoded =
        base64::engine::general_purpose::STANDARD.encode(bincode::serialize(&message).unwrap());
    assert_eq!(net.ok("getFeeForMessage", json!([encoded]))["value"], 5000);
    message.recent_blockhash = never_issued.parse().unwrap();
    let stale =
        base64::engine::general_purpose::STANDARD.encode(bincode::serialize(&message).unwrap());
    assert_eq!(
        net.ok("getFeeForMessage", json!([stale]))["value"],
        Value::Null
    );
    assert_eq!(net.err("getFeeForMessage", json!(["%%%"]))["code"], -32602);

    let rent = net
        .ok("getMinimumBalanceForRentExemption", json!([RECORD_SIZE]))
        .as_u64()
        .unwrap();
    assert_eq!(rent, (RECORD_SIZE as u64 + 128) * 3480 * 2);
}

#[test]
fn airdrop_balance_and_signature_status() {
    let net = Localnet::start();
    let who = Keypair::new();
    let signature = net.ok("requestAirdrop", json!([who.pubkey().to_string(), 3 * SOL]));
    assert!(signature.is_string());
    net.landed(&signature);
    let balance = net.ok(
        "getBalance",
        json!([who.pubkey().to_string(), {"commitment": "processed"}]),
    );
    assert_eq!(balance["value"], 3 * SOL);
    assert!(balance["context"]["slot"].is_u64());
    assert_eq!(
        net.ok(
            "getBalance",
            json!([Pubkey::new_unique().to_string(), {"commitment": "confirmed"}])
        )["value"],
        0
    );
}

#[test]
fn signature_statuses_report_committed_and_unknown() {
    let net = Localnet::start();
    let who = Keypair::new();
    let signature = net.ok("requestAirdrop", json!([who.pubkey().to_string(), SOL]));
    net.landed(&signature);
    let unknown = solana_signature::Signature::from([7u8; 64]).to_string();
    let statuses = net.ok("getSignatureStatuses", json!([[signature, unknown]]));
    let first = &statuses["value"][0];
    // Finalized takes 31 slots more; see tests/commitment.rs for the whole way.
    assert_ne!(first["confirmationStatus"], "finalized");
    assert!(first["confirmations"].as_u64().unwrap() <= 1);
    assert_eq!(first["err"], Value::Null);
    assert_eq!(first["status"], json!({"Ok": null}));
    assert!(first["slot"].is_u64());
    assert_eq!(statuses["value"][1], Value::Null);
}

#[test]
fn savepoint_accounts_are_readable_in_every_encoding() {
    let net = Localnet::start();
    let instance = instance_with_savepoint(&net);
    let address = instance.record.to_string();

    let info = net.ok(
        "getAccountInfo",
        json!([address, {"encoding": "base64", "commitment": "confirmed"}]),
    )["value"]
        .clone();
    assert_eq!(info["owner"], precompact::ID.to_string());
    assert_eq!(info["space"], RECORD_SIZE);
    assert_eq!(info["executable"], false);
    assert!(info["rentEpoch"].is_u64());
    let data = base64::engine::general_purpose::STANDARD
        .decode(info["data"][0].as_str().unwrap())
        .unwrap();
    assert_eq!(info["data"][1], "base64");
    assert_eq!(&data[..4], &[0xEF, 0xBB, 0xBF, 0x01]);
    assert_eq!(
        &data[AUTHORITY_OFFSET..AUTHORITY_OFFSET + 32],
        instance.authority.pubkey().as_ref()
    );

    let header = net.ok(
        "getAccountInfo",
        json!([address, {"commitment": "confirmed", "encoding": "base58", "dataSlice": {"offset": 0, "length": 32}}]),
    )["value"]
        .clone();
    assert_eq!(header["data"][1], "base58");
    assert_eq!(
        bs58::decode(header["data"][0].as_str().unwrap())
            .into_vec()
            .unwrap(),
        data[..32]
    );
    let too_big = net.err(
        "getAccountInfo",
        json!([address, {"encoding": "base58", "commitment": "confirmed"}]),
    );
    assert_eq!(too_big["code"], -32602);
    assert!(too_big["message"].as_str().unwrap().contains("128 bytes"));
    let zstd = net.ok(
        "getAccountInfo",
        json!([address, {"commitment": "confirmed", "encoding": "base64+zstd"}]),
    )["value"]
        .clone();
    assert_eq!(zstd["data"][1], "base64+zstd");
    let compressed = base64::engine::general_purpose::STANDARD
        .decode(zstd["data"][0].as_str().unwrap())
        .unwrap();
    assert!(
        compressed.len() < data.len(),
        "a mostly-zero record compresses"
    );
    assert_eq!(zstd::decode_all(&compressed[..]).unwrap(), data);
    let sliced = net.ok("getMultipleAccounts", json!([[address], {"commitment": "confirmed", "encoding": "base64+zstd", "dataSlice": {"offset": AUTHORITY_OFFSET, "length": 32}}]));
    let authority = zstd::decode_all(
        &base64::engine::general_purpose::STANDARD
            .decode(sliced["value"][0]["data"][0].as_str().unwrap())
            .unwrap()[..],
    )
    .unwrap();
    assert_eq!(authority, instance.authority.pubkey().to_bytes());
    let listed = net.ok(
        "getProgramAccounts",
        json!([precompact::ID.to_string(), {"commitment": "confirmed", "encoding": "base64+zstd", "filters": [{"dataSize": RECORD_SIZE}]}]),
    );
    assert_eq!(listed[0]["account"]["data"][1], "base64+zstd");
    let parsed = net.ok(
        "getAccountInfo",
        json!([address, {"commitment": "confirmed", "encoding": "jsonParsed"}]),
    )["value"]
        .clone();
    assert_eq!(parsed["data"][1], "base64");
    assert_eq!(
        net.ok(
            "getAccountInfo",
            json!([Pubkey::new_unique().to_string(), {"commitment": "confirmed", "encoding": "base64"}])
        )["value"],
        Value::Null
    );

    let many = net.ok("getMultipleAccounts", json!([[address, Pubkey::new_unique().to_string()], {"commitment": "confirmed", "encoding": "base64", "dataSlice": {"offset": 4, "length": 28}}]));
    assert_eq!(many["value"][1], Value::Null);
    let reserved = base64::engine::general_purpose::STANDARD
        .decode(many["value"][0]["data"][0].as_str().unwrap())
        .unwrap();
    assert_eq!(reserved, vec![0u8; 28]);
}

#[test]
fn program_accounts_filter_by_size_and_bytes() {
    let net = Localnet::start();
    let a = instance_with_savepoint(&net);
    let b = instance_with_savepoint(&net);
    let program = precompact::ID.to_string();

    let all = net.ok(
        "getProgramAccounts",
        json!([program, {"commitment": "confirmed", "encoding": "base64", "filters": [{"dataSize": RECORD_SIZE}]}]),
    );
    let mut found: Vec<String> = all
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["pubkey"].as_str().unwrap().to_string())
        .collect();
    found.sort();
    let mut expected = vec![a.record.to_string(), b.record.to_string()];
    expected.sort();
    assert_eq!(found, expected);

    let by_authority =
        json!({"memcmp": {"offset": AUTHORITY_OFFSET, "bytes": a.authority.pubkey().to_string()}});
    let only_a = net.ok(
        "getProgramAccounts",
        json!([program, {"commitment": "confirmed", "encoding": "base64", "filters": [by_authority]}]),
    );
    assert_eq!(only_a.as_array().unwrap().len(), 1);
    assert_eq!(only_a[0]["pubkey"], a.record.to_string());
    assert_eq!(only_a[0]["account"]["owner"], program);

    let magic64 = base64::engine::general_purpose::STANDARD.encode([0xEF, 0xBB, 0xBF, 0x01]);
    let with_context = net.ok("getProgramAccounts", json!([program, {"commitment": "confirmed", "encoding": "base64", "withContext": true, "filters": [{"memcmp": {"offset": 0, "bytes": magic64, "encoding": "base64"}}]}]));
    assert_eq!(with_context["value"].as_array().unwrap().len(), 2);
    assert_eq!(
        net.ok(
            "getProgramAccounts",
            json!([program, {"commitment": "confirmed", "filters": [{"dataSize": 1}]}])
        ),
        json!([])
    );
    assert_eq!(
        net.err(
            "getProgramAccounts",
            json!([program, {"filters": [{"what": 1}]}])
        )["code"],
        -32602
    );
}

#[test]
fn client_offsets_and_lengths_of_any_size_are_answered_not_panicked_on() {
    let net = Localnet::start();
    let instance = instance_with_savepoint(&net);
    let address = instance.record.to_string();
    let program = precompact::ID.to_string();
    let data64 = |value: &Value| {
        base64::engine::general_purpose::STANDARD
            .decode(value["data"][0].as_str().unwrap())
            .unwrap()
    };

    for (offset, length, expected_len) in [
        (0, u64::MAX, RECORD_SIZE),
        (RECORD_SIZE as u64 - 8, u64::MAX, 8),
        (u64::MAX, 1, 0),
        (u64::MAX, u64::MAX, 0),
    ] {
        let config = json!({"encoding": "base64", "commitment": "confirmed", "dataSlice": {"offset": offset, "length": length}});
        let info = net.ok("getAccountInfo", json!([address, config]));
        assert_eq!(
            data64(&info["value"]).len(),
            expected_len,
            "offset {offset}, length {length}"
        );
        let records = merge(config, json!({"filters": [{"dataSize": RECORD_SIZE}]}));
        let listed = net.ok("getProgramAccounts", json!([program, records]));
        assert_eq!(data64(&listed[0]["account"]).len(), expected_len);
    }
    let beyond_u64 = r#"{"jsonrpc":"2.0","id":1,"method":"getAccountInfo","params":["11111111111111111111111111111111",{"dataSlice":{"offset":18446744073709551616,"length":1}}]}"#;
    assert_eq!(net.post(beyond_u64)["error"]["code"], -32602);

    let authority = instance.authority.pubkey().to_string();
    for offset in [
        u64::MAX,
        u64::MAX - 1,
        RECORD_SIZE as u64 - 1,
        RECORD_SIZE as u64,
    ] {
        let filter = json!({"memcmp": {"offset": offset, "bytes": authority}});
        assert_eq!(
            net.ok(
                "getProgramAccounts",
                json!([program, {"commitment": "confirmed", "encoding": "base64", "filters": [filter]}])
            ),
            json!([]),
            "offset {offset}"
        );
    }
    let last_byte = bs58::encode([0u8]).into_string();
    let at_the_end = json!({"memcmp": {"offset": RECORD_SIZE - 1, "bytes": last_byte}});
    assert_eq!(
        net.ok(
            "getProgramAccounts",
            json!([program, {"commitment": "confirmed", "encoding": "base64", "filters": [at_the_end]}])
        )
        .as_array()
        .unwrap()
        .len(),
        1
    );

    let too_long =
        json!({"memcmp": {"offset": 0, "bytes": bs58::encode([1u8; 129]).into_string()}});
    let error = net.err(
        "getProgramAccounts",
        json!([program, {"filters": [too_long]}]),
    );
    assert_eq!(error["code"], -32602);
    let five = vec![json!({"dataSize": RECORD_SIZE}); 5];
    let error = net.err("getProgramAccounts", json!([program, {"filters": five}]));
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("Too many filters provided; max 4"),
        "{error}"
    );

    let error = net.err("getMinimumBalanceForRentExemption", json!([u64::MAX]));
    assert_eq!(error["code"], -32602);
    assert_eq!(
        net.ok(
            "getMinimumBalanceForRentExemption",
            json!([10 * 1024 * 1024])
        )
        .as_u64()
        .unwrap(),
        (10 * 1024 * 1024 + 128) * 3480 * 2
    );
    assert_eq!(net.ok("getHealth", json!([])), "ok", "still serving");
}

#[test]
fn send_accepts_base58_and_base64() {
    let net = Localnet::start();
    let payer = Keypair::new();
    net.airdrop(&payer, 2 * SOL);
    let to = Pubkey::new_unique();
    let transfer = |lamports| {
        signed(
            &net,
            &[solana_system_interface::instruction::transfer(
                &payer.pubkey(),
                &to,
                lamports,
            )],
            &payer,
            &[],
        )
    };
    let base58 = bs58::encode(bincode::serialize(&transfer(SOL / 2)).unwrap()).into_string();
    assert!(net.ok("sendTransaction", json!([base58])).is_string());
    assert!(net.ok("sendTransaction", json!([encode64(&transfer(SOL / 4)), {"encoding": "base64", "preflightCommitment": "processed"}])).is_string());
    net.confirmed_through(net.slot("processed"));
    assert_eq!(
        net.ok(
            "getBalance",
            json!([to.to_string(), {"commitment": "confirmed"}])
        )["value"],
        SOL / 2 + SOL / 4
    );
    assert_eq!(
        net.err("sendTransaction", json!(["not base58 0OIl"]))["code"],
        -32602
    );
    assert_eq!(
        net.err(
            "sendTransaction",
            json!([encode64(&transfer(1)), {"encoding": "hex"}])
        )["code"],
        -32602
    );
    assert_eq!(
        net.err("sendTransaction", json!(["AAAA", {"encoding": "base64"}]))["code"],
        -32602
    );
}

#[test]
fn preflight_failure_carries_the_program_error_and_logs() {
    let net = Localnet::start();
    let instance = instance_with_savepoint(&net);
    // Replaying sequence 1 (in a transaction that differs, so it is not a mere duplicate) must
    // fail with the program's own error.
    let replay = signed(
        &net,
        &savepoint_instructions(
            &instance.authority,
            &savepoint_fields(1, 1, [0; 32]),
            b"{\"replay\":1}",
        ),
        &instance.authority,
        &[],
    );
    let error = net.send(&replay, json!({}))["error"].clone();
    assert_eq!(error["code"], -32002);
    assert!(error["message"]
        .as_str()
        .unwrap()
        .starts_with("Transaction simulation failed: Error processing Instruction 1"));
    assert_eq!(
        error["data"]["err"],
        custom_error(1, PrecompactError::SequenceMismatch)
    );
    let logs: Vec<&str> = error["data"]["logs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    // Natively the program's own msg! output goes to the process's stdout, so the runtime's
    // line is what names the error here.
    let code = format!(
        "custom program error: {:#x}",
        u32::from(PrecompactError::SequenceMismatch)
    );
    assert!(
        logs.iter().any(|l| l.ends_with(&code)),
        "logs name the error: {logs:?}"
    );
    assert!(error["data"]["unitsConsumed"].is_u64());
}

#[test]
fn skip_preflight_commits_the_failure_for_get_transaction() {
    let net = Localnet::start();
    let instance = instance_with_savepoint(&net);
    let fork = signed(
        &net,
        &savepoint_instructions(&instance.authority, &savepoint_fields(2, 2, [9; 32]), b"{}"),
        &instance.authority,
        &[],
    );
    let signature = net.send(&fork, json!({"skipPreflight": true}))["result"]
        .as_str()
        .unwrap()
        .to_string();

    let tx = net.ok(
        "getTransaction",
        json!([signature, {"commitment": "confirmed", "encoding": "json", "maxSupportedTransactionVersion": 0}]),
    );
    assert_eq!(
        tx["meta"]["err"],
        custom_error(1, PrecompactError::PrevHashMismatch)
    );
    assert_eq!(
        tx["meta"]["status"]["Err"],
        custom_error(1, PrecompactError::PrevHashMismatch)
    );
    // 5,000 lamports for the fee payer's signature and 5,000 for the one the Ed25519 precompile verifies.
    assert_eq!(tx["meta"]["fee"], 10_000);
    assert_eq!(tx["version"], "legacy");
    let code = format!(
        "custom program error: {:#x}",
        u32::from(PrecompactError::PrevHashMismatch)
    );
    assert!(tx["meta"]["logMessages"]
        .as_array()
        .unwrap()
        .iter()
        .any(|l| l.as_str().unwrap().ends_with(&code)));
    assert_eq!(tx["transaction"]["signatures"][0], signature);
    assert_eq!(
        tx["transaction"]["message"]["accountKeys"][0],
        instance.authority.pubkey().to_string()
    );
    assert_eq!(
        tx["transaction"]["message"]["instructions"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert!(tx["blockTime"].is_i64());

    let ok = net.ok(
        "getTransaction",
        json!([instance.savepoint_signature, {"commitment": "confirmed", "encoding": "base64"}]),
    );
    assert_eq!(ok["meta"]["err"], Value::Null);
    assert!(ok.get("version").is_none());
    let raw = base64::engine::general_purpose::STANDARD
        .decode(ok["transaction"][0].as_str().unwrap())
        .unwrap();
    let decoded: Transaction = bincode::deserialize(&raw).unwrap();
    assert_eq!(
        decoded.signatures[0].to_string(),
        instance.savepoint_signature
    );
    assert_eq!(
        net.ok(
            "getTransaction",
            json!([instance.savepoint_signature, {"commitment": "confirmed", "encoding": "base58"}])
        )["transaction"][1],
        "base58"
    );
    assert!(ok["meta"]["computeUnitsConsumed"].is_u64());
    assert_eq!(
        net.ok(
            "getTransaction",
            json!([solana_signature::Signature::from([1u8; 64]).to_string(), {"commitment": "confirmed"}])
        ),
        Value::Null
    );
    assert_eq!(
        net.err("getTransaction", json!([signature, {"encoding": "xml"}]))["code"],
        -32602
    );

    let history = net.ok(
        "getSignaturesForAddress",
        json!([instance.record.to_string(), {"commitment": "confirmed"}]),
    );
    let listed: Vec<&str> = history
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["signature"].as_str().unwrap())
        .collect();
    assert_eq!(listed[0], signature, "newest first");
    assert!(listed.contains(&instance.savepoint_signature.as_str()));
    assert_eq!(
        history[0]["err"],
        custom_error(1, PrecompactError::PrevHashMismatch)
    );
    assert_eq!(history[0]["confirmationStatus"], "confirmed");
    let limited = net.ok(
        "getSignaturesForAddress",
        json!([instance.record.to_string(), {"commitment": "confirmed", "limit": 1}]),
    );
    assert_eq!(limited.as_array().unwrap().len(), 1);
    let before = net.ok(
        "getSignaturesForAddress",
        json!([instance.record.to_string(), {"commitment": "confirmed", "before": signature}]),
    );
    assert_eq!(before[0]["signature"], instance.savepoint_signature);
    let until = net.ok(
        "getSignaturesForAddress",
        json!([instance.record.to_string(), {"commitment": "confirmed", "until": instance.savepoint_signature}]),
    );
    assert_eq!(until.as_array().unwrap().len(), 1);
    assert_eq!(
        net.err(
            "getSignaturesForAddress",
            json!([instance.record.to_string(), {"limit": 0}])
        )["code"],
        -32602
    );
}

#[test]
fn simulate_reports_logs_units_and_replacement_blockhash() {
    let net = Localnet::start();
    let instance = instance_with_savepoint(&net);
    let next = signed(
        &net,
        &savepoint_instructions(&instance.authority, &savepoint_fields(2, 2, [1; 32]), b"{}"),
        &instance.authority,
        &[],
    );
    let result = net.ok(
        "simulateTransaction",
        json!([encode64(&next), {"encoding": "base64", "commitment": "processed"}]),
    );
    assert_eq!(result["value"]["err"], Value::Null);
    assert!(result["value"]["logs"]
        .as_array()
        .unwrap()
        .iter()
        .any(|l| l.as_str().unwrap().contains(&precompact::ID.to_string())));
    assert!(result["value"]["unitsConsumed"].is_u64());
    assert!(result["context"]["slot"].is_u64());

    let bad = signed(
        &net,
        &savepoint_instructions(&instance.authority, &savepoint_fields(3, 3, [1; 32]), b"{}"),
        &instance.authority,
        &[],
    );
    let failing = net.ok(
        "simulateTransaction",
        json!([encode64(&bad), {"encoding": "base64"}]),
    );
    assert_eq!(
        failing["value"]["err"],
        custom_error(1, PrecompactError::SequenceMismatch)
    );

    let mut stale = next.clone();
    stale.message.recent_blockhash = solana_hash::Hash::new_from_array([3; 32]);
    let replaced = net.ok(
        "simulateTransaction",
        json!([encode64(&stale), {"encoding": "base64", "replaceRecentBlockhash": true}]),
    );
    assert_eq!(replaced["value"]["err"], Value::Null);
    assert!(replaced["value"]["replacementBlockhash"]["blockhash"].is_string());
    let not_replaced = net.ok(
        "simulateTransaction",
        json!([encode64(&stale), {"encoding": "base64"}]),
    );
    assert_eq!(not_replaced["value"]["err"], "BlockhashNotFound");
    let unverified = net.err(
        "simulateTransaction",
        json!([encode64(&stale), {"encoding": "base64", "sigVerify": true}]),
    );
    assert_eq!(unverified["code"], -32003);
    // Simulation changes nothing.
    let record = net.ok("getAccountInfo", json!([instance.record.to_string(), {"commitment": "confirmed", "encoding": "base64", "dataSlice": {"offset": 241, "length": 8}}]));
    let sequence = base64::engine::general_purpose::STANDARD
        .decode(record["value"]["data"][0].as_str().unwrap())
        .unwrap();
    assert_eq!(sequence, 1u64.to_le_bytes());
}

#[test]
fn bad_signatures_stale_blockhashes_and_duplicates_are_refused() {
    let net = Localnet::start();
    let instance = instance_with_savepoint(&net);

    let mut tampered = signed(
        &net,
        &savepoint_instructions(&instance.authority, &savepoint_fields(2, 2, [1; 32]), b"{}"),
        &instance.authority,
        &[],
    );
    tampered.signatures[0] = solana_signature::Signature::from([5u8; 64]);
    let error = net.send(&tampered, json!({}))["error"].clone();
    assert_eq!(error["code"], -32003);
    assert_eq!(
        error["message"],
        "Transaction signature verification failure"
    );
    assert_eq!(
        net.send(&tampered, json!({"skipPreflight": true}))["error"]["code"],
        -32003
    );

    let mut flipped =
        savepoint_instructions(&instance.authority, &savepoint_fields(2, 2, [1; 32]), b"{}");
    flipped[0].data[60] ^= 1;
    let precompile_fails = signed(&net, &flipped, &instance.authority, &[]);
    let error = net.send(&precompile_fails, json!({}))["error"].clone();
    assert_eq!(error["code"], -32002);
    assert_eq!(
        error["data"]["err"]["InstructionError"][0], 0,
        "the Ed25519 precompile rejects it: {error}"
    );

    let ixs = savepoint_instructions(&instance.authority, &savepoint_fields(2, 2, [1; 32]), b"{}");
    let stale = Transaction::new_signed_with_payer(
        &ixs,
        Some(&instance.authority.pubkey()),
        &[&instance.authority],
        solana_hash::Hash::new_from_array([4; 32]),
    );
    let error = net.send(&stale, json!({}))["error"].clone();
    assert_eq!(error["code"], -32002);
    assert_eq!(error["data"]["err"], "BlockhashNotFound");
    let dropped = net.send(&stale, json!({"skipPreflight": true}))["result"].clone();
    assert_eq!(
        net.ok("getSignatureStatuses", json!([[dropped]]))["value"][0],
        Value::Null,
        "never lands"
    );

    let good = signed(&net, &ixs, &instance.authority, &[]);
    assert!(net.send(&good, json!({}))["result"].is_string());
    let duplicate = net.send(&good, json!({}))["error"].clone();
    assert_eq!(duplicate["code"], -32002);
    assert_eq!(duplicate["data"]["err"], "AlreadyProcessed");
    assert!(net.send(&good, json!({"skipPreflight": true}))["result"].is_string());
    assert_eq!(
        net.ok(
            "getSignaturesForAddress",
            json!([instance.record.to_string(), {"commitment": "confirmed"}])
        )
        .as_array()
        .unwrap()
        .len(),
        3,
        "init, two savepoints: the duplicate did not land"
    );
}

#[test]
fn protocol_errors_name_the_problem() {
    let net = Localnet::start();
    let parse = net.post("{\"jsonrpc\": \"2.0\", ");
    assert_eq!(parse["error"]["code"], -32700);
    assert_eq!(parse["id"], Value::Null);
    assert_eq!(
        net.post(r#"{"jsonrpc":"2.0","id":3}"#)["error"]["code"],
        -32600
    );
    assert_eq!(
        net.post(r#"{"jsonrpc":"1.0","id":3,"method":"getHealth"}"#)["error"]["code"],
        -32600
    );
    let unknown = net.call("getEverything", json!([]));
    assert_eq!(unknown["error"]["code"], -32601);
    assert_eq!(unknown["id"], 1);
    assert_eq!(
        net.post(r#"{"jsonrpc":"2.0","id":3,"method":"getBalance","params":{"a":1}}"#)["error"]
            ["code"],
        -32602
    );

    let cases = [
        ("getBalance", json!([]), "params[0] is missing"),
        (
            "getBalance",
            json!(["zzz"]),
            r#"params[0]: invalid value: string "zzz", expected a base58 public key"#,
        ),
        (
            "getBalance",
            json!([1]),
            "params[0]: invalid type: integer `1`, expected a base58 public key",
        ),
        (
            "getBalance",
            json!(["11111111111111111111111111111111", {}, 3]),
            "expected at most 2 parameters, got 3",
        ),
        ("getHealth", json!([1]), "expected no parameters, got 1"),
        (
            "getMultipleAccounts",
            json!([["11111111111111111111111111111111", "x"]]),
            r#"params[0]: invalid value: string "x", expected a base58 public key"#,
        ),
        (
            "getMinimumBalanceForRentExemption",
            json!([-1]),
            "params[0]: invalid value: integer `-1`, expected usize",
        ),
        (
            "requestAirdrop",
            json!(["11111111111111111111111111111111"]),
            "params[1] is missing",
        ),
        (
            "isBlockhashValid",
            json!(["nope"]),
            "expected a base58 blockhash",
        ),
        (
            "getSignatureStatuses",
            json!([["bad"]]),
            "params[0]: invalid value: string \"bad\", expected a base58 signature",
        ),
        (
            "getTransaction",
            json!(["bad"]),
            "expected a base58 signature",
        ),
        (
            "getAccountInfo",
            json!(["11111111111111111111111111111111", 5]),
            "params[1]: invalid type: integer `5`",
        ),
        (
            "getAccountInfo",
            json!(["11111111111111111111111111111111", {"encoding": "yaml"}]),
            "unknown variant `yaml`",
        ),
        (
            "getAccountInfo",
            json!(["11111111111111111111111111111111", {"dataSlice": {"offset": 1}}]),
            "missing field `length`",
        ),
        (
            "getSignaturesForAddress",
            json!(["11111111111111111111111111111111", {"before": "x"}]),
            "params[1]: invalid value: string \"x\", expected a base58 signature",
        ),
    ];
    for (method, params, expected) in cases {
        let error = net.err(method, params.clone());
        assert_eq!(error["code"], -32602, "{method} {params}");
        let message = error["message"].as_str().unwrap();
        assert!(
            message.contains(expected),
            "{method} {params}: {message:?} should contain {expected:?}"
        );
    }

    let batch = net.post(r#"[{"jsonrpc":"2.0","id":1,"method":"getHealth"},{"jsonrpc":"2.0","id":2,"method":"nope"}]"#);
    assert_eq!(batch[0]["result"], "ok");
    assert_eq!(batch[1]["error"]["code"], -32601);
}

#[test]
fn airdrop_beyond_the_faucet_fails_clearly() {
    let net = Localnet::start();
    let error = net.err(
        "requestAirdrop",
        json!([Pubkey::new_unique().to_string(), u64::MAX]),
    );
    assert_eq!(error["code"], -32603);
    assert!(error["message"]
        .as_str()
        .unwrap()
        .contains("airdrop request failed"));
}

#[test]
fn accounts_survive_a_restart_with_a_state_file() {
    let dir =
        std::env::temp_dir().join(format!("precompact-localnet-state-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let state = dir.join("state.json");
    let _ = std::fs::remove_file(&state);

    let mut net = Localnet::start_with(Some(state.clone()));
    let instance = instance_with_savepoint(&net);
    let before = net.ok(
        "getAccountInfo",
        json!([instance.record.to_string(), {"commitment": "confirmed", "encoding": "base64"}]),
    )["value"]
        .clone();
    net.stop();

    let net = Localnet::start_with(Some(state.clone()));
    let after = net.ok(
        "getAccountInfo",
        json!([instance.record.to_string(), {"commitment": "confirmed", "encoding": "base64"}]),
    )["value"]
        .clone();
    assert_eq!(after["data"], before["data"]);
    assert_eq!(after["lamports"], before["lamports"]);
    let listed = net.ok(
        "getProgramAccounts",
        json!([precompact::ID.to_string(), {"commitment": "confirmed", "encoding": "base64", "filters": [{"dataSize": RECORD_SIZE}]}]),
    );
    assert_eq!(
        listed.as_array().unwrap().len(),
        1,
        "reloaded accounts are discoverable"
    );
    // The chain continues from the persisted record.
    let next = signed(
        &net,
        &savepoint_instructions(&instance.authority, &savepoint_fields(2, 2, [1; 32]), b"{}"),
        &instance.authority,
        &[],
    );
    assert!(net.send(&next, json!({}))["result"].is_string());
    drop(net);
    std::fs::remove_dir_all(&dir).unwrap();
}
