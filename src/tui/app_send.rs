//! The request and its answer on the console (part of the [`App`]): the preview prepared
//! on change, the send, the response shown, the ids it carries into other operations, and
//! the SCA it starts (the prompt, the callback, the status read after it).

use super::app::{
    Action, App, Level, Preview, RequestSpec, ResponseState, ResponseView, ScaPrompt, ScaSubject,
    StatusInfo, mask_request,
};
use super::error::{BrowserError, SendError};
use super::overlay::{Layer, Overlay};
use super::response_pane::ResponsePane;
use crate::client::{ClientError, PreparedRequest};
use crate::xs2a::redirect::ScaCallback;

impl App {
    /// The request to prepare for the preview, when the selection or the parameters changed
    /// since the last call (so signing happens only on change, never per frame).
    pub fn take_prepare_request(&mut self) -> Option<RequestSpec> {
        if !self.request.dirty {
            return None;
        }
        self.request.dirty = false;
        Some(self.request_spec())
    }

    /// Shows a prepared preview (or why it cannot be built: the error's text, in the
    /// console's wording, [`humanize`]).
    pub fn set_preview<E: std::fmt::Display>(&mut self, result: Result<PreparedRequest, E>) {
        self.request.sent_instead = None;
        self.request.preview = match result {
            Ok(r) => Preview::Ready {
                request: Box::new(self.displayed(r)),
                sent: false,
            },
            Err(e) => Preview::Error(humanize(&e.to_string())),
        };
    }

    pub(crate) fn displayed(&self, r: PreparedRequest) -> PreparedRequest {
        if self.mask_volatile {
            mask_request(r)
        } else {
            r
        }
    }

    /// Records that `request` is being sent: the request pane shows it as sent and the
    /// response pane waits.
    pub fn begin_send(&mut self, request: PreparedRequest) {
        self.response_pane.replace_state(ResponseState::Sending {
            method: request.method.clone(),
            url: request.url.clone(),
        });
        self.request.preview = Preview::Ready {
            request: Box::new(self.displayed(request)),
            sent: true,
        };
        self.request.sending = true;
        self.request.sent_instead = None;
        self.sca.done = false;
        self.sca.outcome = None;
        self.overlays.close(Layer::ScaPrompt);
        self.set_message(
            Level::Info,
            format!("Sending {} …", self.form.ops[self.form.selected].title),
        );
    }

    /// Shows the outcome of a send. A scaRedirect opens the SCA prompt; an account list
    /// pre-fills `account-id` of the other operations (unless the user typed one).
    pub fn finish_send(&mut self, result: Result<ResponseView, SendError>) {
        self.request.sending = false;
        self.response_pane.reset();
        self.overlays.close(Layer::LinkChooser);
        let view = match result {
            Ok(v) => v,
            Err(e) => {
                let e = e.to_string();
                self.set_message(Level::Error, e.clone());
                self.response_pane.replace_state(ResponseState::Failed(e));
                return;
            }
        };
        let status = view.status_text();
        let ms = view.elapsed_ms();
        if view.sca_redirect.is_some() {
            self.sca.subject = self.subject_of(&view);
        }
        if let Some(url) = &view.sca_redirect {
            self.sca.prompt = Some(ScaPrompt::new(url.clone()));
            self.overlays.open(Overlay::ScaPrompt);
            self.set_message(
                Level::Warning,
                format!(
                    "{status} in {ms} ms: the bank asks for SCA. Press o to open the browser, or open the URL in the prompt"
                ),
            );
        } else {
            let level = if (200..300).contains(&view.status) {
                Level::Success
            } else if view.status >= 500 {
                Level::Error
            } else {
                Level::Warning
            };
            self.set_message(level, format!("{status} in {ms} ms ({})", view.operation));
        }
        if let Some(e) = &view.history_error {
            self.set_message(
                Level::Warning,
                format!("{status} in {ms} ms, but not written to the history: {e}"),
            );
        }
        if let Some(id) = view.first_account_id.clone() {
            self.prefill_announced("account-id", &id);
        }
        if (200..300).contains(&view.status) {
            self.prefill_ids(&view);
        }
        let top = ResponsePane::opening_line(&view, self.presenter.on);
        self.response_pane
            .show(ResponseState::Done(Box::new(view)), top);
    }

