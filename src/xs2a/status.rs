//! The one status vocabulary of the console and the sandbox: `transactionStatus` (payments,
//! signing baskets; Berlin Group `transactionStatus`), `consentStatus` (BG `consentStatus`)
//! and `scaStatus` (BG `scaStatus`) as enums, and one [`verdict`] saying whether a resource
//! is approved, still pending or rejected (with the reason).
//!
//! Where the interface document speaks it wins over the ISO 20022 names of the Berlin Group
//! file (interface document, "States and transitions", "Payment statuses"):
//!
//! - `ACCP` is "named for payments rejected for lack of funds" (BG: *AcceptedCustomerProfile*,
//!   an acceptance). Here it is **rejected: lack of funds**; the sandbox answers it with
//!   `fundsAvailable: false`.
//! - `PDNG` is the status of a payment on hold or stopped by the bank (interface document
//!   2.12.0, "a further status exists for payments on hold or stopped"): pending.
//! - `PATC` (a signing basket status) is *PartiallyAcceptedTechnical*: some but not all
//!   authorisations are done: pending, not approved.
//!
//! The CLI's exit code (`send`), the TUI's status line after SCA, the lint, the flow
//! diagram and the sandbox's basket status all read this module.

use serde_json::Value;

/// Declares one enum of the vocabulary: each variant with its value as sent, the derives
/// every status shares (strum's parsing, `Display` and iteration), `as_str` (the value as
/// sent, usable in `const`s) and `parse` (the exact value; `None` for anything else).
macro_rules! status_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident { $($(#[$vmeta:meta])* $variant:ident = $sent:literal,)* }
        $($rest:tt)*
    ) => {
        $(#[$meta])*
        #[derive(
            Debug,
            Clone,
            Copy,
            PartialEq,
            Eq,
            Hash,
            strum::EnumString,
            strum::IntoStaticStr,
            strum::Display,
            strum::EnumIter,
        )]
        pub enum $name {
            $($(#[$vmeta])* #[strum(serialize = $sent)] $variant,)*
        }

        impl $name {
            /// The value as sent (`ACSC`, `valid`, `finalised`).
            pub const fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $sent,)*
                }
            }

            /// The value `s` (exact, case-sensitive), `None` for anything else.
            pub fn parse(s: &str) -> Option<$name> {
                s.parse().ok()
            }

            $($rest)*
        }
    };
}

status_enum! {
    /// A `transactionStatus` (ISO 20022 codes of BG 1.3.11 `transactionStatus`), named as
    /// sent.
    #[allow(clippy::upper_case_acronyms)]
    pub enum TransactionStatus {
        /// AcceptedSettlementCompleted (creditor side): approved.
        ACCC = "ACCC",
        /// Interface document: rejected for lack of funds (`fundsAvailable: false`).
        ACCP = "ACCP",
        /// AcceptedSettlementCompleted (debtor side): approved, settled.
        ACSC = "ACSC",
        /// AcceptedSettlementInProcess: approved.
        ACSP = "ACSP",
        /// AcceptedTechnicalValidation: SCA and validation done, waiting for execution: approved.
        ACTC = "ACTC",
        /// AcceptedWithChange: approved.
        ACWC = "ACWC",
        /// AcceptedWithoutPosting: approved.
        ACWP = "ACWP",
        /// Received, waiting for SCA: pending.
        RCVD = "RCVD",
        /// On hold or stopped by the bank (interface document 2.12.0): pending.
        PDNG = "PDNG",
        /// Rejected (by the PSU during SCA or by the bank): rejected.
        RJCT = "RJCT",
        /// Cancelled before execution: rejected.
        CANC = "CANC",
        /// AcceptedFundsChecked: approved.
        ACFC = "ACFC",
        /// PartiallyAcceptedTechnical: some, not all, authorisations done: pending.
        PATC = "PATC",
        /// PartiallyAccepted (bulk: some payments rejected): pending.
        PART = "PART",
    }

    /// The statuses of a signing basket creation response (interface document, "Signing
    /// basket creation response"; also "States and transitions"): `RCVD`, `ACTC`, `PATC`,
    /// `RJCT`.
    pub const BASKET: [TransactionStatus; 4] = [
        TransactionStatus::RCVD,
        TransactionStatus::ACTC,
        TransactionStatus::PATC,
        TransactionStatus::RJCT,
    ];
}

