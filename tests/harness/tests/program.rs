//! The precompact program executed natively inside the Solana runtime: the happy path, the
//! transaction size budget, and every rejection, each asserted by its error code.
mod common;

use anchor_lang::error::ErrorCode;
use anchor_lang::AccountSerialize;
use common::*;
use precompact::constants::{ENTRY_TYPE_SAVEPOINT, METADATA_MAX_LEN, SIGNED_MESSAGE_DOMAIN};
use precompact::error::PrecompactError;
use precompact::state::SavepointRecord;
use precompact_harness::*;
use solana_instruction::error::InstructionError;
use solana_keypair::Keypair;
use solana_signer::Signer;
use solana_transaction::Transaction;
use solana_transaction_error::TransactionError;

const METADATA: &[u8] = br#"{"trigger":"auto","tokens_used":171234}"#;

#[tokio::test]
async fn initialize_three_chained_savepoints_then_close() {
    let mut env = Env::initialized().await;
    let fresh = env.record().await;
    assert_eq!(fresh.sequence, 0);
    assert_eq!(fresh.authority, env.authority.pubkey());
    assert_eq!(fresh.instance_id, instance_id(INSTANCE));

    let mut previous = fresh;
    for n in 1..=3u8 {
        let fields = env.next_fields(n).await;
        env.savepoint(&fields, METADATA)
            .await
            .expect("chained savepoint accepted");
        let record = env.record().await;
        assert_eq!(record.sequence, u64::from(n));
        assert_eq!(record.entry_type, ENTRY_TYPE_SAVEPOINT);
        assert_eq!(record.snapshot_hash, [n; 32]);
        assert_eq!(record.prev_snapshot_hash, previous.snapshot_hash);
        assert_eq!(record.timestamp, fields.timestamp);
        assert_eq!(record.git_commit.to_vec(), fields.git_commit);
        assert_eq!(&record.metadata[..record.metadata_len as usize], METADATA);
        assert!(record.metadata[METADATA.len()..].iter().all(|&b| b == 0));
        let message = fields.signed_message(&precompact::ID, &env.record);
        let expected_signature: [u8; 64] = env.authority.sign_message(&message).into();
        assert_eq!(record.signature, expected_signature);
        previous = record;
    }

    let data = env.record_data().await.unwrap();
    assert_eq!(data.len(), SavepointRecord::SPACE);
    assert_eq!(data.len(), 556);
    let record_lamports = env.lamports(env.record).await;
    let rent = env.context.banks_client.get_rent().await.unwrap();
    assert!(rent.is_exempt(record_lamports, data.len()));

    let authority_before = env.lamports(env.authority.pubkey()).await;
    let authority = env.authority.insecure_clone();
    env.send(
        &[close_instruction(&authority.pubkey(), &env.record)],
        &[&authority],
    )
    .await
    .expect("authority closes its record");
    assert!(env.record_data().await.is_none());
    assert_eq!(
        env.lamports(authority.pubkey()).await,
        authority_before + record_lamports
    );
}

#[tokio::test]
async fn header_is_magic_version_and_reserved_zeroes() {
    let mut env = Env::initialized().await;
    let data = env.record_data().await.unwrap();
    assert_eq!(&data[..4], &[0xEF, 0xBB, 0xBF, 0x01]);
    assert!(data[4..32].iter().all(|&b| b == 0));
}

#[tokio::test]
async fn savepoint_transaction_at_max_metadata_fits_one_packet() {
    let mut env = Env::initialized().await;
    let fee_payer = Keypair::new();
    env.fund(&fee_payer.pubkey(), 1_000_000_000).await;
    let fields = env.next_fields(1).await;
    let metadata = vec![b'x'; METADATA_MAX_LEN];
    let ixs = savepoint_instructions(&env.authority, &fields, &metadata);
    let blockhash = env.context.get_new_latest_blockhash().await.unwrap();
    let tx = Transaction::new_signed_with_payer(
        &ixs,
        Some(&fee_payer.pubkey()),
        &[&fee_payer, &env.authority],
        blockhash,
    );
    let size = bincode::serialize(&tx).unwrap().len();
    assert_eq!(size, 989, "savepoint transaction size changed");
    assert!(size <= 1232);
    env.send_transaction(tx)
        .await
        .expect("max-size savepoint accepted");
    assert_eq!(env.record().await.metadata_len as usize, METADATA_MAX_LEN);
}

