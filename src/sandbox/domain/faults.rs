//! The fault rules a tester sets so that the sandbox misbehaves on purpose (the rules and
//! their actions are described in [`crate::sandbox::http::faults`], which serves
//! `/v1/sandbox/faults` and answers request faults): their definitions ([`parse`]), path
//! patterns ([`matches`]), the mirror of the request rules ([`Faults`]), and the outcomes a
//! rule forces on payment execution ([`payment_outcome`], used by settlement) and on an SCA
//! approval ([`sca_outcome`]). Rules live in SQLite ([`crate::sandbox::store::faults`]);
//! every answer is taken in a database transaction.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};

use crate::sandbox::store::sql::Conn;
use serde::Serialize;
use serde_json::Value;

use crate::sandbox::store::db::Db;
use crate::sandbox::store::error::StoreError;
use crate::sandbox::store::faults::{self as rows, FaultRow};
use crate::sandbox::store::payments::{self as payments, PaymentRow, status};
use crate::xs2a::error::{MAX_TEXT_CHARS, MessageCode};
use crate::xs2a::fields::{FieldError, Fields, json_type};

/// Longest delay of one answer, milliseconds (below the server's idle timeout).
pub const MAX_DELAY_MS: u64 = 10_000;

/// Most answers of one rule.
pub const MAX_TIMES: u64 = 1_000_000;

/// Most `*` wildcards in one path pattern.
pub const MAX_STARS: usize = 4;

/// Methods a rule may name.
pub const METHODS: [&str; 5] = ["GET", "POST", "PUT", "DELETE", "PATCH"];

/// The fields of a definition.
pub const FIELDS: [&str; 9] = [
    "action", "method", "path", "psuId", "times", "status", "code", "text", "delayMs",
];

/// What a rule does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Action {
    /// Answer with an error.
    Error,
    /// Answer late.
    Delay,
    /// Close the connection without an answer.
    Drop,
    /// The payment executed becomes `RJCT`.
    RejectPayment,
    /// The payment executed becomes `ACCP` with `fundsAvailable: false`.
    InsufficientFunds,
    /// The payment is put on hold (`PDNG`).
    HoldPayment,
    /// The SCA approval ends as cancelled.
    ScaCancel,
    /// The SCA approval ends as failed.
    ScaFail,
}

/// Every action with its wire name.
pub const ACTIONS: [(&str, Action); 8] = [
    ("error", Action::Error),
    ("delay", Action::Delay),
    ("drop", Action::Drop),
    ("rejectPayment", Action::RejectPayment),
    ("insufficientFunds", Action::InsufficientFunds),
    ("holdPayment", Action::HoldPayment),
    ("scaCancel", Action::ScaCancel),
    ("scaFail", Action::ScaFail),
];

impl Action {
    /// The wire name, e.g. `rejectPayment`.
    pub fn name(self) -> &'static str {
        ACTIONS
            .iter()
            .find(|(_, a)| *a == self)
            .map_or("error", |(n, _)| n)
    }

    /// Whether the action answers requests (the others change outcomes).
    pub fn is_request(self) -> bool {
        matches!(self, Action::Error | Action::Delay | Action::Drop)
    }

    fn is_payment(self) -> bool {
        matches!(
            self,
            Action::RejectPayment | Action::InsufficientFunds | Action::HoldPayment
        )
    }

    fn is_sca(self) -> bool {
        matches!(self, Action::ScaCancel | Action::ScaFail)
    }
}

/// A rule as defined (normalised: method upper-case, defaults not filled in).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Definition {
    /// `action`.
    pub action: Action,
    /// `method` (upper case); any when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// `path`: the pattern of the paths it applies to ([`matches`]).
    pub path: String,
    /// `psuId`: only this PSU-ID.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub psu_id: Option<String>,
    /// `times`: how many answers; until cleared when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub times: Option<u64>,
    /// `status`: the HTTP status (`error`, `scaFail`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// `code`: the Berlin Group message code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// `text`: the `tppMessages` text or status reason.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// `delayMs`: the wait, milliseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delay_ms: Option<u64>,
}

