//! The shared test vectors: the program, run in the runtime from fixed inputs, must produce
//! exactly the committed bytes, field by field at the offsets DESIGN.md lays out.
//! `PRECOMPACT_UPDATE_VECTORS=1` rewrites the file after an intended layout change.
mod common;

use anchor_lang::prelude::Pubkey;
use anchor_lang::{InstructionData, Space};
use common::*;
use precompact::constants::ENTRY_TYPE_SAVEPOINT;
use precompact::state::SavepointRecord;
use precompact_harness::vectors::{
    self, account_fields, AccountVector, ClockInput, SavepointInput, Vectors,
};
use precompact_harness::*;
use sha2::{Digest, Sha256};
use solana_clock::Clock;
use solana_keypair::Keypair;
use solana_signer::Signer;
use solana_transaction::Transaction;

const AUTHORITY_SECRET: [u8; 32] = [7; 32];
const TIMESTAMP: i64 = 1_764_087_300; // 2025-11-25T16:15:00Z
const GIT_COMMIT: &str = "49064d0f3c2a9b8e7d6c5b4a39281706f5e4d3c2";
const METADATA: &str = r#"{"tokens_used":171234,"trigger":"auto","window":200000}"#;
const CLOCK: ClockInput = ClockInput {
    slot: 4242,
    unix_timestamp: 1_764_087_305,
};

fn savepoint_fields() -> SavepointFields {
    SavepointFields {
        sequence: 1,
        timestamp: TIMESTAMP,
        instance_id: instance_id(INSTANCE),
        snapshot_hash: Sha256::digest(b"precompact test vector snapshot").into(),
        prev_snapshot_hash: [0; 32],
        git_commit: GIT_COMMIT.as_bytes().to_vec(),
    }
}

/// Runs initialize + one savepoint at a fixed clock and returns what the vectors must say.
async fn produce() -> Vectors {
    let authority = Keypair::new_from_array(AUTHORITY_SECRET);
    let mut env = Env::start_with_authority(authority.insecure_clone()).await;
    env.initialize().await.unwrap();
    let fields = savepoint_fields();
    let (record, bump) = record_address(&authority.pubkey(), &fields.instance_id);
    let message = fields.signed_message(&precompact::ID, &record);
    let signature: [u8; 64] = authority.sign_message(&message).into();
    let ixs = savepoint_instructions(&authority, &fields, METADATA.as_bytes());

    let blockhash = env.context.get_new_latest_blockhash().await.unwrap();
    env.context.set_sysvar(&Clock {
        slot: CLOCK.slot,
        unix_timestamp: CLOCK.unix_timestamp,
        ..Clock::default()
    });
    let tx = Transaction::new_signed_with_payer(
        &ixs,
        Some(&env.context.payer.pubkey()),
        &[&env.context.payer, &authority],
        blockhash,
    );
    env.send_transaction(tx).await.unwrap();

    let data = env.record_data().await.unwrap();
    let rent = env.context.banks_client.get_rent().await.unwrap();
    Vectors {
        program_id: precompact::ID.to_string(),
        authority_secret_hex: hex::encode(AUTHORITY_SECRET),
        authority: authority.pubkey().to_string(),
        instance_name: INSTANCE.to_string(),
        instance_id_hex: hex::encode(fields.instance_id),
        record_address: record.to_string(),
        record_bump: bump,
        savepoint: SavepointInput {
            sequence: fields.sequence,
            timestamp: fields.timestamp,
            snapshot_hash_hex: hex::encode(fields.snapshot_hash),
            prev_snapshot_hash_hex: hex::encode(fields.prev_snapshot_hash),
            git_commit: GIT_COMMIT.to_string(),
            entry_type: ENTRY_TYPE_SAVEPOINT,
            metadata: METADATA.to_string(),
        },
        clock: CLOCK,
        initialize_instruction_data_hex: hex::encode(
            precompact::instruction::Initialize {
                instance_id: fields.instance_id,
            }
            .data(),
        ),
        signed_message_hex: hex::encode(&message),
        signature_hex: hex::encode(signature),
        ed25519_instruction_data_hex: hex::encode(&ixs[0].data),
        savepoint_instruction_data_hex: hex::encode(&ixs[1].data),
        account: AccountVector {
            size: data.len(),
            rent_exempt_lamports: rent.minimum_balance(data.len()),
            fields: account_fields(),
            data_hex: hex::encode(&data),
        },
    }
}

#[tokio::test]
async fn program_produces_the_committed_vectors() {
    let produced = produce().await;
    if std::env::var_os("PRECOMPACT_UPDATE_VECTORS").is_some() {
        vectors::store(&produced);
    }
    assert_eq!(
        produced,
        vectors::load(),
        "tests/vectors/savepoint-v1.json is stale"
    );
}

#[tokio::test]
async fn account_fields_sit_at_the_documented_offsets() {
    let v = produce().await;
    let data = hex::decode(&v.account.data_hex).unwrap();
    let fields = account_fields();
    assert_eq!(fields.last().map(|f| f.offset + f.size), Some(data.len()));
    assert_eq!(data.len(), SavepointRecord::SPACE);
    assert_eq!(SavepointRecord::INIT_SPACE + 4, 556);
    let at = |name: &str| {
        let f = fields.iter().find(|f| f.name == name).unwrap();
        &data[f.offset..f.offset + f.size]
    };
    let input = savepoint_fields();
    let authority = Keypair::new_from_array(AUTHORITY_SECRET).pubkey();
    let (record, bump) = record_address(&authority, &input.instance_id);
    let signature: [u8; 64] = Keypair::new_from_array(AUTHORITY_SECRET)
        .sign_message(&input.signed_message(&precompact::ID, &record))
        .into();
    let mut metadata = METADATA.as_bytes().to_vec();
    metadata.resize(256, 0);

    assert_eq!(at("discriminator"), [0xEF, 0xBB, 0xBF, 0x01]);
    assert_eq!(at("reserved"), [0u8; 28]);
    assert_eq!(at("entry_type"), [ENTRY_TYPE_SAVEPOINT]);
    assert_eq!(at("timestamp"), TIMESTAMP.to_le_bytes());
    assert_eq!(at("instance_id"), input.instance_id);
    assert_eq!(at("snapshot_hash"), input.snapshot_hash);
    assert_eq!(at("git_commit"), GIT_COMMIT.as_bytes());
    assert_eq!(at("signature"), signature);
    assert_eq!(at("authority"), authority.as_ref());
    assert_eq!(at("sequence"), 1u64.to_le_bytes());
    assert_eq!(at("prev_snapshot_hash"), [0u8; 32]);
    assert_eq!(at("slot"), CLOCK.slot.to_le_bytes());
    assert_eq!(at("chain_timestamp"), CLOCK.unix_timestamp.to_le_bytes());
    assert_eq!(at("bump"), [bump]);
    assert_eq!(at("metadata_len"), (METADATA.len() as u16).to_le_bytes());
    assert_eq!(at("metadata"), metadata.as_slice());
    assert_eq!(
        v.record_address,
        Pubkey::find_program_address(
            &[b"savepoint", authority.as_ref(), &input.instance_id],
            &precompact::ID
        )
        .0
        .to_string()
    );
}
