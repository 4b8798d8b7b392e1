//! `case export --pseudonymize`: the PSU's identifying values replaced by pseudonyms, the
//! same input by the same pseudonym everywhere in one bundle (exchanges' headers, URLs,
//! parameters and bodies, the HAR made from them, and the copy of the sandbox state), so
//! the case still reads as one story; the manifest lists the kinds replaced
//! ([`Pseudonyms::kinds`], `pseudonymizedKinds`).
//!
//! What counts ([`Pseudonyms::collect_entries`], [`Pseudonyms::collect_state`]), by [`Kind`]:
//!
//! | Kind | Exchanges (headers, parameters, JSON members) | Sandbox state |
//! |---|---|---|
//! | PSU-ID | `PSU-ID`; `psuId`, `psu-id` | every `psu_id` column |
//! | PSU-Corporate-ID | `PSU-Corporate-ID`; `psuCorporateId`, `psu-corporate-id` | `agreements.id` |
//! | customerNumber | `customerNumber` | `customers.number` |
//! | names | `ownerName`, `creditorName`, `debtorName`, `ultimateCreditor`, `ultimateDebtor` | `customers.name`, `customers.employer`, `manual_transactions.creditor_name`, `debtor_name` |
//! | account names | `name` | `accounts.name`, `card_accounts.name`, `agreements.name` |
//! | BBAN | `bban` | `accounts.bban`, account columns holding one |
//! | IBAN | `iban` | account columns holding one |
//!
//! JSON held in the state's text columns (payment bodies) is read the same way. An account
//! name that holds a customer's name ("Brukskonto Kari Nordmann") keeps its other words: the
//! name inside it is replaced; one without a known name is replaced whole.
//!
//! A pseudonym keeps the value's shape: a UUID becomes a UUID (version 5 of the value under a
//! key drawn at random per bundle), other values keep their length and case, digits become
//! digits and letters letters (non-ASCII letters ASCII ones); a Norwegian BBAN keeps its
//! bank code (4 digits) and a valid MOD11 check digit, an IBAN its country and valid check
//! digits around the pseudonym of its BBAN. Replacement ([`Replacer`]) finds every value
//! (ASCII case-insensitive) where it is not part of a longer word (no ASCII letter or digit
//! right before or after). Customer ids and TPP ids stay as they are, so the sandbox state
//! stays consistent; a sandbox started on a pseudonymized state derives real PSU-IDs for
//! SCAs done after export.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use aho_corasick::{AhoCorasick, MatchKind};
use serde_json::Value;
use uuid::Uuid;

use crate::client::history::HistoryEntry;
use crate::sandbox::bundle::{PsuColumn, StateCopy};
use crate::xs2a::check_digits::{BBAN_WEIGHTS, is_norwegian_bban, mod11};
use crate::xs2a::headers as h;

/// What kind of value a pseudonym replaces (named in the manifest, [`Kind::label`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// A `PSU-ID`.
    PsuId,
    /// A `PSU-Corporate-ID`.
    PsuCorporateId,
    /// A sandbox customer's customerNumber (the PSU's login at SCA).
    CustomerNumber,
    /// Names of people and companies (customers, owners, creditors, debtors, employers).
    Name,
    /// Names of accounts, card accounts and agreements.
    AccountName,
    /// A Norwegian BBAN (11 digits).
    Bban,
    /// An IBAN.
    Iban,
}

impl Kind {
    /// The kind of the values of a state column.
    fn of_column(c: PsuColumn) -> Kind {
        match c {
            PsuColumn::PsuId => Kind::PsuId,
            PsuColumn::CustomerNumber => Kind::CustomerNumber,
            PsuColumn::CorporateId => Kind::PsuCorporateId,
            PsuColumn::Name => Kind::Name,
            PsuColumn::AccountName => Kind::AccountName,
            PsuColumn::Bban => Kind::Bban,
        }
    }

    /// Every kind, in manifest order.
    pub const ALL: [Kind; 7] = [
        Kind::PsuId,
        Kind::PsuCorporateId,
        Kind::CustomerNumber,
        Kind::Name,
        Kind::AccountName,
        Kind::Bban,
        Kind::Iban,
    ];

