//! Key rotation and recovery in the runtime: a lineage continues under a new authority's record
//! without breaking the hash chain, the old record freezes, and every refusal has its own code.
mod common;

use anchor_lang::error::ErrorCode;
use anchor_lang::AccountSerialize;
use common::*;
use precompact::constants::{
    ENTRY_TYPE_RECOVERED, ENTRY_TYPE_ROTATED, ENTRY_TYPE_ROTATED_OUT, ENTRY_TYPE_SAVEPOINT,
};
use precompact::error::PrecompactError;
use precompact::state::SavepointRecord;
use precompact_harness::*;
use solana_keypair::Keypair;
use solana_signer::Signer;
use solana_transaction_error::TransactionError;

const METADATA: &[u8] = br#"{"trigger":"auto"}"#;

/// An initialized record with `savepoints` chained savepoints.
async fn with_savepoints(savepoints: u8) -> Env {
    let mut env = Env::initialized().await;
    for n in 1..=savepoints {
        let fields = env.next_fields(n).await;
        env.savepoint(&fields, METADATA).await.unwrap();
    }
    env
}

fn metadata(record: &SavepointRecord) -> String {
    String::from_utf8(record.metadata[..record.metadata_len as usize].to_vec()).unwrap()
}

async fn record_at(env: &mut Env, address: anchor_lang::prelude::Pubkey) -> SavepointRecord {
    let saved = std::mem::replace(&mut env.record, address);
    let record = env.record().await;
    env.record = saved;
    record
}

/// Sends `rotate_authority` from the env's authority to `new`, both signing.
async fn rotate(env: &mut Env, new: &Keypair) -> Result<(), TransactionError> {
    let old = env.authority.insecure_clone();
    let ix = rotate_authority_instruction(
        &env.context.payer.pubkey(),
        &old.pubkey(),
        &new.pubkey(),
        &env.instance_id,
    );
    env.send(&[ix], &[&old, new]).await
}

/// Sends `recover_lineage`: `new` alone continues from the record at `previous`.
async fn recover(
    env: &mut Env,
    new: &Keypair,
    previous: anchor_lang::prelude::Pubkey,
    instance: [u8; 32],
) -> Result<(), TransactionError> {
    let ix = recover_lineage_instruction(
        &env.context.payer.pubkey(),
        &new.pubkey(),
        &previous,
        instance,
    );
    env.send(&[ix], &[new]).await
}

