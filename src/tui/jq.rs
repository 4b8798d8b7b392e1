//! The response's jq filter (`|`), evaluated in-process by jaq off the UI task
//! ([`spawn_filter`]), its output and its errors capped ([`MAX_FILTER_OUTPUTS`],
//! [`MAX_FILTER_BYTES`]).

use std::sync::Arc;

use super::text::human_size;

/// Most values a jq filter may produce before it is stopped.
pub const MAX_FILTER_OUTPUTS: usize = 100_000;

/// Most bytes of filter output kept (the rest is cut with a note).
pub const MAX_FILTER_BYTES: usize = 64 << 20;

/// A jq filter to evaluate off the UI task ([`Action::RunFilter`]): the expression and the
/// shown body it applies to (shared, not copied).
#[derive(Debug, Clone)]
pub struct FilterJob {
    /// The jq expression.
    pub expr: String,
    pub(crate) input: Arc<String>,
}

impl PartialEq for FilterJob {
    fn eq(&self, other: &Self) -> bool {
        self.expr == other.expr && Arc::ptr_eq(&self.input, &other.input)
    }
}

impl Eq for FilterJob {}

/// The outcome of a [`FilterJob`], for [`crate::tui::App::filter_finished`].
#[derive(Debug)]
pub struct FilterDone {
    pub(crate) expr: String,
    pub(crate) input: Arc<String>,
    pub(crate) result: Result<String, JqError>,
}

