//! The console's [`App`] on a real engine: the embedded sandbox of the built-in profile in a
//! fresh home, real HTTP on loopback. The test does what the runner does for an
//! [`Action`]: prepares the selected operation with the engine (`prepare_to_send`), sends it
//! with the one sender (recorded in the history, the SCA flow armed), hands the answer to
//! the app (`psd2_console::tui::view_of`); after SCA it reads the status with the sender
//! ([`Action::ReadStatus`]) and gives an SCA up on Esc ([`Action::AbandonSca`]); SCA is completed in the sandbox's HTML pages by a
//! form-filling browser ([`super::sca::complete`]) whose redirect lands on the engine's
//! callback listener.

#![allow(dead_code)]

use psd2_console::client::{BodyInput, Engine, Exchange};
use psd2_console::embedded::start_engine;
use psd2_console::flow::BrowserStep;
use psd2_console::flow::live::{StepSource, StepStream, subscribe};
use psd2_console::profile::{DEFAULT_PROFILE, Paths, ProfileSet};
use psd2_console::tui::flow_view::{FlowData, read_flow};
use psd2_console::tui::{Action, App, StatusInfo};

use super::browser;

/// Kari Nordmann, a private customer with a corporate agreement (sandbox seed).
pub const KARI: &str = "31125461118";

/// An app on a running engine.
pub struct Console {
    pub app: App,
    pub engine: Engine,
    pub paths: Paths,
    /// The last answer, as received.
    pub last: Option<Exchange>,
    /// The browser's steps on the SCA pages, from the sandbox's event stream.
    pub steps: Option<StepStream>,
    /// The home (`PSD2_CONSOLE_HOME`) of the run: the CLI reads the same history there.
    pub home: tempfile::TempDir,
    /// Resource ids answered in this run (`consentId`, `paymentId`, `basketId`), replaced
    /// by [`Console::normalize`] (the status read after SCA names them in its path).
    pub ids: Vec<String>,
}

impl Console {
    /// The built-in embedded profile in a fresh home; volatile values masked.
    pub async fn start() -> Console {
        let home = tempfile::tempdir().unwrap();
        let paths = Paths::under(home.path().to_path_buf());
        // Free ports: tests run in parallel (the built-in profile's are fixed).
        let profile =
            super::any_ports(ProfileSet::load(None).get(DEFAULT_PROFILE).unwrap().clone());
        let engine = start_engine(profile, paths.clone()).await.unwrap();
        assert!(
            engine.listener_error.is_none(),
            "{:?}",
            engine.listener_error
        );
        let mut app = App::new(StatusInfo::from_engine(&engine));
        app.mask_volatile = true;
        Console {
            app,
            engine,
            paths,
            last: None,
            steps: None,
            home,
            ids: Vec::new(),
        }
    }

    /// Subscribes to the sandbox's browser steps, as the runner does for an embedded
    /// profile.
    pub async fn watch_steps(&mut self) {
        self.steps = Some(subscribe(StepSource::of(&self.engine)).await.unwrap());
    }

    /// Stops the engine (the event stream first, as the runner does, so the sandbox does
    /// not wait for it).
    pub async fn shutdown(mut self) {
        self.steps = None;
        self.engine.shutdown().await;
    }

    /// Sends the selected operation as the runner does (`Action::Send`) and returns the
    /// status; the answer is in [`Console::last`] and on screen.
    pub async fn send(&mut self) -> u16 {
        let spec = self.app.request_spec();
        let body = match spec.body.as_deref() {
            Some(t) => BodyInput::Json(t),
            None => BodyInput::Default,
        };
        let req = self
            .engine
            .prepare_to_send(spec.op, &spec.params, body)
            .unwrap_or_else(|e| panic!("{}: {e}", spec.op.id));
        self.app.begin_send(req.clone());
        let sent = self.engine.sender().send(req).await.unwrap();
        let flow = sent.sca.clone();
        if let Some(f) = &flow {
            self.engine.arm(f.clone());
        }
        let ex = sent.exchange.clone();
        let view = psd2_console::tui::view_of(spec.op.title, sent);
        self.app.finish_send(Ok(*view));
        if let Some(f) = flow {
            self.app.sca_armed(f);
        }
        let status = ex.status;
        for key in ["consentId", "paymentId", "basketId"] {
            if let Some(id) = ex.json.as_ref().and_then(|j| j[key].as_str()) {
                self.ids.push(id.to_string());
            }
        }
        self.last = Some(ex);
        status
    }

    /// Performs `action` as the runner does, for the actions of a send, an SCA status read
    /// and an SCA given up; returns whether it was one of them.
    pub async fn perform(&mut self, action: Action) -> bool {
        match action {
            Action::Send => {
                self.send().await;
            }
            Action::ReadStatus(flow) => {
                let req = self.engine.prepare_status_read(&flow).unwrap();
                self.app.begin_send(req.clone());
                let (st, sent) = self.engine.sender().read_status(&flow, req).await.unwrap();
                self.last = Some(sent.exchange.clone());
                let view = psd2_console::tui::view_of(
                    psd2_console::tui::status_read_title(flow.flow),
                    sent,
                );
                self.app.status_read(Ok((st, *view)));
            }
            Action::AbandonSca(flow) => {
                self.engine.abandon_sca(&flow);
            }
            _ => return false,
        }
        true
    }