    /// The manifest's word for it.
    pub fn label(self) -> &'static str {
        match self {
            Kind::PsuId => "PSU-ID",
            Kind::PsuCorporateId => "PSU-Corporate-ID",
            Kind::CustomerNumber => "customerNumber",
            Kind::Name => "names (customers, ownerName, creditorName, debtorName)",
            Kind::AccountName => "account names",
            Kind::Bban => "BBAN",
            Kind::Iban => "IBAN",
        }
    }
}

/// The kind of the string values of JSON members named `key`.
fn json_kind(key: &str) -> Option<Kind> {
    Some(match key {
        "customerNumber" => Kind::CustomerNumber,
        "psuId" | "psu-id" => Kind::PsuId,
        "psuCorporateId" | "psu-corporate-id" => Kind::PsuCorporateId,
        "ownerName" | "creditorName" | "debtorName" | "ultimateCreditor" | "ultimateDebtor" => {
            Kind::Name
        }
        "name" => Kind::AccountName,
        "bban" => Kind::Bban,
        "iban" => Kind::Iban,
        _ => return None,
    })
}

/// The values to hide in one bundle and their pseudonyms.
#[derive(Debug, Clone)]
pub struct Pseudonyms {
    key: Uuid,
    /// Lowercased value → (pseudonym, kind).
    map: BTreeMap<String, (String, Kind)>,
    /// Account names, replaced whole only when no name in `map` stands in them
    /// ([`Pseudonyms::resolved`]).
    account_names: BTreeSet<String>,
}

impl Default for Pseudonyms {
    fn default() -> Self {
        Self::new()
    }
}

impl Pseudonyms {
    /// An empty set under a fresh random key.
    pub fn new() -> Self {
        Self::with_key(Uuid::new_v4())
    }

    /// An empty set under `key` (tests: the same key gives the same pseudonyms).
    pub(crate) fn with_key(key: Uuid) -> Self {
        Pseudonyms {
            key,
            map: BTreeMap::new(),
            account_names: BTreeSet::new(),
        }
    }

    /// Adds `value` as a PSU-ID (blank values are ignored); see [`Pseudonyms::add_as`].
    pub fn add(&mut self, value: &str) {
        self.add_as(Kind::PsuId, value);
    }

    /// Adds `value` of `kind` (blank values are ignored; a value already added keeps its
    /// pseudonym and kind).
    pub(crate) fn add_as(&mut self, kind: Kind, value: &str) {
        let v = value.trim();
        if v.is_empty() {
            return;
        }
        match kind {
            Kind::AccountName => {
                self.account_names.insert(v.to_string());
            }
            Kind::Iban => self.add_iban(v),
            Kind::Bban if is_norwegian_bban(v) => {
                let p = self.bban_pseudonym(v);
                self.map.entry(v.to_string()).or_insert((p, Kind::Bban));
            }
            _ => {
                let lower = v.to_ascii_lowercase();
                if self.map.contains_key(&lower) {
                    return;
                }
                let p = self.pseudonym(&lower, v);
                self.map.insert(lower, (p, kind));
            }
        }
    }

    /// An IBAN: its BBAN too; the IBAN's pseudonym is the country, new check digits and the
    /// BBAN's pseudonym. A value that is not an IBAN is pseudonymized as any other.
    fn add_iban(&mut self, v: &str) {
        let compact: String = v.chars().filter(|c| !c.is_whitespace()).collect();
        let upper = compact.to_ascii_uppercase();
        if !crate::xs2a::identifiers::is_iban(&upper) {
            let lower = v.to_ascii_lowercase();
            if !self.map.contains_key(&lower) {
                let p = self.pseudonym(&lower, v);
                self.map.insert(lower, (p, Kind::Iban));
            }
            return;
        }
        let (country, bban) = (&upper[..2], &upper[4..]);
        self.add_as(Kind::Bban, bban);
        let Some(p) = self.get(bban).map(str::to_ascii_uppercase) else {
            return;
        };
        let iban = format!("{country}{:02}{p}", iban_check(country, &p));
        self.map
            .entry(upper.to_ascii_lowercase())
            .or_insert((iban, Kind::Iban));
    }

    /// The pseudonym of `value` when it was added.
    pub fn get(&self, value: &str) -> Option<&str> {
        self.map
            .get(&value.trim().to_ascii_lowercase())
            .map(|(p, _)| p.as_str())
    }

