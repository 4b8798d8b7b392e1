//! Lessons: guided walkthroughs a trainer steps through in front of a room (issue 12,
//! "Lessons").
//!
//! A lesson is a TOML file. The built-in ones are the files of the top-level `lessons/`
//! folder, built into the binary ([`BUILTIN_LESSONS`]); a trainer's own live in
//! `<config>/lessons/*.toml` ([`lessons_dir`]) and replace a built-in one of the same id
//! (the file name without `.toml`). The shape:
//!
//! ```toml
//! title = "Account information with a bank-offered consent"
//! summary = "One paragraph shown before the first step."
//!
//! [[steps]]
//! title = "Ask for a consent"
//! operation = "consents.bank-offered"   # an id of `psd2-console send --list`
//! params = { "withBalance" = "true" }   # optional: path, query or header parameters
//! body = '''{"access": {}}'''           # optional: the request body (else the default)
//! narration = "What the trainer says while the step runs."
//! section = "Authentication 11"         # where the interface document says it
//! watch = "the 201 answer's _links.scaRedirect"
//!
//! [[steps]]
//! title = "The PSU authenticates"
//! act = "browser"                       # no operation: "browser" or "terminal"
//! narration = "Open the scaRedirect."
//! section = "Authentication 11"
//! ```
//!
//! A step without `operation` sends nothing from the console; it says where the room acts
//! instead, `act = "browser"` (the PSU completes SCA in the browser) or `act = "terminal"`
//! (the trainer works in a shell outside the console, e.g. edits an exported cURL), and the
//! lesson panel says so ([`Act`]). A step with an operation is sent from the console and
//! takes no `act`.
//! Reading checks every operation id and parameter name against the catalogue
//! ([`crate::xs2a::operations`]), so a typo is reported with the file and line before the
//! lesson starts, not in front of the room.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::xs2a::operations;

/// The built-in lessons: (file name, text), in the order they are offered.
pub(crate) const BUILTIN_LESSONS: &[(&str, &str)] = &[
    (
        "lessons/ais-bank-offered-consent.toml",
        include_str!("../../lessons/ais-bank-offered-consent.toml"),
    ),
    (
        "lessons/corporate-context.toml",
        include_str!("../../lessons/corporate-context.toml"),
    ),
    (
        "lessons/domestic-payment.toml",
        include_str!("../../lessons/domestic-payment.toml"),
    ),
    (
        "lessons/signing-basket.toml",
        include_str!("../../lessons/signing-basket.toml"),
    ),
    (
        "lessons/consent-expiry.toml",
        include_str!("../../lessons/consent-expiry.toml"),
    ),
    (
        "lessons/signature-failure.toml",
        include_str!("../../lessons/signature-failure.toml"),
    ),
];

/// Where the room acts during a step without an operation (the TOML key `act`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Act {
    /// The PSU acts in the browser (the scaRedirect's pages): `act = "browser"`.
    Browser,
    /// The trainer acts in a terminal outside the console (runs an exported cURL, the
    /// doctor): `act = "terminal"`.
    Terminal,
}

impl Act {
    /// The lesson panel's words for it, e.g. "no request: the PSU acts in the browser".
    pub fn words(self) -> &'static str {
        match self {
            Act::Browser => "no request: the PSU acts in the browser",
            Act::Terminal => "no request: act in a terminal, outside the console",
        }
    }
}

/// One step of a lesson.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// Shown as the step's heading.
    pub title: String,
    /// The operation the step prepares (an [`operations::Operation::id`]); `None` for a
    /// step whose action happens outside the console ([`Step::act`]).
    #[serde(default)]
    pub operation: Option<String>,
    /// Where the room acts in a step without an operation; required there, refused on a
    /// step with one (that step is sent from the console).
    #[serde(default)]
    pub act: Option<Act>,
    /// Prefilled parameters (path, query or header), name → value.
    #[serde(default)]
    pub params: toml::Table,
    /// The request body; `None`: the operation's default body.
    #[serde(default)]
    pub body: Option<String>,
    /// What the trainer says.
    pub narration: String,
    /// The section of the interface document the step shows, e.g. `Authentication 11`.
    pub section: String,
    /// What the room should look at in the answer.
    #[serde(default)]
    pub watch: Option<String>,
}

