//! The store's tests on both back ends (issue 21): each runs on SQLite in memory and on a
//! new database of the PostgreSQL test cluster ([`super::pg_cluster`]; skipped where
//! PostgreSQL is absent, never in CI).

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use uuid::Uuid;

use super::db::{Db, Migration, Storage};
use super::pg_cluster::PgCluster;
use super::sql::{Backend, OptionalExtension, Value, params};
use super::*;

/// Runs `test` on SQLite in memory, then on PostgreSQL (when available), naming the back end
/// in a failure.
fn on_both(test: impl Fn(Storage)) {
    test(Storage::InMemory);
    if let Some(cluster) = PgCluster::get() {
        test(Storage::Postgres(cluster.database()));
    }
}

/// A migrated, seeded store on `storage`.
fn store(storage: &Storage) -> Store {
    let db = Arc::new(Db::open(storage).unwrap());
    db.migrate(crate::sandbox::MIGRATIONS).unwrap();
    Store::open(db, crate::sandbox::domain::seed::seed).unwrap()
}

#[test]
fn migrations_apply_once_and_writes_roll_back_on_error() {
    on_both(|storage| {
        let db = Db::open(&storage).unwrap();
        let m: &[Migration] = &[("t1", "CREATE TABLE t (x INTEGER NOT NULL)")];
        db.migrate(m).unwrap();
        db.migrate(m).unwrap();
        db.write(|tx| {
            tx.execute("INSERT INTO t VALUES (1)", [])?;
            Ok::<_, StoreError>(())
        })
        .unwrap();
        let r: Result<(), StoreError> = db.write(|tx| {
            tx.execute("INSERT INTO t VALUES (2)", [])?;
            Err(sql::Error::NoRows.into())
        });
        assert!(r.is_err());
        let n: i64 = db
            .read(|c| c.query_row("SELECT COUNT(*) FROM t", [], |r| r.get(0)))
            .unwrap();
        assert_eq!(n, 1, "{storage:?}");
        let names: i64 = db
            .read(|c| {
                c.query_row(
                    "SELECT COUNT(*) FROM schema_migrations WHERE name = 't1'",
                    [],
                    |r| r.get(0),
                )
            })
            .unwrap();
        assert_eq!(names, 1, "{storage:?}");
    });
}

/// Values of every storage class read back as written; `SUM` of integers is an integer,
/// `EXISTS` a bool, a missing row `None`.
#[test]
fn values_round_trip_on_both() {
    on_both(|storage| {
        let db = Db::open(&storage).unwrap();
        db.migrate(&[(
            "v1",
            "CREATE TABLE v (seq INTEGER PRIMARY KEY AUTOINCREMENT, i INTEGER, t TEXT, b BLOB, \
             n INTEGER)",
        )])
        .unwrap();
        let seqs: Vec<i64> = db
            .write(|tx| {
                let mut seqs = Vec::new();
                for i in [5_i64, i64::MAX / 2] {
                    seqs.push(tx.insert_seq(
                        "INSERT INTO v (i, t, b, n) VALUES (?1, ?2, ?3, ?4)",
                        params![i, "tekst ø", vec![0u8, 255, 7], Option::<i64>::None],
                    )?);
                }
                Ok::<_, StoreError>(seqs)
            })
            .unwrap();
        assert_eq!(seqs, vec![1, 2], "{storage:?}");
        let row: (i64, String, Vec<u8>, Option<i64>) = db
            .read(|c| {
                c.query_row("SELECT i, t, b, n FROM v WHERE seq = ?1", [1], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
                })
            })
            .unwrap();
        assert_eq!(
            row,
            (5, "tekst ø".into(), vec![0, 255, 7], None),
            "{storage:?}"
        );
        let (sum, exists): (i64, bool) = db
            .read(|c| {
                c.query_row(
                    "SELECT SUM(i) - ?1, EXISTS(SELECT 1 FROM v WHERE t = ?2) FROM v",
                    params![i64::MAX / 2, "tekst ø"],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
            })
            .unwrap();
        assert_eq!((sum, exists), (5, true), "{storage:?}");
        let none: Option<i64> = db
            .read(|c| {
                c.query_row("SELECT i FROM v WHERE seq = 99", [], |r| r.get(0))
                    .optional()
            })
            .unwrap();
        assert_eq!(none, None);
        // An integer bound where text is compared, like SQLite's affinity.
        let by_text: i64 = db
            .read(|c| c.query_row("SELECT COUNT(*) FROM v WHERE t <> ?1", [7], |r| r.get(0)))
            .unwrap();
        assert_eq!(by_text, 2, "{storage:?}");
        let v: Value = db
            .read(|c| c.query_row("SELECT n FROM v", [], |r| r.get(0)))
            .unwrap();
        assert_eq!(v, Value::Null);
    });
}

/// The seeded store, a consent written and read back, an authorisation through its steps,
/// a customer deleted with what hangs on it, and initialization back to the seed.
#[test]
fn the_store_keeps_and_resets_the_state_on_both() {
    on_both(|storage| {
        let s = store(&storage);
        let customers = s.customers().unwrap();
        assert!(!customers.is_empty(), "seeded: {storage:?}");
        let kari = customers[0].clone();
        let accounts = s.account_ids_of(kari.id).unwrap();
        assert!(!accounts.is_empty());
        let key = ConsentKey {
            tpp: TppId("PSDNO-FSA-TEST".into()),
            psu_id: Uuid::new_v4(),
            agreement: None,
        };
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        let consent = Consent {
            customer: kari.id,
            accounts: accounts.clone(),
            granted_at: now,
            tpp_session_id: "session-1".into(),
        };
        s.put_consent(key.clone(), consent.clone()).unwrap();
        assert_eq!(
            s.consent(&key).unwrap(),
            Some(consent.clone()),
            "{storage:?}"
        );
        // Replaced, not added.
        s.put_consent(key.clone(), consent.clone()).unwrap();
        assert_eq!(s.consent(&key).unwrap(), Some(consent));

        let auth = Authorisation {
            id: Uuid::new_v4(),
            tpp: key.tpp.clone(),
            tpp_name: "Test TPP".into(),
            redirect_uri: "https://tpp.example/cb".into(),
            tpp_session_id: "session-2".into(),
            created_at: now,
            step: ScaStep::Identify,
        };
        s.insert_authorisation(auth.clone(), now).unwrap();
        let moved = s
            .set_step(auth.id, now, ScaStep::ChooseContext { customer: kari.id })
            .unwrap();
        assert_eq!(moved.step, ScaStep::ChooseContext { customer: kari.id });
        assert_eq!(s.authorisation(auth.id, now).unwrap().step, moved.step);

        assert!(s.delete_customer(kari.id).unwrap(), "{storage:?}");
        assert_eq!(s.customer(kari.id).unwrap(), None);
        assert_eq!(
            s.consent(&key).unwrap(),
            None,
            "the consent went with its customer"
        );
        assert!(s.accounts_by_ids(&accounts).unwrap().is_empty());

        s.initialize(&crate::sandbox::domain::seed::seed()).unwrap();
        let again = s.customers().unwrap();
        assert_eq!(again.len(), customers.len(), "{storage:?}");
        assert_eq!(again[0].id, kari.id, "the seed is back");
        let seq: i64 = s
            .db()
            .read(|c| c.query_row("SELECT MIN(seq) FROM customers", [], |r| r.get(0)))
            .unwrap();
        assert_eq!(seq, 1, "the counters restart: {storage:?}");
        if s.db().backend() == Backend::Postgres {
            assert_eq!(s.db().checkpoint().unwrap(), None);
        }
    });
}

/// A PostgreSQL state survives a reopen (a restart of the sandbox) and is seeded once.
#[test]
fn a_postgres_state_survives_a_reopen() {
    let Some(cluster) = PgCluster::get() else {
        return;
    };
    let storage = Storage::Postgres(cluster.database());
    let created = {
        let s = store(&storage);
        let before = s.customers().unwrap().len();
        s.delete_customer(s.customers().unwrap()[0].id).unwrap();
        before - 1
    };
    let s = store(&storage);
    assert_eq!(s.customers().unwrap().len(), created);
}

/// The password of a PostgreSQL URL is never shown.
#[test]
fn a_postgres_password_never_appears_in_messages() {
    let url = "postgres://sandbox:s3cret-pw@127.0.0.1:1/state?password=other-pw";
    let storage = Storage::parse(url);
    for shown in [
        format!("{storage:?}"),
        Db::describe(&storage),
        db::redact_url(url),
    ] {
        assert!(
            !shown.contains("s3cret-pw") && !shown.contains("other-pw"),
            "{shown}"
        );
        assert!(
            shown.contains("sandbox") && shown.contains("127.0.0.1"),
            "{shown}"
        );
    }
    // Nothing listens on port 1: the error names the database without the password.
    let e = Db::open(&storage).unwrap_err().to_string();
    assert!(!e.contains("s3cret-pw") && !e.contains("other-pw"), "{e}");
    assert!(e.contains("127.0.0.1"), "{e}");
}

