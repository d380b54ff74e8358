//! The chain behind the RPC endpoint: a `solana-program-test` bank with the precompact program
//! registered natively, plus the bookkeeping a validator's RPC keeps and the bank does not
//! expose (transaction history, per-address signatures, the set of accounts ever touched, the
//! slots with their times and blockhashes).
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;
use std::time::{SystemTime, UNIX_EPOCH};

use solana_account::Account;
use solana_clock::MAX_PROCESSING_AGE;
use solana_commitment_config::CommitmentLevel;
use solana_epoch_schedule::EpochSchedule;
use solana_hash::Hash;
use solana_inflation::Inflation;
use solana_keypair::Keypair;
use solana_message::{Message, VersionedMessage};
use solana_program_test::{BanksClient, ProgramTestContext};
use solana_pubkey::Pubkey;
use solana_rent::Rent;
use solana_signature::Signature;
use solana_signer::Signer;
use solana_transaction::versioned::VersionedTransaction;
use solana_transaction::Transaction;
use solana_transaction_error::TransactionError;
use solana_vote_interface::state::VoteStateV4;
use tokio::sync::{broadcast, Mutex};

use crate::commitment::{rooted_by, CommitmentSlots, TOWER_DEPTH};
use crate::idl_accounts::{idl_accounts, IDL_JSON};
use crate::state_file::StateFile;

/// A validator's slot time. The bank moves to the next slot at this pace whether or not
/// transactions arrive, as a validator's does: blocks exist for every slot, and commitment
/// levels follow the slots.
const SLOT_DURATION: Duration = Duration::from_millis(400);

/// How many slots the clock keeps advancing after start-up, the last commit or the last
/// blockhash handed out before it waits for the next of those. Every slot costs the bank about
/// 160 KB that nothing here can reclaim (a validator's background service flushes its accounts
/// cache; solana-program-test runs none), so an always-running clock would grow an idle localnet
/// by about 1.4 GB an hour.
const IDLE_SLOTS: u64 = MAX_PROCESSING_AGE as u64 + 1;

// The clock outlives finalization: the last commit's block is rooted before the clock waits.
const _: () = assert!(IDLE_SLOTS > TOWER_DEPTH + 1);
// And every blockhash handed out expires before it waits, as it would on a validator.
const _: () = assert!(IDLE_SLOTS > MAX_PROCESSING_AGE as u64);

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

/// What PubSub subscribers hear about, as it happens.
#[derive(Clone)]
pub enum ChainEvent {
    /// `slot` began; `parent`, the slot before it, is complete and confirmed (the one validator
    /// holding all the stake voted on it), and that vote rooted `rooted`, if any.
    Slot {
        slot: u64,
        parent: u64,
        rooted: Option<u64>,
    },
    Committed {
        signature: Signature,
        transaction: Arc<CommittedTransaction>,
    },
}

/// How many events a slow subscriber may fall behind before it misses some.
const EVENT_BACKLOG: usize = 4096;

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
    by_slot: HashMap<u64, Vec<Signature>>,
    known_accounts: BTreeSet<Pubkey>,
    /// Per account changed in a slot not yet rooted: (slot, the account as it was before that
    /// slot changed it), oldest first. What confirmed and finalized reads see, since the bank
    /// keeps only the newest state.
    unrooted_changes: HashMap<Pubkey, Vec<(u64, Option<Account>)>>,
}

impl History {
    /// The account at `slot` when a later, unrooted slot changed it; `None` when the bank's
    /// newest state is the one at `slot`.
    fn earlier_state(&self, address: &Pubkey, slot: u64) -> Option<Option<Account>> {
        self.unrooted_changes
            .get(address)?
            .iter()
            .find(|(changed_in, _)| *changed_in > slot)
            .map(|(_, before)| before.clone())
    }

    /// Notes `address` as it was before `slot` first changes it.
    fn note_change(&mut self, address: Pubkey, slot: u64, before: Option<Account>) {
        let changes = self.unrooted_changes.entry(address).or_default();
        if changes
            .last()
            .is_none_or(|(changed_in, _)| *changed_in < slot)
        {
            changes.push((slot, before));
        }
    }

