//! Presenter mode (issue 12, item 4): a trainer projects the console in front of a room.
//! `--presenter` or `P` switches it on and off; while it is on
//!
//! - secrets and personal data are masked **on screen** by [`ScreenMask`], at render time:
//!   every view passes the text it draws through [`ScreenMask::text`] (or
//!   [`ScreenMask::header`] for a header value). Stored data (the response, the history,
//!   exports, the clipboard) is never changed;
//! - the high-contrast theme is shown (the theme before comes back when it is switched off);
//! - a step line says where the flow stands in words ([`step_text`]);
//! - the console's panes stack or collapse to fit 80×24 and 100×30 (see `ui.rs`).
//!
//! What is masked: the `signature="…"` bytes of a `Signature` header and the base64 of
//! `TPP-Signature-Certificate` are hidden ([`HIDDEN`]); the PSU's identifiers (`PSU-ID`,
//! `PSU-Corporate-ID`, `X-PSU-IDENTITY`, the `psu-id` query parameter of the SCA callback,
//! the `psuId` JSON field) are shortened to their first two characters ([`shorten`]);
//! sandbox customer numbers (`customerNumber`, `holderCustomerNumber`, mock national ids
//! of the interface document's "Sandbox customer") only when the config file asks for it
//! (`[presenter] mask_customer_numbers = true`), since the trainer types them into the
//! sandbox's SCA page.

use std::borrow::Cow;

use super::theme::Theme;
use crate::xs2a::headers as h;

/// The theme presenter mode shows (a user theme of that name replaces the built-in one).
pub const PRESENTER_THEME: &str = "high-contrast";

/// What replaces a secret (signature bytes, certificate base64) on screen.
pub const HIDDEN: &str = "[masked]";

/// Headers whose values are secrets: hidden (the `Signature` header keeps its structure,
/// only its `signature="…"` bytes are hidden).
pub const SECRET_HEADERS: [&str; 2] = [h::SIGNATURE, h::TPP_SIGNATURE_CERTIFICATE];

/// Headers whose values identify the PSU, or bind an SCA flow to this console: shortened.
/// `TPP-Session-ID` is what the callback listener checks a callback against
/// ([`crate::redirect`]): on a projected screen in room mode anybody in the room could read
/// it and post a forged callback before the PSU's browser does.
pub const PERSONAL_HEADERS: [&str; 4] = [
    h::PSU_ID,
    h::PSU_CORPORATE_ID,
    h::X_PSU_IDENTITY,
    h::TPP_SESSION_ID,
];

/// Where a personal value follows a key inside a text: `(key, kind)`.
const PERSONAL_KEYS: [(&str, KeyKind); 6] = [
    ("psu-id=", KeyKind::Query),
    ("psu-corporate-id=", KeyKind::Query),
    ("\"psuId\"", KeyKind::Json),
    ("\"psuCorporateId\"", KeyKind::Json),
    ("\"psu-id\"", KeyKind::Json),
    ("\"psu-corporate-id\"", KeyKind::Json),
];

/// JSON fields holding a sandbox customer number (interface document, Resources:
/// "Sandbox customer"; `POST /v1/sandbox/agreements`).
const CUSTOMER_NUMBER_KEYS: [&str; 2] = ["\"customerNumber\"", "\"holderCustomerNumber\""];

/// Known values shorter than this are not searched for in free text (a one-character
/// PSU-ID would mask every occurrence of that character).
const MIN_KNOWN_LEN: usize = 3;

/// How a keyed value is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum KeyKind {
    /// `key=value` up to `&`, `#`, a quote or white space (a URL's query).
    Query,
    /// `"key": "value"` (pretty or compact JSON).
    Json,
    /// The key ends with its opening quote (`signature="`): the value up to the next `"`.
    Quoted,
}

