//! One SQL interface over the sandbox's two store back ends (issue 21): SQLite (rusqlite,
//! the default, one file or memory) and PostgreSQL (tokio-postgres, `--db postgres://…`).
//!
//! The store and the domain code speak to a [`Conn`] (given by `Db::read` and `Db::write`)
//! with rusqlite's shapes — `execute`, `query_row`, `prepare_cached(..).query_map(..)`,
//! `params!`, `.optional()`, `Row::get` — and write their SQL once, in SQLite's dialect.
//! The differences are handled here and nowhere else:
//!
//! - **Statements** ([`to_postgres`]): placeholders `?N` become `$N`; `INSERT OR IGNORE`
//!   becomes `INSERT … ON CONFLICT DO NOTHING`; `INTEGER` is `BIGINT` (SQLite's integers are
//!   64-bit), `INTEGER PRIMARY KEY AUTOINCREMENT` an identity column, `BLOB` is `BYTEA`;
//!   foreign keys are `DEFERRABLE` so `PRAGMA defer_foreign_keys = ON` (SQLite) can be
//!   `SET CONSTRAINTS ALL DEFERRED`. `INSERT OR REPLACE` has no PostgreSQL form without a
//!   conflict target: the callers write `ON CONFLICT (key) DO UPDATE`, which both accept.
//! - **Values** ([`Value`]): SQLite's five storage classes. A PostgreSQL parameter takes the
//!   type the server inferred for it (an integer bound where text is expected is sent as its
//!   decimal text, as SQLite's affinity would store it); a result column is read back into the
//!   storage class (`BOOL` as 0/1, `NUMERIC` of `SUM` as an integer when whole).
//! - **What only one back end has** is asked through [`Conn::backend`] or [`Conn::sqlite`]
//!   (the catalogue in `sqlite_master` vs `pg_tables`, `rowid`, `PRAGMA foreign_key_check`,
//!   the backup API); each such place says what it does on PostgreSQL.
//!
//! PostgreSQL calls run on the caller's thread (the store is synchronous and is called from
//! tokio worker threads, where the sync `postgres` crate would start a runtime inside a
//! runtime and panic), and so does the connection's I/O: [`pg_io`] drives tokio-postgres's
//! connection beside the request over a non-blocking socket, no I/O thread in between.

use std::cell::RefCell;
use std::collections::HashMap;

use bytes::BytesMut;
use tokio_postgres::types::{FromSql, IsNull, ToSql, Type};

use crate::sandbox::store::dup_keys::DupKeys;

mod pg_io;

/// Which database the state lives in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// SQLite (a file or memory).
    Sqlite,
    /// PostgreSQL (`--db postgres://…`).
    Postgres,
}

/// A value in SQLite's storage classes, the common currency of both back ends.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `NULL`.
    Null,
    /// A 64-bit integer (also booleans, as 0/1).
    Integer(i64),
    /// A float.
    Real(f64),
    /// UTF-8 text.
    Text(String),
    /// Bytes.
    Blob(Vec<u8>),
}

/// A failure of either database, or of reading a value back.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// SQLite's error (its own message).
    #[error(transparent)]
    Sqlite(rusqlite::Error),
    /// PostgreSQL's error: the server's message (with its SQLSTATE) or the connection's.
    #[error("PostgreSQL: {0}")]
    Postgres(String),
    /// `query_row` found no row (see [`OptionalExtension::optional`]).
    #[error("query returned no rows")]
    NoRows,
    /// Column `column` holds a value that does not convert to the type asked for.
    #[error("column {column}: {message}")]
    Conversion {
        /// The column's index.
        column: usize,
        /// What did not convert.
        message: String,
    },
    /// Anything else (a file, the connection thread), with its message.
    #[error("{0}")]
    Other(String),
}

impl From<rusqlite::Error> for Error {
    fn from(e: rusqlite::Error) -> Self {
        match e {
            rusqlite::Error::QueryReturnedNoRows => Error::NoRows,
            e => Error::Sqlite(e),
        }
    }
}

impl From<tokio_postgres::Error> for Error {
    fn from(e: tokio_postgres::Error) -> Self {
        match e.as_db_error() {
            Some(db) => Error::Postgres(format!("{} ({})", db.message(), db.code().code())),
            None => Error::Postgres(e.to_string()),
        }
    }
}

impl Error {
    /// Whether this is a unique or primary-key violation (either back end).
    pub fn is_unique_violation(&self) -> bool {
        match self {
            Error::Sqlite(rusqlite::Error::SqliteFailure(f, _)) => matches!(
                f.extended_code,
                rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE
                    | rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY
            ),
            Error::Postgres(m) => m.ends_with("(23505)"),
            _ => false,
        }
    }

    /// A conversion failure of column `column` (a stored value that does not parse back).
    pub fn conversion(column: usize, e: impl std::fmt::Display) -> Self {
        Error::Conversion {
            column,
            message: e.to_string(),
        }
    }
}

/// The result of a database call.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// `query_row`'s "no row" as `None` (rusqlite's `OptionalExtension`).
pub trait OptionalExtension<T> {
    /// `Ok(None)` for [`Error::NoRows`], else unchanged.
    fn optional(self) -> Result<Option<T>>;
}

impl<T> OptionalExtension<T> for Result<T> {
    fn optional(self) -> Result<Option<T>> {
        match self {
            Ok(v) => Ok(Some(v)),
            Err(Error::NoRows) => Ok(None),
            Err(e) => Err(e),
        }
    }
}

// -----------------------------------------------------------------------------------------
// Values in and out

/// A Rust value bound as a parameter.
pub trait ToValue {
    /// The value to bind.
    fn to_value(&self) -> Value;

    /// The same value as SQLite binds it: borrowed where `self` holds text or bytes (no copy
    /// of ours before SQLite's own), else [`ToValue::to_value`]'s (issue 23: a payment's
    /// `INSERT` copied each of its 26 values into a [`Value`] first).
    fn to_sqlite(&self) -> rusqlite::types::ToSqlOutput<'_> {
        rusqlite::types::ToSqlOutput::Owned(match self.to_value() {
            Value::Null => rusqlite::types::Value::Null,
            Value::Integer(n) => rusqlite::types::Value::Integer(n),
            Value::Real(f) => rusqlite::types::Value::Real(f),
            Value::Text(s) => rusqlite::types::Value::Text(s),
            Value::Blob(b) => rusqlite::types::Value::Blob(b),
        })
    }
}