/// Issue 23, group commit: a write that fails in a batch rolls back only its own statements
/// and gets its own error (here the Berlin Group answer it chose, 400 `PAYMENT_FAILED`, not a
/// storage error); the other writes of the same batch commit. A first write holds the writer
/// thread until the three others are queued, so they make one batch (the hook sees it).
#[test]
fn a_failing_write_in_a_batch_rolls_back_only_its_own_part() {
    use crate::sandbox::errors::ApiError;
    use crate::sandbox::store::db::group_commit::Request;
    use crate::xs2a::error::MessageCode;
    on_both(|storage| {
        let db = Db::open(&storage).unwrap();
        db.migrate(&[("t1", "CREATE TABLE t (x INTEGER NOT NULL)")])
            .unwrap();
        let group = db.group().unwrap();
        let sizes = Arc::new(std::sync::Mutex::new(Vec::new()));
        let seen = sizes.clone();
        *group.before_commit.lock().unwrap() = Some(Arc::new(move |n| {
            seen.lock().unwrap().push(n);
        }));
        let (open_gate, gate) = std::sync::mpsc::channel::<()>();
        let (entered, running) = std::sync::mpsc::channel::<()>();
        let (reply, held) = tokio::sync::oneshot::channel();
        let hold = move |_: &Conn<'_>| -> Result<(), ApiError> {
            entered.send(()).ok();
            gate.recv().ok();
            Ok(())
        };
        assert!(group.submit(Box::new(Request::new(hold, reply))));
        // The writer is inside the first batch: what follows queues for the next one.
        running.recv().unwrap();
        let mut answers = Vec::new();
        for x in [1_i64, 2, 3] {
            let (reply, answer) = tokio::sync::oneshot::channel();
            let write = move |tx: &Conn<'_>| -> Result<i64, ApiError> {
                tx.execute("INSERT INTO t VALUES (?1)", [x])?;
                if x == 2 {
                    return Err(ApiError::new(
                        MessageCode::PaymentFailed,
                        "the second fails",
                    ));
                }
                Ok(x)
            };
            assert!(group.submit(Box::new(Request::new(write, reply))));
            answers.push(answer);
        }
        open_gate.send(()).unwrap();
        held.blocking_recv().unwrap().unwrap();
        let got: Vec<Result<i64, ApiError>> = answers
            .into_iter()
            .map(|a| a.blocking_recv().unwrap())
            .collect();
        assert_eq!(got[0].as_ref().ok(), Some(&1), "{storage:?}");
        assert_eq!(got[2].as_ref().ok(), Some(&3), "{storage:?}");
        let failed = got[1].as_ref().unwrap_err();
        assert_eq!(failed.status.as_u16(), 400, "{storage:?}");
        let body = serde_json::to_value(&failed.body).unwrap();
        assert_eq!(body["tppMessages"][0]["code"], "PAYMENT_FAILED", "{body}");
        let rows: Vec<i64> = db
            .read(|c| {
                c.prepare("SELECT x FROM t ORDER BY x")?
                    .query_map([], |r| r.get(0))?
                    .collect()
            })
            .unwrap();
        assert_eq!(
            rows,
            vec![1, 3],
            "only the failed write rolled back ({storage:?})"
        );
        assert_eq!(
            *sizes.lock().unwrap(),
            vec![1, 3],
            "the gate alone, then the three in one batch ({storage:?})"
        );
        assert_eq!(db.group_stats(), (2, 4), "{storage:?}");
    });
}

/// Issue 23, group commit: no answer leaves before its batch committed. Just before the
/// `COMMIT` the hook finds every answer of the batch still unsent (and, on SQLite, the rows
/// not yet visible to another connection); after it, every answer is there and the data
/// version moved once for the batch.
#[test]
fn no_answer_is_sent_before_its_batch_committed() {
    use crate::sandbox::store::db::group_commit::Request;
    on_both(|storage| {
        let dir = tempfile::tempdir().unwrap();
        let storage = match storage {
            Storage::InMemory => Storage::File(dir.path().join("sandbox.sqlite3")),
            other => other,
        };
        let db = Db::open(&storage).unwrap();
        db.migrate(&[("t1", "CREATE TABLE t (x INTEGER NOT NULL)")])
            .unwrap();
        let group = db.group().unwrap();
        type Answer = tokio::sync::oneshot::Receiver<Result<i64, StoreError>>;
        let pending: Arc<std::sync::Mutex<Vec<Answer>>> = Arc::default();
        let checks = Arc::new(std::sync::Mutex::new(Vec::<(usize, usize, i64)>::new()));
        let (seen, recorded, file) = (pending.clone(), checks.clone(), storage.clone());
        let (hooked, hook_ran) = std::sync::mpsc::channel::<usize>();
        *group.before_commit.lock().unwrap() = Some(Arc::new(move |n| {
            let mut waiting = seen.lock().unwrap();
            let unsent = waiting
                .iter_mut()
                .map(|a| a.try_recv().is_err())
                .filter(|unsent| *unsent)
                .count();
            // Another connection does not see the batch's rows yet (SQLite file).
            let visible = match &file {
                Storage::File(p) => rusqlite::Connection::open(p)
                    .unwrap()
                    .query_row("SELECT COUNT(*) FROM t", [], |r| r.get(0))
                    .unwrap(),
                _ => 0,
            };
            recorded.lock().unwrap().push((n, unsent, visible));
            hooked.send(n).ok();
        }));
        let (open_gate, gate) = std::sync::mpsc::channel::<()>();
        let (entered, running) = std::sync::mpsc::channel::<()>();
        let (reply, held) = tokio::sync::oneshot::channel();
        let hold = move |_: &Conn<'_>| -> Result<i64, StoreError> {
            entered.send(()).ok();
            gate.recv().ok();
            Ok(0)
        };
        assert!(group.submit(Box::new(Request::new(hold, reply))));
        // The writer is inside the first batch: what follows queues for the next one.
        running.recv().unwrap();
        for x in 1..=5_i64 {
            let (reply, answer) = tokio::sync::oneshot::channel();
            let write = move |tx: &Conn<'_>| -> Result<i64, StoreError> {
                tx.execute("INSERT INTO t VALUES (?1)", [x])?;
                Ok(x)
            };
            assert!(group.submit(Box::new(Request::new(write, reply))));
            pending.lock().unwrap().push(answer);
        }
        let version = db.version();
        open_gate.send(()).unwrap();
        held.blocking_recv().unwrap().unwrap();
        assert_eq!(hook_ran.recv().unwrap(), 1);
        assert_eq!(hook_ran.recv().unwrap(), 5);
        // The batch of five: wait for the answers (they come after its commit).
        let answers: Vec<Answer> = std::mem::take(&mut *pending.lock().unwrap());
        assert_eq!(answers.len(), 5, "{storage:?}");
        let got: Vec<i64> = answers
            .into_iter()
            .map(|a| a.blocking_recv().unwrap().unwrap())
            .collect();
        assert_eq!(got, vec![1, 2, 3, 4, 5]);
        let checks = checks.lock().unwrap().clone();
        assert_eq!(checks.len(), 2, "{checks:?}");
        assert_eq!(
            checks[1],
            (5, 5, 0),
            "at the commit of the batch of 5 all 5 answers were unsent and no row visible \
             ({storage:?})"
        );
        assert!(db.version() > version, "{storage:?}");
    });
}

