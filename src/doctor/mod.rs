//! The doctor: why does this request fail? A recorded request (a HAR entry, a cURL command,
//! raw HTTP text or a history entry, [`input`]) is checked offline, without the TPP's private
//! key, the way the bank checks it and in the bank's order: the signature verifier first
//! ([`crate::signing::Verifier`]: certificate, `Signature` parameters, `keyId`, `Digest`,
//! `Date`, the signed headers, the RSA signature), then the header checks of the sandbox and
//! the operation's header table ([`crate::xs2a::operations`]), the PSD2 role, and the body
//! rules ([`crate::client::validate`], built on the same [`crate::xs2a`] checks as the
//! sandbox's).
//!
//! Every [`Check`] names the rule of the interface document it applies (e.g.
//! `Authentication 9`) and, when it fails, what was expected and what was found. When the
//! RSA signature does not verify, the usual mistakes are tried and the likely one named:
//! another header order, `(request-target)`, trailing white space in a header value; a
//! `Digest` that matches the body re-serialised (compact or pretty JSON) but not the bytes
//! sent; a `keyId` with the issuer DN in X.500 order. The [`Verdict`] names the first failing
//! check: the one the bank answers, and quotes the recorded answer (status, `tppMessages`
//! code and text); when no check fails but the answer is a refusal, it says whether the
//! cause lies outside the request (consent, PSU, a resource's state) or could not be checked
//! here (a redacted `Signature`), see [`AnswerCause`]. A recording that names a moved
//! sandbox clock ([`RecordedClock`]) has `Date` and the certificate judged at the sandbox's
//! time.
//!
//! A console view calls [`diagnose`] with a [`RecordedRequest`] ([`input::from_history`] for a
//! history entry) and shows [`Diagnosis::checks`] and [`Diagnosis::verdict`];
//! [`report::text`] and [`report::json`] are the command line's renderings.

pub mod cli;
mod content;
pub mod input;
pub mod report;
mod signature;
pub mod tls;

use std::time::SystemTime;

use serde::Serialize;

use crate::xs2a::operations::Operation;

/// A request as it was sent: what the doctor diagnoses (the one type of every recorded
/// request: [`crate::client::recorded`]).
pub use crate::client::recorded::{RecordedClock, RecordedRequest, RecordedResponse};

/// The conformance lint of the recorded answer ([`crate::lint::check_response`]): reported
/// beside the checks, never part of the verdict (the bank's answer does not make the
/// request fail).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ResponseLint {
    /// The answer's status.
    pub status: u16,
    /// `lint: no findings` or `lint: N errors, M warnings` ([`crate::lint::summary`]).
    pub summary: String,
    /// One line per finding: `error [rule] message`.
    pub findings: Vec<String>,
}

/// Options of [`diagnose`].
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// When the request was sent (`--sent-at`); wins over [`RecordedRequest::sent_at`].
    pub sent_at: Option<SystemTime>,
    /// The current time, used when neither says when the request was sent.
    pub now: SystemTime,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            sent_at: None,
            now: SystemTime::now(),
        }
    }
}

/// The outcome of one check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// The rule holds (`✔`).
    Pass,
    /// The rule is broken: the bank refuses the request (`✘`).
    Fail,
    /// Worth a look, or could not be checked; not a refusal (`⚠`).
    Warn,
}

impl Status {
    /// `✔`, `✘` or `⚠`.
    pub fn mark(self) -> &'static str {
        match self {
            Status::Pass => "✔",
            Status::Fail => "✘",
            Status::Warn => "⚠",
        }
    }
}

/// One check: a stable id (e.g. `digest`, `signature.verify`), its status, the rule of the
/// interface document (section and item, e.g. `Authentication 9`) and what was found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    /// Stable id, e.g. `signature.verify`.
    pub id: &'static str,
    /// Pass, warn or fail.
    pub status: Status,
    /// The interface document's rule, e.g. `Authentication 9`.
    pub rule: &'static str,
    /// One sentence; for a failure, what was expected and what was found.
    pub message: String,
}