/// A borrowed text or bytes value as SQLite binds it.
fn borrowed(v: rusqlite::types::ValueRef<'_>) -> rusqlite::types::ToSqlOutput<'_> {
    rusqlite::types::ToSqlOutput::Borrowed(v)
}

/// A Rust value read from a column.
pub trait FromValue: Sized {
    /// Converts column `column`'s value. Errors: [`Error::Conversion`].
    fn from_value(v: &Value, column: usize) -> Result<Self>;
}

impl ToValue for Value {
    fn to_value(&self) -> Value {
        self.clone()
    }
    fn to_sqlite(&self) -> rusqlite::types::ToSqlOutput<'_> {
        use rusqlite::types::ValueRef as S;
        borrowed(match self {
            Value::Null => S::Null,
            Value::Integer(n) => S::Integer(*n),
            Value::Real(f) => S::Real(*f),
            Value::Text(s) => S::Text(s.as_bytes()),
            Value::Blob(b) => S::Blob(b),
        })
    }
}
impl<T: ToValue + ?Sized> ToValue for &T {
    fn to_value(&self) -> Value {
        (**self).to_value()
    }
    fn to_sqlite(&self) -> rusqlite::types::ToSqlOutput<'_> {
        (**self).to_sqlite()
    }
}
impl<T: ToValue> ToValue for Option<T> {
    fn to_value(&self) -> Value {
        self.as_ref().map_or(Value::Null, ToValue::to_value)
    }
    fn to_sqlite(&self) -> rusqlite::types::ToSqlOutput<'_> {
        self.as_ref().map_or(
            borrowed(rusqlite::types::ValueRef::Null),
            ToValue::to_sqlite,
        )
    }
}
impl ToValue for str {
    fn to_value(&self) -> Value {
        Value::Text(self.to_string())
    }
    fn to_sqlite(&self) -> rusqlite::types::ToSqlOutput<'_> {
        borrowed(rusqlite::types::ValueRef::Text(self.as_bytes()))
    }
}
impl ToValue for String {
    fn to_value(&self) -> Value {
        Value::Text(self.clone())
    }
    fn to_sqlite(&self) -> rusqlite::types::ToSqlOutput<'_> {
        borrowed(rusqlite::types::ValueRef::Text(self.as_bytes()))
    }
}
impl ToValue for std::sync::Arc<str> {
    fn to_value(&self) -> Value {
        Value::Text(self.to_string())
    }
    fn to_sqlite(&self) -> rusqlite::types::ToSqlOutput<'_> {
        borrowed(rusqlite::types::ValueRef::Text(self.as_bytes()))
    }
}
impl ToValue for [u8] {
    fn to_value(&self) -> Value {
        Value::Blob(self.to_vec())
    }
    fn to_sqlite(&self) -> rusqlite::types::ToSqlOutput<'_> {
        borrowed(rusqlite::types::ValueRef::Blob(self))
    }
}
impl ToValue for Vec<u8> {
    fn to_value(&self) -> Value {
        Value::Blob(self.clone())
    }
    fn to_sqlite(&self) -> rusqlite::types::ToSqlOutput<'_> {
        borrowed(rusqlite::types::ValueRef::Blob(self))
    }
}
impl<const N: usize> ToValue for [u8; N] {
    fn to_value(&self) -> Value {
        Value::Blob(self.to_vec())
    }
    fn to_sqlite(&self) -> rusqlite::types::ToSqlOutput<'_> {
        borrowed(rusqlite::types::ValueRef::Blob(self))
    }
}
impl ToValue for bool {
    fn to_value(&self) -> Value {
        Value::Integer(i64::from(*self))
    }
}
impl ToValue for f64 {
    fn to_value(&self) -> Value {
        Value::Real(*self)
    }
}
macro_rules! int_value {
    ($($t:ty),*) => {$(
        impl ToValue for $t {
            fn to_value(&self) -> Value {
                // Out of i64's range (a u64 past 2^63) saturates, as nothing stored is.
                Value::Integer(i64::try_from(*self).unwrap_or(i64::MAX))
            }
        }
        impl FromValue for $t {
            fn from_value(v: &Value, column: usize) -> Result<Self> {
                let n = i64::from_value(v, column)?;
                <$t>::try_from(n).map_err(|e| Error::conversion(column, e))
            }
        }
    )*};
}
int_value!(i32, u32, u64, usize, u16, u8, i16);
impl ToValue for i64 {
    fn to_value(&self) -> Value {
        Value::Integer(*self)
    }
}

impl FromValue for Value {
    fn from_value(v: &Value, _: usize) -> Result<Self> {
        Ok(v.clone())
    }
}
impl FromValue for i64 {
    fn from_value(v: &Value, column: usize) -> Result<Self> {
        match v {
            Value::Integer(n) => Ok(*n),
            other => Err(Error::conversion(
                column,
                format!("{} is not an integer", kind(other)),
            )),
        }
    }
}
impl FromValue for bool {
    fn from_value(v: &Value, column: usize) -> Result<Self> {
        Ok(i64::from_value(v, column)? != 0)
    }
}
impl FromValue for f64 {
    fn from_value(v: &Value, column: usize) -> Result<Self> {
        match v {
            Value::Real(f) => Ok(*f),
            #[allow(clippy::cast_precision_loss)]
            Value::Integer(n) => Ok(*n as f64),
            other => Err(Error::conversion(
                column,
                format!("{} is not a number", kind(other)),
            )),
        }
    }
}
impl FromValue for std::sync::Arc<str> {
    fn from_value(v: &Value, column: usize) -> Result<Self> {
        String::from_value(v, column).map(Into::into)
    }
}
impl FromValue for String {
    fn from_value(v: &Value, column: usize) -> Result<Self> {
        match v {
            Value::Text(s) => Ok(s.clone()),
            other => Err(Error::conversion(
                column,
                format!("{} is not text", kind(other)),
            )),
        }
    }
}
impl FromValue for Vec<u8> {
    fn from_value(v: &Value, column: usize) -> Result<Self> {
        match v {
            Value::Blob(b) => Ok(b.clone()),
            Value::Text(s) => Ok(s.as_bytes().to_vec()),
            other => Err(Error::conversion(
                column,
                format!("{} is not a blob", kind(other)),
            )),
        }
    }
}
impl<T: FromValue> FromValue for Option<T> {
    fn from_value(v: &Value, column: usize) -> Result<Self> {
        match v {
            Value::Null => Ok(None),
            v => T::from_value(v, column).map(Some),
        }
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "NULL",
        Value::Integer(_) => "an integer",
        Value::Real(_) => "a float",
        Value::Text(_) => "text",
        Value::Blob(_) => "a blob",
    }
}

/// A column index (rusqlite's `RowIndex`, by position only).
pub trait ColumnIndex: Copy {
    /// The position.
    fn index(self) -> usize;
}
impl ColumnIndex for usize {
    fn index(self) -> usize {
        self
    }
}

/// One result row, its values read into [`Value`]s.
#[derive(Debug, Clone)]
pub struct Row {
    values: Vec<Value>,
}

impl Row {
    /// Column `i` as `T`. Errors: no such column, or it does not convert.
    pub fn get<I: ColumnIndex, T: FromValue>(&self, i: I) -> Result<T> {
        T::from_value(self.get_ref(i)?, i.index())
    }

    /// Column `i` as it is stored. Errors: no such column.
    pub fn get_ref<I: ColumnIndex>(&self, i: I) -> Result<&Value> {
        self.values
            .get(i.index())
            .ok_or_else(|| Error::conversion(i.index(), "no such column"))
    }

    /// Columns `range` as a row of their own (e.g. one table's columns of a joined row, for
    /// that table's reader). Errors: the range is outside the row.
    pub fn columns(&self, range: std::ops::Range<usize>) -> Result<Row> {
        let end = range.end;
        Ok(Row {
            values: self
                .values
                .get(range)
                .ok_or_else(|| Error::conversion(end, "no such column"))?
                .to_vec(),
        })
    }

    /// The number of columns.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether the row has no column.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

/// Statement parameters (rusqlite's `Params`): `[a, b]`, `params![..]`, `()`,
/// [`params_from_iter`].
pub trait Params: Sized {
    /// The values, in placeholder order.
    fn into_values(self) -> Vec<Value>;

    /// The values as SQLite binds them: [`Params::into_values`], or the caller's own
    /// values borrowed (`params![..]` and a row's `to_params()`: nothing copied before
    /// SQLite's bind).
    fn into_sqlite<'v>(self) -> SqliteParams<'v>
    where
        Self: 'v,
    {
        SqliteParams::Values(self.into_values())
    }
}

/// What [`Params::into_sqlite`] hands to SQLite's bind.
pub enum SqliteParams<'v> {
    /// Values of their own.
    Values(Vec<Value>),
    /// The caller's values, borrowed.
    Refs(&'v [&'v dyn ToValue]),
}

