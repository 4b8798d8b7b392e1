//! The schema of the store's own tables (one migration, [`MIGRATION`]; the per-table
//! modules have their own, all listed in `sandbox::MIGRATIONS`).

use crate::sandbox::store::db::Migration;

/// The schema of this module (one migration; see `sandbox::MIGRATIONS`).
/// The tables as first made: `sca_authorisations`' `step` `CHECK` is rewritten without an `IN`
/// list by [`crate::sandbox::store::indexes::MIGRATION_CHECKS_WITHOUT_IN`] (the table is rebuilt
/// there; a migration applied once is never edited).
pub const MIGRATION: Migration = ("store_0001_state", SCHEMA);

const SCHEMA: &str = "
CREATE TABLE sandbox_meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE customers (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    number TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL CHECK (kind IN ('PRIVATE', 'CORPORATE')),
    name TEXT NOT NULL,
    employer TEXT NOT NULL DEFAULT ''
);
CREATE TABLE accounts (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    owner TEXT NOT NULL REFERENCES customers(id) ON DELETE CASCADE,
    kind TEXT NOT NULL CHECK (kind IN ('CURRENT', 'SAVINGS', 'OPERATING', 'SETTLEMENT')),
    bban TEXT NOT NULL UNIQUE,
    currency TEXT NOT NULL,
    name TEXT NOT NULL,
    product TEXT NOT NULL,
    cash_account_type TEXT NOT NULL,
    opening_balance INTEGER NOT NULL,
    generated INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX accounts_by_owner ON accounts(owner);
CREATE TABLE card_accounts (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    owner TEXT NOT NULL REFERENCES customers(id) ON DELETE CASCADE,
    masked_pan TEXT NOT NULL UNIQUE,
    currency TEXT NOT NULL,
    name TEXT NOT NULL,
    product TEXT NOT NULL,
    status TEXT NOT NULL
);
CREATE INDEX card_accounts_by_owner ON card_accounts(owner);
CREATE TABLE agreements (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    corporate TEXT NOT NULL REFERENCES customers(id) ON DELETE CASCADE,
    holder TEXT NOT NULL REFERENCES customers(id) ON DELETE CASCADE
);
CREATE TABLE agreement_engagements (
    agreement TEXT NOT NULL REFERENCES agreements(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    account TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    PRIMARY KEY (agreement, account)
);
CREATE INDEX agreement_engagements_by_account ON agreement_engagements(account);
CREATE TABLE psu_registrations (
    tpp TEXT NOT NULL,
    psu_id TEXT NOT NULL,
    customer TEXT NOT NULL REFERENCES customers(id) ON DELETE CASCADE,
    registered_at INTEGER NOT NULL,
    PRIMARY KEY (tpp, psu_id)
);
CREATE TABLE consents (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    tpp TEXT NOT NULL,
    psu_id TEXT NOT NULL,
    agreement TEXT NOT NULL DEFAULT '',
    customer TEXT NOT NULL REFERENCES customers(id) ON DELETE CASCADE,
    granted_at INTEGER NOT NULL,
    tpp_session_id TEXT NOT NULL,
    UNIQUE (tpp, psu_id, agreement)
);
CREATE TABLE consent_accounts (
    consent INTEGER NOT NULL REFERENCES consents(seq) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    account TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    PRIMARY KEY (consent, account)
);
CREATE INDEX consent_accounts_by_account ON consent_accounts(account);
CREATE TABLE sca_authorisations (
    id TEXT PRIMARY KEY,
    tpp TEXT NOT NULL,
    tpp_name TEXT NOT NULL,
    redirect_uri TEXT NOT NULL,
    tpp_session_id TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    step TEXT NOT NULL CHECK (step IN ('IDENTIFY', 'CHOOSE_CONTEXT', 'CONSENT', 'FINISHED')),
    customer TEXT,
    agreement TEXT
);
CREATE TABLE manual_transactions (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    account TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    booked INTEGER NOT NULL,
    booking_date TEXT,
    value_date TEXT NOT NULL,
    amount INTEGER NOT NULL,
    creditor_name TEXT,
    creditor_account TEXT,
    debtor_name TEXT,
    debtor_account TEXT,
    remittance TEXT,
    created_at INTEGER NOT NULL
);
CREATE INDEX manual_transactions_by_account ON manual_transactions(account);
CREATE TABLE manual_card_transactions (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    card_account TEXT NOT NULL REFERENCES card_accounts(id) ON DELETE CASCADE,
    booked INTEGER NOT NULL,
    booking_date TEXT,
    transaction_date TEXT NOT NULL,
    amount INTEGER NOT NULL,
    original_currency TEXT,
    original_amount TEXT,
    card_acceptor_id TEXT,
    merchant_category_code TEXT,
    transaction_details TEXT,
    created_at INTEGER NOT NULL
);
CREATE INDEX manual_card_transactions_by_card ON manual_card_transactions(card_account);
CREATE TABLE balance_overrides (
    account TEXT PRIMARY KEY REFERENCES accounts(id) ON DELETE CASCADE,
    booked INTEGER NOT NULL,
    available INTEGER NOT NULL,
    after_seq INTEGER NOT NULL,
    set_at INTEGER NOT NULL
);
CREATE TABLE card_balance_overrides (
    card_account TEXT PRIMARY KEY REFERENCES card_accounts(id) ON DELETE CASCADE,
    booked INTEGER NOT NULL,
    available INTEGER NOT NULL,
    after_seq INTEGER NOT NULL,
    set_at INTEGER NOT NULL
);
";
