//! The flow of a session as the sequence diagram trainers draw by hand (issue 12, "Flow
//! view"): lanes TPP (the console) · ASPSP · PSU browser · callback listener, and one arrow
//! per step, labelled with the status, the header that matters and the rule of the
//! interface document it shows.
//!
//! [`Flow::from_history`] rebuilds it from recorded exchanges, so it shows what the console
//! saw: each request and answer; a `scaRedirect` in an answer becomes "the PSU opens the SCA
//! page" and "SCA at the ASPSP"; a `PSU-ID` (or `PSU-Corporate-ID`) that a later request
//! carries for the first time becomes "the ASPSP redirects the browser to
//! TPP-Redirect-URI" and "the callback hands the PSU-ID to the console". Without more, the
//! browser's steps inside the SCA pages (login, context, consent) are one arrow; with the
//! [`BrowserStep`]s the embedded sandbox reported on its event stream
//! ([`Flow::from_history_and_steps`], recorded in the history beside the exchanges), each
//! page the PSU's browser opened or submitted is an arrow of its own. Values such as
//! PSU-IDs are never in a label (the diagram goes on slides).
//!
//! [`Timers`] are the clocks shown beside the live diagram (the console's flow screen):
//! the SCA session (1 hour), the consent (180 days) and the `Date` window (60 s).
//!
//! Exported with `psd2-console flow --format mermaid|text` ([`Flow::to_mermaid`],
//! [`Flow::to_text`]).

use serde::Deserialize;
use serde_json::Value;

use crate::client::history::HistoryEntry;
use crate::profile::{CONSENT_RENEWAL_DAYS, SCA_SESSION_SECS, SessionState};
use crate::xs2a::error::ErrorBody;
use crate::xs2a::headers::{self as h, find as header};
use crate::xs2a::links::{sca_redirect_link, sca_redirect_of};
use crate::xs2a::wire::StatusAnswer;

pub mod live;

/// How many recent history entries are looked through for the latest flow.
pub const HISTORY_WINDOW: usize = 500;
/// Without a TPP-Session-ID, a gap longer than this (seconds) ends the latest flow.
pub const GAP_SECONDS: i64 = 30 * 60;

/// The latest flow of `history` ([`latest_session`] over the newest [`HISTORY_WINDOW`]
/// entries, oldest first) and the browser steps stored since its first exchange.
///
/// Errors: SQLite's.
pub fn latest_flow(
    history: &crate::client::history::History,
) -> rusqlite::Result<(Vec<HistoryEntry>, Vec<BrowserStep>)> {
    let recent = history.list(None, HISTORY_WINDOW)?;
    let entries = latest_session(&recent, GAP_SECONDS);
    let steps = steps_of(history, &entries)?;
    Ok((entries, steps))
}

/// The browser steps stored since the first of `entries`.
///
/// Errors: SQLite's.
pub fn steps_of(
    history: &crate::client::history::History,
    entries: &[HistoryEntry],
) -> rusqlite::Result<Vec<BrowserStep>> {
    match entries.iter().map(|e| e.at).min() {
        Some(since) => history.browser_steps_since(since),
        None => Ok(Vec::new()),
    }
}

/// The `Date` window of the interface document (Authentication 4): a request's `Date` may
/// deviate from the ASPSP's clock by at most this many seconds.
pub const DATE_WINDOW_SECS: i64 = 60;

pub use crate::sandbox_events::BrowserStep;

impl BrowserStep {
    /// Whether this step belongs to the SCA of the `scaRedirect` link `href`.
    pub fn belongs_to(&self, href: &str) -> bool {
        let path = href.split(['?', '#']).next().unwrap_or(href);
        ["/sca/", "/payment-sca/"].iter().any(|p| {
            path.split_once(p)
                .is_some_and(|(_, rest)| rest.split('/').next() == Some(self.sca_id.as_str()))
        })
    }