    /// Every value and its pseudonym (lowercased value → (pseudonym, kind)), with the
    /// account names that no name in them covers.
    fn resolved(&self) -> BTreeMap<String, (String, Kind)> {
        let mut map = self.map.clone();
        let names = Replacer::new(
            self.map
                .iter()
                .filter(|(_, (_, k))| *k == Kind::Name)
                .map(|(v, (p, _))| (v.clone(), p.clone())),
        );
        for n in &self.account_names {
            let covered = names
                .as_ref()
                .is_some_and(|r| matches!(r.apply(n.as_bytes()), Cow::Owned(_)));
            let lower = n.to_ascii_lowercase();
            if !covered && !map.contains_key(&lower) {
                let p = self.pseudonym(&lower, n);
                map.insert(lower, (p, Kind::AccountName));
            }
        }
        map
    }

    /// How many values are hidden.
    pub fn len(&self) -> usize {
        self.resolved().len()
    }

    /// Whether no value is hidden.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The kinds of values hidden (in [`Kind::ALL`] order; an account name counts also when
    /// only the name inside it was replaced).
    pub fn kinds(&self) -> Vec<Kind> {
        let map = self.resolved();
        let mut seen: BTreeSet<Kind> = map.values().map(|(_, k)| *k).collect();
        if !self.account_names.is_empty() && seen.contains(&Kind::Name) {
            seen.insert(Kind::AccountName);
        }
        Kind::ALL.into_iter().filter(|k| seen.contains(k)).collect()
    }

    /// A pseudonym of the same shape as `original` whose digits and letters are drawn from
    /// `lower` (its lowercase form) under the key: see the module documentation.
    fn pseudonym(&self, lower: &str, original: &str) -> String {
        if Uuid::parse_str(lower).is_ok() {
            return Uuid::new_v5(&self.key, format!("uuid:{lower}").as_bytes()).to_string();
        }
        self.shaped(lower, original, "")
    }

    /// `original` with each digit and letter replaced from a key stream of `salt` and
    /// `lower`.
    fn shaped(&self, lower: &str, original: &str, salt: &str) -> String {
        let mut out = String::with_capacity(original.len());
        let mut stream = Vec::new();
        for (i, ch) in original.chars().enumerate() {
            if i % 32 == 0 {
                let block = i / 32;
                stream = aws_lc_rs::digest::digest(
                    &aws_lc_rs::digest::SHA256,
                    format!("{}:{salt}{block}:{lower}", self.key).as_bytes(),
                )
                .as_ref()
                .to_vec();
            }
            let b = stream.get(i % 32).copied().unwrap_or(0);
            out.push(match ch {
                '0'..='9' => char::from(b'0' + b % 10),
                c if c.is_uppercase() => char::from(b'A' + b % 26),
                c if c.is_alphabetic() => char::from(b'a' + b % 26),
                other => other,
            });
        }
        out
    }

    /// A Norwegian BBAN's pseudonym: the same bank code (first 4 digits), 6 drawn digits and
    /// a valid MOD11 check digit, never the BBAN itself.
    fn bban_pseudonym(&self, bban: &str) -> String {
        for attempt in 0..1000 {
            let drawn = self.shaped(bban, &bban[4..10], &format!("bban{attempt}:"));
            let body = format!("{}{drawn}", &bban[..4]);
            if let Some(check) = mod11(&body, &BBAN_WEIGHTS) {
                let p = format!("{body}{check}");
                if p != bban {
                    return p;
                }
            }
        }
        self.shaped(bban, bban, "")
    }

    /// Adds the PSU values of `entries`: PSU-ID and PSU-Corporate-ID headers and parameters,
    /// and the JSON members of the module table in JSON bodies.
    pub(crate) fn collect_entries(&mut self, entries: &[HistoryEntry]) {
        let kind = |n: &str| {
            if n.eq_ignore_ascii_case(h::PSU_ID) {
                Some(Kind::PsuId)
            } else if n.eq_ignore_ascii_case(h::PSU_CORPORATE_ID) {
                Some(Kind::PsuCorporateId)
            } else {
                None
            }
        };
        for e in entries {
            for (n, v) in e.request_headers.iter().chain(&e.params) {
                if let Some(k) = kind(n) {
                    self.add_as(k, v);
                }
            }
            if let Ok(u) = url::Url::parse(&e.url) {
                for (n, v) in u.query_pairs() {
                    if let Some(k) = kind(&n) {
                        self.add_as(k, &v);
                    }
                }
            }
            for body in [&e.request_body, &e.response_body] {
                if let Ok(j) = serde_json::from_slice::<Value>(body) {
                    self.collect_json(&j);
                }
            }
        }
    }