/// Issue 23, session 20, group commit: after a batch of more than one write the writer
/// pauses ([`super::db::group_commit::GATHER`]) after the next batch's first write, and a
/// write queued during that pause joins its batch; after a batch of one (a lone client) it
/// does not pause. The pause is the test's hook, which queues a write from inside it and
/// counts its calls (no timing).
#[test]
fn after_a_batch_of_several_writes_the_next_batch_gathers_the_writes_queued_meanwhile() {
    use crate::sandbox::store::db::group_commit::Request;
    on_both(|storage| {
        let db = Db::open(&storage).unwrap();
        db.migrate(&[("t1", "CREATE TABLE t (x INTEGER NOT NULL)")])
            .unwrap();
        let group = db.group().unwrap();
        let sizes = Arc::new(std::sync::Mutex::new(Vec::new()));
        let seen = sizes.clone();
        *group.before_commit.lock().unwrap() = Some(Arc::new(move |n| {
            seen.lock().unwrap().push(n);
        }));
        type Answer = tokio::sync::oneshot::Receiver<Result<i64, StoreError>>;
        let insert = |x: i64| -> (Box<dyn super::db::group_commit::Pending>, Answer) {
            let (reply, answer) = tokio::sync::oneshot::channel();
            let write = move |tx: &Conn<'_>| -> Result<i64, StoreError> {
                tx.execute("INSERT INTO t VALUES (?1)", [x])?;
                Ok(x)
            };
            (Box::new(Request::new(write, reply)), answer)
        };
        // The pause queues write 40 (once) from inside the writer.
        let pauses = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = pauses.clone();
        let sender = std::sync::Mutex::new(group.sender());
        let (late, late_answer) = insert(40);
        let late = std::sync::Mutex::new(Some(late));
        *group.gathering.lock().unwrap() = Some(Arc::new(move || {
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            if let Some(job) = late.lock().unwrap().take() {
                sender.lock().unwrap().send(job).unwrap();
            }
        }));
        // A lone write, then one more: batches of one, no pause.
        for x in [1, 2] {
            let (job, answer) = insert(x);
            assert!(group.submit(job));
            assert_eq!(answer.blocking_recv().unwrap().unwrap(), x);
        }
        assert_eq!(pauses.load(std::sync::atomic::Ordering::SeqCst), 0);
        // Two writes in one batch (a first write holds the writer until both are queued).
        let got = one_batch(
            &db,
            vec![
                Box::new(|tx: &Conn<'_>| -> Result<i64, StoreError> {
                    tx.execute("INSERT INTO t VALUES (10)", [])?;
                    Ok(10)
                }) as TestWrite<i64>,
                Box::new(|tx: &Conn<'_>| -> Result<i64, StoreError> {
                    tx.execute("INSERT INTO t VALUES (11)", [])?;
                    Ok(11)
                }),
            ],
        );
        assert_eq!(
            got.into_iter().map(Result::unwrap).collect::<Vec<_>>(),
            vec![10, 11]
        );
        // The holding write's batch of one came after a batch of one: no pause yet.
        assert_eq!(pauses.load(std::sync::atomic::Ordering::SeqCst), 0);
        // Now a lone write after the batch of two: the writer pauses, write 40 arrives
        // meanwhile and both commit in one batch.
        let (job, answer) = insert(30);
        assert!(group.submit(job));
        assert_eq!(answer.blocking_recv().unwrap().unwrap(), 30);
        // Checked before waiting for 40: without the pause it is never queued.
        assert_eq!(
            pauses.load(std::sync::atomic::Ordering::SeqCst),
            1,
            "the writer paused once, after the batch of two ({storage:?})"
        );
        assert_eq!(late_answer.blocking_recv().unwrap().unwrap(), 40);
        assert_eq!(
            *sizes.lock().unwrap(),
            vec![1, 1, 1, 2, 2],
            "two lone writes, the holding write, the two, then 30 and 40 together ({storage:?})"
        );
        let n: i64 = db
            .read(|c| c.query_row("SELECT COUNT(*) FROM t", [], |r| r.get(0)))
            .unwrap();
        assert_eq!(n, 6, "{storage:?}");
    });
}

/// Issue 23, the reads before a write on PostgreSQL: a one-statement read
/// ([`Db::read_single`]) is one round trip (no `BEGIN`/`COMMIT`); a read transaction's
/// `BEGIN` and a write transaction's `BEGIN` + write lock travel with their first statement
/// ([`super::sql::PgSession::defer`]): a read of one statement costs 2 round trips (3
/// before), a write of one statement 2 (3 before); a read whose closure runs no statement
/// costs none. Statements are prepared once before counting. The reads still see one
/// snapshot and a failing write still rolls back.
#[test]
fn postgres_reads_and_writes_cost_their_statements_plus_one_round_trip() {
    let Some(cluster) = PgCluster::get() else {
        return;
    };
    let db = Db::open(&Storage::Postgres(cluster.database())).unwrap();
    db.migrate(&[("t1", "CREATE TABLE t (x INTEGER NOT NULL)")])
        .unwrap();
    let count = |c: &Conn<'_>| c.query_row("SELECT COUNT(*) FROM t", [], |r| r.get::<_, i64>(0));
    let insert = |x: i64| {
        db.write(|tx| {
            tx.execute("INSERT INTO t VALUES (?1)", [x])?;
            Ok::<_, StoreError>(())
        })
    };
    // Warm up: every session of the pool has prepared both statements.
    for x in 0..8 {
        insert(x).unwrap();
        db.read(count).unwrap();
        db.read_single(count).unwrap();
    }
    let cost = |f: &dyn Fn()| {
        let before = db.pg_round_trips();
        f();
        db.pg_round_trips() - before
    };
    assert_eq!(cost(&|| assert_eq!(db.read_single(count).unwrap(), 8)), 1);
    assert_eq!(cost(&|| assert_eq!(db.read(count).unwrap(), 8)), 2);
    assert_eq!(
        cost(&|| {
            db.read(|c| {
                let a = count(c)?;
                let b = count(c)?;
                assert_eq!(a, b);
                Ok(())
            })
            .unwrap()
        }),
        3
    );
    assert_eq!(cost(&|| db.read(|_| Ok(())).unwrap()), 0);
    assert_eq!(cost(&|| insert(9).unwrap()), 2);
    let failed: Result<(), StoreError> = db.write(|tx| {
        tx.execute("INSERT INTO t VALUES (10)", [])?;
        Err(sql::Error::NoRows.into())
    });
    assert!(failed.is_err());
    let nothing: Result<(), StoreError> = db.write(|_| Err(sql::Error::NoRows.into()));
    assert!(nothing.is_err());
    assert_eq!(
        db.read_single(count).unwrap(),
        9,
        "the failed writes rolled back"
    );
    // The pool is clean: a later write and read work.
    insert(11).unwrap();
    assert_eq!(db.read(count).unwrap(), 10);
}

/// Issue 23, payment creation on SQLite: the reads do not queue behind the group commit's
/// writer. A write holds the writer inside its batch (and, before, the one connection); a
/// read from another thread answers meanwhile, from the last committed state (the held
/// write's row is not visible), and after the commit it sees the row.
#[test]
fn a_read_on_a_state_file_answers_while_a_batch_is_being_written() {
    use crate::sandbox::store::db::group_commit::Request;
    let dir = tempfile::tempdir().unwrap();
    let db = Arc::new(Db::open(&Storage::File(dir.path().join("s.sqlite3"))).unwrap());
    db.migrate(&[("t1", "CREATE TABLE t (x INTEGER NOT NULL)")])
        .unwrap();
    let group = db.group().unwrap();
    let (open_gate, gate) = std::sync::mpsc::channel::<()>();
    let (entered, running) = std::sync::mpsc::channel::<()>();
    let (reply, held) = tokio::sync::oneshot::channel();
    let hold = move |tx: &Conn<'_>| -> Result<(), StoreError> {
        tx.execute("INSERT INTO t VALUES (1)", [])?;
        entered.send(()).ok();
        gate.recv().ok();
        Ok(())
    };
    assert!(group.submit(Box::new(Request::new(hold, reply))));
    running.recv().unwrap();
    let (done, read) = std::sync::mpsc::channel();
    let reader = db.clone();
    std::thread::spawn(move || {
        let n = reader.read(|c| c.query_row("SELECT COUNT(*) FROM t", [], |r| r.get::<_, i64>(0)));
        done.send(n.map_err(|e| e.to_string())).ok();
    });
    // Not a speed check: the bound only turns a read stuck behind the writer (the failure)
    // into a failed assertion instead of a hung test.
    let during = read.recv_timeout(Duration::from_secs(60));
    open_gate.send(()).unwrap();
    held.blocking_recv().unwrap().unwrap();
    assert_eq!(
        during
            .expect("the read answered while the batch was held")
            .unwrap(),
        0,
        "the read sees the last committed state"
    );
    let after: i64 = db
        .read(|c| c.query_row("SELECT COUNT(*) FROM t", [], |r| r.get(0)))
        .unwrap();
    assert_eq!(after, 1);
}

/// A batched write of the tests below.
type TestWrite<T> = Box<dyn Fn(&Conn<'_>) -> Result<T, StoreError> + Send>;

/// Submits `writes` to the group commit of `db` so that they make ONE batch (a first write
/// holds the writer until all are queued) and waits for their answers, in order.
fn one_batch<T: Send + 'static>(db: &Db, writes: Vec<TestWrite<T>>) -> Vec<Result<T, StoreError>> {
    use crate::sandbox::store::db::group_commit::Request;
    let group = db.group().unwrap();
    let (open_gate, gate) = std::sync::mpsc::channel::<()>();
    let (entered, running) = std::sync::mpsc::channel::<()>();
    let (reply, held) = tokio::sync::oneshot::channel();
    let gate = std::sync::Mutex::new(gate);
    let hold = move |_: &Conn<'_>| -> Result<(), StoreError> {
        entered.send(()).ok();
        gate.lock().unwrap().recv().ok();
        Ok(())
    };
    assert!(group.submit(Box::new(Request::new(hold, reply))));
    running.recv().unwrap();
    let mut answers = Vec::new();
    for w in writes {
        let (reply, answer) = tokio::sync::oneshot::channel();
        assert!(group.submit(Box::new(Request::new(w, reply))));
        answers.push(answer);
    }
    open_gate.send(()).unwrap();
    held.blocking_recv().unwrap().unwrap();
    answers
        .into_iter()
        .map(|a| a.blocking_recv().unwrap())
        .collect()
}

