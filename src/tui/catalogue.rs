//! Finding an operation in the catalogue (`/` while browsing the console): a filter box over
//! the operation list. Every word typed must occur in the operation's id, title, method, path
//! or group (case-insensitive), so `pay status`, `sandbox cust` or `/v1/users` narrow the
//! list at once; the selection follows the first match, so the parameter form shows it.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::app::{Action, App};
pub use super::form::OperationFinder;
use super::keymap::{Command, Context};
use crate::xs2a::operations::{Group, Operation};

/// The group's words, so `ais`, `pis`, `baskets`, `psu` and `sandbox` find a whole group.
fn group_words(g: Group) -> &'static str {
    match g {
        Group::Ais => "ais account information",
        Group::Pis => "pis payment initiation",
        Group::Baskets => "baskets signing basket",
        Group::Psu => "psu",
        Group::Sandbox => "sandbox test data",
    }
}

/// Whether every whitespace-separated word of `query` occurs (case-insensitive) in the
/// operation's id, title, method, path or group. An empty query matches everything.
pub fn operation_matches(op: &Operation, query: &str) -> bool {
    let hay = format!(
        "{} {} {} {} {}{}",
        op.id,
        op.title,
        op.method,
        op.path,
        group_words(op.group),
        if op.deprecated { " deprecated" } else { "" }
    )
    .to_lowercase();
    query
        .to_lowercase()
        .split_whitespace()
        .all(|w| hay.contains(w))
}

impl App {
    /// Opens the finder with an empty query (every operation listed).
    pub(crate) fn open_finder(&mut self) {
        let previous = self.form.selected;
        let mut f = OperationFinder {
            previous,
            ..OperationFinder::default()
        };
        f.matches = (0..self.form.ops.len()).collect();
        f.cursor = previous;
        self.form.finder = Some(f);
    }

    /// The finder's state while it is open.
    pub fn operation_finder(&self) -> Option<&OperationFinder> {
        self.form.finder.as_ref()
    }

    fn refilter(&mut self) {
        let Some(f) = self.form.finder.as_mut() else {
            return;
        };
        f.matches = self
            .form
            .ops
            .iter()
            .enumerate()
            .filter(|(_, op)| operation_matches(op, &f.query))
            .map(|(i, _)| i)
            .collect();
        f.cursor = 0;
        if let Some(&i) = f.matches.first() {
            self.select_index(i);
        }
    }

    /// Keys while the finder is open: the keymap's finder keys (Esc, Enter, ↑/↓, Backspace,
    /// Ctrl-u), every other character is typed into the query. `None` when it is closed.
    pub(crate) fn finder_key(&mut self, key: &KeyEvent) -> Option<Action> {
        self.form.finder.as_ref()?;
        match self.keymap.lookup(Context::Finder, key) {
            Some(Command::Dismiss) => {
                let previous = self.form.finder.take().map(|f| f.previous).unwrap_or(0);
                self.select_index(previous);
            }
            Some(Command::Choose) => {
                let f = self.form.finder.take().unwrap_or_default();
                match f.matches.get(f.cursor) {
                    Some(&i) => {
                        self.select_index(i);
                        let title = self.form.ops[i].title;
                        self.set_message(
                            super::app::Level::Info,
                            format!("{title}: press s to send, e to edit its parameters"),
                        );
                    }
                    None => self.select_index(f.previous),
                }
            }
            Some(cmd @ (Command::Up | Command::Down)) => {
                let sel = self.form.finder.as_mut().and_then(|f| {
                    let n = f.matches.len();
                    if n == 0 {
                        return None;
                    }
                    f.cursor = if cmd == Command::Up {
                        (f.cursor + n - 1) % n
                    } else {
                        (f.cursor + 1) % n
                    };
                    Some(f.matches[f.cursor])
                });
                if let Some(i) = sel {
                    self.select_index(i);
                }
            }
            Some(Command::Backspace) => {
                if let Some(f) = self.form.finder.as_mut() {
                    f.query.pop();
                }
                self.refilter();
            }
            Some(Command::ClearField) => {
                if let Some(f) = self.form.finder.as_mut() {
                    f.query.clear();
                }
                self.refilter();
            }
            Some(_) => {}
            None => {
                if let KeyCode::Char(c) = key.code
                    && !key
                        .modifiers
                        .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
                {
                    if let Some(f) = self.form.finder.as_mut() {
                        f.query.push(c);
                    }
                    self.refilter();
                }
            }
        }
        Some(Action::None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::xs2a::operations::OPERATIONS;

    fn found(query: &str) -> Vec<&'static str> {
        OPERATIONS
            .iter()
            .filter(|o| operation_matches(o, query))
            .map(|o| o.id)
            .collect()
    }

    #[test]
    fn every_word_must_occur_in_id_title_path_or_group() {
        assert_eq!(found("").len(), OPERATIONS.len());
        let balances = found("balances");
        assert!(!balances.is_empty());
        assert!(
            balances
                .iter()
                .all(|id| id.to_lowercase().contains("balance")
                    || OPERATIONS.iter().any(|o| o.id == *id
                        && (o.title.to_lowercase().contains("balance")
                            || o.path.contains("balance"))))
        );
        let sandbox = found("SANDBOX");
        assert!(sandbox.len() >= 5, "{sandbox:?}");
        assert!(found("sandbox balances").len() < sandbox.len());
        assert!(found("zzzz-nothing").is_empty());
        assert!(found("deprecated").iter().all(|id| {
            OPERATIONS
                .iter()
                .any(|o| o.id == *id && (o.deprecated || o.title.contains("eprecated")))
        }));
        assert!(
            !found("deprecated").is_empty(),
            "/v1/consents is marked deprecated"
        );
    }
}
