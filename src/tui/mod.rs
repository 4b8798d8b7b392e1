//! The interactive console: a full-screen terminal UI over an [`Engine`].
//!
//! - [`App`] is the whole state, free of terminal and engine, with [`App::handle_key`] and
//!   [`App::render`], so screens are tested with ratatui's `TestBackend`.
//! - [`keymap::KEYMAP`] is the one table of keys; key handling and the help overlay both
//!   read it.
//! - [`Theme`] holds every colour.
//! - [`run`] owns the terminal and the event loop: terminal keys (read by a thread that
//!   blocks in `crossterm::event::read`), SCA callbacks from the redirect listener, finished
//!   sends and browser launches. It redraws only after one of these; there is no tick.

#[macro_use]
pub mod app;
mod app_editor;
mod app_input;
mod app_screens;
mod app_send;
pub(crate) mod body_editor;
pub(crate) mod catalogue;
mod component;
pub mod config;
mod deps;
pub(crate) mod error;
pub mod flow_view;
pub(crate) mod form;
pub(crate) mod highlight;
pub mod history;
pub(crate) mod history_view;
pub(crate) mod jq;
pub mod keymap;
pub(crate) mod lesson;
mod mask;
pub mod monitor;
pub(crate) mod mouse;
pub(crate) mod overlay;
pub(crate) mod palette;
pub(crate) mod panes;
pub(crate) mod presenter;
pub(crate) mod profiles;
pub(crate) mod profiles_view;
pub mod qr;
pub mod release;
pub mod response;
pub(crate) mod response_links;
mod response_pane;
pub(crate) mod status_line;
mod text;
pub mod theme;
mod ui;