/// Issue 23, writes on PostgreSQL: a batch of the group commit pipelines its writes'
/// statements ([`Conn::execute_pipelined`]). Five writes of two `INSERT`s each cost the
/// writer ONE round trip (the transaction's start, the ten `INSERT`s, the data version and
/// the `COMMIT` sent together; eleven before); five writes that each ask one question first
/// (a payment's logical-duplicate check) and then insert cost six (one per question, the
/// `INSERT`s travelling with the next one, plus the `COMMIT`; sixteen before). Statements
/// are prepared once before counting. Each write still sees the ones before it in the batch.
#[test]
fn postgres_a_batch_of_writes_is_pipelined() {
    let Some(cluster) = PgCluster::get() else {
        return;
    };
    let db = Db::open(&Storage::Postgres(cluster.database())).unwrap();
    db.migrate(&[(
        "t1",
        "CREATE TABLE t (x INTEGER NOT NULL); CREATE TABLE u (x INTEGER NOT NULL)",
    )])
    .unwrap();
    type W = TestWrite<i64>;
    let two_inserts = |x: i64| -> W {
        Box::new(move |tx: &Conn<'_>| {
            tx.execute_pipelined("INSERT INTO t VALUES (?1)", [x])?;
            tx.execute_pipelined("INSERT INTO u VALUES (?1)", [x])?;
            Ok(x)
        })
    };
    let ask_then_insert = |x: i64| -> W {
        Box::new(move |tx: &Conn<'_>| {
            let before: i64 = tx.query_row("SELECT COUNT(*) FROM t", [], |r| r.get(0))?;
            tx.execute_pipelined("INSERT INTO t VALUES (?1)", [x])?;
            Ok(before)
        })
    };
    // Warm up: the writer's session has prepared every statement.
    one_batch(&db, vec![two_inserts(0), ask_then_insert(0)]);
    let trips = || {
        db.group()
            .unwrap()
            .stats
            .pg_round_trips
            .load(std::sync::atomic::Ordering::Relaxed)
    };
    // The gate's batch (one write, no statement) costs its COMMIT: 1.
    let before = trips();
    let got = one_batch(&db, (1..=5).map(two_inserts).collect());
    assert_eq!(
        got.into_iter().map(Result::unwrap).collect::<Vec<_>>(),
        vec![1, 2, 3, 4, 5]
    );
    assert_eq!(
        trips() - before,
        1 + 1,
        "the gate's batch, then one round trip"
    );
    let before = trips();
    let got = one_batch(&db, (6..=10).map(ask_then_insert).collect());
    assert_eq!(
        got.into_iter().map(Result::unwrap).collect::<Vec<_>>(),
        vec![7, 8, 9, 10, 11],
        "each write sees the rows of the writes before it in the batch"
    );
    assert_eq!(
        trips() - before,
        1 + 6,
        "the gate's batch, then 5 questions + COMMIT"
    );
    let (t, u): (i64, i64) = db
        .read(|c| {
            c.query_row(
                "SELECT (SELECT COUNT(*) FROM t), (SELECT COUNT(*) FROM u)",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
        })
        .unwrap();
    assert_eq!((t, u), (12, 6));
}

/// Tenancy (issue 20: each TPP its own world, its own clock): a consent SCA start purges
/// the expired authorisations of its own TPP only. TPP B's clock an hour and more ahead of
/// TPP A's made A's unexpired authorisation "expired" in B's world, and B's next SCA start
/// deleted it (A's PSU then found the SCA link unknown); B's own expired one still goes,
/// and A's goes once it expired in A's world.
#[test]
fn a_tpps_sca_start_purges_only_its_own_expired_authorisations() {
    on_both(|storage| {
        let s = store(&storage);
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        let ahead = now + AUTHORISATION_LIFETIME + Duration::from_secs(3600);
        let auth = |tpp: &str, at: SystemTime| Authorisation {
            id: Uuid::new_v4(),
            tpp: crate::sandbox::model::TppId(tpp.into()),
            tpp_name: tpp.into(),
            redirect_uri: "https://tpp.example/cb".into(),
            tpp_session_id: "session".into(),
            created_at: at,
            step: ScaStep::Identify,
        };
        let a = auth("tpp-a", now);
        let b1 = auth("tpp-b", now);
        s.insert_authorisation(a.clone(), now).unwrap();
        s.insert_authorisation(b1.clone(), now).unwrap();
        let b2 = auth("tpp-b", ahead);
        s.insert_authorisation(b2.clone(), ahead).unwrap();
        assert_eq!(
            s.authorisation(a.id, now),
            Ok(a.clone()),
            "TPP B's clock purged TPP A's authorisation ({storage:?})"
        );
        assert_eq!(
            s.authorisation(b1.id, now),
            Err(AuthorisationError::Unknown),
            "B's own expired authorisation is purged ({storage:?})"
        );
        assert_eq!(s.authorisation(b2.id, ahead), Ok(b2), "{storage:?}");
        s.insert_authorisation(auth("tpp-a", ahead), ahead).unwrap();
        assert_eq!(
            s.authorisation(a.id, now),
            Err(AuthorisationError::Unknown),
            "{storage:?}"
        );
    });
}

/// Issue 23, consent creation: a statement run through [`Conn::execute_pipelined_once`]
/// (the purge of expired consent SCA authorisations) runs once per group-commit batch, by
/// its first write, however many writes of the batch ask for it; every write's own
/// statements still run, and each single transaction runs it once again. Here the
/// "statement" inserts a row, so the count of rows is the count of runs (5 per batch of 5
/// before).
#[test]
fn a_statement_run_once_per_batch_runs_once_for_all_its_writes() {
    on_both(|storage| {
        let db = Db::open(&storage).unwrap();
        db.migrate(&[(
            "t1",
            "CREATE TABLE t (x INTEGER NOT NULL); CREATE TABLE runs (x INTEGER NOT NULL)",
        )])
        .unwrap();
        let write = |x: i64| -> TestWrite<bool> {
            Box::new(move |tx: &Conn<'_>| {
                let ran = tx.execute_pipelined_once(
                    ("runs", ""),
                    "INSERT INTO runs VALUES (?1)",
                    || [x],
                )?;
                tx.execute_pipelined("INSERT INTO t VALUES (?1)", [x])?;
                Ok(ran)
            })
        };
        let got: Vec<bool> = one_batch(&db, (1..=5).map(write).collect())
            .into_iter()
            .map(Result::unwrap)
            .collect();
        assert_eq!(got, vec![true, false, false, false, false], "{storage:?}");
        for x in [6, 7] {
            let ran = db
                .write(|tx| {
                    let ran = tx.execute_pipelined_once(
                        ("runs", ""),
                        "INSERT INTO runs VALUES (?1)",
                        || [x],
                    )?;
                    let again = tx.execute_pipelined_once(
                        ("runs", ""),
                        "INSERT INTO runs VALUES (?1)",
                        || [x],
                    )?;
                    Ok::<_, StoreError>((ran, again))
                })
                .unwrap();
            assert_eq!(ran, (true, false), "{storage:?}");
        }
        let read = |sql: &str| -> Vec<i64> {
            db.read(|c| {
                c.prepare_cached(sql)?
                    .query_map([], |r| r.get::<_, i64>(0))?
                    .collect::<Result<Vec<_>, _>>()
            })
            .unwrap()
        };
        assert_eq!(
            read("SELECT x FROM t ORDER BY x"),
            vec![1, 2, 3, 4, 5],
            "{storage:?}"
        );
        assert_eq!(
            read("SELECT x FROM runs ORDER BY x"),
            vec![1, 6, 7],
            "{storage:?}"
        );
    });
}

/// Issue 23, writes on PostgreSQL: when a pipelined statement fails (here a primary-key
/// violation the server reports only with a later statement of the batch), the batch is
/// rolled back and run again one write at a time: the failing write alone gets the database's
/// error, the others commit once, and nothing of the first run remains.
#[test]
fn postgres_a_failing_pipelined_statement_fails_only_its_write() {
    let Some(cluster) = PgCluster::get() else {
        return;
    };
    let db = Db::open(&Storage::Postgres(cluster.database())).unwrap();
    db.migrate(&[("t1", "CREATE TABLE t (x INTEGER PRIMARY KEY)")])
        .unwrap();
    type W = TestWrite<i64>;
    let insert = |x: i64| -> W {
        Box::new(move |tx: &Conn<'_>| {
            tx.execute_pipelined("INSERT INTO t VALUES (?1)", [x])?;
            Ok(x)
        })
    };
    let got = one_batch(&db, vec![insert(1), insert(2), insert(1), insert(3)]);
    assert_eq!(got[0].as_ref().ok(), Some(&1));
    assert_eq!(got[1].as_ref().ok(), Some(&2));
    assert_eq!(got[3].as_ref().ok(), Some(&3));
    let e = got[2].as_ref().unwrap_err().to_string();
    assert!(e.contains("23505"), "the duplicate key's own error: {e}");
    let rows: Vec<i64> = db
        .read(|c| {
            c.prepare("SELECT x FROM t ORDER BY x")?
                .query_map([], |r| r.get(0))?
                .collect()
        })
        .unwrap();
    assert_eq!(rows, vec![1, 2, 3]);
}

/// The names of this process's threads (`/proc/self/task/*/comm`).
fn thread_names() -> Vec<String> {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("comm")).ok())
        .map(|n| n.trim().to_string())
        .collect()
}

