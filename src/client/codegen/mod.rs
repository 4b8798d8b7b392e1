//! Code export that signs: one self-contained program per language (Python, Node, Java, Go)
//! that rebuilds an exchange's request and signs it afresh every time it runs, exactly as
//! the console does ([`crate::signing::sign_request`]): `Date` now, a new `X-Request-ID`,
//! `Digest` over the body bytes, the signing string in the order of Authentication rule 6,
//! keyId `SN=<upper-case hex>,CA=<issuer RFC 2253>`, RFC 2047 when the `Signature` value is
//! not ASCII, `TPP-Signature-Certificate`. It sends the request, prints the status, the
//! response headers and the body, and exits 0 for a 2xx answer (1 otherwise).
//!
//! The certificate and key are read at run time from the profile's files, whose paths the
//! program names as defaults; `--cert`/`--key` (or `PSD2_CERT`/`PSD2_KEY`) override them and
//! `--base-url` (or `PSD2_BASE_URL`) retargets the request. The key is never written into the
//! program. `--dry-run` prints the signed request instead of sending it.
//!
//! Libraries: Python `requests` + `cryptography`; Node 18+ built-ins (`crypto`, `fetch`);
//! Java 17+ `java.net.http` + `java.security` (`java Main.java`); Go's standard library.
//! The program texts are the templates in `templates/`, filled by one file per language.

mod go;
mod java;
mod node;
mod python;

use std::path::{Path, PathBuf};

use super::{ClientError, PreparedRequest};
use crate::profile::{Paths, Profile, Target};
use crate::xs2a::headers as h;

/// A target language of the code export.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Language {
    /// Python 3 with `requests` and `cryptography`.
    Python,
    /// Node 18+ (ES module, built-in `crypto` and `fetch`).
    Node,
    /// Java 17+, one source file run as `java Main.java`.
    Java,
    /// Go, standard library only (`go run main.go`).
    Go,
}

impl Language {
    /// Every language, in the order the console lists them.
    pub const ALL: [Language; 4] = [
        Language::Python,
        Language::Node,
        Language::Java,
        Language::Go,
    ];

    /// The name used by `export --format` (`python`, `node`, `java`, `go`).
    pub fn name(self) -> &'static str {
        match self {
            Language::Python => "python",
            Language::Node => "node",
            Language::Java => "java",
            Language::Go => "go",
        }
    }

    /// The language of an `export --format` name; `None` for any other name.
    pub fn from_name(name: &str) -> Option<Language> {
        Language::ALL.into_iter().find(|l| l.name() == name)
    }

    /// The file name the program is written under (the TUI's export) and that its usage
    /// line names: `request.py`, `request.mjs`, `Main.java`, `main.go`.
    pub fn file_name(self) -> &'static str {
        match self {
            Language::Python => "request.py",
            Language::Node => "request.mjs",
            Language::Java => "Main.java",
            Language::Go => "main.go",
        }
    }

    /// The command that runs the program file `file` (its [`Language::file_name`]).
    pub fn run_command(self) -> String {
        let file = self.file_name();
        match self {
            Language::Python => format!("python3 {file}"),
            Language::Node => format!("node {file}"),
            Language::Java => format!("java {file}"),
            Language::Go => format!("go run {file}"),
        }
    }
}

/// Headers a program makes itself on every run, so they are not copied from the exchange:
/// the signing headers and `X-Request-ID` (new on every request).
const MADE_AT_RUN_TIME: [&str; 5] = [
    h::DATE,
    h::DIGEST,
    h::X_REQUEST_ID,
    h::SIGNATURE,
    h::TPP_SIGNATURE_CERTIFICATE,
];

/// Everything a generated program carries: the request without its signing headers, where
/// to send it, and the paths of the certificate and key files (never their contents).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeRequest {
    /// One line naming the request, e.g. `accounts.list (history #12)`, put in a comment
    /// (control characters removed).
    pub title: String,
    /// Upper-case method, e.g. `GET`.
    pub method: String,
    /// Default base URL without trailing slash, e.g. `http://127.0.0.1:8080`.
    pub base_url: String,
    /// Path and query as sent and signed for `(request-target)`, e.g. `/v1/accounts`.
    pub path_and_query: String,
    /// The request's headers in sending order, without those of [`MADE_AT_RUN_TIME`].
    pub headers: Vec<(String, String)>,
    /// Body bytes exactly as sent (the Digest covers them); empty for none.
    pub body: Vec<u8>,
    /// Sign `(request-target)` first (the profile's `sign_request_target`).
    pub sign_request_target: bool,
    /// The certificate file the program reads by default (PEM or DER).
    pub cert_file: String,
    /// The private key file the program reads by default (PKCS#8 or PKCS#1, PEM or DER).
    pub key_file: String,
}

