//! The flow of a session as the sequence diagram trainers draw by hand (issue 12, "Flow
//! view"): lanes TPP (the console) · ASPSP · PSU browser · callback listener, and one arrow
//! per step, labelled with the status, the header that matters and the rule of the
//! interface document it shows.
//!
//! [`Flow::from_history`] rebuilds it from recorded exchanges, so it shows what the console
//! saw: each request and answer; a `scaRedirect` in an answer becomes "the PSU opens the SCA
//! page" and "SCA at the ASPSP"; a `PSU-ID` (or `PSU-Corporate-ID`) that a later request
//! carries for the first time becomes "the ASPSP redirects the browser to
//! TPP-Redirect-URI" and "the callback hands the PSU-ID to the console". The browser's
//! steps inside the SCA pages (login, context, consent) are one arrow here; values such as
//! PSU-IDs are never in a label (the diagram goes on slides).
//!
//! Exported with `psd2-console flow --format mermaid|text` ([`Flow::to_mermaid`],
//! [`Flow::to_text`]).

use serde_json::Value;

use crate::client::history::HistoryEntry;

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

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// The path without the query (queries may carry dates and ids that clutter a slide).
fn path_only(path_and_query: &str) -> &str {
    path_and_query
        .split_once('?')
        .map_or(path_and_query, |(p, _)| p)
}

/// The first `tppMessages` code of an error body.
fn error_code(body: &Value) -> Option<String> {
    body.get("tppMessages")?
        .as_array()?
        .first()?
        .get("code")?
        .as_str()
        .map(str::to_string)
}

/// The status word of a body: `transactionStatus`, `consentStatus` or `scaStatus`.
fn status_word(body: &Value) -> Option<String> {
    ["transactionStatus", "consentStatus", "scaStatus"]
        .iter()
        .find_map(|k| body.get(*k).and_then(Value::as_str))
        .map(str::to_string)
}

fn has_sca_redirect(body: &Value) -> bool {
    body.get("_links")
        .and_then(|l| l.get("scaRedirect"))
        .is_some()
}

/// The rule of the interface document a request shows.
fn request_rule(entry: &HistoryEntry) -> &'static str {
    if header(&entry.request_headers, "PSU-Corporate-ID").is_some() {
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
    if has_sca_redirect(body) {
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
        let mut arrows = Vec::new();
        let mut known_psu: Option<String> = None;
        let mut known_corporate: Option<String> = None;
        let mut sca_open = false;
        for e in entries {
            let psu = header(&e.request_headers, "PSU-ID").map(str::to_string);
            let corporate = header(&e.request_headers, "PSU-Corporate-ID").map(str::to_string);
            let learned = (psu.is_some() && psu != known_psu)
                || (corporate.is_some() && corporate != known_corporate);
            if sca_open && learned {
                let what = if corporate.is_some() {
                    "psu-id, psu-corporate-id"
                } else {
                    "psu-id"
                };
                arrows.push(Arrow {
                    from: Lane::Aspsp,
                    to: Lane::Browser,
                    label: format!("302 to TPP-Redirect-URI with {what}"),
                    rule: Some("Resources: Redirect parameters after SCA"),
                    history_id: e.id,
                });
                arrows.push(Arrow {
                    from: Lane::Browser,
                    to: Lane::Callback,
                    label: "GET TPP-Redirect-URI".into(),
                    rule: Some("Authentication 11"),
                    history_id: e.id,
                });
                arrows.push(Arrow {
                    from: Lane::Callback,
                    to: Lane::Tpp,
                    label: format!("{what} learned"),
                    rule: Some("Authentication 12"),
                    history_id: e.id,
                });
                sca_open = false;
            }
            if psu.is_some() {
                known_psu = psu.clone();
            }
            if corporate.is_some() {
                known_corporate = corporate.clone();
            }
            let mut label = format!("{} {}", e.method, path_only(&e.path_and_query));
            let sent: Vec<&str> = ["PSU-ID", "PSU-Corporate-ID"]
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
            }
            let redirect = has_sca_redirect(&body);
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
                arrows.push(Arrow {
                    from: Lane::Browser,
                    to: Lane::Aspsp,
                    label: "SCA: login, context, consent".into(),
                    rule: Some("Authentication 11, 14"),
                    history_id: e.id,
                });
                sca_open = true;
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

/// The entries of the latest flow in `newest_first` (as [`crate::client::history::History::list`]
/// gives them): those sharing the newest entry's `TPP-Session-ID` (the document's SCA
/// session, "States and transitions"), oldest first; without that header, the newest entry
/// and the ones before it back to the first gap of more than `max_gap_seconds`.
pub fn latest_session(newest_first: &[HistoryEntry], max_gap_seconds: i64) -> Vec<HistoryEntry> {
    let Some(newest) = newest_first.first() else {
        return Vec::new();
    };
    let mut picked: Vec<HistoryEntry> =
        match header(&newest.request_headers, "TPP-Session-ID").map(str::to_string) {
            Some(session) => newest_first
                .iter()
                .filter(|e| header(&e.request_headers, "TPP-Session-ID") == Some(&session))
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
        .filter(|e| header(&e.request_headers, "TPP-Session-ID") == Some(session))
        .cloned()
        .collect();
    picked.reverse();
    picked
}
