//! Indexes for every purge and lookup of the sandbox's tables (issue 20, finding 4: before
//! them, `DELETE FROM sca_authorisations WHERE created_at < ?` ran before every consent SCA
//! start as a full scan, so writes slowed down linearly with the table).
//!
//! One named migration ([`MIGRATION`]), applied after every module's own tables (see
//! `sandbox::MIGRATIONS`). The statements it serves are listed in [`PLANNED`]; the test
//! `every_planned_statement_uses_an_index` asks SQLite (`EXPLAIN QUERY PLAN`) that none of
//! them scans a whole table. Lookups by primary key or `UNIQUE` column, and the purges that
//! already had their index (`sca_browsers_created`, `replay_request_ids_expires`,
//! `rules_unattended_access_key`), need nothing here.

use crate::sandbox::store::db::Migration;

/// The indexes (see the module documentation).
pub const MIGRATION: Migration = (
    "indexes_001_purges_and_lookups",
    "CREATE INDEX IF NOT EXISTS sca_authorisations_created ON sca_authorisations (created_at);
    CREATE INDEX IF NOT EXISTS sca_authorisations_customer ON sca_authorisations (customer);
    CREATE INDEX IF NOT EXISTS sca_authorisations_agreement ON sca_authorisations (agreement);
    CREATE INDEX IF NOT EXISTS consents_by_agreement ON consents (agreement);
    CREATE INDEX IF NOT EXISTS consents_by_customer ON consents (customer);
    CREATE INDEX IF NOT EXISTS psu_registrations_by_customer ON psu_registrations (customer);
    CREATE INDEX IF NOT EXISTS psu_pisp_registrations_by_customer
        ON psu_pisp_registrations (customer);
    CREATE INDEX IF NOT EXISTS agreements_by_corporate ON agreements (corporate, holder);
    CREATE INDEX IF NOT EXISTS agreements_by_holder ON agreements (holder);
    CREATE INDEX IF NOT EXISTS pis_authorisations_by_payment
        ON pis_authorisations (payment, created_at);
    CREATE INDEX IF NOT EXISTS pis_authorisations_by_basket
        ON pis_authorisations (basket, created_at);
    CREATE INDEX IF NOT EXISTS pis_payments_by_created ON pis_payments (created_at, id);
    CREATE INDEX IF NOT EXISTS pis_baskets_by_created ON pis_baskets (created_at, id);
    CREATE INDEX IF NOT EXISTS consent_resources_by_created
        ON consent_resources (created_at, id);
    CREATE INDEX IF NOT EXISTS manual_transactions_by_account_seq
        ON manual_transactions (account, seq);
    CREATE INDEX IF NOT EXISTS manual_card_transactions_by_card_seq
        ON manual_card_transactions (card_account, seq);",
);

/// The logical-duplicate check at payment initiation
/// (`payments::logical_duplicate_exists`): `?1` the payment's duplicate key, `?2` the sandbox
/// day, `?3` the TPP.
pub const LOGICAL_DUPLICATE: &str = "SELECT EXISTS(SELECT 1 FROM pis_payments \
     WHERE tpp = ?3 AND dedup_key = ?1 AND created_day = ?2 AND status NOT IN ('RJCT', 'CANC'))";

/// The logical-duplicate check looks among the calling TPP's payments only (issue 20: each
/// TPP its own world), so its index leads with the TPP: a TPP's new payments then land
/// among its own index entries, not on random pages spread over every TPP's.
pub const MIGRATION_TPP_DUPLICATES: Migration = (
    "indexes_002_logical_duplicates_per_tpp",
    "DROP INDEX IF EXISTS pis_payments_dedup;
    CREATE INDEX IF NOT EXISTS pis_payments_dedup_by_tpp
        ON pis_payments (tpp, dedup_key, created_day);",
);

/// The purge of expired consent SCA authorisations looks at the calling TPP's only
/// ([`PURGE_SCA_AUTHORISATIONS`]), so its index leads with the TPP: another TPP's expired
/// authorisations, which only that TPP's own consents purge, are never read by this one's
/// purge (with an index on `created_at` alone, a TPP that left 100,000 of them made every
/// other TPP's consent walk through them: issue 20's finding 4 between TPPs).
pub const MIGRATION_SCA_PURGE_PER_TPP: Migration = (
    "indexes_003_sca_purge_per_tpp",
    "DROP INDEX IF EXISTS sca_authorisations_created;
    CREATE INDEX IF NOT EXISTS sca_authorisations_by_tpp_created
        ON sca_authorisations (tpp, created_at);",
);

