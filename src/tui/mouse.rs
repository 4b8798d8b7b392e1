//! The mouse: a click focuses the pane under the pointer (and selects the operation or the
//! parameter clicked), the wheel scrolls the pane under the pointer by [`WHEEL_LINES`]
//! lines without moving the focus. The panes' rectangles are recorded at draw time
//! ([`HitAreas`]), so hit-testing matches what is on the screen. Dialogs and INSERT mode
//! ignore the mouse; the keys (arrows, vim-style `hjkl`, `g`/`G`) work as before.

use std::cell::Cell;

use crossterm::event::{MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::{Position, Rect};

use super::app::{Action, App, Focus, Mode, Screen, fields_of};
use super::keymap::Command;

/// Lines scrolled per wheel step.
pub const WHEEL_LINES: usize = 3;

/// The panes, in the order of [`HitAreas`]' rectangles.
const PANES: [Focus; 5] = [
    Focus::Operations,
    Focus::Params,
    Focus::Request,
    Focus::Signature,
    Focus::Response,
];

/// Where the console's panes were drawn last (written while drawing, read by
/// [`App::handle_mouse`]).
#[derive(Debug, Default)]
pub struct HitAreas {
    panes: [Cell<Rect>; 5],
    ops_top: Cell<usize>,
}

impl HitAreas {
    /// Records the rectangles (borders included) of the console's panes.
    pub(crate) fn record(
        &self,
        ops: Rect,
        params: Rect,
        request: Rect,
        signature: Rect,
        response: Rect,
    ) {
        for (cell, r) in self
            .panes
            .iter()
            .zip([ops, params, request, signature, response])
        {
            cell.set(r);
        }
    }

    /// Records the first line (group headings included) shown in the operation list.
    pub(crate) fn set_ops_top(&self, top: usize) {
        self.ops_top.set(top);
    }

    /// The pane at column `x`, row `y`, with its rectangle.
    fn pane_at(&self, x: u16, y: u16) -> Option<(Focus, Rect)> {
        PANES
            .iter()
            .zip(&self.panes)
            .map(|(f, r)| (*f, r.get()))
            .find(|(_, r)| r.contains(Position::new(x, y)))
    }
}

/// Row `y` inside the borders of `r`, 0-based; `None` on the borders.
fn inner_row(r: Rect, y: u16) -> Option<usize> {
    (y > r.y && y + 1 < r.bottom()).then(|| (y - r.y - 1) as usize)
}

impl App {
    /// Handles one mouse event and says what the runner must do.
    pub fn handle_mouse(&mut self, ev: MouseEvent) -> Action {
        if self.palette.open
            || self.help
            || self.picker.is_some()
            || self.sca_prompt().is_some()
            || self.mode == Mode::Insert
        {
            return Action::None;
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
        let Some((pane, rect)) = self.hit.pane_at(ev.column, ev.row) else {
            return Action::None;
        };
        if let Some(cmd) = wheel {
            let keep = self.focus;
            self.focus = pane;
            for _ in 0..WHEEL_LINES {
                let ctx = self.context();
                self.command(ctx, cmd);
            }
            self.focus = keep;
            return Action::None;
        }
        if ev.kind != MouseEventKind::Down(MouseButton::Left) {
            return Action::None;
        }
        self.focus = pane;
        let Some(row) = inner_row(rect, ev.row) else {
            return Action::None;
        };
        match pane {
            // While the finder filters the list its rows are the finder's: focus only.
            Focus::Operations if self.finder.is_none() => {
                if let Some(id) = self.op_at_line(self.hit.ops_top.get() + row) {
                    self.select_operation(id);
                }
            }
            Focus::Params => {
                let n = fields_of(self.selected_operation()).len();
                let rows = (rect.height.saturating_sub(2) as usize)
                    .saturating_sub(1)
                    .max(1);
                let skip = (self.field + 1).saturating_sub(rows);
                if row < rows && skip + row < n {
                    self.field = skip + row;
                }
            }
            _ => {}
        }
        Action::None
    }

    /// The id of the operation on line `line` of the operation list (group headings count
    /// as lines, as drawn).
    fn op_at_line(&self, line: usize) -> Option<&'static str> {
        let mut i = 0;
        let mut last = None;
        for op in &self.ops {
            if last != Some(op.group) {
                last = Some(op.group);
                if i == line {
                    return None;
                }
                i += 1;
            }
            if i == line {
                return Some(op.id);
            }
            i += 1;
        }
        None
    }
}
