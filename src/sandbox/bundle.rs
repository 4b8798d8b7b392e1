//! What case bundles ([`crate::case`]) may do with the sandbox's state, and the only way they
//! do it: find the embedded sandbox's database ([`state_file`]), copy it while it may be in
//! use ([`copy_state`]), read and rewrite the PSU values of a copy for pseudonymization
//! ([`StateCopy::psu_values`], [`StateCopy::rewrite`]), seal a copy and read its sandbox
//! clock ([`StateCopy::seal`]), and name the TPP of a certificate as the sandbox does
//! ([`tpp_id`]). The tables and their SQL stay the sandbox's: nothing outside the sandbox
//! reads them.
//!
//! Every function works on a file (a copy or the state of another home), never on a running
//! sandbox's connection. Errors are SQLite's ([`rusqlite::Error`]).

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

use crate::sandbox::store::sql::Conn;

use crate::cert::Certificate;
use crate::sandbox::store;

/// The embedded sandbox's state database under the data directory `data`
/// (`<data>/sandbox.sqlite3`).
pub fn state_file(data: &Path) -> PathBuf {
    store::db::default_file(data)
}

/// The sandbox's TPP id of `certificate` (the key of the TPP's rows in the state), as the
/// sandbox derives it when the TPP calls ([`crate::sandbox::http::auth::tpp_id`]).
pub fn tpp_id(certificate: &Certificate) -> String {
    crate::sandbox::http::auth::tpp_id(certificate)
        .0
        .to_string()
}

/// Copies the state database `db` (perhaps in use by a running console, so it waits up to
/// 5 s for a lock) to the new file `dst` with SQLite's online backup API, without the SCA
/// page key ([`crate::sandbox::http::snapshot::backup_to`]).
///
/// Errors: SQLite's (the file cannot be opened, stays locked, or `dst` is not writable).
pub fn copy_state(db: &Path, dst: &Path) -> rusqlite::Result<()> {
    let c = Connection::open_with_flags(
        db,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    c.busy_timeout(Duration::from_secs(5))?;
    crate::sandbox::http::snapshot::backup_to(&Conn::sqlite(&c), dst)
        .map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))
}

/// The columns of the state that hold a PSU's identifying values, by what they hold (the
/// rest of the text columns may hold any of them, e.g. inside a payment's JSON body).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PsuColumn {
    /// Every `psu_id` column: the PSU-IDs the sandbox derived or was sent.
    PsuId,
    /// `customers.number`: the customer number a PSU identifies with.
    CustomerNumber,
    /// `agreements.id`: the PSU-Corporate-ID of an agreement.
    CorporateId,
    /// Names of people and companies: `customers.name`, `customers.employer`,
    /// `manual_transactions.creditor_name` and `debtor_name`.
    Name,
    /// Names of accounts, card accounts and agreements (`name` of those tables).
    AccountName,
    /// `accounts.bban`.
    Bban,
}

impl PsuColumn {
    /// What column `column` of table `table` holds; `None` for any other column.
    fn of(table: &str, column: &str) -> Option<Self> {
        match (table, column) {
            (_, "psu_id") => Some(PsuColumn::PsuId),
            ("customers", "number") => Some(PsuColumn::CustomerNumber),
            ("agreements", "id") => Some(PsuColumn::CorporateId),
            ("customers", "name" | "employer")
            | ("manual_transactions", "creditor_name" | "debtor_name") => Some(PsuColumn::Name),
            ("accounts" | "card_accounts" | "agreements", "name") => Some(PsuColumn::AccountName),
            ("accounts", "bban") => Some(PsuColumn::Bban),
            _ => None,
        }
    }
}

/// A copy of the sandbox's state (a file made by [`copy_state`], a snapshot fetched from a
/// `sandbox serve`, or a bundle's snapshot), open for reading and rewriting.
#[derive(Debug)]
pub struct StateCopy {
    conn: Connection,
}

impl StateCopy {
    /// Opens the copy at `path`.
    ///
    /// Errors: SQLite's (not a database, not readable).
    pub fn open(path: &Path) -> rusqlite::Result<Self> {
        Ok(StateCopy {
            conn: Connection::open(path)?,
        })
    }