/// A stored rule: its id, its definition and the answers left (`None`: until cleared).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Fault {
    /// The rule's id (UUID).
    pub id: String,
    /// Its definition (inline in the JSON).
    #[serde(flatten)]
    pub definition: Definition,
    /// Answers left; `None`: until cleared.
    pub remaining: Option<u64>,
    /// The TPP whose world the rule is in (not shown: a TPP sees only its own rules).
    #[serde(skip)]
    pub tpp: String,
}

/// An integer field within `min..=max`.
fn int_field(f: &Fields<'_>, key: &str, min: u64, max: u64) -> Result<Option<u64>, FieldError> {
    let Some(v) = f.get(key) else {
        return Ok(None);
    };
    match v.as_u64() {
        Some(n) if (min..=max).contains(&n) => Ok(Some(n)),
        Some(_) => Err(f.error(key, format!("{} must be from {min} to {max}", f.at(key)))),
        None => Err(f.error(
            key,
            format!(
                "{} must be an integer from {min} to {max}, not {}",
                f.at(key),
                json_type(v)
            ),
        )),
    }
}

/// The Berlin Group code named `code`, if this project knows it.
pub fn message_code(code: &str) -> Option<MessageCode> {
    serde_json::from_value(Value::String(code.to_string())).ok()
}

/// Reads a definition (see the module documentation).
///
/// Errors: the first field that is wrong, named (path and sentence).
pub fn parse(v: &Value) -> Result<Definition, FieldError> {
    let f = Fields::of(v, "", &FIELDS)?;
    let names: Vec<&str> = ACTIONS.iter().map(|(n, _)| *n).collect();
    let action_name = f.req_str("action", 40, &format!("one of {}", names.join(", ")))?;
    let action = ACTIONS
        .iter()
        .find(|(n, _)| *n == action_name)
        .map(|(_, a)| *a)
        .ok_or_else(|| {
            f.error(
                "action",
                format!("action {action_name:?} is not one of {}", names.join(", ")),
            )
        })?;
    let method = f.opt_str("method", 10)?.map(|m| m.to_ascii_uppercase());
    if let Some(m) = &method
        && !METHODS.contains(&m.as_str())
    {
        return Err(f.error(
            "method",
            format!("method {m:?} is not one of {}", METHODS.join(", ")),
        ));
    }
    let path = match f.opt_str("path", 500)? {
        Some(p) if p.matches('*').count() > MAX_STARS => {
            return Err(f.error(
                "path",
                format!("path {p:?} has more than {MAX_STARS} * wildcards"),
            ));
        }
        Some(p) if p == "*" || p.starts_with('/') => p,
        Some(p) => {
            return Err(f.error(
                "path",
                format!("path {p:?} must start with / (or be * for any path)"),
            ));
        }
        None if action.is_request() => {
            return Err(f.missing(
                "path",
                "the pattern of the request paths to answer, e.g. /v1/accounts*",
            ));
        }
        None => "*".to_string(),
    };
    let d = Definition {
        action,
        method,
        path,
        psu_id: f.opt_str("psuId", 100)?,
        times: int_field(&f, "times", 1, MAX_TIMES)?,
        status: int_field(&f, "status", 400, 599)?.and_then(|s| u16::try_from(s).ok()),
        code: f.opt_str("code", 60)?,
        text: f.opt_str("text", MAX_TEXT_CHARS)?,
        delay_ms: int_field(&f, "delayMs", 1, MAX_DELAY_MS)?,
    };
    if let Some(c) = &d.code
        && message_code(c).is_none()
    {
        return Err(f.error(
            "code",
            format!("code {c:?} is not a Berlin Group message code this sandbox knows (e.g. SERVICE_BLOCKED, FORMAT_ERROR, PSU_CREDENTIALS_INVALID)"),
        ));
    }
    let not_for = |key: &str| {
        f.error(
            key,
            format!("{key} does not apply to action {}", action.name()),
        )
    };
    let given = |key: &str| f.has(key);
    match action {
        Action::Error => {
            if d.status.is_none() {
                return Err(f.missing("status", "the HTTP status to answer, 400 to 599"));
            }
            if d.code.is_none() {
                return Err(f.missing("code", "the Berlin Group code of the answer"));
            }
        }
        Action::Delay => {
            if d.delay_ms.is_none() {
                return Err(f.missing("delayMs", "the wait in milliseconds"));
            }
            if let Some(k) = ["status", "code", "text"].into_iter().find(|k| given(k)) {
                return Err(not_for(k));
            }
        }
        Action::Drop => {
            if let Some(k) = ["status", "code", "text", "delayMs"]
                .into_iter()
                .find(|k| given(k))
            {
                return Err(not_for(k));
            }
        }
        Action::ScaFail => {
            if let Some(k) = ["method", "delayMs"].into_iter().find(|k| given(k)) {
                return Err(not_for(k));
            }
        }
        _ => {
            if let Some(k) = ["method", "status", "code", "delayMs"]
                .into_iter()
                .find(|k| given(k))
            {
                return Err(not_for(k));
            }
        }
    }
    Ok(d)
}

