//! Cross-cutting rules of the sandbox's `/v1` interface that do not belong to one resource:
//! the TPP's PSD2 roles, the characters the bank's downstream systems accept, the limits on
//! access without the PSU present, and the ISO 20022 / 70-character field rules of the
//! Versioning table.
//!
//! | Rule | Source |
//! |---|---|
//! | AIS needs `PSP_AI`, PIS `PSP_PI` in the certificate, else 401 `ROLE_INVALID` | Authentication 2; Berlin Group `MessageCode401_AIS` |
//! | A character outside Latin-1 and common punctuation → 400 `FORMAT_ERROR` naming the field | Errors: "ASPSP downstream system rejects a UTF-8 character (for example an emoji)" |
//! | Without `PSU-IP-Address` (PSU not present): balances 4, transactions 4 calls per 24 h per account → 429 `ACCESS_EXCEEDED` | Limits; Authentication 16; `MessageCode429_AIS` |
//! | Without `PSU-IP-Address`: transactions no older than 90 days | Limits |
//! | `name` at most 70 characters | Account data facts; Versioning `longer-names` |
//! | `cashAccountType` an ISO 20022 `ExternalCashAccountType1Code` | Account data facts; Versioning `cash-account-type-iso` |
//!
//! The unattended-access counter lives in the table `rules_unattended_access` ([`crate::sandbox::store::unattended`]).

use std::time::{Duration, SystemTime};

use chrono::NaiveDate;

use crate::cert::Psd2Role;
use crate::sandbox::domain::Ctx;
use crate::sandbox::errors::ApiError;
use crate::sandbox::model::TppId;
use crate::sandbox::store::unattended;
use crate::xs2a::error::MessageCode;
use crate::xs2a::fields::{Json, JsonObject};

// ---------------------------------------------------------------------------------------
// Roles

/// The PSD2 roles of the verified certificate (an extractor in
/// `crate::sandbox::http::auth`: the `Arc<Certificate>` the signature middleware stores in
/// the request extensions, or, when absent, the parsed `TPP-Signature-Certificate` header).
#[derive(Debug, Clone)]
pub struct TppRoles(pub Vec<Psd2Role>);

impl TppRoles {
    /// 401 `ROLE_INVALID` (Berlin Group `MessageCode401_AIS` / `_PIS`) unless `role` is
    /// present, naming the roles the certificate has; `service` is a phrase for the message
    /// (e.g. "account information").
    pub fn require(&self, role: Psd2Role, service: &str) -> Result<(), ApiError> {
        if self.0.contains(&role) {
            return Ok(());
        }
        let names: Vec<&str> = self.0.iter().map(|r| r.name()).collect();
        Err(ApiError::new(
            MessageCode::RoleInvalid,
            format!(
                "{service} needs the PSD2 role {} in the TPP certificate; it has {}",
                role.name(),
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                }
            ),
        ))
    }

    /// 401 `ROLE_INVALID` unless `PSP_AI` is present.
    pub fn require_ais(&self) -> Result<(), ApiError> {
        self.require(Psd2Role::PspAi, "account information")
    }

    /// Whether the certificate has `role`.
    pub fn has(&self, role: Psd2Role) -> bool {
        self.0.contains(&role)
    }
}

// ---------------------------------------------------------------------------------------
// Characters

pub use crate::xs2a::charset::{EXTRA_ALLOWED, is_allowed_char};

/// Checks that `value` of request field `field` has only characters the bank's downstream
/// systems take ([`is_allowed_char`]).
///
/// Errors: 400 `FORMAT_ERROR` with `path` = `field` and a text naming the field, the first
/// refused character (as `U+XXXX`) and its 1-based position (interface document, Errors:
/// "ASPSP downstream system rejects a UTF-8 character (for example an emoji): 400"; the
/// document shows no code, `FORMAT_ERROR` is the Berlin Group 400 code for a malformed
/// field).
pub fn check_characters(field: &str, value: &str) -> Result<(), ApiError> {
    let Some((pos, c)) = crate::xs2a::charset::first_refused(value) else {
        return Ok(());
    };
    let shown = if c.is_control() {
        String::new()
    } else {
        format!(" ({c})")
    };
    let mut e = ApiError::format(format!(
        "{field} contains the character U+{:04X}{shown} at position {}, which the bank's \
         systems do not accept: use letters, digits and punctuation of ISO 8859-1 (Latin-1)",
        u32::from(c),
        pos + 1
    ));
    if let Some(m) = e.body.tpp_messages.first_mut() {
        m.path = Some(field.to_string());
    }
    Err(e)
}

