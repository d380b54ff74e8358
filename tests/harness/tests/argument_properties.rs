//! Property tests (proptest) of what the program parses from a transaction: the Ed25519
//! instruction data and the signed savepoint message. Any bytes get Ok or an error, never a
//! panic; what a client builds reads back exactly; anything bound elsewhere is refused.
use anchor_lang::error::Error;
use anchor_lang::prelude::Pubkey;
use precompact::constants::{ED25519_HEADER_LEN, GIT_COMMIT_LEN, SIGNED_MESSAGE_LEN};
use precompact::ed25519;
use precompact::error::PrecompactError;
use precompact::signed_message::SignedSavepoint;
use precompact_harness::{ed25519_instruction_data, SavepointFields};
use proptest::collection::vec;
use proptest::prelude::*;

fn code(result: Result<impl Sized, Error>) -> Option<u32> {
    match result {
        Ok(_) => None,
        Err(Error::AnchorError(e)) => Some(e.error_code_number),
        Err(Error::ProgramError(e)) => panic!("unexpected program error {e:?}"),
    }
}

fn expected(error: PrecompactError) -> Option<u32> {
    Some(error.into())
}

fn pubkey() -> impl Strategy<Value = Pubkey> {
    any::<[u8; 32]>().prop_map(Pubkey::new_from_array)
}

fn fields() -> impl Strategy<Value = SavepointFields> {
    (
        any::<u64>(),
        any::<i64>(),
        any::<[u8; 32]>(),
        any::<[u8; 32]>(),
        any::<[u8; 32]>(),
        vec(any::<u8>(), GIT_COMMIT_LEN),
    )
        .prop_map(
            |(sequence, timestamp, instance_id, snapshot_hash, prev_snapshot_hash, git_commit)| {
                SavepointFields {
                    sequence,
                    timestamp,
                    instance_id,
                    snapshot_hash,
                    prev_snapshot_hash,
                    git_commit,
                }
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn any_ed25519_data_is_answered_without_panicking(data in vec(any::<u8>(), 0..400), own_index in any::<u16>()) {
        let _ = code(ed25519::parse(&data, own_index));
    }

    #[test]
    fn client_built_ed25519_data_reads_back(key in any::<[u8; 32]>(), signature in vec(any::<u8>(), 64), message in vec(any::<u8>(), 0..400), own_index in any::<u16>()) {
        let signature: [u8; 64] = signature.try_into().unwrap();
        let parsed = ed25519::parse(&ed25519_instruction_data(&key, &signature, &message), own_index).unwrap();
        prop_assert_eq!(parsed.pubkey.to_bytes(), key);
        prop_assert_eq!(parsed.signature, signature);
        prop_assert_eq!(parsed.message, message);
    }

    #[test]
    fn offsets_into_another_instruction_are_refused(message in vec(any::<u8>(), 0..200), field in 0usize..3, own_index in 0u16..8, other in 0u16..u16::MAX) {
        prop_assume!(other != own_index);
        let mut data = ed25519_instruction_data(&[7; 32], &[9; 64], &message);
        let index_field = [1, 3, 6][field];
        data[ED25519_HEADER_LEN + 2 * index_field..ED25519_HEADER_LEN + 2 * index_field + 2].copy_from_slice(&other.to_le_bytes());
        prop_assert_eq!(code(ed25519::parse(&data, own_index)), expected(PrecompactError::Ed25519ForeignOffsets));
    }

    #[test]
    fn offsets_past_the_end_are_refused(message in vec(any::<u8>(), 0..200), field in 0usize..3, past in 1u16..1000) {
        let mut data = ed25519_instruction_data(&[7; 32], &[9; 64], &message);
        let offset_field = [0, 2, 4][field];
        let beyond = u16::try_from(data.len()).unwrap() + past;
        data[ED25519_HEADER_LEN + 2 * offset_field..ED25519_HEADER_LEN + 2 * offset_field + 2].copy_from_slice(&beyond.to_le_bytes());
        prop_assert_eq!(code(ed25519::parse(&data, u16::MAX)), expected(PrecompactError::MalformedEd25519Instruction));
    }

    #[test]
    fn a_signed_message_reads_back_only_for_its_program_and_record(fields in fields(), program in pubkey(), record in pubkey(), elsewhere in pubkey()) {
        let message = fields.signed_message(&program, &record);
        let parsed = SignedSavepoint::parse(&message, &program, &record).unwrap();
        prop_assert_eq!((parsed.sequence, parsed.timestamp), (fields.sequence, fields.timestamp));
        prop_assert_eq!((parsed.instance_id, parsed.snapshot_hash, parsed.prev_snapshot_hash), (fields.instance_id, fields.snapshot_hash, fields.prev_snapshot_hash));
        prop_assert_eq!(parsed.git_commit.to_vec(), fields.git_commit);
        prop_assume!(elsewhere != program && elsewhere != record);
        prop_assert!(code(SignedSavepoint::parse(&message, &elsewhere, &record)).is_some());
        prop_assert!(code(SignedSavepoint::parse(&message, &program, &elsewhere)).is_some());
    }

    #[test]
    fn any_other_message_length_or_domain_is_malformed(fields in fields(), program in pubkey(), record in pubkey(), cut in 1usize..SIGNED_MESSAGE_LEN, extra in vec(any::<u8>(), 1..40), flip in 0usize..23) {
        let message = fields.signed_message(&program, &record);
        let malformed = expected(PrecompactError::MalformedSignedMessage);
        prop_assert_eq!(code(SignedSavepoint::parse(&message[..SIGNED_MESSAGE_LEN - cut], &program, &record)), malformed);
        prop_assert_eq!(code(SignedSavepoint::parse(&[message.clone(), extra].concat(), &program, &record)), malformed);
        let mut other_domain = message;
        other_domain[flip] ^= 0x20;
        prop_assert_eq!(code(SignedSavepoint::parse(&other_domain, &program, &record)), malformed);
    }
}
