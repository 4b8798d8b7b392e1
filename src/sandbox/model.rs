//! The sandbox's domain types: customers, accounts, card accounts, agreements, consents, SCA
//! authorisations and the sandbox-management data (manual transactions, balance overrides),
//! with their lifetimes. Plain data: [`crate::sandbox::store`] persists them, [`crate::sandbox::domain::ledger`]
//! computes transactions and balances from them, the handlers answer with them.

use std::time::{Duration, SystemTime};

use chrono::NaiveDate;
use uuid::Uuid;

use crate::xs2a::model::{AccountReference, Amount, CustomerType, Transaction};

/// How long an SCA authorisation can be used after it was created.
pub const AUTHORISATION_LIFETIME: Duration = Duration::from_secs(30 * 60);

/// How long a consent is valid without a new SCA (interface document, Limits: SCA renewal
/// 180 days).
pub const CONSENT_LIFETIME: Duration = Duration::from_secs(180 * 24 * 3600);

/// `proprietaryBankTransactionCode` of manually created (sandbox management) transactions.
pub const MANUAL_TRANSACTION_CODE: &str = "MANUELL";

/// The TPP as identified by its signing certificate: the text [`tpp_id`] makes (64 lower-case
/// hex digits for a certificate's TPP). Shared (`Arc<str>`): a verified request's id is cloned
/// for the Date window, the replay check, its world's clock and the access decision key, and
/// a shared id is a reference count, not a new text each time (issue 23).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TppId(pub std::sync::Arc<str>);

/// The TPP of a verified request.
#[derive(Debug, Clone)]
pub struct Tpp {
    /// The TPP's identity ([`tpp_id`]): its QSealC's organisationIdentifier bound to its key,
    /// else the certificate.
    pub id: TppId,
    /// Subject organisation (or common name) of the certificate, for the SCA pages. Shared
    /// (`Arc<str>`): a verified request's `Tpp` is cloned from the identity cache and again
    /// by each extractor, and a shared name is a reference count, not a new text (issue 23).
    pub name: std::sync::Arc<str>,
}

/// The subject attribute organizationIdentifier (ETSI EN 319 412-1, OID 2.5.4.97).
pub const ORGANISATION_IDENTIFIER: &str = "2.5.4.97";

/// The identity of the TPP holding `certificate` (issue 20: "a TPP is identified by its
/// QSealC: organisationIdentifier, else the certificate"): hex SHA-256 of its subject
/// organizationIdentifier together with its public key, so that a renewed certificate of
/// the same organisation and key is the same TPP; without an organizationIdentifier, hex
/// SHA-256 of the certificate DER. The key is part of it because this sandbox accepts
/// self-made certificates: an organizationIdentifier alone is a claim anybody can copy into
/// their own certificate, and would hand them the organisation's world.
pub fn tpp_id(certificate: &crate::cert::Certificate) -> TppId {
    let org = certificate
        .subject
        .attributes
        .iter()
        .find(|a| a.oid == ORGANISATION_IDENTIFIER)
        .map(|a| a.value.trim())
        .filter(|v| !v.is_empty());
    let digest = match org {
        Some(org) => {
            let mut ctx = aws_lc_rs::digest::Context::new(&aws_lc_rs::digest::SHA256);
            ctx.update(b"psd2-console tpp\0");
            ctx.update(org.as_bytes());
            ctx.update(b"\0");
            ctx.update(&certificate.public_key);
            ctx.finish()
        }
        None => aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, &certificate.der),
    };
    TppId(
        digest
            .as_ref()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
            .into(),
    )
}

impl Tpp {
    /// The identity carried by `certificate`.
    pub fn of(certificate: &crate::cert::Certificate) -> Self {
        let id = tpp_id(certificate);
        let attr = |oid: &str| {
            certificate
                .subject
                .attributes
                .iter()
                .find(|a| a.oid == oid)
                .map(|a| a.value.clone())
        };
        let name = attr("2.5.4.10")
            .or_else(|| attr("2.5.4.3"))
            .unwrap_or_else(|| certificate.key_id());
        Tpp {
            id,
            name: name.into(),
        }
    }
}