/// What presenter mode needs to remember: whether it is on, the customer-number setting,
/// and the theme to go back to.
#[derive(Debug, Clone, Default)]
pub struct Presenter {
    /// Presenter mode is on.
    pub(crate) on: bool,
    /// Mask sandbox customer numbers too (config file, `[presenter]
    /// mask_customer_numbers`).
    pub(crate) mask_customer_numbers: bool,
    /// The theme shown before presenter mode switched to high contrast.
    pub(crate) theme_before: Option<Theme>,
}

/// The one masking function of presenter mode, with what it knows of the session: the
/// PSU's identifiers and the secrets of the request on screen, searched for in any text
/// drawn. Built for each frame from the console's state; off, it returns every text as it
/// is (borrowed, no copy).
#[derive(Debug, Clone, Default)]
pub struct ScreenMask {
    on: bool,
    customer_numbers: bool,
    /// Personal values (PSU-ID, PSU-Corporate-ID) known to the console, longest first.
    personal: Vec<String>,
    /// Secret values (signature bytes, certificate base64) known to the console.
    secrets: Vec<String>,
}

impl ScreenMask {
    /// A mask that changes nothing.
    pub fn off() -> Self {
        ScreenMask::default()
    }

    /// A mask that is on; `customer_numbers`: sandbox customer numbers are shortened too.
    pub fn on(customer_numbers: bool) -> Self {
        ScreenMask {
            on: true,
            customer_numbers,
            ..ScreenMask::default()
        }
    }

    /// Whether it masks anything.
    pub fn is_on(&self) -> bool {
        self.on
    }

    /// Adds a personal value (a PSU-ID) to shorten wherever it appears.
    pub fn know_personal(&mut self, value: &str) {
        let v = value.trim();
        if self.on && v.chars().count() >= MIN_KNOWN_LEN && !self.personal.iter().any(|p| p == v) {
            self.personal.push(v.to_string());
            self.personal.sort_by_key(|p| std::cmp::Reverse(p.len()));
        }
    }

    /// Adds a secret value (signature bytes, certificate base64) to hide wherever it
    /// appears.
    pub fn know_secret(&mut self, value: &str) {
        let v = value.trim();
        if self.on && v.chars().count() >= MIN_KNOWN_LEN && !self.secrets.iter().any(|s| s == v) {
            self.secrets.push(v.to_string());
            self.secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        }
    }

    /// Learns the secrets and personal values of the headers of a request: the values of
    /// [`PERSONAL_HEADERS`], the certificate and the signature bytes.
    pub fn know_headers(&mut self, headers: &[(String, String)]) {
        for (name, value) in headers {
            if is_one_of(name, &PERSONAL_HEADERS) {
                self.know_personal(value);
            } else if name.eq_ignore_ascii_case(h::TPP_SIGNATURE_CERTIFICATE) {
                self.know_secret(value);
            } else if name.eq_ignore_ascii_case(h::SIGNATURE)
                && let Some(bytes) = signature_bytes(value)
            {
                self.know_secret(bytes);
            }
        }
    }