use std::io::{BufWriter, Stdout, stdout};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture, Event,
    KeyEventKind, MouseEventKind,
};
use crossterm::terminal::{
    Clear, ClearType, EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use crossterm::{cursor, execute};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use crate::client::{Engine, PreparedRequest};
use crate::profile::ProfileSet;

pub use app::{
    Action, App, Focus, Level, Message, Mode, Preview, RequestSpec, ResponseState, ResponseView,
    ScaPrompt, Screen, StatusInfo, mask_request,
};
pub use error::{BrowserError, SendError};
pub use theme::Theme;

/// Environment variable choosing the theme at start (`dark`, `light`, `high-contrast` or a
/// user theme's name); it wins over the config file's `theme` ([`config`]).
pub const THEME_ENV: &str = "PSD2_CONSOLE_THEME";

/// Set by the panic hook, so the loop stops instead of drawing on a restored terminal.
static PANICKED: AtomicBool = AtomicBool::new(false);

/// Puts the terminal back: leaves the alternate screen, shows the cursor, ends raw mode.
/// Safe to call more than once.
fn restore_terminal() {
    let _ = execute!(
        stdout(),
        DisableBracketedPaste,
        DisableMouseCapture,
        LeaveAlternateScreen,
        cursor::Show
    );
    let _ = disable_raw_mode();
}

/// The console's terminal: ratatui over crossterm, writing through a buffer of
/// [`FRAME_BUFFER_BYTES`] that ratatui flushes once at the end of every draw.
type ConsoleTerminal = Terminal<CrosstermBackend<BufWriter<Stdout>>>;

/// Bytes buffered between the console's frames and the terminal: a full 200×50 frame is
/// 20–40 KB of text and escape sequences, which `Stdout`'s own 1 KiB buffer wrote in one
/// `write(2)` per KiB (13 for the first frame of the main screen); with this buffer a frame
/// is one write (issue 23, console start).
const FRAME_BUFFER_BYTES: usize = 64 * 1024;

/// Raw mode + alternate screen for as long as it lives; restored on drop (normal exit,
/// error, or unwinding). The terminal is `None` only inside `drop`.
struct TerminalGuard {
    terminal: Option<ConsoleTerminal>,
}

impl TerminalGuard {
    fn enter() -> anyhow::Result<Self> {
        enable_raw_mode()
            .map_err(|e| anyhow::anyhow!("cannot switch the terminal to raw mode: {e}"))?;
        if let Err(e) = execute!(
            stdout(),
            EnterAlternateScreen,
            cursor::Hide,
            EnableBracketedPaste,
            EnableMouseCapture,
            // The screen cleared here rather than with `Terminal::clear`, which first asks
            // the terminal where its cursor is (`ESC [6n`) and waits for the answer: a round
            // trip through the terminal (tmux: its server) before the first frame (issue 23).
            // A new `Terminal`'s buffers are blank, as the cleared screen is: its first draw
            // writes every cell that is not blank.
            Clear(ClearType::All),
            cursor::MoveTo(0, 0)
        ) {
            restore_terminal();
            anyhow::bail!("cannot enter the alternate screen: {e}");
        }
        match Terminal::new(CrosstermBackend::new(BufWriter::with_capacity(
            FRAME_BUFFER_BYTES,
            stdout(),
        ))) {
            Ok(terminal) => Ok(TerminalGuard {
                terminal: Some(terminal),
            }),
            Err(e) => {
                restore_terminal();
                anyhow::bail!("cannot set up the terminal: {e}")
            }
        }
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        if let Some(mut terminal) = self.terminal.take() {
            if PANICKED.load(Ordering::SeqCst) {
                // A panic may have left part of a frame in the buffer; the hook restored the
                // terminal already. Forgotten, not dropped: dropping would write those bytes
                // (and ratatui's cursor sequence) onto the restored screen after the panic's
                // message. The process is ending; the memory goes with it.
                std::mem::forget(terminal);
            } else {
                // Whatever is buffered lands on the alternate screen, before it is left.
                let _ = std::io::Write::flush(terminal.backend_mut());
                drop(terminal);
            }
        }
        restore_terminal();
    }
}

type PanicHook = Box<dyn Fn(&std::panic::PanicHookInfo<'_>) + Sync + Send + 'static>;

/// Installs a panic hook that restores the terminal before the previous hook prints, and
/// puts the previous hook back when dropped.
struct PanicHookGuard {
    previous: Arc<PanicHook>,
}

impl PanicHookGuard {
    fn install() -> Self {
        let previous: Arc<PanicHook> = Arc::new(std::panic::take_hook());
        let prev = previous.clone();
        std::panic::set_hook(Box::new(move |info| {
            PANICKED.store(true, Ordering::SeqCst);
            restore_terminal();
            prev(info);
        }));
        PanicHookGuard { previous }
    }
}

impl Drop for PanicHookGuard {
    fn drop(&mut self) {
        if std::thread::panicking() {
            return;
        }
        let _ = std::panic::take_hook();
        let prev = self.previous.clone();
        std::panic::set_hook(Box::new(move |info| prev(info)));
    }
}

/// Runs the console on `engine` until the user quits: enters raw mode and the alternate
/// screen, and always restores the terminal (on quit, on error and on panic). `profiles`
/// feeds the profile picker (`p`) and the report of profile files that failed to load.
///
/// Errors: the terminal cannot be set up or drawn to, or a panic happened inside the
/// console.
pub async fn run(engine: Engine, profiles: ProfileSet) -> anyhow::Result<()> {
    run_with(engine, profiles, RunOptions::default()).await
}

/// How the console starts (command-line options of the console).
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Start in presenter mode (`--presenter`, [`presenter`]).
    pub presenter: bool,
    /// Start giving this lesson at its first step (`psd2-console --lesson NAME`,
    /// [`crate::lessons`]).
    pub lesson: Option<crate::lessons::Lesson>,
}

/// [`run`] with `options`.
///
/// Errors: as [`run`].
pub async fn run_with(
    engine: Engine,
    profiles: ProfileSet,
    options: RunOptions,
) -> anyhow::Result<()> {
    let hook = PanicHookGuard::install();
    let mut guard = TerminalGuard::enter()?;
    let mut engine = engine;
    let result = match guard.terminal.as_mut() {
        Some(terminal) => event_loop(terminal, &mut engine, &profiles, options).await,
        None => Err(anyhow::anyhow!("the terminal is gone")),
    };
    drop(guard);
    drop(hook);
    engine.shutdown().await;
    result
}

/// What finished in the background.
enum Done {
    /// A send finished: the view, and the SCA flow its answer started (to arm).
    Sent(Result<(Box<ResponseView>, Option<crate::client::engine::PendingSca>), SendError>),
    /// The status read after an SCA finished ([`Action::ReadStatus`]).
    StatusRead(Result<(crate::client::engine::StatusAfterSca, Box<ResponseView>), SendError>),
    Browser(Result<(), BrowserError>),
    /// Rows of the history screen for a search (see [`history::load_async`]).
    History(String, Result<history::HistoryPage, history::HistoryError>),
    /// The whole exchange read for the history screen's detail ([`history::load_entry_async`]).
    HistoryEntry(
        i64,
        Result<Option<crate::client::history::HistoryEntry>, history::HistoryError>,
    ),
    /// A jq filter finished ([`response::spawn_filter`]).
    Filtered(Option<response::FilterDone>),
    /// The latest flow read from the history for the flow screen.
    Flow(Box<flow_view::FlowData>),
    /// The browser-step stream of the embedded sandbox opened (or why not).
    Steps(Result<crate::flow::live::StepStream, String>),
    /// A request of the sandbox monitor answered ([`crate::client::monitor::perform`]).
    Monitor(Result<crate::client::monitor::SandboxState, String>),
    /// A profile started ([`Runner::switch_profile`]): its name, the engine (or why not),
    /// and what to do once it is active.
    Started(
        String,
        Result<Box<Engine>, crate::client::ClientError>,
        Option<Action>,
    ),
    /// The network of the engine the console started with ([`Engine::start_offline`])
    /// started after the first frame, or why not ([`Runner::network_started`]).
    NetworkStarted(Result<crate::client::engine::RestartedNetwork, crate::client::ClientError>),
    /// The active profile's network started again after profile `.0` could not start
    /// (`.1`, why): [`Runner::network_restarted`].
    Restarted(
        String,
        crate::client::ClientError,
        Result<crate::client::engine::RestartedNetwork, crate::client::ClientError>,
    ),
}

async fn recv_opt<T>(rx: &mut Option<mpsc::UnboundedReceiver<T>>) -> Option<T> {
    match rx {
        Some(r) => r.recv().await,
        None => std::future::pending().await,
    }
}

fn spawn_input_thread() -> mpsc::UnboundedReceiver<std::io::Result<Event>> {
    let (tx, rx) = mpsc::unbounded_channel();
    let spawned = std::thread::Builder::new()
        .name("terminal-input".into())
        .spawn(move || {
            loop {
                let ev = crossterm::event::read();
                let failed = ev.is_err();
                if tx.send(ev).is_err() || failed {
                    break;
                }
            }
        });
    if let Err(e) = spawned {
        let (tx2, rx2) = mpsc::unbounded_channel();
        let _ = tx2.send(Err(e));
        return rx2;
    }
    rx
}

/// SIGTERM, SIGHUP (terminal closed) and SIGINT end the console like `q`, so the terminal
/// is restored.
struct StopSignals {
    #[cfg(unix)]
    signals: [Option<tokio::signal::unix::Signal>; 3],
}

impl StopSignals {
    fn new() -> Self {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            StopSignals {
                signals: [
                    signal(SignalKind::terminate()).ok(),
                    signal(SignalKind::hangup()).ok(),
                    signal(SignalKind::interrupt()).ok(),
                ],
            }
        }
        #[cfg(not(unix))]
        StopSignals {}
    }

    async fn recv(&mut self) {
        #[cfg(unix)]
        {
            async fn one(s: &mut Option<tokio::signal::unix::Signal>) {
                match s {
                    Some(s) => {
                        s.recv().await;
                    }
                    None => std::future::pending().await,
                }
            }
            let [a, b, c] = &mut self.signals;
            tokio::select! {
                _ = one(a) => {}
                _ = one(b) => {}
                _ = one(c) => {}
            }
        }
        #[cfg(not(unix))]
        std::future::pending::<()>().await
    }
}