/// A sandbox customer (interface document, Resources, "Sandbox customer").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Customer {
    /// The `customerId` (UUID).
    pub id: Uuid,
    /// The number the PSU types at sandbox SCA (a mock national id or organisation number).
    pub number: String,
    /// PRIVATE or CORPORATE.
    pub kind: CustomerType,
    /// The customer's name (a person or an organisation).
    pub name: String,
    /// For private customers: the employer named on salary payments.
    pub employer: String,
}

/// What kind of account an account is; decides its generated transactions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AccountKind {
    /// A private current account (salary in, bills and card purchases out).
    Current,
    /// A private savings account (monthly transfer, round-ups, interest).
    Savings,
    /// A corporate operating account (customer and supplier payments, salaries, taxes).
    Operating,
    /// A corporate settlement account (card-terminal settlements, weekly sweep).
    Settlement,
}

impl AccountKind {
    /// The stored name: `CURRENT`, `SAVINGS`, `OPERATING`, `SETTLEMENT`.
    pub fn as_str(self) -> &'static str {
        match self {
            AccountKind::Current => "CURRENT",
            AccountKind::Savings => "SAVINGS",
            AccountKind::Operating => "OPERATING",
            AccountKind::Settlement => "SETTLEMENT",
        }
    }

    /// The kind named by [`AccountKind::as_str`].
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "CURRENT" => AccountKind::Current,
            "SAVINGS" => AccountKind::Savings,
            "OPERATING" => AccountKind::Operating,
            "SETTLEMENT" => AccountKind::Settlement,
            _ => return None,
        })
    }
}

/// A cash account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    /// The `resourceId` (UUID).
    pub id: Uuid,
    /// The owning customer's id.
    pub owner: Uuid,
    /// What kind of account (decides the generated transactions).
    pub kind: AccountKind,
    /// The Norwegian BBAN, 11 digits.
    pub bban: String,
    /// ISO 4217 currency code, e.g. `NOK`.
    pub currency: String,
    /// The account name (at most 70 characters).
    pub name: String,
    /// The bank's product name.
    pub product: String,
    /// ISO 20022 `CashAccountType` code.
    pub cash_account_type: String,
    /// Balance before the first transaction, minor units.
    pub opening_balance: i64,
    /// Whether [`crate::sandbox::domain::ledger`] generates a history for it (seeded accounts and the default
    /// accounts of created customers). Accounts made with `POST /v1/sandbox/accounts` start
    /// empty: only their manually created transactions are listed.
    pub generated: bool,
}

/// A card account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CardAccount {
    /// The `resourceId` (UUID).
    pub id: Uuid,
    /// The owning customer's id.
    pub owner: Uuid,
    /// The masked card number (`maskedPan`).
    pub masked_pan: String,
    /// ISO 4217 currency code.
    pub currency: String,
    /// The card account name (at most 70 characters).
    pub name: String,
    /// The card product name.
    pub product: String,
    /// `enabled`, `blocked` or `deleted` (Account data facts).
    pub status: String,
}

/// A corporate agreement: `holder` (a private customer) may act for `corporate` on
/// `accounts` (its engagements) in CORPORATE context. Its id is the `psu-corporate-id` of
/// that context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Agreement {
    /// The agreement id: the `PSU-Corporate-ID` of its CORPORATE context.
    pub id: Uuid,
    /// The agreement's name.
    pub name: String,
    /// The corporate customer the holder acts for.
    pub corporate: Uuid,
    /// The private customer who holds it.
    pub holder: Uuid,
    /// The corporate's accounts it covers (its engagements).
    pub accounts: Vec<Uuid>,
}

/// The customers, accounts and agreements of an initialized sandbox, and the transactions a
/// seed file gives (`sandbox serve --seed`, [`crate::sandbox::domain::seed_file`]; the built-in seed has none:
/// its accounts' histories are generated).
#[derive(Debug, Clone, Default)]
pub struct SeedData {
    /// Every customer.
    pub customers: Vec<Customer>,
    /// Every cash account.
    pub accounts: Vec<Account>,
    /// Every card account.
    pub card_accounts: Vec<CardAccount>,
    /// Every corporate agreement.
    pub agreements: Vec<Agreement>,
    /// Transactions of the seed file (none in the built-in seed).
    pub transactions: Vec<ManualTransaction>,
}

