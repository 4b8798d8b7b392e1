//! Which accounts a request may read, and starting the SCA that grants them: consent
//! resolution with its decision cache ([`resolve`], [`Decisions`]), the PSU's SCA sessions
//! and registrations, revocation by the PSU or the TPP, the card accounts of a consent, and
//! the consent resources' status changes at SCA. The handlers of `consent`, `psu`, `cards`,
//! `accounts`, `sca` and `payments` call these; how the parts combine is described in
//! [`crate::sandbox::http::psu`] and [`crate::sandbox::http::consent`].

use std::sync::Arc;
use std::time::Duration;

use uuid::Uuid;

use crate::sandbox::domain::Ctx;
use crate::sandbox::domain::rules;
use crate::sandbox::errors::ApiError;
use crate::sandbox::model::Tpp;
use crate::sandbox::model::{
    Account, Agreement, Authorisation, CONSENT_LIFETIME, CardAccount, Consent, ConsentKey,
    Customer, ScaStep, TppId,
};
use crate::sandbox::store::access as store;
use crate::sandbox::store::payments;
use crate::sandbox::store::sql::Conn;
use crate::xs2a::error::MessageCode;
use crate::xs2a::headers;

/// One PSU header of a request as sent, read once by the HTTP layer.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub enum HeaderText {
    /// Absent or blank.
    #[default]
    Absent,
    /// The value, trimmed (visible ASCII).
    Text(String),
    /// Not visible ASCII: refused with 400 `FORMAT_ERROR` when the header is used.
    Invalid,
}

/// The PSU context of a request: the headers that say who the PSU is, where its SCA
/// returns, and whether it takes part (interface document, Authentication 11-16), parsed
/// once by the HTTP layer (`crate::sandbox::http::caller`). A header that is not visible
/// ASCII is refused only where it is used, as before.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct PsuContext {
    /// `PSU-ID`.
    pub psu_id: HeaderText,
    /// `PSU-Corporate-ID`.
    pub corporate_id: HeaderText,
    /// `TPP-Session-ID`.
    pub session_id: HeaderText,
    /// `TPP-Redirect-URI`.
    pub redirect_uri: HeaderText,
    /// Whether the PSU takes part: `PSU-IP-Address` present and not blank (Authentication
    /// 16).
    pub present: bool,
}

impl HeaderText {
    /// The value of header `name`, `None` when absent or blank.
    ///
    /// Errors: 400 `FORMAT_ERROR` when it is not visible ASCII.
    pub fn get(&self, name: &str) -> Result<Option<&str>, ApiError> {
        match self {
            HeaderText::Absent => Ok(None),
            HeaderText::Text(s) => Ok(Some(s)),
            HeaderText::Invalid => Err(ApiError::format(format!(
                "the {name} header is not visible ASCII"
            ))),
        }
    }
}

impl PsuContext {
    /// `PSU-ID` (see [`HeaderText::get`]).
    pub fn psu_id(&self) -> Result<Option<&str>, ApiError> {
        self.psu_id.get(headers::PSU_ID)
    }

    /// `PSU-Corporate-ID` (see [`HeaderText::get`]).
    pub fn corporate_id(&self) -> Result<Option<&str>, ApiError> {
        self.corporate_id.get(headers::PSU_CORPORATE_ID)
    }

    /// `TPP-Session-ID` (see [`HeaderText::get`]).
    pub fn session_id(&self) -> Result<Option<&str>, ApiError> {
        self.session_id.get(headers::TPP_SESSION_ID)
    }

    /// `TPP-Redirect-URI` (see [`HeaderText::get`]).
    pub fn redirect_uri(&self) -> Result<Option<&str>, ApiError> {
        self.redirect_uri.get(headers::TPP_REDIRECT_URI)
    }
}

/// Longest accepted `TPP-Session-ID`.
pub const MAX_SESSION_ID_CHARS: usize = 200;

/// A request's standing consent.
#[derive(Debug, Clone)]
pub struct Access {
    /// The consent addressed (TPP, PSU-ID, agreement).
    pub key: ConsentKey,
    /// The PSU's customer record.
    pub customer: Customer,
    /// Set in CORPORATE context.
    pub agreement: Option<Agreement>,
    /// The consent.
    pub consent: Consent,
}

impl Access {
    /// Whether the PSU could consent to `account` in this context (own accounts in PRIVATE,
    /// the agreement's accounts in CORPORATE).
    ///
    /// Errors: the database fails (503).
    pub fn may_consent_to(&self, cx: &Ctx<'_>, account: Uuid) -> Result<bool, ApiError> {
        Ok(match &self.agreement {
            Some(a) => a.accounts.contains(&account),
            None => cx
                .store
                .accounts_of(self.customer.id)?
                .iter()
                .any(|a| a.id == account),
        })
    }
}

/// Starts an SCA authorisation for this request; returns its id and the absolute
/// `scaRedirect` href (`{public_url}/sca/{token}`, [`Ctx::public_url`], never the request's
/// `Host`; the token of [`crate::sandbox::http::sca_pages`], never the id). `why` says why SCA is needed (for the message when `TPP-Redirect-URI` is missing). Records `TPP-Session-ID`, generating one
/// when absent.
///
/// Errors: 400 `FORMAT_ERROR` when `TPP-Redirect-URI` is missing or not an absolute http(s)
/// URL, or `TPP-Session-ID` is longer than [`MAX_SESSION_ID_CHARS`].
pub fn begin_sca(
    cx: &Ctx<'_>,
    tpp: &Tpp,
    psu: &PsuContext,
    why: &str,
) -> Result<(Uuid, String), ApiError> {
    let (auth, href) = new_sca(cx, tpp, psu, why)?;
    let (id, now) = (auth.id, auth.created_at);
    cx.store.insert_authorisation(auth, now)?;
    Ok((id, href))
}

/// [`begin_sca`] for a new consent resource (`POST /v1/bank-offered-consents`,
/// `POST /v1/consents`): the authorisation and the resource `received` of `tpp`
/// ([`create_resource`]'s row) in one write of the group commit
/// ([`crate::sandbox::store::db::Db::write_batched`]) instead of two transactions.
///
/// Errors: as [`begin_sca`].
pub async fn begin_consent_sca(
    cx: &Ctx<'_>,
    tpp: &Tpp,
    psu: &PsuContext,
    why: &str,
) -> Result<(Uuid, String), ApiError> {
    let (auth, href) = new_sca(cx, tpp, psu, why)?;
    let (id, now) = (auth.id, auth.created_at);
    let secs = rules::secs(now);
    let owner = tpp.id.clone();
    cx.db
        .write_batched(move |tx| {
            crate::sandbox::store::write_authorisation(tx, &auth, now)?;
            store::insert_resource(tx, id, &owner, secs)?;
            Ok::<_, ApiError>(())
        })
        .await?;
    Ok((id, href))
}