/// Indexes whose rows a creation never needs: each of these columns is NULL (or the
/// status is not `ACTC`) when its row is created, and every statement that searches the
/// index names a value of the column (`basket = ?1` implies `basket IS NOT NULL`), so the
/// index holds only the rows with one (SQLite and PostgreSQL partial indexes). Before, each
/// payment creation added an entry to `pis_payments_due` (status `RCVD`, no run time) and
/// to `pis_authorisations_by_basket` (no basket), and each consent creation to
/// `sca_authorisations_customer` and `sca_authorisations_agreement` (no PSU yet): one page
/// more per index in the write-ahead log at every group commit (issue 23, session 19: 2 of
/// ~10 b-trees a payment's commit writes, ~2.7 of its ~21 pages; 2 of a consent's ~8).
/// The authorised payments' index keeps their run time (`due_at`) for
/// `payments::NEXT_DUE` and the batch runs.
pub const MIGRATION_PARTIAL: Migration = (
    "indexes_004_only_rows_with_a_value",
    "DROP INDEX IF EXISTS pis_payments_due;
    CREATE INDEX IF NOT EXISTS pis_payments_due_actc ON pis_payments (due_at)
        WHERE status = 'ACTC';
    DROP INDEX IF EXISTS pis_authorisations_by_basket;
    CREATE INDEX IF NOT EXISTS pis_authorisations_of_basket
        ON pis_authorisations (basket, created_at) WHERE basket IS NOT NULL;
    DROP INDEX IF EXISTS pis_authorisations_by_payment;
    CREATE INDEX IF NOT EXISTS pis_authorisations_of_payment
        ON pis_authorisations (payment, created_at) WHERE payment IS NOT NULL;
    DROP INDEX IF EXISTS sca_authorisations_customer;
    CREATE INDEX IF NOT EXISTS sca_authorisations_of_customer
        ON sca_authorisations (customer) WHERE customer IS NOT NULL;
    DROP INDEX IF EXISTS sca_authorisations_agreement;
    CREATE INDEX IF NOT EXISTS sca_authorisations_of_agreement
        ON sca_authorisations (agreement) WHERE agreement IS NOT NULL;",
);

/// The two tables a consent creation writes, rebuilt with their `CHECK`s written as `=`
/// comparisons joined by `OR` instead of `IN` lists (the same values allowed, the same
/// constraint error otherwise), and their indexes made again as [`MIGRATION_SCA_PURGE_PER_TPP`]
/// and [`MIGRATION_PARTIAL`] left them. SQLite evaluates a `CHECK (c IN (…))` of three or more
/// values through a temporary b-tree that it builds again at every `INSERT` or `UPDATE` of
/// the row (`OpenEphemeral`): issue 23, session 19, about 16,000 instructions per statement,
/// ~32,000 of a consent creation's ~451,000 (the `INSERT` into `sca_authorisations` and the
/// one into `consent_resources`). Checked by `check_constraints_use_no_temporary_table`.
pub const MIGRATION_CHECKS_WITHOUT_IN: Migration = (
    "indexes_005_checks_without_in_lists",
    "CREATE TABLE sca_authorisations_005 (
        id TEXT PRIMARY KEY,
        tpp TEXT NOT NULL,
        tpp_name TEXT NOT NULL,
        redirect_uri TEXT NOT NULL,
        tpp_session_id TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        step TEXT NOT NULL CHECK (step = 'IDENTIFY' OR step = 'CHOOSE_CONTEXT'
            OR step = 'CONSENT' OR step = 'FINISHED'),
        customer TEXT,
        agreement TEXT
    );
    INSERT INTO sca_authorisations_005 (id, tpp, tpp_name, redirect_uri, tpp_session_id,
        created_at, step, customer, agreement)
        SELECT id, tpp, tpp_name, redirect_uri, tpp_session_id, created_at, step, customer,
            agreement FROM sca_authorisations;
    DROP TABLE sca_authorisations;
    ALTER TABLE sca_authorisations_005 RENAME TO sca_authorisations;
    CREATE INDEX IF NOT EXISTS sca_authorisations_by_tpp_created
        ON sca_authorisations (tpp, created_at);
    CREATE INDEX IF NOT EXISTS sca_authorisations_of_customer
        ON sca_authorisations (customer) WHERE customer IS NOT NULL;
    CREATE INDEX IF NOT EXISTS sca_authorisations_of_agreement
        ON sca_authorisations (agreement) WHERE agreement IS NOT NULL;
    CREATE TABLE consent_resources_005 (
        id TEXT PRIMARY KEY,
        tpp TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status = 'received' OR status = 'valid'
            OR status = 'rejected' OR status = 'terminatedByTpp'),
        psu_id TEXT,
        agreement TEXT,
        created_at INTEGER NOT NULL,
        last_action INTEGER NOT NULL
    );
    INSERT INTO consent_resources_005 (id, tpp, status, psu_id, agreement, created_at,
        last_action)
        SELECT id, tpp, status, psu_id, agreement, created_at, last_action
        FROM consent_resources;
    DROP TABLE consent_resources;
    ALTER TABLE consent_resources_005 RENAME TO consent_resources;
    CREATE INDEX IF NOT EXISTS consent_resources_by_created
        ON consent_resources (created_at, id);",
);