/// Issue 23 (writes on PostgreSQL, r14/writes): a PostgreSQL session's round trips run on
/// the calling thread. Each session had an I/O thread of its own (`postgres-io`) that every
/// round trip woke twice before waking the caller; the sandbox spent 40 % of its CPU per
/// PostgreSQL write in those threads. Now no session starts a thread: connecting, reads,
/// a write and a group-commit batch leave no `postgres-io` thread in the process.
#[test]
fn postgres_round_trips_run_on_the_calling_thread() {
    let Some(cluster) = PgCluster::get() else {
        return;
    };
    let db = Db::open(&Storage::Postgres(cluster.database())).unwrap();
    db.migrate(&[("t1", "CREATE TABLE t (x INTEGER NOT NULL)")])
        .unwrap();
    db.write(|tx| {
        tx.execute("INSERT INTO t VALUES (1)", [])?;
        Ok::<_, StoreError>(())
    })
    .unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(db.write_batched(|tx| {
        tx.execute_pipelined("INSERT INTO t VALUES (2)", [])?;
        Ok::<_, StoreError>(())
    }))
    .unwrap();
    let n: i64 = db
        .read(|c| c.query_row("SELECT COUNT(*) FROM t", [], |r| r.get(0)))
        .unwrap();
    assert_eq!(n, 2);
    let names = thread_names();
    assert!(
        !names.iter().any(|n| n == "postgres-io"),
        "no I/O thread per PostgreSQL session: {names:?}"
    );
}

/// A session whose server connection was closed (a restarted server, here its backend
/// terminated) is found closed at its next use, before a request is sent on it, and
/// replaced: the next statement succeeds on a new connection (the I/O is no longer watched
/// by a thread between calls, so this is checked when the session is taken).
#[test]
fn a_postgres_session_closed_by_the_server_is_reconnected_at_its_next_use() {
    let Some(cluster) = PgCluster::get() else {
        return;
    };
    let url = cluster.database();
    let mut slot = None;
    let pid: i32 = {
        let s = super::sql::PgSession::live(&mut slot, &url).unwrap();
        super::sql::Conn::postgres(s)
            .query_row("SELECT pg_backend_pid()", [], |r| r.get::<_, i64>(0))
            .unwrap()
            .try_into()
            .unwrap()
    };
    let other = super::sql::PgSession::connect(&url).unwrap();
    let other = super::sql::Conn::postgres(&other);
    other
        .query_row("SELECT pg_terminate_backend(?1)", [i64::from(pid)], |r| {
            r.get::<_, i64>(0)
        })
        .unwrap();
    // Not a speed check: until the backend is gone its socket may not be closed yet.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while other
        .query_row(
            "SELECT COUNT(*) FROM pg_stat_activity WHERE pid = ?1",
            [i64::from(pid)],
            |r| r.get::<_, i64>(0),
        )
        .unwrap()
        > 0
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the backend never ended"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let s = super::sql::PgSession::live(&mut slot, &url).unwrap();
    let new_pid = super::sql::Conn::postgres(s)
        .query_row("SELECT pg_backend_pid()", [], |r| r.get::<_, i64>(0))
        .unwrap();
    assert_ne!(new_pid, i64::from(pid), "a new connection");
}

/// Issue 23 (writes on PostgreSQL, r14/writes): the clock offsets another instance wrote are
/// taken on each request in ONE round trip ([`crate::sandbox::App::sync_clock`]), even after
/// a write moved the data version (it cost 5: the version, then the shared offset and the
/// TPPs' offsets in a read transaction each); and what another instance wrote is still
/// taken.
#[test]
fn postgres_clock_sync_costs_one_round_trip_after_writes() {
    let Some(cluster) = PgCluster::get() else {
        return;
    };
    let url = cluster.database();
    let config = |clock| crate::sandbox::SandboxConfig {
        storage: Storage::Postgres(url.clone()),
        clock,
        ..Default::default()
    };
    let one = crate::sandbox::App::new(config(crate::sandbox::clock::Clock::system())).unwrap();
    let other = crate::sandbox::App::new(config(crate::sandbox::clock::Clock::system())).unwrap();
    // Every session of the pool has prepared the statements.
    for _ in 0..8 {
        one.sync_clock();
    }
    let write = |app: &crate::sandbox::App, secs: u64| {
        app.db
            .write(|tx| {
                Store::write_clock_offset(tx, Duration::from_secs(secs))?;
                tx.execute(
                    "INSERT INTO tpp_clocks (tpp, offset_secs) VALUES ('tpp-clock', ?1) \
                     ON CONFLICT (tpp) DO UPDATE SET offset_secs = excluded.offset_secs",
                    [i64::try_from(secs).unwrap() * 2],
                )?;
                Ok::<_, StoreError>(())
            })
            .unwrap()
    };
    write(&other, 3600);
    one.sync_clock();
    assert_eq!(one.clock.offset(), Duration::from_secs(3600));
    assert_eq!(
        one.clock.world_offset("tpp-clock"),
        Duration::from_secs(7200)
    );
    // Writes that move the data version, not the clock.
    for _ in 0..3 {
        other
            .db
            .write(|tx| {
                tx.execute(
                    "INSERT INTO sandbox_meta (key, value) VALUES ('clock-test', '1') \
                     ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    [],
                )?;
                Ok::<_, StoreError>(())
            })
            .unwrap();
        let before = one.db.pg_round_trips();
        one.sync_clock();
        assert_eq!(one.db.pg_round_trips() - before, 1, "one round trip");
    }
    // Without a write since the last look, the statement brings the version alone, not a
    // row per TPP with a clock of its own.
    let first = one
        .db
        .read_single(|c| crate::sandbox::store::tenancy::clock_offsets_since(c, -1))
        .unwrap();
    assert!(
        first
            .offsets
            .is_some_and(|o| o.tpps == [("tpp-clock".to_string(), 7200)])
    );
    let version = first.version.unwrap();
    let again = one
        .db
        .read_single(|c| crate::sandbox::store::tenancy::clock_offsets_since(c, version))
        .unwrap();
    assert_eq!(
        again,
        crate::sandbox::store::tenancy::SyncRead {
            version: Some(version),
            any_fault: false,
            offsets: None
        }
    );
    write(&other, 60);
    let before = one.db.pg_round_trips();
    one.sync_clock();
    assert_eq!(one.db.pg_round_trips() - before, 1, "one round trip");
    assert_eq!(one.clock.offset(), Duration::from_secs(60));
    assert_eq!(
        one.clock.world_offset("tpp-clock"),
        Duration::from_secs(120)
    );
}

/// Issue 23 (writes on PostgreSQL, r16/writes): the request faults cost a request no
/// statement of their own while no rule is stored (the clock sync's statement says so, in
/// the same round trip), and ONE round trip (no read transaction around the `SELECT`) when
/// one is; a rule created through another instance answers the next request here, and a
/// look older than the newest kept never hides it.
#[test]
fn postgres_request_faults_cost_no_round_trip_without_rules() {
    use crate::sandbox::domain::faults::{Fault, parse};
    let Some(cluster) = PgCluster::get() else {
        return;
    };
    let url = cluster.database();
    let config = || crate::sandbox::SandboxConfig {
        storage: Storage::Postgres(url.clone()),
        ..Default::default()
    };
    let one = crate::sandbox::App::new(config()).unwrap();
    let other = crate::sandbox::App::new(config()).unwrap();
    let take = |app: &crate::sandbox::App| {
        app.faults
            .take_request(&app.db, "tpp-faults", "GET", "/v1/accounts", None)
    };
    // Before any look nothing is known: the rules are read.
    assert!(one.faults.any_request_rule());
    // Every session of the pool has prepared the statements.
    for _ in 0..16 {
        one.sync_clock();
    }
    for _ in 0..16 {
        assert_eq!(take(&one), None);
    }
    let before = one.db.pg_round_trips();
    one.sync_clock();
    assert_eq!(
        one.db.pg_round_trips() - before,
        1,
        "the clock sync: one round trip"
    );
    assert!(
        !one.faults.any_request_rule(),
        "no rule stored: nothing to read"
    );
    // A rule created through the other instance answers the next request here.
    let fault = Fault {
        id: Uuid::new_v4().to_string(),
        definition: parse(
            &serde_json::json!({"action": "error", "status": 503, "code": "SERVICE_BLOCKED", "path": "/v1/accounts"}),
        )
        .unwrap(),
        remaining: None,
        tpp: "tpp-faults".into(),
    };
    other.faults.add(&other.db, &fault, 0).unwrap();
    let before = one.db.pg_round_trips();
    one.sync_clock();
    assert!(one.faults.any_request_rule());
    let mid = one.db.pg_round_trips();
    assert_eq!(take(&one).map(|f| f.id), Some(fault.id.clone()));
    assert_eq!(mid - before, 1, "the clock sync: one round trip");
    assert_eq!(
        one.db.pg_round_trips() - mid,
        1,
        "the rules: one round trip"
    );
    // A slower request's older look (no rule yet) does not replace the newer one.
    one.faults.saw(Some((Some(0), false)));
    assert!(one.faults.any_request_rule());
    // A failed look: the rules are read again.
    one.faults.saw(None);
    assert!(one.faults.any_request_rule());
    // Cleared through the other instance: nothing to read again.
    other.faults.clear_of(&other.db, "tpp-faults").unwrap();
    one.sync_clock();
    assert!(!one.faults.any_request_rule());
    assert_eq!(take(&one), None);
}