/// The checks of [`begin_sca`] and the authorisation it stores, with its `scaRedirect`.
fn new_sca(
    cx: &Ctx<'_>,
    tpp: &Tpp,
    psu: &PsuContext,
    why: &str,
) -> Result<(Authorisation, String), ApiError> {
    let Some(redirect) = psu.redirect_uri()? else {
        return Err(ApiError::format(format!(
            "the TPP-Redirect-URI header is missing; it is required because this request \
             needs SCA ({why})"
        )));
    };
    if !is_redirect_url(&tpp.id, redirect) {
        return Err(ApiError::format(format!(
            "TPP-Redirect-URI {redirect:?} is not an absolute http(s) URL"
        )));
    }
    let session = match psu.session_id()? {
        Some(s) if s.chars().count() > MAX_SESSION_ID_CHARS => {
            return Err(ApiError::format(format!(
                "TPP-Session-ID is longer than {MAX_SESSION_ID_CHARS} characters"
            )));
        }
        Some(s) => s.to_string(),
        None => crate::sandbox::domain::new_random_id()
            .hyphenated()
            .encode_lower(&mut Uuid::encode_buffer())
            .to_owned(),
    };
    let now = cx.clock.now();
    let auth = Authorisation {
        id: authorisation_id(),
        tpp: tpp.id.clone(),
        tpp_name: tpp.name.to_string(),
        redirect_uri: redirect.to_string(),
        tpp_session_id: session,
        created_at: now,
        step: ScaStep::Identify,
    };
    let href = cx.sca_href(
        "/sca",
        auth.id
            .hyphenated()
            .encode_lower(&mut Uuid::encode_buffer()),
    );
    Ok((auth, href))
}

/// Whether `uri` is an absolute http(s) URL: it parses ([`url::Url::parse`]) with scheme
/// `http` or `https` and a host (the rule of `TPP-Redirect-URI`).
pub fn is_absolute_http_url(uri: &str) -> bool {
    matches!(url::Url::parse(uri), Ok(u) if matches!(u.scheme(), "http" | "https") && u.has_host())
}

/// [`is_absolute_http_url`] of `tpp`'s `TPP-Redirect-URI`, remembering the last URI the
/// rule accepted for a TPP on this thread: a TPP that sends the same URI again (a TPP's
/// redirect URI is nearly always the same) gets the same answer without the URL being
/// parsed again (issue 23: about 5,700 instructions of a payment or consent creation). The
/// memory is keyed by the TPP: whether a URI was seen before never depends on another
/// TPP's requests, not even in the answer's time.
pub fn is_redirect_url(tpp: &TppId, uri: &str) -> bool {
    thread_local! {
        static LAST_ACCEPTED: std::cell::RefCell<Option<(TppId, String)>> =
            const { std::cell::RefCell::new(None) };
    }
    let seen = LAST_ACCEPTED.with_borrow(|last| {
        last.as_ref()
            .is_some_and(|(t, u)| t.0.as_ref() == tpp.0.as_ref() && u == uri)
    });
    if seen {
        return true;
    }
    let ok = is_absolute_http_url(uri);
    if ok {
        LAST_ACCEPTED.set(Some((tpp.clone(), uri.to_string())));
    }
    ok
}

/// Starts an SCA for this request and returns the 401 (`code`, `text`) carrying
/// `_links.scaRedirect` to it (see [`begin_sca`]).
///
/// Errors: as [`begin_sca`].
pub fn start_sca(
    cx: &Ctx<'_>,
    tpp: &Tpp,
    psu: &PsuContext,
    code: MessageCode,
    text: &str,
) -> Result<ApiError, ApiError> {
    let (_, href) = begin_sca(cx, tpp, psu, text)?;
    Ok(ApiError::new(code, text).with_sca_redirect(href))
}

/// A new authorisation id ([`crate::sandbox::domain::new_id`]: time-ordered, 74 random bits)
/// without a run of ten or more decimal digits, so that the SCA page's only long digit runs
/// are the customerNumbers (clients may scrape those as hints).
pub fn authorisation_id() -> Uuid {
    loop {
        let id = crate::sandbox::domain::new_id();
        let mut run = 0;
        // The text as `to_string` gives it, on the stack (issue 23: a `String` per id).
        let mut text = Uuid::encode_buffer();
        let long = id.hyphenated().encode_lower(&mut text).bytes().any(|b| {
            run = if b.is_ascii_digit() { run + 1 } else { 0 };
            run >= 10
        });
        if !long {
            return id;
        }
    }
}

/// [`start_sca`] collapsed into the error to answer.
pub fn needs_sca(
    cx: &Ctx<'_>,
    tpp: &Tpp,
    psu: &PsuContext,
    code: MessageCode,
    text: &str,
) -> ApiError {
    start_sca(cx, tpp, psu, code, text).unwrap_or_else(|e| e)
}

/// The consent addressed by the request's PSU headers, or the answer to send instead.
///
/// A granted access is remembered in [`Ctx::decisions`] (see [`Decisions`]): the same
/// question is answered from there only while the data version is unchanged and the sandbox
/// clock is still within the consent's 180 days and the SCA session's hour, so the answer is
/// always the one the full check would give.
pub fn resolve(cx: &Ctx<'_>, tpp: &Tpp, psu: &PsuContext) -> Result<Arc<Access>, ApiError> {
    let key = DecisionKey::of(tpp, psu, None);
    let (version, now) = (cx.db.version(), cx.clock.now());
    if let Some(d) = cx.decisions.get(&key, version, now) {
        return Ok(d.access);
    }
    let (access, validity) = resolve_fresh(cx, tpp, psu, version, now)?;
    let access = Arc::new(access);
    cx.decisions.put(
        key,
        Decision {
            validity,
            access: access.clone(),
            account: None,
        },
    );
    Ok(access)
}

/// An account and its owner's customer record (`None` when the owner is gone), as
/// [`resolve_account`] resolves them: shared with the decision kept.
pub type AccountWithOwner = Arc<(Account, Option<Customer>)>;

/// A card account and its owner's customer record, as [`resolve_card`] resolves them:
/// shared with the decision kept.
pub type CardWithOwner = Arc<(CardAccount, Customer)>;