#[tokio::test]
async fn rejects_savepoint_by_another_authority() {
    let mut env = Env::initialized().await;
    let intruder = Keypair::new();
    let fields = env.next_fields(1).await;
    let message = fields.signed_message(&precompact::ID, &env.record);
    let ixs = [
        ed25519_instruction(&intruder, &message),
        savepoint_instruction(
            &intruder.pubkey(),
            &env.record,
            ENTRY_TYPE_SAVEPOINT,
            METADATA,
        ),
    ];
    let err = env.send(&ixs, &[&intruder]).await.unwrap_err();
    assert_eq!(err, program_error(1, PrecompactError::WrongAuthority));
}

#[tokio::test]
async fn rejects_savepoint_without_the_authority_signing() {
    let mut env = Env::initialized().await;
    let fields = env.next_fields(1).await;
    let mut ixs = savepoint_instructions(&env.authority, &fields, METADATA);
    ixs[1].accounts[0].is_signer = false;
    let err = env.send(&ixs, &[]).await.unwrap_err();
    assert_eq!(err, anchor_error(1, ErrorCode::AccountNotSigner));
}

#[tokio::test]
async fn rejects_savepoint_without_ed25519_instruction() {
    let mut env = Env::initialized().await;
    let fields = env.next_fields(1).await;
    let [_, savepoint] = savepoint_instructions(&env.authority, &fields, METADATA);
    let authority = env.authority.insecure_clone();
    let err = env
        .send(std::slice::from_ref(&savepoint), &[&authority])
        .await
        .unwrap_err();
    assert_eq!(
        err,
        program_error(0, PrecompactError::MissingEd25519Instruction)
    );

    let unrelated = anchor_lang::solana_program::system_instruction::transfer(
        &authority.pubkey(),
        &authority.pubkey(),
        0,
    );
    let err = env
        .send(&[unrelated, savepoint], &[&authority])
        .await
        .unwrap_err();
    assert_eq!(
        err,
        program_error(1, PrecompactError::MissingEd25519Instruction)
    );
}

#[tokio::test]
async fn rejects_ed25519_signature_by_another_key() {
    let mut env = Env::initialized().await;
    let fields = env.next_fields(1).await;
    let message = fields.signed_message(&precompact::ID, &env.record);
    let authority = env.authority.insecure_clone();
    let ixs = [
        ed25519_instruction(&Keypair::new(), &message),
        savepoint_instruction(
            &authority.pubkey(),
            &env.record,
            ENTRY_TYPE_SAVEPOINT,
            METADATA,
        ),
    ];
    let err = env.send(&ixs, &[&authority]).await.unwrap_err();
    assert_eq!(err, program_error(1, PrecompactError::SignerMismatch));
}

/// Sends a savepoint whose Ed25519 instruction signs `message` (validly, by the authority).
async fn send_signed_message(env: &mut Env, message: &[u8]) -> Result<(), TransactionError> {
    let authority = env.authority.insecure_clone();
    let ixs = [
        ed25519_instruction(&authority, message),
        savepoint_instruction(
            &authority.pubkey(),
            &env.record,
            ENTRY_TYPE_SAVEPOINT,
            METADATA,
        ),
    ];
    env.send(&ixs, &[&authority]).await
}

#[tokio::test]
async fn rejects_messages_bound_elsewhere_or_malformed() {
    let mut env = Env::initialized().await;
    let fields = env.next_fields(1).await;

    let other_account = fields.signed_message(&precompact::ID, &Keypair::new().pubkey());
    let err = send_signed_message(&mut env, &other_account)
        .await
        .unwrap_err();
    assert_eq!(
        err,
        program_error(1, PrecompactError::SignedMessageTargetMismatch)
    );

    let other_program = fields.signed_message(&Keypair::new().pubkey(), &env.record);
    let err = send_signed_message(&mut env, &other_program)
        .await
        .unwrap_err();
    assert_eq!(
        err,
        program_error(1, PrecompactError::SignedMessageTargetMismatch)
    );

    let mut other_domain = fields.signed_message(&precompact::ID, &env.record);
    other_domain[SIGNED_MESSAGE_DOMAIN.len() - 1] = b'2';
    let err = send_signed_message(&mut env, &other_domain)
        .await
        .unwrap_err();
    assert_eq!(
        err,
        program_error(1, PrecompactError::MalformedSignedMessage)
    );

    let mut truncated = fields.signed_message(&precompact::ID, &env.record);
    truncated.pop();
    let err = send_signed_message(&mut env, &truncated).await.unwrap_err();
    assert_eq!(
        err,
        program_error(1, PrecompactError::MalformedSignedMessage)
    );

    let other_instance = SavepointFields {
        instance_id: instance_id("Gabriel #216"),
        ..fields
    };
    let message = other_instance.signed_message(&precompact::ID, &env.record);
    let err = send_signed_message(&mut env, &message).await.unwrap_err();
    assert_eq!(err, program_error(1, PrecompactError::InstanceMismatch));
    assert_eq!(
        env.record().await.sequence,
        0,
        "no rejected message was stored"
    );
}