    /// The arrow's label: what the browser did on the page, and the answer.
    fn label(&self) -> String {
        let what = match self.step.as_str() {
            "opened" => "GET SCA page",
            "login" => "POST login (customerNumber)",
            "context" => "POST context (private or corporate)",
            "consent" => "POST consent (accounts ticked)",
            "decision" => "POST approval",
            "cancel" => "POST cancel",
            other => other,
        };
        format!("{what} → {}", self.status)
    }

    /// The rule of the interface document the step shows.
    fn rule(&self) -> &'static str {
        match self.step.as_str() {
            "login" => "Authentication 14",
            "context" => "Authentication 12",
            "decision" => "Authentication 15",
            "cancel" => "Resources: Redirect parameters after SCA",
            _ => "Authentication 11",
        }
    }
}

/// A lane of the diagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lane {
    /// The console, acting as the TPP.
    Tpp,
    /// The bank (or the embedded sandbox).
    Aspsp,
    /// The PSU's browser.
    Browser,
    /// The console's SCA callback listener (`TPP-Redirect-URI`).
    Callback,
}

impl Lane {
    /// Every lane, left to right.
    pub const ALL: [Lane; 4] = [Lane::Tpp, Lane::Aspsp, Lane::Browser, Lane::Callback];

    /// Short name (a Mermaid participant id).
    pub fn id(self) -> &'static str {
        match self {
            Lane::Tpp => "TPP",
            Lane::Aspsp => "ASPSP",
            Lane::Browser => "Browser",
            Lane::Callback => "Callback",
        }
    }

    /// The lane's heading.
    pub fn title(self) -> &'static str {
        match self {
            Lane::Tpp => "TPP (console)",
            Lane::Aspsp => "ASPSP (bank)",
            Lane::Browser => "PSU browser",
            Lane::Callback => "Callback listener",
        }
    }
}

/// One arrow: who talks to whom, what, and which rule of the interface document it shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Arrow {
    /// Sender.
    pub from: Lane,
    /// Receiver.
    pub to: Lane,
    /// What travels, e.g. `POST /v1/bank-offered-consents` or `201 + scaRedirect`.
    pub label: String,
    /// The section of the interface document, e.g. `Authentication 11`.
    pub rule: Option<&'static str>,
    /// The history entry it comes from.
    pub history_id: i64,
}

/// A flow: its arrows in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Flow {
    /// In the order they happened.
    pub arrows: Vec<Arrow>,
}

/// The path without the query (queries may carry dates and ids that clutter a slide).
fn path_only(path_and_query: &str) -> &str {
    path_and_query
        .split_once('?')
        .map_or(path_and_query, |(p, _)| p)
}

/// The first `tppMessages` code of an error body ([`ErrorBody`]).
fn error_code(body: &Value) -> Option<String> {
    ErrorBody::deserialize(body)
        .ok()?
        .first_code()
        .map(str::to_string)
}

/// The status word of a body: `transactionStatus`, `consentStatus` or `scaStatus`
/// ([`StatusAnswer`]).
fn status_word(body: &Value) -> Option<String> {
    StatusAnswer::deserialize(body)
        .ok()?
        .word()
        .map(str::to_string)
}

/// The way back after SCA: the ASPSP redirects the browser to TPP-Redirect-URI carrying
/// `carried` (`psu-id`, `code …`), the browser calls the callback listener, which hands
/// `learned` to the console.
fn way_back(arrows: &mut Vec<Arrow>, carried: &str, learned: String, history_id: i64) {
    arrows.push(Arrow {
        from: Lane::Aspsp,
        to: Lane::Browser,
        label: format!("302 to TPP-Redirect-URI with {carried}"),
        rule: Some("Resources: Redirect parameters after SCA"),
        history_id,
    });
    arrows.push(Arrow {
        from: Lane::Browser,
        to: Lane::Callback,
        label: "GET TPP-Redirect-URI".into(),
        rule: Some("Authentication 11"),
        history_id,
    });
    arrows.push(Arrow {
        from: Lane::Callback,
        to: Lane::Tpp,
        label: learned,
        rule: Some("Authentication 12"),
        history_id,
    });
}