/// [`resolve`] and [`consented_account`] for account `id`, with the account owner's customer
/// record (`None` when the owner is gone), remembered like [`resolve`]. The account and its
/// owner are shared with the decision kept (a reference count per request, not a copy of
/// their texts: eight strings per read, issue 23).
///
/// Errors: those of [`resolve`] and [`consented_account`].
pub fn resolve_account(
    cx: &Ctx<'_>,
    tpp: &Tpp,
    psu: &PsuContext,
    id: &str,
) -> Result<(Arc<Access>, AccountWithOwner), ApiError> {
    let key = DecisionKey::of(tpp, psu, Some(id));
    let (version, now) = (cx.db.version(), cx.clock.now());
    if let Some(Decision {
        access,
        account: Some(account),
        ..
    }) = cx.decisions.get(&key, version, now)
    {
        return Ok((access, account));
    }
    let (access, validity) = resolve_fresh(cx, tpp, psu, version, now)?;
    let access = Arc::new(access);
    let account = consented_account(cx, tpp, psu, &access, id)?;
    let owner = cx.store.customer(account.owner)?;
    let account = Arc::new((account, owner));
    cx.decisions.put(
        key,
        Decision {
            validity,
            access: access.clone(),
            account: Some(account.clone()),
        },
    );
    Ok((access, account))
}

/// [`resolve`] and the consented card account `id` with its owner's customer record,
/// remembered in [`Decisions`] per consent and data version.
///
/// Errors: those of [`resolve`]; 403 `RESOURCE_UNKNOWN` for a card account that is not the
/// PSU's in this context (PRIVATE context only: agreements cover no cards); 401
/// `CONSENT_INVALID` + `scaRedirect` for the PSU's card account outside the consent.
///
/// The card account and its owner are shared with the decision kept (as in
/// [`resolve_account`]).
pub fn resolve_card(
    cx: &Ctx<'_>,
    tpp: &Tpp,
    psu: &PsuContext,
    id: &str,
) -> Result<(Arc<Access>, CardWithOwner), ApiError> {
    let version = cx.db.version();
    let access = resolve(cx, tpp, psu)?;
    if let Some(card) = cx.decisions.card(&access.key, id, version) {
        return Ok((access, card));
    }
    let unknown = || {
        ApiError::forbidden_unknown(format!(
            "card account {id:?} is not a card account of this PSU in this context"
        ))
    };
    let uuid = Uuid::parse_str(id).map_err(|_| unknown())?;
    let card = cx.store.card_account(uuid)?.ok_or_else(unknown)?;
    let owns = access.agreement.is_none() && card.owner == access.customer.id;
    if !owns {
        return Err(unknown());
    }
    if !consented(cx, &access.key)?.contains(&uuid) {
        return Err(needs_sca(
            cx,
            tpp,
            psu,
            MessageCode::ConsentInvalid,
            "the consent does not cover this card account: SCA needed to add it",
        ));
    }
    let owner = cx.store.customer(card.owner)?.ok_or_else(unknown)?;
    let card = Arc::new((card, owner));
    cx.decisions
        .put_card(&access.key, id, version, card.clone());
    Ok((access, card))
}

/// What an access decision depends on besides the stored data and the clock: the TPP, the
/// PSU headers as sent (`TPP-Redirect-URI` aside), whether the PSU is present, and the
/// account asked for. Borrowed from the request: a decision found in [`Decisions`] costs no
/// copy of these texts (issue 23); [`Decisions::put`] keeps an owned copy ([`StoredKey`]).
#[derive(Debug, Clone, Copy)]
pub struct DecisionKey<'a> {
    tpp: &'a TppId,
    psu: &'a PsuContext,
    account: Option<&'a str>,
}

impl<'a> DecisionKey<'a> {
    fn of(tpp: &'a Tpp, psu: &'a PsuContext, account: Option<&'a str>) -> Self {
        DecisionKey {
            tpp: &tpp.id,
            psu,
            account,
        }
    }

    /// The parts the decision depends on, as compared and hashed (the redirect URI left out).
    fn parts(&self) -> KeyParts<'a> {
        let p = self.psu;
        (
            &self.tpp.0,
            [&p.psu_id, &p.corporate_id, &p.session_id],
            p.present,
            self.account,
        )
    }

    fn owned(&self) -> StoredKey {
        StoredKey {
            tpp: self.tpp.clone(),
            psu: PsuContext {
                psu_id: self.psu.psu_id.clone(),
                corporate_id: self.psu.corporate_id.clone(),
                session_id: self.psu.session_id.clone(),
                redirect_uri: HeaderText::Absent,
                present: self.psu.present,
            },
            account: self.account.map(str::to_string),
        }
    }
}

/// The compared parts of a [`DecisionKey`]: TPP id, PSU-ID, PSU-Corporate-ID, TPP-Session-ID,
/// PSU present, account.
type KeyParts<'a> = (&'a str, [&'a HeaderText; 3], bool, Option<&'a str>);

/// A [`DecisionKey`] as [`Decisions`] keeps it (owned); compared and hashed by the same parts.
#[derive(Debug, Clone)]
struct StoredKey {
    tpp: TppId,
    psu: PsuContext,
    account: Option<String>,
}

impl StoredKey {
    fn key(&self) -> DecisionKey<'_> {
        DecisionKey {
            tpp: &self.tpp,
            psu: &self.psu,
            account: self.account.as_deref(),
        }
    }
}

impl std::hash::Hash for StoredKey {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.key().hash(state);
    }
}

impl PartialEq for StoredKey {
    fn eq(&self, other: &Self) -> bool {
        self.key().parts() == other.key().parts()
    }
}

impl Eq for StoredKey {}

impl std::hash::Hash for DecisionKey<'_> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.parts().hash(state);
    }
}

/// The request's borrowed key finds the kept one (hashbrown's look-up by an equivalent key).
impl hashbrown::Equivalent<StoredKey> for DecisionKey<'_> {
    fn equivalent(&self, key: &StoredKey) -> bool {
        self.parts() == key.key().parts()
    }
}

/// When a granted access still holds: same data version ([`crate::sandbox::store::db::Db::version`]), and the
/// sandbox clock between the decision time and both the consent's last valid instant
/// (granted + [`CONSENT_LIFETIME`]) and, with the PSU present, the SCA
/// session's last valid second ([`session_check`]).
#[derive(Debug, Clone, Copy)]
struct Validity {
    version: u64,
    from: std::time::SystemTime,
    consent_until: std::time::SystemTime,
    session_until: Option<i64>,
}

impl Validity {
    fn holds(&self, version: u64, now: std::time::SystemTime) -> bool {
        self.version == version
            && now >= self.from
            && now <= self.consent_until
            && self
                .session_until
                .is_none_or(|last| rules::secs(now) <= last)
    }
}

