//! The shared test vectors (`tests/vectors/savepoint-v1.json`): fixed inputs and the exact bytes
//! they must produce. The Rust tests and the Python client both check this one file.
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// The account layout of DESIGN.md, in order: (field, size in bytes).
pub const ACCOUNT_LAYOUT: [(&str, usize); 16] = [
    ("discriminator", 4),
    ("reserved", 28),
    ("entry_type", 1),
    ("timestamp", 8),
    ("instance_id", 32),
    ("snapshot_hash", 32),
    ("git_commit", 40),
    ("signature", 64),
    ("authority", 32),
    ("sequence", 8),
    ("prev_snapshot_hash", 32),
    ("slot", 8),
    ("chain_timestamp", 8),
    ("bump", 1),
    ("metadata_len", 2),
    ("metadata", 256),
];

#[derive(Serialize, Deserialize, Debug, PartialEq, Eq, Clone)]
pub struct Field {
    pub name: String,
    pub offset: usize,
    pub size: usize,
}

/// Every field with its offset, from `ACCOUNT_LAYOUT`.
pub fn account_fields() -> Vec<Field> {
    let mut offset = 0;
    ACCOUNT_LAYOUT
        .iter()
        .map(|&(name, size)| {
            let field = Field {
                name: name.to_string(),
                offset,
                size,
            };
            offset += size;
            field
        })
        .collect()
}

#[derive(Serialize, Deserialize, Debug, PartialEq, Eq, Clone)]
pub struct SavepointInput {
    pub sequence: u64,
    pub timestamp: i64,
    pub snapshot_hash_hex: String,
    pub prev_snapshot_hash_hex: String,
    pub git_commit: String,
    pub entry_type: u8,
    pub metadata: String,
}

#[derive(Serialize, Deserialize, Debug, PartialEq, Eq, Clone)]
pub struct ClockInput {
    pub slot: u64,
    pub unix_timestamp: i64,
}

#[derive(Serialize, Deserialize, Debug, PartialEq, Eq, Clone)]
pub struct AccountVector {
    pub size: usize,
    pub rent_exempt_lamports: u64,
    pub fields: Vec<Field>,
    pub data_hex: String,
}

#[derive(Serialize, Deserialize, Debug, PartialEq, Eq, Clone)]
pub struct Vectors {
    pub program_id: String,
    pub authority_secret_hex: String,
    pub authority: String,
    pub instance_name: String,
    pub instance_id_hex: String,
    pub record_address: String,
    pub record_bump: u8,
    pub savepoint: SavepointInput,
    pub clock: ClockInput,
    pub initialize_instruction_data_hex: String,
    pub signed_message_hex: String,
    pub signature_hex: String,
    pub ed25519_instruction_data_hex: String,
    pub savepoint_instruction_data_hex: String,
    pub account: AccountVector,
}

pub fn path() -> PathBuf {
    // Read at run time: the target directory is shared between clones, so a test binary built in
    // another (maybe deleted) clone must still read this clone's vectors.
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from);
    manifest
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")))
        .join("../vectors/savepoint-v1.json")
}

pub fn load() -> Vectors {
    let text =
        std::fs::read_to_string(path()).expect("tests/vectors/savepoint-v1.json is readable");
    serde_json::from_str(&text).expect("tests/vectors/savepoint-v1.json parses")
}

pub fn store(vectors: &Vectors) {
    let text = serde_json::to_string_pretty(vectors).expect("vectors serialize");
    std::fs::write(path(), text + "\n").expect("tests/vectors/savepoint-v1.json is writable");
}