impl Step {
    /// The prefilled parameters as (name, value) pairs, values as written (numbers and
    /// booleans in their TOML form).
    pub(crate) fn param_values(&self) -> Vec<(String, String)> {
        self.params
            .iter()
            .map(|(k, v)| {
                let value = match v {
                    toml::Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                (k.clone(), value)
            })
            .collect()
    }
}

/// A lesson: a title, a summary and its steps.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lesson {
    /// The file name without `.toml`, e.g. `domestic-payment` (`--lesson ID`). Not in the
    /// file.
    #[serde(skip)]
    pub id: String,
    /// Shown in the lesson list and above each step.
    pub title: String,
    /// Shown before the first step.
    pub summary: String,
    /// At least one.
    pub steps: Vec<Step>,
    /// The file it was read from (`None` for built-in ones).
    #[serde(skip)]
    pub source: Option<PathBuf>,
}

/// Why a lesson file cannot be used: the file, the line (1-based) where known, and what is
/// wrong, in one sentence.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}{}: {message}", .line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct LessonError {
    /// The file name as shown to the user.
    pub file: String,
    /// The line of the problem, when known.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
}

/// 1-based line of byte offset `at` in `text`.
fn line_of(text: &str, at: usize) -> usize {
    text[..at.min(text.len())].matches('\n').count() + 1
}

/// Reads one lesson from `text` (the file `file`, shown in errors; its stem is the id).
///
/// Errors: [`LessonError`] for TOML syntax, unknown keys, no steps, an unknown operation id,
/// a parameter the operation does not take, a step without an operation and without `act`,
/// or `act` on a step with an operation (with the line of the step).
pub fn parse(text: &str, file: &str) -> Result<Lesson, LessonError> {
    let err = |line: Option<usize>, message: String| LessonError {
        file: file.to_string(),
        line,
        message,
    };
    let mut lesson: Lesson = toml::from_str(text).map_err(|e| {
        let line = e.span().map(|s| line_of(text, s.start));
        err(line, e.message().to_string())
    })?;
    lesson.id = Path::new(file)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    if lesson.steps.is_empty() {
        return Err(err(None, "a lesson needs at least one [[steps]]".into()));
    }
    // Where each step starts, to point at it.
    let step_lines: Vec<usize> = text
        .match_indices("[[steps]]")
        .map(|(at, _)| line_of(text, at))
        .collect();
    for (i, step) in lesson.steps.iter().enumerate() {
        let line = step_lines.get(i).copied();
        let Some(id) = &step.operation else {
            if step.act.is_none() {
                return Err(err(
                    line,
                    format!(
                        "step {} ({:?}) has no operation: say where the room acts, \
                         act = \"browser\" or act = \"terminal\"",
                        i + 1,
                        step.title
                    ),
                ));
            }
            if !step.params.is_empty() || step.body.is_some() {
                return Err(err(
                    line,
                    format!(
                        "step {} ({:?}) has params or a body but no operation",
                        i + 1,
                        step.title
                    ),
                ));
            }
            continue;
        };
        if step.act.is_some() {
            return Err(err(
                line,
                format!(
                    "step {} ({:?}) sends {id} from the console: act is only for a step \
                     without an operation",
                    i + 1,
                    step.title
                ),
            ));
        }
        let Some(op) = operations::find(id) else {
            return Err(err(
                line,
                format!(
                    "step {} ({:?}): unknown operation {id:?} (see `psd2-console send --list`)",
                    i + 1,
                    step.title
                ),
            ));
        };
        for name in step.params.keys() {
            if op.param(name).is_none() {
                let known: Vec<&str> = op.all_params().map(|p| p.name).collect();
                return Err(err(
                    line,
                    format!(
                        "step {} ({:?}): {id} has no parameter {name:?} (it has: {})",
                        i + 1,
                        step.title,
                        known.join(", ")
                    ),
                ));
            }
        }
    }
    Ok(lesson)
}

/// Where a trainer's own lessons live: `<config>/lessons`.
pub fn lessons_dir(paths: &crate::profile::Paths) -> PathBuf {
    paths.config.join("lessons")
}