/// A remembered granted access.
#[derive(Debug, Clone)]
pub struct Decision {
    validity: Validity,
    /// Shared with every request it answers (no copy of the customer, consent and agreement
    /// per request, issue 23).
    access: Arc<Access>,
    /// The account of [`resolve_account`] and its owner, shared likewise.
    account: Option<AccountWithOwner>,
}

/// Granted access decisions of [`resolve`] and [`resolve_account`]; refusals are never
/// remembered. At most [`DECISION_CACHE_ENTRIES`] are kept; the cache is emptied when full.
/// Also the card accounts a consent may read ([`resolve_card`]), kept apart (at most
/// [`CARD_CACHE_ENTRIES`]).
///
/// The decisions are found by the request's borrowed key ([`hashbrown::Equivalent`]: no
/// owned key made per look-up, issue 23); only a decision kept is given an owned key.
#[derive(Debug, Default)]
pub struct Decisions {
    map: std::sync::Mutex<hashbrown::HashMap<StoredKey, Decision, foldhash::fast::RandomState>>,
    /// Card accounts a consent may read, with their owners (the card access check after the
    /// consent is resolved): by consent, the card account id as sent and the data version.
    cards: std::sync::Mutex<
        hashbrown::HashMap<CardAccessKey, CardWithOwner, foldhash::fast::RandomState>,
    >,
}

type CardAccessKey = (ConsentKey, String, u64);

/// A [`CardAccessKey`] borrowed from the request: it hashes as the kept key does (a
/// reference hashes as what it points to, a `String` as its `str`) and finds it
/// ([`hashbrown::Equivalent`]): no copy of the consent key and the card account id per card
/// read (issue 23).
#[derive(Debug, Hash)]
struct CardLookup<'a>(&'a ConsentKey, &'a str, u64);

impl hashbrown::Equivalent<CardAccessKey> for CardLookup<'_> {
    fn equivalent(&self, key: &CardAccessKey) -> bool {
        *self.0 == key.0 && self.1 == key.1 && self.2 == key.2
    }
}

/// Most decisions a [`Decisions`] keeps.
pub const DECISION_CACHE_ENTRIES: usize = 4096;

/// Most card access decisions a [`Decisions`] keeps; emptied when full.
pub const CARD_CACHE_ENTRIES: usize = 1024;

impl Decisions {
    fn get(
        &self,
        key: &DecisionKey<'_>,
        version: u64,
        now: std::time::SystemTime,
    ) -> Option<Decision> {
        let map = self.map.lock().ok()?;
        map.get(key)
            .filter(|d| d.validity.holds(version, now))
            .cloned()
    }

    fn put(&self, key: DecisionKey<'_>, decision: Decision) {
        if let Ok(mut map) = self.map.lock() {
            if map.len() >= DECISION_CACHE_ENTRIES {
                map.retain(|_, d| d.validity.version == decision.validity.version);
                if map.len() >= DECISION_CACHE_ENTRIES {
                    map.clear();
                }
            }
            match map.get_mut(&key) {
                Some(d) => *d = decision,
                None => {
                    map.insert(key.owned(), decision);
                }
            }
        }
    }

    /// The card account `id` (as sent) that the consent `key` covers, with its owner, as
    /// remembered at data `version` by [`Decisions::put_card`].
    fn card(&self, key: &ConsentKey, id: &str, version: u64) -> Option<CardWithOwner> {
        let cards = self.cards.lock().ok()?;
        cards.get(&CardLookup(key, id, version)).cloned()
    }

    /// Remembers that the consent `key` covers card account `id` (`card`: it and its owner)
    /// at data `version` (read before the data was).
    fn put_card(&self, key: &ConsentKey, id: &str, version: u64, card: CardWithOwner) {
        if let Ok(mut cards) = self.cards.lock() {
            if cards.len() >= CARD_CACHE_ENTRIES {
                cards.clear();
            }
            cards.insert((key.clone(), id.to_string(), version), card);
        }
    }
}

/// The full check of [`resolve`] at data version `version` and clock `now`, with how long its
/// grant holds.
fn resolve_fresh(
    cx: &Ctx<'_>,
    tpp: &Tpp,
    psu: &PsuContext,
    version: u64,
    now: std::time::SystemTime,
) -> Result<(Access, Validity), ApiError> {
    let sca = |code, text: &str| needs_sca(cx, tpp, psu, code, text);
    let Some(psu_text) = psu.psu_id()? else {
        return Err(sca(
            MessageCode::ConsentInvalid,
            "no PSU-ID: the PSU has to authorise access (SCA) first",
        ));
    };
    let psu_id = Uuid::parse_str(psu_text)
        .map_err(|_| ApiError::format(format!("PSU-ID {psu_text:?} is not a UUID")))?;
    let corporate = match psu.corporate_id()? {
        None => None,
        Some(c) => Some(Uuid::parse_str(c).map_err(|_| {
            ApiError::new(
                MessageCode::CorporateIdInvalid,
                format!("PSU-Corporate-ID {c:?} is not a UUID"),
            )
        })?),
    };
    let Some(customer) = (match psu_customer(cx, &tpp.id, psu_id)? {
        Some(c) => cx.store.customer(c)?,
        None => None,
    }) else {
        return Err(sca(
            MessageCode::ConsentInvalid,
            "this PSU-ID has no consent for this TPP: SCA needed",
        ));
    };
    let agreement = match corporate {
        None => None,
        Some(cid) => match cx.store.agreement(cid)? {
            Some(a) if a.holder == customer.id => Some(a),
            _ => {
                return Err(ApiError::new(
                    MessageCode::CorporateIdInvalid,
                    format!("PSU-Corporate-ID {cid} is not an agreement of this PSU"),
                ));
            }
        },
    };
    let key = ConsentKey {
        tpp: tpp.id.clone(),
        psu_id,
        agreement: agreement.as_ref().map(|a| a.id),
    };
    let Some(consent) = cx.store.consent(&key)? else {
        if agreement.is_none() && !cx.store.corporate_consents(&tpp.id, psu_id)?.is_empty() {
            return Err(ApiError::format(
                "the PSU-Corporate-ID header is missing: this PSU acts in CORPORATE context \
                 (its consent was given for a corporate agreement), so every request needs the \
                 psu-corporate-id received after SCA",
            ));
        }
        return Err(sca(
            MessageCode::ConsentInvalid,
            match agreement {
                Some(_) => "no consent in this CORPORATE context: SCA needed",
                None => "no consent in PRIVATE context: SCA needed",
            },
        ));
    };
    match revocation(cx, &key)? {
        Some(Revoked::ByPsu) => {
            return Err(sca(
                MessageCode::ConsentInvalid,
                "the PSU revoked this consent at the bank: a new SCA is needed",
            ));
        }
        Some(Revoked::ByTpp) => {
            return Err(sca(
                MessageCode::ConsentInvalid,
                "the TPP terminated this consent (DELETE of the consent resource): a new SCA \
                 is needed",
            ));
        }
        None => {}
    }
    if consent.is_expired(now) {
        return Err(sca(
            MessageCode::ConsentExpired,
            "the consent is older than 180 days: a new SCA is needed",
        ));
    }
    let mut session_until = None;
    if psu.present {
        let session = psu.session_id()?;
        match session_check(cx, &tpp.id, psu_id, session)? {
            Err(reason) => return Err(sca(MessageCode::ConsentInvalid, &reason.to_string())),
            Ok(last) => session_until = Some(last),
        }
    }
    let validity = Validity {
        version,
        from: now,
        consent_until: consent
            .granted_at
            .checked_add(CONSENT_LIFETIME)
            .unwrap_or(now),
        session_until,
    };
    Ok((
        Access {
            key,
            customer,
            agreement,
            consent,
        },
        validity,
    ))
}

