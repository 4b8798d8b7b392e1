//! The status line and the problems log: the one message shown at the bottom, and every
//! warning and error shown there so far (read again with `!`, drawn by the problems
//! overlay).

/// Severity of a status-line message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Neutral information.
    Info,
    /// Something worked.
    Success,
    /// Needs attention.
    Warning,
    /// Failed.
    Error,
}

/// A status-line message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// Severity.
    pub level: Level,
    /// One line of text.
    pub text: String,
}

/// How many warnings and errors [`StatusLine::log`] keeps.
pub const LOG_CAP: usize = 500;

/// The status-line message and the problems log.
#[derive(Debug, Default)]
pub struct StatusLine {
    message: Option<Message>,
    /// Every warning and error shown, oldest first (at most [`LOG_CAP`]): a truncated or
    /// replaced status line can be read again.
    log: Vec<Message>,
}

impl StatusLine {
    /// The message shown.
    pub fn message(&self) -> Option<&Message> {
        self.message.as_ref()
    }

    /// Shows `text`; a warning or an error also goes to the log.
    pub fn set(&mut self, level: Level, text: impl Into<String>) {
        let m = Message {
            level,
            text: text.into(),
        };
        if matches!(level, Level::Warning | Level::Error) {
            self.log_problem(m.clone());
        }
        self.message = Some(m);
    }

    /// Shows no message.
    pub fn clear(&mut self) {
        self.message = None;
    }

    /// Shows `m` without logging it (questions, notes that are not problems).
    pub fn show(&mut self, m: Message) {
        self.message = Some(m);
    }

    /// Appends `text` to the message shown, if any.
    pub fn append(&mut self, text: &str) {
        if let Some(m) = &mut self.message {
            m.text.push_str(text);
        }
    }

    /// Adds `m` to the log (not the status line); a repeat of the last entry is not added
    /// again; the oldest entry goes when [`LOG_CAP`] are kept.
    pub fn log_problem(&mut self, m: Message) {
        if self.log.last() == Some(&m) {
            return;
        }
        if self.log.len() >= LOG_CAP {
            self.log.remove(0);
        }
        self.log.push(m);
    }

    /// The warnings and errors so far, oldest first.
    pub fn log(&self) -> &[Message] {
        &self.log
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warnings_are_logged_once_and_info_is_not() {
        let mut s = StatusLine::default();
        s.set(Level::Info, "hello");
        s.set(Level::Warning, "careful");
        s.set(Level::Warning, "careful");
        s.append("!");
        assert_eq!(s.message().map(|m| m.text.as_str()), Some("careful!"));
        assert_eq!(s.log().len(), 1);
        for i in 0..LOG_CAP + 3 {
            s.log_problem(Message {
                level: Level::Error,
                text: i.to_string(),
            });
        }
        assert_eq!(s.log().len(), LOG_CAP);
        assert_eq!(s.log()[0].text, "3");
    }
}