    /// Every distinct text value of the copy, with the [`PsuColumn`] it stands in (`None`:
    /// a text column of no such kind, e.g. a payment body). The values of the known columns
    /// come first, so a value met there can keep that kind wherever else it stands.
    ///
    /// Errors: SQLite's.
    pub fn psu_values(&self) -> rusqlite::Result<Vec<(Option<PsuColumn>, String)>> {
        let c = &self.conn;
        let mut columns: Vec<(String, String, Option<PsuColumn>)> = Vec::new();
        for table in tables(c)? {
            for col in text_columns(c, &table)? {
                let kind = PsuColumn::of(&table, &col);
                columns.push((table.clone(), col, kind));
            }
        }
        columns.sort_by_key(|(_, _, k)| k.is_none());
        let mut out = Vec::new();
        for (t, col, kind) in columns {
            let mut st = c.prepare(&format!(
                "SELECT DISTINCT CAST({} AS TEXT) FROM {} WHERE {} IS NOT NULL",
                quote(&col),
                quote(&t),
                quote(&col)
            ))?;
            let values = st.query_map([], |r| r.get::<_, String>(0))?;
            for v in values {
                out.push((kind, v?));
            }
        }
        Ok(out)
    }

    /// Rewrites every text and blob value of every table (tables without a rowid are left
    /// alone: the sandbox has one, the replay guard's request ids) to what `f` makes of its
    /// bytes (`None`: unchanged), in one transaction, with foreign key checks off on this
    /// connection (a referenced value and its references are rewritten alike). A rewritten
    /// text that is no longer UTF-8 is stored as a blob. Returns how many values changed.
    ///
    /// Errors: SQLite's (nothing is changed then).
    pub fn rewrite(&mut self, f: impl Fn(&[u8]) -> Option<Vec<u8>>) -> rusqlite::Result<usize> {
        use rusqlite::types::{Value, ValueRef};
        // A value and the references to it change together, row by row: foreign keys are
        // checked by nobody in between (this connection only; the values stay consistent).
        self.conn.pragma_update(None, "foreign_keys", "OFF")?;
        let tx = self.conn.transaction()?;
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
            let mut updates: Vec<(String, i64, Value)> = Vec::new();
            {
                let list = cols.iter().map(|c| quote(c)).collect::<Vec<_>>().join(", ");
                let mut st = tx.prepare(&format!("SELECT rowid, {list} FROM {}", quote(&table)))?;
                let mut rows = st.query([])?;
                while let Some(r) = rows.next()? {
                    let rowid: i64 = r.get(0)?;
                    for (i, c) in cols.iter().enumerate() {
                        let new = match r.get_ref(i + 1)? {
                            ValueRef::Text(t) => f(t).map(|o| match String::from_utf8(o) {
                                Ok(s) => Value::Text(s),
                                Err(e) => Value::Blob(e.into_bytes()),
                            }),
                            ValueRef::Blob(b) => f(b).map(Value::Blob),
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

    /// Makes the copy one self-contained file (rollback journal, not WAL); with `scrub`
    /// (after a rewrite) rebuilds it (`VACUUM`), so no replaced value stays behind in a free
    /// page. Returns the sandbox clock offset the copy holds for TPP `tpp` (the shared offset
    /// plus the TPP's own; a copy of an older sandbox without per-TPP clocks has only the
    /// shared one), whole seconds.
    ///
    /// Errors: SQLite's.
    pub fn seal(self, scrub: bool, tpp: Option<&str>) -> rusqlite::Result<i64> {
        let c = &self.conn;
        c.pragma_update(None, "journal_mode", "DELETE")?;
        if scrub {
            c.execute_batch("VACUUM")?;
        }
        let conn = Conn::sqlite(c);
        let nanos = store::clock_offset_nanos(&conn)
            .map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?;
        let own = tpp
            .and_then(|t| store::tenancy::clock_offset(&conn, t).ok().flatten())
            .unwrap_or(0);
        Ok((nanos.unwrap_or(0) / 1_000_000_000).saturating_add(own))
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