/// The connection is opened by tokio-postgres's own rule for `hostaddr`: the address given
/// is dialled, not the host's name (here a loopback address where nothing listens), and a
/// URL whose host and hostaddr lists differ in length is refused with its reason.
#[test]
fn a_postgres_hostaddr_is_the_address_dialled() {
    let Some(cluster) = PgCluster::get() else {
        return;
    };
    let url = cluster.database();
    let via_hostaddr = format!(
        "{}?hostaddr=127.0.0.1",
        url.replacen("@127.0.0.1:", "@127.0.0.2:", 1)
    );
    assert_ne!(via_hostaddr, url);
    let s = super::sql::PgSession::connect(&via_hostaddr).unwrap();
    let one: i64 = super::sql::Conn::postgres(&s)
        .query_row("SELECT 1", [], |r| r.get(0))
        .unwrap();
    assert_eq!(one, 1);
    let mismatched = format!("{url}?host=127.0.0.1,127.0.0.1&hostaddr=127.0.0.1");
    let e = super::sql::PgSession::connect(&mismatched).unwrap_err();
    assert!(e.to_string().contains("2 hosts and 1 hostaddrs"), "{e}");
}

/// A payment row of `tpp` from `debtor` with `status` and `due_at`, for the tests.
fn test_payment(
    tpp: &str,
    debtor: &Account,
    status: &str,
    due_at: Option<i64>,
) -> payments::PaymentRow {
    payments::PaymentRow {
        id: Uuid::new_v4().to_string(),
        tpp: tpp.into(),
        service: "payments".into(),
        product: "norwegian-domestic-credit-transfers".into(),
        kind: "domestic".into(),
        status: status.into(),
        held_from: None,
        funds_available: None,
        body: "{}".into(),
        debtor_account: debtor.id.to_string(),
        currency: debtor.currency.clone(),
        amount_minor: 100,
        execution_date: None,
        dedup_key: Uuid::new_v4().to_string(),
        created_at: 1,
        created_day: "1970-01-01".into(),
        redirect_uri: "https://tpp.example/back".into(),
        tpp_session_id: "s".into(),
        expected_customer: None,
        customer: None,
        psu_id: None,
        agreement: None,
        approved_at: None,
        due_at,
        settled_at: None,
        reason: None,
    }
}

/// What a payment creation reads before its write ([`Store::payment_context`]) is what the
/// four single reads it replaces give, on both back ends: the PSU-ID's customer only for
/// the TPP that registered it, the account by BBAN with its owner, and whether a payment is
/// due; on PostgreSQL it costs one round trip.
#[test]
fn the_payment_context_is_the_four_reads_in_one_statement() {
    on_both(|storage| {
        let s = store(&storage);
        let customers = s.customers().unwrap();
        let owner = customers[0].clone();
        let account = s.accounts_of(owner.id).unwrap()[0].clone();
        let registered = customers[1].clone();
        let (tpp, other) = (TppId("tpp-a".into()), TppId("tpp-b".into()));
        let psu = Uuid::new_v4();
        s.db.write(|tx| {
            tx.execute(
                "INSERT INTO psu_registrations (tpp, psu_id, customer, registered_at) \
                 VALUES (?1, ?2, ?3, 0)",
                params![tpp.0, psu.to_string(), registered.id.to_string()],
            )?;
            Ok::<_, StoreError>(())
        })
        .unwrap();
        let c = s
            .payment_context(1_000, &tpp, Some(psu), Some(&account.bban))
            .unwrap();
        assert!(!c.due, "{storage:?}");
        assert_eq!(c.psu_customer.as_ref().map(|c| c.id), Some(registered.id));
        assert_eq!(
            c.psu_customer.map(|c| (c.number, c.kind)),
            s.customer(registered.id)
                .unwrap()
                .map(|c| (c.number, c.kind))
        );
        let debtor = c.debtor.unwrap();
        let single = s.account_by_bban(&account.bban).unwrap().unwrap();
        assert_eq!(
            (debtor.id, debtor.owner, &debtor.bban, &debtor.currency),
            (single.id, single.owner, &single.bban, &single.currency)
        );
        assert_eq!(
            c.debtor_owner.map(|o| (o.id, o.kind)),
            Some((owner.id, owner.kind))
        );
        // Another TPP's PSU-ID is unknown to this one; an unknown BBAN reads nothing.
        let c = s
            .payment_context(1_000, &other, Some(psu), Some("00000000000"))
            .unwrap();
        assert!(c.psu_customer.is_none() && c.debtor.is_none() && c.debtor_owner.is_none());
        let c = s.payment_context(1_000, &tpp, None, None).unwrap();
        assert!(c.psu_customer.is_none() && c.debtor.is_none());
        // An authorised payment due at 500: due from then on, as `any_due` says.
        s.db.write(|tx| {
            payments::insert_payment(tx, &test_payment(&tpp.0, &account, "ACTC", Some(500)))?;
            payments::insert_payment(tx, &test_payment(&tpp.0, &account, "RCVD", None))?;
            Ok::<_, StoreError>(())
        })
        .unwrap();
        for now in [499, 500, 501] {
            let due = s.payment_context(now, &tpp, None, None).unwrap().due;
            assert_eq!(due, now >= 500, "{storage:?} at {now}");
            assert_eq!(
                due,
                s.db.read_single(|c| payments::any_due(c, now)).unwrap()
            );
        }
        if matches!(storage, Storage::Postgres(_)) {
            // Every session of the pool has prepared the statement.
            for _ in 0..8 {
                s.payment_context(1_000, &tpp, Some(psu), Some(&account.bban))
                    .unwrap();
            }
            let before = s.db.pg_round_trips();
            s.payment_context(1_000, &tpp, Some(psu), Some(&account.bban))
                .unwrap();
            assert_eq!(s.db.pg_round_trips() - before, 1, "one round trip");
        }
    });
}

/// Issue 23, group commit on both back ends: a batch whose writes all succeed runs each write
/// once (SQLite: no savepoint of its own around it); when one fails, the batch is rolled back
/// at that write and run again one write at a time, each in its own savepoint, so the
/// writes before it run twice, the one after it once, and only the failed write's rows are
/// missing.
#[test]
fn a_batch_is_run_again_with_savepoints_only_when_a_write_fails() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    on_both(|storage| {
        let db = Db::open(&storage).unwrap();
        db.migrate(&[("t1", "CREATE TABLE t (x INTEGER NOT NULL)")])
            .unwrap();
        let runs: Arc<Vec<AtomicUsize>> = Arc::new((0..6).map(|_| AtomicUsize::new(0)).collect());
        let write = |x: usize, fails: bool| -> TestWrite<usize> {
            let runs = runs.clone();
            Box::new(move |tx: &Conn<'_>| {
                runs[x].fetch_add(1, Ordering::SeqCst);
                tx.execute("INSERT INTO t VALUES (?1)", [i64::try_from(x).unwrap()])?;
                if fails {
                    return Err(StoreError::from(super::sql::Error::Other("fails".into())));
                }
                Ok(x)
            })
        };
        let got = one_batch(&db, vec![write(0, false), write(1, false), write(2, false)]);
        assert!(got.iter().all(Result::is_ok), "{storage:?}");
        let got = one_batch(&db, vec![write(3, false), write(4, true), write(5, false)]);
        assert!(
            got[0].is_ok() && got[1].is_err() && got[2].is_ok(),
            "{storage:?}"
        );
        let counts: Vec<usize> = runs.iter().map(|r| r.load(Ordering::SeqCst)).collect();
        assert_eq!(counts, vec![1, 1, 1, 2, 2, 1], "{storage:?}");
        let rows: Vec<i64> = db
            .read(|c| {
                c.prepare("SELECT x FROM t ORDER BY x")?
                    .query_map([], |r| r.get(0))?
                    .collect()
            })
            .unwrap();
        assert_eq!(rows, vec![0, 1, 2, 3, 5], "{storage:?}");
    });
}

