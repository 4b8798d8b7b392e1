//! A private PostgreSQL cluster for tests (issue 21): `initdb` into a temporary directory,
//! `pg_ctl start` listening on 127.0.0.1 on a free port and on a unix socket in that
//! directory, `pg_ctl stop` and the directory removed when the last [`PgCluster`] handle is
//! dropped. Each test takes its own database ([`PgCluster::database`]), so tests in one
//! process share one cluster while they overlap.
//!
//! PostgreSQL refuses to run as root: as root (CI containers) the server runs as `nobody`
//! through `runuser`, on a data directory chowned to it; otherwise as the current user.
//!
//! The binaries: `$PSD2_PG_BIN`, else `pg_config --bindir`, else the newest
//! `/usr/lib/postgresql/*/bin`. Where none is found, [`PgCluster::get`] answers `None` and
//! prints why (the test is skipped) — unless `CI` or `PSD2_REQUIRE_POSTGRES=1` is set, where
//! it panics (a CI run never skips the PostgreSQL tests).
//!
//! This file is also compiled into the library's unit tests (`#[path]` from
//! `src/sandbox/store/mod.rs`), so it depends on `std` and `tempfile` only.

#![allow(dead_code)]

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, Weak};

/// The cluster's superuser (authentication `trust` on loopback and the socket).
pub const PG_USER: &str = "psd2";

/// One running cluster (shared through [`PgCluster::get`]; stopped on drop).
pub struct PgCluster {
    bin: PathBuf,
    dir: tempfile::TempDir,
    /// The TCP port on 127.0.0.1.
    pub port: u16,
    /// `Some("nobody")` when the server runs as another user (we are root).
    run_as: Option<String>,
    next_db: AtomicU32,
}

static SHARED: Mutex<Weak<PgCluster>> = Mutex::new(Weak::new());

/// Whether a missing PostgreSQL fails the test instead of skipping it.
pub fn postgres_required() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "0" && v != "false")
        || std::env::var_os("PSD2_REQUIRE_POSTGRES").is_some_and(|v| v == "1")
}

/// The directory of `initdb`, `pg_ctl`, `createdb`, if PostgreSQL is installed.
pub fn pg_bin_dir() -> Option<PathBuf> {
    let has = |d: &Path| d.join("initdb").is_file() && d.join("pg_ctl").is_file();
    if let Some(d) = std::env::var_os("PSD2_PG_BIN").map(PathBuf::from) {
        return has(&d).then_some(d);
    }
    if let Ok(out) = Command::new("pg_config").arg("--bindir").output()
        && out.status.success()
    {
        let d = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        if has(&d) {
            return Some(d);
        }
    }
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| {
            let e = e.ok()?;
            let v: u32 = e.file_name().to_str()?.parse().ok()?;
            let d = e.path().join("bin");
            has(&d).then_some((v, d))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, d)| d)
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

impl PgCluster {
    /// The shared cluster (started when no test holds it), or `None` when PostgreSQL is not
    /// installed and not required (the reason is printed). Panics when it is required and
    /// missing, or when it fails to start.
    pub fn get() -> Option<Arc<PgCluster>> {
        let mut shared = SHARED.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(c) = shared.upgrade() {
            return Some(c);
        }
        let Some(bin) = pg_bin_dir() else {
            if postgres_required() {
                panic!(
                    "PostgreSQL is required (CI or PSD2_REQUIRE_POSTGRES=1) but no initdb/pg_ctl \
                     was found (PSD2_PG_BIN, pg_config --bindir, /usr/lib/postgresql/*/bin)"
                );
            }
            eprintln!(
                "SKIPPED: PostgreSQL is not installed (no initdb/pg_ctl); this test runs \
                 against SQLite only here (set PSD2_PG_BIN to enable it)"
            );
            return None;
        };
        let c = Arc::new(Self::start(bin));
        *shared = Arc::downgrade(&c);
        Some(c)
    }