    /// "payment <id>" / "basket <id>" while the SCA prompt is for one.
    pub(crate) fn sca_subject_text(&self) -> Option<String> {
        self.sca
            .subject
            .as_ref()
            .map(|s| format!("{} {}", s.kind, s.id))
    }

    /// The payment or basket a response with a scaRedirect is about: the id in its body
    /// (a 201 initiation), else the id parameter of the operation sent (a start-authorisation).
    pub(crate) fn subject_of(&self, view: &ResponseView) -> Option<ScaSubject> {
        let op = self.form.ops[self.form.selected];
        let param_of = |name: &str| {
            self.param_value(op.id, name)
                .filter(|v| !v.is_empty())
                .map(str::to_string)
        };
        if let Some(id) = view.payment_id.clone().or_else(|| {
            op.id
                .starts_with("payments.")
                .then(|| param_of("payment-id"))
                .flatten()
        }) {
            return Some(ScaSubject {
                kind: "payment",
                id,
            });
        }
        let id = view.basket_id.clone().or_else(|| {
            op.id
                .starts_with("baskets.")
                .then(|| param_of("basket-id"))
                .flatten()
        })?;
        Some(ScaSubject { kind: "basket", id })
    }

    /// Carries the ids of a 2xx answer into the operations that take them (Issue 8 item 5):
    /// paymentId (with the payment service and product of the URL it was created at) into
    /// every payment operation and the signing basket body, basketId into the basket
    /// operations, the first transactionId into Transaction details.
    pub(crate) fn prefill_ids(&mut self, view: &ResponseView) {
        if let Some(id) = &view.payment_id {
            if let Some((service, product)) = payment_route(&view.url) {
                self.prefill("payment-service", &service);
                self.prefill("payment-product", &product);
            }
            self.prefill_announced("payment-id", id);
            if view.status == 201 && !self.sca.payments_created.contains(id) {
                self.sca.payments_created.push(id.clone());
                self.prefill_basket_body();
            }
        }
        if view.basket_id.is_some() && self.form.operation().id == "baskets.create" {
            // Its payments are in a basket now: the next basket takes newer ones.
            self.sca.payments_created.clear();
        }
        if let Some(id) = &view.basket_id {
            self.prefill_announced("basket-id", id);
        }
        if let Some(id) = &view.transaction_id {
            self.prefill_announced("transaction-id", id);
        }
    }

    /// The signing basket's body: the payments created in this run that can still go in a
    /// basket (not authorised on their own, not in a basket yet), the newest 100.
    pub(crate) fn prefill_basket_body(&mut self) {
        let n = self.sca.payments_created.len();
        let ids = &self.sca.payments_created[n.saturating_sub(100)..];
        let body =
            serde_json::to_string(&serde_json::json!({ "paymentIds": ids })).unwrap_or_default();
        self.prefill_body("baskets.create", &body);
    }

    /// [`App::prefill`], naming the operations filled in the status message.
    pub(crate) fn prefill_announced(&mut self, name: &str, id: &str) {
        let filled = self.prefill(name, id);
        if !filled.is_empty() {
            self.messages.append(&format!(
                "; {name} {id} filled in for {}",
                filled.join(", ")
            ));
        }
    }

