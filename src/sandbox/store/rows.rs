//! Rows and columns: how the store's values are written to and read from the database
//! (either back end, through [`crate::sandbox::store::sql`]).
//!
//! - [`Column`]: one field in one column (a UUID as its text, a date as `YYYY-MM-DD`, a
//!   time as nanoseconds since the Unix epoch ([`to_nanos`]), a kind as its stored name).
//! - [`Stored`]: a model type kept as one row of a table, its columns named like its fields
//!   (declared with `stored!`); [`select_one`], [`select_all`] and [`insert`] are the one
//!   reader and writer of such rows.
//! - `table_row!`: a struct that *is* a table's row (the payment and overview tables).
//!
//! A stored value that does not parse back (a column edited outside the sandbox) is a
//! `FromSqlConversionFailure`, which the store answers as a database failure.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::sandbox::store::sql::{self, Conn, Params, Row, Value, params_from_iter};
use chrono::NaiveDate;
use uuid::Uuid;

use crate::sandbox::model::{
    Account, AccountKind, Authorisation, BalanceOverride, CardAccount, Customer,
    ManualCardTransaction, ManualTransaction, ScaStep, TppId,
};
use crate::xs2a::model::{Amount, CustomerType};

/// Declares a struct stored as one SQL row: `columns { .. }` are its fields in column order,
/// `filled_later { .. }` (optional) fields read by a second query (they start empty). Every
/// field is `pub`. It gets `COLUMNS` (the column names, in order, joined by `, `),
/// `PLACEHOLDERS` (`?1, ?2, ..` for those columns), `from_row` (column *i* into the *i*-th
/// field) and `to_params` (the column fields, for an `INSERT`).
macro_rules! table_row {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            columns { $( $(#[$doc:meta])* $field:ident: $ty:ty ),* $(,)? }
            $( filled_later { $( $(#[$later_doc:meta])* $later:ident: $later_ty:ty ),* $(,)? } )?
        }
    ) => {
        $(#[$meta])*
        pub struct $name {
            $( $(#[$doc])* pub $field: $ty, )*
            $( $( $(#[$later_doc])* pub $later: $later_ty, )* )?
        }

        impl $name {
            /// The column names in order, joined by `, `.
            #[allow(dead_code)]
            pub(crate) const COLUMNS: &'static str = join_columns!($($field),*);

            /// One row of a `SELECT` of [`Self::COLUMNS`] (in that order).
            #[allow(dead_code)]
            pub(crate) fn from_row(r: &crate::sandbox::store::sql::Row) -> crate::sandbox::store::sql::Result<Self> {
                let mut column = 0usize;
                let mut next = || {
                    column += 1;
                    column - 1
                };
                Ok(Self {
                    $( $field: r.get(next())?, )*
                    $( $( $later: Default::default(), )* )?
                })
            }

            /// `?1, ?2, ..`: one placeholder per column of [`Self::COLUMNS`].
            #[allow(dead_code)]
            pub(crate) fn placeholders() -> String {
                let names: &[&str] = &[$(stringify!($field)),*];
                (1..=names.len()).map(|i| format!("?{i}")).collect::<Vec<_>>().join(", ")
            }

            /// The column fields in [`Self::COLUMNS`] order, to bind to an `INSERT`.
            #[allow(dead_code)]
            pub(crate) fn to_params(&self) -> Vec<&dyn crate::sandbox::store::sql::ToValue> {
                vec![$( &self.$field as &dyn crate::sandbox::store::sql::ToValue ),*]
            }
        }
    };
}

/// `"a, b, c"` from the identifiers `a, b, c` (for [`table_row`]'s `COLUMNS`).
macro_rules! join_columns {
    ($first:ident $(, $rest:ident)*) => {
        concat!(stringify!($first) $(, ", ", stringify!($rest))*)
    };
}

/// Nanoseconds since the Unix epoch (negative before it), saturating.
pub fn to_nanos(t: SystemTime) -> i64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_nanos()).unwrap_or(i64::MAX),
        Err(e) => i64::try_from(e.duration().as_nanos())
            .map(|n| -n)
            .unwrap_or(i64::MIN),
    }
}

/// The inverse of [`to_nanos`].
pub fn from_nanos(n: i64) -> SystemTime {
    let d = Duration::from_nanos(n.unsigned_abs());
    if n >= 0 {
        UNIX_EPOCH.checked_add(d).unwrap_or(UNIX_EPOCH)
    } else {
        UNIX_EPOCH.checked_sub(d).unwrap_or(UNIX_EPOCH)
    }
}

/// Column `i` holds a value that does not parse back.
pub(crate) fn bad_column(
    i: usize,
    e: impl std::error::Error + Send + Sync + 'static,
) -> sql::Error {
    sql::Error::conversion(i, e)
}

/// A stored name that names nothing (an unknown kind or step).
#[derive(Debug, thiserror::Error)]
#[error("unexpected stored value {0:?}")]
pub(crate) struct BadValue(pub(crate) String);

/// The UUID in column `i` (stored as its text).
pub(crate) fn uuid_at(r: &Row, i: usize) -> crate::sandbox::store::sql::Result<Uuid> {
    Uuid::read(r, i)
}

/// The UUID in column `i`, `None` for `NULL` or an empty text.
pub(crate) fn opt_uuid_at(r: &Row, i: usize) -> crate::sandbox::store::sql::Result<Option<Uuid>> {
    match r.get_ref(i)? {
        Value::Text(t) if t.is_empty() => Ok(None),
        _ => Option::<Uuid>::read(r, i),
    }
}

/// A field kept in one column: how it is written ([`Column::value`]) and read back
/// ([`Column::read`]).
pub(crate) trait Column: Sized {
    /// The value of column `i` of `r`. Errors: the column does not hold this type.
    fn read(r: &Row, i: usize) -> crate::sandbox::store::sql::Result<Self>;
    /// The value to bind.
    fn value(&self) -> Value;
}

/// Columns whose Rust type [`sql`] reads and writes itself.
macro_rules! native_column {
    ($($ty:ty),*) => {$(
        impl Column for $ty {
            fn read(r: &Row, i: usize) -> crate::sandbox::store::sql::Result<Self> {
                r.get(i)
            }
            fn value(&self) -> Value {
                sql::ToValue::to_value(self)
            }
        }
    )*};
}

native_column!(String, i64, bool);

/// Columns stored as text that parses back (`parse` answers `None` or an error for a text
/// that names nothing).
fn parsed<T, E>(
    r: &Row,
    i: usize,
    parse: impl FnOnce(&str) -> Result<T, E>,
) -> crate::sandbox::store::sql::Result<T>
where
    E: std::error::Error + Send + Sync + 'static,
{
    let s: String = r.get(i)?;
    parse(&s).map_err(|e| bad_column(i, e))
}

impl Column for Uuid {
    fn read(r: &Row, i: usize) -> crate::sandbox::store::sql::Result<Self> {
        parsed(r, i, Uuid::parse_str)
    }
    fn value(&self) -> Value {
        Value::Text(self.to_string())
    }
}

impl Column for NaiveDate {
    fn read(r: &Row, i: usize) -> crate::sandbox::store::sql::Result<Self> {
        parsed(r, i, |s| NaiveDate::parse_from_str(s, "%Y-%m-%d"))
    }
    fn value(&self) -> Value {
        Value::Text(self.to_string())
    }
}

impl Column for SystemTime {
    fn read(r: &Row, i: usize) -> crate::sandbox::store::sql::Result<Self> {
        Ok(from_nanos(r.get(i)?))
    }
    fn value(&self) -> Value {
        Value::Integer(to_nanos(*self))
    }
}

impl Column for CustomerType {
    fn read(r: &Row, i: usize) -> crate::sandbox::store::sql::Result<Self> {
        parsed(r, i, |s| match s {
            "PRIVATE" => Ok(CustomerType::Private),
            "CORPORATE" => Ok(CustomerType::Corporate),
            _ => Err(BadValue(s.to_string())),
        })
    }
    fn value(&self) -> Value {
        Value::Text(self.as_str().to_string())
    }
}

impl Column for AccountKind {
    fn read(r: &Row, i: usize) -> crate::sandbox::store::sql::Result<Self> {
        parsed(r, i, |s| {
            AccountKind::parse(s).ok_or_else(|| BadValue(s.to_string()))
        })
    }
    fn value(&self) -> Value {
        Value::Text(self.as_str().to_string())
    }
}

/// `NULL` is `None`.
impl<T: Column> Column for Option<T> {
    fn read(r: &Row, i: usize) -> crate::sandbox::store::sql::Result<Self> {
        match r.get_ref(i)? {
            Value::Null => Ok(None),
            _ => T::read(r, i).map(Some),
        }
    }
    fn value(&self) -> Value {
        self.as_ref().map_or(Value::Null, Column::value)
    }
}

/// A model type kept as one row of a table: the columns a `SELECT` reads, the columns an
/// `INSERT` writes (without those SQLite assigns, such as `seq`), and the conversions.
pub(crate) trait Stored: Sized {
    /// The table [`insert`] writes to.
    const TABLE: &'static str;
    /// The columns [`Stored::from_row`] reads, in its order, joined by `, `.
    const COLUMNS: &'static str;
    /// The columns [`Stored::values`] writes, in its order, joined by `, `.
    const INSERT_COLUMNS: &'static str;
    /// One row of a `SELECT` of [`Stored::COLUMNS`]. Errors: a column does not parse.
    fn from_row(r: &Row) -> crate::sandbox::store::sql::Result<Self>;
    /// The values of [`Stored::INSERT_COLUMNS`], in that order.
    fn values(&self) -> Vec<Value>;
    /// Whether the table has a `seq` the database assigns (what [`insert`] answers).
    const HAS_SEQ: bool = true;
    /// The table's key, for [`replace`] (`ON CONFLICT (KEY)`).
    const KEY: &'static str = "id";
}

/// Implements [`Stored`] for a struct whose fields are its table's columns by name:
/// `TYPE in TABLE: written, ..; assigned: ..` (the `assigned` ones, optional, are set by
/// SQLite and only read).
macro_rules! stored {
    ($ty:ident in $table:literal: $($col:ident),* $(; assigned: $($auto:ident),*)?) => {
        impl Stored for $ty {
            const TABLE: &'static str = $table;
            const COLUMNS: &'static str = join_columns!($($col),* $($(, $auto)*)?);
            const INSERT_COLUMNS: &'static str = join_columns!($($col),*);
            fn from_row(r: &Row) -> crate::sandbox::store::sql::Result<Self> {
                let mut column = 0usize;
                let mut next = || {
                    column += 1;
                    column - 1
                };
                Ok(Self {
                    $( $col: Column::read(r, next())?, )*
                    $($( $auto: Column::read(r, next())?, )*)?
                })
            }
            fn values(&self) -> Vec<Value> {
                vec![$( self.$col.value() ),*]
            }
        }
    };
}

stored! { Customer in "customers": id, number, kind, name, employer }
stored! {
    Account in "accounts": id, owner, kind, bban, currency, name, product, cash_account_type,
    opening_balance, generated
}
stored! { CardAccount in "card_accounts": id, owner, masked_pan, currency, name, product, status }
stored! {
    ManualTransaction in "manual_transactions": id, account, booked, booking_date, value_date,
    amount, creditor_name, creditor_account, debtor_name, debtor_account, remittance,
    created_at; assigned: seq
}
// Also the rows of `card_balance_overrides` (the same columns; set with an upsert, read with
// `select_one`).
stored! { BalanceOverride in "balance_overrides": booked, available, after_seq, set_at }

/// The original amount is two columns (`original_currency`, `original_amount`).
impl Stored for ManualCardTransaction {
    const TABLE: &'static str = "manual_card_transactions";
    const COLUMNS: &'static str = "id, card_account, booked, booking_date, transaction_date, \
                                   amount, original_currency, original_amount, \
                                   card_acceptor_id, merchant_category_code, \
                                   transaction_details, created_at, seq";
    const INSERT_COLUMNS: &'static str = "id, card_account, booked, booking_date, \
                                          transaction_date, amount, original_currency, \
                                          original_amount, card_acceptor_id, \
                                          merchant_category_code, transaction_details, \
                                          created_at";
    fn from_row(r: &Row) -> crate::sandbox::store::sql::Result<Self> {
        let currency: Option<String> = r.get(6)?;
        let amount: Option<String> = r.get(7)?;
        Ok(ManualCardTransaction {
            id: Column::read(r, 0)?,
            card_account: Column::read(r, 1)?,
            booked: r.get(2)?,
            booking_date: Column::read(r, 3)?,
            transaction_date: Column::read(r, 4)?,
            amount: r.get(5)?,
            original_amount: currency
                .zip(amount)
                .map(|(currency, amount)| Amount { currency, amount }),
            card_acceptor_id: r.get(8)?,
            merchant_category_code: r.get(9)?,
            transaction_details: r.get(10)?,
            created_at: Column::read(r, 11)?,
            seq: r.get(12)?,
        })
    }
    fn values(&self) -> Vec<Value> {
        let original = self.original_amount.as_ref();
        vec![
            self.id.value(),
            self.card_account.value(),
            self.booked.value(),
            self.booking_date.value(),
            self.transaction_date.value(),
            self.amount.value(),
            original.map(|a| a.currency.clone()).value(),
            original.map(|a| a.amount.clone()).value(),
            self.card_acceptor_id.value(),
            self.merchant_category_code.value(),
            self.transaction_details.value(),
            self.created_at.value(),
        ]
    }
}

/// The step is three columns (`step`, `customer`, `agreement`; [`step_columns`]).
impl Stored for Authorisation {
    const TABLE: &'static str = "sca_authorisations";
    const HAS_SEQ: bool = false;
    const COLUMNS: &'static str =
        "id, tpp, tpp_name, redirect_uri, tpp_session_id, created_at, step, customer, agreement";
    const INSERT_COLUMNS: &'static str = Self::COLUMNS;
    fn from_row(r: &Row) -> crate::sandbox::store::sql::Result<Self> {
        let step: String = r.get(6)?;
        let customer = opt_uuid_at(r, 7)?;
        let agreement = opt_uuid_at(r, 8)?;
        let need = |c: Option<Uuid>| c.ok_or_else(|| bad_column(7, BadValue("no customer".into())));
        let step = match step.as_str() {
            "IDENTIFY" => ScaStep::Identify,
            "CHOOSE_CONTEXT" => ScaStep::ChooseContext {
                customer: need(customer)?,
            },
            "CONSENT" => ScaStep::Consent {
                customer: need(customer)?,
                agreement,
            },
            "FINISHED" => ScaStep::Finished,
            _ => return Err(bad_column(6, BadValue(step))),
        };
        Ok(Authorisation {
            id: Column::read(r, 0)?,
            tpp: TppId(r.get(1)?),
            tpp_name: r.get(2)?,
            redirect_uri: r.get(3)?,
            tpp_session_id: r.get(4)?,
            created_at: Column::read(r, 5)?,
            step,
        })
    }
    fn values(&self) -> Vec<Value> {
        let (step, customer, agreement) = step_columns(&self.step);
        vec![
            self.id.value(),
            Value::Text(self.tpp.0.to_string()),
            self.tpp_name.value(),
            self.redirect_uri.value(),
            self.tpp_session_id.value(),
            self.created_at.value(),
            Value::Text(step.to_string()),
            customer.value(),
            agreement.value(),
        ]
    }
}

/// The `(step, customer, agreement)` columns of an SCA step.
pub(crate) fn step_columns(step: &ScaStep) -> (&'static str, Option<Uuid>, Option<Uuid>) {
    match step {
        ScaStep::Identify => ("IDENTIFY", None, None),
        ScaStep::ChooseContext { customer } => ("CHOOSE_CONTEXT", Some(*customer), None),
        ScaStep::Consent {
            customer,
            agreement,
        } => ("CONSENT", Some(*customer), *agreement),
        ScaStep::Finished => ("FINISHED", None, None),
    }
}

/// Every row of `SELECT T::COLUMNS FROM {from}`, in its order. Errors: the database fails.
pub(crate) fn select_all<T: Stored>(
    c: &Conn<'_>,
    from: &str,
    args: impl Params,
) -> crate::sandbox::store::sql::Result<Vec<T>> {
    c.prepare_cached(&format!("SELECT {} FROM {from}", T::COLUMNS))?
        .query_map(args, T::from_row)?
        .collect()
}

/// The first row of [`select_all`] (`from`: the table and the rest of the statement, a
/// unique key, e.g. `customers WHERE id = ?1`), if any. Errors: the database fails.
pub(crate) fn select_one<T: Stored>(
    c: &Conn<'_>,
    from: &str,
    args: impl Params,
) -> crate::sandbox::store::sql::Result<Option<T>> {
    Ok(select_all(c, from, args)?.into_iter().next())
}

/// Inserts `row` into its table and returns the `seq` the database gave it (0 for a table
/// without one, [`Stored::HAS_SEQ`]).
/// Errors: the database fails (a constraint, such as a taken unique value or a missing
/// owner).
pub(crate) fn insert<T: Stored>(c: &Conn<'_>, row: &T) -> crate::sandbox::store::sql::Result<i64> {
    write(c, row)
}

/// Inserts `row` into its table, replacing the row with the same key
/// ([`Stored::KEY`]; `ON CONFLICT (key) DO UPDATE`, the form both back ends accept).
/// Errors: as [`insert`].
pub(crate) fn replace<T: Stored>(c: &Conn<'_>, row: &T) -> sql::Result<i64> {
    let sql = statement::<T>(Verb::Replace, || {
        let update = T::INSERT_COLUMNS
            .split(',')
            .map(str::trim)
            .filter(|col| !T::KEY.split(',').any(|k| k.trim() == *col))
            .map(|col| format!("{col} = excluded.{col}"))
            .collect::<Vec<_>>()
            .join(", ");
        format!(
            "INSERT INTO {} ({}) VALUES ({}) ON CONFLICT ({}) DO UPDATE SET {update}",
            T::TABLE,
            T::INSERT_COLUMNS,
            placeholders::<T>(),
            T::KEY
        )
    });
    c.execute_pipelined(&sql, params_from_iter(row.values()))?;
    Ok(0)
}

/// Which statement [`statement`] holds for a table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Verb {
    Insert,
    Replace,
}

/// The text of `verb`'s statement for `T`'s table, built by `build` at its first use and
/// kept for the process (issue 23: [`replace`] made it again for every consent, about 20,000
/// instructions of `format!`s and joins). The texts depend only on `T`'s constants, so one
/// per (verb, table) is right; there are as many as the [`Stored`] types.
fn statement<T: Stored>(verb: Verb, build: impl FnOnce() -> String) -> std::sync::Arc<str> {
    type Texts = std::collections::HashMap<(Verb, &'static str), std::sync::Arc<str>>;
    static TEXTS: std::sync::LazyLock<std::sync::RwLock<Texts>> =
        std::sync::LazyLock::new(Default::default);
    let key = (verb, T::TABLE);
    if let Some(t) = TEXTS.read().unwrap_or_else(|p| p.into_inner()).get(&key) {
        return t.clone();
    }
    TEXTS
        .write()
        .unwrap_or_else(|p| p.into_inner())
        .entry(key)
        .or_insert_with(|| build().into())
        .clone()
}

fn placeholders<T: Stored>() -> String {
    (1..=T::INSERT_COLUMNS.split(',').count())
        .map(|i| format!("?{i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn write<T: Stored>(c: &Conn<'_>, row: &T) -> sql::Result<i64> {
    let sql = statement::<T>(Verb::Insert, || {
        format!(
            "INSERT INTO {} ({}) VALUES ({})",
            T::TABLE,
            T::INSERT_COLUMNS,
            placeholders::<T>()
        )
    });
    if T::HAS_SEQ {
        c.insert_seq(&sql, params_from_iter(row.values()))
    } else {
        c.execute(&sql, params_from_iter(row.values()))?;
        Ok(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nanos_round_trip() {
        for t in [
            UNIX_EPOCH,
            UNIX_EPOCH + Duration::new(1_800_000_000, 123),
            UNIX_EPOCH - Duration::from_secs(5),
        ] {
            assert_eq!(from_nanos(to_nanos(t)), t);
        }
    }

    /// A savings account of `owner` with the BBAN `bban`.
    fn savings_account(owner: Uuid, bban: &str) -> Account {
        Account {
            id: Uuid::new_v4(),
            owner,
            kind: AccountKind::Savings,
            bban: bban.into(),
            currency: "NOK".into(),
            name: "Sparekonto".into(),
            product: "Sparekonto".into(),
            cash_account_type: "SVGS".into(),
            opening_balance: 250_000,
            generated: false,
        }
    }

    #[test]
    fn a_row_reads_back_what_it_wrote() -> crate::sandbox::store::sql::Result<()> {
        let conn = rusqlite::Connection::open_in_memory()?;
        let c = Conn::sqlite(&conn);
        c.execute_batch(
            "CREATE TABLE accounts (id, owner, kind, bban, currency, name, product, \
             cash_account_type, opening_balance, generated)",
        )?;
        let a = savings_account(Uuid::new_v4(), "15030123455");
        insert(&c, &a)?;
        let back: Option<Account> = select_one(&c, "accounts WHERE bban = ?1", ["15030123455"])?;
        assert_eq!(back, Some(a));
        Ok(())
    }

    /// The statement texts are kept per (verb, table) ([`statement`]): a second type's insert
    /// goes to its own table, and a replace after an insert of another table still replaces.
    #[test]
    fn kept_statements_write_each_type_to_its_own_table() -> crate::sandbox::store::sql::Result<()>
    {
        let conn = rusqlite::Connection::open_in_memory()?;
        let c = Conn::sqlite(&conn);
        c.execute_batch(
            "CREATE TABLE accounts (seq INTEGER PRIMARY KEY, id, owner, kind, bban, currency, \
             name, product, cash_account_type, opening_balance, generated);
             CREATE TABLE customers (seq INTEGER PRIMARY KEY, id, number, kind, name, employer);
             CREATE TABLE sca_authorisations (id PRIMARY KEY, tpp, tpp_name, redirect_uri, \
             tpp_session_id, created_at, step, customer, agreement)",
        )?;
        let customer = Customer {
            id: Uuid::new_v4(),
            number: "01017012345".into(),
            kind: CustomerType::Private,
            name: "Kari Nordmann".into(),
            employer: String::new(),
        };
        let account = |bban: &str| savings_account(customer.id, bban);
        let mut auth = Authorisation {
            id: Uuid::new_v4(),
            tpp: TppId("tpp-a".into()),
            tpp_name: "TPP A".into(),
            redirect_uri: "https://tpp.example/cb".into(),
            tpp_session_id: "s1".into(),
            created_at: UNIX_EPOCH + Duration::from_secs(1_800_000_000),
            step: ScaStep::Identify,
        };
        // Twice each, in turns: the second use of each text comes from the kept ones.
        for round in 0..2 {
            let a = account(&format!("1503012345{round}"));
            assert_eq!(insert(&c, &a)?, 2 * round + 1);
            assert_eq!(
                insert(&c, &account(&format!("1603012345{round}")))?,
                2 * round + 2
            );
            let mut k = customer.clone();
            k.id = Uuid::new_v4();
            insert(&c, &k)?;
            auth.step = if round == 0 {
                ScaStep::Identify
            } else {
                ScaStep::ChooseContext {
                    customer: customer.id,
                }
            };
            replace(&c, &auth)?;
            let back: Option<Account> =
                select_one(&c, "accounts WHERE bban = ?1", [a.bban.clone()])?;
            assert_eq!(back, Some(a));
            let back: Option<Customer> =
                select_one(&c, "customers WHERE id = ?1", [k.id.to_string()])?;
            assert_eq!(back, Some(k));
        }
        let all: Vec<Authorisation> = select_all(&c, "sca_authorisations", ())?;
        assert_eq!(all, vec![auth]);
        let customers: Vec<Customer> = select_all(&c, "customers", ())?;
        assert_eq!(customers.len(), 2);
        Ok(())
    }
}