    /// Forgets the states no commitment level can read any more: every level reads `root` or
    /// later.
    fn rooted(&mut self, root: u64) {
        self.unrooted_changes.retain(|_, changes| {
            changes.retain(|(changed_in, _)| *changed_in > root);
            !changes.is_empty()
        });
    }
}

/// A slot as the chain saw it begin. Every slot from the first on is a block: the clock moves
/// one slot at a time and skips none.
#[derive(Clone, Copy)]
struct SlotStart {
    block_height: u64,
    time: i64,
    /// The parent's final blockhash, which the new bank starts from.
    previous_blockhash: Hash,
}

type Slots = std::sync::Mutex<BTreeMap<u64, SlotStart>>;

/// One block as `getBlock` reports it; transactions in the order they were committed.
pub struct Block {
    pub slot: u64,
    pub parent_slot: u64,
    pub block_height: u64,
    pub block_time: i64,
    pub blockhash: Hash,
    pub previous_blockhash: Hash,
    pub transactions: Vec<(Signature, CommittedTransaction)>,
}

/// The cluster's single validator, as genesis created it.
pub struct Validator {
    pub identity: Pubkey,
    pub vote_account: Pubkey,
    /// Percent of inflation rewards the validator keeps.
    pub commission: u8,
    /// Lamports delegated to the vote account.
    pub activated_stake: u64,
}

pub struct Chain {
    context: Mutex<ProgramTestContext>,
    banks: BanksClient,
    faucet: Keypair,
    genesis_hash: Hash,
    epoch_schedule: EpochSchedule,
    inflation: Inflation,
    slots_per_year: f64,
    validator: Validator,
    history: std::sync::Mutex<History>,
    slots: Slots,
    state: Option<StateFile>,
    events: broadcast::Sender<ChainEvent>,
    /// Slots the clock may still advance without a commit or a blockhash handed out.
    idle_slots_left: AtomicU64,
    /// Transactions accepted by `send` and not yet in a block, in arrival order. The clock lands
    /// them in the slot it ends, as a leader puts what it receives into its current block: a
    /// client sees its transaction's status only once that block is made, never in the same
    /// instant it sent it.
    pending: std::sync::Mutex<Vec<VersionedTransaction>>,
}

fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

impl Chain {
    /// Starts the runtime, reloading persisted accounts from the state file if there is one.
    pub async fn start(options: Options) -> Result<Arc<Self>, String> {
        let state = options.state_file.map(StateFile::new);
        let persisted = match &state {
            Some(state) => state.load()?,
            None => Default::default(),
        };
        let faucet = Keypair::new();
        let mut program_test = precompact_harness::program_test();
        program_test.add_account(
            faucet.pubkey(),
            Account::new(
                options.faucet_lamports,
                0,
                &solana_pubkey::Pubkey::default(),
            ),
        );
        for (address, account) in &persisted {
            program_test.add_account(*address, account.clone());
        }
        let rent = Rent::default();
        let idl = idl_accounts(&precompact_harness::PROGRAM_ID, IDL_JSON, |len| {
            rent.minimum_balance(len)
        });
        for (address, account) in &idl {
            program_test.add_account(*address, account.clone());
        }
        let context = program_test.start_with_context().await;
        // One blockhash per slot, registered as the clock ends it: a blockhash then lives 150
        // slots, as on a validator, instead of the 150 registrations (about a second) the
        // runtime's own ticker would allow.
        context.stop_blockhash_ticker();
        let banks = context.banks_client.clone();
        let genesis = context.genesis_config();
        let (genesis_hash, epoch_schedule, inflation) = (
            genesis.hash(),
            genesis.epoch_schedule.clone(),
            genesis.inflation,
        );
        let slots_per_year = genesis.slots_per_year();
        let genesis_accounts: Vec<Pubkey> = genesis.accounts.keys().copied().collect();
        let validator = genesis_validator(genesis)?;
        let first = slot_start(&context).await?;
        let slots: Slots = std::sync::Mutex::new(BTreeMap::from([first]));
        let context = Mutex::new(context);
        let (events, _) = broadcast::channel(EVENT_BACKLOG);
        let idle_slots_left = AtomicU64::new(IDLE_SLOTS);
        let history = std::sync::Mutex::new(History {
            known_accounts: persisted
                .keys()
                .chain(&genesis_accounts)
                .chain(idl.iter().map(|(address, _)| address))
                .copied()
                .collect(),
            ..History::default()
        });
        let chain = Arc::new(Self {
            banks,
            faucet,
            genesis_hash,
            epoch_schedule,
            inflation,
            slots_per_year,
            validator,
            context,
            history,
            slots,
            state,
            events,
            idle_slots_left,
            pending: std::sync::Mutex::new(Vec::new()),
        });
        tokio::spawn(run_slot_clock(Arc::downgrade(&chain)));
        Ok(chain)
    }