/// On SQLite only ([`crate::sandbox::store::db::SQLITE_ONLY`]): the logical-duplicate
/// check no longer searches an index of the keys (`pis_payments_dedup_by_tpp`, whose key, the
/// payment's own text, put each new payment on a random leaf: about one page of the
/// write-ahead log per payment, a third of a payment's pages; issue 23, session 21). The
/// writer keeps each (TPP, day)'s keys in memory ([`crate::sandbox::store::dup_keys`]) and
/// loads them by TPP and day ([`DUPLICATES_OF_DAY`]) through `pis_payments_by_tpp_day`,
/// whose new entries append at the TPP's day range. PostgreSQL keeps the keyed index
/// ([`LOGICAL_DUPLICATE`]): other instances write there, so no one instance can hold the keys.
pub const MIGRATION_DUPLICATES_IN_MEMORY: Migration = (
    "indexes_006_duplicate_keys_in_memory",
    "-- SQLite only
    DROP INDEX IF EXISTS pis_payments_dedup_by_tpp;
    CREATE INDEX IF NOT EXISTS pis_payments_by_tpp_day ON pis_payments (tpp, created_day);",
);

/// A (TPP, day)'s payments for the writer's duplicate keys (SQLite,
/// `payments::logical_duplicate_exists`): `?1` the TPP, `?2` the sandbox day; (rowid,
/// duplicate key) rows.
pub const DUPLICATES_OF_DAY: &str =
    "SELECT rowid, dedup_key FROM pis_payments WHERE tpp = ?1 AND created_day = ?2";

/// The confirmation of a listed candidate (SQLite, `payments::logical_duplicate_exists`):
/// whether the row `?1` (rowid) is a payment of the TPP `?2` with the key `?3`, created on
/// the day `?4`, not rejected or cancelled ([`LOGICAL_DUPLICATE`]'s condition).
pub const DUPLICATE_CONFIRMED: &str = "SELECT EXISTS(SELECT 1 FROM pis_payments \
     WHERE rowid = ?1 AND tpp = ?2 AND dedup_key = ?3 AND created_day = ?4 \
     AND status NOT IN ('RJCT', 'CANC'))";

/// The purge of expired consent SCA authorisations before a new one
/// (`Store::insert_authorisation`): `?1` the cutoff (nanoseconds, in the TPP's own world
/// clock), `?2` the new id, `?3` the TPP. Only that TPP's: another TPP's clock may be
/// behind this one's, and its authorisations are not expired in its world.
pub const PURGE_SCA_AUTHORISATIONS: &str =
    "DELETE FROM sca_authorisations WHERE created_at < ?1 AND id <> ?2 AND tpp = ?3";