/// Whether `path` matches `pattern`: `*` matches any characters (`/` too), `{name}` one
/// non-empty path segment, anything else itself.
pub fn matches(pattern: &str, path: &str) -> bool {
    glob(pattern.as_bytes(), path.as_bytes())
}

fn glob(p: &[u8], s: &[u8]) -> bool {
    match p.first() {
        None => s.is_empty(),
        Some(b'*') => (0..=s.len()).any(|i| glob(&p[1..], &s[i..])),
        Some(b'{') => match p.iter().position(|b| *b == b'}') {
            Some(end) => {
                let seg = s.iter().position(|b| *b == b'/').unwrap_or(s.len());
                seg > 0 && glob(&p[end + 1..], &s[seg..])
            }
            None => s.first() == Some(&b'{') && glob(&p[1..], &s[1..]),
        },
        Some(c) => s.first() == Some(c) && glob(&p[1..], &s[1..]),
    }
}

impl Fault {
    fn of(row: FaultRow) -> Option<Fault> {
        let v: Value = serde_json::from_str(&row.definition).ok()?;
        match parse(&v) {
            Ok(definition) => Some(Fault {
                id: row.id,
                definition,
                remaining: row.remaining.and_then(|n| u64::try_from(n).ok()),
                tpp: row.tpp,
            }),
            Err(e) => {
                tracing::warn!(id = %row.id, error = %e, "a stored fault rule no longer reads; ignored");
                None
            }
        }
    }

    fn applies(&self, world: &str, method: Option<&str>, path: &str, psu_id: Option<&str>) -> bool {
        let d = &self.definition;
        self.tpp == world
            && d.method
                .as_deref()
                .is_none_or(|m| method.is_none_or(|x| x.eq_ignore_ascii_case(m)))
            && matches(&d.path, path)
            && d.psu_id.as_deref().is_none_or(|p| psu_id == Some(p))
    }

    /// The `tppMessages` text (or status reason) the rule answers with: its `text`, else a
    /// sentence naming the rule.
    pub fn text(&self) -> String {
        self.definition
            .text
            .clone()
            .unwrap_or_else(|| format!("answered by sandbox fault {}", self.id))
    }
}

/// The rules of the sandbox that answer requests, mirrored from the database (which decides:
/// every answer is taken there, [`rows::claim`]); one flag read costs a request when there
/// are none.
///
/// On PostgreSQL (issue 21: many instances on one database) there is no mirror: another
/// instance may add or remove a rule at any time, so every request reads the rules from the
/// database ([`Faults::take_request`]; one indexed query of a small table, one round trip)
/// unless the clock sync's statement at the request's start found no rule stored at all
/// ([`Faults::saw`]), and a rule added through one instance answers the next request of any
/// instance.
#[derive(Debug, Default)]
pub struct Faults {
    request_rules: RwLock<Arc<Vec<Fault>>>,
    any_request_rule: AtomicBool,
    /// The rules are read from the database on every request (PostgreSQL).
    shared: bool,
    /// PostgreSQL: the newest data version a request's clock sync read together with
    /// whether any rule was stored then ([`Faults::saw`]); `None` when unknown.
    seen: std::sync::Mutex<Option<(i64, bool)>>,
}

/// Every stored rule, oldest first.
pub fn all(c: &Conn<'_>) -> crate::sandbox::store::sql::Result<Vec<Fault>> {
    Ok(rows::all(c)?.into_iter().filter_map(Fault::of).collect())
}

