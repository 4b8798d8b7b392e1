//! Finding an operation in the catalogue (`/` while browsing the console): a filter box over
//! the operation list. Every word typed must occur in the operation's id, title, method, path
//! or group (case-insensitive), so `pay status`, `sandbox cust` or `/v1/users` narrow the
//! list at once; the selection follows the first match, so the parameter form shows it.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use ratatui::Frame;
use ratatui::layout::Rect;

use super::component::{Component, Ctx, Effect};
pub use super::form::OperationFinder;
use super::keymap::{Command, Context};
use super::status_line::Level;
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

impl OperationFinder {
    /// A finder over `ops` with an empty query (every operation listed), `previous`
    /// highlighted (and selected again by Esc).
    pub(crate) fn open(ops: &[&'static Operation], previous: usize) -> Self {
        OperationFinder {
            previous,
            matches: (0..ops.len()).collect(),
            cursor: previous,
            ..OperationFinder::default()
        }
    }

    /// Lists the operations of `ops` matching the query; the first is selected.
    fn refilter(&mut self, ops: &[&'static Operation]) -> Effect {
        self.matches = ops
            .iter()
            .enumerate()
            .filter(|(_, op)| operation_matches(op, &self.query))
            .map(|(i, _)| i)
            .collect();
        self.cursor = 0;
        match self.matches.first() {
            Some(&index) => Effect::Select {
                index,
                close: false,
            },
            None => Effect::None,
        }
    }
}

impl Component for OperationFinder {
    /// Keys while the finder is open: the keymap's finder keys (Esc, Enter, ↑/↓, Backspace,
    /// Ctrl-u), every other character is typed into the query.
    fn input(&mut self, key: &KeyEvent, ctx: &mut Ctx) -> Option<Effect> {
        Some(match ctx.keymap.lookup(Context::Finder, key) {
            Some(Command::Dismiss) => Effect::Select {
                index: self.previous,
                close: true,
            },
            Some(Command::Choose) => match self.matches.get(self.cursor) {
                Some(&index) => {
                    if let Some(op) = ctx.ops.get(index) {
                        ctx.say(
                            Level::Info,
                            format!("{}: press s to send, e to edit its parameters", op.title),
                        );
                    }
                    Effect::Select { index, close: true }
                }
                None => Effect::Select {
                    index: self.previous,
                    close: true,
                },
            },
            Some(cmd @ (Command::Up | Command::Down)) => {
                let n = self.matches.len();
                if n == 0 {
                    return Some(Effect::None);
                }
                self.cursor = if cmd == Command::Up {
                    (self.cursor + n - 1) % n
                } else {
                    (self.cursor + 1) % n
                };
                Effect::Select {
                    index: self.matches[self.cursor],
                    close: false,
                }
            }
            Some(Command::Backspace) => {
                self.query.pop();
                self.refilter(ctx.ops)
            }
            Some(Command::ClearField) => {
                self.query.clear();
                self.refilter(ctx.ops)
            }
            Some(_) => Effect::None,
            None => match key.code {
                KeyCode::Char(c)
                    if !key
                        .modifiers
                        .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) =>
                {
                    self.query.push(c);
                    self.refilter(ctx.ops)
                }
                _ => Effect::None,
            },
        })
    }

    /// The finder takes its keys as text ([`Component::input`]).
    fn handle(&mut self, _cmd: Command, _ctx: &mut Ctx) -> Option<Effect> {
        None
    }

    /// The finder is drawn by the operation list it filters (`ui.rs`).
    fn draw(&self, _frame: &mut Frame, _area: Rect, _ctx: &Ctx) {}
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