impl CodeRequest {
    /// The program's request from a prepared (signed) request: method, URL, headers and
    /// body as prepared; the signing headers and `X-Request-ID` are dropped (the program
    /// makes them). The base URL is the request URL without its path and query.
    pub fn from_prepared(
        req: &PreparedRequest,
        title: &str,
        sign_request_target: bool,
        cert_file: &Path,
        key_file: &Path,
    ) -> CodeRequest {
        let base_url = req
            .url
            .strip_suffix(&req.path_and_query)
            .map(str::to_string)
            .or_else(|| {
                url::Url::parse(&req.url)
                    .ok()
                    .map(|u| u.origin().ascii_serialization())
            })
            .unwrap_or_default();
        CodeRequest {
            title: title.to_string(),
            method: req.method.to_ascii_uppercase(),
            base_url: base_url.trim_end_matches('/').to_string(),
            path_and_query: req.path_and_query.clone(),
            headers: req
                .headers
                .iter()
                .filter(|(n, _)| !MADE_AT_RUN_TIME.iter().any(|m| m.eq_ignore_ascii_case(n)))
                .cloned()
                .collect(),
            body: req.body.clone(),
            sign_request_target,
            cert_file: cert_file.display().to_string(),
            key_file: key_file.display().to_string(),
        }
    }
}

/// The program text in `lang` for `req`.
pub fn program(lang: Language, req: &CodeRequest) -> String {
    let dialect = match lang {
        Language::Python => &python::DIALECT,
        Language::Node => &node::DIALECT,
        Language::Java => &java::DIALECT,
        Language::Go => &go::DIALECT,
    };
    render(dialect, req)
}

/// One line of a two-column table (headers, DN names) from the two columns' literals.
type PairLine = fn(String, String) -> String;

/// How one language writes the placeholders of its template ([`render`]).
struct Dialect {
    /// The program's template, with `@@NAME@@` placeholders ([`fill`]).
    template: &'static str,
    /// A string literal of a text.
    literal: fn(&str) -> String,
    /// The text of a one-line comment.
    comment: fn(&str) -> String,
    /// One line of the header table, from the name's and the value's literals.
    header_line: PairLine,
    /// One line of the DN attribute names' table (from the OID's and the name's literals)
    /// and the lines' separator; `None` for a template without the table (its language
    /// names the attributes itself).
    dn_line: Option<(PairLine, &'static str)>,
    /// The body's bytes as an expression.
    body: fn(&[u8]) -> String,
    /// A boolean literal.
    boolean: fn(bool) -> String,
}

/// The program text of `req` in `dialect`: its template with every placeholder filled.
fn render(dialect: &Dialect, req: &CodeRequest) -> String {
    let mut values = common_values(req, dialect.comment, dialect.literal);
    values.extend([
        (
            "HEADERS",
            header_lines(req, dialect.literal, dialect.header_line),
        ),
        ("BODY", (dialect.body)(&req.body)),
        ("REQUEST_TARGET", (dialect.boolean)(req.sign_request_target)),
    ]);
    if let Some((line, separator)) = dialect.dn_line {
        values.push(("DN_NAMES", dn_name_lines(dialect.literal, line, separator)));
    }
    fill(dialect.template, &values)
}

/// `true` or `false`, as Java, JavaScript and Go write them.
fn lower_case_boolean(b: bool) -> String {
    b.to_string()
}

/// The certificate and key files a profile signs with, as the engine loads them
/// ([`super::engine::ensure_credentials`]): the profile's `certificate` and `key`, or for an
/// `embedded` profile without them the generated `<data>/certs/<slug>.pem` and `.key`.
///
/// Errors: [`ClientError::Setup`] for a profile that names only one of the two files (or
/// neither, when it is not `embedded`).
pub fn credential_files(
    profile: &Profile,
    paths: &Paths,
) -> Result<(PathBuf, PathBuf), ClientError> {
    match (&profile.certificate, &profile.key) {
        (Some(c), Some(k)) => Ok((profile.resolve(c), profile.resolve(k))),
        (None, None) if profile.target == Target::Embedded => {
            let dir = paths.certs_dir();
            let stem = profile.slug();
            Ok((
                dir.join(format!("{stem}.pem")),
                dir.join(format!("{stem}.key")),
            ))
        }
        _ => Err(ClientError::Setup(format!(
            "profile {:?} needs both certificate and key (only an embedded profile may omit them)",
            profile.name
        ))),
    }
}

/// Writes the four programs for `req` into the directory `dir` (created when missing), each
/// under its [`Language::file_name`], atomically; returns the paths in [`Language::ALL`]
/// order.
///
/// Errors: the directory or a file cannot be written.
pub(crate) fn write_programs(dir: &Path, req: &CodeRequest) -> std::io::Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    for lang in Language::ALL {
        let path = dir.join(lang.file_name());
        crate::fsutil::write_atomic(&path, program(lang, req).as_bytes(), false)?;
        written.push(path);
    }
    Ok(written)
}