/// The lessons on offer and the files that could not be read.
#[derive(Debug, Default)]
pub struct LessonSet {
    /// Built-in first (in [`BUILTIN_LESSONS`] order), then the user's by file name; a
    /// user's lesson with a built-in one's id takes its place.
    pub lessons: Vec<Lesson>,
    /// Files that failed to read or parse; the others still load.
    pub errors: Vec<LessonError>,
}

impl LessonSet {
    /// The built-in lessons, then every `*.toml` of `user_dir` (sorted by name; a missing
    /// directory is no error).
    pub fn load(user_dir: Option<&Path>) -> Self {
        let mut set = LessonSet::default();
        for (file, text) in BUILTIN_LESSONS {
            match parse(text, file) {
                Ok(l) => set.add(l),
                Err(e) => set.errors.push(e),
            }
        }
        let Some(dir) = user_dir else {
            return set;
        };
        let Ok(entries) = std::fs::read_dir(dir) else {
            return set;
        };
        let mut files: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect();
        files.sort();
        for path in files {
            let shown = path.display().to_string();
            let parsed = std::fs::read_to_string(&path)
                .map_err(|e| LessonError {
                    file: shown.clone(),
                    line: None,
                    message: format!("cannot read it: {e}"),
                })
                .and_then(|text| parse(&text, &shown));
            match parsed {
                Ok(mut l) => {
                    l.source = Some(path);
                    set.add(l);
                }
                Err(e) => set.errors.push(e),
            }
        }
        set
    }

    fn add(&mut self, lesson: Lesson) {
        match self.lessons.iter_mut().find(|l| l.id == lesson.id) {
            Some(existing) => *existing = lesson,
            None => self.lessons.push(lesson),
        }
    }

    /// The lesson with id `id` (file name without `.toml`).
    pub fn find(&self, id: &str) -> Option<&Lesson> {
        self.lessons.iter().find(|l| l.id == id)
    }

    /// The lesson with id `id`, or why not: one message listing the lessons on offer, the
    /// folder `user_dir` a trainer's own go in, and the files that could not be read (a
    /// lesson with a typo is reported as such, not as unknown).
    ///
    /// Errors: the message, for `--lesson` to print.
    pub fn require(&self, id: &str, user_dir: &Path) -> Result<&Lesson, String> {
        if let Some(l) = self.find(id) {
            return Ok(l);
        }
        let mut msg = format!("no lesson called {id:?}; the lessons are:");
        for l in &self.lessons {
            msg.push_str(&format!("\n  {:<26} {}", l.id, l.title));
        }
        msg.push_str(&format!(
            "\n(your own lessons go in {}, one TOML file each)",
            user_dir.display()
        ));
        for e in &self.errors {
            msg.push_str(&format!("\nnot loaded: {e}"));
        }
        Err(msg)
    }
}

/// Where a trainer is in a lesson: the step shown, moved forward and back.
#[derive(Debug, Clone, PartialEq)]
pub struct LessonProgress {
    /// The lesson being given.
    pub lesson: Lesson,
    /// Index of the step shown (0-based; always a valid index).
    pub step: usize,
}

impl LessonProgress {
    /// Starts at the first step.
    pub fn new(lesson: Lesson) -> Self {
        LessonProgress { lesson, step: 0 }
    }

    /// The step shown.
    pub fn current(&self) -> &Step {
        &self.lesson.steps[self.step.min(self.lesson.steps.len() - 1)]
    }

    /// Moves to the next step; `false` at the last one (stays there).
    pub(crate) fn forward(&mut self) -> bool {
        if self.step + 1 < self.lesson.steps.len() {
            self.step += 1;
            true
        } else {
            false
        }
    }

    /// Moves to the previous step; `false` at the first one (stays there).
    pub fn back(&mut self) -> bool {
        if self.step > 0 {
            self.step -= 1;
            true
        } else {
            false
        }
    }