/// Environment variable naming a file where the console writes, once its first frame is
/// on the terminal, the wall-clock time in nanoseconds since the Unix epoch (for the
/// start-to-first-frame benchmark, `benches/tui.rs`).
pub const TRACE_FIRST_FRAME_ENV: &str = "PSD2_CONSOLE_TRACE_FIRST_FRAME";

fn write_first_frame_trace(path: &std::path::Path) {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let _ = crate::fsutil::write_atomic(path, nanos.to_string().as_bytes(), false);
}

/// The status line while the embedded sandbox starts after the first frame.
pub const SANDBOX_STARTING: &str = "Embedded sandbox starting…";

/// How many waiting terminal events are handled before one redraw.
const DRAIN_MAX: usize = 256;

async fn event_loop(
    terminal: &mut ConsoleTerminal,
    engine: &mut Engine,
    profiles: &ProfileSet,
    options: RunOptions,
) -> anyhow::Result<()> {
    let mut app = App::new(StatusInfo::from_engine(engine));
    app.set_profiles(profiles);
    if engine.history.is_none()
        && let Some(why) = &engine.history_error
    {
        app.set_message(
            Level::Warning,
            format!(
                "Exchanges are not recorded: the history is not available ({why}); ! shows it again"
            ),
        );
    }
    app.apply_setup(config::load(&engine.paths));
    if let Some(lesson) = options.lesson {
        app.start_lesson(lesson);
    }
    if options.presenter {
        app.set_presenter(true);
    }
    let mut runner = Runner {
        callbacks: engine.take_callback_receiver(),
        engine,
        // The runner's own copy: the profiles screen saves and deletes, then it is read again.
        profiles: profiles.clone(),
        tasks: JoinSet::new(),
        switching: None,
        restarting: false,
        starting: false,
        deferred: Vec::new(),
        steps: None,
        monitor_feed: None,
        monitor_stream: JoinSet::new(),
        shutdowns: JoinSet::new(),
        history_reading: false,
        history_again: false,
        history_warm: crate::client::history::HistoryWarmer::default(),
    };
    let mut input = spawn_input_thread();
    let mut stop = StopSignals::new();
    let mut trace_first_frame = std::env::var_os(TRACE_FIRST_FRAME_ENV);
    let mut redraw = true;
    let mut first_frame = true;
    let result: anyhow::Result<()> = async {
        loop {
            if redraw {
                terminal.draw(|f| app.render(f))?;
                if let Some(path) = trace_first_frame.take() {
                    write_first_frame_trace(std::path::Path::new(&path));
                }
                if first_frame {
                    first_frame = false;
                    tracing::info!("console: first frame drawn");
                    // Only now the embedded sandbox and the callback listener (issue 23).
                    runner.start_network(&mut app);
                    runner.warm_up_tls();
                }
            }
            redraw = true;
            // The preview is signed after a frame is on screen: the first signature of a
            // process seeds aws-lc's random generator (CPU jitter entropy, about 30 ms), which
            // would otherwise delay the first frame. The pane shows "Preparing …" meanwhile.
            if !runner.waiting_for_engine()
                && let Some(spec) = app.take_prepare_request()
            {
                let r = runner
                    .engine
                    .prepare(spec.op, &spec.params, spec.body.as_deref());
                app.set_preview(r);
                continue;
            }
            tokio::select! {
                () = stop.recv() => return Ok(()),
                ev = input.recv() => {
                    redraw = runner.terminal_event(&mut app, ev)?;
                    // Drain what else is waiting (a paste burst, held keys, wheel scrolling)
                    // before the one redraw.
                    for _ in 0..DRAIN_MAX {
                        if app.should_quit() {
                            break;
                        }
                        match input.try_recv() {
                            Ok(ev) => redraw |= runner.terminal_event(&mut app, Some(ev))?,
                            Err(_) => break,
                        }
                    }
                }
                step = async {
                    match &mut runner.steps {
                        Some(s) => s.recv().await,
                        None => std::future::pending().await,
                    }
                } => match step {
                    Some(step) => runner.browser_step(&mut app, step),
                    None => runner.steps = None,
                },
                // The flow screen's clocks move each second while it is shown (no tick elsewhere).
                () = tokio::time::sleep(std::time::Duration::from_secs(1)), if app.screen() == Screen::Flow => {
                    app.set_flow_clock(crate::cert::unix_seconds(runner.engine.now()), runner.engine.session.clone());
                }
                cb = recv_opt(&mut runner.callbacks) => match cb {
                    Some(cb) => {
                        // Routed to the SCA it answers (tpp-session-id and sca-ref).
                        let applied = runner.engine.apply_sca_callback(&cb);
                        let action = app.sca_applied(&cb, applied, StatusInfo::from_engine(runner.engine));
                        runner.perform(&mut app, action);
                        runner.refresh_flow(&app);
                    }
                    None => {
                        runner.callbacks = None;
                        app.set_message(Level::Warning, "The SCA callback listener stopped");
                    }
                },
                feed = recv_opt(&mut runner.monitor_feed) => match feed {
                    Some(feed) => {
                        let action = app.monitor_feed(feed);
                        runner.perform(&mut app, action);
                    }
                    None => runner.monitor_feed = None,
                },
                Some(done) = runner.tasks.join_next(), if !runner.tasks.is_empty() => match done {
                    Ok(done) => runner.finished(&mut app, done),
                    Err(e) => app.finish_send(Err(SendError::Task(e))),
                },
            }
            if PANICKED.load(Ordering::SeqCst) {
                anyhow::bail!("the console stopped after an internal error (see above)");
            }
            if app.should_quit() {
                return Ok(());
            }
        }
    }
    .await;
    // Engines replaced by a profile switch finish stopping before the console returns.
    while runner.shutdowns.join_next().await.is_some() {}
    result
}

