//! The history screen (`3`): every exchange sent, newest first.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::widgets::Paragraph;

use super::app::{Action, App};
use super::keymap::Command;

/// State of the history screen.
#[derive(Debug, Clone, Default)]
pub struct HistoryView {
    /// Index of the highlighted exchange.
    pub selected: usize,
}

impl App {
    /// Commands of the history screen; `None` for commands it does not take.
    pub(crate) fn history_command(&mut self, cmd: Command) -> Option<Action> {
        let _ = cmd;
        None
    }

    /// Draws the history screen into `area` (between the status bar and the footer).
    pub(crate) fn draw_history(&self, frame: &mut Frame, area: Rect) {
        let text = format!("No exchanges yet (row {})", self.history_view.selected);
        frame.render_widget(Paragraph::new(text).style(self.theme.base), area);
    }
}
