//! Wire types of the embedded sandbox's answers (Berlin Group NextGenPSD2 1.3.11 schemas as
//! this sandbox fills them; the schema name is in each type's documentation), shared so
//! that the console can read the answers typed. They serialize exactly as the sandbox sends
//! them (`tests/it/sandbox_schema.rs` validates every answer against the spec file).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::xs2a::error::TppMessage;
use crate::xs2a::links::Links;
use crate::xs2a::model::{
    AccountReference, Amount, Balance, CustomerType, SandboxAgreement, Transaction,
};

/// Berlin Group `additionalInformationStructured`: the standing order of an `information`
/// entry.
#[derive(Debug, Clone, Serialize)]
pub struct AdditionalInformationStructured {
    /// `standingOrderDetails`.
    #[serde(rename = "standingOrderDetails")]
    pub standing_order_details: StandingOrderDetails,
}

/// Berlin Group `standingOrderDetails` (`startDate`, `frequency` required). `dayOfExecution`
/// is left out: the spec file's enum of it stops at "12" and the order runs on the 26th,
/// which is in `remittanceInformationUnstructured` instead.
#[derive(Debug, Clone, Serialize)]
pub struct StandingOrderDetails {
    /// `startDate`.
    #[serde(rename = "startDate")]
    pub start_date: String,
    /// `frequency`.
    pub frequency: String,
}

/// One entry of the report: Berlin Group `transactions` ([`Transaction`]) plus the fields this
/// sandbox adds: `entryReference` and `additionalInformationProprietary1` (the archive
/// reference of booked entries; interface document, Account data facts: "Proprietary
/// references appear in additionalInformationProprietaryX when available" — X is numbered
/// from 1), `additionalInformation`, `additionalInformationStructured` (standing orders),
/// `balanceAfterTransaction` (details only) and `_links.transactionDetails`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReportEntry {
    /// Its fields, inline.
    #[serde(flatten)]
    pub transaction: Transaction,
    #[serde(
        rename = "additionalInformationProprietary1",
        skip_serializing_if = "Option::is_none"
    )]
    /// `proprietaryReference` (left out when empty).
    pub proprietary_reference: Option<String>,
    /// `additionalInformation` (left out when empty).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub additional_information: Option<String>,
    /// `additionalInformationStructured` (left out when empty).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub additional_information_structured: Option<AdditionalInformationStructured>,
    /// `balanceAfterTransaction` (left out when empty).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub balance_after_transaction: Option<Balance>,
    /// `_links` (left out when empty).
    #[serde(rename = "_links", skip_serializing_if = "Option::is_none")]
    pub links: Option<Links>,
}

/// Berlin Group `accountReport` with the `information` list (entries [`ReportEntry`]), and
/// `cardAccountReport` ([`CardReport`]: entries `cardTransaction` as JSON, no `information`).
#[derive(Debug, Clone, Serialize)]
pub struct Report<E = ReportEntry> {
    /// `booked` (left out when empty).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub booked: Option<Vec<E>>,
    /// `pending` (left out when empty).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending: Option<Vec<E>>,
    /// `information` (left out when empty; always for a card report).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub information: Option<Vec<E>>,
    /// `_links`.
    #[serde(rename = "_links")]
    pub links: Links,
}

impl<E> Default for Report<E> {
    /// No lists, no links.
    fn default() -> Self {
        Report {
            booked: None,
            pending: None,
            information: None,
            links: Links::default(),
        }
    }
}

/// Berlin Group `transactionsResponse-200_json`: `{"account":{...},"transactions":{...}}`.
#[derive(Debug, Clone, Serialize)]
pub struct TransactionsBody {
    /// `account`.
    pub account: AccountReference,
    /// `transactions`.
    pub transactions: Report,
}