/// Which consent a request addresses: the TPP, the `PSU-ID` and, in CORPORATE context, the
/// `PSU-Corporate-ID` (an agreement id).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ConsentKey {
    /// The TPP.
    pub tpp: TppId,
    /// The `PSU-ID`.
    pub psu_id: Uuid,
    /// The `PSU-Corporate-ID` (agreement id) in CORPORATE context; `None` in PRIVATE.
    pub agreement: Option<Uuid>,
}

/// A bank-offered consent given during SCA (interface document, Authentication rule 11).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Consent {
    /// The customer who consented.
    pub customer: Uuid,
    /// The consented accounts, in the order ticked.
    pub accounts: Vec<Uuid>,
    /// When the SCA completed (sandbox clock).
    pub granted_at: SystemTime,
    /// The `TPP-Session-ID` of the SCA.
    pub tpp_session_id: String,
}

/// Where an SCA authorisation stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScaStep {
    /// Waiting for the customerNumber.
    Identify,
    /// The customer has agreements: waiting for PRIVATE or CORPORATE (which agreement).
    ChooseContext {
        /// The identified customer.
        customer: Uuid,
    },
    /// Waiting for the account selection; `agreement` is set in CORPORATE context.
    Consent {
        /// The identified customer.
        customer: Uuid,
        /// The agreement chosen (CORPORATE context).
        agreement: Option<Uuid>,
    },
    /// Approved or cancelled; the authorisation cannot be used again.
    Finished,
}

/// An SCA authorisation started by an account request without consent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Authorisation {
    /// The authorisation id.
    pub id: Uuid,
    /// The TPP that started it.
    pub tpp: TppId,
    /// The TPP's display name (certificate subject organisation).
    pub tpp_name: String,
    /// `TPP-Redirect-URI` of the triggering request (absolute http(s) URL).
    pub redirect_uri: String,
    /// `TPP-Session-ID` of the triggering request, or one generated by the sandbox.
    pub tpp_session_id: String,
    /// When it started (sandbox clock).
    pub created_at: SystemTime,
    /// Where it stands.
    pub step: ScaStep,
}

/// Why an authorisation cannot be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthorisationError {
    /// No such authorisation.
    Unknown,
    /// Older than the SCA link lifetime.
    Expired,
    /// Approved or cancelled already.
    Finished,
    /// The database failed (logged when it happened); answered 503, never "unknown".
    Storage,
}

/// A transaction created with `POST /v1/sandbox/accounts/{id}/transactions` (interface
/// document, Endpoints). Amounts in minor units of the account currency; negative = debit
/// (the account is the debtor), positive = credit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManualTransaction {
    /// The `transactionId`; stored, so stable across reads (Account data facts).
    pub id: Uuid,
    /// Creation order (increasing; compared with [`BalanceOverride::after_seq`]).
    pub seq: i64,
    /// The account it is on.
    pub account: Uuid,
    /// Booked (with `booking_date`) or pending (without).
    pub booked: bool,
    /// `bookingDate` (booked transactions only).
    pub booking_date: Option<NaiveDate>,
    /// `valueDate`.
    pub value_date: NaiveDate,
    /// Minor units; negative = debit.
    pub amount: i64,
    /// `creditorName`.
    pub creditor_name: Option<String>,
    /// BBAN of the creditor.
    pub creditor_account: Option<String>,
    /// `debtorName`.
    pub debtor_name: Option<String>,
    /// BBAN of the debtor.
    pub debtor_account: Option<String>,
    /// `remittanceInformationUnstructured`.
    pub remittance: Option<String>,
    /// When it was created (sandbox clock).
    pub created_at: SystemTime,
}

