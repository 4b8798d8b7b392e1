//! The payment types of the domain: a validated payment initiation ([`Initiation`], what
//! [`crate::sandbox::http::payments::body::parse`] makes of a request body), the payment
//! products and services (defined with the protocol in [`crate::xs2a::payment`]), and what
//! settlement reads from a stored body ([`credits`], [`account_by_bban`]).

use chrono::NaiveDate;
use serde_json::{Map, Value};

use crate::sandbox::store::sql::Conn;
use uuid::Uuid;

use crate::sandbox::domain::Ctx;
use crate::sandbox::errors::ApiError;
use crate::sandbox::model::{Account, Tpp};
use crate::sandbox::store::payments::{
    self as rows, AuthorisationRow, PaymentRow, sca_status, status,
};
use crate::xs2a::error::MessageCode;
use crate::xs2a::model::parse_minor;

pub use crate::xs2a::payment::{
    DOMESTIC_NORWAY, INSTANT, INSTANT_MAX_MINOR, PRODUCTS, PaymentType, Product,
    STRUCTURED_ADDRESS_ENFORCEMENT, Service,
};

/// The normalised body of a payment initiation as stored and echoed: its top-level fields in
/// the order set, each key once, serialised as a JSON object (the same text as a
/// `serde_json::Map` with the same inserts). Issue 23: the `Map` (an `IndexMap`) hashed every
/// key (SipHash) to keep that order; the fields of a body are few and their names constants.
/// A field's value is JSON ([`EchoValue::Json`]) or an object of the same kind
/// ([`EchoValue::Object`]: an amount, an account reference), serialised alike.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Echo(Vec<(&'static str, EchoValue)>);

/// The value of an [`Echo`] field.
#[derive(Debug, Clone, PartialEq)]
pub enum EchoValue {
    /// Any JSON.
    Json(Value),
    /// A JSON object of constant keys, serialised as the `Map` with the same inserts.
    Object(Echo),
}

impl From<Value> for EchoValue {
    fn from(v: Value) -> Self {
        EchoValue::Json(v)
    }
}

impl From<Echo> for EchoValue {
    fn from(e: Echo) -> Self {
        EchoValue::Object(e)
    }
}

impl From<EchoValue> for Value {
    fn from(v: EchoValue) -> Self {
        match v {
            EchoValue::Json(v) => v,
            EchoValue::Object(e) => Value::Object(e.into_map()),
        }
    }
}

impl serde::Serialize for EchoValue {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            EchoValue::Json(v) => v.serialize(s),
            EchoValue::Object(e) => e.serialize(s),
        }
    }
}

impl Echo {
    /// An empty echo with room for `n` fields.
    pub fn with_capacity(n: usize) -> Self {
        Echo(Vec::with_capacity(n))
    }

    /// Sets field `key` to `value`: in its place when already set (as `Map::insert`), else
    /// last.
    pub fn insert(&mut self, key: &'static str, value: impl Into<EchoValue>) {
        let value = value.into();
        match self.0.iter_mut().find(|(k, _)| *k == key) {
            Some(field) => field.1 = value,
            None => self.0.push((key, value)),
        }
    }

    /// Sets field `key` to the string `value` (as [`Echo::insert`] of `Value::String`).
    pub fn insert_str(&mut self, key: &'static str, value: String) {
        self.insert(key, Value::String(value));
    }

    /// Moves the last field to position `index` (or to the end when `index` is past it), the
    /// fields from `index` on one place later (`Map::shift_insert` of the removed last
    /// field).
    pub fn move_last_to(&mut self, index: usize) {
        if let Some(last) = self.0.pop() {
            let at = index.min(self.0.len());
            self.0.insert(at, last);
        }
    }