/// One borrowed parameter, bound by SQLite as [`ToValue::to_sqlite`] gives it.
struct Bind<'v>(&'v dyn ToValue);

impl rusqlite::ToSql for Bind<'_> {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        Ok(self.0.to_sqlite())
    }
}

impl SqliteParams<'_> {
    /// Binds the values to `stmt` and runs it (rusqlite's checks of the parameter count).
    fn execute(self, stmt: &mut rusqlite::Statement<'_>) -> rusqlite::Result<usize> {
        match self {
            SqliteParams::Values(v) => stmt.execute(rusqlite::params_from_iter(v.iter())),
            SqliteParams::Refs(r) => {
                stmt.execute(rusqlite::params_from_iter(r.iter().map(|v| Bind(*v))))
            }
        }
    }

    /// Binds the values to `stmt` and runs the query (rusqlite's checks of the parameter
    /// count).
    fn query<'s>(
        self,
        stmt: &'s mut rusqlite::Statement<'_>,
    ) -> rusqlite::Result<rusqlite::Rows<'s>> {
        match self {
            SqliteParams::Values(v) => stmt.query(rusqlite::params_from_iter(v.iter())),
            SqliteParams::Refs(r) => {
                stmt.query(rusqlite::params_from_iter(r.iter().map(|v| Bind(*v))))
            }
        }
    }
}

impl Params for () {
    fn into_values(self) -> Vec<Value> {
        Vec::new()
    }
}
impl Params for &[&dyn ToValue] {
    fn into_values(self) -> Vec<Value> {
        self.iter().map(|v| v.to_value()).collect()
    }
    fn into_sqlite<'v>(self) -> SqliteParams<'v>
    where
        Self: 'v,
    {
        SqliteParams::Refs(self)
    }
}
impl Params for [&dyn ToValue; 0] {
    fn into_values(self) -> Vec<Value> {
        Vec::new()
    }
}
impl Params for Vec<Value> {
    fn into_values(self) -> Vec<Value> {
        self
    }
}
macro_rules! array_params {
    ($($n:literal),*) => {$(
        impl<T: ToValue> Params for [T; $n] {
            fn into_values(self) -> Vec<Value> {
                self.iter().map(ToValue::to_value).collect()
            }
        }
        impl<T: ToValue> Params for &[T; $n] {
            fn into_values(self) -> Vec<Value> {
                self.iter().map(ToValue::to_value).collect()
            }
        }
    )*};
}
array_params!(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16);
macro_rules! tuple_params {
    ($(($($t:ident $i:tt),+)),*) => {$(
        impl<$($t: ToValue),+> Params for ($($t,)+) {
            fn into_values(self) -> Vec<Value> {
                vec![$(self.$i.to_value()),+]
            }
        }
    )*};
}
tuple_params!(
    (A 0),
    (A 0, B 1),
    (A 0, B 1, C 2),
    (A 0, B 1, C 2, D 3),
    (A 0, B 1, C 2, D 3, E 4),
    (A 0, B 1, C 2, D 3, E 4, F 5)
);

/// Parameters from an iterator of values (rusqlite's `params_from_iter`).
pub fn params_from_iter<I>(iter: I) -> Vec<Value>
where
    I: IntoIterator,
    I::Item: ToValue,
{
    iter.into_iter().map(|v| v.to_value()).collect()
}

/// `params![a, b, ..]`: mixed-type parameters (rusqlite's `params!`).
macro_rules! sql_params {
    () => {
        &[] as &[&dyn $crate::sandbox::store::sql::ToValue]
    };
    ($($p:expr),+ $(,)?) => {
        &[$(&$p as &dyn $crate::sandbox::store::sql::ToValue),+]
            as &[&dyn $crate::sandbox::store::sql::ToValue]
    };
}
pub(crate) use sql_params as params;

// -----------------------------------------------------------------------------------------
// The connection

/// A connection (or an open transaction) of either back end: what `Db::read` and
/// `Db::write` hand to their closures.
pub struct Conn<'a> {
    inner: Inner<'a>,
    /// The keys of the statements [`Conn::execute_pipelined_once`] ran on this connection
    /// value (one per transaction, or per group-commit batch).
    once: std::cell::RefCell<Vec<(String, String)>>,
    /// The SQLite writer's duplicate keys of payments (`None` on PostgreSQL and on reads).
    dup_keys: Option<&'a DupKeys>,
    /// SQLite statements kept prepared on this `Conn` value ([`Conn::execute_kept`]), by
    /// their static text; back in rusqlite's cache when the `Conn` is dropped.
    kept: RefCell<Vec<(&'static str, rusqlite::CachedStatement<'a>)>>,
}