    /// Every event from now on.
    pub fn events(&self) -> broadcast::Receiver<ChainEvent> {
        self.events.subscribe()
    }

    pub fn genesis_hash(&self) -> Hash {
        self.genesis_hash
    }

    pub fn epoch_schedule(&self) -> &EpochSchedule {
        &self.epoch_schedule
    }

    pub fn inflation(&self) -> &Inflation {
        &self.inflation
    }

    /// Years since genesis at `slot`, the clock inflation rates are read on.
    pub fn years_at(&self, slot: u64) -> f64 {
        slot as f64 / self.slots_per_year
    }

    pub fn validator(&self) -> &Validator {
        &self.validator
    }

    /// The first slot the chain holds a block for.
    pub fn first_slot(&self) -> u64 {
        *self
            .slots
            .lock()
            .unwrap()
            .keys()
            .next()
            .expect("the starting slot is recorded")
    }

    /// The slots in `range` (all of them blocks), ascending; none for a reversed range.
    pub fn slots_in(&self, range: std::ops::RangeInclusive<u64>) -> Vec<u64> {
        if range.is_empty() {
            return vec![];
        }
        self.slots
            .lock()
            .unwrap()
            .range(range)
            .map(|(slot, _)| *slot)
            .collect()
    }

    /// Unix time at which `slot` began; `None` for a slot the chain has not had.
    pub fn block_time(&self, slot: u64) -> Option<i64> {
        self.slots
            .lock()
            .unwrap()
            .get(&slot)
            .map(|start| start.time)
    }

    /// The block at `slot`, once the slot has ended (its blockhash is the one it ends with).
    pub fn block(&self, slot: u64) -> Option<Block> {
        let (start, blockhash) = {
            let slots = self.slots.lock().unwrap();
            let start = slots.get(&slot).copied()?;
            let next = slots.get(&(slot + 1))?;
            (start, next.previous_blockhash)
        };
        let history = self.history.lock().unwrap();
        let transactions = history
            .by_slot
            .get(&slot)
            .map(|signatures| {
                signatures
                    .iter()
                    .map(|s| (*s, history.transactions[s].clone()))
                    .collect()
            })
            .unwrap_or_default();
        Some(Block {
            slot,
            parent_slot: slot.saturating_sub(1),
            block_height: start.block_height,
            block_time: start.time,
            blockhash,
            previous_blockhash: start.previous_blockhash,
            transactions,
        })
    }

    /// Per `period` seconds since start, newest first: (the last slot begun in it, slots begun,
    /// transactions committed). Only completed periods count, as a validator's samples do.
    pub fn performance_samples(&self, period: i64) -> Vec<(u64, u64, u64)> {
        let slots = self.slots.lock().unwrap();
        let history = self.history.lock().unwrap();
        let Some((_, first)) = slots.iter().next() else {
            return vec![];
        };
        let (start, now) = (first.time, unix_now());
        let mut samples: BTreeMap<i64, (u64, u64, u64)> = BTreeMap::new();
        for (slot, begun) in slots.iter() {
            let index = (begun.time - start) / period;
            if start + (index + 1) * period > now {
                continue;
            }
            let committed = history.by_slot.get(slot).map_or(0, |s| s.len() as u64);
            let sample = samples.entry(index).or_default();
            *sample = (*slot, sample.1 + 1, sample.2 + committed);
        }
        samples.into_values().rev().collect()
    }

