//! `case export --pseudonymize`: PSU-IDs, PSU-Corporate-IDs and customer numbers replaced by
//! pseudonyms, the same input by the same pseudonym everywhere in one bundle (exchanges'
//! headers, URLs, parameters and bodies, and the copy of the sandbox state), so the case
//! still reads as one story.
//!
//! What counts ([`Pseudonyms::collect_entries`], [`Pseudonyms::collect_db`]): the values of
//! the `PSU-ID` and `PSU-Corporate-ID` headers and parameters; JSON members named
//! `customerNumber`, `psuId`, `psu-id`, `psuCorporateId`, `psu-corporate-id` in any body;
//! in the sandbox state every `psu_id` column, every customer's `number` and every agreement
//! `id` (an agreement id is what a corporate PSU sends as PSU-Corporate-ID).
//!
//! A pseudonym keeps the value's shape: a UUID becomes a UUID (version 5 of the value under a
//! key drawn at random per bundle), other values keep their length, digits become digits and
//! letters letters. Replacement ([`Replacer`]) finds every value (ASCII case-insensitive)
//! where it is not part of a longer word (no ASCII letter or digit right before or after).
//! Customer ids and TPP ids stay as they are, so the sandbox state stays consistent; a
//! sandbox started on a pseudonymized state derives real PSU-IDs for SCAs done after export.

use std::borrow::Cow;
use std::collections::BTreeMap;

use aho_corasick::{AhoCorasick, MatchKind};
use rusqlite::Connection;
use serde_json::Value;
use uuid::Uuid;

use crate::client::history::HistoryEntry;
use crate::xs2a::headers as h;

/// JSON member names whose string values are pseudonymized (customer numbers, PSU-IDs,
/// PSU-Corporate-IDs).
const JSON_KEYS: [&str; 5] = [
    "customerNumber",
    "psuId",
    "psu-id",
    "psuCorporateId",
    "psu-corporate-id",
];

/// The values to hide in one bundle and their pseudonyms.
#[derive(Debug, Clone)]
pub struct Pseudonyms {
    key: Uuid,
    /// Lowercased value → pseudonym.
    map: BTreeMap<String, String>,
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
    pub fn with_key(key: Uuid) -> Self {
        Pseudonyms {
            key,
            map: BTreeMap::new(),
        }
    }

    /// Adds `value` (blank values are ignored).
    pub fn add(&mut self, value: &str) {
        let v = value.trim();
        if v.is_empty() {
            return;
        }
        let lower = v.to_ascii_lowercase();
        if self.map.contains_key(&lower) {
            return;
        }
        let p = self.pseudonym(&lower);
        self.map.insert(lower, p);
    }

    /// The pseudonym of `value` when it was added.
    pub fn get(&self, value: &str) -> Option<&str> {
        self.map
            .get(&value.trim().to_ascii_lowercase())
            .map(String::as_str)
    }

    /// How many values are hidden.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether no value is hidden.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// A pseudonym of the same shape as `value` (lowercase): see the module documentation.
    fn pseudonym(&self, value: &str) -> String {
        if Uuid::parse_str(value).is_ok() {
            return Uuid::new_v5(&self.key, format!("uuid:{value}").as_bytes()).to_string();
        }
        let mut out = String::with_capacity(value.len());
        let mut stream = Vec::new();
        for (i, ch) in value.chars().enumerate() {
            if i % 32 == 0 {
                let block = i / 32;
                stream = aws_lc_rs::digest::digest(
                    &aws_lc_rs::digest::SHA256,
                    format!("{}:{block}:{value}", self.key).as_bytes(),
                )
                .as_ref()
                .to_vec();
            }
            let b = stream.get(i % 32).copied().unwrap_or(0);
            out.push(match ch {
                '0'..='9' => char::from(b'0' + b % 10),
                'a'..='z' => char::from(b'a' + b % 26),
                'A'..='Z' => char::from(b'A' + b % 26),
                other => other,
            });
        }
        out
    }

    /// Adds the PSU values of `entries`: PSU-ID and PSU-Corporate-ID headers and parameters,
    /// and the [`JSON_KEYS`] members of JSON bodies.
    pub fn collect_entries(&mut self, entries: &[HistoryEntry]) {
        let named = |n: &str| {
            n.eq_ignore_ascii_case(h::PSU_ID) || n.eq_ignore_ascii_case(h::PSU_CORPORATE_ID)
        };
        for e in entries {
            for (n, v) in e.request_headers.iter().chain(&e.params) {
                if named(n) {
                    self.add(v);
                }
            }
            if let Ok(u) = url::Url::parse(&e.url) {
                for (k, v) in u.query_pairs() {
                    if named(&k) {
                        self.add(&v);
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
                    match v {
                        Value::String(s) if JSON_KEYS.contains(&k.as_str()) => self.add(s),
                        other => self.collect_json(other),
                    }
                }
            }
            Value::Array(a) => a.iter().for_each(|v| self.collect_json(v)),
            _ => {}
        }
    }

    /// Adds the PSU values of a sandbox state database: every `psu_id` column, the
    /// customers' `number`s and the agreements' `id`s.
    ///
    /// Errors: SQLite's.
    pub fn collect_db(&mut self, conn: &Connection) -> rusqlite::Result<()> {
        let mut columns: Vec<(String, String)> = Vec::new();
        for table in tables(conn)? {
            for col in text_columns(conn, &table)? {
                let wanted = col == "psu_id"
                    || (table == "customers" && col == "number")
                    || (table == "agreements" && col == "id");
                if wanted {
                    columns.push((table.clone(), col));
                }
            }
        }
        for (t, c) in columns {
            let mut st = conn.prepare(&format!(
                "SELECT DISTINCT CAST({} AS TEXT) FROM {} WHERE {} IS NOT NULL",
                quote(&c),
                quote(&t),
                quote(&c)
            ))?;
            let values = st.query_map([], |r| r.get::<_, String>(0))?;
            for v in values {
                self.add(&v?);
            }
        }
        Ok(())
    }

    /// The replacer of every value by its pseudonym; `None` when there is nothing to hide.
    pub fn replacer(&self) -> Option<Replacer> {
        Replacer::new(self.map.iter().map(|(k, v)| (k.clone(), v.clone())))
    }
}

/// Replaces values by others wherever they stand as words ([`Replacer::apply`]).
#[derive(Debug, Clone)]
pub struct Replacer {
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
    pub fn apply_str(&self, text: &str) -> String {
        String::from_utf8_lossy(&self.apply(text.as_bytes())).into_owned()
    }