/// The cached payment context (SQLite, `db::Changes`) is what a read of the database gives,
/// after every kind of write: a group-commit batch changing a registration (seen through
/// SQLite's update hook), a single write renaming the account, one emptying the
/// registrations without a `WHERE` (SQLite's truncate optimization calls no hook), new
/// payments received (no change) and one stored authorised with a run time (due at once),
/// and an update making a payment due; and one TPP's answer is never another's, though
/// both ask with the same PSU-ID and BBAN.
#[test]
fn a_cached_payment_context_is_the_database_after_every_write() {
    let dir = tempfile::tempdir().unwrap();
    for storage in [
        Storage::InMemory,
        Storage::File(dir.path().join("state.sqlite3")),
    ] {
        let s = store(&storage);
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let customers = s.customers().unwrap();
        let owner = customers[0].clone();
        let account = s.accounts_of(owner.id).unwrap()[0].clone();
        let (x, y, z) = (customers[1].id, customers[2].id, customers[3].id);
        let (a, b) = (TppId("tpp-a".into()), TppId("tpp-b".into()));
        let psu = Uuid::new_v4();
        let register = |tpp: &TppId, customer: Uuid| {
            s.db.write(|tx| {
                tx.execute(
                    "INSERT INTO psu_registrations (tpp, psu_id, customer, registered_at) \
                     VALUES (?1, ?2, ?3, 0)",
                    params![tpp.0, psu.to_string(), customer.to_string()],
                )?;
                Ok::<_, StoreError>(())
            })
            .unwrap();
        };
        register(&a, x);
        register(&b, z);
        // Each answer twice (the second from the cache), checked against the database.
        let context = |tpp: &TppId, now: i64| {
            let first = s
                .payment_context(now, tpp, Some(psu), Some(&account.bban))
                .unwrap();
            let again = s
                .payment_context(now, tpp, Some(psu), Some(&account.bban))
                .unwrap();
            let read = s
                .payment_context_read(now, tpp, Some(psu), Some(&account.bban))
                .unwrap();
            let shape = |c: &PaymentContext| {
                (
                    c.due,
                    c.psu_customer.as_ref().map(|c| c.id),
                    c.debtor.as_ref().map(|a| (a.id, a.name.clone())),
                    c.debtor_owner.as_ref().map(|o| o.id),
                )
            };
            assert_eq!(shape(&first), shape(&read), "{storage:?}");
            assert_eq!(shape(&again), shape(&read), "{storage:?}");
            shape(&again)
        };
        assert_eq!(context(&a, 1_000).1, Some(x), "{storage:?}");
        assert_eq!(context(&b, 1_000).1, Some(z), "{storage:?}");
        assert_eq!(context(&a, 1_000).3, Some(owner.id));
        // A batch of the group commit moves A's registration to y.
        let (tpp, psu_text, to) = (a.0.to_string(), psu.to_string(), y.to_string());
        rt.block_on(s.db.write_batched(move |tx| {
            tx.execute(
                "UPDATE psu_registrations SET customer = ?3 WHERE tpp = ?1 AND psu_id = ?2",
                params![tpp, psu_text, to],
            )?;
            Ok::<_, StoreError>(())
        }))
        .unwrap();
        assert_eq!(context(&a, 1_000).1, Some(y), "{storage:?}");
        assert_eq!(context(&b, 1_000).1, Some(z), "{storage:?}");
        // A single write renames the account.
        s.db.write(|tx| {
            tx.execute(
                "UPDATE accounts SET name = 'renamed' WHERE bban = ?1",
                [&account.bban],
            )?;
            Ok::<_, StoreError>(())
        })
        .unwrap();
        assert_eq!(
            context(&a, 1_000).2.map(|(_, name)| name).as_deref(),
            Some("renamed")
        );
        // New payments received (the creations' batches): nothing due.
        for status in ["RCVD", "RCVD"] {
            let row = test_payment(&a.0, &account, status, None);
            rt.block_on(s.db.write_batched(move |tx| {
                payments::insert_payment(tx, &row)?;
                Ok::<_, StoreError>(())
            }))
            .unwrap();
            assert!(!context(&a, 1_000).0, "{storage:?}");
        }
        // A payment stored authorised with a run time, in a batch: due from then on.
        let row = test_payment(&a.0, &account, "ACTC", Some(900));
        rt.block_on(s.db.write_batched(move |tx| {
            payments::insert_payment(tx, &row)?;
            Ok::<_, StoreError>(())
        }))
        .unwrap();
        assert!(!context(&a, 899).0 && context(&a, 900).0, "{storage:?}");
        // Settled (an update in a batch): nothing due again; then an earlier one authorised.
        rt.block_on(s.db.write_batched(|tx| {
            tx.execute(
                "UPDATE pis_payments SET status = 'ACSC' WHERE status = 'ACTC'",
                [],
            )?;
            Ok::<_, StoreError>(())
        }))
        .unwrap();
        assert!(!context(&a, 1_000).0, "{storage:?}");
        rt.block_on(s.db.write_batched(|tx| {
            tx.execute(
                "UPDATE pis_payments SET status = 'ACTC', due_at = 500 WHERE status = 'RCVD'",
                [],
            )?;
            Ok::<_, StoreError>(())
        }))
        .unwrap();
        assert!(context(&a, 500).0 && !context(&a, 499).0, "{storage:?}");
        // Every registration gone at once (no hook): no customer for either TPP.
        s.db.write(|tx| {
            tx.execute("DELETE FROM psu_registrations", [])?;
            Ok::<_, StoreError>(())
        })
        .unwrap();
        assert_eq!(context(&a, 1_000).1, None, "{storage:?}");
        assert_eq!(context(&b, 1_000).1, None, "{storage:?}");
    }
}

/// Issue 23, session 21: the logical-duplicate check (SQLite: the writer's keys in memory,
/// [`super::dup_keys`]; PostgreSQL: the keyed index) answers what the rows say, checked
/// against a plain read of `pis_payments` after every step: a second initiation is a
/// duplicate, another TPP's same payment is not, nor the same payment on another day, nor
/// after the first was cancelled (and the re-initiated one is again); a write rolled back
/// in a batch leaves no duplicate behind, while the writes committed with it are
/// duplicates; a payment inserted by another statement than a creation (the map did not
/// record it) is one; payments in a signing basket stay duplicates; after a restart of
/// the state file the payments stored before are duplicates.
#[test]
fn the_logical_duplicate_check_answers_what_the_rows_say() {
    let dir = tempfile::tempdir().unwrap();
    let mut storages = vec![
        Storage::InMemory,
        Storage::File(dir.path().join("state.sqlite3")),
    ];
    // Kept while its database is used.
    let cluster = PgCluster::get();
    if let Some(c) = &cluster {
        storages.push(Storage::Postgres(c.database()));
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    for storage in storages {
        let s = store(&storage);
        let account = s.accounts_of(s.customers().unwrap()[0].id).unwrap()[0].clone();
        let row = |tpp: &str, key: &str, day: &str| {
            let mut p = test_payment(tpp, &account, "RCVD", None);
            p.dedup_key = key.into();
            p.created_day = day.into();
            p
        };
        // The rows' own answer (a read connection; no index needed).
        let truth = |db: &Db, tpp: &str, key: &str, day: &str| -> bool {
            db.read(|c| {
                c.query_row(
                    "SELECT COUNT(*) > 0 FROM pis_payments WHERE tpp = ?1 AND dedup_key = ?2 \
                     AND created_day = ?3 AND status <> 'RJCT' AND status <> 'CANC'",
                    params![tpp, key, day],
                    |r| r.get(0),
                )
            })
            .unwrap()
        };
        // A creation as `payment::initiate` makes it: the check, then the insert; the
        // payment's id when stored, `None` when refused as a duplicate.
        let initiate = |db: &Arc<Db>, tpp: &str, key: &str, day: &str| -> Option<String> {
            let expected = truth(db, tpp, key, day);
            let p = row(tpp, key, day);
            let id = p.id.clone();
            let got = rt
                .block_on(db.write_batched(move |tx| {
                    if payments::logical_duplicate_exists(tx, &p.tpp, &p.dedup_key, &p.created_day)?
                    {
                        return Ok::<_, StoreError>(false);
                    }
                    payments::insert_payment(tx, &p)?;
                    Ok(true)
                }))
                .unwrap();
            assert_eq!(!got, expected, "{storage:?}: {tpp} {key} {day}");
            got.then_some(id)
        };
        let db = s.db.clone();
        let first = initiate(&db, "tpp-a", "k1", "2026-01-01").expect("new");
        assert!(
            initiate(&db, "tpp-a", "k1", "2026-01-01").is_none(),
            "{storage:?}"
        );
        // Another TPP's same payment; the same payment the next day.
        assert!(
            initiate(&db, "tpp-b", "k1", "2026-01-01").is_some(),
            "{storage:?}"
        );
        assert!(initiate(&db, "tpp-b", "k1", "2026-01-01").is_none());
        assert!(initiate(&db, "tpp-a", "k1", "2026-01-02").is_some());
        // Cancelled: initiated again, which is then the duplicate.
        db.write(|tx| {
            payments::set_status(tx, &first, payments::status::CANC, None)?;
            Ok::<_, StoreError>(())
        })
        .unwrap();
        assert!(
            initiate(&db, "tpp-a", "k1", "2026-01-01").is_some(),
            "{storage:?}"
        );
        assert!(initiate(&db, "tpp-a", "k1", "2026-01-01").is_none());
        // A batch in which a write fails after its insert: only that write is rolled back.
        let write = |key: &str, fails: bool| -> TestWrite<()> {
            let p = row("tpp-a", key, "2026-01-01");
            Box::new(move |tx: &Conn<'_>| {
                if payments::logical_duplicate_exists(tx, &p.tpp, &p.dedup_key, &p.created_day)? {
                    return Err(StoreError::from(super::sql::Error::Other("dup".into())));
                }
                payments::insert_payment(tx, &p)?;
                if fails {
                    return Err(StoreError::from(super::sql::Error::Other("fails".into())));
                }
                Ok(())
            })
        };
        let got = one_batch(
            &db,
            vec![write("k2", false), write("k3", true), write("k4", false)],
        );
        assert!(
            got[0].is_ok() && got[1].is_err() && got[2].is_ok(),
            "{storage:?}"
        );
        assert!(
            initiate(&db, "tpp-a", "k3", "2026-01-01").is_some(),
            "{storage:?}"
        );
        assert!(
            initiate(&db, "tpp-a", "k2", "2026-01-01").is_none(),
            "{storage:?}"
        );
        assert!(initiate(&db, "tpp-a", "k4", "2026-01-01").is_none());
        // A payment stored by another statement than a creation (a single write).
        let other = row("tpp-a", "k5", "2026-01-01");
        db.write(|tx| {
            payments::insert_payment(tx, &other)?;
            Ok::<_, StoreError>(())
        })
        .unwrap();
        let raw = row("tpp-a", "k6", "2026-01-01");
        let columns = payments::PaymentRow::COLUMNS;
        db.write(|tx| {
            tx.execute(
                &format!(
                    "INSERT INTO pis_payments ({columns}) SELECT '{}', tpp, service, product, \
                     kind, status, held_from, funds_available, body, debtor_account, currency, \
                     amount_minor, execution_date, 'k6', created_at, created_day, redirect_uri, \
                     tpp_session_id, expected_customer, customer, psu_id, agreement, \
                     approved_at, due_at, settled_at, reason FROM pis_payments WHERE id = ?1",
                    raw.id
                ),
                [other.id.as_str()],
            )?;
            Ok::<_, StoreError>(())
        })
        .unwrap();
        assert!(
            initiate(&db, "tpp-a", "k6", "2026-01-01").is_none(),
            "{storage:?}"
        );
        assert!(
            initiate(&db, "tpp-a", "k5", "2026-01-01").is_none(),
            "{storage:?}"
        );
        // The payments of a signing basket.
        let p7 = initiate(&db, "tpp-a", "k7", "2026-01-01").expect("new");
        db.write(|tx| {
            tx.execute(
                "INSERT INTO pis_baskets (id, tpp, created_at, redirect_uri, tpp_session_id) \
                 VALUES ('b1', 'tpp-a', 1, 'https://tpp.example/back', 's')",
                [],
            )?;
            tx.execute(
                "INSERT INTO pis_basket_payments (basket, payment, position) VALUES ('b1', ?1, 0)",
                [p7.as_str()],
            )?;
            Ok::<_, StoreError>(())
        })
        .unwrap();
        assert!(
            initiate(&db, "tpp-a", "k7", "2026-01-01").is_none(),
            "{storage:?}"
        );
        if let Storage::File(_) = storage {
            // A restart: the keys are loaded again from the rows.
            drop((s, db));
            let s = store(&storage);
            let db = s.db.clone();
            assert!(
                initiate(&db, "tpp-a", "k1", "2026-01-01").is_none(),
                "{storage:?}"
            );
            assert!(initiate(&db, "tpp-a", "k3", "2026-01-01").is_none());
            assert!(initiate(&db, "tpp-b", "k1", "2026-01-02").is_some());
        }
    }
}