    /// [`Form::prefill`]; the preview is prepared again when the selected operation changed.
    pub(crate) fn prefill(&mut self, name: &str, value: &str) -> Vec<&'static str> {
        let (filled, selected) = self.form.prefill(name, value);
        self.request.dirty |= selected;
        // The open body editor validates with the form's values as they are now.
        if let Some(ed) = self.overlays.body_editor_mut() {
            ed.params = self.form.param_pairs(ed.op_index);
        }
        filled
    }

    /// [`Form::prefill_body`]; the preview is prepared again when the selected operation
    /// changed.
    pub(crate) fn prefill_body(&mut self, op_id: &str, body: &str) {
        self.request.dirty |= self.form.prefill_body(op_id, body);
    }

    /// Shows the outcome of an SCA callback that no waiting flow was found for (as
    /// [`App::sca_applied`] without a flow): `summary` is what
    /// [`crate::client::Engine::apply_callback`] returned, `status` the updated status bar.
    pub fn sca_finished(
        &mut self,
        callback: &ScaCallback,
        summary: Result<String, ClientError>,
        status: StatusInfo,
    ) -> Action {
        let applied = summary.map(|summary| crate::client::engine::ScaApplied {
            summary,
            flow: None,
        });
        self.sca_applied(callback, applied, status)
    }

    /// Shows the outcome of an SCA callback as the engine applied it
    /// ([`crate::client::Engine::apply_sca_callback`]: the flow it answered, routed by its
    /// `tpp-session-id` and `sca-ref`), `status` the updated status bar. Success closes the
    /// prompt and re-prepares the request (now with PSU-ID).
    ///
    /// After the SCA of a payment, basket or consent the creating POST is not sent again
    /// (that would create another one): the returned [`Action::ReadStatus`] has the runner
    /// read its status with the one sender, and [`App::status_read`] shows what it found
    /// ("payment <id> approved: <status>"). Payment status (Basket status) is selected with
    /// its id meanwhile.
    pub fn sca_applied(
        &mut self,
        callback: &ScaCallback,
        applied: Result<crate::client::engine::ScaApplied, ClientError>,
        status: StatusInfo,
    ) -> Action {
        use crate::client::engine::ScaFlow;
        self.status = status;
        self.request.dirty = true;
        let applied = match applied {
            Ok(a) => a,
            Err(e) => {
                self.overlays.close(Layer::ScaPrompt);
                self.set_message(
                    Level::Error,
                    format!("The SCA result could not be stored: {e}"),
                );
                return Action::None;
            }
        };
        // The prompt closes when its own SCA ended (or when it has no flow to tell).
        let own = match (
            self.sca.prompt.as_ref().and_then(|p| p.flow.as_ref()),
            &applied.flow,
        ) {
            (Some(mine), Some(done)) => {
                mine.tpp_session_id == done.tpp_session_id && mine.sca_ref == done.sca_ref
            }
            _ => true,
        };
        if own {
            self.overlays.close(Layer::ScaPrompt);
            if matches!(callback, ScaCallback::Success(_)) {
                self.sca.prompt = None;
                self.sca.subject = None;
            }
        }
        let s = applied.summary;
        let read = applied
            .flow
            .filter(|f| f.status_path.is_some() && f.flow != ScaFlow::AisRead);
        match (callback, read) {
            (ScaCallback::Success(_), Some(flow)) => {
                let s = s.trim_end_matches("; send the request again");
                let id = flow.resource_id.clone().unwrap_or_default();
                let (op, param) = match flow.flow {
                    ScaFlow::Payment => (Some("payments.status"), "payment-id"),
                    ScaFlow::Basket => (Some("baskets.status"), "basket-id"),
                    _ => (None, ""),
                };
                if flow.flow == ScaFlow::Payment && !id.is_empty() {
                    // Authorised on its own: a signing basket refuses it.
                    self.sca.payments_created.retain(|p| *p != id);
                    self.prefill_basket_body();
                }
                if let Some(op) = op
                    && !id.is_empty()
                {
                    self.select_operation(op);
                    self.set_param(op, param, &id);
                }
                self.set_message(
                    Level::Success,
                    format!("{s}; reading the status of {} {id} …", flow.flow.noun()),
                );
                self.sca.learned = (flow.flow == ScaFlow::Consent).then(|| s.to_string());
                self.request.sending = true;
                self.sca.status_read = Some(flow.clone());
                return Action::ReadStatus(Box::new(flow));
            }
            (ScaCallback::Success(_), None) => {
                self.sca.done = true;
                self.set_message(Level::Success, s);
            }
            (ScaCallback::Failure(_), Some(flow)) => {
                // A failed payment SCA may still have changed the payment (the sandbox
                // rejects an instant payment for lack of funds at approval): read it.
                self.set_message(Level::Error, s);
                self.request.sending = true;
                self.sca.status_read = Some(flow.clone());
                return Action::ReadStatus(Box::new(flow));
            }
            (ScaCallback::Failure(_), None) => self.set_message(Level::Error, s),
        }
        Action::None
    }

    /// The runner armed `flow` for the response just shown ([`App::finish_send`]): the SCA
    /// prompt belongs to it, so Esc gives it up.
    pub fn sca_armed(&mut self, flow: crate::client::engine::PendingSca) {
        if let Some(p) = &mut self.sca.prompt {
            p.flow = Some(flow);
        }
    }

    /// Shows the status read after an SCA ([`Action::ReadStatus`]; the runner shows its
    /// request with [`App::begin_send`] first): the answer in the response pane and the sender's verdict in the status line ("payment <id> approved:
    /// ACSC", "payment <id> rejected: lack of funds (ACCP)").
    pub fn status_read(
        &mut self,
        result: Result<(crate::client::engine::StatusAfterSca, ResponseView), SendError>,
    ) {
        use crate::xs2a::status::Verdict;
        self.sca.status_read = None;
        match result {
            Ok((st, view)) => {
                let text = match self.sca.learned.take() {
                    Some(learned) => format!("{learned}; {}", st.summary()),
                    None => st.summary(),
                };
                let level = match st.verdict {
                    Verdict::Approved => Level::Success,
                    Verdict::Pending => Level::Warning,
                    Verdict::Rejected(_) => Level::Error,
                };
                self.finish_send(Ok(view));
                // After a consent's SCA the guide suggests sending the account read again.
                self.sca.done = st.flow == crate::client::engine::ScaFlow::Consent;
                self.sca.outcome = Some(text.clone());
                self.set_message(level, text);
            }
            Err(e) => self.finish_send(Err(e)),
        }
    }

    /// Shows the outcome of opening the browser.
    pub fn browser_opened(&mut self, result: Result<(), BrowserError>) {
        match &result {
            Ok(()) => self.set_message(
                Level::Info,
                "Browser opened: complete SCA there; the console updates by itself",
            ),
            Err(e) => self.set_message(
                Level::Error,
                format!("Could not open a browser ({e}); copy the URL from the prompt"),
            ),
        }
        if let Some(p) = &mut self.sca.prompt {
            p.browser = Some(result);
        }
    }

    /// After the session or the profile changed: the new status bar, the request prepared
    /// again (new session values), and no SCA prompt (its SCA belonged to the old session).
    fn session_changed(&mut self, status: StatusInfo) {
        self.status = status;
        self.request.dirty = true;
        self.sca.prompt = None;
        self.overlays.close(Layer::ScaPrompt);
    }

    /// Records a session reset: new status, re-prepared request.
    pub fn session_reset(&mut self, status: StatusInfo) {
        self.session_changed(status);
        self.sca.done = false;
        self.set_message(
            Level::Info,
            "Session reset: PSU-ID forgotten, new TPP-Session-ID",
        );
    }

    /// Records a profile switch: new status, the request re-prepared for the new target.
    pub fn profile_switched(&mut self, status: StatusInfo) {
        self.set_message(
            Level::Success,
            format!("Profile {} is active", status.profile),
        );
        self.session_changed(status);
        self.response_pane.show(ResponseState::Empty, 0);
        self.panes.scroll = [0; 2];
    }

    /// The active profile's network started after the first frame
    /// ([`crate::client::Engine::start_offline`]): the status line names its address, the
    /// preview is signed again, and the message `starting` (if still shown) goes.
    pub fn network_started(&mut self, status: StatusInfo, starting: &str) {
        self.session_changed(status);
        if self.message().is_some_and(|m| m.text == starting) {
            self.messages.clear();
        }
    }

    /// Asks for the request preview to be prepared again.
    pub fn invalidate_preview(&mut self) {
        self.request.dirty = true;
    }
}

/// `(payment-service, payment-product)` of a payment URL (`…/v1/payments/sepa-credit-transfers…`).
fn payment_route(url: &str) -> Option<(String, String)> {
    let path = url.split(['?', '#']).next()?;
    let rest = &path[path.find("/v1/")? + 4..];
    let mut segs = rest.split('/');
    let service = segs.next()?;
    let product = segs.next().filter(|p| !p.is_empty())?;
    ["payments", "bulk-payments", "periodic-payments"]
        .contains(&service)
        .then(|| (service.to_string(), product.to_string()))
}

/// Rewrites the CLI wording of parameter errors (`needs --param account-id=...`) for the
/// console (`needs account-id`).
pub(crate) fn humanize(e: &str) -> String {
    e.replace("--param ", "").replace("=...", "")
}