/// Whether [`check_characters`] accepts every character of `s`: printable ASCII (U+0020–
/// U+007E, all allowed) byte by byte first; any other byte (a multi-byte character or a
/// control character) takes the character check.
pub fn allowed_text(s: &str) -> bool {
    s.bytes().all(|b| (0x20..=0x7E).contains(&b))
        || crate::xs2a::charset::first_refused(s).is_none()
}

/// [`check_characters`] on every string (and object key) of a JSON request body; the field
/// is named by its path, e.g. `access.accounts[0].iban`.
///
/// Errors: 400 `FORMAT_ERROR` for the first refused character.
pub fn check_json_characters<V: Json>(value: &V) -> Result<(), ApiError> {
    // Every body that passes (nearly all) is checked without building a path; only a refused
    // character costs the walk below that names its field.
    fn all_allowed<V: Json>(v: &V) -> bool {
        let ok = allowed_text;
        if let Some(s) = v.as_str() {
            ok(s)
        } else if let Some(items) = v.as_array() {
            items.iter().all(all_allowed)
        } else if let Some(map) = v.as_object() {
            map.entries().all(|(k, x)| ok(k) && all_allowed(x))
        } else {
            true
        }
    }
    if all_allowed(value) {
        return Ok(());
    }
    fn walk<V: Json>(v: &V, path: &str) -> Result<(), ApiError> {
        if let Some(s) = v.as_str() {
            check_characters(if path.is_empty() { "body" } else { path }, s)
        } else if let Some(items) = v.as_array() {
            items
                .iter()
                .enumerate()
                .try_for_each(|(i, x)| walk(x, &format!("{path}[{i}]")))
        } else if let Some(map) = v.as_object() {
            map.entries().try_for_each(|(k, x)| {
                let p = if path.is_empty() {
                    k.to_string()
                } else {
                    format!("{path}.{k}")
                };
                check_characters(&format!("{p} (name)"), k)?;
                walk(x, &p)
            })
        } else {
            Ok(())
        }
    }
    walk(value, "")
}

// ---------------------------------------------------------------------------------------
// PSU present or not

/// Calls without the PSU present allowed per account, per kind, per [`UNATTENDED_WINDOW`]
/// (interface document, Limits: 4 per 24 hours for balances and for transactions).
pub const UNATTENDED_CALLS: i64 = 4;

/// The sliding window of [`UNATTENDED_CALLS`], on the sandbox clock.
pub const UNATTENDED_WINDOW: Duration = Duration::from_secs(24 * 3600);

/// How far back transactions reach without the PSU present, days (interface document,
/// Limits: "transactions no older than 90 days").
pub const UNATTENDED_HISTORY_DAYS: i64 = 90;

/// What an unattended call read; each kind has its own count of [`UNATTENDED_CALLS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccessKind {
    /// `GET /v1/accounts/{id}/balances`.
    Balances,
    /// `GET /v1/accounts/{id}/transactions`.
    Transactions,
    /// `GET /v1/card-accounts/{id}/balances`.
    CardBalances,
    /// `GET /v1/card-accounts/{id}/transactions`.
    CardTransactions,
}

impl AccessKind {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            AccessKind::Balances => "balances",
            AccessKind::Transactions => "transactions",
            AccessKind::CardBalances => "card-balances",
            AccessKind::CardTransactions => "card-transactions",
        }
    }

    fn what(self) -> &'static str {
        match self {
            AccessKind::Balances | AccessKind::CardBalances => "balance",
            AccessKind::Transactions | AccessKind::CardTransactions => "transaction",
        }
    }
}