    /// The working slot (processed): the newest the clock has recorded, which it records
    /// while it still holds the bank it advanced, so every method sees slots, blocks and heights
    /// agree.
    pub fn slot(&self) -> u64 {
        *self
            .slots
            .lock()
            .unwrap()
            .keys()
            .next_back()
            .expect("the starting slot is recorded")
    }

    /// The slot each commitment level reads now.
    pub fn commitment_slots(&self) -> CommitmentSlots {
        CommitmentSlots::at_working_slot(self.slot())
    }

    /// The slot `level` reads now.
    pub fn level_slot(&self, level: CommitmentLevel) -> u64 {
        self.commitment_slots().slot(level)
    }

    /// The block height at `slot`: every slot is a block, genesis (slot 0) is height 0.
    pub fn block_height_at(&self, slot: u64) -> u64 {
        self.slots
            .lock()
            .unwrap()
            .get(&slot)
            .map_or(0, |start| start.block_height)
    }

    pub fn transaction_count(&self) -> u64 {
        self.history.lock().unwrap().transactions.len() as u64
    }

    /// The working bank's newest blockhash and the last block height a transaction naming it
    /// can be processed at. The clock keeps running until it has expired.
    pub async fn latest_blockhash(&self) -> Result<(Hash, u64), String> {
        self.idle_slots_left.store(IDLE_SLOTS, Ordering::Release);
        self.banks
            .get_latest_blockhash_with_commitment(CommitmentLevel::Finalized)
            .await
            .map_err(|e| e.to_string())?
            .ok_or_else(|| "no valid blockhash".to_string())
    }

    /// The newest blockhash of the bank at `slot` (a commitment level's) and the last block
    /// height it is valid at, as that bank reports them: a slot that has ended hands out the
    /// hash it ended with, the working slot its parent's.
    pub async fn latest_blockhash_at(&self, slot: u64) -> Result<(Hash, u64), String> {
        let ended = self.slots.lock().unwrap().get(&(slot + 1)).copied();
        match ended {
            Some(next) => {
                self.idle_slots_left.store(IDLE_SLOTS, Ordering::Release);
                Ok((
                    next.previous_blockhash,
                    self.block_height_at(slot) + MAX_PROCESSING_AGE as u64,
                ))
            }
            None => self.latest_blockhash().await,
        }
    }

    /// The fee for `message`, or `None` when its blockhash has expired or was never issued.
    pub async fn fee_for_message(&self, message: &VersionedMessage) -> Result<Option<u64>, String> {
        self.banks
            .get_fee_for_message_with_commitment(fee_probe(message), CommitmentLevel::Finalized)
            .await
            .map_err(|e| e.to_string())
    }

    /// Whether the bank at `slot` (a commitment level's) accepts `blockhash`: one of the
    /// `MAX_PROCESSING_AGE` + 1 newest it registered, one per slot that ended. (Its queue keeps
    /// twice as many, so asking the bank for a fee would not tell.)
    pub fn is_blockhash_valid_at(&self, blockhash: Hash, slot: u64) -> bool {
        let slots = self.slots.lock().unwrap();
        // The slot started from the bank's newest hash: the next one if `slot` has ended.
        let newest = if slots.contains_key(&(slot + 1)) {
            slot + 1
        } else {
            slot
        };
        slots
            .range(newest.saturating_sub(MAX_PROCESSING_AGE as u64)..=newest)
            .any(|(_, start)| start.previous_blockhash == blockhash)
    }

    pub async fn minimum_balance_for_rent_exemption(&self, data_len: usize) -> Result<u64, String> {
        let rent = self.banks.get_rent().await.map_err(|e| e.to_string())?;
        Ok(rent.minimum_balance(data_len))
    }

    pub async fn account(&self, address: &Pubkey) -> Result<Option<Account>, String> {
        self.banks
            .get_account(*address)
            .await
            .map_err(|e| e.to_string())
    }

    pub async fn balance(&self, address: &Pubkey) -> Result<u64, String> {
        self.banks
            .get_balance(*address)
            .await
            .map_err(|e| e.to_string())
    }

