//! The chain behind the RPC endpoint: a `solana-program-test` bank with the precompact program
//! registered natively, plus the bookkeeping a validator's RPC keeps and the bank does not
//! expose (transaction history, per-address signatures, the set of accounts ever touched).
use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;
use std::time::{SystemTime, UNIX_EPOCH};

use solana_account::Account;
use solana_commitment_config::CommitmentLevel;
use solana_epoch_schedule::EpochSchedule;
use solana_hash::Hash;
use solana_keypair::Keypair;
use solana_message::{Message, VersionedMessage};
use solana_program_test::{BanksClient, ProgramTestContext};
use solana_pubkey::Pubkey;
use solana_signature::Signature;
use solana_signer::Signer;
use solana_transaction::versioned::VersionedTransaction;
use solana_transaction::Transaction;
use solana_transaction_error::TransactionError;
use tokio::sync::Mutex;

use crate::state_file::StateFile;

/// A validator's slot time. The bank moves to the next slot at this pace while transactions
/// are committed, and stays put while idle, so memory does not grow with idle time or with a
/// slot per transaction.
const SLOT_DURATION: Duration = Duration::from_millis(400);

pub struct Options {
    pub faucet_lamports: u64,
    pub state_file: Option<PathBuf>,
}

/// One committed transaction, as `getTransaction` and `getSignatureStatuses` report it.
#[derive(Clone)]
pub struct CommittedTransaction {
    pub transaction: VersionedTransaction,
    pub slot: u64,
    pub block_time: i64,
    pub err: Option<TransactionError>,
    pub logs: Vec<String>,
    pub units_consumed: u64,
    pub fee: u64,
    pub pre_balances: Vec<u64>,
    pub post_balances: Vec<u64>,
}

/// What simulating a transaction showed.
pub struct Simulation {
    pub err: Option<TransactionError>,
    pub logs: Vec<String>,
    pub units_consumed: u64,
    pub loaded_accounts_data_size: u32,
}

/// Why a transaction was not accepted for processing.
pub enum SendError {
    SignatureVerification,
    Preflight(Simulation),
    Internal(String),
}

#[derive(Default)]
struct History {
    transactions: HashMap<Signature, CommittedTransaction>,
    by_address: HashMap<Pubkey, Vec<Signature>>,
    known_accounts: BTreeSet<Pubkey>,
}

pub struct Chain {
    context: Arc<Mutex<ProgramTestContext>>,
    committed_since_slot: Arc<AtomicBool>,
    banks: BanksClient,
    faucet: Keypair,
    genesis_hash: Hash,
    epoch_schedule: EpochSchedule,
    history: std::sync::Mutex<History>,
    state: Option<StateFile>,
}

fn unix_now() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0)
}

impl Chain {
    /// Starts the runtime, reloading persisted accounts from the state file if there is one.
    pub async fn start(options: Options) -> Result<Self, String> {
        let state = options.state_file.map(StateFile::new);
        let persisted = match &state {
            Some(state) => state.load()?,
            None => Default::default(),
        };
        let faucet = Keypair::new();
        let mut program_test = precompact_harness::program_test();
        program_test.add_account(
            faucet.pubkey(),
            Account::new(options.faucet_lamports, 0, &solana_pubkey::Pubkey::default()),
        );
        for (address, account) in &persisted {
            program_test.add_account(*address, account.clone());
        }
        let context = program_test.start_with_context().await;
        let banks = context.banks_client.clone();
        let genesis_hash = context.genesis_config().hash();
        let epoch_schedule = context.genesis_config().epoch_schedule.clone();
        let context = Arc::new(Mutex::new(context));
        let committed_since_slot = Arc::new(AtomicBool::new(false));
        tokio::spawn(run_slot_clock(Arc::downgrade(&context), committed_since_slot.clone()));
        let history = History {
            known_accounts: persisted.keys().copied().collect(),
            ..History::default()
        };
        Ok(Self {
            banks,
            faucet,
            genesis_hash,
            epoch_schedule,
            context,
            committed_since_slot,
            history: std::sync::Mutex::new(history),
            state,
        })
    }

    pub fn genesis_hash(&self) -> Hash {
        self.genesis_hash
    }

    pub fn epoch_schedule(&self) -> &EpochSchedule {
        &self.epoch_schedule
    }

