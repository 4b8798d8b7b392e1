//! The account books the TPP reads: the generated history of [`ledger`] merged with what
//! the store holds for an account (manual transactions created through the management
//! interface, balance overrides). The endpoints that list transactions or balances and the
//! settlement call these, never [`ledger`]'s generator alone, so sandbox-created
//! transactions are always listed and counted.
//!
//! Errors of every function: the database fails ([`StoreError`]).

use chrono::NaiveDate;
use uuid::Uuid;

use crate::sandbox::domain::ledger::{self, Balances, Entry, adjust_balances};
use crate::sandbox::model::{Account, Customer, ManualTransaction};
use crate::sandbox::store::{Store, StoreError};

/// One account's books on one day: the store that holds its manual data, the account, its
/// owner (whose profile shapes the generated history) and the sandbox date.
#[derive(Debug, Clone, Copy)]
pub struct Book<'a> {
    /// The store (manual transactions, balance overrides).
    pub store: &'a Store,
    /// The account.
    pub account: &'a Account,
    /// Its owner.
    pub owner: &'a Customer,
    /// The sandbox date the books are read on.
    pub today: NaiveDate,
}

impl<'a> Book<'a> {
    /// The books of `account` (owned by `owner`) on `today`.
    pub fn of(
        store: &'a Store,
        account: &'a Account,
        owner: &'a Customer,
        today: NaiveDate,
    ) -> Self {
        Book {
            store,
            account,
            owner,
            today,
        }
    }

    /// Booked entries, newest first: the generated history ([`ledger::booked`], for
    /// accounts with `generated`) merged with the manual booked transactions (a manual entry
    /// comes before generated ones of the same day). Use this instead of [`ledger::booked`]
    /// so sandbox-created transactions are listed.
    pub fn booked(&self) -> Result<Vec<Entry>, StoreError> {
        let generated = || ledger::booked(self.account, self.owner, self.today);
        let mut all = self.merged(true, generated)?;
        all.sort_by_key(|e| std::cmp::Reverse(e.booking_date));
        Ok(all)
    }

    /// Pending entries: the manual pending transactions (newest first) and then the
    /// generated ones ([`ledger::pending`], for accounts with `generated`).
    pub fn pending(&self) -> Result<Vec<Entry>, StoreError> {
        self.merged(false, || {
            ledger::pending(self.account, self.owner, self.today)
        })
    }

    /// The manual transactions with this booking status (newest first), then the
    /// `generated` ones for an account with a generated history.
    fn merged(
        &self,
        booked: bool,
        generated: impl FnOnce() -> Vec<Entry>,
    ) -> Result<Vec<Entry>, StoreError> {
        let mut all: Vec<Entry> = self
            .store
            .manual_transactions(self.account.id)?
            .iter()
            .filter(|t| t.booked == booked)
            .map(ManualTransaction::entry)
            .collect();
        if self.account.generated {
            all.extend(generated());
        }
        Ok(all)
    }

    /// Balances: generated ([`ledger::balances`]) or the opening balance, then the balance
    /// override and the manual transactions ([`adjust_balances`]). Use this instead of
    /// [`ledger::balances`].
    pub fn balances(&self) -> Result<Balances, StoreError> {
        let (account, today) = (self.account, self.today);
        let base = if account.generated {
            ledger::balances(account, self.owner, today)
        } else {
            Balances {
                closing_booked: account.opening_balance,
                expected: account.opening_balance,
            }
        };
        let manual = self.store.manual_transactions(account.id)?;
        Ok(adjust_balances(
            base,
            self.store.balance_override(account.id)?.as_ref(),
            manual.iter().map(|t| {
                let before_today = t.booked && t.booking_date.is_some_and(|d| d < today);
                (t.seq, before_today, t.amount)
            }),
        ))
    }
}

/// Balances of a card account: `base` (what the card ledger computes, with
/// `closing_booked` as the booked (`interimBooked`, dated today) and `expected` as the
/// available balance) adjusted by the card's balance override and manual card
/// transactions ([`adjust_balances`]; booked ones up to `today` move the booked balance).
pub fn card_balances(
    store: &Store,
    card_account: Uuid,
    base: Balances,
    today: NaiveDate,
) -> Result<Balances, StoreError> {
    let manual = store.manual_card_transactions(card_account)?;
    Ok(adjust_balances(
        base,
        store.card_balance_override(card_account)?.as_ref(),
        manual.iter().map(|t| {
            let booked = t.booked && t.booking_date.is_some_and(|d| d <= today);
            (t.seq, booked, t.amount)
        }),
    ))
}