/// The consented account `id` of `access`: 403 `RESOURCE_UNKNOWN` when the PSU has no such
/// account in this context, 401 with `scaRedirect` when it has but did not consent to it.
pub fn consented_account(
    cx: &Ctx<'_>,
    tpp: &Tpp,
    psu: &PsuContext,
    access: &Access,
    id: &str,
) -> Result<Account, ApiError> {
    let unknown = || {
        ApiError::forbidden_unknown(format!(
            "account {id:?} is not an account of this PSU in this context"
        ))
    };
    let Ok(uuid) = Uuid::parse_str(id) else {
        return Err(unknown());
    };
    if access.consent.accounts.contains(&uuid) {
        return cx.store.account(uuid)?.ok_or_else(unknown);
    }
    if access.may_consent_to(cx, uuid)? {
        return Err(needs_sca(
            cx,
            tpp,
            psu,
            MessageCode::ConsentInvalid,
            "the consent does not cover this account: SCA needed to add it",
        ));
    }
    Err(unknown())
}

/// Marks the consent resource `id` (if the SCA `id` belongs to one) `valid` for consent `key`
/// (inside the transaction that records the completed SCA).
///
/// Errors: storage (503).
pub fn resource_authorised(
    tx: &Conn<'_>,
    id: Uuid,
    key: &ConsentKey,
    at: i64,
) -> Result<(), ApiError> {
    Ok(store::resource_authorised(tx, id, key, at)?)
}

/// Creates the consent resource `id` of `tpp` (`received`, created now).
///
/// Errors: storage (503).
pub fn create_resource(cx: &Ctx<'_>, id: Uuid, tpp: &TppId) -> Result<(), ApiError> {
    let now = rules::secs(cx.clock.now());
    cx.db
        .write(|tx| Ok(store::insert_resource(tx, id, tpp, now)?))
}

/// The TPP terminates the consent resource `id` (`terminatedByTpp`), and with `revoke` (the
/// consent of a `valid` resource) ends that consent's account access, in one transaction.
///
/// Errors: storage (503).
pub fn terminate_resource(
    cx: &Ctx<'_>,
    id: Uuid,
    revoke: Option<&ConsentKey>,
) -> Result<(), ApiError> {
    let now = rules::secs(cx.clock.now());
    cx.db.write(|tx| {
        store::terminate_resource(tx, id, now)?;
        if let Some(key) = revoke {
            revoke_key(tx, key, Revoked::ByTpp, now)?;
        }
        Ok::<_, ApiError>(())
    })
}

/// Marks the consent resource `id` (if any) `rejected`: its SCA was cancelled.
///
/// Errors: storage (503).
pub fn resource_rejected(cx: &Ctx<'_>, id: Uuid) -> Result<(), ApiError> {
    let now = rules::secs(cx.clock.now());
    cx.db.write(|tx| Ok(store::resource_rejected(tx, id, now)?))
}

/// How long the SCA of a session is valid (interface document, Limits: "SCA session
/// validity, TPP-Session-ID, 1 hour"; SCA session state rule 1).
pub const SCA_SESSION_LIFETIME: Duration = Duration::from_secs(3600);

/// Why a PSU-present request of (TPP, PSU-ID) in `session` (its `TPP-Session-ID`, if any)
/// needs a new SCA; `None` when its session's SCA is valid. See the module documentation.
///
/// Errors: storage (503).
pub fn session_refusal(
    cx: &Ctx<'_>,
    tpp: &TppId,
    psu_id: Uuid,
    session: Option<&str>,
) -> Result<Option<String>, ApiError> {
    Ok(session_check(cx, tpp, psu_id, session)?
        .err()
        .map(|e| e.to_string()))
}

/// Why a PSU-present request needs a new SCA of its session (SCA session state rules 1 and 3
/// of the interface document); the message is the `tppMessages` text of the 401 answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SessionRefusal {
    /// The session's SCA was superseded by the SCA of a newer session of the PSU (rule 3).
    #[error(
        "TPP-Session-ID {session:?} ended when the SCA of a newer session of this PSU \
         completed (SCA session rule 3): a new SCA is needed"
    )]
    Superseded {
        /// The request's `TPP-Session-ID`.
        session: String,
    },
    /// The SCA of the named session is older than [`SCA_SESSION_LIFETIME`] (rule 1).
    #[error(
        "the SCA of TPP-Session-ID {session:?} is older than 1 hour (SCA session rule 1): \
         a new SCA is needed while the PSU is present"
    )]
    SessionExpired {
        /// The request's `TPP-Session-ID`.
        session: String,
    },
    /// A new `TPP-Session-ID` while another session of the PSU is still valid (rule 3).
    #[error(
        "TPP-Session-ID {session:?} is new while session {valid:?} is still valid: a new \
         session needs its own SCA (SCA session rule 3); {valid:?} stays valid unless \
         this SCA completes"
    )]
    NewSession {
        /// The request's `TPP-Session-ID`.
        session: String,
        /// The session that is still valid.
        valid: String,
    },
    /// A new `TPP-Session-ID` and no valid session of the PSU.
    #[error("no SCA in TPP-Session-ID {session:?} yet: SCA needed")]
    NoSca {
        /// The request's `TPP-Session-ID`.
        session: String,
    },
    /// No `TPP-Session-ID` given and the PSU has no SCA session with this TPP.
    #[error("the PSU has no SCA session with this TPP: SCA needed")]
    NoSession,
    /// No `TPP-Session-ID` given and the PSU's current session is older than
    /// [`SCA_SESSION_LIFETIME`] (rule 1).
    #[error(
        "the SCA of the PSU's current session {current:?} is older than 1 hour (SCA session \
         rule 1): a new SCA is needed while the PSU is present"
    )]
    CurrentExpired {
        /// The PSU's current session.
        current: String,
    },
}

