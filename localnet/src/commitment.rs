//! Commitment levels as a single-node validator has them. The one validator holds all the
//! stake and votes on every slot as it ends, so a slot is confirmed (a supermajority voted on
//! it) as soon as the next one begins; its vote tower holds 31 votes (Agave's
//! MAX_LOCKOUT_HISTORY), so each new vote roots the slot 31 below it: a block is finalized 31
//! slots after it is confirmed, about 13 seconds.
use solana_commitment_config::CommitmentLevel;

/// Votes stacked on a confirmed slot before it is rooted.
pub const TOWER_DEPTH: u64 = 31;

/// The slot each commitment level reads.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CommitmentSlots {
    /// The working slot: what has been executed, voted on or not.
    pub processed: u64,
    /// The last slot that ended, which the validator has voted on.
    pub confirmed: u64,
    /// The root.
    pub finalized: u64,
}

/// Where one slot stands, as `getSignatureStatuses` reports it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SlotStatus {
    pub level: CommitmentLevel,
    /// Votes on the slot (0 while only processed); `None` once rooted, as Agave reports it.
    pub confirmations: Option<u64>,
}

impl CommitmentSlots {
    /// The levels while `processed` is the working slot.
    pub fn at_working_slot(processed: u64) -> Self {
        let confirmed = processed.saturating_sub(1);
        Self {
            processed,
            confirmed,
            finalized: confirmed.saturating_sub(TOWER_DEPTH),
        }
    }

    pub fn slot(&self, level: CommitmentLevel) -> u64 {
        match level {
            CommitmentLevel::Processed => self.processed,
            CommitmentLevel::Confirmed => self.confirmed,
            CommitmentLevel::Finalized => self.finalized,
        }
    }

    /// How far `slot` (at most the working slot) has come.
    pub fn status(&self, slot: u64) -> SlotStatus {
        if slot <= self.finalized {
            SlotStatus {
                level: CommitmentLevel::Finalized,
                confirmations: None,
            }
        } else if slot <= self.confirmed {
            SlotStatus {
                level: CommitmentLevel::Confirmed,
                confirmations: Some(self.confirmed - slot + 1),
            }
        } else {
            SlotStatus {
                level: CommitmentLevel::Processed,
                confirmations: Some(0),
            }
        }
    }

    /// Whether `slot` has reached `level`.
    pub fn reached(&self, slot: u64, level: CommitmentLevel) -> bool {
        slot <= self.slot(level)
    }
}

/// The slot rooted when `confirmed` is confirmed, if that vote roots one (none while the tower
/// is still filling up).
pub fn rooted_by(confirmed: u64) -> Option<u64> {
    confirmed.checked_sub(TOWER_DEPTH).filter(|&root| root > 0)
}

/// The name a level has on the wire.
pub fn level_name(level: CommitmentLevel) -> &'static str {
    match level {
        CommitmentLevel::Processed => "processed",
        CommitmentLevel::Confirmed => "confirmed",
        CommitmentLevel::Finalized => "finalized",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slot_is_confirmed_when_the_next_begins_and_rooted_31_votes_later() {
        let slots = CommitmentSlots::at_working_slot(100);
        assert_eq!(
            (slots.processed, slots.confirmed, slots.finalized),
            (100, 99, 68)
        );
        assert_eq!(slots.status(100).level, CommitmentLevel::Processed);
        assert_eq!(slots.status(100).confirmations, Some(0));
        assert_eq!(slots.status(99).confirmations, Some(1));
        assert_eq!(slots.status(69).confirmations, Some(31));
        assert_eq!(slots.status(69).level, CommitmentLevel::Confirmed);
        assert_eq!(slots.status(68).level, CommitmentLevel::Finalized);
        assert_eq!(slots.status(68).confirmations, None);
        assert!(slots.reached(99, CommitmentLevel::Confirmed));
        assert!(!slots.reached(100, CommitmentLevel::Confirmed));
        assert!(!slots.reached(69, CommitmentLevel::Finalized));
    }

    #[test]
    fn genesis_is_the_root_until_the_tower_fills() {
        let slots = CommitmentSlots::at_working_slot(1);
        assert_eq!((slots.confirmed, slots.finalized), (0, 0));
        assert_eq!(CommitmentSlots::at_working_slot(32).finalized, 0);
        assert_eq!(rooted_by(31), None);
        assert_eq!(rooted_by(32), Some(1));
        assert_eq!(
            CommitmentSlots::at_working_slot(33).finalized,
            rooted_by(32).unwrap()
        );
    }
}
