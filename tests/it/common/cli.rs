//! The real `psd2-console` binary as a subprocess, shared by the `cli_*` modules and the tmux
//! tests: one-shot commands on a private data dir, and `sandbox serve` killed on drop.

#![allow(dead_code)]

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The binary Cargo built for the integration tests.
pub const BIN: &str = env!("CARGO_BIN_EXE_psd2-console");

/// `(exit code or -1 when killed by a signal, stdout, stderr)` of a finished command.
pub fn outcome(out: Output) -> (i32, String, String) {
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs `psd2-console args` on the data dir `home` (`PSD2_CONSOLE_HOME`) to the end. Every
/// command of the binary in the tests runs with `PSD2_CONSOLE_FREE_PORTS=1`: the embedded
/// sandbox and the callback listener take free ports, so tests run in parallel.
pub fn run(home: &Path, args: &[&str]) -> (i32, String, String) {
    outcome(
        Command::new(BIN)
            .env("PSD2_CONSOLE_FREE_PORTS", "1")
            .env("PSD2_CONSOLE_HOME", home)
            .args(args)
            .output()
            .unwrap(),
    )
}

/// The arguments of one command line given as words separated by white space (for
/// arguments that hold no space themselves): `words("send accounts.list --no-wait")` is
/// `["send", "accounts.list", "--no-wait"]`, for [`run`] and [`run_headless`].
pub fn words(line: &str) -> Vec<&str> {
    line.split_whitespace().collect()
}

/// `psd2-console args` on the data dir `home` with no graphical session and no `BROWSER`
/// (`DISPLAY`, `WAYLAND_DISPLAY` and `BROWSER` removed), so no browser can open.
pub fn headless(home: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(BIN);
    c.env("PSD2_CONSOLE_HOME", home)
        .env("PSD2_CONSOLE_FREE_PORTS", "1")
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .env_remove("BROWSER")
        .args(args);
    c
}

/// Runs [`headless`] to the end.
pub fn run_headless(home: &Path, args: &[&str]) -> (i32, String, String) {
    outcome(headless(home, args).output().unwrap())
}

/// Runs the command `line` ([`words`]) headless ([`run_headless`]) on a new home and
/// asserts it exits 0. Returns the home (removed on drop), stdout and stderr.
pub fn run_ok_in_new_home(line: &str) -> (tempfile::TempDir, String, String) {
    let home = tempfile::tempdir().unwrap();
    let (code, out, err) = run_headless(home.path(), &words(line));
    assert_eq!(code, 0, "{err}");
    (home, out, err)
}

/// Runs `psd2-console args` on `home` (as [`run`] does) with its stdout a pipe whose reader
/// is already closed (`psd2-console ... | head -1` once `head` has gone). Returns the exit
/// code (`None` when killed by a signal) and stderr.
pub fn run_into_closed_pipe(home: &Path, args: &[&str]) -> (Option<i32>, String) {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = Command::new(BIN)
        .env("PSD2_CONSOLE_FREE_PORTS", "1")
        .env("PSD2_CONSOLE_HOME", home)
        .args(args)
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A child process (`sandbox serve`), killed and reaped on drop.
pub struct Server(pub Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Server {
    /// Stops the server as an operator does (SIGTERM) and waits for it to exit, so that
    /// everything it logged is written (`sandbox serve` writes its access-log lines in
    /// batches: a killed server may not have written the last ones).
    pub fn stop(mut self) {
        let pid = self.0.id().to_string();
        let _ = std::process::Command::new("kill")
            .args(["-TERM", &pid])
            .status();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while std::time::Instant::now() < deadline {
            if let Ok(Some(_)) = self.0.try_wait() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        panic!("the server did not stop within 60 s of SIGTERM");
    }
}

/// A TCP port on 127.0.0.1 that was free a moment ago.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Waits until something accepts connections on 127.0.0.1:`port`; panics after `patience`.
pub fn wait_listening(port: u16, patience: Duration) {
    let deadline = Instant::now() + patience;
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "sandbox serve did not start listening"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `psd2-console sandbox serve` with `args` on a free port of 127.0.0.1 (`--addr`), output
/// discarded, once it listens; returns it with its base URL `http://127.0.0.1:{port}`.
pub fn serve_with(args: &[&str]) -> (Server, String) {
    let port = free_port();
    let child = Command::new(BIN)
        .env("PSD2_CONSOLE_FREE_PORTS", "1")
        .args(["sandbox", "serve"])
        .args(args)
        .args(["--addr", &format!("127.0.0.1:{port}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start sandbox serve");
    let server = Server(child);
    wait_listening(port, Duration::from_secs(60));
    (server, format!("http://127.0.0.1:{port}"))
}

/// `psd2-console sandbox serve --in-memory` ([`serve_with`]).
pub fn serve_in_memory() -> (Server, String) {
    serve_with(&["--in-memory"])
}

/// A certificate from `cert new` (in `<home>/tpp-certs`) and a profile `name` targeting
/// `base_url` with it (roles PSP_AI and PSP_PI), in `<home>/config/profiles`.
pub fn served_profile(home: &Path, name: &str, base_url: &str) {
    let certs = home.join("tpp-certs");
    cert_new(&certs, "tpp");
    let dir = home.join("config/profiles");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("served.toml"),
        format!(
            "name = \"{name}\"\ntarget = \"{base_url}\"\ncertificate = \"{}\"\nkey = \"{}\"\nroles = [\"PSP_AI\", \"PSP_PI\"]\n",
            certs.join("tpp.pem").display(),
            certs.join("tpp.key").display()
        ),
    )
    .unwrap();
}

/// `psd2-console cert new --dir DIR --name NAME`: a test certificate `DIR/NAME.pem` and its
/// key `DIR/NAME.key` (panics with the command's stderr when it fails); returns its stdout.
pub fn cert_new(dir: &Path, name: &str) -> String {
    let out = Command::new(BIN)
        .env("PSD2_CONSOLE_FREE_PORTS", "1")
        .args(["cert", "new", "--dir"])
        .arg(dir)
        .args(["--name", name])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The lines a running command writes on stderr, read on a thread as they come.
pub struct StderrLines {
    rx: std::sync::mpsc::Receiver<String>,
    /// The lines read so far by [`StderrLines::sca_link`] and [`StderrLines::next`].
    pub seen: Vec<String>,
}

impl StderrLines {
    /// Takes `child`'s stderr (spawned with `Stdio::piped()`).
    pub fn of(child: &mut Child) -> StderrLines {
        use std::io::{BufRead, BufReader};
        let stderr = child.stderr.take().expect("stderr piped");
        let (tx, rx) = std::sync::mpsc::channel::<String>();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        StderrLines {
            rx,
            seen: Vec::new(),
        }
    }

    /// The next line (panics after a minute without one, with the lines seen).
    pub fn next(&mut self) -> String {
        let line = self
            .rx
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|_| panic!("no line on stderr; so far: {:?}", self.seen));
        self.seen.push(line.clone());
        line
    }

    /// Reads up to the `SCA needed: open <link>` line and answers the link.
    pub fn sca_link(&mut self) -> String {
        loop {
            if let Some(h) = self.next().strip_prefix("SCA needed: open ") {
                return h.to_string();
            }
        }
    }

    /// The lines written since, without waiting.
    pub fn rest(&self) -> Vec<String> {
        self.rx.try_iter().collect()
    }
}

/// Follows the redirect after SCA `to_tpp` to the command's callback listener (which must
/// answer 200), then waits for the command `child` to end.
pub async fn land_and_wait(to_tpp: &str, child: Child) -> Output {
    let landing = super::browser().get(to_tpp).send().await.unwrap();
    assert_eq!(landing.status(), 200);
    tokio::task::spawn_blocking(move || child.wait_with_output())
        .await
        .unwrap()
        .unwrap()
}