    /// Presses `key` (a crossterm key) in the app and performs the action it asks for.
    pub async fn press(&mut self, key: crossterm::event::KeyEvent) -> Action {
        let action = self.app.handle_key(key);
        self.perform(action.clone()).await;
        action
    }

    /// The customer id of Kari's corporate agreement (sandbox seed), for
    /// `CORPORATE:{agreement}`.
    pub async fn kari_agreement(&self) -> String {
        let list = psd2_console::xs2a::operations::find("sandbox.customers.list").unwrap();
        let req = self
            .engine
            .prepare(list, &[("withAgreements".into(), "true".into())], None)
            .unwrap();
        let customers = self.engine.send(&req).await.unwrap().json.unwrap();
        super::first_agreement(&customers, KARI)
    }

    /// The last answer's JSON.
    pub fn json(&self) -> &serde_json::Value {
        self.last
            .as_ref()
            .and_then(|e| e.json.as_ref())
            .expect("a JSON answer")
    }

    /// The last answer's first `tppMessages` code.
    pub fn code(&self) -> Option<&str> {
        self.json()["tppMessages"][0]["code"].as_str()
    }

    /// The last answer's body, for messages.
    pub fn body(&self) -> String {
        self.last
            .as_ref()
            .map(|e| e.pretty_body())
            .unwrap_or_default()
    }

    /// Completes the SCA the prompt shows as the PSU `number` in `context` (`PRIVATE` or
    /// `CORPORATE:{agreement}`), every account ticked, approved; the browser lands on the
    /// callback listener and the console takes the callback as the runner does (routed by
    /// the engine). When the app then reads a payment's, basket's or consent's status
    /// (`Action::ReadStatus`), it is read.
    pub async fn complete_sca(&mut self, number: &str, context: &str) -> Action {
        self.decide_sca(number, context, "Approve").await
    }

    /// [`Console::complete_sca`] pressing `button` (`Approve` or `Reject`).
    pub async fn decide_sca(&mut self, number: &str, context: &str, button: &str) -> Action {
        let url = self
            .app
            .sca_prompt()
            .map(|p| p.url.clone())
            .expect("the SCA prompt is shown");
        let to_tpp =
            super::sca::complete(&url, number, context, super::sca::tick_all, button).await;
        assert!(to_tpp.starts_with(&self.engine.redirect_uri), "{to_tpp}");
        let landing = browser().get(&to_tpp).send().await.unwrap();
        assert_eq!(landing.status(), 200);
        let cb = self.engine.next_callback().await.unwrap();
        let applied = self.engine.apply_sca_callback(&cb);
        let action = self
            .app
            .sca_applied(&cb, applied, StatusInfo::from_engine(&self.engine));
        self.perform(action.clone()).await;
        action
    }

    /// Waits for the browser steps of the SCA just completed (up to the one that sent the
    /// browser back to the TPP), stores them in the history as the runner does and returns
    /// them.
    pub async fn take_steps(&mut self) -> Vec<BrowserStep> {
        let rx = self.steps.as_mut().expect("watch_steps first");
        let mut out = Vec::new();
        while let Some(step) = rx.recv().await {
            let done = step.outcome.is_some();
            self.engine
                .history
                .as_ref()
                .unwrap()
                .lock()
                .unwrap()
                .record_browser_step(&step)
                .unwrap();
            out.push(step);
            if done {
                break;
            }
        }
        out
    }

    /// The flow screen's data as the runner reads it (`Action::LoadFlow`).
    pub fn flow_data(&self) -> FlowData {
        read_flow(
            self.engine.history.clone(),
            self.engine.history_error.clone(),
            self.engine.session.clone(),
            psd2_console::cert::unix_seconds(self.engine.now()),
            true,
        )
    }

    /// The id of the operation selected in the console.
    pub fn selected(&self) -> &'static str {
        self.app.selected_operation().id
    }

    /// `text` with the run's volatile values (ports, PSU-ID, data paths) replaced by
    /// placeholders, for snapshots.
    pub fn normalize(&self, text: &str) -> String {
        // Response times: "200 OK in 2 ms".
        let mut out = String::new();
        let mut rest = text;
        while let Some(i) = rest.find(" in ") {
            let after = &rest[i + 4..];
            let digits = after.chars().take_while(char::is_ascii_digit).count();
            out.push_str(&rest[..i + 4]);
            if digits > 0 && after[digits..].starts_with(" ms") {
                out.push_str("<n>");
                rest = &after[digits..];
            } else {
                rest = after;
            }
        }
        out.push_str(rest);
        let mut out = out.replace(&self.engine.redirect_uri, "<redirect-uri>");
        out = out.replace(&self.engine.base_url, "<sandbox>");
        for id in &self.ids {
            out = out.replace(id.as_str(), "<id>");
        }
        for v in [
            &self.engine.session.psu_id,
            &self.engine.session.psu_corporate_id,
            &self.engine.session.tpp_session_id,
        ]
        .into_iter()
        .flatten()
        {
            out = out.replace(v.as_str(), "<id>");
        }
        out
    }
}