enum Inner<'a> {
    Sqlite(&'a rusqlite::Connection),
    Postgres(&'a PgSession),
}

impl<'a> Conn<'a> {
    /// A SQLite connection (or a transaction, through its `Deref`).
    pub fn sqlite(c: &'a rusqlite::Connection) -> Self {
        Conn {
            inner: Inner::Sqlite(c),
            once: std::cell::RefCell::default(),
            dup_keys: None,
            kept: RefCell::default(),
        }
    }

    /// This SQLite connection with the duplicate keys of its payments (the request
    /// connection's writes: [`crate::sandbox::store::dup_keys`]).
    pub(crate) fn with_dup_keys(mut self, keys: Option<&'a DupKeys>) -> Self {
        if matches!(self.inner, Inner::Sqlite(_)) {
            self.dup_keys = keys;
        }
        self
    }

    /// The duplicate keys of the payments this connection writes (SQLite's request
    /// connection only; `None`: check through the database's index).
    pub fn dup_keys(&self) -> Option<&'a DupKeys> {
        self.dup_keys
    }

    pub(crate) fn postgres(s: &'a PgSession) -> Self {
        Conn {
            inner: Inner::Postgres(s),
            once: std::cell::RefCell::default(),
            dup_keys: None,
            kept: RefCell::default(),
        }
    }

    /// Which back end this is.
    pub fn backend(&self) -> Backend {
        match self.inner {
            Inner::Sqlite(_) => Backend::Sqlite,
            Inner::Postgres(_) => Backend::Postgres,
        }
    }

    /// The SQLite connection, for what only SQLite has (backup, `PRAGMA`s); `None` on
    /// PostgreSQL.
    pub fn as_sqlite(&self) -> Option<&'a rusqlite::Connection> {
        match self.inner {
            Inner::Sqlite(c) => Some(c),
            Inner::Postgres(_) => None,
        }
    }

    /// Runs one statement; the number of rows changed.
    ///
    /// Errors: the database fails.
    pub fn execute<P: Params>(&self, sql: &str, params: P) -> Result<usize> {
        match self.inner {
            Inner::Sqlite(c) => {
                let mut stmt = c.prepare_cached(sql)?;
                Ok(params.into_sqlite().execute(&mut stmt)?)
            }
            Inner::Postgres(s) => s.execute(sql, &params.into_values()),
        }
    }

    /// Runs one statement whose row count the caller does not need (an `INSERT` of a new
    /// row, a purge). On SQLite, and on PostgreSQL outside a pipelined group-commit batch,
    /// exactly [`Conn::execute`]. On PostgreSQL inside one ([`PgSession::set_pipelining`])
    /// the statement is queued and sent in the round trip of the session's next statement
    /// (pipelined: the server still runs them in order); its failure is then the error of
    /// that next statement, or of the batch's `COMMIT`, and the group commit reruns the
    /// batch one write at a time (issue 23, writes on PostgreSQL).
    ///
    /// Errors: the database fails (on PostgreSQL inside a pipelined batch: only when the
    /// statement cannot be prepared).
    pub fn execute_pipelined<P: Params>(&self, sql: &str, params: P) -> Result<()> {
        match self.inner {
            Inner::Sqlite(_) => self.execute(sql, params).map(|_| ()),
            Inner::Postgres(s) => s.execute_pipelined(sql, params.into_values()),
        }
    }

    /// [`Conn::execute_pipelined`] of a statement whose text is `'static` (the `INSERT`s of a
    /// payment creation). On SQLite the prepared statement stays on this `Conn` value after
    /// its first run, so the later writes of a group-commit batch (one `Conn` per batch,
    /// [`crate::sandbox::store::db::group_commit`]) skip rusqlite's statement cache (issue 23:
    /// its look-up by the statement's text, the copy of that text as the key, the put-back
    /// and the clearing of the bindings cost ~2.2 k instructions per statement run, ~4.5 k
    /// per payment creation with its authorisation); it goes back to that cache when the
    /// `Conn` is dropped. The same statement, bound and run the same way: only the look-up is
    /// saved. On PostgreSQL exactly [`Conn::execute_pipelined`].
    ///
    /// Errors: as [`Conn::execute_pipelined`].
    pub fn execute_kept<P: Params>(&self, sql: &'static str, params: P) -> Result<()> {
        let Inner::Sqlite(c) = self.inner else {
            return self.execute_pipelined(sql, params);
        };
        let mut kept = self.kept.borrow_mut();
        // Static text: the same address and length is the same statement.
        let i = match kept.iter().position(|(k, _)| std::ptr::eq(*k, sql)) {
            Some(i) => i,
            None => {
                kept.push((sql, c.prepare_cached(sql)?));
                kept.len() - 1
            }
        };
        params.into_sqlite().execute(&mut kept[i].1)?;
        Ok(())
    }

    /// [`Conn::execute_pipelined`], unless a statement under the same `key` already ran on
    /// this `Conn`: the store hands one `Conn` to a transaction, and the group commit one to
    /// each batch ([`crate::sandbox::store::db::group_commit`]), so the statement runs once
    /// for all the writes of a batch. For housekeeping whose repetition changes nothing a
    /// later write relies on (issue 23: the purge of expired consent SCA authorisations ran
    /// once per consent; now once per batch, by the batch's first write that asks). When the
    /// write that ran it is rolled back alone (a batch run again with savepoints), the later
    /// writes of that batch do not run it again: the next batch does. Whether it ran now.
    ///
    /// The key is `(name, scope)` (e.g. the purge and the TPP it purges for) and the
    /// parameters are made only when the statement runs (issue 23: a consent built its key
    /// text and its parameters whether or not its batch's purge had run).
    ///
    /// Errors: as [`Conn::execute_pipelined`].
    pub fn execute_pipelined_once<P: Params>(
        &self,
        (name, scope): (&str, &str),
        sql: &str,
        params: impl FnOnce() -> P,
    ) -> Result<bool> {
        if self
            .once
            .borrow()
            .iter()
            .any(|(n, s)| n == name && s == scope)
        {
            return Ok(false);
        }
        self.execute_pipelined(sql, params())?;
        self.once
            .borrow_mut()
            .push((name.to_string(), scope.to_string()));
        Ok(true)
    }

    /// Runs statements separated by `;`, without parameters.
    ///
    /// Errors: the database fails.
    pub fn execute_batch(&self, sql: &str) -> Result<()> {
        match self.inner {
            Inner::Sqlite(c) => Ok(c.execute_batch(sql)?),
            Inner::Postgres(s) => s.batch(&to_postgres(sql)),
        }
    }

    /// All rows of a query.
    ///
    /// Errors: the database fails.
    pub fn query_all<P: Params>(&self, sql: &str, params: P) -> Result<Vec<Row>> {
        match self.inner {
            Inner::Sqlite(c) => {
                let mut stmt = c.prepare_cached(sql)?;
                let n = stmt.column_count();
                let mut rows = params.into_sqlite().query(&mut stmt)?;
                let mut out = Vec::new();
                while let Some(r) = rows.next()? {
                    let mut values = Vec::with_capacity(n);
                    for i in 0..n {
                        values.push(from_sqlite(r.get_ref(i)?));
                    }
                    out.push(Row { values });
                }
                Ok(out)
            }
            Inner::Postgres(s) => s.query(sql, &params.into_values()),
        }
    }

    /// The first row of a query through `f`. Errors: [`Error::NoRows`] when there is none
    /// (see [`OptionalExtension::optional`]), `f`'s, or the database fails.
    pub fn query_row<T, P: Params>(
        &self,
        sql: &str,
        params: P,
        f: impl FnOnce(&Row) -> Result<T>,
    ) -> Result<T> {
        let rows = self.query_all(sql, params)?;
        rows.first().map_or(Err(Error::NoRows), f)
    }

    /// A statement to run (rusqlite's `prepare_cached`; both back ends cache the prepared
    /// statement by its text).
    ///
    /// Errors: none before it runs (kept a `Result` for rusqlite's shape).
    pub fn prepare_cached(&self, sql: &str) -> Result<Stmt<'_, 'a>> {
        Ok(Stmt {
            conn: self,
            sql: sql.to_string(),
        })
    }

    /// Like [`Conn::prepare_cached`].
    ///
    /// Errors: none before it runs.
    pub fn prepare(&self, sql: &str) -> Result<Stmt<'_, 'a>> {
        self.prepare_cached(sql)
    }

    /// Runs an `INSERT` into a table with a `seq` key and answers the `seq` it was given
    /// (SQLite: the rowid; PostgreSQL: `RETURNING seq`).
    ///
    /// Errors: the database fails.
    pub fn insert_seq<P: Params>(&self, sql: &str, params: P) -> Result<i64> {
        match self.inner {
            Inner::Sqlite(c) => {
                self.execute(sql, params)?;
                Ok(c.last_insert_rowid())
            }
            Inner::Postgres(s) => {
                let rows = s.query(&format!("{sql} RETURNING seq"), &params.into_values())?;
                rows.first().map_or(Err(Error::NoRows), |r| r.get(0))
            }
        }
    }
}

/// A statement of a [`Conn`] (rusqlite's `CachedStatement`).
pub struct Stmt<'s, 'a> {
    conn: &'s Conn<'a>,
    sql: String,
}

impl Stmt<'_, '_> {
    /// Runs it; the number of rows changed. Errors: the database fails.
    pub fn execute<P: Params>(&mut self, params: P) -> Result<usize> {
        self.conn.execute(&self.sql, params)
    }

    /// Every row through `f`, as an iterator of results (rusqlite's `query_map`).
    ///
    /// Errors: the database fails (`f`'s errors are in the iterator).
    pub fn query_map<T, P: Params>(
        &mut self,
        params: P,
        mut f: impl FnMut(&Row) -> Result<T>,
    ) -> Result<std::vec::IntoIter<Result<T>>> {
        let rows = self.conn.query_all(&self.sql, params)?;
        Ok(rows.iter().map(&mut f).collect::<Vec<_>>().into_iter())
    }

    /// The first row through `f`. Errors: as [`Conn::query_row`].
    pub fn query_row<T, P: Params>(
        &mut self,
        params: P,
        f: impl FnOnce(&Row) -> Result<T>,
    ) -> Result<T> {
        self.conn.query_row(&self.sql, params, f)
    }

    /// Every row. Errors: the database fails.
    pub fn query<P: Params>(&mut self, params: P) -> Result<Vec<Row>> {
        self.conn.query_all(&self.sql, params)
    }

    /// Whether the query gives a row. Errors: the database fails.
    pub fn exists<P: Params>(&mut self, params: P) -> Result<bool> {
        Ok(!self.conn.query_all(&self.sql, params)?.is_empty())
    }
}