/// `text` fit for a one-line comment: control characters (line breaks included) become
/// spaces.
fn comment_text(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// Replaces every `@@NAME@@` of `template` by its value, in one pass over the template: a
/// value is never searched again, so an exchange's header or body holding `@@BODY@@` stays
/// text inside its literal instead of pulling another value (code) into it. An `@@` not
/// followed by a known name stays as it is.
fn fill(template: &str, values: &[(&str, String)]) -> String {
    crate::xs2a::operations::replace_placeholders(template, "@@", "@@", |name| {
        values
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.clone())
    })
}

/// The placeholders every template has: `TITLE` (as `comment` writes it) and `BASE_URL`,
/// `CERT_FILE`, `KEY_FILE`, `METHOD`, `PATH` (as `literal` writes a string).
fn common_values(
    req: &CodeRequest,
    comment: fn(&str) -> String,
    literal: fn(&str) -> String,
) -> Vec<(&'static str, String)> {
    vec![
        ("TITLE", comment(&req.title)),
        ("BASE_URL", literal(&req.base_url)),
        ("CERT_FILE", literal(&req.cert_file)),
        ("KEY_FILE", literal(&req.key_file)),
        ("METHOD", literal(&req.method)),
        ("PATH", literal(&req.path_and_query)),
    ]
}

/// One line a pair (the request's headers, the DN attribute names), each written by `line`
/// from the two strings as `literal` writes them, joined by `separator`.
fn pair_lines<'a>(
    pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
    literal: fn(&str) -> String,
    line: impl Fn(String, String) -> String,
    separator: &str,
) -> String {
    pairs
        .into_iter()
        .map(|(a, b)| line(literal(a), literal(b)))
        .collect::<Vec<_>>()
        .join(separator)
}

/// [`pair_lines`] of the request's headers.
fn header_lines(req: &CodeRequest, literal: fn(&str) -> String, line: PairLine) -> String {
    pair_lines(
        req.headers.iter().map(|(n, v)| (n.as_str(), v.as_str())),
        literal,
        line,
        "\n",
    )
}

/// [`pair_lines`] of the DN attribute names ([`crate::cert::dn::TYPE_NAMES`]).
fn dn_name_lines(literal: fn(&str) -> String, line: PairLine, separator: &str) -> String {
    pair_lines(
        crate::cert::dn::TYPE_NAMES.iter().copied(),
        literal,
        line,
        separator,
    )
}

/// A double-quoted string literal of `s` for Python, JavaScript and Go: `\` and `"`
/// escaped, control characters as `\xNN` (`\u2028`/`\u2029` as `\u` escapes for
/// JavaScript), other characters kept (the files are UTF-8).
fn c_like_literal(s: &str) -> String {
    double_quoted(s, |c, out| match c {
        '\u{2028}' | '\u{2029}' => out.push_str(&format!("\\u{:04x}", c as u32)),
        c if (c as u32) < 0x20 || c as u32 == 0x7f => out.push_str(&format!("\\x{:02x}", c as u32)),
        c => out.push(c),
    })
}

/// `s` between double quotes with `\` and `"` escaped and every other character written by
/// `other` (the escapes of Java differ from those of Python, JavaScript and Go).
fn double_quoted(s: &str, other: impl Fn(char, &mut String)) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            c => other(c, &mut out),
        }
    }
    out.push('"');
    out
}

/// A single-quoted string literal of `s` for Python and JavaScript (JSON bodies read better
/// without escaped double quotes): `\` and `'` escaped, the rest as [`c_like_literal`].
fn single_quoted_literal(s: &str) -> String {
    let double = c_like_literal(s);
    let inner = &double[1..double.len() - 1];
    format!("'{}'", inner.replace("\\\"", "\"").replace('\'', "\\'"))
}

/// The body as text when it is UTF-8 (shown as a string literal), else `None` (base64).
fn body_text(body: &[u8]) -> Option<&str> {
    std::str::from_utf8(body).ok()
}

/// Base64 of `bytes` (standard alphabet, padded).
fn base64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_escape_quotes_backslashes_and_controls() {
        assert_eq!(
            c_like_literal("a\"b\\c\nd Ærø\u{2028}"),
            "\"a\\\"b\\\\c\\x0ad Ærø\\u2028\""
        );
        assert_eq!(comment_text("a\nb\u{1b}c"), "a b c");
        assert_eq!(
            single_quoted_literal(r#"{"a":"it's \"x\""}"#),
            r#"'{"a":"it\'s \\"x\\""}'"#
        );
    }

    #[test]
    fn a_value_holding_a_placeholder_stays_text() {
        let out = fill(
            "h=@@HEADERS@@;b=@@BODY@@;x=@@NOPE@@;@@",
            &[
                ("HEADERS", "\"@@BODY@@\"".to_string()),
                ("BODY", "code()".to_string()),
            ],
        );
        assert_eq!(out, "h=\"@@BODY@@\";b=code();x=@@NOPE@@;@@");
    }

    #[test]
    fn language_names_round_trip() {
        for l in Language::ALL {
            assert_eq!(Language::from_name(l.name()), Some(l));
        }
        assert_eq!(Language::from_name("curl"), None);
    }
}