/// Performs what the [`App`] asks for ([`Action`]) on the engine, off the UI task where it
/// takes time, and feeds the outcomes back ([`Done`]).
struct Runner<'e> {
    engine: &'e mut Engine,
    callbacks: Option<mpsc::UnboundedReceiver<crate::xs2a::redirect::ScaCallback>>,
    profiles: ProfileSet,
    tasks: JoinSet<Done>,
    /// The profile being started, while it starts.
    switching: Option<String>,
    /// The active profile's sandbox and listener are starting again (a profile switch
    /// failed, [`Done::Restarted`]): actions that need the engine wait as for a switch.
    restarting: bool,
    /// The network of the engine the console started with is starting (after the first
    /// frame, [`Runner::start_network`]): actions that need the engine wait as for a switch.
    starting: bool,
    /// Actions that need the engine, asked for while a profile was starting: performed,
    /// in order, once it is active (or failed to start).
    deferred: Vec<Action>,
    /// The PSU browser's steps on the embedded sandbox's SCA pages, while subscribed.
    steps: Option<crate::flow::live::StepStream>,
    /// What the sandbox monitor's event stream task sends ([`crate::client::monitor::follow`]).
    monitor_feed: Option<mpsc::UnboundedReceiver<crate::client::monitor::MonitorFeed>>,
    /// The event stream task (aborted when the profile changes or the console ends).
    monitor_stream: JoinSet<()>,
    /// Shutdowns of engines replaced by a profile switch, spawned so the loop never waits
    /// for one ([`Runner::profile_started`]); awaited when the console ends
    /// ([`Runner::finish_shutdowns`]).
    shutdowns: JoinSet<()>,
    /// A read of the history screen's rows is under way ([`Action::LoadHistory`]).
    history_reading: bool,
    /// The search changed while a read was under way: one more read, of the search as it
    /// is then, follows it (reads of every intermediate keystroke are skipped, not queued).
    history_again: bool,
    /// The history file's warm-up into the page cache while the History screen is open
    /// ([`crate::client::history::HistoryWarmer`]).
    history_warm: crate::client::history::HistoryWarmer,
}