/// The verdict: the first failing check in the bank's order (the one the bank answers),
/// and the recorded answer quoted with where its cause lies.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Verdict {
    /// No check failed (the recorded answer may still be a refusal: see `answer`).
    pub passed: bool,
    /// Id of the first failing check.
    pub cause: Option<&'static str>,
    /// One sentence naming the cause (or saying that nothing failed), quoting the recorded
    /// answer when there is one.
    pub message: String,
    /// The recorded answer, when the recording has one.
    pub answer: Option<AnswerQuote>,
}

/// The recorded answer as the verdict quotes it: status, the first `tppMessages` entry's
/// `code` and `text` (Berlin Group error body), and where the cause of a refusal lies.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AnswerQuote {
    /// HTTP status.
    pub status: u16,
    /// `tppMessages[0].code`, e.g. `CONSENT_INVALID`, when the body has one.
    pub code: Option<String>,
    /// `tppMessages[0].text`, when the body has one.
    pub text: Option<String>,
    /// Where the cause lies.
    pub cause: AnswerCause,
}

/// Where the cause of a recorded answer lies ([`AnswerQuote::cause`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AnswerCause {
    /// 1xx-3xx: the bank accepted the request.
    Accepted,
    /// A check of the request fails: the cause is in what was signed and sent.
    Request,
    /// Outside the request: the consent (`CONSENT_INVALID`, `CONSENT_EXPIRED`,
    /// `CONSENT_UNKNOWN`, `ACCESS_EXCEEDED`).
    OutsideConsent,
    /// Outside the request: the PSU (`PSU_CREDENTIALS_INVALID`, `CORPORATE_ID_INVALID`).
    OutsidePsu,
    /// Outside the request: the state of a resource (`RESOURCE_UNKNOWN`,
    /// `RESOURCE_EXPIRED`, `STATUS_INVALID`, `REFERENCE_STATUS_INVALID`, `PAYMENT_FAILED`,
    /// `SERVICE_BLOCKED`).
    OutsideState,
    /// Could not be checked here: the recording's `Signature` is redacted, so the
    /// signature, keyId and signed-header checks did not run.
    NotChecked,
    /// A refusal no check here explains.
    Unexplained,
}

/// Where the send time of a diagnosis came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SentAtSource {
    /// `--sent-at` ([`Options::sent_at`]).
    Option,
    /// The recording (HAR `startedDateTime`, history time).
    Recorded,
    /// Not known: the current time.
    Now,
}

/// What [`diagnose`] found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnosis {
    /// [`RecordedRequest::source`].
    pub source: String,
    /// HTTP method of the request.
    pub method: String,
    /// Path and query of the request.
    pub path_and_query: String,
    /// The catalogue id of the operation (`payments.domestic.create`), when known.
    pub operation: Option<&'static str>,
    /// The send time the checks used, as an IMF-fixdate.
    pub sent_at: String,
    /// Where the send time came from.
    pub sent_at_source: SentAtSource,
    /// When the request was signed for, as an IMF-fixdate, when the recording says.
    pub signed_at: Option<String>,
    /// The signing clock's offset from real time (seconds) that the checks applied: the
    /// recorded offset when it is not 0 (a moved sandbox clock) and the send time is not
    /// "now". `Date` and the certificate's validity are then judged at the sandbox's time,
    /// the send time plus this offset.
    pub clock_offset_secs: Option<i64>,
    /// In the bank's order.
    pub checks: Vec<Check>,
    /// What the bank would answer.
    pub verdict: Verdict,
    /// The recorded answer's conformance lint, when the recording has an answer.
    pub response: Option<ResponseLint>,
}

impl Diagnosis {
    /// The check with id `id`.
    pub fn check(&self, id: &str) -> Option<&Check> {
        self.checks.iter().find(|c| c.id == id)
    }

    /// The process exit status of the `doctor` command: 0 when no check failed, else 1.
    pub fn exit_code(&self) -> u8 {
        if self.verdict.passed { 0 } else { 1 }
    }
}