#[cfg(test)]
mod tests {
    use std::time::UNIX_EPOCH;

    use std::sync::Arc;
    use std::time::Duration;

    use super::*;
    use crate::sandbox::domain::seed::seed;
    use crate::sandbox::model::{
        AUTHORISATION_LIFETIME, Authorisation, AuthorisationError, BalanceOverride, Consent,
        ConsentKey, ScaStep, TppId,
    };
    use crate::sandbox::store::db::{Db, Storage};
    use crate::sandbox::store::schema::MIGRATION;

    fn store() -> Store {
        let db = Arc::new(Db::open(&Storage::InMemory).unwrap());
        db.migrate(&[MIGRATION]).unwrap();
        Store::open(db, seed).unwrap()
    }

    #[test]
    fn seed_round_trips_through_sqlite() {
        let s = store();
        let seed = seed();
        assert_eq!(s.customers().unwrap(), seed.customers);
        for c in &seed.customers {
            let accounts = seed.accounts.iter().filter(|a| a.owner == c.id);
            assert!(s.accounts_of(c.id).unwrap().iter().eq(accounts));
            let cards = seed.card_accounts.iter().filter(|a| a.owner == c.id);
            assert!(s.card_accounts_of(c.id).unwrap().iter().eq(cards));
        }
        for a in &seed.agreements {
            assert_eq!(s.agreement(a.id).unwrap().as_ref(), Some(a));
        }
    }

    #[test]
    fn consents_and_authorisations_round_trip() {
        let s = store();
        let seed = seed();
        let c = &seed.customers[0];
        let now = UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        let key = ConsentKey {
            tpp: TppId("t".into()),
            psu_id: Uuid::new_v4(),
            agreement: Some(seed.agreements[0].id),
        };
        let consent = Consent {
            customer: c.id,
            accounts: seed.agreements[0].accounts.clone(),
            granted_at: now,
            tpp_session_id: "s".into(),
        };
        let auth = Authorisation {
            id: Uuid::new_v4(),
            tpp: key.tpp.clone(),
            tpp_name: "T".into(),
            redirect_uri: "http://x/cb".into(),
            tpp_session_id: "s".into(),
            created_at: now,
            step: ScaStep::Identify,
        };
        s.insert_authorisation(auth.clone(), now).unwrap();
        assert_eq!(s.authorisation(auth.id, now), Ok(auth.clone()));
        let step = ScaStep::Consent {
            customer: c.id,
            agreement: key.agreement,
        };
        assert_eq!(s.set_step(auth.id, now, step.clone()).unwrap().step, step);
        s.finish_with_consent(auth.id, now, key.clone(), consent.clone())
            .unwrap();
        assert_eq!(
            s.authorisation(auth.id, now),
            Err(AuthorisationError::Finished)
        );
        assert_eq!(s.consent(&key).unwrap(), Some(consent));
        assert_eq!(s.psu_customer(&key.tpp, key.psu_id).unwrap(), Some(c.id));
        assert_eq!(
            s.corporate_consents(&key.tpp, key.psu_id).unwrap(),
            vec![seed.agreements[0].id]
        );
        let later = now + AUTHORISATION_LIFETIME + Duration::from_secs(1);
        let other = Authorisation {
            id: Uuid::new_v4(),
            created_at: later,
            ..auth.clone()
        };
        s.insert_authorisation(other, later).unwrap();
        assert_eq!(
            s.authorisation(auth.id, later),
            Err(AuthorisationError::Unknown)
        );
    }

    #[test]
    fn overrides_and_manual_amounts_adjust_balances() {
        let base = Balances {
            closing_booked: 100,
            expected: 90,
        };
        let b = adjust_balances(base, None, [(1, true, -10), (2, false, 5)]);
        assert_eq!((b.closing_booked, b.expected), (90, 85));
        let o = BalanceOverride {
            booked: 1000,
            available: 800,
            after_seq: 1,
            set_at: UNIX_EPOCH,
        };
        let b = adjust_balances(base, Some(&o), [(1, true, -10), (2, true, -7)]);
        assert_eq!((b.closing_booked, b.expected), (993, 793));
    }
}
