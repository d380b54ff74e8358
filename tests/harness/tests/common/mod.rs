//! A started runtime with one authority and one instance, and ways to send to it.
#![allow(dead_code)]
use anchor_lang::error::ErrorCode;
use anchor_lang::prelude::Pubkey;
use anchor_lang::AccountDeserialize;
use precompact::error::PrecompactError;
use precompact::state::SavepointRecord;
use precompact_harness::*;
use solana_account::{Account, AccountSharedData};
use solana_instruction::error::InstructionError;
use solana_instruction::Instruction;
use solana_keypair::Keypair;
use solana_program_test::{BanksClientError, ProgramTestContext};
use solana_signer::Signer;
use solana_transaction::Transaction;
use solana_transaction_error::TransactionError;

pub const INSTANCE: &str = "Gabriel #215";

pub struct Env {
    pub context: ProgramTestContext,
    pub authority: Keypair,
    pub instance_id: [u8; 32],
    pub record: Pubkey,
}

impl Env {
    /// A runtime where `authority` exists (funded) but the record is not initialized yet.
    pub async fn start() -> Self {
        Self::start_with_authority(Keypair::new()).await
    }

    pub async fn start_with_authority(authority: Keypair) -> Self {
        let context = program_test().start_with_context().await;
        let instance_id = instance_id(INSTANCE);
        let (record, _) = record_address(&authority.pubkey(), &instance_id);
        Self {
            context,
            authority,
            instance_id,
            record,
        }
    }

    /// As `start`, with the record initialized.
    pub async fn initialized() -> Self {
        let mut env = Self::start().await;
        env.initialize().await.expect("initialize succeeds");
        env
    }

    /// Sends `instructions` with the context payer as fee payer plus `signers`, on a fresh
    /// blockhash so identical instructions are not deduplicated as the same transaction.
    pub async fn send(
        &mut self,
        instructions: &[Instruction],
        signers: &[&Keypair],
    ) -> Result<(), TransactionError> {
        let blockhash = self.context.get_new_latest_blockhash().await.unwrap();
        let mut all: Vec<&Keypair> = vec![&self.context.payer];
        all.extend_from_slice(signers);
        let tx = Transaction::new_signed_with_payer(
            instructions,
            Some(&self.context.payer.pubkey()),
            &all,
            blockhash,
        );
        self.send_transaction(tx).await
    }

    pub async fn send_transaction(&mut self, tx: Transaction) -> Result<(), TransactionError> {
        match self.context.banks_client.process_transaction(tx).await {
            Ok(()) => Ok(()),
            Err(BanksClientError::TransactionError(err)) => Err(err),
            Err(BanksClientError::SimulationError { err, .. }) => Err(err),
            Err(other) => panic!("transport failure, not a transaction error: {other}"),
        }
    }

    pub async fn initialize(&mut self) -> Result<(), TransactionError> {
        let ix = initialize_instruction(
            &self.context.payer.pubkey(),
            &self.authority.pubkey(),
            self.instance_id,
        );
        let authority = self.authority.insecure_clone();
        self.send(&[ix], &[&authority]).await
    }

    /// `initialize` with `payer` paying the record's rent (the context payer still pays the fee,
    /// so `payer`'s balance changes by exactly what initialize takes).
    pub async fn initialize_paid_by(&mut self, payer: &Keypair) -> Result<(), TransactionError> {
        let ix =
            initialize_instruction(&payer.pubkey(), &self.authority.pubkey(), self.instance_id);
        let authority = self.authority.insecure_clone();
        self.send(&[ix], &[payer, &authority]).await
    }

    /// Rent-exempt balance of a record account.
    pub async fn record_rent(&mut self) -> u64 {
        let rent = self.context.banks_client.get_rent().await.unwrap();
        rent.minimum_balance(SavepointRecord::SPACE)
    }

    /// Puts an account at the record address directly into the bank, as no transaction could.
    pub fn place_at_record(&mut self, owner: Pubkey, lamports: u64, data: Vec<u8>) {
        let account = Account {
            lamports,
            data,
            owner,
            executable: false,
            rent_epoch: 0,
        };
        self.context
            .set_account(&self.record, &AccountSharedData::from(account));
    }

    /// Fields of the savepoint that correctly follows the stored one.
    pub async fn next_fields(&mut self, snapshot_byte: u8) -> SavepointFields {
        let record = self.record().await;
        SavepointFields {
            sequence: record.sequence + 1,
            timestamp: record.timestamp + 60,
            instance_id: self.instance_id,
            snapshot_hash: [snapshot_byte; 32],
            prev_snapshot_hash: record.snapshot_hash,
            git_commit: format!("{:040x}", snapshot_byte).into_bytes(),
        }
    }

    /// Signs and sends `fields` as the authority with `metadata`.
    pub async fn savepoint(
        &mut self,
        fields: &SavepointFields,
        metadata: &[u8],
    ) -> Result<(), TransactionError> {
        let authority = self.authority.insecure_clone();
        let ixs = savepoint_instructions(&authority, fields, metadata);
        self.send(&ixs, &[&authority]).await
    }

    pub async fn record(&mut self) -> SavepointRecord {
        let account = self
            .context
            .banks_client
            .get_account(self.record)
            .await
            .unwrap()
            .expect("record exists");
        SavepointRecord::try_deserialize(&mut account.data.as_slice()).expect("record decodes")
    }

    pub async fn record_data(&mut self) -> Option<Vec<u8>> {
        self.record_account().await.map(|a| a.data)
    }

    pub async fn record_account(&mut self) -> Option<Account> {
        self.context
            .banks_client
            .get_account(self.record)
            .await
            .unwrap()
    }

    pub async fn lamports(&mut self, address: Pubkey) -> u64 {
        self.context
            .banks_client
            .get_balance(address)
            .await
            .unwrap()
    }

    /// Funds `key` from the payer so it can pay fees or sign as a fee payer.
    pub async fn fund(&mut self, key: &Pubkey, lamports: u64) {
        let ix = anchor_lang::solana_program::system_instruction::transfer(
            &self.context.payer.pubkey(),
            key,
            lamports,
        );
        self.send(&[ix], &[]).await.expect("transfer succeeds");
    }
}

/// The transaction error a custom program error produces at instruction `index`.
pub fn program_error(index: u8, error: PrecompactError) -> TransactionError {
    TransactionError::InstructionError(index, InstructionError::Custom(u32::from(error)))
}

/// The transaction error one of Anchor's own errors produces at instruction `index`.
pub fn anchor_error(index: u8, error: ErrorCode) -> TransactionError {
    TransactionError::InstructionError(index, InstructionError::Custom(u32::from(error)))
}