/// The rule of the interface document a request shows.
fn request_rule(entry: &HistoryEntry) -> &'static str {
    if header(&entry.request_headers, h::PSU_CORPORATE_ID).is_some() {
        "Authentication 12"
    } else if entry.path_and_query.starts_with("/v1/sandbox/") {
        "Sandbox management"
    } else if entry.method == "POST" && !entry.request_body.is_empty() {
        "Authentication 3, 9"
    } else {
        "Authentication 3"
    }
}

/// The rule an answer shows.
fn answer_rule(status: u16, body: &Value) -> Option<&'static str> {
    if sca_redirect_link(body).is_some() {
        Some("Authentication 11")
    } else if status >= 400 {
        Some("Errors")
    } else {
        None
    }
}

impl Flow {
    /// The flow of `entries` (oldest first, as they were sent); see the module docs for what
    /// becomes an arrow.
    pub fn from_history(entries: &[HistoryEntry]) -> Flow {
        Flow::from_history_and_steps(entries, &[])
    }

    /// [`Flow::from_history`] with the browser's steps on the SCA pages: the steps of each
    /// `scaRedirect` ([`BrowserStep::belongs_to`]) replace the one "SCA" arrow, and an
    /// outcome (success or failure) draws the redirect to the callback listener where it
    /// happened rather than at the next request.
    pub fn from_history_and_steps(entries: &[HistoryEntry], steps: &[BrowserStep]) -> Flow {
        let mut arrows = Vec::new();
        let mut known_psu: Option<String> = None;
        let mut known_corporate: Option<String> = None;
        let mut sca_open = false;
        // The browser steps already drew the way back to the callback listener.
        let mut callback_drawn = false;
        for e in entries {
            let psu = header(&e.request_headers, h::PSU_ID).map(str::to_string);
            let corporate = header(&e.request_headers, h::PSU_CORPORATE_ID).map(str::to_string);
            let learned = (psu.is_some() && psu != known_psu)
                || (corporate.is_some() && corporate != known_corporate);
            if sca_open && learned && !callback_drawn {
                let what = if corporate.is_some() {
                    "psu-id, psu-corporate-id"
                } else {
                    "psu-id"
                };
                way_back(&mut arrows, what, format!("{what} learned"), e.id);
                sca_open = false;
            }
            if psu.is_some() {
                known_psu = psu.clone();
            }
            if corporate.is_some() {
                known_corporate = corporate.clone();
            }
            let mut label = format!("{} {}", e.method, path_only(&e.path_and_query));
            let sent: Vec<&str> = [h::PSU_ID, h::PSU_CORPORATE_ID]
                .into_iter()
                .filter(|h| header(&e.request_headers, h).is_some())
                .collect();
            if !sent.is_empty() {
                label.push_str(&format!(" + {}", sent.join(", ")));
            }
            arrows.push(Arrow {
                from: Lane::Tpp,
                to: Lane::Aspsp,
                label,
                rule: Some(request_rule(e)),
                history_id: e.id,
            });
            let body: Value = serde_json::from_slice(&e.response_body).unwrap_or(Value::Null);
            let mut answer = e.status.to_string();
            if let Some(code) = error_code(&body) {
                answer.push_str(&format!(" {code}"));
            } else if let Some(word) = status_word(&body) {
                answer.push_str(&format!(" {word}"));
                // The one verdict (`xs2a::status`): a rejection says why, e.g. `ACCP`
                // (lack of funds in the interface document, not an acceptance).
                if let Some((_, v @ crate::xs2a::status::Verdict::Rejected(_))) =
                    crate::xs2a::status::verdict_of_body(&body)
                {
                    answer.push_str(&format!(" ({})", v.describe()));
                }
            }
            let redirect = sca_redirect_link(&body).is_some();
            if redirect {
                answer.push_str(" + scaRedirect");
            }
            arrows.push(Arrow {
                from: Lane::Aspsp,
                to: Lane::Tpp,
                label: answer,
                rule: answer_rule(e.status, &body),
                history_id: e.id,
            });
            if redirect {
                arrows.push(Arrow {
                    from: Lane::Tpp,
                    to: Lane::Browser,
                    label: "open scaRedirect".into(),
                    rule: Some("Authentication 11"),
                    history_id: e.id,
                });
                let href = sca_redirect_of(&body).unwrap_or_default();
                let mine: Vec<&BrowserStep> =
                    steps.iter().filter(|s| s.belongs_to(&href)).collect();
                sca_open = true;
                callback_drawn = false;
                if mine.is_empty() {
                    arrows.push(Arrow {
                        from: Lane::Browser,
                        to: Lane::Aspsp,
                        label: "SCA: login, context, consent".into(),
                        rule: Some("Authentication 11, 14"),
                        history_id: e.id,
                    });
                }
                for step in mine {
                    arrows.push(Arrow {
                        from: Lane::Browser,
                        to: Lane::Aspsp,
                        label: step.label(),
                        rule: Some(step.rule()),
                        history_id: e.id,
                    });
                    let Some(outcome) = &step.outcome else {
                        continue;
                    };
                    let carried = match (outcome.as_str(), &step.code) {
                        ("success", _) => "psu-id".to_string(),
                        (_, Some(code)) => format!("code {code}"),
                        _ => "an error".to_string(),
                    };
                    let learned = if outcome == "success" {
                        "psu-id learned".to_string()
                    } else {
                        format!("SCA failed: {carried}")
                    };
                    way_back(&mut arrows, &carried, learned, e.id);
                    callback_drawn = true;
                }
            }
        }
        Flow { arrows }
    }

