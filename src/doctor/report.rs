//! The `doctor` command's renderings of a [`Diagnosis`]: text (one line per check, then the
//! verdict) and a JSON document.

use super::{AnswerCause, Diagnosis, SentAtSource, Status};

/// One line per check (`✔`/`✘`/`⚠`, id, message, `[rule]`) after a line naming the request,
/// and a last line `verdict: ...` naming the cause. Control characters of the recording
/// (method, path, header values in messages) are escaped
/// ([`crate::terminal::escape_controls`]): each line stays one line.
pub fn text(d: &Diagnosis) -> String {
    let width = d.checks.iter().map(|c| c.id.len()).max().unwrap_or(0);
    let when = match d.sent_at_source {
        SentAtSource::Option => "--sent-at",
        SentAtSource::Recorded => "recorded",
        SentAtSource::Now => "now",
    };
    // Text from the recording stays on its line, control characters escaped.
    let esc = crate::terminal::escape_controls;
    let mut out = format!(
        "{} {} ({}), sent {} ({when})\n",
        esc(&d.method),
        esc(&d.path_and_query),
        esc(&d.source),
        d.sent_at
    );
    if let Some(o) = d.clock_offset_secs {
        out.push_str(&format!(
            "a sandbox clock offset was in effect: the request was signed at the sandbox's \
             clock, {o:+} s from real time{}; Date and the certificate are judged at the \
             sandbox's time\n",
            d.signed_at
                .as_ref()
                .map(|s| format!(" (signed for {s})"))
                .unwrap_or_default()
        ));
    }
    for c in &d.checks {
        out.push_str(&format!(
            "{} {:width$}  {}  [{}]\n",
            c.status.mark(),
            c.id,
            esc(&c.message),
            c.rule
        ));
    }
    if let Some(r) = &d.response {
        out.push_str(&format!(
            "answer {} (Berlin Group 1.3.11 schemas and the document's response rules): {}\n",
            r.status, r.summary
        ));
        for f in &r.findings {
            out.push_str(&format!("  {}\n", esc(f)));
        }
    }
    let refused = d
        .verdict
        .answer
        .as_ref()
        .is_some_and(|a| a.cause != AnswerCause::Accepted);
    let mark = match (d.verdict.passed, refused) {
        (false, _) => Status::Fail.mark(),
        // No check fails, but the bank refused: the cause lies elsewhere.
        (true, true) => Status::Warn.mark(),
        (true, false) => Status::Pass.mark(),
    };
    out.push_str(&format!("verdict: {mark} {}\n", esc(&d.verdict.message)));
    out
}

/// The diagnosis as a JSON document: `source`, `method`, `path_and_query`, `operation`,
/// `sent_at`, `sent_at_source`, `signed_at` (IMF-fixdate or null), `clock_offset_secs`
/// (the sandbox clock offset applied, or null), `checks` (`[{id, status, rule, message}]`, status `pass`,
/// `fail` or `warn`), `verdict` (`{passed, cause, message, answer}`, `answer` being
/// `{status, code, text, cause}` or null) and `response` (`{status,
/// summary, findings}` or null), pretty-printed.
///
/// Errors: serde_json's (not expected for this shape).
pub fn json(d: &Diagnosis) -> Result<String, serde_json::Error> {
    serde_json::to_string_pretty(d)
}