status_enum! {
    /// A `consentStatus` (BG 1.3.11 `consentStatus`).
    pub enum ConsentStatus {
        /// Received, not authorised yet: pending.
        Received = "received",
        /// Rejected (no successful authorisation): rejected.
        Rejected = "rejected",
        /// Valid for account reads: approved.
        Valid = "valid",
        /// Revoked by the PSU: rejected.
        RevokedByPsu = "revokedByPsu",
        /// Expired: rejected.
        Expired = "expired",
        /// Terminated by the TPP (DELETE): rejected.
        TerminatedByTpp = "terminatedByTpp",
        /// Some, not all, authorisations done: pending.
        PartiallyAuthorised = "partiallyAuthorised",
    }
}

status_enum! {
    /// An `scaStatus` (BG 1.3.11 `scaStatus`, the values the sandbox uses and the BG file's
    /// others).
    pub enum ScaStatus {
        /// Authorisation resource created, nothing done yet.
        Received = "received",
        /// The PSU is identified.
        PsuIdentified = "psuIdentified",
        /// The PSU is authenticated.
        PsuAuthenticated = "psuAuthenticated",
        /// An SCA method is selected.
        ScaMethodSelected = "scaMethodSelected",
        /// The SCA has started.
        Started = "started",
        /// The SCA is done but waits for a confirmation (BG `unconfirmed`).
        Unconfirmed = "unconfirmed",
        /// The SCA is done: the resource is authorised.
        Finalised = "finalised",
        /// The SCA failed.
        Failed = "failed",
        /// No SCA was needed (an exemption).
        Exempted = "exempted",
    }
}

/// Why a resource is rejected ([`Verdict::Rejected`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RejectReason {
    /// Lack of funds: `ACCP` (interface document, "Payment statuses") or `fundsAvailable:
    /// false` beside `RJCT`.
    LackOfFunds,
    /// `RJCT` without a funds answer: rejected by the PSU during SCA or by the bank.
    Rejected,
    /// `CANC`: cancelled before execution.
    Cancelled,
    /// A consent's `rejected`, `revokedByPsu`, `expired` or `terminatedByTpp` (the value).
    Consent(ConsentStatus),
}

impl std::fmt::Display for RejectReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RejectReason::LackOfFunds => f.write_str("lack of funds"),
            RejectReason::Rejected => f.write_str("refused by the PSU or the bank"),
            RejectReason::Cancelled => f.write_str("cancelled before execution"),
            RejectReason::Consent(ConsentStatus::RevokedByPsu) => f.write_str("revoked by the PSU"),
            RejectReason::Consent(ConsentStatus::Expired) => f.write_str("expired"),
            RejectReason::Consent(ConsentStatus::TerminatedByTpp) => {
                f.write_str("terminated by the TPP")
            }
            RejectReason::Consent(s) => f.write_str(s.as_str()),
        }
    }
}

/// How a payment, basket or consent stands ([`verdict`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Authorised and accepted by the bank.
    Approved,
    /// Neither yet (`RCVD`, `PDNG`, `PATC`, `PART`, `received`, `partiallyAuthorised`), or a
    /// status this vocabulary does not know.
    Pending,
    /// Refused, with the reason.
    Rejected(RejectReason),
}

impl Verdict {
    /// Whether it is [`Verdict::Approved`].
    pub fn is_approved(&self) -> bool {
        matches!(self, Verdict::Approved)
    }

    /// `approved`, `not approved yet`, `rejected: lack of funds`, ...
    pub fn describe(&self) -> String {
        match self {
            Verdict::Approved => "approved".into(),
            Verdict::Pending => "not approved yet".into(),
            Verdict::Rejected(r) => format!("rejected: {r}"),
        }
    }
}

/// The status read from a body ([`Status::of_body`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// A `transactionStatus` (payment, signing basket).
    Transaction(TransactionStatus),
    /// A `consentStatus`.
    Consent(ConsentStatus),
}

impl Status {
    /// `transactionStatus` or `consentStatus` of a status (or creation) answer, when it is
    /// one of the known values.
    pub fn of_body(body: &Value) -> Option<Status> {
        if let Some(t) = body.get("transactionStatus").and_then(Value::as_str) {
            return TransactionStatus::parse(t).map(Status::Transaction);
        }
        body.get("consentStatus")
            .and_then(Value::as_str)
            .and_then(ConsentStatus::parse)
            .map(Status::Consent)
    }
}

