//! The program's IDL, published on chain at start-up where the Anchor tools look for it: the
//! Program Metadata account `anchor idl init` writes since Anchor 1.0 (read by `anchor idl
//! fetch`), and the legacy `IdlAccount` it wrote before (read by `anchor legacy-idl fetch`,
//! anchorpy's `Program.fetch_idl` and older clients). The program is built into the runtime, with
//! no upgrade authority, so neither account has an authority: the IDL cannot be changed.
use std::io::Write;

use flate2::write::ZlibEncoder;
use flate2::Compression;
use sha2::{Digest, Sha256};
use solana_account::Account;
use solana_pubkey::Pubkey;

/// The committed IDL; tests/idl-gen checks it against the program.
pub const IDL_JSON: &str = include_str!("../../client/precompact/idl/precompact.json");

/// The Program Metadata program, which holds metadata accounts (IDLs among them) for any program.
pub const PROGRAM_METADATA_ID: Pubkey =
    Pubkey::from_str_const("ProgM6JCCvbYkfKqJYHePx4xxSUSqJp7rh8Lyv7nk7S");

/// A metadata account's seed, the kind of metadata it holds: 16 bytes, UTF-8, zero-padded.
const IDL_SEED: &[u8] = b"idl";
const SEED_LEN: usize = 16;
/// The metadata account's header (discriminator, program, authority, flags, seed, encoding,
/// compression, format, data source, data length and padding) before the data.
const METADATA_HEADER_LEN: usize = 96;
/// Its field values: a metadata account, UTF-8 text, zlib-compressed, JSON, stored in the
/// account itself.
const METADATA_DISCRIMINATOR: u8 = 2;
const ENCODING_UTF8: u8 = 1;
const COMPRESSION_ZLIB: u8 = 2;
const FORMAT_JSON: u8 = 1;
const DATA_SOURCE_DIRECT: u8 = 0;

/// The legacy IDL account's seed, with the program's signer as the base.
const LEGACY_SEED: &str = "anchor:idl";
/// Anchor's discriminator preimage for `#[account("internal")] struct IdlAccount`.
const LEGACY_DISCRIMINATOR_PREIMAGE: &[u8] = b"internal:IdlAccount";
/// Discriminator (8), authority (32) and compressed length (4) before the compressed IDL.
const LEGACY_HEADER_LEN: usize = 44;

/// The canonical metadata account of `program` for `seed`: seeds are the program, no authority
/// (canonical: the program's own) and the 16-byte seed.
pub fn metadata_address(program: &Pubkey) -> Pubkey {
    Pubkey::find_program_address(&[program.as_ref(), &padded_seed()], &PROGRAM_METADATA_ID).0
}

/// Where the legacy `IdlAccount` of `program` lives: `create_with_seed` from the program's
/// signer (its PDA with no seeds).
pub fn legacy_address(program: &Pubkey) -> Pubkey {
    let signer = Pubkey::find_program_address(&[], program).0;
    Pubkey::create_with_seed(&signer, LEGACY_SEED, program).expect("the seed is short enough")
}

/// Both accounts for `program`'s IDL `json`, each funded with `rent(len)` lamports.
pub fn idl_accounts(
    program: &Pubkey,
    json: &str,
    rent: impl Fn(usize) -> u64,
) -> [(Pubkey, Account); 2] {
    let compressed = zlib(json.as_bytes());
    let account = |data: Vec<u8>, owner: Pubkey| Account {
        lamports: rent(data.len()),
        data,
        owner,
        executable: false,
        rent_epoch: 0,
    };
    [
        (
            metadata_address(program),
            account(metadata_data(program, &compressed), PROGRAM_METADATA_ID),
        ),
        (
            legacy_address(program),
            account(legacy_data(&compressed), *program),
        ),
    ]
}

fn padded_seed() -> [u8; SEED_LEN] {
    let mut seed = [0u8; SEED_LEN];
    seed[..IDL_SEED.len()].copy_from_slice(IDL_SEED);
    seed
}

fn zlib(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = ZlibEncoder::new(Vec::new(), Compression::default());
    encoder.write_all(bytes).expect("writing to memory");
    encoder.finish().expect("writing to memory")
}

fn data_len(compressed: &[u8]) -> [u8; 4] {
    u32::try_from(compressed.len())
        .expect("an IDL compresses far below 4 GiB")
        .to_le_bytes()
}

/// A Program Metadata account: immutable, canonical, no authority, the compressed IDL after
/// the header.
fn metadata_data(program: &Pubkey, compressed: &[u8]) -> Vec<u8> {
    let mut data = Vec::with_capacity(METADATA_HEADER_LEN + compressed.len());
    data.push(METADATA_DISCRIMINATOR);
    data.extend_from_slice(program.as_ref());
    data.extend_from_slice(&[0; 32]); // no authority
    data.push(0); // not mutable
    data.push(1); // canonical
    data.extend_from_slice(&padded_seed());
    data.extend_from_slice(&[
        ENCODING_UTF8,
        COMPRESSION_ZLIB,
        FORMAT_JSON,
        DATA_SOURCE_DIRECT,
    ]);
    data.extend_from_slice(&data_len(compressed));
    data.extend_from_slice(&[0; 5]); // padding
    debug_assert_eq!(data.len(), METADATA_HEADER_LEN);
    data.extend_from_slice(compressed);
    data
}

/// A legacy `IdlAccount`: discriminator, the erased authority (all zeros), the compressed
/// length and the compressed IDL.
fn legacy_data(compressed: &[u8]) -> Vec<u8> {
    let mut data = Vec::with_capacity(LEGACY_HEADER_LEN + compressed.len());
    data.extend_from_slice(&Sha256::digest(LEGACY_DISCRIMINATOR_PREIMAGE)[..8]);
    data.extend_from_slice(&[0; 32]);
    data.extend_from_slice(&data_len(compressed));
    debug_assert_eq!(data.len(), LEGACY_HEADER_LEN);
    data.extend_from_slice(compressed);
    data
}