    /// `value` of header `name` as shown: secrets hidden, personal values shortened, other
    /// values through [`ScreenMask::text`].
    pub fn header<'a>(&self, name: &str, value: &'a str) -> Cow<'a, str> {
        if !self.on {
            return Cow::Borrowed(value);
        }
        let name = name.trim();
        if name.eq_ignore_ascii_case(h::TPP_SIGNATURE_CERTIFICATE) {
            return Cow::Owned(hide(value));
        }
        if name.eq_ignore_ascii_case(h::SIGNATURE) {
            return Cow::Owned(hide_signature_bytes(value));
        }
        if is_one_of(name, &PERSONAL_HEADERS) {
            return Cow::Owned(shorten(value));
        }
        self.text(value)
    }

    /// A personal value shown on its own (the status bar's PSU-ID): shortened.
    pub fn personal<'a>(&self, value: &'a str) -> Cow<'a, str> {
        if self.on {
            Cow::Owned(shorten(value))
        } else {
            Cow::Borrowed(value)
        }
    }

    /// Any text drawn (one line or several): a `Name: value` line of a secret or personal
    /// header is masked as [`ScreenMask::header`]; `signature="…"` bytes are hidden; the
    /// known secrets are hidden and the known personal values shortened wherever they
    /// appear; so are the values of `psu-id=` (query) and `"psuId"` (JSON), and with the
    /// setting, of `"customerNumber"`.
    pub fn text<'a>(&self, s: &'a str) -> Cow<'a, str> {
        if !self.on || s.is_empty() {
            return Cow::Borrowed(s);
        }
        if s.contains('\n') {
            let lines: Vec<Cow<str>> = s.split('\n').map(|l| self.line(l)).collect();
            if lines.iter().all(|l| matches!(l, Cow::Borrowed(_))) {
                return Cow::Borrowed(s);
            }
            return Cow::Owned(lines.join("\n"));
        }
        self.line(s)
    }

    fn line<'a>(&self, s: &'a str) -> Cow<'a, str> {
        // `Name: value` (request and response headers, the signing string, the history's
        // detail lines).
        let lead = s.len() - s.trim_start().len();
        if let Some(colon) = s[lead..].find(':') {
            let name = &s[lead..lead + colon];
            if !name.contains(' ')
                && (is_one_of(name, &SECRET_HEADERS) || is_one_of(name, &PERSONAL_HEADERS))
            {
                let rest = &s[lead + colon + 1..];
                let value = rest.trim_start();
                let gap = &rest[..rest.len() - value.len()];
                return Cow::Owned(format!(
                    "{}{gap}{}",
                    &s[..=lead + colon],
                    self.header(name, value)
                ));
            }
        }
        let mut out = Cow::Borrowed(s);
        if let Some(masked) = replace_keyed(&out, "signature=\"", KeyKind::Quoted, hide_if_long) {
            out = Cow::Owned(masked);
        }
        for secret in &self.secrets {
            if out.contains(secret.as_str()) {
                out = Cow::Owned(out.replace(secret.as_str(), HIDDEN));
            }
        }
        for value in &self.personal {
            if out.contains(value.as_str()) {
                out = Cow::Owned(out.replace(value.as_str(), &shorten(value)));
            }
        }
        for (key, kind) in PERSONAL_KEYS {
            if let Some(masked) = replace_keyed(&out, key, kind, shorten) {
                out = Cow::Owned(masked);
            }
        }
        if self.customer_numbers {
            for key in CUSTOMER_NUMBER_KEYS {
                if let Some(masked) = replace_keyed(&out, key, KeyKind::Json, shorten) {
                    out = Cow::Owned(masked);
                }
            }
        }
        out
    }
}

/// Whether `name` is one of `names` (case-insensitive, as HTTP header names).
fn is_one_of(name: &str, names: &[&str]) -> bool {
    names.iter().any(|n| n.eq_ignore_ascii_case(name.trim()))
}

/// A personal value shortened to its first two characters and `…` (`8c1d3f0e-…` →
/// `8c…`); a value of two characters or less becomes `…`.
pub fn shorten(value: &str) -> String {
    let v = value.trim();
    if v.ends_with('…') && v.chars().count() <= 3 {
        return v.to_string();
    }
    if v.chars().count() <= 2 {
        return "…".to_string();
    }
    let head: String = v.chars().take(2).collect();
    format!("{head}…")
}

/// A secret as shown: [`HIDDEN`] (an empty value stays empty).
fn hide(value: &str) -> String {
    if value.trim().is_empty() {
        String::new()
    } else {
        HIDDEN.to_string()
    }
}

/// The `signature="…"` bytes hidden unless they are already a placeholder (`<signature>`,
/// `[redacted]`) or empty.
fn hide_if_long(v: &str) -> String {
    if v.is_empty() || v.starts_with('<') || v.starts_with('[') {
        v.to_string()
    } else {
        HIDDEN.to_string()
    }
}