/// Collects checks in order.
#[derive(Debug, Default)]
pub(crate) struct Checks(Vec<Check>);

impl Checks {
    pub(crate) fn push(
        &mut self,
        id: &'static str,
        status: Status,
        rule: &'static str,
        message: impl Into<String>,
    ) {
        self.0.push(Check {
            id,
            status,
            rule,
            message: message.into(),
        });
    }

    /// Check `id` passes with message `pass` when `problems` is empty, else fails with the
    /// problems joined by `; `.
    pub(crate) fn pass_unless(
        &mut self,
        id: &'static str,
        rule: &'static str,
        problems: &[String],
        pass: impl Into<String>,
    ) {
        if problems.is_empty() {
            self.push(id, Status::Pass, rule, pass);
        } else {
            self.push(id, Status::Fail, rule, problems.join("; "));
        }
    }
}

/// What the checks share: the request, its operation and the send time.
pub(crate) struct Context<'a> {
    pub(crate) request: &'a RecordedRequest,
    pub(crate) operation: Option<(&'static Operation, Vec<(String, String)>)>,
    /// The real send time.
    pub(crate) sent_at: SystemTime,
    pub(crate) sent_at_source: SentAtSource,
    /// The bank's clock when the request was sent: `sent_at` plus `clock_offset`.
    pub(crate) bank_at: SystemTime,
    /// The offset of the sandbox's clock applied (non-zero), seconds.
    pub(crate) clock_offset: Option<i64>,
}

impl Context<'_> {
    /// `bank_at` as an IMF-fixdate, saying when it is the sandbox's moved clock.
    pub(crate) fn bank_time(&self) -> String {
        let at = crate::signing::imf_fixdate(self.bank_at);
        match self.clock_offset {
            Some(o) => format!(
                "{at} (the sandbox's clock, {o:+} s from real time: a sandbox clock offset \
                 was in effect)"
            ),
            None => at,
        }
    }
}

/// `t` moved by `secs` seconds (saturating at the ends of `SystemTime`).
fn shifted(t: SystemTime, secs: i64) -> SystemTime {
    let d = std::time::Duration::from_secs(secs.unsigned_abs());
    let moved = if secs >= 0 {
        t.checked_add(d)
    } else {
        t.checked_sub(d)
    };
    moved.unwrap_or(t)
}

/// Checks `request` as the bank would, in the bank's order, and names the first failure.
pub fn diagnose(request: &RecordedRequest, options: &Options) -> Diagnosis {
    diagnose_with_qwac(request, options, None)
}

