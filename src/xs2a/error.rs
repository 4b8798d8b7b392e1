//! Berlin Group error bodies: `tppMessages` (schema `tppMessage400AIS`, `Error401NGAIS`, ...
//! in `berlin-group-psd2-api-1.3.11.yaml`).
//!
//! The interface document does not show its error body; the Berlin Group file decides:
//! `{"tppMessages":[{"category":"ERROR","code":"...","text":"..."}],"_links":{...}}`.

use serde::{Deserialize, Serialize};

use super::links::Links;

/// `tppMessageCategory`: `ERROR` or `WARNING`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum TppMessageCategory {
    /// `ERROR`: the request failed.
    Error,
    /// `WARNING`: the request was served, with a remark.
    Warning,
}

/// Message codes used by this project, each a member of a Berlin Group `MessageCode*` enum.
///
/// The status each is sent with is given by [`MessageCode::status`]; every pairing is one
/// that the spec's per-status enums allow, except [`SIGNATURE_FAILURE_CODES`]: the interface
/// document answers signature and certificate failures with 400 (Authentication 3; Errors
/// table), the Berlin Group file lists those codes under 401 only, and the document wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum MessageCode {
    // 400, MessageCode400_*
    /// `FORMAT_ERROR`, sent with 400.
    FormatError,
    /// `PARAMETER_NOT_CONSISTENT`, sent with 400.
    ParameterNotConsistent,
    /// `PARAMETER_NOT_SUPPORTED`, sent with 400.
    ParameterNotSupported,
    /// `SERVICE_INVALID`, sent with 400.
    ServiceInvalid,
    /// `RESOURCE_UNKNOWN`, sent with 400.
    ResourceUnknown,
    /// `RESOURCE_EXPIRED`, sent with 400.
    ResourceExpired,
    /// `TIMESTAMP_INVALID`, sent with 400.
    TimestampInvalid,
    /// `PERIOD_INVALID`, sent with 400.
    PeriodInvalid,
    /// `CONSENT_UNKNOWN`, sent with 400.
    ConsentUnknown,
    /// `PAYMENT_FAILED`, sent with 400.
    PaymentFailed,
    /// `EXECUTION_DATE_INVALID`, sent with 400.
    ExecutionDateInvalid,
    /// `REFERENCE_MIX_INVALID`, sent with 400.
    ReferenceMixInvalid,
    // MessageCode401_* codes, sent with 400 (see [`SIGNATURE_FAILURE_CODES`])
    /// `CERTIFICATE_INVALID`: a Berlin Group 401 code the interface document sends with 400.
    CertificateInvalid,
    /// `CERTIFICATE_EXPIRED`: a Berlin Group 401 code the interface document sends with 400.
    CertificateExpired,
    /// `CERTIFICATE_MISSING`: a Berlin Group 401 code the interface document sends with 400.
    CertificateMissing,
    /// `SIGNATURE_INVALID`: a Berlin Group 401 code the interface document sends with 400.
    SignatureInvalid,
    /// `SIGNATURE_MISSING`: a Berlin Group 401 code the interface document sends with 400.
    SignatureMissing,
    // 401, MessageCode401_*
    /// `ROLE_INVALID`, sent with 401.
    RoleInvalid,
    /// `CORPORATE_ID_INVALID`, sent with 401.
    CorporateIdInvalid,
    /// `PSU_CREDENTIALS_INVALID`, sent with 401.
    PsuCredentialsInvalid,
    /// `CONSENT_INVALID`, sent with 401.
    ConsentInvalid,
    /// `CONSENT_EXPIRED`, sent with 401.
    ConsentExpired,
    // 403
    /// `SERVICE_BLOCKED`, sent with 403.
    ServiceBlocked,
    /// `PRODUCT_INVALID`, sent with 403.
    ProductInvalid,
    // 404
    /// `PRODUCT_UNKNOWN`, sent with 404.
    ProductUnknown,
    // 405
    /// `SERVICE_INVALID`, sent with 405.
    ServiceInvalid405,
    // 409
    /// `STATUS_INVALID`, sent with 409.
    StatusInvalid,
    /// 409, `MessageCode409_SBS`: a payment in a signing basket request is in a status that
    /// cannot be (re-)authorised, or is already in another basket.
    ReferenceStatusInvalid,
    // 429
    /// `ACCESS_EXCEEDED`, sent with 429.
    AccessExceeded,
}