impl Runner<'_> {
    /// Whether actions that need the engine wait ([`Runner::deferred`]): a profile is
    /// starting, or the active one's network is (re)starting.
    fn waiting_for_engine(&self) -> bool {
        self.switching.is_some() || self.restarting || self.starting
    }

    /// Starts the engine's local ASPSP (the embedded sandbox) and callback listener beside
    /// the loop when the console was started without them ([`Engine::start_offline`]):
    /// called once the first frame is drawn. What needs the engine meanwhile (a send, the
    /// monitor, the preview's signature at the sandbox's clock) waits for it
    /// ([`Done::NetworkStarted`]). An engine started with its network (tests, [`run`]) only
    /// subscribes to the browser's steps.
    fn start_network(&mut self, app: &mut App) {
        if self.engine.network_started() {
            self.watch_browser_steps();
            return;
        }
        self.starting = true;
        // A message of the start (the history not available) stays: it matters more.
        if self.engine.profile.target == crate::profile::Target::Embedded && app.message().is_none()
        {
            app.set_message(Level::Info, SANDBOX_STARTING);
        }
        let start = self
            .engine
            .network_restart(crate::embedded::EmbeddedSandbox);
        self.tasks
            .spawn(async move { Done::NetworkStarted(start.await) });
    }

    /// For a profile whose target is HTTPS, the platform's roots of its client are read
    /// beside the loop ([`crate::client::tls_session::TlsRecorder::warm_up_verifier`]), so
    /// its first send does not wait for them; the start does not either (the client reads
    /// them at its first use, issue 23). A plain-HTTP target (the embedded sandbox without
    /// `sandbox_tls`) never reads them.
    fn warm_up_tls(&self) {
        if self.engine.base_url.starts_with("https:") {
            let tls = self.engine.tls.clone();
            drop(tokio::task::spawn_blocking(move || tls.warm_up_verifier()));
        }
    }

    /// The network started after the first frame (or not): the engine takes it, the status
    /// line names its address, and what waited for it is performed (a send that failed to
    /// wait would fail as the sandbox's own error says).
    fn network_started(
        &mut self,
        app: &mut App,
        started: Result<crate::client::engine::RestartedNetwork, crate::client::ClientError>,
    ) {
        self.starting = false;
        match started {
            Ok(network) => {
                self.engine.adopt_network(network);
                tracing::info!(base_url = %self.engine.base_url, "console: network started");
                // An embedded sandbox served over TLS (`sandbox_tls`) has its https address
                // only now: its client's roots are read beside the loop from here on.
                self.warm_up_tls();
                self.callbacks = self.engine.take_callback_receiver();
                self.watch_browser_steps();
                app.network_started(StatusInfo::from_engine(self.engine), SANDBOX_STARTING);
                if let Some(e) = &self.engine.listener_error {
                    app.set_message(
                        Level::Warning,
                        format!("The SCA callback listener is not running: {e}"),
                    );
                }
            }
            Err(e) => {
                tracing::warn!("console: network not started: {e}");
                app.set_message(Level::Error, format!("Not started: {e}"));
            }
        }
        self.perform_deferred(app);
    }

    /// For an embedded profile, subscribes to the sandbox's event stream in the background
    /// for the browser's steps on the SCA pages ([`crate::flow::live`]); remote banks show
    /// only what the console sees.
    fn watch_browser_steps(&mut self) {
        self.steps = None;
        if self.engine.profile.target != crate::profile::Target::Embedded {
            return;
        }
        let source = crate::flow::live::StepSource::of(self.engine);
        self.tasks
            .spawn(async move { Done::Steps(crate::flow::live::subscribe(source).await) });
    }

    /// A browser step arrived: stored with the history (so `psd2-console flow` shows it
    /// later) and drawn on the flow screen.
    fn browser_step(&mut self, app: &mut App, step: crate::flow::BrowserStep) {
        if let Some(h) = &self.engine.history
            && let Ok(h) = h.lock()
            && let Err(e) = h.record_browser_step(&step)
        {
            tracing::warn!("browser step not stored in the history: {e}");
        }
        app.add_browser_step(step);
        // A read of the flow already under way may have missed it: read again.
        self.refresh_flow(app);
    }

    /// Reads the flow again when the flow screen is shown (after a send or a callback).
    fn refresh_flow(&mut self, app: &App) {
        if app.screen() == Screen::Flow {
            self.load_flow();
        }
    }

    /// Reads the latest flow from the history off the UI task ([`Done::Flow`]).
    fn load_flow(&mut self) {
        let engine = &*self.engine;
        let history = engine.history.clone();
        let why = engine.history_error.clone();
        let session = engine.session.clone();
        let now = crate::cert::unix_seconds(engine.now());
        let embedded = engine.profile.target == crate::profile::Target::Embedded;
        self.tasks.spawn(async move {
            let data = tokio::task::spawn_blocking(move || {
                flow_view::read_flow(history, why, session, now, embedded)
            })
            .await
            .unwrap_or_else(|e| flow_view::FlowData {
                error: Some(e.to_string()),
                ..Default::default()
            });
            Done::Flow(Box::new(data))
        });
    }

    /// Handles one terminal event; false when nothing changed on screen (pointer moves).
    ///
    /// Errors: the terminal cannot be read.
    fn terminal_event(
        &mut self,
        app: &mut App,
        ev: Option<std::io::Result<Event>>,
    ) -> anyhow::Result<bool> {
        match ev {
            Some(Ok(Event::Key(k))) if k.kind != KeyEventKind::Release => {
                let action = app.handle_key(k);
                self.perform(app, action);
            }
            Some(Ok(Event::Paste(text))) => app.handle_paste(&text),
            // Pointer moves without a button change nothing: no redraw.
            Some(Ok(Event::Mouse(m))) if m.kind == MouseEventKind::Moved => return Ok(false),
            Some(Ok(Event::Mouse(m))) => {
                let action = app.handle_mouse(m);
                self.perform(app, action);
            }
            Some(Ok(_)) => {} // resize and others: just redraw
            Some(Err(e)) => anyhow::bail!("reading the terminal failed: {e}"),
            None => anyhow::bail!("the terminal input ended"),
        }
        if app.screen() != Screen::History {
            // The History screen closed (a key or a click): its warm-up stops.
            self.history_warm.closed();
        }
        Ok(true)
    }

    /// Feeds back what finished in the background.
    fn finished(&mut self, app: &mut App, done: Done) {
        match done {
            Done::Sent(r) => {
                // A scaRedirect starts a flow: only then does the listener take a callback
                // (for this flow's tpp-session-id and sca-ref).
                let (r, flow) = match r {
                    Ok((v, flow)) => (Ok(*v), flow),
                    Err(e) => (Err(e), None),
                };
                if let Some(flow) = &flow {
                    self.engine.arm(flow.clone());
                }
                app.finish_send(r);
                if let Some(flow) = flow {
                    app.sca_armed(flow);
                }
                self.refresh_flow(app);
            }
            Done::StatusRead(r) => {
                app.status_read(r.map(|(st, v)| (st, *v)));
                self.refresh_flow(app);
            }
            Done::Browser(r) => app.browser_opened(r),
            Done::History(q, r) => {
                self.history_reading = false;
                // The history file's warm-up, once the screen's read is done (it would queue
                // the open's own read behind its first chunk): it runs beside the next reads,
                // on no connection and no lock (`HistoryWarmer::opened` skips it when one ran
                // within 30 s or the screen closed meanwhile).
                if app.screen() == Screen::History && self.engine.history.is_some() {
                    self.history_warm.opened(&self.engine.paths.history_file());
                }
                let next = app.set_history(&q, r);
                if std::mem::take(&mut self.history_again) {
                    self.perform(app, Action::LoadHistory);
                } else {
                    self.perform(app, next);
                }
            }
            Done::HistoryEntry(id, r) => app.set_history_entry(id, r),
            Done::Filtered(Some(r)) => app.filter_finished(r),
            Done::Filtered(None) => {
                app.set_message(Level::Error, "The jq filter stopped unexpectedly")
            }
            Done::Monitor(r) => {
                let again = app.monitor_done(r);
                self.perform(app, again);
            }
            Done::Started(name, r, then) => self.profile_started(app, name, r, then),
            Done::Restarted(name, why, r) => self.network_restarted(app, name, why, r),
            Done::NetworkStarted(r) => self.network_started(app, r),
            Done::Flow(data) => app.set_flow(*data),
            Done::Steps(Ok(rx)) => self.steps = Some(rx),
            Done::Steps(Err(e)) => {
                tracing::warn!("the sandbox's event stream is not available: {e}");
                app.log_problem(Message {
                    level: Level::Warning,
                    text: format!(
                        "The flow screen cannot show the browser's SCA steps (event stream: {e})"
                    ),
                });
            }
        }
    }

    /// Whether `action` needs the engine as it is after a profile switch in progress.
    fn needs_engine(action: &Action) -> bool {
        !matches!(
            action,
            Action::None
                | Action::Quit
                | Action::Copy(_)
                | Action::RunFilter(_)
                | Action::OpenBrowser(_)
                | Action::ImportFile(_)
        )
    }

    fn perform(&mut self, app: &mut App, action: Action) {
        // Reading the history, the flow or the lessons needs no network: only a switch
        // (which replaces the engine) makes them wait.
        let reads_only = matches!(
            action,
            Action::LoadHistory
                | Action::LoadHistoryEntry(_)
                | Action::LoadFlow
                | Action::LoadLessons
        );
        let waits = (self.switching.is_some() || self.restarting) || (self.starting && !reads_only);
        if waits && Self::needs_engine(&action) {
            self.deferred.push(action);
            return;
        }
        let engine = &mut *self.engine;
        match action {
            Action::None | Action::Quit => {}
            Action::Copy(text) => {
                let copy =
                    crossterm::clipboard::CopyToClipboard::to_clipboard_from(text.as_bytes());
                if let Err(e) = execute!(stdout(), copy) {
                    app.set_message(Level::Error, format!("Copy failed: {e}"));
                }
            }
            Action::RunFilter(job) => {
                let rx = response::spawn_filter(job);
                self.tasks
                    .spawn(async move { Done::Filtered(rx.await.ok()) });
            }
            Action::LoadProfiles => {
                self.profiles = ProfileSet::load(Some(&engine.paths.profiles_dir()));
                app.set_profile_set(self.profiles.clone(), &engine.paths);
                if let Some(name) = app.take_apply_after_load() {
                    self.switch_profile(app, name, None);
                }
            }
            Action::LoadHistory => {
                if self.history_reading {
                    self.history_again = true;
                    return;
                }
                self.history_reading = true;
                let (h, why) = (engine.history.clone(), engine.history_error.clone());
                let query = app.history_query().to_string();
                let keep = app.highlighted_exchange().map(|e| e.id);
                self.tasks.spawn(async move {
                    let (q, rows) = history::load_async(h, why, query, keep).await;
                    Done::History(q, rows)
                });
            }
            Action::LoadHistoryEntry(id) => {
                let (h, why) = (engine.history.clone(), engine.history_error.clone());
                self.tasks.spawn(async move {
                    let (id, entry) = history::load_entry_async(h, why, id).await;
                    Done::HistoryEntry(id, entry)
                });
            }
            Action::ResendHistoryAs(id, name) => {
                self.switch_profile(app, name, Some(Action::ResendHistory(id)))
            }
            Action::ResendHistory(id) => {
                let Some(entry) = app
                    .history_entry(id)
                    .cloned()
                    .or_else(|| history::read_entry(engine.history.as_ref(), id))
                else {
                    return;
                };
                match history::resend_request(engine, &entry) {
                    Ok((req, title)) => {
                        self.send(app, req, title);
                        app.resend_started(&format!("#{id} ({title})"));
                    }
                    Err(e) => app.set_message(Level::Error, format!("#{id} not re-sent: {e}")),
                }
            }
            Action::ExportHistoryCurl(id) => {
                if let Some(entry) = app
                    .history_entry(id)
                    .cloned()
                    .or_else(|| history::read_entry(engine.history.as_ref(), id))
                {
                    app.curl_exported(id, history::export_exchange(engine, &entry));
                }
            }
            Action::ImportFile(path) => app.set_imported(&path, history::import_path(&path)),
            Action::SendImported(i) => {
                let Some((req, unknown)) = app.imported_request(i) else {
                    return;
                };
                match history::imported_request_prepared(engine, &req) {
                    Ok(prepared) => {
                        self.send(app, prepared, history::IMPORTED_TITLE);
                        app.resend_started(&req.name);
                        if !unknown.is_empty() {
                            app.set_message(
                                Level::Warning,
                                format!(
                                    "Sending {} with variables without a value: {}",
                                    req.name,
                                    unknown.join(", ")
                                ),
                            );
                        }
                    }
                    Err(e) => app.set_message(Level::Error, format!("{} not sent: {e}", req.name)),
                }
            }
            Action::Send => {
                let spec = app.request_spec();
                let body = match spec.body.as_deref() {
                    Some(t) => crate::client::BodyInput::Json(t),
                    None => crate::client::BodyInput::Default,
                };
                // As the `send` command: the TPP-Redirect-URI names this request's SCA.
                match engine.prepare_to_send(spec.op, &spec.params, body) {
                    Ok(req) => self.send(app, req, spec.op.title),
                    Err(e) => app.set_message(
                        Level::Error,
                        format!(
                            "Not sent: {} (press e to edit the parameters)",
                            app_send::humanize(&e.to_string())
                        ),
                    ),
                }
            }
            Action::ExportCode => {
                let spec = app.request_spec();
                let result = engine
                    .prepare(spec.op, &spec.params, spec.body.as_deref())
                    .map_err(history::HistoryError::from)
                    .and_then(|req| history::export_request(engine, &req, spec.op.title));
                app.request_exported(spec.op.title, result);
            }
            Action::OpenBrowser(url) => {
                self.tasks.spawn(async move {
                    let r =
                        tokio::task::spawn_blocking(move || crate::redirect::open_browser(&url))
                            .await
                            .unwrap_or_else(|e| Err(BrowserError::Task(e)));
                    Done::Browser(r)
                });
            }
            Action::ResetSession => match engine.reset_session() {
                Ok(()) => app.session_reset(StatusInfo::from_engine(engine)),
                Err(e) => app.set_message(Level::Error, format!("Session reset failed: {e}")),
            },
            Action::SwitchProfile(name) => self.switch_profile(app, name, None),
            Action::LoadFlow => self.load_flow(),
            Action::LoadLessons => app.set_lessons(crate::lessons::LessonSet::load(Some(
                &crate::lessons::lessons_dir(&engine.paths),
            ))),
            Action::AbandonSca(flow) => {
                engine.abandon_sca(&flow);
            }
            Action::ReadStatus(flow) => match engine.prepare_status_read(&flow) {
                Ok(req) => {
                    app.begin_send(req.clone());
                    let sender = engine.sender();
                    self.tasks.spawn(async move {
                        Done::StatusRead(read_status_and_view(sender, *flow, req).await)
                    });
                }
                Err(e) => app.status_read(Err(SendError::Client(e))),
            },
            Action::MonitorStart => {
                if !engine.profile.target.is_local() {
                    app.monitor_done(Err(format!(
                        "profile {} targets a remote bank: the monitor needs the embedded sandbox or a local `sandbox serve`",
                        engine.profile.name
                    )));
                    return;
                }
                let admin = crate::client::sandbox_admin::SandboxAdmin::for_engine(engine);
                let now = engine.now();
                self.stop_monitor();
                let (tx, rx) = mpsc::unbounded_channel();
                self.monitor_feed = Some(rx);
                self.monitor_stream
                    .spawn(crate::client::monitor::follow(admin, now, tx));
            }
            Action::Monitor(request) => {
                let admin = crate::client::sandbox_admin::SandboxAdmin::for_engine(engine);
                let now = engine.now();
                self.tasks.spawn(async move {
                    let r = crate::client::monitor::perform(&admin, request, now).await;
                    Done::Monitor(r.map_err(|e| e.to_string()))
                });
            }
        }
    }

    /// Stops following the sandbox's event stream (before its sandbox stops: an open stream
    /// would hold the sandbox's shutdown).
    fn stop_monitor(&mut self) {
        self.monitor_stream.abort_all();
        self.monitor_feed = None;
    }

    /// The one way a request leaves: the request and response panes show it as sent, and a
    /// task sends it with the active profile, records it in the history and answers
    /// [`Done::Sent`].
    fn send(&mut self, app: &mut App, req: PreparedRequest, title: &'static str) {
        app.begin_send(req.clone());
        let sender = self.engine.sender();
        self.tasks
            .spawn(async move { Done::Sent(send_and_view(sender, req, title).await) });
    }

    /// Starts profile `name` (from the runner's profiles) in the background; the loop keeps
    /// drawing and taking keys meanwhile, and `then` is performed once it is active.
    fn switch_profile(&mut self, app: &mut App, name: String, then: Option<Action>) {
        let Some(profile) = self.profiles.get(&name).cloned() else {
            app.set_message(Level::Error, format!("No profile called {name}"));
            return;
        };
        let paths = self.engine.paths.clone();
        self.switching = Some(name.clone());
        // The ports are fixed (`sandbox_port`, `callback_port`): the active profile's sandbox
        // and listener stop first, so the next profile can listen on the same ones.
        let old_network = self.engine.take_network();
        self.callbacks = None;
        self.tasks.spawn(async move {
            old_network.stop().await;
            let r = crate::embedded::start_engine(profile, paths)
                .await
                .map(Box::new);
            Done::Started(name, r, then)
        });
    }

    /// Makes the started profile the active one (the old engine is shut down), then
    /// performs what waited for it. When it could not start, the active profile's sandbox
    /// and listener start again in a spawned task ([`Done::Restarted`]); what waits for
    /// the engine waits for that.
    fn profile_started(
        &mut self,
        app: &mut App,
        name: String,
        started: Result<Box<Engine>, crate::client::ClientError>,
        then: Option<Action>,
    ) {
        self.switching = None;
        match started {
            Ok(new) => {
                // The old sandbox's event stream closes first, so its shutdown does not wait.
                self.steps = None;
                self.stop_monitor();
                let old = std::mem::replace(&mut *self.engine, *new);
                // Its ports are free already (the switch stopped its network first); what is
                // left to stop runs beside the loop, which keeps drawing and taking keys.
                self.shutdowns.spawn(old.shutdown());
                self.callbacks = self.engine.take_callback_receiver();
                self.watch_browser_steps();
                self.warm_up_tls();
                app.profile_switched(StatusInfo::from_engine(self.engine));
                if let Some(e) = &self.engine.listener_error {
                    app.set_message(
                        Level::Warning,
                        format!("Profile {name} is active, but the SCA callback listener is not running: {e}"),
                    );
                }
                let monitor = app.monitor_restart();
                self.perform(app, monitor);
                if let Some(then) = then {
                    self.perform(app, then);
                }
            }
            Err(e) => {
                // The active profile goes on: its sandbox and listener start again, beside
                // the loop, which keeps drawing and taking keys.
                self.restarting = true;
                let restart = self
                    .engine
                    .network_restart(crate::embedded::EmbeddedSandbox);
                self.tasks
                    .spawn(async move { Done::Restarted(name, e, restart.await) });
                return;
            }
        }
        self.perform_deferred(app);
    }

    /// The active profile's sandbox and listener started again (or not) after profile
    /// `name` could not start (`why`); then what waited for the engine is performed.
    fn network_restarted(
        &mut self,
        app: &mut App,
        name: String,
        why: crate::client::ClientError,
        restarted: Result<crate::client::engine::RestartedNetwork, crate::client::ClientError>,
    ) {
        self.restarting = false;
        let mut text = format!("Profile {name} could not start: {why}");
        match restarted {
            Ok(network) => self.engine.adopt_network(network),
            Err(e) => text.push_str(&format!("; the active profile could not start again: {e}")),
        }
        self.callbacks = self.engine.take_callback_receiver();
        app.set_message(Level::Error, text);
        self.perform_deferred(app);
    }

    /// Performs, in order, the actions that waited for the engine; a deferred switch that
    /// starts another profile leaves the rest waiting for that one.
    fn perform_deferred(&mut self, app: &mut App) {
        let deferred = std::mem::take(&mut self.deferred);
        let mut rest = deferred.into_iter();
        for action in rest.by_ref() {
            self.perform(app, action);
            if self.switching.is_some() {
                break;
            }
        }
        // A deferred switch started another profile: what came after it waits for that one.
        self.deferred.extend(rest);
    }
}