    /// The account at `address` as the bank at `slot` (a commitment level's) holds it.
    pub async fn account_at(&self, address: &Pubkey, slot: u64) -> Result<Option<Account>, String> {
        let earlier = self.history.lock().unwrap().earlier_state(address, slot);
        match earlier {
            Some(state) => Ok(state),
            None => self.account(address).await,
        }
    }

    /// Every account the chain knows of that `owner` owns, at `slot`.
    pub async fn program_accounts(
        &self,
        owner: &Pubkey,
        slot: u64,
    ) -> Result<Vec<(Pubkey, Account)>, String> {
        let mut known = self.known_accounts(slot).await?;
        known.retain(|(_, account)| account.owner == *owner);
        Ok(known)
    }

    /// Every account the chain knows of: genesis's, and every one a transaction touched or the
    /// state file reloaded, as they are at `slot` (closed ones left out). The bank cannot list
    /// its accounts, so this is what getProgramAccounts, getSupply and the token methods read.
    pub async fn known_accounts(&self, slot: u64) -> Result<Vec<(Pubkey, Account)>, String> {
        let known: Vec<Pubkey> = self
            .history
            .lock()
            .unwrap()
            .known_accounts
            .iter()
            .copied()
            .collect();
        let mut accounts = Vec::with_capacity(known.len());
        for address in known {
            if let Some(account) = self.account_at(&address, slot).await? {
                accounts.push((address, account));
            }
        }
        Ok(accounts)
    }

    pub fn committed(&self, signature: &Signature) -> Option<CommittedTransaction> {
        self.history
            .lock()
            .unwrap()
            .transactions
            .get(signature)
            .cloned()
    }