/// A parameter bound by reference (no copy of its text or bytes).
impl rusqlite::ToSql for Value {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::ValueRef as S;
        Ok(rusqlite::types::ToSqlOutput::Borrowed(match self {
            Value::Null => S::Null,
            Value::Integer(n) => S::Integer(*n),
            Value::Real(f) => S::Real(*f),
            Value::Text(s) => S::Text(s.as_bytes()),
            Value::Blob(b) => S::Blob(b),
        }))
    }
}

fn from_sqlite(v: rusqlite::types::ValueRef<'_>) -> Value {
    use rusqlite::types::ValueRef as S;
    match v {
        S::Null => Value::Null,
        S::Integer(n) => Value::Integer(n),
        S::Real(f) => Value::Real(f),
        S::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
        S::Blob(b) => Value::Blob(b.to_vec()),
    }
}

// -----------------------------------------------------------------------------------------
// PostgreSQL

/// A statement queued by [`Conn::execute_pipelined`] with its parameters.
type Queued = (tokio_postgres::Statement, Vec<Value>);

/// One PostgreSQL connection: the client, its prepared statements by their (SQLite-dialect)
/// text, and its I/O, driven by the calling thread ([`pg_io`]).
pub struct PgSession {
    client: tokio_postgres::Client,
    io: pg_io::PgIo,
    statements: RefCell<HashMap<String, tokio_postgres::Statement>>,
    /// Statements queued by [`PgSession::defer`]: sent in the same round trip as the next
    /// statement (pipelined), or ahead of the next [`PgSession::batch`].
    deferred: RefCell<Option<String>>,
    /// Statements queued by [`Conn::execute_pipelined`] while pipelining is on
    /// ([`PgSession::set_pipelining`]; `None` when off): sent, in order, in the round trip
    /// of the next statement.
    queued: RefCell<Option<Vec<Queued>>>,
    /// Round trips waited for so far (a statement's preparation included): what a test
    /// counts ([`PgSession::round_trips`]).
    round_trips: std::cell::Cell<u64>,
}

impl std::fmt::Debug for PgSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PgSession")
    }
}

impl PgSession {
    /// Connects to `url` (`postgres://user[:password]@host[:port]/db`, or a key=value string)
    /// without TLS (the sandbox's database is on a trusted network, or loopback); the
    /// connection's I/O runs on the thread of each call ([`pg_io`]).
    ///
    /// Errors: the URL does not parse, or the server refuses or is unreachable (the message
    /// never holds the password: [`redact_url`]).
    pub fn connect(url: &str) -> Result<Self> {
        let (client, io) = pg_io::PgIo::connect(url)?;
        Ok(PgSession {
            client,
            io,
            statements: RefCell::new(HashMap::new()),
            deferred: RefCell::new(None),
            queued: RefCell::new(None),
            round_trips: std::cell::Cell::new(0),
        })
    }

    /// The live session in `slot`, connected (again) to `url` when the slot is empty or the
    /// server closed its connection (a restart of the server costs the requests in flight,
    /// not the sandbox). Every pooled or dedicated PostgreSQL connection of the store is
    /// taken through it.
    ///
    /// Errors: connecting fails ([`PgSession::connect`]).
    pub(crate) fn live<'a>(slot: &'a mut Option<PgSession>, url: &str) -> Result<&'a PgSession> {
        if slot.as_ref().is_none_or(PgSession::is_closed) {
            *slot = None;
            *slot = Some(PgSession::connect(url)?);
        }
        slot.as_ref()
            .ok_or_else(|| Error::Other("no PostgreSQL connection".into()))
    }

    /// Queues `sql` (PostgreSQL's dialect, simple protocol: `BEGIN`, `SAVEPOINT`, ...) to run
    /// just before the next statement of this session, in the SAME round trip: the next
    /// [`Conn`] statement is pipelined behind it, the next [`PgSession::batch`] gets it as its
    /// head. The server runs both in order, so the meaning is that of running `sql` first;
    /// a failure of `sql` is the error of that next statement. Saves one round trip per
    /// transaction start (issue 23, writes on PostgreSQL).
    pub(crate) fn defer(&self, sql: &str) {
        let mut d = self.deferred.borrow_mut();
        match d.as_mut() {
            Some(q) => {
                q.push_str("; ");
                q.push_str(sql);
            }
            None => *d = Some(sql.to_string()),
        }
    }

    /// How many round trips this session waited for so far (every statement, preparation
    /// and batch; pipelined requests count once).
    pub(crate) fn round_trips(&self) -> u64 {
        self.round_trips.get()
    }

    fn count_round_trip(&self) {
        self.round_trips
            .set(self.round_trips.get().saturating_add(1));
    }

    /// Drops what [`PgSession::defer`] queued and was not sent yet; whether there was any
    /// (then the server never saw it: e.g. a read transaction whose closure ran no
    /// statement needs no `COMMIT`).
    pub(crate) fn discard_deferred(&self) -> bool {
        let queued = self
            .queued
            .borrow_mut()
            .as_mut()
            .is_some_and(|q| !std::mem::take(q).is_empty());
        self.deferred.borrow_mut().take().is_some() || queued
    }

    /// Turns pipelining of [`Conn::execute_pipelined`] on or off (the group commit's batch,
    /// [`crate::sandbox::store::db::group_commit`]). Turning it off drops what is still
    /// queued: call it after the batch's last statement (its `COMMIT`) or its `ROLLBACK`.
    pub(crate) fn set_pipelining(&self, on: bool) {
        *self.queued.borrow_mut() = on.then(Vec::new);
    }

    /// [`Conn::execute_pipelined`] on PostgreSQL: queued while pipelining is on, else run.
    fn execute_pipelined(&self, sql: &str, params: Vec<Value>) -> Result<()> {
        let stmt = self.statement(sql)?;
        if let Some(q) = self.queued.borrow_mut().as_mut() {
            q.push((stmt, params));
            return Ok(());
        }
        let refs: Vec<&(dyn ToSql + Sync)> = params.iter().map(|v| v as _).collect();
        self.pipelined(self.client.execute(&stmt, &refs))?;
        Ok(())
    }

    /// Runs `fut` (a request of this session's client), pipelined behind the deferred
    /// statements ([`PgSession::defer`]) and the queued ones ([`Conn::execute_pipelined`]) if
    /// any: all are sent, in that order, before the first answer is awaited (tokio-postgres
    /// sends a request at its future's first poll, and [`in_order`] polls them in order).
    /// The first failure in that order is the answer.
    fn pipelined<T>(
        &self,
        fut: impl std::future::Future<Output = std::result::Result<T, tokio_postgres::Error>>,
    ) -> Result<T> {
        let head = self.deferred.borrow_mut().take();
        let queued = self
            .queued
            .borrow_mut()
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default();
        self.count_round_trip();
        if head.is_none() && queued.is_empty() {
            return Ok(self.io.drive(fut)??);
        }
        type Ahead<'f> = std::pin::Pin<
            Box<
                dyn std::future::Future<Output = std::result::Result<(), tokio_postgres::Error>>
                    + 'f,
            >,
        >;
        let mut ahead: Vec<Ahead<'_>> = Vec::with_capacity(queued.len() + 1);
        if let Some(h) = head.as_deref() {
            ahead.push(Box::pin(self.client.batch_execute(h)));
        }
        for (stmt, values) in &queued {
            let run = self.client.execute_raw(stmt, values.iter());
            ahead.push(Box::pin(async move { run.await.map(|_| ()) }));
        }
        let (before, out) = self.io.drive(in_order(ahead, fut))?;
        for r in before {
            r?;
        }
        Ok(out?)
    }

    /// Whether the connection is gone (the server closed it or restarted; found without
    /// waiting, [`pg_io::PgIo::is_closed`]).
    pub fn is_closed(&self) -> bool {
        self.io.is_closed() || self.client.is_closed()
    }

    fn statement(&self, sql: &str) -> Result<tokio_postgres::Statement> {
        if let Some(s) = self.statements.borrow().get(sql) {
            return Ok(s.clone());
        }
        self.count_round_trip();
        let s = self.io.drive(self.client.prepare(&to_postgres(sql)))??;
        let mut cache = self.statements.borrow_mut();
        if cache.len() > 512 {
            cache.clear();
        }
        cache.insert(sql.to_string(), s.clone());
        Ok(s)
    }

    fn execute(&self, sql: &str, params: &[Value]) -> Result<usize> {
        let stmt = self.statement(sql)?;
        let refs: Vec<&(dyn ToSql + Sync)> = params.iter().map(|v| v as _).collect();
        let n = self.pipelined(self.client.execute(&stmt, &refs))?;
        Ok(usize::try_from(n).unwrap_or(usize::MAX))
    }

    fn query(&self, sql: &str, params: &[Value]) -> Result<Vec<Row>> {
        let stmt = self.statement(sql)?;
        let refs: Vec<&(dyn ToSql + Sync)> = params.iter().map(|v| v as _).collect();
        let rows = self.pipelined(self.client.query(&stmt, &refs))?;
        rows.iter()
            .map(|r| {
                let values = (0..r.len())
                    .map(|i| {
                        r.try_get::<_, PgValue>(i)
                            .map(|v| v.0)
                            .map_err(|e| Error::conversion(i, e))
                    })
                    .collect::<Result<_>>()?;
                Ok(Row { values })
            })
            .collect()
    }

    /// Runs `sql` (already PostgreSQL) with the simple query protocol, after what
    /// [`PgSession::defer`] queued (in the same round trip).
    pub(crate) fn batch(&self, sql: &str) -> Result<()> {
        self.pipelined(self.client.batch_execute(sql))
    }
}