/// The request rules of `world` (PostgreSQL: read on every request), oldest first.
fn request_rules_of(c: &Conn<'_>, world: &str) -> crate::sandbox::store::sql::Result<Vec<Fault>> {
    Ok(rows::of_tpp(c, world)?
        .into_iter()
        .filter_map(Fault::of)
        .filter(|f| f.definition.action.is_request())
        .collect())
}

impl Faults {
    /// The mirror of the rules in `db`.
    ///
    /// Errors: the database fails.
    pub fn load(db: &Db) -> crate::sandbox::store::sql::Result<Self> {
        let f = Faults {
            shared: db.backend() == crate::sandbox::store::sql::Backend::Postgres,
            ..Faults::default()
        };
        f.set(db.read_raw(all)?);
        Ok(f)
    }

    fn set(&self, rules: Vec<Fault>) {
        let requests: Vec<Fault> = rules
            .into_iter()
            .filter(|f| f.definition.action.is_request())
            .collect();
        self.any_request_rule
            .store(!requests.is_empty(), Ordering::Release);
        *self
            .request_rules
            .write()
            .unwrap_or_else(|p| p.into_inner()) = Arc::new(requests);
    }

    /// Stores `fault` (created at `at`, Unix seconds) and mirrors it.
    ///
    /// Errors: storage.
    pub fn add(&self, db: &Db, fault: &Fault, at: i64) -> Result<(), StoreError> {
        let row = FaultRow {
            id: fault.id.clone(),
            definition: serde_json::to_string(&fault.definition).unwrap_or_default(),
            remaining: fault.remaining.and_then(|n| i64::try_from(n).ok()),
            tpp: fault.tpp.clone(),
        };
        db.write_raw(|tx| rows::insert(tx, &row, at))?;
        self.reload(db);
        Ok(())
    }

    /// Removes every rule of `tpp`; how many there were.
    ///
    /// Errors: storage.
    pub fn clear_of(&self, db: &Db, tpp: &str) -> Result<usize, StoreError> {
        let n = db.write_raw(|tx| rows::clear(tx, tpp))?;
        self.reload(db);
        Ok(n)
    }

    /// Removes rule `id` of `tpp`; whether there was one.
    ///
    /// Errors: storage.
    pub fn remove(&self, db: &Db, id: &str, tpp: &str) -> Result<bool, StoreError> {
        let found = db.write_raw(|tx| rows::delete_of(tx, id, tpp))?;
        self.reload(db);
        Ok(found)
    }

    /// Reads the rules again (after a change, or `POST /v1/sandbox/initialize`).
    pub fn reload(&self, db: &Db) {
        match db.read_raw(all) {
            Ok(rules) => self.set(rules),
            Err(e) => tracing::error!(error = %e, "reading the fault rules failed"),
        }
    }

    /// Whether any rule answers requests (one flag read: the read path's only cost when
    /// there are none). On PostgreSQL: unless the newest look of [`Faults::saw`] found no
    /// rule stored at all, yes (the rules are then read by [`Faults::take_request`]).
    pub fn any_request_rule(&self) -> bool {
        if self.shared {
            return !matches!(
                *self.seen.lock().unwrap_or_else(|p| p.into_inner()),
                Some((_, false))
            );
        }
        self.any_request_rule.load(Ordering::Acquire)
    }

    /// PostgreSQL: what a request's clock sync read at its start
    /// ([`crate::sandbox::store::tenancy::clock_offsets_since`]): the data version and whether
    /// any rule was stored then, in one snapshot; `None` when the read failed (then the rules
    /// are read on each request until a newer look succeeds). Kept only when its version is at
    /// least the newest kept: every write (a rule's creation too) moves the version, so a
    /// request that starts after a rule was created finds a look at least as new as that
    /// creation, never an older one kept by a slower concurrent request. Exact: a rule answers
    /// the next request of any instance (issue 21).
    pub fn saw(&self, look: Option<(Option<i64>, bool)>) {
        let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        match look {
            Some((Some(version), any)) => {
                if seen.is_none_or(|(v, _)| version >= v) {
                    *seen = Some((version, any));
                }
            }
            // Unknown: read the rules, keeping the version so that no older look wins.
            _ => {
                if let Some((_, any)) = seen.as_mut() {
                    *any = true;
                }
            }
        }
    }