#[tokio::test]
async fn rejects_signature_for_another_sequence() {
    let mut env = Env::initialized().await;
    let skipping = SavepointFields {
        sequence: 2,
        ..env.next_fields(1).await
    };
    let err = env.savepoint(&skipping, METADATA).await.unwrap_err();
    assert_eq!(err, program_error(1, PrecompactError::SequenceMismatch));

    let zero = SavepointFields {
        sequence: 0,
        ..skipping
    };
    let err = env.savepoint(&zero, METADATA).await.unwrap_err();
    assert_eq!(err, program_error(1, PrecompactError::SequenceMismatch));
}

#[tokio::test]
async fn rejects_ed25519_offsets_pointing_at_another_instruction() {
    let mut env = Env::initialized().await;
    let fields = env.next_fields(1).await;
    let message = fields.signed_message(&precompact::ID, &env.record);
    let authority = env.authority.insecure_clone();
    // Instruction 0 holds a genuine signature; instruction 1 verifies those same bytes by
    // pointing into instruction 0, so the precompile accepts it but the program must not.
    let genuine = ed25519_instruction(&authority, &message);
    let mut pointing = genuine.data.clone();
    for index_field in [4usize, 8, 14] {
        pointing[index_field..index_field + 2].copy_from_slice(&0u16.to_le_bytes());
    }
    pointing.truncate(16);
    let ixs = [
        genuine,
        ed25519_instruction_with(pointing),
        savepoint_instruction(
            &authority.pubkey(),
            &env.record,
            ENTRY_TYPE_SAVEPOINT,
            METADATA,
        ),
    ];
    let err = env.send(&ixs, &[&authority]).await.unwrap_err();
    assert_eq!(
        err,
        program_error(2, PrecompactError::Ed25519ForeignOffsets)
    );
}

#[tokio::test]
async fn rejects_two_signatures_in_one_ed25519_instruction() {
    let mut env = Env::initialized().await;
    let fields = env.next_fields(1).await;
    let message = fields.signed_message(&precompact::ID, &env.record);
    let authority = env.authority.insecure_clone();
    let signature: [u8; 64] = authority.sign_message(&message).into();
    // Two offset blocks, both pointing at the same valid (pubkey, signature, message).
    let (pk, sig, msg) = (2 + 28u16, 2 + 28 + 32u16, 2 + 28 + 32 + 64u16);
    let block: Vec<u8> = [
        sig,
        u16::MAX,
        pk,
        u16::MAX,
        msg,
        message.len() as u16,
        u16::MAX,
    ]
    .iter()
    .flat_map(|v| v.to_le_bytes())
    .collect();
    let mut data = vec![2u8, 0];
    data.extend(&block);
    data.extend(&block);
    data.extend(authority.pubkey().to_bytes());
    data.extend(signature);
    data.extend(&message);
    let ixs = [
        ed25519_instruction_with(data),
        savepoint_instruction(
            &authority.pubkey(),
            &env.record,
            ENTRY_TYPE_SAVEPOINT,
            METADATA,
        ),
    ];
    let err = env.send(&ixs, &[&authority]).await.unwrap_err();
    assert_eq!(
        err,
        program_error(1, PrecompactError::Ed25519SignatureCount)
    );
}

#[tokio::test]
async fn bit_flipped_signature_is_rejected_by_the_precompile() {
    let mut env = Env::initialized().await;
    let fields = env.next_fields(1).await;
    let authority = env.authority.insecure_clone();
    let mut ixs = savepoint_instructions(&authority, &fields, METADATA);
    ixs[0].data[48 + 10] ^= 0x01;
    let err = env.send(&ixs, &[&authority]).await.unwrap_err();
    match err {
        TransactionError::InstructionError(0, InstructionError::Custom(_)) => {}
        other => panic!("expected the Ed25519 precompile (instruction 0) to fail, got {other:?}"),
    }
    assert_eq!(env.record().await.sequence, 0);
}