    fn collect_json(&mut self, j: &Value) {
        match j {
            Value::Object(m) => {
                for (k, v) in m {
                    match (v, json_kind(k)) {
                        (Value::String(s), Some(kind)) => self.add_as(kind, s),
                        (other, _) => self.collect_json(other),
                    }
                }
            }
            Value::Array(a) => a.iter().for_each(|v| self.collect_json(v)),
            _ => {}
        }
    }

    /// Adds the PSU values of a copy of the sandbox state
    /// ([`crate::sandbox::bundle::StateCopy::psu_values`]): the values of the columns of a
    /// known kind as that kind, and the JSON or account numbers held in any other text column.
    ///
    /// Errors: SQLite's.
    pub(crate) fn collect_state(&mut self, state: &StateCopy) -> rusqlite::Result<()> {
        for (column, v) in state.psu_values()? {
            match column {
                Some(c) => self.add_as(Kind::of_column(c), &v),
                None => self.collect_text(&v),
            }
        }
        Ok(())
    }

    /// A text value of a column with no kind of its own: JSON (a payment body) is read for
    /// its members; an account number (IBAN, Norwegian BBAN) is taken as one.
    fn collect_text(&mut self, v: &str) {
        let t = v.trim_start();
        if t.starts_with('{') || t.starts_with('[') {
            if let Ok(j) = serde_json::from_str::<Value>(t) {
                self.collect_json(&j);
            }
        } else if is_norwegian_bban(v) {
            self.add_as(Kind::Bban, v);
        } else if crate::xs2a::identifiers::is_iban(v) {
            self.add_as(Kind::Iban, v);
        }
    }

    /// The replacer of every value by its pseudonym; `None` when there is nothing to hide.
    pub(crate) fn replacer(&self) -> Option<Replacer> {
        Replacer::new(self.resolved().into_iter().map(|(k, (v, _))| (k, v)))
    }
}

/// ISO 7064 MOD 97-10 check digits of an IBAN of `country` and `bban` (upper case).
fn iban_check(country: &str, bban: &str) -> u32 {
    let mut rem: u32 = 0;
    for c in format!("{bban}{country}00").bytes() {
        rem = if c.is_ascii_digit() {
            (rem * 10 + u32::from(c - b'0')) % 97
        } else {
            (rem * 100 + u32::from(c.to_ascii_uppercase().saturating_sub(b'A')) + 10) % 97
        };
    }
    98 - rem
}

/// Replaces values by others wherever they stand as words ([`Replacer::apply`]).
#[derive(Debug, Clone)]
pub(crate) struct Replacer {
    ac: AhoCorasick,
    to: Vec<String>,
}