    /// Takes one answer of the first request rule of `world` matching the request, if any.
    pub fn take_request(
        &self,
        db: &Db,
        world: &str,
        method: &str,
        path: &str,
        psu: Option<&str>,
    ) -> Option<Fault> {
        let rules = if self.shared {
            // One `SELECT` on its own sees one snapshot: no read transaction around it, so
            // one statement and one round trip per request instead of `BEGIN`, the
            // `SELECT` and `COMMIT` in two (issue 23, writes on PostgreSQL).
            match db.read_single(|c| request_rules_of(c, world)) {
                Ok(r) => Arc::new(r),
                Err(e) => {
                    tracing::error!(error = %e, "reading the fault rules failed");
                    return None;
                }
            }
        } else {
            self.request_rules
                .read()
                .unwrap_or_else(|p| p.into_inner())
                .clone()
        };
        for f in rules
            .iter()
            .filter(|f| f.applies(world, Some(method), path, psu))
        {
            if f.remaining.is_none() {
                return Some(f.clone());
            }
            match db.write(|tx| rows::claim(tx, &f.id)) {
                Ok(true) => {
                    self.reload(db);
                    return Some(f.clone());
                }
                Ok(false) => self.reload(db),
                Err(_) => return None,
            }
        }
        None
    }
}

/// Takes one answer of the first rule with one of `actions` matching `path` and `psu`,
/// inside the caller's transaction.
fn take_outcome(
    c: &Conn<'_>,
    which: fn(Action) -> bool,
    world: &str,
    path: &str,
    psu: Option<&str>,
) -> crate::sandbox::store::sql::Result<Option<Fault>> {
    for f in all(c)? {
        if which(f.definition.action) && f.applies(world, None, path, psu) && rows::claim(c, &f.id)?
        {
            return Ok(Some(f));
        }
    }
    Ok(None)
}

/// A payment outcome a rule forces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaymentOutcome {
    /// The rule's id.
    pub fault: String,
    /// What the rule does to the payment.
    pub action: Action,
    /// The status reason.
    pub text: String,
}

/// The outcome rule for executing payment `p` (inside the caller's transaction, which takes
/// the answer), if any: matched on `/v1/{service}/{product}` and the PSU-ID that approved.
///
/// Errors: SQLite errors.
pub fn payment_outcome(
    c: &Conn<'_>,
    p: &PaymentRow,
) -> crate::sandbox::store::sql::Result<Option<PaymentOutcome>> {
    let path = format!("/v1/{}/{}", p.service, p.product);
    Ok(
        take_outcome(c, Action::is_payment, &p.tpp, &path, p.psu_id.as_deref())?.map(|f| {
            PaymentOutcome {
                text: f.text(),
                fault: f.id,
                action: f.definition.action,
            }
        }),
    )
}

impl PaymentOutcome {
    /// Applies the outcome to payment `id` at `at` instead of executing it; returns the new
    /// status (`RJCT`, `ACCP` with `fundsAvailable: false`, or `PDNG` remembering `ACTC`).
    ///
    /// Errors: SQLite errors.
    pub fn apply(
        &self,
        c: &Conn<'_>,
        id: &str,
        at: i64,
    ) -> crate::sandbox::store::sql::Result<&'static str> {
        let reason = format!("{} (sandbox fault {})", self.text, self.fault);
        match self.action {
            Action::HoldPayment => {
                payments::set_hold(c, id, status::PDNG, Some(status::ACTC), &reason)?;
                Ok(status::PDNG)
            }
            Action::InsufficientFunds => {
                payments::executed(c, id, status::ACCP, false, at, &reason)?;
                Ok(status::ACCP)
            }
            _ => {
                payments::executed(c, id, status::RJCT, true, at, &reason)?;
                Ok(status::RJCT)
            }
        }
    }
}

/// An SCA outcome a rule forces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScaOutcome {
    /// The PSU cancels.
    Cancel {
        /// The rule's id.
        fault: String,
    },
    /// The SCA fails with `status`, `code` and `message`.
    Fail {
        /// The rule's id.
        fault: String,
        /// The redirect's `status`.
        status: u16,
        /// The redirect's `code`.
        code: String,
        /// The redirect's `message`.
        message: String,
    },
}