    fn start(bin: PathBuf) -> PgCluster {
        let run_as = is_root().then(|| "nobody".to_string());
        // As root the server runs as `nobody`, who must reach the directory: under /tmp, not
        // a $TMPDIR that may be inside root's home.
        let parent = if run_as.is_some() {
            PathBuf::from("/tmp")
        } else {
            std::env::temp_dir()
        };
        let dir = tempfile::Builder::new()
            .prefix("psd2-pg-")
            .tempdir_in(parent)
            .expect("a temporary directory");
        if let Some(user) = &run_as {
            let ok = Command::new("chown")
                .arg("-R")
                .arg(format!("{user}:"))
                .arg(dir.path())
                .status()
                .is_ok_and(|s| s.success());
            assert!(ok, "chown of the cluster directory to {user}");
        }
        let mut cluster = PgCluster {
            bin,
            dir,
            port: 0,
            run_as,
            next_db: AtomicU32::new(0),
        };
        let data = cluster.data_dir();
        cluster.run(
            "initdb",
            &[
                "-D",
                &data.display().to_string(),
                "-U",
                PG_USER,
                "--auth=trust",
                "-E",
                "UTF8",
                "--locale=C",
                "--no-sync",
            ],
        );
        // A port taken between our probe and the server's bind: try a few.
        for _ in 0..5 {
            cluster.port = free_port();
            let opts = format!(
                "-c listen_addresses=127.0.0.1 -p {} -k {} -c fsync=off -c max_connections=200",
                cluster.port,
                cluster.dir.path().display()
            );
            let log = cluster.dir.path().join("server.log").display().to_string();
            if cluster.try_run(
                "pg_ctl",
                &[
                    "-D",
                    &data.display().to_string(),
                    "-l",
                    &log,
                    "-o",
                    &opts,
                    "-w",
                    "-t",
                    "60",
                    "start",
                ],
            ) {
                cluster.stop_when_this_process_ends();
                return cluster;
            }
        }
        let log =
            std::fs::read_to_string(cluster.dir.path().join("server.log")).unwrap_or_default();
        panic!("the test PostgreSQL cluster did not start:\n{log}");
    }

    fn data_dir(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// The postmaster's pid (the first line of `postmaster.pid`), while the cluster runs.
    pub fn postmaster_pid(&self) -> Option<u32> {
        let text = std::fs::read_to_string(self.data_dir().join("postmaster.pid")).ok()?;
        text.lines().next()?.trim().parse().ok()
    }

    /// Stops the cluster and removes its directory when this process ends without dropping
    /// the last handle (a test that keeps it alive until the process exits, an abort, a
    /// kill): `Drop` never runs then, and the server, started as a daemon by `pg_ctl`,
    /// would outlive the tests (seen after a CI run: a postmaster of parent pid 1). A shell
    /// in a process group of its own checks every second whether this process still
    /// exists, then runs the same `pg_ctl stop` as `Drop` (a no-op once `Drop` ran).
    fn stop_when_this_process_ends(&self) {
        let data = self.data_dir().display().to_string();
        let stop = self.command("pg_ctl", &["-D", &data, "-m", "immediate", "-w", "stop"]);
        let watcher = Command::new("sh")
            .arg("-c")
            .arg(
                "pid=$1; dir=$2; shift 2; \
                 while kill -0 \"$pid\" 2>/dev/null; do sleep 1; done; \
                 \"$@\"; rm -rf \"$dir\"",
            )
            .arg("sh")
            .arg(std::process::id().to_string())
            .arg(self.dir.path())
            .arg(stop.get_program())
            .args(stop.get_args())
            .current_dir("/")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn();
        if let Err(e) = watcher {
            eprintln!(
                "the test PostgreSQL cluster has no watcher ({e}): stop it by hand if this process is killed"
            );
        }
    }

    fn command(&self, program: &str, args: &[&str]) -> Command {
        let exe = self.bin.join(program);
        let mut cmd = match &self.run_as {
            Some(user) => {
                let mut c = Command::new("runuser");
                c.arg("-u").arg(user).arg("--").arg(exe);
                c
            }
            None => Command::new(exe),
        };
        cmd.args(args)
            .current_dir(self.dir.path())
            .stdin(Stdio::null());
        cmd
    }

    fn try_run(&self, program: &str, args: &[&str]) -> bool {
        self.command(program, args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }

    fn run(&self, program: &str, args: &[&str]) {
        let out = self
            .command(program, args)
            .output()
            .unwrap_or_else(|e| panic!("{program}: {e}"));
        assert!(
            out.status.success(),
            "{program} {args:?} failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// How many databases [`PgCluster::database`] handed out so far.
    pub fn databases_handed_out(&self) -> u32 {
        self.next_db.load(Ordering::Relaxed)
    }

    /// The directory of the cluster's unix socket.
    pub fn socket_dir(&self) -> &Path {
        self.dir.path()
    }

    /// A new, empty database of this cluster, as a `postgres://` URL over TCP on 127.0.0.1.
    pub fn database(&self) -> String {
        let name = format!(
            "t{}_{}",
            std::process::id(),
            self.next_db.fetch_add(1, Ordering::Relaxed)
        );
        let port = self.port.to_string();
        let socket = self.socket_dir().display().to_string();
        self.run(
            "createdb",
            &["-h", &socket, "-p", &port, "-U", PG_USER, &name],
        );
        format!("postgres://{PG_USER}@127.0.0.1:{}/{name}", self.port)
    }
}

impl Drop for PgCluster {
    fn drop(&mut self) {
        let data = self.data_dir().display().to_string();
        let _ = self.try_run("pg_ctl", &["-D", &data, "-m", "immediate", "-w", "stop"]);
    }
}