/// [`diagnose`] for a request sent with the client certificate `qwac` (a profile's
/// `client_certificate`): the TLS checks of [`tls`] come first (the bank's TLS layer makes
/// them before any signature check): validity at the request's date, PSD2 role, the same
/// organizationIdentifier as the QSealC, key and certificate a pair.
pub fn diagnose_with_qwac(
    request: &RecordedRequest,
    options: &Options,
    qwac: Option<&tls::Qwac>,
) -> Diagnosis {
    let (sent_at, sent_at_source) = match (options.sent_at, request.sent_at) {
        (Some(t), _) => (t, SentAtSource::Option),
        (None, Some(t)) => (t, SentAtSource::Recorded),
        (None, None) => (options.now, SentAtSource::Now),
    };
    // A moved sandbox clock: the bank judged Date and the certificate at its own time.
    let clock_offset = match sent_at_source {
        SentAtSource::Now => None,
        _ => request.clock.offset_secs.filter(|o| *o != 0),
    };
    let cx = Context {
        request,
        operation: crate::xs2a::operations::find_request(&request.method, request.path()),
        sent_at,
        sent_at_source,
        bank_at: clock_offset.map_or(sent_at, |o| shifted(sent_at, o)),
        clock_offset,
    };
    let mut checks = Checks::default();
    if let Some(q) = qwac {
        tls::checks(&cx, q, &mut checks);
    }
    content::operation(&cx, &mut checks);
    // The verifier (Authentication 2-9), in its order.
    let certificate = signature::certificate(&cx, &mut checks);
    let params = signature::parameters(&cx, &mut checks);
    signature::key_id(params.as_ref(), certificate.as_ref(), &mut checks);
    content::digest(&cx, &mut checks);
    content::date(&cx, &mut checks);
    signature::signed_headers(&cx, params.as_ref(), &mut checks);
    signature::verify(&cx, params.as_ref(), certificate.as_ref(), &mut checks);
    // Then the sandbox's header checks, the operation's header table, role and body.
    content::headers(&cx, &mut checks);
    content::role(&cx, certificate.as_ref(), &mut checks);
    content::body(&cx, &mut checks);
    let checks = checks.0;
    let verdict = verdict(&checks, request.response.as_ref());
    let response = request.response.as_ref().map(|r| {
        let asked = crate::lint::Asked::request(&request.method, &request.path_and_query)
            .with_request_id(
                request
                    .header(crate::xs2a::headers::X_REQUEST_ID)
                    .map(str::trim),
            );
        let findings = crate::lint::check_response(&asked, r.status, &r.headers, &r.body);
        ResponseLint {
            status: r.status,
            summary: crate::lint::summary(&findings),
            findings: findings.iter().map(ToString::to_string).collect(),
        }
    });
    Diagnosis {
        source: request.source.clone(),
        method: request.method.clone(),
        path_and_query: request.path_and_query.clone(),
        operation: cx.operation.as_ref().map(|(op, _)| op.id),
        sent_at: crate::signing::imf_fixdate(sent_at),
        sent_at_source,
        signed_at: request.clock.signed_at.map(crate::signing::imf_fixdate),
        clock_offset_secs: clock_offset,
        checks,
        verdict,
        response,
    }
}

/// Codes of refusals whose cause lies outside the request, and the class of each.
const OUTSIDE: [(&str, AnswerCause); 12] = [
    ("CONSENT_INVALID", AnswerCause::OutsideConsent),
    ("CONSENT_EXPIRED", AnswerCause::OutsideConsent),
    ("CONSENT_UNKNOWN", AnswerCause::OutsideConsent),
    ("ACCESS_EXCEEDED", AnswerCause::OutsideConsent),
    ("PSU_CREDENTIALS_INVALID", AnswerCause::OutsidePsu),
    ("CORPORATE_ID_INVALID", AnswerCause::OutsidePsu),
    ("RESOURCE_UNKNOWN", AnswerCause::OutsideState),
    ("RESOURCE_EXPIRED", AnswerCause::OutsideState),
    ("STATUS_INVALID", AnswerCause::OutsideState),
    ("REFERENCE_STATUS_INVALID", AnswerCause::OutsideState),
    ("PAYMENT_FAILED", AnswerCause::OutsideState),
    ("SERVICE_BLOCKED", AnswerCause::OutsideState),
];

/// The first `tppMessages` entry's `code` and `text` of a Berlin Group error body.
fn tpp_message(body: &[u8]) -> (Option<String>, Option<String>) {
    let Ok(json) = serde_json::from_slice::<serde_json::Value>(body) else {
        return (None, None);
    };
    let first = &json["tppMessages"][0];
    let field = |k: &str| first[k].as_str().map(str::to_string);
    (field("code"), field("text"))
}

/// The recorded answer quoted: `401 CONSENT_INVALID "text"`, control characters escaped.
fn quote(a: &AnswerQuote) -> String {
    let mut out = a.status.to_string();
    match (&a.code, &a.text) {
        (Some(code), text) => {
            out.push(' ');
            out.push_str(&code.escape_debug().to_string());
            if let Some(t) = text {
                out.push_str(&format!(" {t:?}"));
            }
        }
        (None, Some(t)) => out.push_str(&format!(" {t:?}")),
        (None, None) => {
            let reason = axum::http::StatusCode::from_u16(a.status)
                .ok()
                .and_then(|s| s.canonical_reason());
            if let Some(r) = reason {
                out.push(' ');
                out.push_str(r);
            }
            if a.status >= 400 {
                out.push_str(" (no tppMessages in the body)");
            }
        }
    }
    out
}

