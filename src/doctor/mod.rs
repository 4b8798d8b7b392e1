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
//! check: the one the bank answers.
//!
//! A console view calls [`diagnose`] with a [`RecordedRequest`] ([`input::from_history`] for a
//! history entry) and shows [`Diagnosis::checks`] and [`Diagnosis::verdict`];
//! [`report::text`] and [`report::json`] are the command line's renderings.

pub mod cli;
mod content;
pub mod input;
pub mod report;
mod signature;

use std::time::SystemTime;

use serde::Serialize;

use crate::xs2a::operations::Operation;

/// A request as it was sent: what the doctor diagnoses (the one type of every recorded
/// request: [`crate::client::recorded`]).
pub use crate::client::recorded::{RecordedRequest, RecordedResponse};

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
    pub id: &'static str,
    pub status: Status,
    pub rule: &'static str,
    /// One sentence; for a failure, what was expected and what was found.
    pub message: String,
}

/// The verdict: the first failing check in the bank's order (the one the bank answers).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Verdict {
    /// No check failed.
    pub passed: bool,
    /// Id of the first failing check.
    pub cause: Option<&'static str>,
    /// One sentence naming the cause (or saying that nothing failed).
    pub message: String,
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
    pub method: String,
    pub path_and_query: String,
    /// The catalogue id of the operation (`payments.domestic.create`), when known.
    pub operation: Option<&'static str>,
    /// The send time the checks used, as an IMF-fixdate.
    pub sent_at: String,
    pub sent_at_source: SentAtSource,
    /// In the bank's order.
    pub checks: Vec<Check>,
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
    pub(crate) sent_at: SystemTime,
    pub(crate) sent_at_source: SentAtSource,
}

/// Checks `request` as the bank would, in the bank's order, and names the first failure.
pub fn diagnose(request: &RecordedRequest, options: &Options) -> Diagnosis {
    let (sent_at, sent_at_source) = match (options.sent_at, request.sent_at) {
        (Some(t), _) => (t, SentAtSource::Option),
        (None, Some(t)) => (t, SentAtSource::Recorded),
        (None, None) => (options.now, SentAtSource::Now),
    };
    let cx = Context {
        request,
        operation: crate::xs2a::operations::find_request(&request.method, request.path()),
        sent_at,
        sent_at_source,
    };
    let mut checks = Checks::default();
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
    let verdict = verdict(&checks);
    let response = request.response.as_ref().map(|r| {
        let asked = crate::lint::Asked::request(&request.method, &request.path_and_query)
            .with_request_id(request.header("X-Request-ID").map(str::trim));
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
        checks,
        verdict,
        response,
    }
}

fn verdict(checks: &[Check]) -> Verdict {
    let failing: Vec<&Check> = checks.iter().filter(|c| c.status == Status::Fail).collect();
    let Some(first) = failing.first() else {
        let warnings = checks.iter().filter(|c| c.status == Status::Warn).count();
        return Verdict {
            passed: true,
            cause: None,
            message: if warnings == 0 {
                "every check passes: the bank's checks accept this request".to_string()
            } else {
                format!("no check fails ({warnings} warning(s) above)")
            },
        };
    };
    let also = if failing.len() > 1 {
        let ids: Vec<&str> = failing[1..].iter().map(|c| c.id).collect();
        format!(" (also failing: {})", ids.join(", "))
    } else {
        String::new()
    };
    Verdict {
        passed: false,
        cause: Some(first.id),
        message: format!(
            "the bank refuses this request at {} ({}): {}{also}",
            first.id, first.rule, first.message
        ),
    }
}