/// A future that runs `ahead` and then `last` to completion, polling each first in that
/// order (so tokio-postgres sends their requests in that order, [`PgSession::pipelined`]);
/// their outputs.
async fn in_order<'f, A, T>(
    mut ahead: Vec<std::pin::Pin<Box<dyn std::future::Future<Output = A> + 'f>>>,
    last: impl std::future::Future<Output = T>,
) -> (Vec<A>, T) {
    use std::task::Poll;
    let mut last = std::pin::pin!(last);
    let mut done: Vec<Option<A>> = ahead.iter().map(|_| None).collect();
    let mut slot = None;
    let out = std::future::poll_fn(|cx| {
        let mut pending = false;
        for (f, d) in ahead.iter_mut().zip(done.iter_mut()) {
            if d.is_none() {
                match f.as_mut().poll(cx) {
                    Poll::Ready(v) => *d = Some(v),
                    Poll::Pending => pending = true,
                }
            }
        }
        if slot.is_none() {
            match last.as_mut().poll(cx) {
                Poll::Ready(v) => slot = Some(v),
                Poll::Pending => pending = true,
            }
        }
        match (pending, slot.take()) {
            (false, Some(v)) => Poll::Ready(v),
            (_, v) => {
                slot = v;
                Poll::Pending
            }
        }
    })
    .await;
    // Every future of `ahead` completed before the poll above returned.
    (done.into_iter().flatten().collect(), out)
}

/// A result column of any type, read into a [`Value`].
struct PgValue(Value);

impl<'a> FromSql<'a> for PgValue {
    fn from_sql(
        ty: &Type,
        raw: &'a [u8],
    ) -> std::result::Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        let v = match *ty {
            Type::INT8 => Value::Integer(i64::from_sql(ty, raw)?),
            Type::INT4 => Value::Integer(i64::from(i32::from_sql(ty, raw)?)),
            Type::INT2 => Value::Integer(i64::from(i16::from_sql(ty, raw)?)),
            Type::OID => Value::Integer(i64::from(u32::from_sql(ty, raw)?)),
            Type::BOOL => Value::Integer(i64::from(bool::from_sql(ty, raw)?)),
            Type::FLOAT8 => Value::Real(f64::from_sql(ty, raw)?),
            Type::FLOAT4 => Value::Real(f64::from(f32::from_sql(ty, raw)?)),
            Type::BYTEA => Value::Blob(raw.to_vec()),
            Type::NUMERIC => numeric(raw)?,
            // TEXT, VARCHAR, NAME, BPCHAR, and anything else as its text.
            _ => Value::Text(String::from_utf8_lossy(raw).into_owned()),
        };
        Ok(PgValue(v))
    }

    fn from_sql_null(
        _: &Type,
    ) -> std::result::Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        Ok(PgValue(Value::Null))
    }

    fn accepts(_: &Type) -> bool {
        true
    }
}

/// A `NUMERIC` in binary form (what `SUM` of `BIGINT`s answers): an integer when whole and in
/// range, else a float.
fn numeric(raw: &[u8]) -> std::result::Result<Value, Box<dyn std::error::Error + Sync + Send>> {
    let word = |i: usize| -> std::result::Result<i32, Box<dyn std::error::Error + Sync + Send>> {
        let b = raw.get(i..i + 2).ok_or("short NUMERIC")?;
        Ok(i32::from(i16::from_be_bytes([b[0], b[1]])))
    };
    let ndigits = usize::try_from(word(0)?).map_err(|_| "bad NUMERIC")?;
    let weight = word(2)?;
    let sign = word(4)? & 0xFFFF;
    let dscale = word(6)?;
    if sign == 0xC000 {
        return Ok(Value::Real(f64::NAN));
    }
    let mut int: i128 = 0;
    let mut float = 0.0f64;
    let mut whole = dscale == 0;
    for i in 0..ndigits {
        let d = word(8 + 2 * i)?;
        let power = weight - i32::try_from(i).map_err(|_| "bad NUMERIC")?;
        float += f64::from(d) * 10000f64.powi(power);
        if power >= 0 {
            int = int.saturating_mul(10000).saturating_add(i128::from(d));
        } else if d != 0 {
            whole = false;
        }
    }
    // Trailing zero groups are not sent: scale up to the weight.
    let last_power = weight - i32::try_from(ndigits).map_err(|_| "bad NUMERIC")? + 1;
    for _ in 0..last_power.max(0) {
        int = int.saturating_mul(10000);
    }
    let negative = sign == 0x4000;
    if whole && let Ok(n) = i64::try_from(if negative { -int } else { int }) {
        return Ok(Value::Integer(n));
    }
    Ok(Value::Real(if negative { -float } else { float }))
}

/// An integer as a binary `NUMERIC` (what a parameter compared with `SUM(..)` is inferred as):
/// base-10000 digits, most significant first, scale 0.
fn numeric_to_sql(n: i64, out: &mut BytesMut) {
    let mut digits = Vec::new();
    let mut rest = n.unsigned_abs();
    while rest > 0 {
        digits.push(i16::try_from(rest % 10000).unwrap_or(0));
        rest /= 10000;
    }
    digits.reverse();
    let count = i16::try_from(digits.len()).unwrap_or(0);
    let weight = count - 1;
    let sign: u16 = if n < 0 { 0x4000 } else { 0 };
    out.extend_from_slice(&count.to_be_bytes());
    out.extend_from_slice(&(if count == 0 { 0 } else { weight }).to_be_bytes());
    out.extend_from_slice(&sign.to_be_bytes());
    out.extend_from_slice(&0i16.to_be_bytes());
    for d in digits {
        out.extend_from_slice(&d.to_be_bytes());
    }
}