#[tokio::test]
async fn rejects_replayed_savepoint() {
    let mut env = Env::initialized().await;
    let first = env.next_fields(1).await;
    env.savepoint(&first, METADATA).await.unwrap();
    let second = env.next_fields(2).await;
    env.savepoint(&second, METADATA).await.unwrap();

    let err = env.savepoint(&first, METADATA).await.unwrap_err();
    assert_eq!(err, program_error(1, PrecompactError::SequenceMismatch));
    let err = env.savepoint(&second, METADATA).await.unwrap_err();
    assert_eq!(err, program_error(1, PrecompactError::SequenceMismatch));

    // The very same transaction, byte for byte, is refused by the runtime itself.
    let third = env.next_fields(3).await;
    let ixs = savepoint_instructions(&env.authority, &third, METADATA);
    let blockhash = env.context.get_new_latest_blockhash().await.unwrap();
    let tx = Transaction::new_signed_with_payer(
        &ixs,
        Some(&env.context.payer.pubkey()),
        &[&env.context.payer, &env.authority],
        blockhash,
    );
    env.send_transaction(tx.clone()).await.unwrap();
    let duplicate = env
        .context
        .banks_client
        .process_transaction_with_preflight(tx)
        .await;
    match duplicate {
        Err(solana_program_test::BanksClientError::SimulationError { err, .. }) => {
            assert_eq!(err, TransactionError::AlreadyProcessed)
        }
        other => panic!("expected AlreadyProcessed, got {other:?}"),
    }
    assert_eq!(env.record().await.sequence, 3);
}

#[tokio::test]
async fn rejects_fork_with_wrong_previous_hash() {
    let mut env = Env::initialized().await;
    let first = env.next_fields(1).await;
    env.savepoint(&first, METADATA).await.unwrap();
    let fork = SavepointFields {
        prev_snapshot_hash: [9; 32],
        ..env.next_fields(2).await
    };
    let err = env.savepoint(&fork, METADATA).await.unwrap_err();
    assert_eq!(err, program_error(1, PrecompactError::PrevHashMismatch));
}

#[tokio::test]
async fn rejects_timestamp_going_backwards() {
    let mut env = Env::initialized().await;
    let first = env.next_fields(1).await;
    env.savepoint(&first, METADATA).await.unwrap();
    let earlier = SavepointFields {
        timestamp: first.timestamp - 1,
        ..env.next_fields(2).await
    };
    let err = env.savepoint(&earlier, METADATA).await.unwrap_err();
    assert_eq!(err, program_error(1, PrecompactError::TimestampRegression));
    let same_second = SavepointFields {
        timestamp: first.timestamp,
        ..earlier
    };
    env.savepoint(&same_second, METADATA)
        .await
        .expect("an equal timestamp is not a regression");
}

#[tokio::test]
async fn rejects_malformed_git_commits() {
    let mut env = Env::initialized().await;
    let good = env.next_fields(1).await;
    let upper = "ABCDEF0123456789abcdef0123456789abcdef01"
        .as_bytes()
        .to_vec();
    let non_hex = "g".repeat(40).into_bytes();
    let short_padded = [b"a".repeat(39), vec![0]].concat();
    for git_commit in [upper, non_hex, short_padded] {
        let fields = SavepointFields {
            git_commit,
            ..good.clone()
        };
        let err = env.savepoint(&fields, METADATA).await.unwrap_err();
        assert_eq!(err, program_error(1, PrecompactError::InvalidGitCommit));
    }
    let too_long = SavepointFields {
        git_commit: b"a".repeat(41),
        ..good
    };
    let err = env.savepoint(&too_long, METADATA).await.unwrap_err();
    assert_eq!(
        err,
        program_error(1, PrecompactError::MalformedSignedMessage)
    );
}

#[tokio::test]
async fn rejects_bad_metadata_and_unknown_entry_type() {
    let mut env = Env::initialized().await;
    let fields = env.next_fields(1).await;
    let err = env
        .savepoint(&fields, &vec![b'x'; METADATA_MAX_LEN + 1])
        .await
        .unwrap_err();
    assert_eq!(err, program_error(1, PrecompactError::MetadataTooLong));
    let err = env
        .savepoint(&fields, &[b'{', 0xFF, 0xFE, b'}'])
        .await
        .unwrap_err();
    assert_eq!(err, program_error(1, PrecompactError::MetadataNotUtf8));

    let authority = env.authority.insecure_clone();
    let mut ixs = savepoint_instructions(&authority, &fields, METADATA);
    ixs[1] = savepoint_instruction(&authority.pubkey(), &env.record, 0x02, METADATA);
    let err = env.send(&ixs, &[&authority]).await.unwrap_err();
    assert_eq!(err, program_error(1, PrecompactError::UnknownEntryType));
}