/// A `Signature` header value with its `signature="…"` bytes hidden; keyId, algorithm and
/// the list of signed headers stay (they are what a trainer explains). A value that is not
/// of that form is hidden whole.
fn hide_signature_bytes(value: &str) -> String {
    match replace_keyed(value, "signature=\"", KeyKind::Quoted, hide_if_long) {
        Some(masked) => masked,
        None if value.contains("signature=\"") => value.to_string(),
        None if value.starts_with('[') || value.starts_with('<') => value.to_string(),
        None => hide(value),
    }
}

/// The bytes of `signature="…"` in a `Signature` header value.
fn signature_bytes(value: &str) -> Option<&str> {
    let lower = value.to_ascii_lowercase();
    let start = lower.find("signature=\"")? + "signature=\"".len();
    let len = value[start..].find('"')?;
    Some(&value[start..start + len])
}

/// `s` with the values after `key` replaced by `f(value)` (ASCII case ignored): for
/// [`KeyKind::Query`] up to `&`, `#`, a quote or white space; for [`KeyKind::Json`] the
/// string after `key`, `:` and `"`; for [`KeyKind::Quoted`] up to the next `"` (a value
/// never closed is left as it is). `None` when nothing changed.
fn replace_keyed(s: &str, key: &str, kind: KeyKind, f: impl Fn(&str) -> String) -> Option<String> {
    let lower = s.to_ascii_lowercase();
    let key = key.to_ascii_lowercase();
    let mut out = String::new();
    let mut pos = 0;
    let mut changed = false;
    while let Some(i) = lower[pos..].find(&key) {
        let after = pos + i + key.len();
        let (from, to) = match kind {
            KeyKind::Query => {
                // Not the tail of a longer parameter name (`x-psu-id=`).
                let start = pos + i;
                if start > 0 && !matches!(s.as_bytes()[start - 1], b'?' | b'&' | b'#' | b' ') {
                    out.push_str(&s[pos..after]);
                    pos = after;
                    continue;
                }
                let len = s[after..]
                    .find(|c: char| matches!(c, '&' | '#' | '"' | '\'') || c.is_whitespace())
                    .unwrap_or(s.len() - after);
                (after, after + len)
            }
            KeyKind::Json => {
                let rest = &s[after..];
                let t = rest.trim_start();
                let Some(t2) = t.strip_prefix(':') else {
                    out.push_str(&s[pos..after]);
                    pos = after;
                    continue;
                };
                let t3 = t2.trim_start();
                let Some(t4) = t3.strip_prefix('"') else {
                    out.push_str(&s[pos..after]);
                    pos = after;
                    continue;
                };
                let from = s.len() - t4.len();
                let len = t4.find('"').unwrap_or(t4.len());
                (from, from + len)
            }
            KeyKind::Quoted => match s[after..].find('"') {
                Some(len) => (after, after + len),
                None => break,
            },
        };
        let value = &s[from..to];
        let masked = if value.is_empty() {
            String::new()
        } else {
            f(value)
        };
        changed |= masked != value;
        out.push_str(&s[pos..from]);
        out.push_str(&masked);
        pos = to;
    }
    if !changed {
        return None;
    }
    out.push_str(&s[pos..]);
    Some(out)
}

/// What the step line says, from what the console knows ([`step_text`]).
#[derive(Debug, Clone, Default)]
pub struct StepFacts<'a> {
    /// Title of the selected operation.
    pub operation: &'a str,
    /// A request is in flight.
    pub sending: bool,
    /// The last response asked for SCA and no callback has come yet.
    pub sca_waiting: bool,
    /// SCA completed since the last send.
    pub sca_done: bool,
    /// "payment <id>" whose status is being read after SCA.
    pub status_read: Option<String>,
    /// What that status read found ("payment … approved: ACSC").
    pub outcome: Option<&'a str>,
    /// The last response: its status code, status text and operation title.
    pub response: Option<(u16, String, &'a str)>,
    /// The last send failed without a response (the error).
    pub failed: Option<&'a str>,
    /// The console knows a PSU-ID (from an SCA of a consent, an account read or a PSU
    /// registration).
    pub psu_known: bool,
    /// The selected operation reads account information, i.e. works under a consent (AIS
    /// group); only then does the line speak of a consent.
    pub consent_operation: bool,
    /// The same for the operation of the last response.
    pub consent_response: bool,
}

