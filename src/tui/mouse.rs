//! The mouse: a click focuses the pane under the pointer (and selects the operation or the
//! parameter clicked), the wheel scrolls the pane under the pointer by [`WHEEL_LINES`]
//! lines without moving the focus. The panes' rectangles are recorded at draw time
//! ([`super::panes::HitAreas`]), so hit-testing matches what is on the screen. The mouse goes where keys
//! and paste go, the first layer of the focus chain (`App::focus_chain`): a click or wheel
//! step answers an open y/N question (it cancels it); dialogs and INSERT mode ignore the
//! mouse; the screen takes it under the operation finder and a screen's search box. The keys
//! (arrows, vim-style `hjkl`, `g`/`G`) work as before.

use crossterm::event::{MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::Rect;

use super::app::{Action, App, Focus, Mode, Screen, fields_of};
use super::keymap::Command;
use super::overlay::Layer;

/// Lines scrolled per wheel step.
pub const WHEEL_LINES: usize = 3;

/// Row `y` inside the borders of `r`, 0-based; `None` on the borders.
fn inner_row(r: Rect, y: u16) -> Option<usize> {
    (y > r.y && y + 1 < r.bottom()).then(|| (y - r.y - 1) as usize)
}

impl App {
    /// Handles one mouse event and says what the runner must do.
    pub fn handle_mouse(&mut self, ev: MouseEvent) -> Action {
        match self.focused() {
            None | Some(Layer::Finder) => {}
            Some(Layer::Insert) if self.form.mode != Mode::Insert => {}
            Some(Layer::Confirm) => {
                if !matches!(ev.kind, MouseEventKind::Moved | MouseEventKind::Up(_)) {
                    self.cancel_confirm();
                }
                return Action::None;
            }
            // Any open dialog (the body editor and the link chooser included) and INSERT
            // mode ignore the mouse.
            Some(_) => return Action::None,
        }
        let wheel = match ev.kind {
            MouseEventKind::ScrollUp => Some(Command::Up),
            MouseEventKind::ScrollDown => Some(Command::Down),
            _ => None,
        };
        if self.screen != Screen::Console {
            // The other screens scroll their list like their ↑/↓ keys.
            let mut action = Action::None;
            if let Some(cmd) = wheel {
                for _ in 0..WHEEL_LINES {
                    let ctx = self.context();
                    action = self.command(ctx, cmd);
                }
            }
            return action;
        }
        let Some((pane, rect)) = self.panes.hit.pane_at(ev.column, ev.row) else {
            return Action::None;
        };
        if let Some(cmd) = wheel {
            let keep = self.panes.focus;
            self.panes.focus = pane;
            for _ in 0..WHEEL_LINES {
                let ctx = self.context();
                self.command(ctx, cmd);
            }
            self.panes.focus = keep;
            return Action::None;
        }
        if ev.kind != MouseEventKind::Down(MouseButton::Left) {
            return Action::None;
        }
        self.panes.focus = pane;
        let Some(row) = inner_row(rect, ev.row) else {
            return Action::None;
        };
        match pane {
            // While the finder filters the list its rows are the finder's: focus only.
            Focus::Operations if self.form.finder.is_none() => {
                if let Some(id) = self.form.op_at_line(self.panes.hit.ops_top.get() + row) {
                    self.select_operation(id);
                }
            }
            Focus::Params => {
                let n = fields_of(self.selected_operation()).len();
                let rows = (rect.height.saturating_sub(2) as usize)
                    .saturating_sub(1)
                    .max(1);
                let skip = (self.form.field + 1).saturating_sub(rows);
                if row < rows && skip + row < n {
                    self.form.field = skip + row;
                }
            }
            _ => {}
        }
        Action::None
    }
}