/// Sends `req` with the one sender ([`crate::client::sender::Sender::send`]: recorded,
/// response signature checked, SCA flow described) and makes the answer ready for display
/// off the async workers. Returns the view and the SCA flow to arm.
async fn send_and_view(
    sender: crate::client::sender::Sender,
    req: PreparedRequest,
    title: &'static str,
) -> Result<(Box<ResponseView>, Option<crate::client::engine::PendingSca>), SendError> {
    let sent = sender.send(req).await?;
    let flow = sent.sca.clone();
    let view = tokio::task::spawn_blocking(move || view_of(title, sent))
        .await
        .map_err(SendError::Task)?;
    Ok((view, flow))
}

/// The status read after an SCA with the one sender
/// ([`crate::client::sender::Sender::read_status`]), made ready for display.
async fn read_status_and_view(
    sender: crate::client::sender::Sender,
    flow: crate::client::engine::PendingSca,
    req: PreparedRequest,
) -> Result<(crate::client::engine::StatusAfterSca, Box<ResponseView>), SendError> {
    let (st, sent) = sender.read_status(&flow, req).await?;
    let title = status_read_title(flow.flow);
    let view = tokio::task::spawn_blocking(move || view_of(title, sent))
        .await
        .map_err(SendError::Task)?;
    Ok((st, view))
}