impl MessageCode {
    /// The wire name, e.g. `SIGNATURE_INVALID`.
    pub fn as_str(self) -> &'static str {
        use MessageCode::*;
        match self {
            FormatError => "FORMAT_ERROR",
            ParameterNotConsistent => "PARAMETER_NOT_CONSISTENT",
            ParameterNotSupported => "PARAMETER_NOT_SUPPORTED",
            ServiceInvalid | ServiceInvalid405 => "SERVICE_INVALID",
            ResourceUnknown => "RESOURCE_UNKNOWN",
            ResourceExpired => "RESOURCE_EXPIRED",
            TimestampInvalid => "TIMESTAMP_INVALID",
            PeriodInvalid => "PERIOD_INVALID",
            ConsentUnknown => "CONSENT_UNKNOWN",
            PaymentFailed => "PAYMENT_FAILED",
            ExecutionDateInvalid => "EXECUTION_DATE_INVALID",
            ReferenceMixInvalid => "REFERENCE_MIX_INVALID",
            CertificateInvalid => "CERTIFICATE_INVALID",
            RoleInvalid => "ROLE_INVALID",
            CertificateExpired => "CERTIFICATE_EXPIRED",
            CertificateMissing => "CERTIFICATE_MISSING",
            SignatureInvalid => "SIGNATURE_INVALID",
            SignatureMissing => "SIGNATURE_MISSING",
            CorporateIdInvalid => "CORPORATE_ID_INVALID",
            PsuCredentialsInvalid => "PSU_CREDENTIALS_INVALID",
            ConsentInvalid => "CONSENT_INVALID",
            ConsentExpired => "CONSENT_EXPIRED",
            ServiceBlocked => "SERVICE_BLOCKED",
            ProductInvalid => "PRODUCT_INVALID",
            ProductUnknown => "PRODUCT_UNKNOWN",
            StatusInvalid => "STATUS_INVALID",
            ReferenceStatusInvalid => "REFERENCE_STATUS_INVALID",
            AccessExceeded => "ACCESS_EXCEEDED",
        }
    }

    /// The HTTP status this code is sent with: the one its Berlin Group
    /// `MessageCode<status>_*` enum gives, except for [`SIGNATURE_FAILURE_CODES`] (401 in the
    /// Berlin Group file), which the interface document answers with 400 (Authentication 3:
    /// "requests whose signature fails validation, are answered with 400"; Errors table:
    /// "Missing or invalid signature ... 400").
    pub fn status(self) -> u16 {
        use MessageCode::*;
        match self {
            FormatError
            | ParameterNotConsistent
            | ParameterNotSupported
            | ServiceInvalid
            | ResourceUnknown
            | ResourceExpired
            | TimestampInvalid
            | PeriodInvalid
            | ConsentUnknown
            | PaymentFailed
            | ExecutionDateInvalid
            | ReferenceMixInvalid => 400,
            CertificateInvalid | CertificateExpired | CertificateMissing | SignatureInvalid
            | SignatureMissing => 400,
            RoleInvalid
            | CorporateIdInvalid
            | PsuCredentialsInvalid
            | ConsentInvalid
            | ConsentExpired => 401,
            ServiceBlocked | ProductInvalid => 403,
            ProductUnknown => 404,
            ServiceInvalid405 => 405,
            StatusInvalid | ReferenceStatusInvalid => 409,
            AccessExceeded => 429,
        }
    }
}

/// The codes of the Berlin Group's `MessageCode401_*` enums that this project sends with
/// status 400: signature and certificate failures (interface document, Authentication 3 and
/// the Errors table: "Missing or invalid signature on a request that must be signed: 400";
/// where the document and the Berlin Group file disagree, the document wins). The codes are
/// kept because they say what failed; no 400 code of the Berlin Group file does.
pub const SIGNATURE_FAILURE_CODES: [MessageCode; 5] = [
    MessageCode::SignatureMissing,
    MessageCode::SignatureInvalid,
    MessageCode::CertificateMissing,
    MessageCode::CertificateInvalid,
    MessageCode::CertificateExpired,
];

/// One element of `tppMessages` (Berlin Group `tppMessage*`): `category`, `code`, optional
/// `path` and `text` (max 500 characters in the spec).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TppMessage {
    /// `ERROR` or `WARNING`.
    pub category: TppMessageCategory,
    /// The message code as sent (a [`MessageCode`] wire name, or another ASPSP's).
    pub code: String,
    /// The request field the message is about, e.g. `payments[0].creditorAccount.iban`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Human-readable explanation (≤ 500 characters).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

/// A Berlin Group error body (`Error400NGAIS`, `Error401NGAIS`, ...): `tppMessages` and
/// optional `_links` (e.g. `scaRedirect` on a 401 for an account request without consent).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorBody {
    /// The messages, at least one.
    #[serde(rename = "tppMessages")]
    pub tpp_messages: Vec<TppMessage>,
    /// `_links`, e.g. `scaRedirect` to start an SCA.
    #[serde(rename = "_links", skip_serializing_if = "Option::is_none")]
    pub links: Option<Links>,
}

/// Berlin Group `tppMessage` texts are limited to 500 characters.
pub(crate) const MAX_TEXT_CHARS: usize = 500;

impl ErrorBody {
    /// One `ERROR` message with `code` and `text` (cut to 500 characters).
    pub fn new(code: MessageCode, text: impl Into<String>) -> Self {
        let text: String = text.into();
        let text = if text.chars().count() > MAX_TEXT_CHARS {
            text.chars().take(MAX_TEXT_CHARS).collect()
        } else {
            text
        };
        ErrorBody {
            tpp_messages: vec![TppMessage {
                category: TppMessageCategory::Error,
                code: code.as_str().to_string(),
                path: None,
                text: Some(text),
            }],
            links: None,
        }
    }

    /// Adds `_links`.
    pub(crate) fn with_links(mut self, links: Links) -> Self {
        self.links = Some(links);
        self
    }

    /// The first message's code, if any.
    pub fn first_code(&self) -> Option<&str> {
        self.tpp_messages.first().map(|m| m.code.as_str())
    }
}