impl ToSql for Value {
    /// Binds in the type the server inferred for the parameter, converting like SQLite's
    /// affinity (an integer where text is expected is its decimal text, a numeric text where
    /// an integer is expected its number).
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut BytesMut,
    ) -> std::result::Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        let text = |s: &str, out: &mut BytesMut| {
            out.extend_from_slice(s.as_bytes());
            Ok(IsNull::No)
        };
        match (self, ty) {
            (Value::Null, _) => Ok(IsNull::Yes),
            (Value::Integer(n), &Type::INT8) => n.to_sql(ty, out),
            (Value::Integer(n), &Type::INT4) => i32::try_from(*n)?.to_sql(ty, out),
            (Value::Integer(n), &Type::INT2) => i16::try_from(*n)?.to_sql(ty, out),
            (Value::Integer(n), &Type::BOOL) => (*n != 0).to_sql(ty, out),
            (Value::Integer(n), &Type::NUMERIC) => {
                numeric_to_sql(*n, out);
                Ok(IsNull::No)
            }
            #[allow(clippy::cast_precision_loss)]
            (Value::Integer(n), &Type::FLOAT8) => (*n as f64).to_sql(ty, out),
            (Value::Integer(n), _) => text(&n.to_string(), out),
            (Value::Real(f), &Type::FLOAT8) => f.to_sql(ty, out),
            (Value::Real(f), _) => text(&f.to_string(), out),
            (Value::Text(s), &Type::INT8) => s.trim().parse::<i64>()?.to_sql(ty, out),
            (Value::Text(s), &Type::INT4) => s.trim().parse::<i32>()?.to_sql(ty, out),
            (Value::Text(s), &Type::BYTEA) => s.as_bytes().to_sql(ty, out),
            (Value::Text(s), _) => text(s, out),
            (Value::Blob(b), &Type::BYTEA) => b.as_slice().to_sql(ty, out),
            (Value::Blob(b), _) => text(&String::from_utf8_lossy(b), out),
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    tokio_postgres::types::to_sql_checked!();
}

// -----------------------------------------------------------------------------------------
// The dialect