    /// The fields in order.
    pub fn fields(&self) -> &[(&'static str, EchoValue)] {
        &self.0
    }

    /// The fields as a JSON object, in order.
    pub fn into_map(self) -> Map<String, Value> {
        self.0
            .into_iter()
            .map(|(k, v)| (k.to_string(), Value::from(v)))
            .collect()
    }
}

impl Echo {
    /// The echo's JSON text, as serde_json serialises it (compact; what is stored as the
    /// payment's body), written field by field into a `String` of 512 bytes (issue 23:
    /// `serde_json::to_string` escaped each key and string byte by byte through its writer,
    /// into a `Vec` of 128 bytes that grew twice for a body); strings by [`push_json_str`].
    pub fn json_text(&self) -> String {
        let mut out = String::with_capacity(512);
        self.write_json(&mut out);
        out
    }

    fn write_json(&self, out: &mut String) {
        out.push('{');
        for (i, (key, value)) in self.0.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            push_json_str(out, key);
            out.push(':');
            match value {
                EchoValue::Object(e) => e.write_json(out),
                EchoValue::Json(Value::String(s)) => push_json_str(out, s),
                // `Value`'s `Display` is serde_json's compact text.
                EchoValue::Json(v) => out.push_str(&v.to_string()),
            }
        }
        out.push('}');
    }
}

/// Appends `s` as a JSON string as serde_json writes it: as is between quotes when it has
/// nothing to escape (no `"`, `\\` or control character below U+0020: the only characters
/// serde_json escapes), else escaped by serde_json (issue 23: most strings the sandbox
/// writes — ids, statuses, links, amounts — need no escaping).
pub fn push_json_str(out: &mut String, s: &str) {
    if needs_json_escape(s.as_bytes()) {
        out.push_str(&Value::from(s).to_string());
    } else {
        out.reserve(s.len() + 2);
        out.push('"');
        out.push_str(s);
        out.push('"');
    }
}