    /// A Mermaid `sequenceDiagram` (paste into slides or Markdown). Rules are notes over
    /// the two lanes of their arrow.
    pub fn to_mermaid(&self) -> String {
        let mut out = String::from("sequenceDiagram\n");
        for lane in Lane::ALL {
            out.push_str(&format!(
                "    participant {} as {}\n",
                lane.id(),
                lane.title()
            ));
        }
        for a in &self.arrows {
            let dashes = if a.from == Lane::Aspsp && a.to == Lane::Tpp {
                "-->>"
            } else {
                "->>"
            };
            // Mermaid ends a message at a line break and reads `;` and `#` specially.
            let label = a.label.replace(['\n', ';', '#'], " ");
            out.push_str(&format!(
                "    {}{dashes}{}: {label}\n",
                a.from.id(),
                a.to.id()
            ));
            if let Some(rule) = a.rule {
                out.push_str(&format!(
                    "    Note over {},{}: {}\n",
                    a.from.id(),
                    a.to.id(),
                    rule.replace(['\n', ';', '#'], " ")
                ));
            }
        }
        out
    }

    /// Plain text, one numbered line per arrow: `3. ASPSP → TPP  401 CONSENT_EXPIRED
    /// + scaRedirect  [Authentication 11]`.
    pub fn to_text(&self) -> String {
        let width = self
            .arrows
            .iter()
            .map(|a| a.label.chars().count())
            .max()
            .unwrap_or(0);
        let mut out = String::new();
        for (i, a) in self.arrows.iter().enumerate() {
            let route = format!("{} → {}", a.from.id(), a.to.id());
            let rule = a.rule.map(|r| format!("  [{r}]")).unwrap_or_default();
            out.push_str(&format!(
                "{:>3}. {route:<19} {:<width$}{rule}\n",
                i + 1,
                a.label
            ));
        }
        out
    }
}