    pub async fn slot(&self) -> Result<u64, String> {
        self.banks.get_root_slot().await.map_err(|e| e.to_string())
    }

    pub async fn block_height(&self) -> Result<u64, String> {
        self.banks.get_root_block_height().await.map_err(|e| e.to_string())
    }

    pub fn transaction_count(&self) -> u64 {
        self.history.lock().unwrap().transactions.len() as u64
    }

    pub async fn latest_blockhash(&self) -> Result<(Hash, u64), String> {
        self.banks
            .get_latest_blockhash_with_commitment(CommitmentLevel::Finalized)
            .await
            .map_err(|e| e.to_string())?
            .ok_or_else(|| "no valid blockhash".to_string())
    }

    /// The fee for `message`, or `None` when its blockhash has expired or was never issued.
    pub async fn fee_for_message(&self, message: Message) -> Result<Option<u64>, String> {
        self.banks
            .get_fee_for_message_with_commitment(message, CommitmentLevel::Finalized)
            .await
            .map_err(|e| e.to_string())
    }

    /// Whether `blockhash` may still be used. The bank prices a message only while its
    /// blockhash is in the recent-blockhash queue, which is exactly the validity rule.
    pub async fn is_blockhash_valid(&self, blockhash: Hash) -> Result<bool, String> {
        let mut probe = Message::new(&[], Some(&self.faucet.pubkey()));
        probe.recent_blockhash = blockhash;
        Ok(self.fee_for_message(probe).await?.is_some())
    }

    pub async fn minimum_balance_for_rent_exemption(&self, data_len: usize) -> Result<u64, String> {
        let rent = self.banks.get_rent().await.map_err(|e| e.to_string())?;
        Ok(rent.minimum_balance(data_len))
    }

    pub async fn account(&self, address: &Pubkey) -> Result<Option<Account>, String> {
        self.banks.get_account(*address).await.map_err(|e| e.to_string())
    }

    pub async fn balance(&self, address: &Pubkey) -> Result<u64, String> {
        self.banks.get_balance(*address).await.map_err(|e| e.to_string())
    }

    /// Every account ever touched (or reloaded) that `owner` owns.
    pub async fn program_accounts(&self, owner: &Pubkey) -> Result<Vec<(Pubkey, Account)>, String> {
        let known: Vec<Pubkey> = self.history.lock().unwrap().known_accounts.iter().copied().collect();
        let mut owned = Vec::new();
        for address in known {
            if let Some(account) = self.account(&address).await? {
                if account.owner == *owner {
                    owned.push((address, account));
                }
            }
        }
        Ok(owned)
    }

    pub fn committed(&self, signature: &Signature) -> Option<CommittedTransaction> {
        self.history.lock().unwrap().transactions.get(signature).cloned()
    }

    /// Signatures touching `address`, newest first.
    pub fn signatures_for_address(&self, address: &Pubkey) -> Vec<(Signature, CommittedTransaction)> {
        let history = self.history.lock().unwrap();
        history
            .by_address
            .get(address)
            .map(|signatures| {
                signatures
                    .iter()
                    .rev()
                    .map(|s| (*s, history.transactions[s].clone()))
                    .collect()
            })
            .unwrap_or_default()
    }

    pub async fn simulate(&self, transaction: VersionedTransaction) -> Result<Simulation, String> {
        let outcome = self
            .banks
            .simulate_transaction_with_commitment(transaction, CommitmentLevel::Finalized)
            .await
            .map_err(|e| e.to_string())?;
        let details = outcome.simulation_details;
        Ok(Simulation {
            err: outcome.result.and_then(|r| r.err()),
            logs: details.as_ref().map(|d| d.logs.clone()).unwrap_or_default(),
            units_consumed: details.as_ref().map(|d| d.units_consumed).unwrap_or(0),
            loaded_accounts_data_size: details.as_ref().map(|d| d.loaded_accounts_data_size).unwrap_or(0),
        })
    }