/// The step of the flow in words, for the presenter's step line, e.g. "Step: waiting for
/// the PSU to complete SCA in the browser", "Step: consent valid — list accounts".
///
/// It says only what the screen shows: "again" only for the operation whose answer asked
/// for the SCA (not for one never sent), and "consent valid" only around account
/// information (a payment, a basket or a PSU registration is no consent: "PSU-ID known").
pub fn step_text(f: &StepFacts) -> String {
    let answered = |op: &str| matches!(&f.response, Some((_, _, o)) if *o == op);
    let body = if f.sending {
        format!("sending {} — waiting for the bank's answer", f.operation)
    } else if let Some(what) = &f.status_read {
        format!("SCA complete — reading the status of {what}")
    } else if let Some(outcome) = f.outcome.filter(|_| !f.sca_done) {
        // A payment's or basket's status after its SCA; a consent's SCA (`sca_done`) goes
        // on to the guidance below: the room sends the account read next.
        format!("SCA complete — {outcome}")
    } else if f.sca_done {
        let done = if f.consent_response {
            "SCA complete, consent valid"
        } else {
            "SCA complete, PSU-ID known"
        };
        match (answered(f.operation), f.consent_response) {
            (true, true) => format!("{done} — send {} again, now with the PSU-ID", f.operation),
            (true, false) => format!("{done} — choose the next request; it carries the PSU-ID"),
            (false, _) => format!("{done} — send {}, now with the PSU-ID", f.operation),
        }
    } else if f.sca_waiting {
        "waiting for the PSU to complete SCA in the browser (scan the code or open the link)"
            .to_string()
    } else if let Some(e) = f.failed {
        format!("no answer from the bank — {e}")
    } else if let Some((status, text, op)) = &f.response {
        match status {
            200..=299 if f.psu_known && f.consent_response => {
                format!("{op} answered {text} — consent valid")
            }
            200..=299 => format!("{op} answered {text}"),
            401 | 403 => format!("{op} refused: {text} — read the tppMessages"),
            _ => format!("{op} answered {text} — read the tppMessages"),
        }
    } else if f.psu_known && f.consent_operation {
        format!("consent valid — {}", first_lower(f.operation))
    } else if f.psu_known {
        format!("PSU-ID known — {}", first_lower(f.operation))
    } else {
        format!(
            "no PSU yet — send {}: the bank asks for SCA first",
            f.operation
        )
    };
    format!("Step: {body}")
}