/// The response pane's title for the status read after an SCA of `flow`: "Payment status",
/// "Signing basket status", "Consent status" (an account-information answer: the presenter
/// speaks of the consent), else "Status after SCA".
pub fn status_read_title(flow: crate::client::engine::ScaFlow) -> &'static str {
    use crate::client::engine::ScaFlow;
    match flow {
        ScaFlow::Payment => "Payment status",
        ScaFlow::Basket => "Signing basket status",
        ScaFlow::Consent => "Consent status",
        ScaFlow::AisRead => "Status after SCA",
    }
}

/// The response view of what the one sender returned ([`crate::client::sender::Sent`]):
/// the body pretty-printed once, with the signature check and a failed history write (best
/// effort: shown, never failing the send). The runner calls it off the async workers.
pub fn view_of(title: &str, sent: crate::client::sender::Sent) -> Box<ResponseView> {
    use crate::client::engine::HistoryWriteError;
    let history_error = match sent.recorded {
        Ok(_) => None,
        Err(HistoryWriteError::NotOpen(why)) => {
            Some(format!("the history is not available ({why})"))
        }
        Err(HistoryWriteError::Poisoned) => Some("the history lock is poisoned".to_string()),
        Err(HistoryWriteError::Write { source, .. }) => Some(source.to_string()),
    };
    if let Some(e) = &history_error {
        tracing::warn!("history write failed: {e}");
    }
    let mut view = Box::new(ResponseView::from_exchange_owned(
        title,
        &sent.request,
        sent.exchange,
    ));
    view.signature = sent.signature;
    view.set_tls(sent.tls.as_ref());
    view.history_error = history_error;
    view
}
