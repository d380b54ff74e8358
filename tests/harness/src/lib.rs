//! Test support for the precompact program: hosts it natively inside the real Solana runtime
//! (`solana-program-test`) and builds its instructions the way any client must.
use anchor_lang::prelude::{AccountInfo, Pubkey};
use anchor_lang::{InstructionData, ToAccountMetas};
use precompact::constants::{SAVEPOINT_SEED, SIGNED_MESSAGE_DOMAIN};
use sha2::{Digest, Sha256};
use solana_instruction::Instruction;
use solana_keypair::Keypair;
use solana_program_test::{processor, ProgramTest};
use solana_signer::Signer;

pub mod vectors;

/// Offsets the Ed25519 instruction built here uses: public key, signature, then message,
/// all inside the instruction itself (the layout of the Solana SDK's helper).
const ED25519_PUBKEY_OFFSET: u16 = 16;
const ED25519_SIGNATURE_OFFSET: u16 = ED25519_PUBKEY_OFFSET + 32;
const ED25519_MESSAGE_OFFSET: u16 = ED25519_SIGNATURE_OFFSET + 64;

/// Anchor ≥1.0 generates `entry<'info>` with one lifetime on program id, accounts and data,
/// while the runtime's builtin signature gives each its own. All three outlive the call, so
/// narrowing them to the accounts slice's lifetime is sound.
fn process_instruction<'a, 'b, 'c, 'info>(
    program_id: &'a Pubkey,
    accounts: &'b [AccountInfo<'info>],
    data: &'c [u8],
) -> anchor_lang::solana_program::entrypoint::ProgramResult {
    // SAFETY: see above; nothing escapes `entry`.
    let (program_id, accounts, data) = unsafe {
        (
            &*(program_id as *const Pubkey),
            &*std::ptr::slice_from_raw_parts(
                accounts.as_ptr().cast::<AccountInfo<'b>>(),
                accounts.len(),
            ),
            &*(data as *const [u8]),
        )
    };
    precompact::entry(program_id, accounts, data)
}

/// The program's address.
pub const PROGRAM_ID: Pubkey = precompact::ID;

/// A runtime with the precompact program registered as a native builtin.
pub fn program_test() -> ProgramTest {
    let mut test = ProgramTest::default();
    test.prefer_bpf(false);
    test.add_program(
        "precompact",
        precompact::ID,
        processor!(process_instruction),
    );
    test
}

/// SHA-256 of the UTF-8 instance name: the instance id stored on chain.
pub fn instance_id(name: &str) -> [u8; 32] {
    Sha256::digest(name.as_bytes()).into()
}

/// The record's address and bump for an authority and instance.
pub fn record_address(authority: &Pubkey, instance_id: &[u8; 32]) -> (Pubkey, u8) {
    Pubkey::find_program_address(
        &[SAVEPOINT_SEED, authority.as_ref(), instance_id.as_ref()],
        &precompact::ID,
    )
}

/// The fields of one savepoint as a client signs them.
#[derive(Clone, Debug)]
pub struct SavepointFields {
    pub sequence: u64,
    pub timestamp: i64,
    pub instance_id: [u8; 32],
    pub snapshot_hash: [u8; 32],
    pub prev_snapshot_hash: [u8; 32],
    pub git_commit: Vec<u8>,
}

impl SavepointFields {
    /// The bytes the authority signs, bound to `program_id` and `record`.
    pub fn signed_message(&self, program_id: &Pubkey, record: &Pubkey) -> Vec<u8> {
        [
            SIGNED_MESSAGE_DOMAIN,
            program_id.as_ref(),
            record.as_ref(),
            &self.sequence.to_le_bytes(),
            &self.timestamp.to_le_bytes(),
            &self.instance_id,
            &self.snapshot_hash,
            &self.prev_snapshot_hash,
            &self.git_commit,
        ]
        .concat()
    }
}

/// Ed25519-program instruction data carrying one signature, all offsets inside itself.
pub fn ed25519_instruction_data(
    pubkey: &[u8; 32],
    signature: &[u8; 64],
    message: &[u8],
) -> Vec<u8> {
    let this_instruction = u16::MAX;
    let offsets = [
        ED25519_SIGNATURE_OFFSET,
        this_instruction,
        ED25519_PUBKEY_OFFSET,
        this_instruction,
        ED25519_MESSAGE_OFFSET,
        u16::try_from(message.len()).expect("message fits an Ed25519 instruction"),
        this_instruction,
    ];
    let mut data = vec![1u8, 0];
    data.extend(offsets.iter().flat_map(|o| o.to_le_bytes()));
    data.extend_from_slice(pubkey);
    data.extend_from_slice(signature);
    data.extend_from_slice(message);
    data
}

