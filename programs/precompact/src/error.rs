use anchor_lang::prelude::*;

#[error_code]
pub enum PrecompactError {
    #[msg("Signer is not this record's authority")]
    WrongAuthority,
    #[msg("Instructions account is not the instructions sysvar")]
    NotInstructionsSysvar,
    #[msg("The savepoint instruction must directly follow an Ed25519 program instruction")]
    MissingEd25519Instruction,
    #[msg("Ed25519 instruction data is truncated or its offsets run past its end")]
    MalformedEd25519Instruction,
    #[msg("Ed25519 instruction must carry exactly one signature")]
    Ed25519SignatureCount,
    #[msg("Ed25519 offsets must point inside the Ed25519 instruction itself")]
    Ed25519ForeignOffsets,
    #[msg("Ed25519 signature is not by the record's authority")]
    SignerMismatch,
    #[msg("Signed message has the wrong length or domain separator")]
    MalformedSignedMessage,
    #[msg("Signed message is bound to another program or account")]
    SignedMessageTargetMismatch,
    #[msg("Signed message names another instance")]
    InstanceMismatch,
    #[msg("Sequence must be exactly one more than the stored sequence")]
    SequenceMismatch,
    #[msg("Previous snapshot hash does not match the stored snapshot hash")]
    PrevHashMismatch,
    #[msg("Timestamp is earlier than the stored savepoint's timestamp")]
    TimestampRegression,
    #[msg("Git commit must be 40 lowercase hex characters")]
    InvalidGitCommit,
    #[msg("Unknown entry type")]
    UnknownEntryType,
    #[msg("Metadata exceeds 256 bytes")]
    MetadataTooLong,
    #[msg("Metadata is not valid UTF-8")]
    MetadataNotUtf8,
    #[msg("The record at this address is already initialized")]
    RecordAlreadyInitialized,
    #[msg("The record address holds data or belongs to another program")]
    RecordAddressInUse,
    #[msg("This record's authority was rotated: it is frozen and takes no more savepoints; post under the new authority")]
    RecordFrozen,
    #[msg("This record was already rotated to another authority; continue from that authority's record")]
    RecordAlreadyRotated,
    #[msg("The new authority must differ from the record's authority")]
    RotationToSameAuthority,
    #[msg("The record to continue holds no savepoint yet")]
    NothingToContinue,
    #[msg("The record to continue does not exist or holds no data")]
    ContinuedRecordUninitialized,
    #[msg("The record to continue is not a savepoint record of this program")]
    ContinuedRecordForeign,
    #[msg("The record to continue belongs to another instance")]
    ContinuedInstanceMismatch,
}