/// [`session_refusal`] with the other answer too: `Ok(Ok(deadline))` when the session's SCA
/// is valid, `deadline` being the last second (Unix seconds, inclusive) it stays valid
/// (its SCA time + [`SCA_SESSION_LIFETIME`]); `Ok(Err(reason))` when a new SCA is needed.
///
/// Errors: storage (503).
pub fn session_check(
    cx: &Ctx<'_>,
    tpp: &TppId,
    psu_id: Uuid,
    session: Option<&str>,
) -> Result<Result<i64, SessionRefusal>, ApiError> {
    let rows = cx.db.read(|c| store::sessions(c, tpp, psu_id))?;
    let now = rules::secs(cx.clock.now());
    let limit = i64::try_from(SCA_SESSION_LIFETIME.as_secs()).unwrap_or(i64::MAX);
    let fresh = |r: &store::SessionRow| now.saturating_sub(r.sca_at) <= limit;
    let deadline = |r: &store::SessionRow| Ok(r.sca_at.saturating_add(limit));
    Ok(match session {
        Some(sid) => {
            let session = sid.to_string();
            match rows.iter().find(|r| r.session_id == sid) {
                Some(r) if r.superseded => Err(SessionRefusal::Superseded { session }),
                Some(r) if !fresh(r) => Err(SessionRefusal::SessionExpired { session }),
                Some(r) => deadline(r),
                None => Err(match rows.iter().find(|r| !r.superseded && fresh(r)) {
                    Some(o) => SessionRefusal::NewSession {
                        session,
                        valid: o.session_id.clone(),
                    },
                    None => SessionRefusal::NoSca { session },
                }),
            }
        }
        None => match rows.iter().find(|r| !r.superseded) {
            None => Err(SessionRefusal::NoSession),
            Some(r) if !fresh(r) => Err(SessionRefusal::CurrentExpired {
                current: r.session_id.clone(),
            }),
            Some(r) => deadline(r),
        },
    })
}

/// Records a completed SCA of (TPP, PSU-ID) in `session_id` and runs `extra` (card consents,
/// registration, ...) in the same transaction: the session's SCA time is now, every other
/// session of the PSU with this TPP ends (rule 3), and the revocation of `consent` (the
/// consent the SCA gave, if any) is lifted.
///
/// Errors: storage (503), or what `extra` returns.
pub fn record_completed_sca(
    cx: &Ctx<'_>,
    tpp: &TppId,
    psu_id: Uuid,
    session_id: &str,
    consent: Option<&ConsentKey>,
    extra: impl FnOnce(&Conn<'_>) -> Result<(), ApiError>,
) -> Result<(), ApiError> {
    let now = rules::secs(cx.clock.now());
    let psu = psu_id.to_string();
    cx.db.write(|tx| {
        store::record_session(tx, tpp, &psu, session_id, now)?;
        if let Some(k) = consent {
            store::lift_revocation(tx, k)?;
        }
        extra(tx)
    })
}

/// Records that `psu_id` of `tpp` is `customer` (inside [`record_completed_sca`]).
pub fn register(
    tx: &Conn<'_>,
    tpp: &TppId,
    psu_id: Uuid,
    customer: Uuid,
    at: i64,
) -> Result<(), ApiError> {
    Ok(store::register_pisp(tx, tpp, psu_id, customer, at)?)
}

/// The customer behind `psu_id` for `tpp`, however the PSU-ID came to be: the one resolver
/// of a `PSU-ID` header for every module (accounts, cards, consents, agreements, payments,
/// signing baskets, revocation).
///
/// A PSU-ID is "unique per TPP and ASPSP combination, stable" (interface document, Resources,
/// "Redirect parameters after SCA"): UUID v5 of (TPP, customer) ([`psu_id`]) in
/// every flow, so the flows that create one share it, and each records it in its own table:
///
/// | Created by | Table |
/// |---|---|
/// | consent SCA (`/v1/accounts`, `/v1/consents`, ... ; Authentication 11) | store `psu_registrations` |
/// | registration SCA (`GET /v1/users`, `/v1/agreements`; Authentication 15) | `psu_pisp_registrations` |
/// | payment or basket SCA, `X-PSU-IDENTITY` ("a PSU-ID is then created") | `pis_psus` |
///
/// All three are checked, so a PSU-ID from any of them is known everywhere (Authentication
/// 12: "PSU-ID is set on all requests after registration"). A customer deleted since (sandbox
/// management) resolves to `None`.
///
/// Errors: storage (503).
pub fn psu_customer(cx: &Ctx<'_>, tpp: &TppId, psu_id: Uuid) -> Result<Option<Uuid>, ApiError> {
    Ok(psu_customer_record(cx, tpp, psu_id)?.map(|c| c.id))
}

/// [`psu_customer`] with the customer's record (read anyway to check that the customer still
/// exists), so that a caller needing its type reads it once (payment initiation: the debtor
/// is usually the PSU's own account; issue 23, writes).
///
/// Errors: as [`psu_customer`].
pub fn psu_customer_record(
    cx: &Ctx<'_>,
    tpp: &TppId,
    psu_id: Uuid,
) -> Result<Option<Customer>, ApiError> {
    let found = match cx.store.psu_customer(tpp, psu_id)? {
        Some(c) => Some(c),
        None => {
            let psu = psu_id.to_string();
            let row: Option<String> =
                cx.db.read(|c| match store::pisp_customer(c, tpp, &psu)? {
                    Some(p) => Ok(Some(p)),
                    None => payments::psu_customer(c, &tpp.0, &psu),
                })?;
            row.and_then(|s| Uuid::parse_str(&s).ok())
        }
    };
    Ok(match found {
        Some(c) => cx.store.customer(c)?,
        None => None,
    })
}

/// Marks authorisation `id` as a registration SCA (no account consent step).
fn mark_registration(cx: &Ctx<'_>, id: Uuid) -> Result<(), ApiError> {
    cx.db.write(|tx| Ok(store::mark_registration(tx, id)?))
}

/// Whether authorisation `id` is a registration SCA (started by `GET /v1/users` or by
/// `GET /v1/agreements` without a known PSU-ID).
pub fn is_registration(cx: &Ctx<'_>, id: Uuid) -> bool {
    cx.db
        .read(|c| store::is_registration(c, id))
        .unwrap_or(false)
}

/// Starts a registration SCA; returns its `scaRedirect` href.
///
/// Errors: 400 `FORMAT_ERROR` for a missing or bad `TPP-Redirect-URI` or `TPP-Session-ID`;
/// storage (503).
pub fn start_registration(cx: &Ctx<'_>, tpp: &Tpp, psu: &PsuContext) -> Result<String, ApiError> {
    let (id, href) = begin_sca(cx, tpp, psu, "PSU registration needs SCA")?;
    mark_registration(cx, id)?;
    Ok(href)
}

/// Binds the SCA authorisation `id` to the browser whose secret hashes to `hash` (SHA-256,
/// hex; see [`crate::sandbox::http::sca_guard`]) unless a browser is bound already, and
/// forgets the bindings older than `keep_secs`; how many were bound (0: another request
/// bound it first).
///
/// Errors: storage.
pub fn bind_browser(
    cx: &Ctx<'_>,
    id: &str,
    hash: &str,
    keep_secs: i64,
) -> Result<usize, crate::sandbox::store::error::StoreError> {
    let now = rules::secs(cx.clock.now());
    Ok(cx.db.write_raw(|tx| {
        crate::sandbox::store::sca_browsers::bind(tx, id, hash, now, now - keep_secs)
    })?)
}

/// Who ended a consent before its time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Revoked {
    /// The PSU, at the bank (`DELETE /v1/sandbox/consents/{psuId}`): `revokedByPsu`.
    ByPsu,
    /// The TPP (`DELETE /v1/consents/{consentId}`): `terminatedByTpp`.
    ByTpp,
}

