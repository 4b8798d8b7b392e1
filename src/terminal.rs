//! Text bound for a terminal: control characters that came from a file or a bank's answer
//! are shown escaped instead of being written raw (issue 18, defect 4). A HAR file whose URL
//! holds `ESC]0;title BEL ESC[2J` would otherwise set the terminal's title and clear the
//! screen when `doctor` or `import` prints it, and a CR or LF in a method or URL would split
//! a one-line report.
//!
//! Every command-line printer goes through these: the binary's `out!` lines, its error
//! line, the `doctor` report ([`crate::doctor::cli`]). The console (TUI) replaces control
//! characters itself when it draws.
//!
//! A control character is one of Unicode's `Cc` (C0, DEL and C1: [`char::is_control`]); it
//! is written as Rust writes it escaped: `\u{1b}`, `\u{7}`, `\r`, `\n`, `\t`, `\u{9b}`.

use std::borrow::Cow;

fn escape_where(s: &str, escape: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !s.chars().any(&escape) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if escape(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `s` for one field of a one-line output (a method, a URL, a name from a file): every
/// control character escaped, line feed and tab too, so the field stays on its line and in
/// its column.
pub fn escape_controls(s: &str) -> Cow<'_, str> {
    escape_where(s, char::is_control)
}

/// `s` for a whole output of one or more lines: every control character escaped except line
/// feed and tab (which lay the output out).
pub fn escape_output(s: &str) -> Cow<'_, str> {
    escape_where(s, |c| c.is_control() && c != '\n' && c != '\t')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_are_escaped_and_text_kept() {
        let hostile = "/v1/x\u{1b}]0;title\u{7}\u{1b}[2J\r\nHost: evil\u{9b}1m æø";
        assert_eq!(
            escape_controls(hostile),
            "/v1/x\\u{1b}]0;title\\u{7}\\u{1b}[2J\\r\\nHost: evil\\u{9b}1m æø"
        );
        assert_eq!(
            escape_output("a\tb\nc\u{1b}[2J\r\n"),
            "a\tb\nc\\u{1b}[2J\\r\n"
        );
        assert!(matches!(escape_controls("plain æ"), Cow::Borrowed(_)));
    }
}