/// Counts one call without the PSU present to `kind` of account `resource` by `tpp`, in one
/// transaction: calls older than [`UNATTENDED_WINDOW`] are forgotten, and the call is refused
/// when [`UNATTENDED_CALLS`] were already made in the window. Only calls that get data count:
/// call this after every other check passed.
///
/// The count is per (TPP, account, kind) — the PSD2 RTS (art. 36(5)) counts per TPP and
/// account, and the interface document's Limits table counts balances and transactions
/// separately.
///
/// Errors: 429 `ACCESS_EXCEEDED` (Berlin Group `MessageCode429_AIS`) saying when the next
/// call is possible; storage errors (503).
pub fn count_unattended(
    cx: &Ctx<'_>,
    tpp: &TppId,
    resource: &str,
    kind: AccessKind,
) -> Result<(), ApiError> {
    let now = cx.clock.now();
    let t = crate::cert::unix_seconds(now);
    let window = i64::try_from(UNATTENDED_WINDOW.as_secs()).unwrap_or(i64::MAX);
    let since = t.saturating_sub(window);
    cx.db.write(|tx| {
        let (count, oldest) =
            unattended::forget_and_count(tx, tpp, resource, kind.as_str(), since)?;
        if count >= UNATTENDED_CALLS {
            let next = oldest.unwrap_or(t).saturating_add(window).saturating_add(1);
            return Err(ApiError::new(
                MessageCode::AccessExceeded,
                format!(
                    "{UNATTENDED_CALLS} {} calls without PSU-IP-Address (PSU not present) in 24 \
                     hours for this account are used up; the next is possible at {}, or send \
                     PSU-IP-Address when the PSU is present",
                    kind.what(),
                    crate::signing::imf_fixdate(crate::cert::from_unix_seconds(next))
                ),
            ));
        }
        unattended::record(tx, tpp, resource, kind.as_str(), t)?;
        Ok(())
    })
}

/// The earliest booking date an unattended transactions call may see on `today`.
pub fn unattended_earliest(today: NaiveDate) -> NaiveDate {
    today
        .checked_sub_signed(chrono::Duration::days(UNATTENDED_HISTORY_DAYS))
        .unwrap_or(today)
}

/// The effective `dateFrom` of a transactions call without the PSU present: `requested` when
/// it is within [`UNATTENDED_HISTORY_DAYS`], the earliest allowed date when absent (the
/// default listing is clamped to 90 days).
///
/// Errors: 400 `PERIOD_INVALID` when `requested` is older than 90 days (an explicit request
/// for older data is refused rather than silently cut, so the TPP knows why it is missing).
pub fn unattended_date_from(
    today: NaiveDate,
    requested: Option<NaiveDate>,
) -> Result<NaiveDate, ApiError> {
    let earliest = unattended_earliest(today);
    match requested {
        None => Ok(earliest),
        Some(d) if d >= earliest => Ok(d),
        Some(d) => Err(ApiError::new(
            MessageCode::PeriodInvalid,
            format!(
                "dateFrom {d} is older than {UNATTENDED_HISTORY_DAYS} days: without \
                 PSU-IP-Address (PSU not present) transactions from {earliest} on can be read"
            ),
        )),
    }
}

// ---------------------------------------------------------------------------------------
// Field rules of the Versioning table

/// Longest `name` of accounts and card accounts (interface document, Account data facts;
/// Versioning `longer-names`, default since 2024-10-01; Berlin Group `accountDetails.name`
/// maxLength 70).
pub const MAX_NAME_CHARS: usize = 70;

/// `name` cut to [`MAX_NAME_CHARS`] characters (not bytes).
pub fn account_name(name: &str) -> String {
    name.chars().take(MAX_NAME_CHARS).collect()
}