/// Why a jq filter gave no output (the text is what the response pane shows).
#[derive(Debug, thiserror::Error)]
pub enum JqError {
    /// The body is not JSON.
    #[error("the body is not JSON: {0}")]
    NotJson(#[source] jaq_json::read::Error),
    /// The expression does not parse, or names an undefined filter or variable (each
    /// problem with its column, `; `-separated).
    #[error("{0}")]
    Compile(String),
    /// Evaluation raised an error (`.a` on an array, `error(...)`): jaq's message.
    #[error("jq error: {0}")]
    Eval(String),
    /// The filter called `halt`.
    #[error("the filter stopped (halt)")]
    Halt,
    /// An output value could not be written.
    #[error(transparent)]
    Write(#[from] std::io::Error),
    /// The thread evaluating it could not start.
    #[error("cannot start the filter: {0}")]
    Spawn(#[source] std::io::Error),
}

impl FilterJob {
    /// Evaluates the filter (slow on a large body: call it off the UI task).
    pub fn run(self) -> FilterDone {
        let result = run_jq(&self.expr, &self.input);
        FilterDone {
            expr: self.expr,
            input: self.input,
            result,
        }
    }
}

/// Evaluates `expr` with jaq (jq's language with jaq's standard library) on the JSON
/// `input` and returns every output value pretty-printed (two-space indent), one after the
/// other. At most [`MAX_FILTER_OUTPUTS`] values and [`MAX_FILTER_BYTES`] bytes are kept;
/// a note says when the output was cut.
///
/// Errors: the input is not JSON; the expression does not parse (`… at column N`) or uses
/// an undefined filter or variable; evaluation fails (`.a` on an array, `error(...)`,
/// `halt`).
pub fn run_jq(expr: &str, input: &str) -> Result<String, JqError> {
    use jaq_core::load::{Arena, File, Loader};
    use jaq_core::{Compiler, Ctx, Vars, data};
    use jaq_json::Val;

    let input = jaq_json::read::parse_single(input.as_bytes()).map_err(JqError::NotJson)?;
    let defs = jaq_core::defs()
        .chain(jaq_std::defs())
        .chain(jaq_json::defs());
    let funs = jaq_core::funs()
        .chain(jaq_std::funs())
        .chain(jaq_json::funs());
    let loader = Loader::new(defs);
    let arena = Arena::default();
    let program = File {
        code: expr,
        path: (),
    };
    let modules = loader
        .load(&arena, program)
        .map_err(|errs| JqError::Compile(load_error(expr, errs)))?;
    let filter = Compiler::default()
        .with_funs(funs)
        .compile(modules)
        .map_err(|errs| {
            let mut out = Vec::new();
            for (_, es) in errs {
                for (s, undefined) in es {
                    out.push(format!(
                        "undefined {} {s}{}",
                        undefined.as_str(),
                        column_note(expr, s)
                    ));
                }
            }
            JqError::Compile(out.join("; "))
        })?;
    let ctx = Ctx::<data::JustLut<Val>>::new(&filter.lut, Vars::new([]));
    let pp = jaq_json::write::Pp {
        indent: Some("  ".to_string()),
        sep_space: true,
        ..Default::default()
    };
    let mut out: Vec<u8> = Vec::new();
    for (n, item) in filter.id.run((ctx, input)).enumerate() {
        if n == MAX_FILTER_OUTPUTS || out.len() > MAX_FILTER_BYTES {
            out.extend_from_slice(
                format!(
                    "… output cut after {n} values ({})\n",
                    human_size(out.len())
                )
                .as_bytes(),
            );
            break;
        }
        match item {
            Ok(v) => {
                jaq_json::write::write(&mut out, &pp, 0, &v)?;
                out.push(b'\n');
            }
            Err(exn) => {
                return Err(match exn.get_err() {
                    Ok(e) => JqError::Eval(e.to_string()),
                    Err(_) => JqError::Halt,
                });
            }
        }
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// The messages of load (lex and parse) errors with their column in `expr`.
fn load_error<P>(expr: &str, errs: jaq_core::load::Errors<&str, P>) -> String {
    use jaq_core::load::Error;
    let mut out = Vec::new();
    for (_, e) in errs {
        match e {
            Error::Io(v) => out.extend(v.into_iter().map(|(path, msg)| format!("{path}: {msg}"))),
            Error::Lex(v) => out.extend(v.into_iter().map(|(expect, got)| {
                format!("expected {}{}", lex_expect(&expect), column_note(expr, got))
            })),
            Error::Parse(v) => out.extend(v.into_iter().map(|(expect, got)| {
                let found = if got.is_empty() {
                    "the end".to_string()
                } else {
                    format!("{:?}", got.chars().take(20).collect::<String>())
                };
                format!(
                    "expected {}, found {found}{}",
                    expect.as_str(),
                    column_note(expr, got)
                )
            })),
        }
    }
    if out.is_empty() {
        "the filter does not parse".to_string()
    } else {
        out.join("; ")
    }
}

fn lex_expect(e: &jaq_core::load::lex::Expect<&str>) -> &'static str {
    use jaq_core::load::lex::Expect;
    match e {
        Expect::Delim(d) if !["(", "[", "{", "\""].contains(d) => "closing delimiter",
        other => other.as_str(),
    }
}

/// ` at column N` when `part` is a slice of `expr` (1-based, in characters).
fn column_note(expr: &str, part: &str) -> String {
    let start = expr.as_ptr() as usize;
    let p = part.as_ptr() as usize;
    if p < start || p > start + expr.len() {
        return String::new();
    }
    let off = p - start;
    match expr.get(..off) {
        Some(before) => format!(" at column {}", before.chars().count() + 1),
        None => String::new(),
    }
}

/// Starts `job` on a thread of its own (a runaway filter never blocks the console, and a
/// detached thread does not hold up quitting); the receiver gets the outcome.
pub fn spawn_filter(job: FilterJob) -> tokio::sync::oneshot::Receiver<FilterDone> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let expr = job.expr.clone();
    let input = job.input.clone();
    let spawned = std::thread::Builder::new()
        .name("jq-filter".into())
        .stack_size(64 << 20)
        .spawn(move || {
            let _ = tx.send(job.run());
        });
    if let Err(e) = spawned {
        let (tx, rx2) = tokio::sync::oneshot::channel();
        let _ = tx.send(FilterDone {
            expr,
            input,
            result: Err(JqError::Spawn(e)),
        });
        return rx2;
    }
    rx
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jq_results_and_errors() {
        let input = r#"{"accounts": [{"resourceId": "a1"}, {"resourceId": "a2"}]}"#;
        assert_eq!(
            run_jq(".accounts[].resourceId", input).unwrap(),
            "\"a1\"\n\"a2\"\n"
        );
        assert_eq!(
            run_jq(".accounts[0]", input).unwrap(),
            "{\n  \"resourceId\": \"a1\"\n}\n"
        );
        let e = run_jq(".accounts[", input).unwrap_err().to_string();
        assert!(e.contains("column"), "{e}");
        let e = run_jq(".accounts | nosuchfn", input)
            .unwrap_err()
            .to_string();
        assert!(e.contains("nosuchfn") && e.contains("column 13"), "{e}");
        let e = run_jq(".accounts.x", input).unwrap_err().to_string();
        assert!(e.starts_with("jq error"), "{e}");
        assert!(run_jq("halt", input).is_err());
        assert!(
            run_jq(".", "not json")
                .unwrap_err()
                .to_string()
                .contains("not JSON")
        );
        let many = run_jq("range(200000)", "null").unwrap();
        assert!(many.contains("output cut after"), "capped");
    }
}