/// The purges and lookups the indexes serve, as the store runs them (parameters unbound).
/// Each must be answered through an index: `EXPLAIN QUERY PLAN` shows no `SCAN` of a table
/// (test `every_planned_statement_uses_an_index`).
pub const PLANNED: &[&str] = &[
    // The purge before every consent SCA start (`Store::insert_authorisation`).
    PURGE_SCA_AUTHORISATIONS,
    // `Store::delete_customer`, `Store::delete_agreement`.
    "DELETE FROM sca_authorisations WHERE customer = ?1",
    "DELETE FROM sca_authorisations WHERE agreement = ?1",
    "DELETE FROM consents WHERE agreement = ?1",
    "DELETE FROM consents WHERE agreement IN \
     (SELECT id FROM agreements WHERE corporate = ?1 OR holder = ?1)",
    "SELECT EXISTS(SELECT 1 FROM agreements WHERE corporate = ?1 AND holder = ?2)",
    // Foreign-key checks when a customer is deleted (children found by their parent).
    "SELECT 1 FROM consents WHERE customer = ?1",
    "SELECT 1 FROM psu_registrations WHERE customer = ?1",
    "SELECT 1 FROM psu_pisp_registrations WHERE customer = ?1",
    // A payment's authorisations (status reads, SCA pages, the list of authorisations).
    "SELECT id FROM pis_authorisations WHERE payment = ?1 ORDER BY created_at",
    "UPDATE pis_authorisations SET sca_status = ?2 WHERE basket = ?1 AND sca_status IN (?3, ?4)",
    "SELECT id FROM pis_authorisations WHERE basket = ?1 ORDER BY created_at",
    // Every payment read and SCA page (`payments::authorisations_covering`).
    "SELECT id FROM pis_authorisations WHERE payment = ?1 OR basket IN \
     (SELECT bp.basket FROM pis_basket_payments bp JOIN pis_baskets b ON b.id = bp.basket \
      WHERE bp.payment = ?1 AND b.cancelled = 0) ORDER BY created_at, rowid",
    // The state browser's pages (`GET /v1/sandbox/state`), keyset-paginated.
    "SELECT id FROM pis_payments WHERE (created_at, id) > (?1, ?2) ORDER BY created_at, id LIMIT 10",
    "SELECT id FROM pis_baskets WHERE (created_at, id) > (?1, ?2) ORDER BY created_at, id LIMIT 10",
    "SELECT id FROM consent_resources WHERE (created_at, id) > (?1, ?2) \
     ORDER BY created_at, id LIMIT 10",
    // Balance overrides' watermark.
    "SELECT COALESCE(MAX(seq), 0) FROM manual_transactions WHERE account = ?1",
    "SELECT COALESCE(MAX(seq), 0) FROM manual_card_transactions WHERE card_account = ?1",
    // Logical duplicates at payment initiation (SQLite: a day's keys, a candidate's row;
    // PostgreSQL's `LOGICAL_DUPLICATE`: test `the_duplicate_check_searches_by_back_end`),
    // due batch runs.
    DUPLICATES_OF_DAY,
    DUPLICATE_CONFIRMED,
    "SELECT EXISTS(SELECT 1 FROM pis_payments WHERE status = 'ACTC' AND due_at IS NOT NULL \
     AND due_at <= ?1)",
    // The next run time (`payments::NEXT_DUE`, the same text: test
    // `payments::tests::the_next_run_time_is_planned`), read before every payment creation,
    // and the batch runs' candidates (`payments::batch_candidates`).
    NEXT_DUE_TEXT,
    "SELECT id FROM pis_payments WHERE status = 'ACTC' AND due_at IS NOT NULL AND due_at <= ?1 \
     ORDER BY due_at, approved_at, created_at, rowid",
    // The state browser's latest SCA status of a payment (`overview::latest_sca`).
    "SELECT p.id, (SELECT a.sca_status FROM pis_authorisations a WHERE a.payment = p.id \
     ORDER BY a.created_at DESC, a.id DESC LIMIT 1) FROM pis_payments p WHERE p.id = ?1",
];

/// The text of `payments::NEXT_DUE` (this module comes before `payments` in the layers).
const NEXT_DUE_TEXT: &str = "SELECT min(due_at) FROM pis_payments WHERE status = 'ACTC'";