    /// Signatures touching `address`, newest first.
    pub fn signatures_for_address(
        &self,
        address: &Pubkey,
    ) -> Vec<(Signature, CommittedTransaction)> {
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
            loaded_accounts_data_size: details
                .as_ref()
                .map(|d| d.loaded_accounts_data_size)
                .unwrap_or(0),
        })
    }

    /// Accepts a transaction the way a validator's `sendTransaction` does: signatures checked,
    /// optional preflight, duplicates refused in preflight and otherwise dropped. An accepted
    /// transaction lands when the clock ends the working slot; one that cannot be committed then
    /// (e.g. its blockhash expired) is dropped, as on a cluster.
    pub async fn send(
        &self,
        transaction: VersionedTransaction,
        preflight: bool,
    ) -> Result<Signature, SendError> {
        if transaction.verify_with_results().iter().any(|ok| !ok)
            || transaction.signatures.is_empty()
        {
            return Err(SendError::SignatureVerification);
        }
        let signature = transaction.signatures[0];
        // Held so the clock cannot land the queue between the duplicate check and the enqueue.
        let _context = self.context.lock().await;
        if self.is_pending(&signature) {
            // A leader drops a copy of what it already holds; the bank has not seen it yet, so
            // preflight has nothing to refuse.
            return Ok(signature);
        }
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
            let simulation = self
                .simulate(transaction.clone())
                .await
                .map_err(SendError::Internal)?;
            if simulation.err.is_some() {
                return Err(SendError::Preflight(simulation));
            }
        }
        self.pending.lock().unwrap().push(transaction);
        self.idle_slots_left.store(IDLE_SLOTS, Ordering::Release);
        Ok(signature)
    }

    /// Whether `signature` was accepted and waits to land.
    fn is_pending(&self, signature: &Signature) -> bool {
        self.pending
            .lock()
            .unwrap()
            .iter()
            .any(|pending| pending.signatures[0] == *signature)
    }

    /// Commits `transaction` in the working slot and notes the accounts it changed; what it
    /// did is returned, for `publish` once the slot has ended.
    async fn land(
        &self,
        context: &ProgramTestContext,
        transaction: VersionedTransaction,
    ) -> Option<CommittedTransaction> {
        let signature = transaction.signatures[0];
        let keys = transaction.message.static_account_keys().to_vec();
        let writable: Vec<Pubkey> = keys
            .iter()
            .enumerate()
            .filter(|(i, _)| transaction.message.is_maybe_writable(*i, None))
            .map(|(_, key)| *key)
            .collect();
        // The clock holds the context while it lands, so the slot cannot end meanwhile.
        let slot = self.slot();
        let mut before = Vec::with_capacity(writable.len());
        for key in &writable {
            match self.account(key).await {
                Ok(account) => before.push((*key, account)),
                Err(e) => {
                    eprintln!("precompact-localnet: cannot read {key} before {signature}: {e}");
                    return None;
                }
            }
        }
        let fee = self
            .fee_for_message(&transaction.message)
            .await
            .ok()
            .flatten()
            .unwrap_or(0);
        let pre_balances = self.balances(&keys).await;
        let outcome = context
            .banks_client
            .process_transaction_with_metadata(transaction.clone())
            .await;
        let outcome = outcome.ok()?;
        let metadata = outcome.metadata?;
        let committed = CommittedTransaction {
            post_balances: self.balances(&keys).await,
            transaction: transaction.clone(),
            slot,
            block_time: self.block_time(slot).unwrap_or_else(unix_now),
            err: outcome.result.err(),
            logs: metadata.log_messages,
            units_consumed: metadata.compute_units_consumed,
            fee,
            pre_balances,
        };
        {
            let mut history = self.history.lock().unwrap();
            for (key, account) in before {
                history.note_change(key, slot, account);
            }
        }
        if let Some(state) = &self.state {
            let mut updates = Vec::with_capacity(writable.len());
            for key in writable {
                if key != self.faucet.pubkey() {
                    updates.push((key, self.account(&key).await.ok().flatten()));
                }
            }
            if let Err(e) = state.apply(updates) {
                eprintln!("precompact-localnet: cannot persist state: {e}");
            }
        }
        Some(committed)
    }

    /// Makes what landed in the slot that just ended visible: its statuses, its place in the
    /// address and block histories, and the events subscribers wait for. A client that sees its
    /// transaction's status therefore also sees the next slot's blockhash.
    fn publish(&self, landed: Vec<CommittedTransaction>) {
        for committed in landed {
            let signature = committed.transaction.signatures[0];
            {
                let mut history = self.history.lock().unwrap();
                for key in committed.transaction.message.static_account_keys() {
                    history.by_address.entry(*key).or_default().push(signature);
                    history.known_accounts.insert(*key);
                }
                history
                    .by_slot
                    .entry(committed.slot)
                    .or_default()
                    .push(signature);
                history.transactions.insert(signature, committed.clone());
            }
            // Nobody listening is no error.
            let _ = self.events.send(ChainEvent::Committed {
                signature,
                transaction: Arc::new(committed),
            });
        }
    }

    /// Lands the transactions sent during the working slot in it, then begins the next slot.
    /// Errs when the bank is gone.
    async fn end_slot(&self) -> Result<(), String> {
        let mut context = self.context.lock().await;
        let arrived = std::mem::take(&mut *self.pending.lock().unwrap());
        let mut landed = Vec::with_capacity(arrived.len());
        for transaction in arrived {
            landed.extend(self.land(&context, transaction).await);
        }
        if !landed.is_empty() {
            self.idle_slots_left.store(IDLE_SLOTS, Ordering::Release);
        }
        let next = context
            .banks_client
            .get_root_slot()
            .await
            .map_err(|e| e.to_string())?
            + 1;
        if let Err(e) = context.warp_to_slot(next) {
            eprintln!("precompact-localnet: cannot advance to slot {next}: {e}");
            self.publish(landed);
            return Ok(());
        }
        let (slot, start) = slot_start(&context).await?;
        self.slots.lock().unwrap().insert(slot, start);
        self.publish(landed);
        let rooted = rooted_by(next - 1);
        if let Some(root) = rooted {
            self.history.lock().unwrap().rooted(root);
        }
        let _ = self.events.send(ChainEvent::Slot {
            slot,
            parent: next - 1,
            rooted,
        });
        Ok(())
    }

    /// Sends `lamports` from the faucet to `to` through the normal send path, with the working
    /// bank's blockhash.
    pub async fn airdrop(&self, to: &Pubkey, lamports: u64) -> Result<Signature, SendError> {
        let (blockhash, _) = self.latest_blockhash().await.map_err(SendError::Internal)?;
        let transfer =
            solana_system_interface::instruction::transfer(&self.faucet.pubkey(), to, lamports);
        let tx = Transaction::new_signed_with_payer(
            &[transfer],
            Some(&self.faucet.pubkey()),
            &[&self.faucet],
            blockhash,
        );
        // The same request within a slot signs the same transfer, as a validator's faucet does
        // (one blockhash per slot): the duplicate is dropped and its signature returned.
        let duplicate = self.committed(&tx.signatures[0]).is_some();
        self.send(VersionedTransaction::from(tx), !duplicate).await
    }

    async fn balances(&self, keys: &[Pubkey]) -> Vec<u64> {
        let mut balances = Vec::with_capacity(keys.len());
        for key in keys {
            balances.push(self.balance(key).await.unwrap_or(0));
        }
        balances
    }
}