/// One clock beside the flow: what it counts, how much is left and of how much.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Timer {
    /// What it counts, e.g. `SCA session`.
    pub name: &'static str,
    /// The rule of the interface document.
    pub rule: &'static str,
    /// Seconds left at the time asked (0 or less: run out); `None` when it has not started.
    pub remaining_secs: Option<i64>,
    /// Its length in seconds.
    pub total_secs: i64,
}

impl Timer {
    /// `42m 10s left of 1h`, `expired 3d ago`, `not started`.
    pub fn describe(&self) -> String {
        let total = short_duration(self.total_secs);
        match self.remaining_secs {
            None => format!("not started ({total})"),
            Some(r) if r > 0 => format!("{} left of {total}", short_duration(r)),
            Some(r) => format!("expired {} ago", short_duration(-r)),
        }
    }
}

/// `1h`, `42m 10s`, `179d 23h`, `59s`: the two largest units.
pub fn short_duration(secs: i64) -> String {
    let secs = secs.max(0);
    let units = [(86_400, "d"), (3_600, "h"), (60, "m"), (1, "s")];
    let mut parts: Vec<(i64, &str)> = Vec::new();
    let mut rest = secs;
    for (size, name) in units {
        let n = rest / size;
        rest %= size;
        if n > 0 || !parts.is_empty() {
            parts.push((n, name));
        }
        if parts.len() == 2 {
            break;
        }
    }
    parts.retain(|(n, _)| *n > 0);
    if parts.is_empty() {
        return "0s".into();
    }
    parts
        .iter()
        .map(|(n, u)| format!("{n}{u}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The clocks of a flow at `now` (Unix seconds, the ASPSP's clock for an embedded
/// sandbox): the SCA session (1 hour from the last SCA, States and transitions: SCA
/// session state 1), the consent (180 days, SCA session state 4) from `session`, and the
/// `Date` window (60 s, Authentication 4) of the last request signed at `last_signed`.
pub fn timers(session: &SessionState, last_signed: Option<i64>, now: i64) -> [Timer; 3] {
    [
        Timer {
            name: "SCA session",
            rule: "States and transitions: SCA session state 1",
            remaining_secs: session.sca_remaining_secs(now),
            total_secs: SCA_SESSION_SECS,
        },
        Timer {
            name: "Consent",
            rule: "States and transitions: SCA session state 4",
            remaining_secs: session
                .consent_at
                .map(|t| t + CONSENT_RENEWAL_DAYS * 86_400 - now),
            total_secs: CONSENT_RENEWAL_DAYS * 86_400,
        },
        Timer {
            name: "Date window",
            rule: "Authentication 4",
            remaining_secs: last_signed.map(|t| t + DATE_WINDOW_SECS - now),
            total_secs: DATE_WINDOW_SECS,
        },
    ]
}

/// The entries of the latest flow in `newest_first` (as [`crate::client::history::History::list`]
/// gives them): those sharing the newest entry's `TPP-Session-ID` (the document's SCA
/// session, "States and transitions"), oldest first; without that header, the newest entry
/// and the ones before it back to the first gap of more than `max_gap_seconds`.
pub fn latest_session(newest_first: &[HistoryEntry], max_gap_seconds: i64) -> Vec<HistoryEntry> {
    let Some(newest) = newest_first.first() else {
        return Vec::new();
    };
    let mut picked: Vec<HistoryEntry> =
        match header(&newest.request_headers, h::TPP_SESSION_ID).map(str::to_string) {
            Some(session) => newest_first
                .iter()
                .filter(|e| header(&e.request_headers, h::TPP_SESSION_ID) == Some(&session))
                .cloned()
                .collect(),
            None => {
                let mut run = vec![newest.clone()];
                for pair in newest_first.windows(2) {
                    if pair[0].at - pair[1].at > max_gap_seconds {
                        break;
                    }
                    run.push(pair[1].clone());
                }
                run
            }
        };
    picked.reverse();
    picked
}

/// The entries with `TPP-Session-ID` `session`, oldest first.
pub fn session(newest_first: &[HistoryEntry], session: &str) -> Vec<HistoryEntry> {
    let mut picked: Vec<HistoryEntry> = newest_first
        .iter()
        .filter(|e| header(&e.request_headers, h::TPP_SESSION_ID) == Some(session))
        .cloned()
        .collect();
    picked.reverse();
    picked
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(sca_id: &str, name: &str, status: u16, outcome: Option<&str>) -> BrowserStep {
        BrowserStep {
            at: 0,
            sca_id: sca_id.into(),
            step: name.into(),
            status,
            outcome: outcome.map(str::to_string),
            code: outcome
                .filter(|o| *o == "failure")
                .map(|_| "SCA_FAILED".into()),
        }
    }

    #[test]
    fn durations_show_their_two_largest_units() {
        assert_eq!(short_duration(3600), "1h");
        assert_eq!(short_duration(2530), "42m 10s");
        assert_eq!(short_duration(179 * 86_400 + 23 * 3600 + 5), "179d 23h");
        assert_eq!(short_duration(59), "59s");
        assert_eq!(short_duration(0), "0s");
        assert_eq!(short_duration(-5), "0s");
    }

    #[test]
    fn timers_count_from_the_session_state_and_the_last_signing_time() {
        let session = SessionState {
            sca_completed_at: Some(1_000),
            consent_at: Some(1_000),
            ..SessionState::default()
        };
        let [sca, consent, date] = timers(&session, Some(1_000), 1_030);
        assert_eq!(sca.remaining_secs, Some(SCA_SESSION_SECS - 30));
        assert_eq!(sca.describe(), "59m 30s left of 1h");
        assert_eq!(consent.remaining_secs, Some(180 * 86_400 - 30));
        assert_eq!(date.describe(), "30s left of 1m");
        let [sca, _, date] = timers(&session, Some(1_000), 1_000 + 2 * 3600);
        assert_eq!(sca.describe(), "expired 1h ago");
        assert!(date.remaining_secs.unwrap() < 0);
        let [sca, consent, date] = timers(&SessionState::default(), None, 5);
        assert_eq!(sca.describe(), "not started (1h)");
        assert_eq!(consent.remaining_secs, None);
        assert_eq!(date.remaining_secs, None);
    }

    #[test]
    fn a_step_belongs_to_the_sca_of_its_redirect_path_only() {
        let s = step("abc", "opened", 200, None);
        assert!(s.belongs_to("http://127.0.0.1:1/sca/abc"));
        assert!(s.belongs_to("http://127.0.0.1:1/payment-sca/abc?x=1"));
        assert!(!s.belongs_to("http://127.0.0.1:1/sca/abcd"));
        assert!(!s.belongs_to("http://127.0.0.1:1/sca/other"));
    }

    #[test]
    fn a_failed_sca_is_drawn_back_to_the_callback_with_its_code() {
        let entry = HistoryEntry {
            id: 1,
            method: "POST".into(),
            path_and_query: "/v1/bank-offered-consents".into(),
            status: 201,
            response_body: br#"{"consentStatus":"received","_links":{"scaRedirect":{"href":"http://h/sca/abc"}}}"#.to_vec(),
            ..HistoryEntry::default()
        };
        let steps = [
            step("abc", "opened", 200, None),
            step("abc", "cancel", 302, Some("failure")),
            step("zzz", "login", 200, None),
        ];
        let f = Flow::from_history_and_steps(&[entry], &steps);
        let labels: Vec<&str> = f.arrows.iter().map(|a| a.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "POST /v1/bank-offered-consents",
                "201 received + scaRedirect",
                "open scaRedirect",
                "GET SCA page → 200",
                "POST cancel → 302",
                "302 to TPP-Redirect-URI with code SCA_FAILED",
                "GET TPP-Redirect-URI",
                "SCA failed: code SCA_FAILED",
            ]
        );
    }
}
