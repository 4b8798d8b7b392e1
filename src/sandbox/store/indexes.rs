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
    // Logical duplicates at payment initiation, due batch runs.
    LOGICAL_DUPLICATE,
    "SELECT EXISTS(SELECT 1 FROM pis_payments WHERE status = 'ACTC' AND due_at IS NOT NULL \
     AND due_at <= ?1)",
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::store::db::{Db, Storage};

    /// The details of the plan of `sql` (`EXPLAIN QUERY PLAN`).
    fn plan(db: &Db, sql: &str) -> Vec<String> {
        db.read_raw(|c| {
            let c = c.as_sqlite().expect("a SQLite database");
            let mut st = c.prepare(&format!("EXPLAIN QUERY PLAN {sql}"))?;
            // Parameters left unbound (NULL): the plan does not depend on their values.
            let mut rows = st.raw_query();
            let mut details = Vec::new();
            while let Some(r) = rows.next()? {
                details.push(r.get::<_, String>(3)?);
            }
            Ok(details)
        })
        .unwrap()
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