/// Berlin Group `OK_200_TransactionDetails`: `{"transactionsDetails": transactionDetailsBody}`
/// where `transactionDetailsBody` is `{"transactionDetails": transactions}` (the schema; the
/// spec's example leaves the inner level out, but the schema requires it).
#[derive(Debug, Clone, Serialize)]
pub struct TransactionDetailsResponse {
    /// `transactionsDetails`.
    #[serde(rename = "transactionsDetails")]
    pub transactions_details: TransactionDetailsBody,
}

/// Berlin Group `transactionDetailsBody`.
#[derive(Debug, Clone, Serialize)]
pub struct TransactionDetailsBody {
    /// `transactionDetails`.
    #[serde(rename = "transactionDetails")]
    pub transaction_details: ReportEntry,
}

/// Berlin Group `cardAccountDetails`: one definition, in [`crate::xs2a::model`].
pub use crate::xs2a::model::CardAccountDetails;

/// Berlin Group `cardAccountList`: `{"cardAccounts":[...]}`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CardAccountList {
    /// `cardAccounts`.
    pub card_accounts: Vec<CardAccountDetails>,
}

/// `{"cardAccount": cardAccountDetails}` (Berlin Group `OK_200_CardAccountDetails`).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CardAccountResponse {
    /// `cardAccount`.
    pub card_account: CardAccountDetails,
}

/// Berlin Group `readCardAccountBalanceResponse-200`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CardBalancesResponse {
    /// `cardAccount`.
    pub card_account: AccountReference,
    /// `debitAccounting`.
    pub debit_accounting: bool,
    /// `balances`.
    pub balances: Vec<Balance>,
}

/// Berlin Group `cardAccountReport`: `booked`, `pending` (`cardTransaction`s) and `_links`.
pub type CardReport = Report<Value>;

/// Berlin Group `cardAccountsTransactionsResponse200`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CardTransactionsResponse {
    /// `cardAccount`.
    pub card_account: AccountReference,
    /// `debitAccounting`.
    pub debit_accounting: bool,
    /// `cardTransactions`.
    pub card_transactions: CardReport,
}

/// Berlin Group `consentsResponse-201`: `consentStatus` (`received` until the PSU consents
/// during SCA), `consentId` (the id of the SCA authorisation that gathers the consent),
/// `_links.scaRedirect`; `tppMessages` carries the deprecation `WARNING` of `/v1/consents`
/// (Berlin Group `tppMessage2XX`, code `WARNING`).
#[derive(Debug, Clone, Serialize)]
pub struct ConsentsResponse {
    /// `consentStatus`.
    #[serde(rename = "consentStatus")]
    pub consent_status: String,
    /// `consentId`.
    #[serde(rename = "consentId")]
    pub consent_id: String,
    /// `_links`.
    #[serde(rename = "_links")]
    pub links: Links,
    /// `psuMessage` (left out when empty).
    #[serde(rename = "psuMessage", skip_serializing_if = "Option::is_none")]
    pub psu_message: Option<String>,
    /// `tppMessages` (left out when empty).
    #[serde(rename = "tppMessages", skip_serializing_if = "Vec::is_empty")]
    pub tpp_messages: Vec<TppMessage>,
}

/// Berlin Group `consentStatusResponse-200`.
#[derive(Debug, Clone, Serialize)]
pub struct ConsentStatusResponse {
    /// `consentStatus`.
    #[serde(rename = "consentStatus")]
    pub consent_status: String,
}

/// Berlin Group `accountAccess` as granted: the consented accounts (`bban`, `currency`) and
/// card accounts (`maskedPan`, `currency`) under `accounts`, `balances` and `transactions`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct AccountAccess {
    /// `accounts` (left out when empty).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub accounts: Vec<crate::xs2a::model::AccountReference>,
    /// `balances` (left out when empty).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub balances: Vec<crate::xs2a::model::AccountReference>,
    /// `transactions` (left out when empty).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub transactions: Vec<crate::xs2a::model::AccountReference>,
}