/// Asserts that `new`'s record continues from `from`, the previous record's last savepoint, exactly
/// as that was written and signed, marked `entry_type` and naming the previous key under
/// `named_as` in its metadata; returns the new record's address.
async fn assert_continues(
    env: &mut Env,
    new: &Keypair,
    from: &SavepointRecord,
    entry_type: u8,
    named_as: &str,
) -> anchor_lang::prelude::Pubkey {
    let (address, bump) = record_address(&new.pubkey(), &env.instance_id);
    let continued = record_at(env, address).await;
    assert_eq!(
        (continued.entry_type, continued.authority, continued.bump),
        (entry_type, new.pubkey(), bump)
    );
    assert_eq!(
        metadata(&continued),
        format!(r#"{{"{named_as}":"{}"}}"#, from.authority)
    );
    let savepoint = |r: &SavepointRecord| {
        (
            (r.sequence, r.snapshot_hash, r.prev_snapshot_hash),
            (r.timestamp, r.git_commit, r.signature),
            (r.slot, r.chain_timestamp, r.instance_id),
        )
    };
    assert_eq!(savepoint(&continued), savepoint(from));
    address
}

/// From now on the env posts as `authority` to its record.
fn switch_to(env: &mut Env, authority: &Keypair) {
    env.authority = authority.insecure_clone();
    env.record = record_address(&authority.pubkey(), &env.instance_id).0;
}

#[tokio::test]
async fn rotation_continues_the_chain_under_the_new_key_and_freezes_the_old_record() {
    let mut env = with_savepoints(2).await;
    let old = env.authority.insecure_clone();
    let old_record = env.record;
    let before = env.record().await;
    let new = Keypair::new();
    rotate(&mut env, &new)
        .await
        .expect("both keys sign the rotation");

    let new_record =
        assert_continues(&mut env, &new, &before, ENTRY_TYPE_ROTATED, "rotated_from").await;
    assert_eq!(env.lamports(new_record).await, env.record_rent().await);

    let frozen = env.record().await;
    assert_eq!(frozen.entry_type, ENTRY_TYPE_ROTATED_OUT);
    assert_eq!(
        metadata(&frozen),
        format!(r#"{{"rotated_to":"{}"}}"#, new.pubkey())
    );
    assert_eq!(
        (
            frozen.sequence,
            frozen.snapshot_hash,
            frozen.signature,
            frozen.authority
        ),
        (
            before.sequence,
            before.snapshot_hash,
            before.signature,
            before.authority
        )
    );

    // The old key can post nothing more, nor close the frozen record.
    let late = env.next_fields(3).await;
    let err = env.savepoint(&late, METADATA).await.unwrap_err();
    assert_eq!(err, program_error(1, PrecompactError::RecordFrozen));
    let err = env
        .send(&[close_instruction(&old.pubkey(), &old_record)], &[&old])
        .await
        .unwrap_err();
    assert_eq!(err, program_error(0, PrecompactError::RecordFrozen));
    assert_eq!(env.record().await.entry_type, ENTRY_TYPE_ROTATED_OUT);

    // The new key extends the chain: sequence 3, linked to savepoint 2's hash.
    switch_to(&mut env, &new);
    let next = env.next_fields(3).await;
    assert_eq!(next.prev_snapshot_hash, before.snapshot_hash);
    env.savepoint(&next, METADATA)
        .await
        .expect("the new authority posts savepoint 3");
    let extended = env.record().await;
    assert_eq!(
        (extended.sequence, extended.entry_type),
        (3, ENTRY_TYPE_SAVEPOINT)
    );
    assert_eq!(extended.prev_snapshot_hash, before.snapshot_hash);
    assert_eq!(extended.metadata_len as usize, METADATA.len());

    // A second rotation continues the same way.
    let newer = Keypair::new();
    rotate(&mut env, &newer).await.expect("rotate again");
    let (newer_record, _) = record_address(&newer.pubkey(), &env.instance_id);
    let again = record_at(&mut env, newer_record).await;
    assert_eq!((again.sequence, again.entry_type), (3, ENTRY_TYPE_ROTATED));
}

/// The savepoint fields a record states, as its authority wrote them.
fn carried(r: &SavepointRecord) -> impl PartialEq + std::fmt::Debug {
    (
        (r.sequence, r.snapshot_hash, r.prev_snapshot_hash),
        (r.timestamp, r.git_commit, r.signature),
        (r.slot, r.chain_timestamp, r.instance_id),
    )
}

#[tokio::test]
async fn rotations_in_a_row_name_the_key_that_signed_the_carried_savepoint() {
    // Savepoint 2 is the first key's; the lineage then moves twice (and a third time, by
    // recovery) before any savepoint: every record carrying it names that key as its signer.
    let mut env = with_savepoints(2).await;
    let first = env.authority.pubkey();
    let before = env.record().await;
    let second = Keypair::new();
    rotate(&mut env, &second).await.expect("first rotation");
    switch_to(&mut env, &second);
    let third = Keypair::new();
    rotate(&mut env, &third)
        .await
        .expect("a second rotation before any savepoint");

    let frozen = env.record().await;
    assert_eq!(frozen.entry_type, ENTRY_TYPE_ROTATED_OUT);
    assert_eq!(
        metadata(&frozen),
        format!(
            r#"{{"rotated_to":"{}","signed_by":"{first}"}}"#,
            third.pubkey()
        )
    );
    assert_eq!(frozen.savepoint_signer(), first.to_string());
    let (third_record, _) = record_address(&third.pubkey(), &env.instance_id);
    let continued = record_at(&mut env, third_record).await;
    assert_eq!(continued.entry_type, ENTRY_TYPE_ROTATED);
    assert_eq!(
        metadata(&continued),
        format!(
            r#"{{"rotated_from":"{}","signed_by":"{first}"}}"#,
            second.pubkey()
        )
    );
    assert_eq!(carried(&continued), carried(&before));

    let fourth = Keypair::new();
    let instance = env.instance_id;
    recover(&mut env, &fourth, third_record, instance)
        .await
        .expect("a recovery of a record that holds a carried savepoint");
    let (fourth_record, _) = record_address(&fourth.pubkey(), &env.instance_id);
    let recovered = record_at(&mut env, fourth_record).await;
    assert_eq!(
        metadata(&recovered),
        format!(
            r#"{{"recovered_from":"{}","signed_by":"{first}"}}"#,
            third.pubkey()
        )
    );
    assert_eq!(carried(&recovered), carried(&before));

    // The newest key extends the chain from the carried savepoint.
    switch_to(&mut env, &fourth);
    let next = env.next_fields(3).await;
    assert_eq!(next.prev_snapshot_hash, before.snapshot_hash);
    env.savepoint(&next, METADATA)
        .await
        .expect("savepoint 3 under the fourth key");
    let extended = env.record().await;
    assert_eq!(
        (extended.sequence, extended.entry_type),
        (3, ENTRY_TYPE_SAVEPOINT)
    );
    assert_eq!(extended.savepoint_signer(), fourth.pubkey().to_string());
}

#[tokio::test]
async fn rejects_rotation_not_signed_by_the_records_authority() {
    let mut env = with_savepoints(1).await;
    let intruder = Keypair::new();
    let new = Keypair::new();
    let mut ix = rotate_authority_instruction(
        &env.context.payer.pubkey(),
        &env.authority.pubkey(),
        &new.pubkey(),
        &env.instance_id,
    );
    ix.accounts[0].pubkey = intruder.pubkey();
    let err = env.send(&[ix], &[&intruder, &new]).await.unwrap_err();
    assert_eq!(err, program_error(0, PrecompactError::WrongAuthority));

    let authority = env.authority.insecure_clone();
    let mut unsigned = rotate_authority_instruction(
        &env.context.payer.pubkey(),
        &authority.pubkey(),
        &new.pubkey(),
        &env.instance_id,
    );
    unsigned.accounts[0].is_signer = false;
    let err = env.send(&[unsigned], &[&new]).await.unwrap_err();
    assert_eq!(err, anchor_error(0, ErrorCode::AccountNotSigner));
    assert_eq!(env.record().await.entry_type, ENTRY_TYPE_SAVEPOINT);
}

#[tokio::test]
async fn rejects_rotation_the_new_authority_does_not_sign() {
    let mut env = with_savepoints(1).await;
    let new = Keypair::new();
    let authority = env.authority.insecure_clone();
    let mut ix = rotate_authority_instruction(
        &env.context.payer.pubkey(),
        &authority.pubkey(),
        &new.pubkey(),
        &env.instance_id,
    );
    ix.accounts[2].is_signer = false;
    let err = env.send(&[ix], &[&authority]).await.unwrap_err();
    assert_eq!(err, anchor_error(0, ErrorCode::AccountNotSigner));
    assert_eq!(env.record().await.entry_type, ENTRY_TYPE_SAVEPOINT);
    let (new_record, _) = record_address(&new.pubkey(), &env.instance_id);
    assert!(env
        .context
        .banks_client
        .get_account(new_record)
        .await
        .unwrap()
        .is_none());
}

#[tokio::test]
async fn rejects_rotating_a_frozen_record() {
    let mut env = with_savepoints(1).await;
    rotate(&mut env, &Keypair::new()).await.unwrap();
    let err = rotate(&mut env, &Keypair::new()).await.unwrap_err();
    assert_eq!(err, program_error(0, PrecompactError::RecordAlreadyRotated));
}

#[tokio::test]
async fn rejects_rotation_to_the_same_key() {
    let mut env = with_savepoints(1).await;
    let same = env.authority.insecure_clone();
    let err = rotate(&mut env, &same).await.unwrap_err();
    assert_eq!(
        err,
        program_error(0, PrecompactError::RotationToSameAuthority)
    );
    assert_eq!(env.record().await.entry_type, ENTRY_TYPE_SAVEPOINT);
}

#[tokio::test]
async fn rejects_rotating_a_record_without_a_savepoint() {
    let mut env = Env::initialized().await;
    let err = rotate(&mut env, &Keypair::new()).await.unwrap_err();
    assert_eq!(err, program_error(0, PrecompactError::NothingToContinue));
}

#[tokio::test]
async fn rejects_rotation_onto_a_record_the_new_key_already_has() {
    let mut env = with_savepoints(1).await;
    let new = Keypair::new();
    let ix = initialize_instruction(&env.context.payer.pubkey(), &new.pubkey(), env.instance_id);
    env.send(&[ix], &[&new]).await.unwrap();
    let err = rotate(&mut env, &new).await.unwrap_err();
    assert_eq!(
        err,
        program_error(0, PrecompactError::RecordAlreadyInitialized)
    );
    assert_eq!(env.record().await.entry_type, ENTRY_TYPE_SAVEPOINT);
}

#[tokio::test]
async fn recovery_continues_without_the_old_key_and_says_so() {
    let mut env = with_savepoints(2).await;
    let old_record = env.record;
    let before = env.record_data().await.unwrap();
    let last = env.record().await;
    let new = Keypair::new();
    let instance = env.instance_id;
    recover(&mut env, &new, old_record, instance)
        .await
        .expect("the new key alone recovers the lineage");

    assert_continues(
        &mut env,
        &new,
        &last,
        ENTRY_TYPE_RECOVERED,
        "recovered_from",
    )
    .await;
    // Without its key, nothing may change the old record.
    assert_eq!(env.record_data().await.unwrap(), before);

    switch_to(&mut env, &new);
    let next = env.next_fields(3).await;
    assert_eq!(next.prev_snapshot_hash, last.snapshot_hash);
    env.savepoint(&next, METADATA)
        .await
        .expect("the recovered lineage takes savepoint 3");
    assert_eq!(env.record().await.sequence, 3);
}

#[tokio::test]
async fn rejects_recovery_the_new_authority_does_not_sign() {
    let mut env = with_savepoints(1).await;
    let new = Keypair::new();
    let mut ix = recover_lineage_instruction(
        &env.context.payer.pubkey(),
        &new.pubkey(),
        &env.record,
        env.instance_id,
    );
    ix.accounts[0].is_signer = false;
    let err = env.send(&[ix], &[]).await.unwrap_err();
    assert_eq!(err, anchor_error(0, ErrorCode::AccountNotSigner));
}

#[tokio::test]
async fn rejects_recovery_from_what_is_not_a_continuable_record_of_the_instance() {
    let mut env = with_savepoints(1).await;
    let new = Keypair::new();
    let instance = env.instance_id;
    let genuine = env.record_data().await.unwrap();
    let rent = env.record_rent().await;

    let nowhere = Keypair::new().pubkey();
    let err = recover(&mut env, &new, nowhere, instance)
        .await
        .unwrap_err();
    assert_eq!(
        err,
        program_error(0, PrecompactError::ContinuedRecordUninitialized)
    );

    // The record's very bytes, owned by another program, or by this one at another address.
    let copy = Keypair::new().pubkey();
    for owner in [Keypair::new().pubkey(), precompact::ID] {
        env.context.set_account(
            &copy,
            &solana_account::AccountSharedData::from(solana_account::Account {
                lamports: rent,
                data: genuine.clone(),
                owner,
                executable: false,
                rent_epoch: 0,
            }),
        );
        let err = recover(&mut env, &new, copy, instance).await.unwrap_err();
        assert_eq!(
            err,
            program_error(0, PrecompactError::ContinuedRecordForeign)
        );
    }

    let record = env.record;
    let err = recover(&mut env, &new, record, instance_id("Gabriel #216"))
        .await
        .unwrap_err();
    assert_eq!(
        err,
        program_error(0, PrecompactError::ContinuedInstanceMismatch)
    );

    let same = env.authority.insecure_clone();
    let err = recover(&mut env, &same, record, instance)
        .await
        .unwrap_err();
    assert_eq!(
        err,
        program_error(0, PrecompactError::RotationToSameAuthority)
    );
    let (new_record, _) = record_address(&new.pubkey(), &instance);
    assert!(env
        .context
        .banks_client
        .get_account(new_record)
        .await
        .unwrap()
        .is_none());
}

#[tokio::test]
async fn rejects_recovery_from_an_empty_or_frozen_record() {
    let mut env = Env::initialized().await;
    let (record, instance) = (env.record, env.instance_id);
    let err = recover(&mut env, &Keypair::new(), record, instance)
        .await
        .unwrap_err();
    assert_eq!(err, program_error(0, PrecompactError::NothingToContinue));

    let fields = env.next_fields(1).await;
    env.savepoint(&fields, METADATA).await.unwrap();
    rotate(&mut env, &Keypair::new()).await.unwrap();
    let err = recover(&mut env, &Keypair::new(), record, instance)
        .await
        .unwrap_err();
    assert_eq!(err, program_error(0, PrecompactError::RecordAlreadyRotated));
}

#[tokio::test]
async fn a_frozen_record_serializes_in_the_unchanged_layout() {
    let mut env = with_savepoints(1).await;
    rotate(&mut env, &Keypair::new()).await.unwrap();
    let data = env.record_data().await.unwrap();
    assert_eq!(data.len(), SavepointRecord::SPACE);
    let mut again = Vec::new();
    env.record().await.try_serialize(&mut again).unwrap();
    assert_eq!(again, data);
    assert_eq!(data[32], ENTRY_TYPE_ROTATED_OUT);
}