/// Whether consent `key` was revoked by the PSU or terminated by the TPP (and no new SCA
/// for it completed since).
///
/// Errors: storage (503).
pub fn revocation(cx: &Ctx<'_>, key: &ConsentKey) -> Result<Option<Revoked>, ApiError> {
    let by_tpp = cx.db.read(|c| store::revocation(c, key))?;
    Ok(by_tpp.map(|t| if t { Revoked::ByTpp } else { Revoked::ByPsu }))
}

/// The PSU revokes, directly at the ASPSP (`DELETE /v1/sandbox/consents/{psuId}`), every
/// consent (PRIVATE and each CORPORATE one) it gave `tpp` (`revokedByPsu`), in one
/// transaction.
///
/// Errors: 404 `RESOURCE_UNKNOWN` when the PSU-ID is unknown to this TPP; storage (503).
pub fn revoke_by_psu(cx: &Ctx<'_>, tpp: &TppId, psu_id: Uuid) -> Result<(), ApiError> {
    if psu_customer(cx, tpp, psu_id)?.is_none() {
        return Err(ApiError::not_found(format!(
            "PSU-ID {psu_id} is not known to this TPP"
        )));
    }
    let agreements = std::iter::once(None).chain(
        cx.store
            .corporate_consents(tpp, psu_id)?
            .into_iter()
            .map(Some),
    );
    let mut keys = Vec::new();
    for agreement in agreements {
        let key = ConsentKey {
            tpp: tpp.clone(),
            psu_id,
            agreement,
        };
        if cx.store.consent(&key)?.is_some() {
            keys.push(key);
        }
    }
    let now = rules::secs(cx.clock.now());
    cx.db.write(|tx| {
        for key in &keys {
            revoke_key(tx, key, Revoked::ByPsu, now)?;
        }
        Ok::<_, ApiError>(())
    })
}

/// Marks consent `key` revoked at `at` (seconds), by the TPP or the PSU.
///
/// Errors: storage (503).
pub fn revoke_key(tx: &Conn<'_>, key: &ConsentKey, by: Revoked, at: i64) -> Result<(), ApiError> {
    Ok(store::revoke(tx, key, by == Revoked::ByTpp, at)?)
}

/// Replaces the card accounts of consent `key` by `cards` (inside the transaction that
/// records the completed SCA, [`record_completed_sca`]).
///
/// Errors: storage (503).
pub fn replace_consent(tx: &Conn<'_>, key: &ConsentKey, cards: &[Uuid]) -> Result<(), ApiError> {
    Ok(store::replace_card_consent(tx, key, cards)?)
}

/// The card accounts of consent `key`, in the order ticked.
///
/// Errors: storage (503).
pub fn consented(cx: &Ctx<'_>, key: &ConsentKey) -> Result<Vec<Uuid>, ApiError> {
    let ids = cx.db.read(|c| store::consented_cards(c, key))?;
    Ok(ids.iter().filter_map(|s| Uuid::parse_str(s).ok()).collect())
}