/// Berlin Group `consentInformationResponse-200_json`: `access`, `recurringIndicator` (true),
/// `validUntil` (180 days after the SCA, or after the request while `received`),
/// `frequencyPerDay` (4, the Limits table's calls without the PSU), `lastActionDate`,
/// `consentStatus`, `_links` (`account`, `card-account`) while valid.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConsentInformation {
    /// `access`.
    pub access: AccountAccess,
    /// `recurringIndicator`.
    pub recurring_indicator: bool,
    /// `validUntil`.
    pub valid_until: String,
    /// `frequencyPerDay`.
    pub frequency_per_day: u32,
    /// `lastActionDate`.
    pub last_action_date: String,
    /// `consentStatus`.
    pub consent_status: String,
    /// `_links` (left out when empty).
    #[serde(rename = "_links", skip_serializing_if = "Links::is_empty")]
    pub links: Links,
}

/// Body of `GET /v1/users`: `_links.scaRedirect` and a `psuMessage` (the interface document
/// does not show the user record; this is the minimum its text names: "answers 200 with a
/// scaRedirect link").
#[derive(Debug, Clone, Serialize)]
pub struct UsersResponse {
    /// `_links`.
    #[serde(rename = "_links")]
    pub links: Links,
    /// `psuMessage`.
    #[serde(rename = "psuMessage")]
    pub psu_message: String,
}

/// Body of `GET /v1/agreements`: `{"agreements":[...]}`, each element the agreement shape of
/// the sandbox customer table (`id`, `name`, `engagements`, `_links.self`,
/// `_links.engagements`); the `id` is the `PSU-Corporate-ID` of that corporate context.
#[derive(Debug, Clone, Serialize)]
pub struct AgreementList {
    /// `agreements`.
    pub agreements: Vec<SandboxAgreement>,
}

/// One account an agreement covers.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Engagement {
    /// `resourceId`.
    pub resource_id: String,
    /// `bban`.
    pub bban: String,
    /// `currency`.
    pub currency: String,
    /// `name`.
    pub name: String,
    /// `_links`.
    #[serde(rename = "_links")]
    pub links: Links,
}

/// Body of `GET /v1/agreements/{id}/engagements`.
#[derive(Debug, Clone, Serialize)]
pub struct EngagementList {
    /// `engagements`.
    pub engagements: Vec<Engagement>,
}

/// The body of `GET /v1/payments/instant-norwegian-credit-transfers-straks/fee-information`
/// (interface document: "Fee information for instant payments"; shape not shown, so the
/// sandbox's own): the product, the fee per instant payment by customer type, the largest
/// instant amount, and a note. Amounts are Berlin Group `amount`s (strings).
///
/// ```json
/// {"paymentProduct":"instant-norwegian-credit-transfers-straks","currency":"NOK",
///  "fees":[{"customerType":"PRIVATE","transactionFee":{"currency":"NOK","amount":"0.00"}},
///          {"customerType":"CORPORATE","transactionFee":{"currency":"NOK","amount":"2.50"}}],
///  "maximumAmount":{"currency":"NOK","amount":"500000.00"},
///  "settlement":"immediate, also outside banking hours","validFrom":"2024-01-01"}
/// ```
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FeeInformation {
    /// `paymentProduct`.
    pub payment_product: String,
    /// `currency`.
    pub currency: String,
    /// `fees`.
    pub fees: Vec<Fee>,
    /// `maximumAmount`.
    pub maximum_amount: Amount,
    /// `settlement`.
    pub settlement: String,
    /// `validFrom`.
    pub valid_from: String,
}

/// One fee line of [`FeeInformation`].
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Fee {
    /// `customerType`.
    pub customer_type: CustomerType,
    /// `transactionFee`.
    pub transaction_fee: Amount,
    /// `description`.
    pub description: String,
}

// ---------------------------------------------------------------------------------------
// Answers the console reads (typed instead of string keys). Each is read with `serde`,
// missing fields as their default, so an answer of another ASPSP (or of an older sandbox)
// reads as far as it goes.
// ---------------------------------------------------------------------------------------