/// PostgreSQL keeps the keyed index of the logical-duplicate check (other instances write
/// there: no instance can keep the keys in memory), and the SQLite-only migration that
/// drops it on SQLite is recorded as applied without running.
#[test]
fn postgres_keeps_the_keyed_duplicate_index() {
    let Some(cluster) = PgCluster::get() else {
        return;
    };
    let s = store(&Storage::Postgres(cluster.database()));
    let indexes: Vec<String> =
        s.db.read(|c| {
            c.prepare(
                "SELECT indexname FROM pg_indexes WHERE tablename = 'pis_payments' \
                 ORDER BY indexname",
            )?
            .query_map([], |r| r.get(0))?
            .collect()
        })
        .unwrap();
    assert!(
        indexes.contains(&"pis_payments_dedup_by_tpp".to_string()),
        "{indexes:?}"
    );
    assert!(
        !indexes.contains(&"pis_payments_by_tpp_day".to_string()),
        "{indexes:?}"
    );
    let recorded: bool =
        s.db.read(|c| {
            c.query_row(
                "SELECT EXISTS(SELECT 1 FROM schema_migrations WHERE name = ?1)",
                [super::indexes::MIGRATION_DUPLICATES_IN_MEMORY.0],
                |r| r.get(0),
            )
        })
        .unwrap();
    assert!(recorded);
}

/// A new payment and a new authorisation are inserted through the statements that leave
/// their later columns out (`payments::INSERT_NEW_PAYMENT`, `INSERT_NEW_AUTHORISATION`),
/// any other row through every column; either way the row reads back as it was given, the
/// columns left out NULL, on both back ends, in a single write and in a batch. And the short
/// statements name every column but the ones they leave out (a column added to the rows
/// must be added to them, or this fails).
#[test]
fn a_new_payment_and_authorisation_read_back_as_given() {
    let names = |list: &str| -> std::collections::BTreeSet<String> {
        list.split(',').map(|c| c.trim().to_string()).collect()
    };
    let listed = |sql: &str| names(&sql[sql.find('(').unwrap() + 1..sql.find(')').unwrap()]);
    let mut new_payment = listed(payments::INSERT_NEW_PAYMENT);
    new_payment.extend(payments::LATER_PAYMENT_COLUMNS.map(str::to_string));
    assert_eq!(new_payment, names(payments::PaymentRow::COLUMNS));
    let mut new_auth = listed(payments::INSERT_NEW_AUTHORISATION);
    new_auth.extend(["customer", "agreement"].map(str::to_string));
    assert_eq!(new_auth, names(payments::AuthorisationRow::COLUMNS));

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    on_both(|storage| {
        let s = store(&storage);
        let owner = s.customers().unwrap()[0].clone();
        let account = s.accounts_of(owner.id).unwrap()[0].clone();
        let mut rows = Vec::new();
        // As an initiation makes it: every optional column it fills set, the later ones not.
        let mut fresh = test_payment("tpp-a", &account, "RCVD", None);
        fresh.execution_date = Some("2030-01-02".into());
        fresh.expected_customer = Some(owner.id.to_string());
        fresh.reason = Some("received".into());
        rows.push(fresh);
        // Nothing optional at all.
        rows.push(test_payment("tpp-a", &account, "RCVD", None));
        // Each later column set alone (the full statement).
        for i in 0..payments::LATER_PAYMENT_COLUMNS.len() {
            let mut p = test_payment("tpp-a", &account, "PDNG", None);
            match i {
                0 => p.held_from = Some("2030-01-03".into()),
                1 => p.funds_available = Some(false),
                2 => p.customer = Some(owner.id.to_string()),
                3 => p.psu_id = Some("psu-1".into()),
                4 => p.agreement = Some(Uuid::new_v4().to_string()),
                5 => p.approved_at = Some(7),
                6 => p.due_at = Some(8),
                _ => p.settled_at = Some(9),
            }
            rows.push(p);
        }
        let auth =
            |payment: &payments::PaymentRow, customer: Option<String>| payments::AuthorisationRow {
                id: Uuid::new_v4().to_string(),
                tpp: "tpp-a".into(),
                tpp_name: "TPP A".into(),
                payment: Some(payment.id.clone()),
                basket: None,
                redirect_uri: "https://tpp.example/sca".into(),
                tpp_session_id: "session".into(),
                sca_status: payments::sca_status::RECEIVED.into(),
                agreement: customer.as_ref().map(|_| Uuid::new_v4().to_string()),
                customer,
                created_at: 3,
            };
        let auths = vec![
            auth(&rows[0], None),
            auth(&rows[1], Some(owner.id.to_string())),
        ];
        // The first half in single writes, the rest in a batch.
        let (single, batched) = rows.split_at(5);
        s.db.write(|tx| {
            for p in single {
                payments::insert_payment(tx, p)?;
            }
            for a in &auths {
                payments::insert_authorisation(tx, a)?;
            }
            Ok::<_, StoreError>(())
        })
        .unwrap();
        let batched = batched.to_vec();
        rt.block_on(s.db.write_batched(move |tx| {
            for p in &batched {
                payments::insert_payment(tx, p)?;
            }
            Ok::<_, StoreError>(())
        }))
        .unwrap();
        for p in &rows {
            let back =
                s.db.read_single(|c| payments::payment(c, &p.id))
                    .unwrap()
                    .unwrap();
            assert_eq!(format!("{back:?}"), format!("{p:?}"), "{storage:?}");
        }
        for a in &auths {
            let back =
                s.db.read_single(|c| payments::authorisation(c, &a.id))
                    .unwrap()
                    .unwrap();
            assert_eq!(format!("{back:?}"), format!("{a:?}"), "{storage:?}");
        }
        // The left-out columns are NULL, not an empty text or a zero.
        let nulls: i64 =
            s.db.read_single(|c| {
                c.query_row(
                    "SELECT COUNT(*) FROM pis_payments WHERE id = ?1 AND held_from IS NULL \
                     AND funds_available IS NULL AND customer IS NULL AND psu_id IS NULL \
                     AND agreement IS NULL AND approved_at IS NULL AND due_at IS NULL \
                     AND settled_at IS NULL",
                    [rows[0].id.as_str()],
                    |r| r.get(0),
                )
            })
            .unwrap();
        assert_eq!(nulls, 1, "{storage:?}");
    });
}
