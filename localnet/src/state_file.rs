//! Accounts persisted across restarts. The whole map is rewritten atomically (temp file, fsync,
//! rename, fsync of the directory) after each committed transaction, so a crash or a signal at
//! any moment leaves either the previous or the new state, never a torn file.
use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use base64::Engine;
use serde::{Deserialize, Serialize};
use solana_account::Account;
use solana_pubkey::Pubkey;

#[derive(Serialize, Deserialize)]
struct StoredAccount {
    lamports: u64,
    owner: String,
    executable: bool,
    rent_epoch: u64,
    data_base64: String,
}

#[derive(Serialize, Deserialize, Default)]
struct Stored {
    accounts: BTreeMap<String, StoredAccount>,
}

pub struct StateFile {
    path: PathBuf,
    accounts: Mutex<BTreeMap<Pubkey, Account>>,
}

impl StateFile {
    pub fn new(path: PathBuf) -> Self {
        Self {
            path,
            accounts: Mutex::new(BTreeMap::new()),
        }
    }

    /// Reads the file (a missing file is an empty state) and remembers its accounts.
    pub fn load(&self) -> Result<BTreeMap<Pubkey, Account>, String> {
        let shown = self.path.display();
        let stored: Stored = match fs::read(&self.path) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map_err(|e| format!("state file {shown} is not valid ({e}); move it aside to start from an empty chain"))?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Stored::default(),
            Err(e) => return Err(format!("cannot read state file {shown}: {e}")),
        };
        let mut accounts = BTreeMap::new();
        for (address, stored) in stored.accounts {
            let invalid =
                |what: &str| format!("state file {shown}: account {address} has an invalid {what}");
            let key: Pubkey = address.parse().map_err(|_| invalid("address"))?;
            let account = Account {
                lamports: stored.lamports,
                owner: stored.owner.parse().map_err(|_| invalid("owner"))?,
                executable: stored.executable,
                rent_epoch: stored.rent_epoch,
                data: base64::engine::general_purpose::STANDARD
                    .decode(&stored.data_base64)
                    .map_err(|_| invalid("data"))?,
            };
            accounts.insert(key, account);
        }
        *self.accounts.lock().unwrap() = accounts.clone();
        Ok(accounts)
    }

    /// Applies new account states (`None`: the account is gone) and writes the file.
    pub fn apply(&self, updates: Vec<(Pubkey, Option<Account>)>) -> std::io::Result<()> {
        let mut accounts = self.accounts.lock().unwrap();
        for (key, account) in updates {
            match account {
                Some(account) if account.lamports > 0 => accounts.insert(key, account),
                _ => accounts.remove(&key),
            };
        }
        let stored = Stored {
            accounts: accounts
                .iter()
                .map(|(key, a)| {
                    let stored = StoredAccount {
                        lamports: a.lamports,
                        owner: a.owner.to_string(),
                        executable: a.executable,
                        rent_epoch: a.rent_epoch,
                        data_base64: base64::engine::general_purpose::STANDARD.encode(&a.data),
                    };
                    (key.to_string(), stored)
                })
                .collect(),
        };
        write_atomically(
            &self.path,
            &serde_json::to_vec(&stored).expect("state serializes"),
        )
    }
}

fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let tmp = dir.join(format!(
        ".{}.tmp",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("state")
    ));
    let mut file = File::create(&tmp)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    fs::rename(&tmp, path)?;
    File::open(dir)?.sync_all()
}