/// The one verdict: a `transactionStatus` or `consentStatus` value `status` (as sent) with
/// the answer's `fundsAvailable` (`None` when absent).
///
/// - Approved: `ACCC`, `ACSC`, `ACSP`, `ACTC`, `ACWC`, `ACWP`, `ACFC`; consent `valid`.
/// - Rejected: `ACCP` (lack of funds, interface document), `RJCT` (lack of funds when
///   `fundsAvailable` is `false`), `CANC`; consent `rejected`, `revokedByPsu`, `expired`,
///   `terminatedByTpp`.
/// - Pending: `RCVD`, `PDNG`, `PATC`, `PART`; consent `received`, `partiallyAuthorised`;
///   any other value (unknown to BG 1.3.11 and the document).
pub fn verdict(status: &str, funds_available: Option<bool>) -> Verdict {
    use TransactionStatus as T;
    if let Some(t) = TransactionStatus::parse(status) {
        return match t {
            T::ACCC | T::ACSC | T::ACSP | T::ACTC | T::ACWC | T::ACWP | T::ACFC => {
                Verdict::Approved
            }
            T::ACCP => Verdict::Rejected(RejectReason::LackOfFunds),
            T::RJCT if funds_available == Some(false) => {
                Verdict::Rejected(RejectReason::LackOfFunds)
            }
            T::RJCT => Verdict::Rejected(RejectReason::Rejected),
            T::CANC => Verdict::Rejected(RejectReason::Cancelled),
            T::RCVD | T::PDNG | T::PATC | T::PART => Verdict::Pending,
        };
    }
    match ConsentStatus::parse(status) {
        Some(ConsentStatus::Valid) => Verdict::Approved,
        Some(
            s @ (ConsentStatus::Rejected
            | ConsentStatus::RevokedByPsu
            | ConsentStatus::Expired
            | ConsentStatus::TerminatedByTpp),
        ) => Verdict::Rejected(RejectReason::Consent(s)),
        _ => Verdict::Pending,
    }
}

/// [`verdict`] of a status answer's JSON body: its `transactionStatus` (or
/// `consentStatus`) and `fundsAvailable`; `None` when it has neither status field.
pub fn verdict_of_body(body: &Value) -> Option<(String, Verdict)> {
    let status = body
        .get("transactionStatus")
        .or_else(|| body.get("consentStatus"))
        .and_then(Value::as_str)?;
    let funds = body.get("fundsAvailable").and_then(Value::as_bool);
    Some((status.to_string(), verdict(status, funds)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use strum::IntoEnumIterator;

    #[test]
    fn every_code_round_trips() {
        for t in TransactionStatus::iter() {
            assert_eq!(TransactionStatus::parse(t.as_str()), Some(t));
            assert_eq!(t.to_string(), t.as_str());
        }
        for c in ConsentStatus::iter() {
            assert_eq!(ConsentStatus::parse(c.as_str()), Some(c));
        }
        assert_eq!(ConsentStatus::RevokedByPsu.as_str(), "revokedByPsu");
        assert_eq!(ScaStatus::PsuIdentified.as_str(), "psuIdentified");
        assert_eq!(TransactionStatus::parse("accp"), None);
    }

    #[test]
    fn the_documents_codes() {
        assert_eq!(
            verdict("ACCP", Some(false)),
            Verdict::Rejected(RejectReason::LackOfFunds)
        );
        assert_eq!(verdict("ACCP", None).describe(), "rejected: lack of funds");
        assert_eq!(
            verdict("RJCT", Some(false)),
            Verdict::Rejected(RejectReason::LackOfFunds)
        );
        assert_eq!(verdict("PATC", None), Verdict::Pending);
        assert_eq!(verdict("PDNG", None), Verdict::Pending);
        assert_eq!(verdict("RCVD", None), Verdict::Pending);
        assert_eq!(verdict("ACTC", None), Verdict::Approved);
        assert_eq!(verdict("ACSC", Some(true)), Verdict::Approved);
        assert_eq!(
            verdict("CANC", None),
            Verdict::Rejected(RejectReason::Cancelled)
        );
        assert_eq!(verdict("valid", None), Verdict::Approved);
        assert_eq!(verdict("received", None), Verdict::Pending);
        assert_eq!(
            verdict("revokedByPsu", None).describe(),
            "rejected: revoked by the PSU"
        );
        assert_eq!(verdict("XXXX", None), Verdict::Pending);
    }
}