/// ISO 20022 `ExternalCashAccountType1Code` values (interface document, Versioning
/// `cash-account-type-iso`, default since 2024-11-13).
pub const ISO_CASH_ACCOUNT_TYPES: [&str; 22] = [
    "CACC", "CARD", "CASH", "CHAR", "CISH", "COMM", "CPAC", "LLSV", "LOAN", "MGLD", "MOMA", "NFCA",
    "NREX", "ODFT", "ONDP", "OTHR", "SACC", "SLRY", "SVGS", "TAXE", "TRAN", "TRAS",
];

/// `code` when it is an ISO 20022 cash account type, else `OTHR` (a proprietary product code
/// such as the pre-2024 "Brukskonto" is never sent as `cashAccountType`).
pub fn iso_cash_account_type(code: &str) -> &str {
    if ISO_CASH_ACCOUNT_TYPES.contains(&code) {
        code
    } else {
        "OTHR"
    }
}

/// Seconds since the Unix epoch of `t` (the unit of every time column of the sandbox's own
/// tables).
pub fn secs(t: SystemTime) -> i64 {
    crate::cert::unix_seconds(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn characters() {
        for ok in ["Faktura 123", "Blåbærsyltetøy ÆØÅ", "Café – «sitat» €5", ""] {
            assert!(check_characters("f", ok).is_ok(), "{ok}");
        }
        for bad in ["pizza 🍕", "a\nb", "tab\t", "中文", "\u{7f}"] {
            let e = check_characters("remittanceInformationUnstructured", bad).unwrap_err();
            assert_eq!(e.status.as_u16(), 400);
            assert_eq!(e.body.first_code(), Some("FORMAT_ERROR"));
            assert_eq!(
                e.body.tpp_messages[0].path.as_deref(),
                Some("remittanceInformationUnstructured")
            );
        }
        let body = serde_json::json!({"a": [{"b": "ok"}, {"c": "x🙂"}]});
        let e = check_json_characters(&body).unwrap_err();
        assert_eq!(e.body.tpp_messages[0].path.as_deref(), Some("a[1].c"));
        // A refused object key (not only values) is found and named.
        let body = serde_json::json!({"a": {"k🙂": 1}, "b": "ok"});
        let e = check_json_characters(&body).unwrap_err();
        assert_eq!(e.body.tpp_messages[0].path.as_deref(), Some("a.k🙂 (name)"));
        assert!(check_json_characters(&serde_json::json!({"a": ["ø", {"b": 1}]})).is_ok());
    }

    /// The printable-ASCII shortcut of [`check_json_characters`] decides every ASCII byte
    /// (in a value and in a key) as the character rule does: control characters and DEL
    /// are refused, the rest accepted.
    #[test]
    fn json_characters_agree_with_the_character_rule_for_every_ascii_byte() {
        for b in 0u8..=0x7F {
            let c = char::from(b);
            let allowed = crate::xs2a::charset::is_allowed_char(c);
            let value = serde_json::json!({"k": format!("ab{c}cd")});
            assert_eq!(check_json_characters(&value).is_ok(), allowed, "{b:#04x}");
            let mut key = serde_json::Map::new();
            key.insert(format!("k{c}"), serde_json::Value::Null);
            let key = serde_json::Value::Object(key);
            assert_eq!(
                check_json_characters(&key).is_ok(),
                allowed,
                "{b:#04x} in a key"
            );
        }
    }

    #[test]
    fn unattended_window() {
        let today = NaiveDate::from_ymd_opt(2026, 6, 1).unwrap();
        let earliest = unattended_earliest(today);
        assert_eq!((today - earliest).num_days(), 90);
        assert_eq!(unattended_date_from(today, None).unwrap(), earliest);
        assert_eq!(unattended_date_from(today, Some(today)).unwrap(), today);
        let old = earliest.pred_opt().unwrap();
        let e = unattended_date_from(today, Some(old)).unwrap_err();
        assert_eq!(e.body.first_code(), Some("PERIOD_INVALID"));
        assert_eq!(iso_cash_account_type("CACC"), "CACC");
        assert_eq!(iso_cash_account_type("Brukskonto"), "OTHR");
        assert_eq!(account_name(&"x".repeat(80)).chars().count(), 70);
    }
}