    /// "Step 2 of 5".
    pub fn position(&self) -> String {
        format!("Step {} of {}", self.step + 1, self.lesson.steps.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_built_in_lesson_reads_and_names_known_operations() {
        let set = LessonSet::load(None);
        assert!(set.errors.is_empty(), "{:?}", set.errors);
        assert_eq!(set.lessons.len(), BUILTIN_LESSONS.len());
        for l in &set.lessons {
            assert!(!l.steps.is_empty(), "{}", l.id);
            assert!(
                l.steps.iter().all(|s| !s.section.trim().is_empty()),
                "{}",
                l.id
            );
        }
    }

    #[test]
    fn an_unknown_operation_is_reported_with_the_line_of_its_step() {
        let text = "title = \"t\"\nsummary = \"s\"\n\n[[steps]]\ntitle = \"a\"\nact = \"browser\"\nnarration = \"n\"\nsection = \"x\"\n\n[[steps]]\ntitle = \"b\"\noperation = \"accounts.lst\"\nnarration = \"n\"\nsection = \"x\"\n";
        let e = parse(text, "my.toml").unwrap_err();
        assert_eq!(e.line, Some(10));
        assert!(
            e.message.contains("unknown operation \"accounts.lst\""),
            "{e}"
        );
        assert!(e.to_string().starts_with("my.toml:10: "), "{e}");
    }

    #[test]
    fn a_parameter_the_operation_does_not_take_is_reported() {
        let text = "title = \"t\"\nsummary = \"s\"\n[[steps]]\ntitle = \"a\"\noperation = \"accounts.list\"\nparams = { \"bookingStatus\" = \"booked\" }\nnarration = \"n\"\nsection = \"x\"\n";
        let e = parse(text, "my.toml").unwrap_err();
        assert!(
            e.message.contains("has no parameter \"bookingStatus\""),
            "{e}"
        );
    }

    #[test]
    fn a_step_without_an_operation_says_where_the_room_acts() {
        let step = |extra: &str| {
            format!(
                "title = \"t\"\nsummary = \"s\"\n[[steps]]\ntitle = \"a\"\n{extra}narration = \"n\"\nsection = \"x\"\n"
            )
        };
        let e = parse(&step(""), "my.toml").unwrap_err();
        assert!(e.message.contains("act = \"browser\""), "{e}");
        assert_eq!(e.line, Some(3));
        let l = parse(&step("act = \"terminal\"\n"), "my.toml").unwrap();
        assert_eq!(l.steps[0].act, Some(Act::Terminal));
        let e = parse(&step("act = \"phone\"\n"), "my.toml").unwrap_err();
        assert!(e.message.contains("phone"), "{e}");
        let e = parse(
            &step("operation = \"accounts.list\"\nact = \"browser\"\n"),
            "my.toml",
        )
        .unwrap_err();
        assert!(e.message.contains("act is only for a step"), "{e}");
    }

    #[test]
    fn the_built_in_terminal_steps_are_marked_as_such() {
        let set = LessonSet::load(None);
        let failure = set.find("signature-failure").unwrap();
        assert_eq!(failure.steps[1].act, Some(Act::Terminal));
        assert_eq!(failure.steps[2].act, Some(Act::Terminal));
        // The edited cURL carries the Date of its export: the bank's window is 60 s.
        assert!(failure.steps[1].narration.contains("within 60 s"));
        let consent = set.find("ais-bank-offered-consent").unwrap();
        assert_eq!(consent.steps[1].act, Some(Act::Browser));
    }

    #[test]
    fn a_typo_in_a_key_is_reported_not_ignored() {
        let text = "title = \"t\"\nsummary = \"s\"\n[[steps]]\ntitle = \"a\"\nnaration = \"n\"\nsection = \"x\"\n";
        let e = parse(text, "my.toml").unwrap_err();
        assert!(e.message.contains("naration"), "{e}");
        assert_eq!(e.line, Some(5));
    }

    #[test]
    fn the_trainer_steps_forward_and_back_within_the_lesson() {
        let set = LessonSet::load(None);
        let lesson = set.find("domestic-payment").unwrap().clone();
        let n = lesson.steps.len();
        let mut p = LessonProgress::new(lesson);
        assert!(!p.back());
        for _ in 1..n {
            assert!(p.forward());
        }
        assert!(!p.forward());
        assert_eq!(p.position(), format!("Step {n} of {n}"));
        assert!(p.back());
        assert_eq!(p.step, n - 2);
    }
}