/// `s` with its first letter in lower case ("List accounts" → "list accounts").
fn first_lower(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_lowercase().chain(c).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PSU: &str = "8c1d3f0e-5b7a-4c2e-9f10-3a6b2d4e5f60";

    fn mask() -> ScreenMask {
        let mut m = ScreenMask::on(false);
        m.know_personal(PSU);
        m
    }

    #[test]
    fn off_changes_nothing_and_copies_nothing() {
        let m = ScreenMask::off();
        let s = format!("PSU-ID: {PSU}");
        assert!(matches!(m.text(&s), Cow::Borrowed(_)));
        assert_eq!(
            m.header("Signature", "keyId=\"x\",signature=\"abc\""),
            "keyId=\"x\",signature=\"abc\""
        );
        assert_eq!(m.personal(PSU), PSU);
    }

    #[test]
    fn personal_values_are_shortened_to_two_characters() {
        assert_eq!(shorten(PSU), "8c…");
        assert_eq!(shorten("ab"), "…");
        assert_eq!(shorten("8c…"), "8c…", "shortening twice changes nothing");
        let m = mask();
        assert_eq!(m.header("psu-id", PSU), "8c…");
        assert_eq!(m.header("PSU-Corporate-ID", "corp-4711"), "co…");
        assert_eq!(m.header("X-PSU-IDENTITY", "01010012356"), "01…");
        assert_eq!(
            m.header("TPP-Session-ID", "4f0c2a9e-1b7d-4c3a-9e2f-6d5b8a7c9e01"),
            "4f…"
        );
        assert_eq!(m.personal(PSU), "8c…");
    }

    #[test]
    fn header_lines_of_any_indent_are_masked() {
        let m = ScreenMask::on(false);
        assert_eq!(m.text(&format!("  PSU-ID: {PSU}")), "  PSU-ID: 8c…");
        assert_eq!(m.text(&format!("psu-id: {PSU}")), "psu-id: 8c…");
        assert_eq!(
            m.text("TPP-Signature-Certificate: MIIDazCCAlOgAwIBAgIUabc"),
            "TPP-Signature-Certificate: [masked]"
        );
        // A header that is neither stays.
        assert_eq!(m.text("X-Request-ID: 1234"), "X-Request-ID: 1234");
        // Prose with a colon is not a header line.
        assert_eq!(m.text("Note: nothing here"), "Note: nothing here");
    }

    #[test]
    fn signature_bytes_are_hidden_and_the_structure_stays() {
        let m = ScreenMask::on(false);
        let sig = "keyId=\"SN=1A,CA=CN=Test\",algorithm=\"rsa-sha256\",headers=\"digest x-request-id\",signature=\"c2lnbmF0dXJlYnl0ZXM=\"";
        let shown = m.header("Signature", sig);
        assert_eq!(
            shown,
            "keyId=\"SN=1A,CA=CN=Test\",algorithm=\"rsa-sha256\",headers=\"digest x-request-id\",signature=\"[masked]\""
        );
        assert_eq!(
            m.text(&format!("Signature: {sig}")),
            format!("Signature: {shown}")
        );
        // In free text (the inspector's wrapped header) too, and placeholders stay.
        assert_eq!(m.text("x,signature=\"abcdef\""), "x,signature=\"[masked]\"");
        assert_eq!(
            m.text("signature=\"<signature>\""),
            "signature=\"<signature>\""
        );
        assert_eq!(m.header("Signature", "[redacted]"), "[redacted]");
    }

    #[test]
    fn known_values_are_masked_anywhere() {
        let mut m = ScreenMask::on(false);
        m.know_headers(&[
            ("PSU-ID".into(), PSU.into()),
            ("TPP-Signature-Certificate".into(), "MIIBcert".into()),
            (
                "Signature".into(),
                "keyId=\"k\",signature=\"Zm9vYmFy\"".into(),
            ),
        ]);
        assert_eq!(
            m.text(&format!("SCA complete: PSU-ID {PSU} (PRIVATE) stored")),
            "SCA complete: PSU-ID 8c… (PRIVATE) stored"
        );
        assert_eq!(
            m.text("cert MIIBcert sig Zm9vYmFy"),
            "cert [masked] sig [masked]"
        );
        // Short values are not searched for.
        m.know_personal("ab");
        assert_eq!(m.text("abc"), "abc");
    }

    #[test]
    fn psu_data_in_urls_and_json_is_shortened_and_other_ids_stay() {
        let m = ScreenMask::on(false);
        assert_eq!(
            m.text("http://127.0.0.1:1/callback?state=s1&psu-id=abcdef&context=PRIVATE"),
            "http://127.0.0.1:1/callback?state=s1&psu-id=ab…&context=PRIVATE"
        );
        // The authorisation id of a scaRedirect stays: the link must keep working.
        let sca = "http://127.0.0.1:1/sca/4f1c2a8e-0b7d-4e61-9a3c-5d2e8f7b6a10";
        assert_eq!(m.text(sca), sca);
        assert_eq!(m.text("  \"psuId\": \"abcdef\","), "  \"psuId\": \"ab…\",");
        assert_eq!(m.text("{\"psuId\":\"abcdef\"}"), "{\"psuId\":\"ab…\"}");
        // Not a longer parameter name ending the same way.
        assert_eq!(m.text("?x-psu-id=abcdef"), "?x-psu-id=abcdef");
    }

    #[test]
    fn customer_numbers_only_with_the_setting() {
        let line = "  \"customerNumber\": \"01010012356\",";
        assert_eq!(ScreenMask::on(false).text(line), line);
        assert_eq!(
            ScreenMask::on(true).text(line),
            "  \"customerNumber\": \"01…\","
        );
        assert_eq!(
            ScreenMask::on(true).text("{\"holderCustomerNumber\":\"31125461118\"}"),
            "{\"holderCustomerNumber\":\"31…\"}"
        );
    }

    #[test]
    fn several_lines_are_masked_line_by_line() {
        let m = ScreenMask::on(false);
        let s = format!("(request-target): get /v1/accounts\npsu-id: {PSU}\ndate: x");
        assert_eq!(
            m.text(&s),
            "(request-target): get /v1/accounts\npsu-id: 8c…\ndate: x"
        );
    }

    #[test]
    fn the_step_is_said_in_words() {
        let base = StepFacts {
            operation: "List accounts",
            consent_operation: true,
            ..StepFacts::default()
        };
        assert_eq!(
            step_text(&base),
            "Step: no PSU yet — send List accounts: the bank asks for SCA first"
        );
        let waiting = StepFacts {
            sca_waiting: true,
            ..base.clone()
        };
        assert_eq!(
            step_text(&waiting),
            "Step: waiting for the PSU to complete SCA in the browser (scan the code or open the link)"
        );
        let valid = StepFacts {
            psu_known: true,
            ..base.clone()
        };
        assert_eq!(step_text(&valid), "Step: consent valid — list accounts");
        let sending = StepFacts {
            sending: true,
            sca_waiting: true,
            ..base.clone()
        };
        assert!(step_text(&sending).starts_with("Step: sending List accounts"));
        let answered = StepFacts {
            response: Some((200, "200 OK".into(), "List accounts")),
            psu_known: true,
            consent_response: true,
            ..base.clone()
        };
        assert_eq!(
            step_text(&answered),
            "Step: List accounts answered 200 OK — consent valid"
        );
    }

    #[test]
    fn the_step_says_again_only_for_the_operation_that_was_sent() {
        // The consent's answer asked for SCA; List accounts was never sent.
        let after_consent = StepFacts {
            operation: "List accounts",
            consent_operation: true,
            sca_done: true,
            psu_known: true,
            response: Some((201, "201 Created".into(), "Bank-offered consent")),
            consent_response: true,
            ..StepFacts::default()
        };
        assert_eq!(
            step_text(&after_consent),
            "Step: SCA complete, consent valid — send List accounts, now with the PSU-ID"
        );
        let same = StepFacts {
            operation: "Bank-offered consent",
            ..after_consent.clone()
        };
        assert_eq!(
            step_text(&same),
            "Step: SCA complete, consent valid — send Bank-offered consent again, now with the PSU-ID"
        );
    }

    #[test]
    fn payments_and_registrations_are_no_consent() {
        // A payment lesson after a consent lesson: the PSU-ID is known, no consent is shown.
        let status = StepFacts {
            operation: "Payment status",
            psu_known: true,
            response: Some((200, "200 OK".into(), "Payment status")),
            ..StepFacts::default()
        };
        assert_eq!(step_text(&status), "Step: Payment status answered 200 OK");
        let selected = StepFacts {
            response: None,
            ..status.clone()
        };
        assert_eq!(step_text(&selected), "Step: PSU-ID known — payment status");
        let registered = StepFacts {
            operation: "Register PSU (PISP)",
            sca_done: true,
            response: Some((200, "200 OK".into(), "Register PSU (PISP)")),
            ..status.clone()
        };
        assert_eq!(
            step_text(&registered),
            "Step: SCA complete, PSU-ID known — choose the next request; it carries the PSU-ID"
        );
        for f in [&status, &selected, &registered] {
            assert!(!step_text(f).contains("consent"), "{}", step_text(f));
        }
    }
}