#[tokio::test]
async fn rejects_spoofed_instructions_sysvar() {
    let mut env = Env::initialized().await;
    let fields = env.next_fields(1).await;
    let authority = env.authority.insecure_clone();
    let mut ixs = savepoint_instructions(&authority, &fields, METADATA);
    ixs[1].accounts[2].pubkey = Keypair::new().pubkey();
    let err = env.send(&ixs, &[&authority]).await.unwrap_err();
    assert_eq!(
        err,
        program_error(1, PrecompactError::NotInstructionsSysvar)
    );
}

#[tokio::test]
async fn rejects_second_initialize() {
    let mut env = Env::initialized().await;
    let first = env.next_fields(1).await;
    env.savepoint(&first, METADATA).await.unwrap();
    let before = env.record_data().await.unwrap();
    let err = env.initialize().await.unwrap_err();
    assert_eq!(
        err,
        program_error(0, PrecompactError::RecordAlreadyInitialized)
    );
    assert_eq!(env.record_data().await.unwrap(), before);
}

/// The record exactly as a fresh initialize leaves it: owned by the program, the empty record
/// for this authority and instance, rent-exempt.
async fn assert_fresh_record(env: &mut Env) {
    let account = env.record_account().await.expect("record exists");
    assert_eq!(account.owner, precompact::ID);
    let (_, bump) = record_address(&env.authority.pubkey(), &env.instance_id);
    let mut expected = Vec::new();
    SavepointRecord::empty(env.authority.pubkey(), env.instance_id, bump)
        .try_serialize(&mut expected)
        .unwrap();
    assert_eq!(account.data, expected);
    assert!(account.lamports >= env.record_rent().await);
}

/// A keypair holding 1 SOL, to pay for initialize.
async fn funded_payer(env: &mut Env) -> Keypair {
    let payer = Keypair::new();
    env.fund(&payer.pubkey(), 1_000_000_000).await;
    payer
}

/// Someone sends `lamports` to the record address before initialize, as anyone can.
async fn prefund_record(env: &mut Env, lamports: u64) {
    let record = env.record;
    env.fund(&record, lamports).await;
    let account = env.record_account().await.unwrap();
    assert_eq!(
        (account.owner, account.lamports),
        (solana_sdk_ids::system_program::ID, lamports)
    );
}

#[tokio::test]
async fn initialize_takes_over_an_address_funded_below_rent_paying_only_the_shortfall() {
    let mut env = Env::start().await;
    let rent = env.record_rent().await;
    let prefunded = 1_000_000;
    assert!(prefunded < rent);
    prefund_record(&mut env, prefunded).await;
    let payer = funded_payer(&mut env).await;
    let payer_before = env.lamports(payer.pubkey()).await;
    env.initialize_paid_by(&payer)
        .await
        .expect("initialize takes over a pre-funded address");
    assert_fresh_record(&mut env).await;
    assert_eq!(env.lamports(env.record).await, rent);
    assert_eq!(
        payer_before - env.lamports(payer.pubkey()).await,
        rent - prefunded
    );
    let fields = env.next_fields(1).await;
    env.savepoint(&fields, METADATA)
        .await
        .expect("savepoint on the taken-over record");
    assert_eq!(env.record().await.sequence, 1);
}

#[tokio::test]
async fn initialize_takes_over_an_address_funded_above_rent_paying_nothing() {
    let mut env = Env::start().await;
    let prefunded = env.record_rent().await + 1_000_000_000;
    prefund_record(&mut env, prefunded).await;
    let payer = funded_payer(&mut env).await;
    let payer_before = env.lamports(payer.pubkey()).await;
    env.initialize_paid_by(&payer)
        .await
        .expect("initialize takes over a pre-funded address");
    assert_fresh_record(&mut env).await;
    assert_eq!(env.lamports(env.record).await, prefunded);
    assert_eq!(env.lamports(payer.pubkey()).await, payer_before);

    // The surplus goes to the authority with the rest when the record is closed.
    let authority = env.authority.insecure_clone();
    let authority_before = env.lamports(authority.pubkey()).await;
    env.send(
        &[close_instruction(&authority.pubkey(), &env.record)],
        &[&authority],
    )
    .await
    .unwrap();
    assert_eq!(
        env.lamports(authority.pubkey()).await,
        authority_before + prefunded
    );
}