impl Replacer {
    /// A replacer of each `(from, to)`, matching `from` ASCII case-insensitively, longest
    /// first; `None` for no pairs (or when the automaton cannot be built).
    pub fn new(pairs: impl IntoIterator<Item = (String, String)>) -> Option<Self> {
        let (from, to): (Vec<String>, Vec<String>) =
            pairs.into_iter().filter(|(f, _)| !f.is_empty()).unzip();
        if from.is_empty() {
            return None;
        }
        let ac = AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::LeftmostLongest)
            .build(&from)
            .ok()?;
        Some(Replacer { ac, to })
    }

    /// `text` with every match replaced, unless an ASCII letter or digit stands right before
    /// or after it (part of a longer word or number).
    pub fn apply<'a>(&self, text: &'a [u8]) -> Cow<'a, [u8]> {
        let word = |b: Option<&u8>| b.is_some_and(u8::is_ascii_alphanumeric);
        let mut out: Option<Vec<u8>> = None;
        let mut last = 0;
        for m in self.ac.find_iter(text) {
            if word(m.start().checked_sub(1).and_then(|i| text.get(i))) || word(text.get(m.end())) {
                continue;
            }
            let o = out.get_or_insert_with(|| Vec::with_capacity(text.len()));
            o.extend_from_slice(&text[last..m.start()]);
            o.extend_from_slice(self.to[m.pattern().as_usize()].as_bytes());
            last = m.end();
        }
        match out {
            None => Cow::Borrowed(text),
            Some(mut o) => {
                o.extend_from_slice(&text[last..]);
                Cow::Owned(o)
            }
        }
    }

    /// [`Replacer::apply`] on text (the replacements are UTF-8, so the result is too).
    pub(crate) fn apply_str(&self, text: &str) -> String {
        String::from_utf8_lossy(&self.apply(text.as_bytes())).into_owned()
    }

    /// `entry` with every header, parameter, URL and body rewritten.
    pub(crate) fn apply_entry(&self, entry: &HistoryEntry) -> HistoryEntry {
        let pairs = |v: &[(String, String)]| -> Vec<(String, String)> {
            v.iter()
                .map(|(n, x)| (n.clone(), self.apply_str(x)))
                .collect()
        };
        HistoryEntry {
            params: pairs(&entry.params),
            url: self.apply_str(&entry.url),
            path_and_query: self.apply_str(&entry.path_and_query),
            request_headers: pairs(&entry.request_headers),
            request_body: self.apply(&entry.request_body).into_owned(),
            response_headers: pairs(&entry.response_headers),
            response_body: self.apply(&entry.response_body).into_owned(),
            ..entry.clone()
        }
    }

    /// Rewrites every text and blob value of a copy of the sandbox state
    /// ([`crate::sandbox::bundle::StateCopy::rewrite`]) with [`Replacer::apply`]. Returns how
    /// many values changed.
    ///
    /// Errors: SQLite's (nothing is changed then).
    pub(crate) fn apply_state(&self, state: &mut StateCopy) -> rusqlite::Result<usize> {
        state.rewrite(|b| match self.apply(b) {
            Cow::Owned(o) => Some(o),
            Cow::Borrowed(_) => None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pseudonyms_keep_the_shape_and_are_stable_per_key() {
        let key = Uuid::new_v4();
        let mut a = Pseudonyms::with_key(key);
        let psu = "8c5f3a52-7c1e-5a8e-9f7a-0e1d2c3b4a59";
        a.add(psu);
        a.add("31125461118");
        a.add(&psu.to_uppercase());
        assert_eq!(a.len(), 2, "case-insensitive: one value");
        let p = a.get(psu).unwrap().to_string();
        assert!(Uuid::parse_str(&p).is_ok());
        assert_ne!(p, psu);
        let n = a.get("31125461118").unwrap();
        assert_eq!(n.len(), 11);
        assert!(n.bytes().all(|b| b.is_ascii_digit()));
        let mut b = Pseudonyms::with_key(key);
        b.add(psu);
        assert_eq!(b.get(psu), Some(p.as_str()));
        let mut c = Pseudonyms::with_key(Uuid::new_v4());
        c.add(psu);
        assert_ne!(
            c.get(psu),
            Some(p.as_str()),
            "another bundle, another pseudonym"
        );
    }

    #[test]
    fn replacement_is_whole_words_only() {
        let r = Replacer::new([("123".to_string(), "999".to_string())]).unwrap();
        assert_eq!(
            r.apply_str("a 123, 1234, x123, /123/"),
            "a 999, 1234, x123, /999/"
        );
        assert!(matches!(r.apply(b"nothing"), Cow::Borrowed(_)));
    }

    #[test]
    fn databases_are_rewritten_in_every_text_column() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("state.sqlite3");
        let c = rusqlite::Connection::open(&file).unwrap();
        c.execute_batch(
            "CREATE TABLE customers (id TEXT, number TEXT NOT NULL, n INTEGER);
             INSERT INTO customers VALUES ('c1', '31125461118', 7);
             CREATE TABLE payments (body BLOB, psu_id TEXT);
             INSERT INTO payments VALUES (CAST('{\"n\":\"31125461118\"}' AS BLOB), 'p-1');
             CREATE TABLE k (a TEXT PRIMARY KEY) WITHOUT ROWID;",
        )
        .unwrap();
        let mut state = StateCopy::open(&file).unwrap();
        let mut p = Pseudonyms::new();
        p.collect_state(&state).unwrap();
        assert!(p.get("31125461118").is_some() && p.get("p-1").is_some());
        assert!(p.get("c1").is_none());
        let r = p.replacer().unwrap();
        assert_eq!(r.apply_state(&mut state).unwrap(), 3);
        let (num, body): (String, Vec<u8>) = c
            .query_row(
                "SELECT number, (SELECT body FROM payments) FROM customers",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        assert_eq!(num, p.get("31125461118").unwrap());
        assert_eq!(
            String::from_utf8(body).unwrap(),
            format!("{{\"n\":\"{num}\"}}")
        );
    }
}