/// The statements each partial index of [`MIGRATION_PARTIAL`] serves, with its name: the
/// plan of each must search that index (test `partial_indexes_serve_their_statements`; a
/// partial index is used only when the statement implies its condition).
pub const PARTIAL_PLANS: &[(&str, &str)] = &[
    (NEXT_DUE_TEXT, "pis_payments_due_actc"),
    (
        "SELECT id FROM pis_payments WHERE status = 'ACTC' AND due_at IS NOT NULL AND due_at <= ?1 \
         ORDER BY due_at, approved_at, created_at, rowid",
        "pis_payments_due_actc",
    ),
    (
        "SELECT EXISTS(SELECT 1 FROM pis_payments WHERE status = 'ACTC' AND due_at IS NOT NULL \
         AND due_at <= ?1)",
        "pis_payments_due_actc",
    ),
    (
        "SELECT id FROM pis_authorisations WHERE basket = ?1 ORDER BY created_at, rowid",
        "pis_authorisations_of_basket",
    ),
    (
        "UPDATE pis_authorisations SET sca_status = ?2 WHERE basket = ?1 AND sca_status IN (?3, ?4)",
        "pis_authorisations_of_basket",
    ),
    (
        "SELECT id FROM pis_authorisations WHERE payment = ?1 ORDER BY created_at, rowid",
        "pis_authorisations_of_payment",
    ),
    (
        "SELECT id FROM pis_authorisations WHERE payment = ?1 OR basket IN \
         (SELECT bp.basket FROM pis_basket_payments bp JOIN pis_baskets b ON b.id = bp.basket \
          WHERE bp.payment = ?1 AND b.cancelled = 0) ORDER BY created_at, rowid",
        "pis_authorisations_of_basket",
    ),
    (
        "SELECT p.id, (SELECT a.sca_status FROM pis_authorisations a WHERE a.payment = p.id \
         ORDER BY a.created_at DESC, a.id DESC LIMIT 1) FROM pis_payments p WHERE p.id = ?1",
        "pis_authorisations_of_payment",
    ),
    (
        "DELETE FROM sca_authorisations WHERE customer = ?1",
        "sca_authorisations_of_customer",
    ),
    (
        "DELETE FROM sca_authorisations WHERE agreement = ?1",
        "sca_authorisations_of_agreement",
    ),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::store::db::{Db, Storage};

    /// The details of the plan of `sql` (`EXPLAIN QUERY PLAN`).
    fn plan(db: &Db, sql: &str) -> Vec<String> {
        explained(db, "EXPLAIN QUERY PLAN", 3, sql)
    }
    /// Column `column` of each row of `explain` (`EXPLAIN QUERY PLAN`: 3, the detail;
    /// `EXPLAIN`: 1, the opcode) run on `sql`. Parameters are left unbound (NULL): neither
    /// the plan nor the program depends on their values.
    fn explained(db: &Db, explain: &str, column: usize, sql: &str) -> Vec<String> {
        db.read_raw(|c| {
            let c = c.as_sqlite().expect("a SQLite database");
            let mut st = c.prepare(&format!("{explain} {sql}"))?;
            let mut rows = st.raw_query();
            let mut out = Vec::new();
            while let Some(r) = rows.next()? {
                out.push(r.get::<_, String>(column)?);
            }
            Ok(out)
        })
        .unwrap()
    }

    /// A new state, and a state file made before `migration` with `rows` written into it,
    /// both then migrated to the last migration: (the file's directory, kept while the file
    /// is used; the new state; the migrated file).
    fn new_and_migrated_file(migration: &str, rows: &str) -> (tempfile::TempDir, Db, Db) {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("old.sqlite3");
        let all = crate::sandbox::MIGRATIONS;
        let at = all
            .iter()
            .position(|m| m.0 == migration)
            .expect("the migration is in the list");
        {
            let old = Db::open(&Storage::File(file.clone())).unwrap();
            old.migrate(&all[..at]).unwrap();
            old.write_raw(|c| Ok(c.as_sqlite().expect("SQLite").execute_batch(rows)?))
                .unwrap();
        }
        let new = Db::open(&Storage::InMemory).unwrap();
        new.migrate(all).unwrap();
        let old = Db::open(&Storage::File(file)).unwrap();
        old.migrate(all).unwrap();
        (dir, new, old)
    }

    /// The whole-table scans in the plan of `sql` (`SCAN <table>` without an index).
    fn scans(db: &Db, sql: &str) -> Vec<String> {
        plan(db, sql)
            .into_iter()
            .filter(|d| d.starts_with("SCAN ") && !d.contains("USING") && d != "SCAN CONSTANT ROW")
            .collect()
    }

    /// The purge before a consent SCA start searches the calling TPP's entries of its index
    /// by TPP and time: another TPP's expired authorisations are not in its range.
    #[test]
    fn the_sca_purge_searches_by_tpp_and_time() {
        let db = Db::open(&Storage::InMemory).unwrap();
        db.migrate(crate::sandbox::MIGRATIONS).unwrap();
        let plan = plan(&db, PURGE_SCA_AUTHORISATIONS);
        assert!(
            plan.iter()
                .any(|d| d.contains("sca_authorisations_by_tpp_created (tpp=? AND created_at<?)")),
            "{plan:?}"
        );
    }

    /// Each partial index serves its statements (a statement that did not imply the index's
    /// condition would scan or use another index), on a new state and on a file created
    /// before the migration, whose rows keep their answers.
    #[test]
    fn partial_indexes_serve_their_statements() {
        // A state file of before the migration, with an authorised payment due at 500 and
        // one received (no run time).
        let (_dir, new, old) = new_and_migrated_file(
            MIGRATION_PARTIAL.0,
            "INSERT INTO pis_payments (id, tpp, service, product, kind, status, body, \
             debtor_account, currency, amount_minor, dedup_key, created_at, created_day, \
             redirect_uri, tpp_session_id, due_at) VALUES \
             ('p1', 't', 's', 'p', 'k', 'ACTC', '{}', 'd', 'NOK', 1, 'k1', 1, 'day', 'u', 's', 500), \
             ('p2', 't', 's', 'p', 'k', 'RCVD', '{}', 'd', 'NOK', 1, 'k2', 2, 'day', 'u', 's', NULL)",
        );
        for db in [&new, &old] {
            for (sql, index) in PARTIAL_PLANS {
                let plan = plan(db, sql);
                assert!(
                    plan.iter()
                        .any(|d| d.split_whitespace().any(|w| w == *index)),
                    "{sql}: {plan:?}"
                );
            }
        }
        let next: Option<i64> = old
            .read_raw(|c| c.prepare_cached(NEXT_DUE_TEXT)?.query_row([], |r| r.get(0)))
            .unwrap();
        assert_eq!(next, Some(500));
    }

    /// The `INSERT`s of a consent creation (and the step and status updates) check their
    /// `CHECK`s without a temporary table, on a new state and on a file created before the
    /// migration, whose rows are kept; the `CHECK`s refuse what they refused.
    #[test]
    fn check_constraints_use_no_temporary_table() {
        const STATEMENTS: &[&str] = &[
            "INSERT INTO sca_authorisations (id, tpp, tpp_name, redirect_uri, tpp_session_id, \
             created_at, step, customer, agreement) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) \
             ON CONFLICT (id) DO UPDATE SET step = excluded.step",
            "INSERT INTO consent_resources (id, tpp, status, created_at, last_action) \
             VALUES (?1, ?2, 'received', ?3, ?3)",
            "UPDATE sca_authorisations SET step = ?2, customer = ?3, agreement = ?4 WHERE id = ?1",
            "UPDATE consent_resources SET status = 'rejected', last_action = ?2 WHERE id = ?1",
        ];
        let (_dir, new, old) = new_and_migrated_file(
            MIGRATION_CHECKS_WITHOUT_IN.0,
            "INSERT INTO sca_authorisations VALUES \
             ('a1', 't', 'T', 'https://t/', 's', 7, 'CONSENT', 'c1', 'g1'); \
             INSERT INTO consent_resources VALUES ('r1', 't', 'valid', 'p', 'g1', 8, 9);",
        );
        for db in [&new, &old] {
            for sql in STATEMENTS {
                let ops = explained(db, "EXPLAIN", 1, sql);
                assert!(
                    ops.iter()
                        .any(|o| o == "Insert" || o == "Update" || o == "IdxInsert")
                );
                assert!(!ops.iter().any(|o| o == "OpenEphemeral"), "{sql}: {ops:?}");
            }
            let written = |sql: &str| {
                db.write_raw(|c| {
                    let c = c.as_sqlite().expect("SQLite");
                    Ok(c.execute_batch(sql)?)
                })
                .map_err(|e| e.to_string())
            };
            let e = written(
                "INSERT INTO sca_authorisations VALUES ('a2', 't', 'T', 'u', 's', 1, 'DONE', NULL, NULL)",
            )
            .unwrap_err();
            assert!(e.contains("CHECK constraint failed"), "{e}");
            let e = written(
                "INSERT INTO consent_resources VALUES ('r2', 't', 'expired', NULL, NULL, 1, 1)",
            )
            .unwrap_err();
            assert!(e.contains("CHECK constraint failed"), "{e}");
            for step in ["IDENTIFY", "CHOOSE_CONTEXT", "CONSENT", "FINISHED"] {
                written(&format!(
                    "INSERT INTO sca_authorisations VALUES ('s-{step}', 't', 'T', 'u', 's', 1, '{step}', NULL, NULL)"
                ))
                .unwrap();
            }
            for status in ["received", "valid", "rejected", "terminatedByTpp"] {
                written(&format!(
                    "INSERT INTO consent_resources VALUES ('s-{status}', 't', '{status}', NULL, NULL, 1, 1)"
                ))
                .unwrap();
            }
        }
        let kept: (String, String, i64, String, String, String, i64) = old
            .read_raw(|c| {
                let c = c.as_sqlite().expect("SQLite");
                Ok(c.query_row(
                    "SELECT a.step, a.agreement, a.created_at, r.status, r.psu_id, r.agreement, \
                     r.last_action FROM sca_authorisations a, consent_resources r \
                     WHERE a.id = 'a1' AND r.id = 'r1'",
                    [],
                    |r| {
                        Ok((
                            r.get(0)?,
                            r.get(1)?,
                            r.get(2)?,
                            r.get(3)?,
                            r.get(4)?,
                            r.get(5)?,
                            r.get(6)?,
                        ))
                    },
                )?)
            })
            .unwrap();
        assert_eq!(
            kept,
            (
                "CONSENT".into(),
                "g1".into(),
                7,
                "valid".into(),
                "p".into(),
                "g1".into(),
                9
            )
        );
    }

    /// On SQLite the keyed duplicate index is gone, on a new state and on a file made before
    /// [`MIGRATION_DUPLICATES_IN_MEMORY`]: a (TPP, day)'s payments are found through
    /// `pis_payments_by_tpp_day`, a candidate by its rowid, and the file's payment stored
    /// before the migration is still a duplicate (PostgreSQL keeps its index:
    /// `backend_tests::postgres_keeps_the_keyed_duplicate_index`).
    #[test]
    fn the_duplicate_check_searches_by_back_end() {
        let (_dir, new, old) = new_and_migrated_file(
            MIGRATION_DUPLICATES_IN_MEMORY.0,
            "INSERT INTO pis_payments (id, tpp, service, product, kind, status, body, \
             debtor_account, currency, amount_minor, dedup_key, created_at, created_day, \
             redirect_uri, tpp_session_id) VALUES \
             ('p1', 't', 's', 'p', 'k', 'RCVD', '{}', 'd', 'NOK', 1, 'k1', 1, 'day', 'u', 's')",
        );
        assert!(
            MIGRATION_DUPLICATES_IN_MEMORY
                .1
                .starts_with(crate::sandbox::store::db::SQLITE_ONLY)
        );
        for db in [&new, &old] {
            let indexes: Vec<String> = db
                .read_raw(|c| {
                    c.prepare(
                        "SELECT name FROM sqlite_master WHERE type = 'index' \
                         AND tbl_name = 'pis_payments' ORDER BY name",
                    )?
                    .query_map([], |r| r.get(0))?
                    .collect()
                })
                .unwrap();
            assert!(
                indexes.contains(&"pis_payments_by_tpp_day".to_string()),
                "{indexes:?}"
            );
            assert!(!indexes.iter().any(|i| i.contains("dedup")), "{indexes:?}");
            let by_day = plan(db, DUPLICATES_OF_DAY);
            assert!(
                by_day
                    .iter()
                    .any(|d| d.contains("pis_payments_by_tpp_day (tpp=? AND created_day=?)")),
                "{by_day:?}"
            );
            let by_rowid = plan(db, DUPLICATE_CONFIRMED);
            assert!(
                by_rowid
                    .iter()
                    .any(|d| d.contains("INTEGER PRIMARY KEY (rowid=?)")),
                "{by_rowid:?}"
            );
        }
        for (key, found) in [("k1", true), ("k2", false)] {
            let dup = old
                .write_raw(|c| {
                    crate::sandbox::store::payments::logical_duplicate_exists(c, "t", key, "day")
                })
                .unwrap();
            assert_eq!(dup, found, "{key}");
        }
    }

    #[test]
    fn every_planned_statement_uses_an_index() {
        let db = Db::open(&Storage::InMemory).unwrap();
        db.migrate(crate::sandbox::MIGRATIONS).unwrap();
        let bad: Vec<(String, Vec<String>)> = PLANNED
            .iter()
            .map(|s| (s.to_string(), scans(&db, s)))
            .filter(|(_, scans)| !scans.is_empty())
            .collect();
        assert!(
            bad.is_empty(),
            "statements scanning a whole table: {bad:#?}"
        );
    }
}