/// The `psu-id` of a customer towards a TPP: UUID v5, stable per (TPP, customer) (interface
/// document: "Unique per TPP and ASPSP combination, stable").
pub fn psu_id(tpp: &TppId, customer: Uuid) -> Uuid {
    Uuid::new_v5(
        &crate::sandbox::domain::seed::namespace(),
        format!("psu:{}:{customer}", tpp.0).as_bytes(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    /// Authorisation ids never show a run of ten decimal digits in their text (the text the
    /// answers and rows use, `to_string`'s), and the stack encoding the check and the
    /// `scaRedirect` use is that text.
    #[test]
    fn authorisation_ids_have_no_long_digit_run_in_their_text() {
        for _ in 0..5_000 {
            let id = authorisation_id();
            let text = id.to_string();
            assert_eq!(
                id.hyphenated().encode_lower(&mut Uuid::encode_buffer()),
                text.as_str()
            );
            let longest = text
                .split(|c: char| !c.is_ascii_digit())
                .map(str::len)
                .max()
                .unwrap_or(0);
            assert!(longest < 10, "{text}");
        }
        let id = crate::sandbox::domain::payment::new_authorisation_id();
        assert_eq!(Uuid::parse_str(&id).map(|u| u.to_string()).ok(), Some(id));
    }

    /// The remembered redirect URI answers as the URL rule does, whatever the order of URIs
    /// and TPPs: only the same TPP's same accepted URI is taken from memory.
    #[test]
    fn a_remembered_redirect_uri_answers_as_parsing_it_for_every_tpp() {
        let a = TppId(Arc::from("PSDNO-FSA-A"));
        let b = TppId(Arc::from("PSDNO-FSA-B"));
        let uris = [
            "https://tpp.example/cb?x=1",
            "https://tpp.example/cb?x=2",
            "https://tpp.example/cb?x=1 ",
            "http://localhost:8080/",
            "ftp://tpp.example/",
            "not a url",
            "https://",
            "mailto:a@b.example",
            "",
        ];
        for round in 0..3 {
            for (i, uri) in uris.iter().enumerate() {
                for tpp in [&a, &b, &a] {
                    assert_eq!(
                        is_redirect_url(tpp, uri),
                        is_absolute_http_url(uri),
                        "round {round}, {uri:?} for {}",
                        tpp.0
                    );
                    // The accepted first URI, then this one again, then the first again.
                    assert!(is_redirect_url(tpp, uris[0]));
                    assert_eq!(is_redirect_url(tpp, uri), is_absolute_http_url(uri), "{i}");
                }
            }
        }
        assert!(is_absolute_http_url(uris[0]) && !is_absolute_http_url(uris[4]));
        assert!(!is_absolute_http_url("https://"));
    }

    #[test]
    fn remembered_access_holds_only_for_the_same_data_and_within_consent_and_session() {
        let at = |s: u64| UNIX_EPOCH + Duration::from_secs(s);
        let v = Validity {
            version: 7,
            from: at(1_000),
            consent_until: at(5_000),
            session_until: Some(4_000),
        };
        assert!(v.holds(7, at(1_000)));
        assert!(v.holds(7, at(4_000) + Duration::from_millis(999)));
        // Any committed write changes the version.
        assert!(!v.holds(8, at(2_000)));
        // The clock set back before the decision: decided again.
        assert!(!v.holds(7, at(999)));
        // The SCA session's hour is over after its last second.
        assert!(!v.holds(7, at(4_001)));
        let unattended = Validity {
            session_until: None,
            ..v
        };
        assert!(unattended.holds(7, at(5_000)));
        // The consent's 180 days are over.
        assert!(!unattended.holds(7, at(5_000) + Duration::from_nanos(1)));
    }

    /// A decision's key (borrowed from the request, issue 23) tells apart every TPP, PSU
    /// header, PSU presence and account, leaves out only `TPP-Redirect-URI`, and the copy
    /// [`Decisions`] keeps compares and hashes as the request's key.
    #[test]
    fn decision_keys_tell_apart_all_but_the_redirect_uri_and_the_kept_copy_matches() {
        let tpp = |id: &str| Tpp {
            id: TppId(id.into()),
            name: "TPP".into(),
        };
        let text = |t: &str| HeaderText::Text(t.to_string());
        let psu = PsuContext {
            psu_id: text("psu-1"),
            corporate_id: HeaderText::Absent,
            session_id: text("session"),
            redirect_uri: text("https://tpp.example/cb"),
            present: false,
        };
        let (a, b) = (tpp("tpp-a"), tpp("tpp-b"));
        let decisions = Decisions::default();
        let key = DecisionKey::of(&a, &psu, Some("acc"));
        let other_redirect = PsuContext {
            redirect_uri: text("https://elsewhere.example/"),
            ..psu.clone()
        };
        let same = DecisionKey::of(&a, &other_redirect, Some("acc"));
        assert_eq!(key.parts(), same.parts());
        let hash = |k: &dyn Fn(&mut foldhash::fast::FoldHasher)| {
            let mut h =
                std::hash::BuildHasher::build_hasher(decisions.map.lock().unwrap().hasher());
            k(&mut h);
            std::hash::Hasher::finish(&h)
        };
        let hash_of = |k: &DecisionKey<'_>| hash(&|h| std::hash::Hash::hash(k, h));
        assert_eq!(hash_of(&key), hash_of(&same));
        let others = [
            PsuContext {
                psu_id: text("psu-2"),
                ..psu.clone()
            },
            PsuContext {
                corporate_id: text("corp"),
                ..psu.clone()
            },
            PsuContext {
                session_id: HeaderText::Invalid,
                ..psu.clone()
            },
            PsuContext {
                present: true,
                ..psu.clone()
            },
        ];
        let mut differ: Vec<DecisionKey<'_>> = others
            .iter()
            .map(|p| DecisionKey::of(&a, p, Some("acc")))
            .collect();
        differ.push(DecisionKey::of(&b, &psu, Some("acc")));
        differ.push(DecisionKey::of(&a, &psu, Some("acc2")));
        differ.push(DecisionKey::of(&a, &psu, None));
        for d in &differ {
            assert_ne!(d.parts(), key.parts(), "{d:?}");
        }
        let kept = key.owned();
        assert_eq!(kept.psu.redirect_uri, HeaderText::Absent);
        assert_eq!(kept.key().parts(), key.parts());
        // The kept key hashes as the request's key and is found by it.
        assert_eq!(hash(&|h| std::hash::Hash::hash(&kept, h)), hash_of(&key));
        assert!(hashbrown::Equivalent::equivalent(&key, &kept));
        assert!(!hashbrown::Equivalent::equivalent(&differ[0], &kept));
    }

    /// The card access cache is searched by a key borrowed from the request
    /// ([`CardLookup`]): it finds the kept key of the same consent, card account id (as
    /// sent) and data version, and no other: another TPP, PSU, agreement, id or version
    /// misses (no TPP finds another's decision).
    #[test]
    fn card_lookups_find_only_their_own_kept_key() {
        let consent = |tpp: &str, psu: u128, agreement: Option<u128>| ConsentKey {
            tpp: TppId(tpp.into()),
            psu_id: Uuid::from_u128(psu),
            agreement: agreement.map(Uuid::from_u128),
        };
        let id = "5f0c6a4e-0f7c-4a57-9a8e-3f1d2b6c7d8e";
        let kept = [
            (consent("tpp-a", 1, None), id.to_string(), 7),
            (consent("tpp-a", 1, Some(9)), id.to_string(), 7),
        ];
        let mut map: hashbrown::HashMap<CardAccessKey, usize, foldhash::fast::RandomState> =
            hashbrown::HashMap::default();
        for (i, k) in kept.iter().enumerate() {
            map.insert(k.clone(), i);
        }
        let a = consent("tpp-a", 1, None);
        assert_eq!(map.get(&CardLookup(&a, id, 7)), Some(&0));
        assert_eq!(map.get(&CardLookup(&kept[1].0, id, 7)), Some(&1));
        let others = [
            consent("tpp-b", 1, None),
            consent("tpp-a", 2, None),
            consent("tpp-a", 1, Some(8)),
        ];
        for o in &others {
            assert_eq!(map.get(&CardLookup(o, id, 7)), None, "{o:?}");
        }
        assert_eq!(map.get(&CardLookup(&a, &id.to_uppercase(), 7)), None);
        assert_eq!(map.get(&CardLookup(&a, id, 8)), None);
    }
}