impl ManualTransaction {
    /// As a Berlin Group `transactions` element, with creditor and debtor accounts.
    pub fn to_transaction(&self, currency: &str) -> Transaction {
        let reference = |bban: &Option<String>| {
            bban.as_ref().map(|b| AccountReference {
                bban: Some(b.clone()),
                ..AccountReference::default()
            })
        };
        Transaction {
            creditor_name: self.creditor_name.clone(),
            creditor_account: reference(&self.creditor_account),
            debtor_name: self.debtor_name.clone(),
            debtor_account: reference(&self.debtor_account),
            remittance_information_unstructured: self.remittance.clone(),
            proprietary_bank_transaction_code: self
                .booked
                .then(|| MANUAL_TRANSACTION_CODE.to_string()),
            ..Transaction::dated(
                self.id.to_string(),
                self.booking_date,
                self.value_date,
                Amount::from_minor(currency, self.amount),
            )
        }
    }
}

/// A card transaction created with `POST /v1/sandbox/card-accounts/{id}/transactions`
/// (Berlin Group `cardTransaction` fields). `amount` is the `transactionAmount` in the card
/// account's currency, minor units, negative for purchases; `original_amount` the amount in
/// the merchant's currency (interface document, Versioning:
/// `cardaccount-switch-originalamount-and-transactionamount`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManualCardTransaction {
    /// The `cardTransactionId` (sent in the simple 32-hex-digit form); stored, so stable
    /// across reads.
    pub id: Uuid,
    /// Creation order (compared with [`BalanceOverride::after_seq`]).
    pub seq: i64,
    /// The card account it is on.
    pub card_account: Uuid,
    /// Booked (with `booking_date`) or pending (without).
    pub booked: bool,
    /// `bookingDate` (booked only).
    pub booking_date: Option<NaiveDate>,
    /// `transactionDate`.
    pub transaction_date: NaiveDate,
    /// `transactionAmount`, minor units of the card account's currency; negative for purchases.
    pub amount: i64,
    /// `originalAmount`, in the merchant's currency.
    pub original_amount: Option<Amount>,
    /// `cardAcceptorId`.
    pub card_acceptor_id: Option<String>,
    /// `merchantCategoryCode`.
    pub merchant_category_code: Option<String>,
    /// `transactionDetails`.
    pub transaction_details: Option<String>,
    /// When it was created (sandbox clock).
    pub created_at: SystemTime,
}

impl ManualCardTransaction {
    /// The Berlin Group `cardTransaction` JSON of this transaction.
    pub fn to_json(&self, currency: &str, masked_pan: &str) -> serde_json::Value {
        let mut v = serde_json::json!({
            // The simple (32 hex digits) form, like the generated card transactions'.
            "cardTransactionId": self.id.simple().to_string(),
            "transactionDate": self.transaction_date.to_string(),
            "transactionAmount": Amount::from_minor(currency, self.amount),
            "maskedPAN": masked_pan,
        });
        if let Some(o) = v.as_object_mut() {
            if let Some(d) = self.booking_date {
                o.insert("bookingDate".into(), d.to_string().into());
            }
            if let Some(a) = &self.original_amount
                && let Ok(a) = serde_json::to_value(a)
            {
                o.insert("originalAmount".into(), a);
            }
            for (k, val) in [
                ("cardAcceptorId", &self.card_acceptor_id),
                ("merchantCategoryCode", &self.merchant_category_code),
                ("transactionDetails", &self.transaction_details),
            ] {
                if let Some(s) = val {
                    o.insert(k.into(), s.clone().into());
                }
            }
        }
        v
    }
}

/// Balances set with the sandbox balance-update operations (interface document, Endpoints:
/// "Sandbox balance-update operations for accounts and card accounts also exist"). Minor
/// units. `booked` replaces the booked balance and `available` the available one; manual
/// transactions created afterwards (`seq > after_seq`) still move them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BalanceOverride {
    /// The booked balance, minor units.
    pub booked: i64,
    /// The available balance, minor units.
    pub available: i64,
    /// The highest manual-transaction `seq` of the account when the override was set.
    pub after_seq: i64,
    /// When it was set (sandbox clock).
    pub set_at: SystemTime,
}

impl Consent {
    /// Whether the consent is older than [`CONSENT_LIFETIME`] at `now`.
    pub fn is_expired(&self, now: SystemTime) -> bool {
        now.duration_since(self.granted_at)
            .map(|age| age > CONSENT_LIFETIME)
            .unwrap_or(false)
    }
}
