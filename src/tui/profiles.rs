//! The profiles screen (`2`): the loaded profiles, the active one's certificate and session
//! state.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::Paragraph;

use super::app::{Action, App};
use super::keymap::Command;

/// State of the profiles screen.
#[derive(Debug, Clone, Default)]
pub struct ProfilesView {
    /// Index of the highlighted profile in [`App`]'s profile list.
    pub selected: usize,
}

impl App {
    /// Commands of the profiles screen; `None` for commands it does not take.
    pub(crate) fn profiles_command(&mut self, cmd: Command) -> Option<Action> {
        let _ = cmd;
        None
    }

    /// Draws the profiles screen into `area` (between the status bar and the footer).
    pub(crate) fn draw_profiles(&self, frame: &mut Frame, area: Rect) {
        let lines: Vec<Line> = self
            .profiles
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let mark = if i == self.profiles_view.selected {
                    "▸ "
                } else {
                    "  "
                };
                Line::from(format!("{mark}{p}"))
            })
            .collect();
        frame.render_widget(Paragraph::new(lines).style(self.theme.base), area);
    }
}