impl ScaOutcome {
    /// The rule's id.
    pub fn fault(&self) -> &str {
        match self {
            ScaOutcome::Cancel { fault } | ScaOutcome::Fail { fault, .. } => fault,
        }
    }
}

/// The outcome rule for the approval of the SCA at `page` (`/sca/{id}`,
/// `/payment-sca/{id}`) by `psu_id`, taking one answer; `None` when none matches or the
/// database fails (the SCA then goes on as usual).
pub fn sca_outcome(db: &Db, page: &str, psu_id: Option<&str>) -> Option<ScaOutcome> {
    let world = crate::sandbox::clock::current_world()?;
    let f = db
        .write(|tx| take_outcome(tx, Action::is_sca, &world, page, psu_id))
        .ok()??;
    Some(match f.definition.action {
        Action::ScaCancel => ScaOutcome::Cancel { fault: f.id },
        _ => ScaOutcome::Fail {
            message: f
                .definition
                .text
                .clone()
                .unwrap_or_else(|| "SCA failed (sandbox fault)".to_string()),
            status: f.definition.status.unwrap_or(401),
            code: f
                .definition
                .code
                .clone()
                .unwrap_or_else(|| "PSU_CREDENTIALS_INVALID".to_string()),
            fault: f.id,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn path_patterns() {
        assert!(matches("/v1/accounts*", "/v1/accounts"));
        assert!(matches("/v1/accounts*", "/v1/accounts/1/balances"));
        assert!(!matches("/v1/accounts*", "/v1/card-accounts"));
        assert!(matches(
            "/v1/accounts/{id}/balances",
            "/v1/accounts/a1/balances"
        ));
        assert!(!matches(
            "/v1/accounts/{id}/balances",
            "/v1/accounts//balances"
        ));
        assert!(!matches("/v1/accounts/{id}", "/v1/accounts/a/b"));
        assert!(matches("*", "/anything"));
        assert!(matches("/v1/*/sepa*", "/v1/payments/sepa-credit-transfers"));
        assert!(!matches("/v1/accounts", "/v1/accounts/1"));
    }

    #[test]
    fn definitions_are_checked_field_by_field() {
        let err = |v: Value| parse(&v).unwrap_err().path;
        assert_eq!(err(json!({"path": "/x"})), "action");
        assert_eq!(err(json!({"action": "explode", "path": "/x"})), "action");
        assert_eq!(
            err(json!({"action": "error", "path": "/x", "code": "SERVICE_BLOCKED"})),
            "status"
        );
        assert_eq!(
            err(json!({"action": "error", "path": "/x", "status": 200, "code": "SERVICE_BLOCKED"})),
            "status"
        );
        assert_eq!(
            err(json!({"action": "error", "path": "/x", "status": 503, "code": "NOPE"})),
            "code"
        );
        assert_eq!(err(json!({"action": "delay", "path": "/x"})), "delayMs");
        assert_eq!(
            err(json!({"action": "delay", "path": "/x", "delayMs": 20000})),
            "delayMs"
        );
        assert_eq!(err(json!({"action": "drop"})), "path");
        assert_eq!(err(json!({"action": "drop", "path": "x"})), "path");
        assert_eq!(
            err(json!({"action": "drop", "path": "/x", "status": 503})),
            "status"
        );
        assert_eq!(
            err(json!({"action": "drop", "path": "/x", "times": 0})),
            "times"
        );
        assert_eq!(
            err(json!({"action": "drop", "path": "/x", "method": "BREW"})),
            "method"
        );
        assert_eq!(
            err(json!({"action": "drop", "path": "/x", "bogus": 1})),
            "bogus"
        );
        let d = parse(&json!({"action": "rejectPayment", "times": 1})).unwrap();
        assert_eq!(d.path, "*");
        let d = parse(
            &json!({"action": "error", "method": "get", "path": "/v1/accounts*",
            "status": 503, "code": "SERVICE_BLOCKED", "text": "down"}),
        )
        .unwrap();
        assert_eq!(d.method.as_deref(), Some("GET"));
        let back = parse(&serde_json::to_value(&d).unwrap()).unwrap();
        assert_eq!(back, d);
    }
}