/// A statement in SQLite's dialect as PostgreSQL's (see the module documentation): `?N` →
/// `$N` (a bare `?` numbered in order), `INSERT OR IGNORE` → `ON CONFLICT DO NOTHING`,
/// `INTEGER` → `BIGINT`, `… PRIMARY KEY AUTOINCREMENT` → an identity column, `BLOB` →
/// `BYTEA`, foreign keys `DEFERRABLE`, `PRAGMA defer_foreign_keys = ON` →
/// `SET CONSTRAINTS ALL DEFERRED`, `WITHOUT ROWID` dropped, every created table given a
/// `rowid` identity column ([`with_rowid`]). Text in quotes is left alone; `--` comments are
/// dropped.
pub fn to_postgres(sql: &str) -> String {
    // Words and placeholders, outside quotes.
    let mut out = String::with_capacity(sql.len() + 16);
    let mut chars = sql.chars().peekable();
    let mut next_bare = 0u32;
    let mut ignore = false;
    while let Some(c) = chars.next() {
        match c {
            '\'' | '"' => {
                out.push(c);
                for d in chars.by_ref() {
                    out.push(d);
                    if d == c {
                        break;
                    }
                }
            }
            // A `--` comment is dropped (its words are not SQL: an apostrophe or `?` there
            // is no quote or placeholder).
            '-' if chars.peek() == Some(&'-') => {
                for d in chars.by_ref() {
                    if d == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            '?' => {
                let mut digits = String::new();
                while let Some(d) = chars.peek().filter(|d| d.is_ascii_digit()) {
                    digits.push(*d);
                    chars.next();
                }
                if digits.is_empty() {
                    next_bare += 1;
                    digits = next_bare.to_string();
                }
                out.push('$');
                out.push_str(&digits);
            }
            c if c.is_ascii_alphabetic() || c == '_' => {
                let mut word = String::from(c);
                while let Some(d) = chars
                    .peek()
                    .filter(|d| d.is_ascii_alphanumeric() || **d == '_')
                {
                    word.push(*d);
                    chars.next();
                }
                match word.to_ascii_uppercase().as_str() {
                    "INTEGER" => out.push_str("BIGINT"),
                    "BLOB" => out.push_str("BYTEA"),
                    "AUTOINCREMENT" => out.push_str("GENERATED BY DEFAULT AS IDENTITY"),
                    _ => out.push_str(&word),
                }
            }
            c => out.push(c),
        }
    }
    let mut s = out;
    // Whole-statement rewrites (case as the sandbox writes them).
    for (from, to) in [
        (
            "PRIMARY KEY GENERATED BY DEFAULT AS IDENTITY",
            "GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY",
        ),
        (
            "PRAGMA defer_foreign_keys = ON",
            "SET CONSTRAINTS ALL DEFERRED",
        ),
        (") WITHOUT ROWID", ")"),
    ] {
        if s.contains(from) {
            s = s.replace(from, to);
        }
    }
    if s.contains("INSERT OR IGNORE INTO") {
        s = s.replace("INSERT OR IGNORE INTO", "INSERT INTO");
        ignore = true;
    }
    if ignore {
        let trimmed = s.trim_end().trim_end_matches(';').to_string();
        s = format!("{trimmed} ON CONFLICT DO NOTHING");
    }
    if s.contains("REFERENCES") {
        s = deferrable_references(&s);
    }
    if s.contains("CREATE TABLE") {
        s = with_rowid(&s);
    }
    s
}

/// Gives every created table a `rowid` (SQLite's implicit insertion-order key, which the
/// sandbox orders and deletes by): an identity column, last (so an `INSERT` without a column
/// list fills the declared columns).
fn with_rowid(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 64);
    let mut rest = sql;
    while let Some(at) = rest.find("CREATE TABLE") {
        let Some(open) = rest[at..].find('(') else {
            break;
        };
        // The parenthesis that closes the column list.
        let body = at + open;
        let mut depth = 0i32;
        let mut close = None;
        let mut quoted = false;
        for (i, ch) in rest[body..].char_indices() {
            match ch {
                '\'' => quoted = !quoted,
                '(' if !quoted => depth += 1,
                ')' if !quoted => {
                    depth -= 1;
                    if depth == 0 {
                        close = Some(body + i);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(close) = close else {
            break;
        };
        out.push_str(&rest[..close]);
        out.push_str(", rowid BIGINT GENERATED BY DEFAULT AS IDENTITY UNIQUE");
        rest = &rest[close..];
    }
    out.push_str(rest);
    out
}

/// Appends `DEFERRABLE INITIALLY IMMEDIATE` to every `REFERENCES t(c) [ON DELETE …]` clause
/// of a `CREATE TABLE`.
fn deferrable_references(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 64);
    let mut rest = sql;
    while let Some(at) = rest.find("REFERENCES") {
        let (head, tail) = rest.split_at(at);
        out.push_str(head);
        // The clause ends at the `,` or `)` that closes the column, at depth 0 after the
        // referenced column list.
        let mut depth = 0i32;
        let mut end = tail.len();
        let mut seen_list = false;
        for (i, ch) in tail.char_indices() {
            match ch {
                '(' => {
                    depth += 1;
                    seen_list = true;
                }
                ')' if depth > 0 => depth -= 1,
                ',' | ')' | '\n' if depth == 0 && seen_list => {
                    end = i;
                    break;
                }
                _ => {}
            }
        }
        let clause = tail[..end].trim_end_matches([',', ' ']);
        out.push_str(clause);
        out.push_str(" DEFERRABLE INITIALLY IMMEDIATE");
        rest = &tail[clause.len()..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A statement kept on a `Conn` ([`Conn::execute_kept`]) is prepared once per `Conn`,
    /// binds each run's own values, fails alone (a unique violation) and runs again after
    /// that; the next `Conn` (the next batch) prepares it again from rusqlite's cache.
    #[test]
    fn a_kept_statement_runs_each_time_with_its_own_values() {
        static INSERT: &str = "INSERT INTO k (id, v) VALUES (?1, ?2)";
        let db = rusqlite::Connection::open_in_memory().expect("memory");
        db.execute_batch("CREATE TABLE k (id TEXT PRIMARY KEY, v INTEGER)")
            .expect("table");
        {
            let c = Conn::sqlite(&db);
            for i in 0..3_i64 {
                c.execute_kept(INSERT, params![format!("p{i}"), i])
                    .expect("insert");
            }
            let e = c
                .execute_kept(INSERT, params!["p1", 9_i64])
                .expect_err("a second p1");
            assert!(e.is_unique_violation(), "{e}");
            c.execute_kept(INSERT, params!["p3", 3_i64])
                .expect("after the failure");
            assert_eq!(c.kept.borrow().len(), 1);
            let one: &[&dyn ToValue] = &[&"p9"];
            assert!(c.execute_kept(INSERT, one).is_err(), "one value of two");
        }
        Conn::sqlite(&db)
            .execute_kept(INSERT, params!["p4", 4_i64])
            .expect("the next Conn");
        let rows = Conn::sqlite(&db)
            .query_all("SELECT id, v FROM k ORDER BY id", ())
            .expect("rows");
        let got: Vec<(String, i64)> = rows
            .iter()
            .map(|r| (r.get(0).expect("id"), r.get(1).expect("v")))
            .collect();
        let want: Vec<(String, i64)> = (0..5).map(|i| (format!("p{i}"), i)).collect();
        assert_eq!(got, want);
    }

    /// Every kind of parameter binds on SQLite, borrowed ([`ToValue::to_sqlite`], the path of
    /// `params![..]` and a row's `to_params()`), exactly as its [`ToValue::to_value`] does
    /// (the path of every other parameter and of PostgreSQL): same storage class, same value;
    /// and a wrong number of them is still refused.
    #[test]
    fn a_borrowed_parameter_binds_as_its_owned_value() {
        let db = rusqlite::Connection::open_in_memory().expect("memory");
        let c = Conn::sqlite(&db);
        let text = String::from("päyment ' \"x\"");
        let arc: std::sync::Arc<str> = "shared".into();
        let bytes = vec![0_u8, 1, 255];
        let array = [7_u8; 3];
        let none: Option<String> = None;
        let some = Some(String::from("some"));
        let values: &[&dyn ToValue] = &[
            &text,
            &"str",
            &"",
            &arc,
            &bytes,
            &bytes.as_slice(),
            &array,
            &none,
            &some,
            &Some(3_i32),
            &Option::<i64>::None,
            &42_i64,
            &-7_i32,
            &u64::MAX,
            &true,
            &1.5_f64,
            &Value::Text("value".into()),
            &Value::Blob(vec![1, 2]),
            &Value::Integer(9),
            &Value::Null,
        ];
        let sql = "SELECT typeof(?1), quote(?1), ?1";
        for v in values {
            let borrowed: &[&dyn ToValue] = &[*v];
            let by_ref = c.query_all(sql, borrowed).expect("borrowed");
            let owned = c.query_all(sql, vec![v.to_value()]).expect("owned");
            assert_eq!(by_ref[0].values, owned[0].values, "{:?}", v.to_value());
            assert_eq!(by_ref[0].values[2], v.to_value());
            c.execute("CREATE TEMP TABLE IF NOT EXISTS t (x)", [])
                .expect("table");
            c.execute("DELETE FROM t", []).expect("empty");
            c.execute("INSERT INTO t (x) VALUES (?1)", borrowed)
                .expect("insert");
            let stored = c.query_all("SELECT x FROM t", ()).expect("read");
            assert_eq!(stored[0].values[0], v.to_value());
        }
        let one: &[&dyn ToValue] = &[&text];
        assert!(c.execute("UPDATE t SET x = ?1 WHERE x = ?2", one).is_err());
        assert!(c.query_all("SELECT ?1, ?2", one).is_err());
        let three: &[&dyn ToValue] = &[&text, &text, &text];
        assert!(
            c.execute("UPDATE t SET x = ?1 WHERE x = ?2", three)
                .is_err()
        );
    }

    #[test]
    fn statements_translate_to_postgres() {
        assert_eq!(
            to_postgres("SELECT a FROM t WHERE b = ?1 AND c = ?2 AND d = '?x'"),
            "SELECT a FROM t WHERE b = $1 AND c = $2 AND d = '?x'"
        );
        assert_eq!(to_postgres("VALUES (?, ?)"), "VALUES ($1, $2)");
        assert_eq!(
            to_postgres("-- the TPP's own? CREATE TABLE x (\nSELECT ?1 - 1"),
            "\nSELECT $1 - 1"
        );
        assert_eq!(
            to_postgres("INSERT OR IGNORE INTO t (a) VALUES (?1)"),
            "INSERT INTO t (a) VALUES ($1) ON CONFLICT DO NOTHING"
        );
        assert_eq!(
            to_postgres(
                "CREATE TABLE t (seq INTEGER PRIMARY KEY AUTOINCREMENT, x BLOB, \
                 o TEXT NOT NULL REFERENCES c(id) ON DELETE CASCADE,\n p TEXT REFERENCES d(id))"
            ),
            "CREATE TABLE t (seq BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, x BYTEA, \
             o TEXT NOT NULL REFERENCES c(id) ON DELETE CASCADE DEFERRABLE INITIALLY IMMEDIATE,\n \
             p TEXT REFERENCES d(id) DEFERRABLE INITIALLY IMMEDIATE, \
             rowid BIGINT GENERATED BY DEFAULT AS IDENTITY UNIQUE)"
        );
        assert_eq!(
            to_postgres("PRAGMA defer_foreign_keys = ON"),
            "SET CONSTRAINTS ALL DEFERRED"
        );
    }

    #[test]
    fn numerics_read_back() {
        // 12345678 = [1234, 5678], weight 1; -20000 = [2], weight 1, negative.
        let enc = |digits: &[i16], weight: i16, sign: u16, dscale: i16| {
            let mut v = Vec::new();
            v.extend_from_slice(&(digits.len() as i16).to_be_bytes());
            v.extend_from_slice(&weight.to_be_bytes());
            v.extend_from_slice(&sign.to_be_bytes());
            v.extend_from_slice(&dscale.to_be_bytes());
            for d in digits {
                v.extend_from_slice(&d.to_be_bytes());
            }
            v
        };
        assert_eq!(
            numeric(&enc(&[1234, 5678], 1, 0, 0)).unwrap(),
            Value::Integer(12_345_678)
        );
        assert_eq!(
            numeric(&enc(&[2], 1, 0x4000, 0)).unwrap(),
            Value::Integer(-20_000)
        );
        assert_eq!(numeric(&enc(&[], 0, 0, 0)).unwrap(), Value::Integer(0));
        assert_eq!(
            numeric(&enc(&[1, 5000], 0, 0, 1)).unwrap(),
            Value::Real(1.5)
        );
        for n in [0, 1, -1, 9999, 10000, -123_456_789, i64::MAX, i64::MIN + 1] {
            let mut out = BytesMut::new();
            numeric_to_sql(n, &mut out);
            assert_eq!(numeric(&out).unwrap(), Value::Integer(n), "{n}");
        }
    }
}