    /// Accepts a transaction the way a validator's `sendTransaction` does: signatures checked,
    /// optional preflight, duplicates refused in preflight and otherwise dropped. A transaction
    /// that cannot be committed at all (e.g. an expired blockhash) is dropped after preflight is
    /// skipped, as on a cluster.
    pub async fn send(&self, transaction: VersionedTransaction, preflight: bool) -> Result<Signature, SendError> {
        if transaction.verify_with_results().iter().any(|ok| !ok) || transaction.signatures.is_empty() {
            return Err(SendError::SignatureVerification);
        }
        let signature = transaction.signatures[0];
        let context = self.context.lock().await;
        if self.committed(&signature).is_some() {
            return if preflight {
                Err(SendError::Preflight(Simulation {
                    err: Some(TransactionError::AlreadyProcessed),
                    logs: vec![],
                    units_consumed: 0,
                    loaded_accounts_data_size: 0,
                }))
            } else {
                Ok(signature)
            };
        }
        if preflight {
            let simulation = self.simulate(transaction.clone()).await.map_err(SendError::Internal)?;
            if simulation.err.is_some() {
                return Err(SendError::Preflight(simulation));
            }
        }
        let keys = transaction.message.static_account_keys().to_vec();
        let fee = match &transaction.message {
            VersionedMessage::Legacy(message) => self.fee_for_message(message.clone()).await.ok().flatten().unwrap_or(0),
            VersionedMessage::V0(_) => 0,
        };
        let pre_balances = self.balances(&keys).await;
        let outcome = context
            .banks_client
            .process_transaction_with_metadata(transaction.clone())
            .await;
        let Ok(outcome) = outcome else { return Ok(signature) };
        let Some(metadata) = outcome.metadata else { return Ok(signature) };
        let slot = self.slot().await.unwrap_or(0);
        let committed = CommittedTransaction {
            post_balances: self.balances(&keys).await,
            transaction: transaction.clone(),
            slot,
            block_time: unix_now(),
            err: outcome.result.err(),
            logs: metadata.log_messages,
            units_consumed: metadata.compute_units_consumed,
            fee,
            pre_balances,
        };
        {
            let mut history = self.history.lock().unwrap();
            for key in &keys {
                history.by_address.entry(*key).or_default().push(signature);
                history.known_accounts.insert(*key);
            }
            history.transactions.insert(signature, committed);
        }
        if let Some(state) = &self.state {
            let writable: Vec<Pubkey> = keys
                .iter()
                .enumerate()
                .filter(|(i, key)| transaction.message.is_maybe_writable(*i, None) && **key != self.faucet.pubkey())
                .map(|(_, key)| *key)
                .collect();
            let mut updates = Vec::with_capacity(writable.len());
            for key in writable {
                updates.push((key, self.account(&key).await.ok().flatten()));
            }
            if let Err(e) = state.apply(updates) {
                eprintln!("precompact-localnet: cannot persist state: {e}");
            }
        }
        self.committed_since_slot.store(true, Ordering::Release);
        Ok(signature)
    }

    /// Sends `lamports` from the faucet to `to` through the normal send path.
    pub async fn airdrop(&self, to: &Pubkey, lamports: u64) -> Result<Signature, SendError> {
        let (blockhash, _) = self.latest_blockhash().await.map_err(SendError::Internal)?;
        let transfer = solana_system_interface::instruction::transfer(&self.faucet.pubkey(), to, lamports);
        let tx = Transaction::new_signed_with_payer(&[transfer], Some(&self.faucet.pubkey()), &[&self.faucet], blockhash);
        self.send(VersionedTransaction::from(tx), true).await
    }

    async fn balances(&self, keys: &[Pubkey]) -> Vec<u64> {
        let mut balances = Vec::with_capacity(keys.len());
        for key in keys {
            balances.push(self.balance(key).await.unwrap_or(0));
        }
        balances
    }
}

/// Advances the bank one slot per `SLOT_DURATION` when something was committed; ends with the
/// chain.
async fn run_slot_clock(context: Weak<Mutex<ProgramTestContext>>, committed_since_slot: Arc<AtomicBool>) {
    loop {
        tokio::time::sleep(SLOT_DURATION).await;
        let Some(context) = context.upgrade() else { return };
        if !committed_since_slot.swap(false, Ordering::AcqRel) {
            continue;
        }
        let mut context = context.lock().await;
        let next = match context.banks_client.get_root_slot().await {
            Ok(slot) => slot + 1,
            Err(_) => return,
        };
        if let Err(e) = context.warp_to_slot(next) {
            eprintln!("precompact-localnet: cannot advance to slot {next}: {e}");
        }
    }
}