/// Whether `s` has a byte serde_json escapes in a string (`"`, `\\`, below 0x20): eight
/// bytes at a time (the classic zero-byte and less-than tests on a `u64`, exact for the
/// whole word), the rest byte by byte (issue 23: a byte-by-byte scan was ~4 instructions a
/// byte over the ~850 bytes a payment creation writes).
fn needs_json_escape(s: &[u8]) -> bool {
    const ONES: u64 = u64::from_ne_bytes([1; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    // Some byte of `x` is zero / below `n` (n <= 0x80).
    let has_zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS != 0;
    let has_less = |x: u64, n: u8| x.wrapping_sub(ONES * u64::from(n)) & !x & HIGHS != 0;
    let mut words = s.chunks_exact(8);
    for w in &mut words {
        let mut bytes = [0; 8];
        bytes.copy_from_slice(w);
        let x = u64::from_ne_bytes(bytes);
        if has_less(x, 0x20)
            || has_zero(x ^ (ONES * u64::from(b'"')))
            || has_zero(x ^ (ONES * u64::from(b'\\')))
        {
            return true;
        }
    }
    words
        .remainder()
        .iter()
        .any(|&b| b < 0x20 || b == b'"' || b == b'\\')
}

impl serde::Serialize for Echo {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

/// `d` as `NaiveDate`'s `Display` writes it (`YYYY-MM-DD` for the years 0–9999, which are
/// written digit by digit here; other years by `Display`) appended to `out` (issue 23: the
/// formatting machinery cost ~800 instructions per date).
pub fn push_date(out: &mut String, d: NaiveDate) {
    use chrono::Datelike;
    match u32::try_from(d.year()) {
        Ok(y @ 0..=9999) => {
            for n in [y / 1000, y / 100 % 10, y / 10 % 10, y % 10] {
                out.push(char::from(b'0' + n as u8));
            }
            for n in [d.month(), d.day()] {
                out.push('-');
                out.push(char::from(b'0' + (n / 10) as u8));
                out.push(char::from(b'0' + (n % 10) as u8));
            }
        }
        _ => {
            use std::fmt::Write;
            let _ = write!(out, "{d}");
        }
    }
}

/// `d` as `d.to_string()` gives it ([`push_date`]).
pub fn date_text(d: NaiveDate) -> String {
    let mut s = String::with_capacity(10);
    push_date(&mut s, d);
    s
}

/// `u` as `u.to_string()` gives it (hyphenated, lower case), without the formatting
/// machinery (issue 23).
pub fn uuid_text(u: Uuid) -> String {
    u.hyphenated()
        .encode_lower(&mut Uuid::encode_buffer())
        .to_owned()
}

/// A validated payment initiation.
#[derive(Debug, Clone)]
pub struct Initiation {
    /// The normalised body echoed by the details call (known fields only; amounts as
    /// two-decimal strings; legacy address names mapped to the current ones).
    pub echo: Echo,
    /// The debtor's sandbox account.
    pub debtor: Account,
    /// Currency of the instructed amount(s).
    pub currency: String,
    /// Sum of the instructed amounts, minor units.
    pub total_minor: i64,
    /// `requestedExecutionDate` (single, bulk) or `startDate` (periodic).
    pub execution_date: Option<NaiveDate>,
    /// Debtor, creditor(s), amount, date and remittance: equal keys are logical duplicates.
    pub dedup_key: String,
    /// `WARNING` texts for the 201 answer.
    pub warnings: Vec<String>,
}

/// The sandbox account with this BBAN ([`crate::sandbox::store::Store::account_by_bban`]).
///
/// Errors: the database fails (503).
pub fn account_by_bban(cx: &Ctx<'_>, bban: &str) -> Result<Option<Account>, ApiError> {
    Ok(cx.store.account_by_bban(bban)?)
}

/// The credits of a stored payment body to accounts identified by BBAN: (bban, minor units)
/// for each single payment or bulk entry whose creditor is a Norwegian account.
pub fn credits(service: Service, echo: &Value) -> Vec<(String, i64)> {
    let one = |v: &Value| -> Option<(String, i64)> {
        let c = &v["creditorAccount"];
        let bban = c["bban"].as_str().map(str::to_string).or_else(|| {
            c["iban"]
                .as_str()
                .filter(|i| i.starts_with("NO") && i.len() == 15)
                .map(|i| i[4..].to_string())
        })?;
        let minor = parse_minor(v["instructedAmount"]["amount"].as_str()?)?;
        Some((bban, minor))
    };
    match service {
        Service::BulkPayments => echo["payments"]
            .as_array()
            .map(|a| a.iter().filter_map(one).collect())
            .unwrap_or_default(),
        _ => one(echo).into_iter().collect(),
    }
}

/// A random authorisation id without a run of ten or more decimal digits (as the consent
/// SCA's ids, so the only long digit runs of the SCA pages are customerNumbers).
pub fn new_authorisation_id() -> String {
    crate::sandbox::domain::access::authorisation_id()
        .hyphenated()
        .encode_lower(&mut uuid::Uuid::encode_buffer())
        .to_owned()
}

/// A new `received` authorisation of a payment or a basket.
pub fn new_authorisation(
    tpp: &Tpp,
    payment: Option<&str>,
    basket: Option<&str>,
    redirect_uri: &str,
    tpp_session_id: &str,
    now: i64,
) -> AuthorisationRow {
    AuthorisationRow {
        id: new_authorisation_id(),
        // Copied as `str`s: `to_string` of an `Arc<str>` went through `Display` and the
        // formatter (~200 instructions each, issue 23); the same text.
        tpp: String::from(&*tpp.id.0),
        tpp_name: String::from(&*tpp.name),
        payment: payment.map(str::to_string),
        basket: basket.map(str::to_string),
        redirect_uri: redirect_uri.to_string(),
        tpp_session_id: tpp_session_id.to_string(),
        sca_status: sca_status::RECEIVED.to_string(),
        customer: None,
        agreement: None,
        created_at: now,
    }
}

/// A payment initiation the handler has parsed and checked, to store as `RCVD`.
#[derive(Debug)]
pub struct NewPayment<'a> {
    /// The initiating TPP.
    pub tpp: &'a Tpp,
    /// The payment service of the path.
    pub service: Service,
    /// The payment product of the path.
    pub product: &'a Product,
    /// The validated body ([`crate::sandbox::http::payments::body::parse`]).
    pub initiation: &'a Initiation,
    /// `TPP-Redirect-URI`, where the SCA returns.
    pub redirect_uri: &'a str,
    /// `TPP-Session-ID`.
    pub session_id: &'a str,
    /// The customer who must approve (`PSU-ID` or `X-PSU-IDENTITY`), if bound.
    pub expected_customer: Option<Uuid>,
    /// (customer, PSU-ID) when `X-PSU-IDENTITY` created the PSU-ID: registered with the
    /// payment.
    pub created_psu: Option<(Uuid, Uuid)>,
    /// Query `allowLogicalDuplicate=true`: no logical-duplicate check.
    pub allow_duplicate: bool,
    /// `TPP-Explicit-Authorisation-Preferred: true`: no authorisation is started.
    pub explicit: bool,
}

/// Stores payment `new` as `RCVD` (with its first authorisation unless `explicit`) in one
/// transaction; returns its `paymentId` and that authorisation's id (the row itself is
/// moved into the write, not copied for the answer: issue 23).
///
/// Errors: 400 `PAYMENT_FAILED` for a logical duplicate (same debtor, creditor, amount,
/// execution date and remittance initiated the same sandbox day, not rejected or
/// cancelled) without `allow_duplicate`; storage (503).
pub async fn initiate(
    cx: &Ctx<'_>,
    new: &NewPayment<'_>,
) -> Result<(String, Option<String>), ApiError> {
    let init = new.initiation;
    let now = cx.clock.unix_secs();
    // Dates and ids written by hand, not by `Display` (issue 23): the same texts.
    let today = date_text(cx.clock.today());
    let id = uuid_text(crate::sandbox::domain::new_id());
    let row = PaymentRow {
        id: id.clone(),
        tpp: String::from(&*new.tpp.id.0),
        service: new.service.segment().to_string(),
        product: new.product.name.to_string(),
        kind: new.product.kind.as_str().to_string(),
        status: status::RCVD.to_string(),
        held_from: None,
        funds_available: None,
        // Written from the echo: the same text as `Value::Object(..).to_string()` without
        // copying the whole body first, nor serde_json's writer (issue 23).
        body: init.echo.json_text(),
        debtor_account: uuid_text(init.debtor.id),
        currency: init.currency.clone(),
        amount_minor: init.total_minor,
        execution_date: init.execution_date.map(date_text),
        dedup_key: init.dedup_key.clone(),
        created_at: now,
        created_day: today,
        redirect_uri: new.redirect_uri.to_string(),
        tpp_session_id: new.session_id.to_string(),
        expected_customer: new.expected_customer.map(uuid_text),
        customer: None,
        psu_id: None,
        agreement: None,
        approved_at: None,
        due_at: None,
        settled_at: None,
        reason: Some("received".into()),
    };
    let auth = (!new.explicit).then(|| {
        new_authorisation(
            new.tpp,
            Some(&id),
            None,
            new.redirect_uri,
            new.session_id,
            now,
        )
    });
    // Everything the transaction needs is built above, outside it; the write itself joins
    // the group commit ([`crate::sandbox::store::db::Db::write_batched`]).
    let check_duplicate = !new.allow_duplicate;
    let created_psu = new
        .created_psu
        .map(|(c, p)| (new.tpp.id.0.clone(), p.to_string(), c.to_string()));
    let auth_id = auth.as_ref().map(|a| a.id.clone());
    cx.db
        .write_batched(move |tx| {
            if check_duplicate
                && rows::logical_duplicate_exists(tx, &row.tpp, &row.dedup_key, &row.created_day)?
            {
                return Err(ApiError::new(
                    MessageCode::PaymentFailed,
                    "logical duplicate: a payment with the same debtor account, creditor, \
                     amount, execution date and remittance information was already initiated \
                     today; send the query parameter allowLogicalDuplicate=true to initiate it \
                     again",
                ));
            }
            if let Some((tpp, psu, customer)) = &created_psu {
                rows::register_psu(tx, tpp, psu, customer)?;
            }
            rows::insert_payment(tx, &row)?;
            if let Some(a) = &auth {
                rows::insert_authorisation(tx, a)?;
            }
            Ok(())
        })
        .await?;
    Ok((id, auth_id))
}

/// Whether payment `id` can get a new authorisation (`POST .../authorisations`, checked in
/// the transaction that stores it, [`crate::sandbox::domain::payment_sca::start_authorisation`]).
///
/// Errors: 404 `RESOURCE_UNKNOWN` when the payment is gone; 409 `STATUS_INVALID` when it is
/// no longer `RCVD`; storage (503).
pub fn authorisable(tx: &Conn<'_>, id: &str) -> Result<(), ApiError> {
    let p =
        rows::payment(tx, id)?.ok_or_else(|| ApiError::not_found(format!("no payment {id}")))?;
    if p.status != status::RCVD {
        return Err(ApiError::new(
            MessageCode::StatusInvalid,
            format!(
                "payment {id} has status {} and needs no (further) authorisation",
                p.status
            ),
        ));
    }
    Ok(())
}

/// How long a payment SCA link can be used (as the consent SCA:
/// [`crate::sandbox::store::AUTHORISATION_LIFETIME`]), seconds.
pub const AUTHORISATION_SECONDS: i64 = 30 * 60;

/// The `scaStatus` of an authorisation at `now`: an unfinished one older than
/// [`AUTHORISATION_SECONDS`] reads `failed`.
pub fn effective_sca_status(a: &AuthorisationRow, now: i64) -> &str {
    let open = a.sca_status == sca_status::RECEIVED || a.sca_status == sca_status::PSU_IDENTIFIED;
    if open && now.saturating_sub(a.created_at) > AUTHORISATION_SECONDS {
        sca_status::FAILED
    } else {
        &a.sca_status
    }
}

/// Why an expired authorisation rejected a payment (stored as its reason, shown as the
/// status response's `psuMessage` and in the DELETE error).
pub const EXPIRED_REASON: &str = "the PSU did not complete the SCA within 30 minutes: the \
    payment authorisation expired, so the payment was rejected";

/// Whether `p` is a `RCVD` payment whose SCA expired: at least one authorisation covering it
/// (its own or a basket's, [`rows::authorisations_covering`]) expired unfinished, and none
/// is still usable (open and younger than [`AUTHORISATION_SECONDS`]) or finalised.
fn sca_expired(c: &Conn<'_>, p: &PaymentRow, now: i64) -> crate::sandbox::store::sql::Result<bool> {
    if p.status != status::RCVD {
        return Ok(false);
    }
    let auths = rows::authorisations_covering(c, &p.id)?;
    let expired = |a: &AuthorisationRow| {
        a.sca_status != sca_status::FAILED && effective_sca_status(a, now) == sca_status::FAILED
    };
    let alive = |a: &AuthorisationRow| effective_sca_status(a, now) != sca_status::FAILED;
    Ok(auths.iter().any(expired) && !auths.iter().any(alive))
}

/// Rejects (`RJCT`) every `RCVD` payment of `ids` whose SCA expired: at least one
/// authorisation covering it (its own or a basket's, [`rows::authorisations_covering`])
/// expired unfinished and none is still usable or finalised. Called when a payment is read
/// (details, status, and a basket's reads), so an abandoned SCA link ends the payment on the
/// next read.
///
/// Berlin Group (`paymentInitiationStatusResponse-200_json`): "If the PSU does not complete a
/// required SCA within the required timeframe the payment resource's status must be set to
/// RJCT." The timeframe is the SCA link's [`AUTHORISATION_SECONDS`]. A new authorisation
/// started before the read (`POST .../authorisations`, or a signing basket's) keeps the
/// payment `RCVD` while it is usable; a payment whose authorisation was never started
/// (explicit start not done yet) stays `RCVD`.
///
/// Errors: storage (503).
pub fn reject_expired(cx: &Ctx<'_>, ids: &[String]) -> Result<(), ApiError> {
    let now = cx.clock.unix_secs();
    let due = cx.db.read(|c| {
        for id in ids {
            if let Some(p) = rows::payment(c, id)?
                && sca_expired(c, &p, now)?
            {
                return Ok(true);
            }
        }
        Ok(false)
    })?;
    if !due {
        return Ok(());
    }
    cx.db.write(|tx| {
        for id in ids {
            if let Some(p) = rows::payment(tx, id)?
                && sca_expired(tx, &p, now)?
            {
                rows::set_status(tx, id, status::RJCT, Some(EXPIRED_REASON))?;
            }
        }
        Ok(())
    })
}

/// The TPP deletes payment `id` (`DELETE /v1/{service}/{product}/{paymentId}`): a `RCVD` or
/// `ACTC` one is cancelled (`CANC`, no cancellation authorisation in the sandbox).
///
/// Errors: 404 for an unknown id; 409 `STATUS_INVALID` with an explanation for a payment on
/// hold (`PDNG`, the interface document's "improved error message"), executed (`ACSC`),
/// rejected (`RJCT`, `ACCP`) or already cancelled; storage (503).
pub fn cancel(cx: &Ctx<'_>, id: &str) -> Result<(), ApiError> {
    cx.db.write(|tx| {
        let p = rows::payment(tx, id)?
            .ok_or_else(|| ApiError::not_found(format!("no payment {id}")))?;
        let why = match p.status.as_str() {
            status::RCVD | status::ACTC => {
                rows::set_status(tx, id, status::CANC, Some("cancelled by the TPP"))?;
                return Ok(());
            }
            status::PDNG => format!(
                "payment {id} is on hold at the bank (status PDNG: stopped for further checks) \
                 and cannot be deleted while it is on hold; wait until the bank releases or \
                 rejects it, then delete it or read its status (sandbox: POST \
                 /v1/sandbox/payments/{id}/release releases it)"
            ),
            status::ACSC => format!(
                "payment {id} was already executed{} (status ACSC) and cannot be deleted; ask \
                 the creditor for a refund",
                p.settled_at
                    .map(|t| format!(" at {}", crate::sandbox::clock::rfc3339(t)))
                    .unwrap_or_default()
            ),
            status::ACCP => format!(
                "payment {id} was rejected for lack of funds at execution (status ACCP, \
                 fundsAvailable false); there is nothing left to delete"
            ),
            status::RJCT => format!(
                "payment {id} was rejected (status RJCT: {}); there is nothing left to delete",
                p.reason.as_deref().unwrap_or("rejected")
            ),
            status::CANC => format!("payment {id} is already cancelled (status CANC)"),
            other => format!("payment {id} cannot be deleted in status {other}"),
        };
        Err(ApiError::new(MessageCode::StatusInvalid, why))
    })
}

#[cfg(test)]
mod echo_tests {
    use super::Echo;
    use serde_json::{Map, Value, json};

    /// An echo serialises as the `Map` with the same inserts (a replaced key keeps its place)
    /// and `move_last_to` is the `shift_remove` + `shift_insert` it replaces.
    #[test]
    fn an_echo_is_the_map_it_replaces() {
        let steps: [(&'static str, Value); 6] = [
            ("endToEndIdentification", json!("e2e")),
            ("debtorAccount", json!({"bban": "1", "currency": "NOK"})),
            (
                "instructedAmount",
                json!({"currency": "NOK", "amount": "1.00"}),
            ),
            ("creditorName", json!("Ola \"N\" æ")),
            ("debtorAccount", json!({"bban": "2"})),
            ("remittanceInformationUnstructured", json!("x")),
        ];
        let mut echo = Echo::with_capacity(2);
        let mut map = Map::new();
        for (k, v) in steps {
            echo.insert(k, v.clone());
            map.insert(k.to_string(), v);
        }
        let text = |e: &Echo| {
            let serialised = serde_json::to_string(e).unwrap_or_default();
            assert_eq!(e.json_text(), serialised);
            serialised
        };
        assert_eq!(text(&echo), Value::Object(map.clone()).to_string());
        assert_eq!(echo.clone().into_map(), map);
        for index in [0, 2, 4, 9] {
            let mut e = echo.clone();
            e.move_last_to(index);
            let mut m = map.clone();
            if let Some((k, v)) = m
                .keys()
                .next_back()
                .cloned()
                .and_then(|last| m.shift_remove_entry(&last))
            {
                m.shift_insert(index.min(m.len()), k, v);
            }
            assert_eq!(text(&e), Value::Object(m).to_string(), "{index}");
        }
        assert_eq!(text(&Echo::default()), "{}");
        assert_eq!(echo.fields().len(), 5);
    }

    /// [`super::date_text`] and [`super::uuid_text`] are the `Display` texts: every date
    /// kind `NaiveDate` holds, and ids of every shape.
    #[test]
    fn dates_and_ids_are_their_display_texts() {
        use chrono::NaiveDate;
        let dates = [
            NaiveDate::from_ymd_opt(2026, 11, 28),
            NaiveDate::from_ymd_opt(2027, 1, 1),
            NaiveDate::from_ymd_opt(1, 2, 3),
            NaiveDate::from_ymd_opt(0, 12, 31),
            NaiveDate::from_ymd_opt(999, 10, 9),
            NaiveDate::from_ymd_opt(9999, 12, 31),
            NaiveDate::from_ymd_opt(10000, 1, 1),
            NaiveDate::from_ymd_opt(-1, 6, 15),
            Some(NaiveDate::MIN),
            Some(NaiveDate::MAX),
        ];
        for d in dates.into_iter().flatten() {
            assert_eq!(super::date_text(d), d.to_string());
        }
        let mut d = NaiveDate::from_ymd_opt(2024, 1, 1).unwrap_or_default();
        for _ in 0..800 {
            assert_eq!(super::date_text(d), d.to_string());
            d = d.succ_opt().unwrap_or_default();
        }
        for u in [
            uuid::Uuid::nil(),
            uuid::Uuid::max(),
            uuid::Uuid::from_u128(0x0123_4567_89ab_cdef_fedc_ba98_7654_3210),
            crate::sandbox::domain::new_id(),
        ] {
            assert_eq!(super::uuid_text(u), u.to_string());
        }
    }

    /// An echo whose fields are echoes (amounts, account references) serialises and
    /// converts as the `Map` of `Map`s with the same inserts, a replaced nested object and
    /// strings that need escaping included.
    #[test]
    fn a_nested_echo_is_the_map_of_maps_it_replaces() {
        let nested = |pairs: &[(&'static str, &str)]| {
            let mut e = Echo::with_capacity(2);
            let mut m = Map::new();
            for (k, v) in pairs {
                e.insert_str(k, v.to_string());
                m.insert(k.to_string(), Value::String(v.to_string()));
            }
            (e, Value::Object(m))
        };
        let mut echo = Echo::with_capacity(4);
        let mut map = Map::new();
        let (a, am) = nested(&[("currency", "NOK"), ("amount", "1.00")]);
        echo.insert("instructedAmount", a);
        map.insert("instructedAmount".into(), am);
        let (d, dm) = nested(&[("bban", "1"), ("currency", "NOK")]);
        echo.insert("debtorAccount", d);
        map.insert("debtorAccount".into(), dm);
        echo.insert("creditorName", json!("Ola \"N\" æ\n"));
        map.insert("creditorName".into(), json!("Ola \"N\" æ\n"));
        let (c, cm) = nested(&[("iban", "NO93 \u{1}"), ("bban", ""), ("currency", "EUR")]);
        echo.insert("debtorAccount", c);
        map.insert("debtorAccount".into(), cm);
        let (e, em) = nested(&[]);
        echo.insert("empty", e);
        map.insert("empty".into(), em);
        let text = serde_json::to_string(&echo).unwrap_or_default();
        assert_eq!(text, Value::Object(map.clone()).to_string());
        assert_eq!(echo.json_text(), text);
        assert_eq!(echo.into_map(), map);
    }

    /// The word-at-a-time test finds a byte to escape exactly where the byte-by-byte test
    /// does: every byte value at every place of texts of 0 to 19 bytes among bytes that
    /// need none (0x20, 0x7f, 0x80, 0xff, 'A'), and bytes on either side of each tested one.
    #[test]
    fn the_escape_test_is_the_byte_by_byte_one() {
        let naive = |s: &[u8]| s.iter().any(|&b| b < 0x20 || b == b'"' || b == b'\\');
        for len in 0..20 {
            for fill in [0x20, 0x7f, 0x80, 0xff, b'A', b'!', b'#', b'[', b']'] {
                for at in 0..len {
                    for b in 0..=255u8 {
                        let mut s = vec![fill; len];
                        s[at] = b;
                        assert_eq!(super::needs_json_escape(&s), naive(&s), "{s:?}");
                        if at + 1 < len {
                            s[at + 1] = b.wrapping_add(1);
                            assert_eq!(super::needs_json_escape(&s), naive(&s), "{s:?}");
                        }
                    }
                }
                let s = vec![fill; len];
                assert_eq!(super::needs_json_escape(&s), naive(&s), "{s:?}");
            }
        }
    }

    /// [`Echo::json_text`] (the stored body) is serde_json's text of the echo byte for
    /// byte: every character below U+0080 and some beyond in strings, nested echoes, and
    /// values that are not strings (numbers, arrays, objects, `null`, booleans).
    #[test]
    fn the_written_echo_is_the_serialised_one() {
        let mut odd: String = (0u8..0x80).map(char::from).collect();
        odd.push_str("ø€𝄞\u{2028}\u{7f}");
        let mut inner = Echo::with_capacity(2);
        inner.insert_str("currency", "NOK".into());
        inner.insert_str("amount", odd.clone());
        let mut echo = Echo::with_capacity(8);
        echo.insert_str("endToEndIdentification", odd.clone());
        echo.insert("instructedAmount", inner.clone());
        echo.insert("empty", Echo::default());
        echo.insert("number", json!(-12.5e3));
        echo.insert("list", json!(["a\"b", 1, null, {"k\n": [true, false]}]));
        echo.insert("null", Value::Null);
        echo.insert_str("plain", "Ola Nordmann".into());
        echo.insert_str("", String::new());
        let serialised = serde_json::to_string(&echo).expect("serialises");
        assert_eq!(echo.json_text(), serialised);
        assert!(serialised.contains("\\u0001") && serialised.contains("\\\""));
        assert_eq!(Echo::default().json_text(), "{}");
        for s in [
            odd.as_str(),
            "",
            "plain",
            "\\",
            "\"",
            "\u{1f}",
            " ",
            "\u{7f}",
        ] {
            let mut out = String::from("x");
            super::push_json_str(&mut out, s);
            assert_eq!(out, format!("x{}", Value::from(s)), "{s:?}");
        }
    }
}