    /// `entry` with every header, parameter, URL and body rewritten.
    pub fn apply_entry(&self, entry: &HistoryEntry) -> HistoryEntry {
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

    /// Rewrites every text and blob value of every table of `conn` (tables without a rowid
    /// are left alone: the sandbox has one, the replay guard's request ids), in one
    /// transaction, with foreign key checks off on `conn` (a referenced value and its
    /// references are replaced alike). Returns how many values changed.
    ///
    /// Errors: SQLite's (nothing is changed then).
    pub fn apply_db(&self, conn: &mut Connection) -> rusqlite::Result<usize> {
        // A value and the references to it change together, row by row: foreign keys are
        // checked by nobody in between (this connection only; the values stay consistent).
        conn.pragma_update(None, "foreign_keys", "OFF")?;
        let tx = conn.transaction()?;
        let mut changed = 0;
        for table in tables(&tx)? {
            let cols = text_columns(&tx, &table)?;
            if cols.is_empty()
                || tx
                    .prepare(&format!("SELECT rowid FROM {} LIMIT 0", quote(&table)))
                    .is_err()
            {
                continue;
            }
            let mut updates: Vec<(String, i64, rusqlite::types::Value)> = Vec::new();
            {
                let list = cols.iter().map(|c| quote(c)).collect::<Vec<_>>().join(", ");
                let mut st = tx.prepare(&format!("SELECT rowid, {list} FROM {}", quote(&table)))?;
                let mut rows = st.query([])?;
                while let Some(r) = rows.next()? {
                    let rowid: i64 = r.get(0)?;
                    for (i, c) in cols.iter().enumerate() {
                        use rusqlite::types::ValueRef;
                        let new = match r.get_ref(i + 1)? {
                            ValueRef::Text(t) => match self.apply(t) {
                                Cow::Owned(o) => Some(match String::from_utf8(o) {
                                    Ok(s) => rusqlite::types::Value::Text(s),
                                    Err(e) => rusqlite::types::Value::Blob(e.into_bytes()),
                                }),
                                Cow::Borrowed(_) => None,
                            },
                            ValueRef::Blob(b) => match self.apply(b) {
                                Cow::Owned(o) => Some(rusqlite::types::Value::Blob(o)),
                                Cow::Borrowed(_) => None,
                            },
                            _ => None,
                        };
                        if let Some(v) = new {
                            updates.push((c.clone(), rowid, v));
                        }
                    }
                }
            }
            for (c, rowid, v) in updates {
                tx.execute(
                    &format!(
                        "UPDATE {} SET {} = ?1 WHERE rowid = ?2",
                        quote(&table),
                        quote(&c)
                    ),
                    rusqlite::params![v, rowid],
                )?;
                changed += 1;
            }
        }
        tx.commit()?;
        Ok(changed)
    }
}

/// The user tables of `conn` (not `sqlite_*`).
fn tables(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    let mut st = conn.prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
    )?;
    let names = st.query_map([], |r| r.get(0))?;
    names.collect()
}

/// The columns of `table` that may hold text: declared TEXT or BLOB, or with no type.
fn text_columns(conn: &Connection, table: &str) -> rusqlite::Result<Vec<String>> {
    let mut st = conn.prepare(&format!("PRAGMA table_info({})", quote(table)))?;
    let cols = st.query_map([], |r| Ok((r.get::<_, String>(1)?, r.get::<_, String>(2)?)))?;
    let mut out = Vec::new();
    for c in cols {
        let (name, ty) = c?;
        let ty = ty.to_ascii_uppercase();
        if ty.is_empty() || ty.contains("TEXT") || ty.contains("CHAR") || ty.contains("BLOB") {
            out.push(name);
        }
    }
    Ok(out)
}

/// `name` as an SQL identifier.
fn quote(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
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
        let mut c = Connection::open_in_memory().unwrap();
        c.execute_batch(
            "CREATE TABLE customers (id TEXT, number TEXT NOT NULL, n INTEGER);
             INSERT INTO customers VALUES ('c1', '31125461118', 7);
             CREATE TABLE payments (body BLOB, psu_id TEXT);
             INSERT INTO payments VALUES (CAST('{\"n\":\"31125461118\"}' AS BLOB), 'p-1');
             CREATE TABLE k (a TEXT PRIMARY KEY) WITHOUT ROWID;",
        )
        .unwrap();
        let mut p = Pseudonyms::new();
        p.collect_db(&c).unwrap();
        assert!(p.get("31125461118").is_some() && p.get("p-1").is_some());
        assert!(p.get("c1").is_none());
        let r = p.replacer().unwrap();
        assert_eq!(r.apply_db(&mut c).unwrap(), 3);
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