/// The verdict of `checks` with the recorded answer `response` quoted: the first failing
/// check (the cause is in the request), or, when none fails, where the cause of a refusal
/// lies ([`AnswerCause`]).
fn verdict(checks: &[Check], response: Option<&RecordedResponse>) -> Verdict {
    let failing: Vec<&Check> = checks.iter().filter(|c| c.status == Status::Fail).collect();
    let redacted = checks.iter().any(|c| c.id == signature::REDACTED_CHECK);
    let answer = response.map(|r| {
        let (code, text) = tpp_message(&r.body);
        let cause = if r.status < 400 {
            AnswerCause::Accepted
        } else if !failing.is_empty() {
            AnswerCause::Request
        } else if let Some((_, class)) = OUTSIDE.iter().find(|(c, _)| code.as_deref() == Some(*c)) {
            *class
        } else if redacted {
            AnswerCause::NotChecked
        } else {
            AnswerCause::Unexplained
        };
        AnswerQuote {
            status: r.status,
            code,
            text,
            cause,
        }
    });
    let Some(first) = failing.first() else {
        let warnings = checks.iter().filter(|c| c.status == Status::Warn).count();
        let none_fails = if warnings == 0 {
            "every check passes: the bank's checks accept this request".to_string()
        } else {
            format!("no check fails ({warnings} warning(s) above)")
        };
        let message = match &answer {
            None => none_fails,
            Some(a) if a.cause == AnswerCause::Accepted => {
                format!("{none_fails}; the recorded answer: {}", quote(a))
            }
            Some(a) => {
                let why = match a.cause {
                    AnswerCause::OutsideConsent => {
                        "the cause lies outside the request: the consent or the PSU it is \
                         for (no consent yet for this PSU-ID, an unknown PSU, a consent \
                         expired, revoked or used up), not what was signed and sent"
                    }
                    AnswerCause::OutsidePsu => {
                        "the cause lies outside the request: the PSU (unknown PSU-ID or \
                         PSU-Corporate-ID, or one the consent does not cover), not what was \
                         signed and sent"
                    }
                    AnswerCause::OutsideState => {
                        "the cause lies outside the request: the state of the resource \
                         (unknown, expired, or in a status that does not allow this), not \
                         what was signed and sent"
                    }
                    AnswerCause::NotChecked => {
                        "it could not be checked here: the Signature is redacted in this \
                         recording, so keyId, the signed headers and the RSA signature were \
                         not checked (run the doctor on the request as the client sent it, \
                         e.g. its HAR or cURL with the Signature)"
                    }
                    _ => {
                        "no check here explains it: compare the request with the bank's \
                         text, or ask the bank"
                    }
                };
                let checks_say = if warnings == 0 {
                    "no check of the request fails".to_string()
                } else {
                    format!("no check of the request fails ({warnings} warning(s) above)")
                };
                format!(
                    "{checks_say}, but the recorded answer is a refusal: {}; {why}",
                    quote(a)
                )
            }
        };
        return Verdict {
            passed: true,
            cause: None,
            message,
            answer,
        };
    };
    let also = if failing.len() > 1 {
        let ids: Vec<&str> = failing[1..].iter().map(|c| c.id).collect();
        format!(" (also failing: {})", ids.join(", "))
    } else {
        String::new()
    };
    let recorded = answer
        .as_ref()
        .map(|a| match a.cause {
            AnswerCause::Accepted => format!(
                "; yet the recorded answer is {}: this bank accepted it",
                quote(a)
            ),
            _ => format!("; the recorded answer: {}", quote(a)),
        })
        .unwrap_or_default();
    Verdict {
        passed: false,
        cause: Some(first.id),
        message: format!(
            "the bank refuses this request at {} ({}): {}{also}{recorded}",
            first.id, first.rule, first.message
        ),
        answer,
    }
}