#[tokio::test]
async fn initialize_on_an_unfunded_address_pays_exactly_rent() {
    let mut env = Env::start().await;
    let payer = funded_payer(&mut env).await;
    let payer_before = env.lamports(payer.pubkey()).await;
    env.initialize_paid_by(&payer).await.unwrap();
    assert_fresh_record(&mut env).await;
    let rent = env.record_rent().await;
    assert_eq!(env.lamports(env.record).await, rent);
    assert_eq!(payer_before - env.lamports(payer.pubkey()).await, rent);
}

/// Initializes, records a savepoint, then closes the record.
async fn closed_after_one_savepoint() -> Env {
    let mut env = Env::initialized().await;
    let fields = env.next_fields(1).await;
    env.savepoint(&fields, METADATA).await.unwrap();
    let authority = env.authority.insecure_clone();
    env.send(
        &[close_instruction(&authority.pubkey(), &env.record)],
        &[&authority],
    )
    .await
    .unwrap();
    assert!(env.record_account().await.is_none());
    env
}

#[tokio::test]
async fn reinitialize_after_close_starts_a_new_history() {
    let mut env = closed_after_one_savepoint().await;
    env.initialize().await.expect("re-initialize after close");
    assert_fresh_record(&mut env).await;
    let fields = env.next_fields(7).await;
    assert_eq!(fields.sequence, 1);
    env.savepoint(&fields, METADATA)
        .await
        .expect("the new history starts at sequence 1");
}

#[tokio::test]
async fn reinitialize_after_close_on_an_address_funded_since() {
    for prefunded in [1_000_000, 10_000_000_000] {
        let mut env = closed_after_one_savepoint().await;
        prefund_record(&mut env, prefunded).await;
        env.initialize()
            .await
            .expect("re-initialize a closed, pre-funded address");
        assert_fresh_record(&mut env).await;
        let expected = prefunded.max(env.record_rent().await);
        assert_eq!(env.lamports(env.record).await, expected);
    }
}

#[tokio::test]
async fn rejects_initialize_where_another_program_owns_the_address() {
    let mut env = Env::start().await;
    let rent = env.record_rent().await;
    let other_program = Keypair::new().pubkey();
    for data in [vec![], vec![7; SavepointRecord::SPACE]] {
        env.place_at_record(other_program, rent, data.clone());
        let err = env.initialize().await.unwrap_err();
        assert_eq!(err, program_error(0, PrecompactError::RecordAddressInUse));
        let account = env.record_account().await.unwrap();
        assert_eq!((account.owner, account.data), (other_program, data));
    }
}

#[tokio::test]
async fn rejects_initialize_where_the_address_already_holds_data() {
    let mut env = Env::start().await;
    let rent = env.record_rent().await;
    let system = solana_sdk_ids::system_program::ID;
    for data in [vec![0], vec![1; SavepointRecord::SPACE]] {
        env.place_at_record(system, rent, data.clone());
        let err = env.initialize().await.unwrap_err();
        assert_eq!(err, program_error(0, PrecompactError::RecordAddressInUse));
        let account = env.record_account().await.unwrap();
        assert_eq!((account.owner, account.data), (system, data));
    }
}

#[tokio::test]
async fn rejects_initialize_at_address_from_other_seeds() {
    let mut env = Env::start().await;
    let authority = env.authority.insecure_clone();
    let mut ix = initialize_instruction(
        &env.context.payer.pubkey(),
        &authority.pubkey(),
        env.instance_id,
    );
    let (elsewhere, _) = record_address(&authority.pubkey(), &instance_id("another instance"));
    ix.accounts[2].pubkey = elsewhere;
    let err = env.send(&[ix], &[&authority]).await.unwrap_err();
    assert_eq!(err, anchor_error(0, ErrorCode::ConstraintSeeds));
}

#[tokio::test]
async fn rejects_close_by_someone_else() {
    let mut env = Env::initialized().await;
    let intruder = Keypair::new();
    env.fund(&intruder.pubkey(), 1_000_000_000).await;
    let err = env
        .send(
            &[close_instruction(&intruder.pubkey(), &env.record)],
            &[&intruder],
        )
        .await
        .unwrap_err();
    assert_eq!(err, program_error(0, PrecompactError::WrongAuthority));
    assert!(env.record_data().await.is_some());
}