/// The `_links` of any Berlin Group answer (`_linksAll`), read alone, e.g. `_links.status`
/// of a `paymentInitationRequestResponse-201` or `startScaprocessResponse`.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct AnswerLinks {
    /// `_links` (empty when absent).
    #[serde(rename = "_links", default)]
    pub links: Links,
}

/// The resource id of a Berlin Group creation answer, whichever it has: `paymentId`
/// (`paymentInitationRequestResponse-201`), `basketId` (`signingBasketResponse-201`),
/// `consentId` (`consentsResponse-201`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct CreatedAnswer {
    /// `paymentId`.
    pub payment_id: Option<String>,
    /// `basketId`.
    pub basket_id: Option<String>,
    /// `consentId`.
    pub consent_id: Option<String>,
}

/// The status word of a Berlin Group answer, whichever it has: `transactionStatus`
/// (`paymentInitiationStatusResponse-200_json`, `paymentInitationRequestResponse-201`),
/// `consentStatus` (`consentStatusResponse-200`, `consentsResponse-201`) or `scaStatus`
/// (`scaStatusResponse`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct StatusAnswer {
    /// `transactionStatus`.
    pub transaction_status: Option<String>,
    /// `consentStatus`.
    pub consent_status: Option<String>,
    /// `scaStatus`.
    pub sca_status: Option<String>,
}

impl StatusAnswer {
    /// The first status word present: `transactionStatus`, else `consentStatus`, else
    /// `scaStatus`.
    pub fn word(&self) -> Option<&str> {
        self.transaction_status
            .as_deref()
            .or(self.consent_status.as_deref())
            .or(self.sca_status.as_deref())
    }
}

/// The identity answer of a psd2-console sandbox without a challenge (`GET
/// /.well-known/psd2-console`, not Berlin Group: docs/sandbox.md): `{"product":
/// "psd2-console", "version": ...}`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct SandboxIdentity {
    /// `product`: `psd2-console` on this project's sandbox (empty when absent).
    pub product: String,
    /// `version`: the answering console's version.
    pub version: String,
}

/// One fault rule of the sandbox (`GET /v1/sandbox/faults` elements, the `POST` answer; not
/// Berlin Group: docs/sandbox.md, "Faults and events"), the fields the console shows: its
/// id, what it does to which requests, and the answers left (`psuId`, `times` and `text`
/// are not read).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct FaultRule {
    /// `id` (UUID).
    pub id: String,
    /// `action`: `error`, `delay`, `drop`, `rejectPayment`, `insufficientFunds`,
    /// `holdPayment`, `scaCancel`, `scaFail`.
    pub action: String,
    /// `method` (upper case); any when absent.
    pub method: Option<String>,
    /// `path`: the pattern of the paths it applies to.
    pub path: String,
    /// `status`: the HTTP status (`error`, `scaFail`).
    pub status: Option<u16>,
    /// `code`: the Berlin Group message code.
    pub code: Option<String>,
    /// `delayMs`: the wait, milliseconds.
    pub delay_ms: Option<u64>,
    /// `remaining`: answers left; `None` until cleared.
    pub remaining: Option<u64>,
}

/// `GET /v1/sandbox/faults`: `{"faults": [...]}`, oldest first.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct FaultList {
    /// `faults`.
    pub faults: Vec<FaultRule>,
}

/// `DELETE /v1/sandbox/faults`: `{"cleared": n}`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct FaultsCleared {
    /// `cleared`: how many rules were removed.
    pub cleared: u64,
}

/// `POST /v1/sandbox/batch`: the run's report, the fields the console reads.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct BatchRun {
    /// `settled`: payments settled (`ACSC`).
    pub settled: u64,
    /// `insufficientFunds`: payments left without funds (`ACCP`).
    pub insufficient_funds: u64,
}

/// `GET`/`POST /v1/sandbox/clock`: `{now, nextBatchRun, batchTimes}`, the field the console
/// reads.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SandboxClock {
    /// `now`: the sandbox time (RFC 3339).
    pub now: Option<String>,
}