/// A legacy message the bank prices as it would `message`. The bank's fee query takes legacy
/// messages only, and a fee depends on what a v0 message shares with one: the signer count, the
/// blockhash and the instructions (precompile signatures, compute-budget prices). Accounts loaded
/// from lookup tables are never signers and never programs, so only their indices are dropped.
fn fee_probe(message: &VersionedMessage) -> Message {
    match message {
        VersionedMessage::Legacy(message) => message.clone(),
        VersionedMessage::V0(message) => {
            let static_keys = message.account_keys.len();
            let mut instructions = message.instructions.clone();
            for instruction in &mut instructions {
                instruction
                    .accounts
                    .retain(|index| usize::from(*index) < static_keys);
            }
            Message {
                header: message.header,
                account_keys: message.account_keys.clone(),
                recent_blockhash: message.recent_blockhash,
                instructions,
            }
        }
    }
}

/// The working slot as it begins, with its height, the time and its parent's final blockhash.
async fn slot_start(context: &ProgramTestContext) -> Result<(u64, SlotStart), String> {
    let banks = &context.banks_client;
    let slot = banks.get_root_slot().await.map_err(|e| e.to_string())?;
    let block_height = banks
        .get_root_block_height()
        .await
        .map_err(|e| e.to_string())?;
    Ok((
        slot,
        SlotStart {
            block_height,
            time: unix_now(),
            previous_blockhash: context.last_blockhash,
        },
    ))
}

/// Genesis holds one vote account (the bootstrap validator's) and one stake account delegated
/// to it.
fn genesis_validator(genesis: &solana_genesis_config::GenesisConfig) -> Result<Validator, String> {
    let owned_by = |program: Pubkey| {
        genesis
            .accounts
            .iter()
            .find(|(_, account)| account.owner == program)
    };
    let (vote_account, vote) =
        owned_by(solana_sdk_ids::vote::ID).ok_or("genesis has no vote account")?;
    let state = VoteStateV4::deserialize(&vote.data, vote_account)
        .map_err(|e| format!("genesis vote account: {e}"))?;
    let (_, stake) = owned_by(solana_sdk_ids::stake::ID).ok_or("genesis has no stake account")?;
    // The stake account holds the delegation plus its own rent reserve.
    let activated_stake = stake.lamports - genesis.rent.minimum_balance(stake.data.len());
    Ok(Validator {
        identity: state.node_pubkey,
        vote_account: *vote_account,
        commission: (state.inflation_rewards_commission_bps / 100) as u8,
        activated_stake,
    })
}

/// Advances the bank one slot per `SLOT_DURATION` while idle slots are left: lands what was
/// sent during the slot, then records the next slot as it begins and forgets the states no level
/// reads once the root moves past them; ends with the chain.
async fn run_slot_clock(chain: Weak<Chain>) {
    loop {
        tokio::time::sleep(SLOT_DURATION).await;
        let Some(chain) = chain.upgrade() else {
            return;
        };
        let spend = |left: u64| left.checked_sub(1);
        if chain
            .idle_slots_left
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, spend)
            .is_err()
        {
            continue;
        }
        if chain.end_slot().await.is_err() {
            return;
        }
    }
}