/// An Ed25519-program instruction with `signer`'s signature over `message`.
pub fn ed25519_instruction(signer: &Keypair, message: &[u8]) -> Instruction {
    let signature: [u8; 64] = signer.sign_message(message).into();
    ed25519_instruction_with(ed25519_instruction_data(
        &signer.pubkey().to_bytes(),
        &signature,
        message,
    ))
}

/// An Ed25519-program instruction with the given raw data.
pub fn ed25519_instruction_with(data: Vec<u8>) -> Instruction {
    Instruction::new_with_bytes(solana_sdk_ids::ed25519_program::ID, &data, vec![])
}

pub fn initialize_instruction(
    payer: &Pubkey,
    authority: &Pubkey,
    instance_id: [u8; 32],
) -> Instruction {
    let (record, _) = record_address(authority, &instance_id);
    Instruction {
        program_id: precompact::ID,
        accounts: precompact::accounts::Initialize {
            payer: *payer,
            authority: *authority,
            record,
            system_program: solana_sdk_ids::system_program::ID,
        }
        .to_account_metas(None),
        data: precompact::instruction::Initialize { instance_id }.data(),
    }
}

pub fn savepoint_instruction(
    authority: &Pubkey,
    record: &Pubkey,
    entry_type: u8,
    metadata: &[u8],
) -> Instruction {
    Instruction {
        program_id: precompact::ID,
        accounts: precompact::accounts::Savepoint {
            authority: *authority,
            record: *record,
            instructions: solana_sdk_ids::sysvar::instructions::ID,
        }
        .to_account_metas(None),
        data: precompact::instruction::Savepoint {
            args: precompact::SavepointArgs {
                entry_type,
                metadata: metadata.to_vec(),
            },
        }
        .data(),
    }
}

/// The two instructions of a well-formed savepoint: the authority's Ed25519 signature over the
/// signed message, then `savepoint`.
pub fn savepoint_instructions(
    authority: &Keypair,
    fields: &SavepointFields,
    metadata: &[u8],
) -> [Instruction; 2] {
    let (record, _) = record_address(&authority.pubkey(), &fields.instance_id);
    let message = fields.signed_message(&precompact::ID, &record);
    [
        ed25519_instruction(authority, &message),
        savepoint_instruction(
            &authority.pubkey(),
            &record,
            precompact::constants::ENTRY_TYPE_SAVEPOINT,
            metadata,
        ),
    ]
}

pub fn close_instruction(authority: &Pubkey, record: &Pubkey) -> Instruction {
    Instruction {
        program_id: precompact::ID,
        accounts: precompact::accounts::Close {
            authority: *authority,
            record: *record,
        }
        .to_account_metas(None),
        data: precompact::instruction::Close {}.data(),
    }
}

/// `rotate_authority`: `authority`'s record of `instance_id` continues under `new_authority`.
pub fn rotate_authority_instruction(
    payer: &Pubkey,
    authority: &Pubkey,
    new_authority: &Pubkey,
    instance_id: &[u8; 32],
) -> Instruction {
    let (record, _) = record_address(authority, instance_id);
    let (new_record, _) = record_address(new_authority, instance_id);
    Instruction {
        program_id: precompact::ID,
        accounts: precompact::accounts::RotateAuthority {
            authority: *authority,
            record,
            new_authority: *new_authority,
            new_record,
            payer: *payer,
            system_program: solana_sdk_ids::system_program::ID,
        }
        .to_account_metas(None),
        data: precompact::instruction::RotateAuthority {}.data(),
    }
}

/// `recover_lineage`: `authority` starts its record of `instance_id` from the record at `previous`.
pub fn recover_lineage_instruction(
    payer: &Pubkey,
    authority: &Pubkey,
    previous: &Pubkey,
    instance_id: [u8; 32],
) -> Instruction {
    let (record, _) = record_address(authority, &instance_id);
    Instruction {
        program_id: precompact::ID,
        accounts: precompact::accounts::RecoverLineage {
            authority: *authority,
            record,
            previous: *previous,
            payer: *payer,
            system_program: solana_sdk_ids::system_program::ID,
        }
        .to_account_metas(None),
        data: precompact::instruction::RecoverLineage { instance_id }.data(),
    }
}
