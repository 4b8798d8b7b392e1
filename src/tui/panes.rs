//! The console's panes: which one has focus, where each was drawn last (for the mouse),
//! and the scroll state of the request and signature panes (the response pane owns its
//! own, [`super::response_pane`]).

use std::cell::Cell;

use ratatui::layout::{Position, Rect};

/// The panes that can have focus, in Tab order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    /// The operation list.
    Operations,
    /// The parameter form of the selected operation.
    Params,
    /// The request as it will be (or was) sent.
    Request,
    /// The signature inspector.
    Signature,
    /// The response.
    Response,
}

impl Focus {
    pub(crate) const ORDER: [Focus; 5] = [
        Focus::Operations,
        Focus::Params,
        Focus::Request,
        Focus::Signature,
        Focus::Response,
    ];

    pub(crate) fn index(self) -> usize {
        Focus::ORDER.iter().position(|f| *f == self).unwrap_or(0)
    }

    /// Index into the scroll state of [`Panes`] (the request and signature panes; the
    /// response pane scrolls itself).
    pub(crate) fn scroll_slot(self) -> Option<usize> {
        match self {
            Focus::Request => Some(0),
            Focus::Signature => Some(1),
            _ => None,
        }
    }
}

/// The panes, in the order of [`HitAreas`]' rectangles.
const PANES: [Focus; 5] = [
    Focus::Operations,
    Focus::Params,
    Focus::Request,
    Focus::Signature,
    Focus::Response,
];

/// Where the console's panes were drawn last (written while drawing, read by
/// the mouse, [`super::mouse`]).
#[derive(Debug, Default)]
pub struct HitAreas {
    panes: [Cell<Rect>; 5],
    pub(crate) ops_top: Cell<usize>,
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
    pub(crate) fn pane_at(&self, x: u16, y: u16) -> Option<(Focus, Rect)> {
        PANES
            .iter()
            .zip(&self.panes)
            .map(|(f, r)| (*f, r.get()))
            .find(|(_, r)| r.contains(Position::new(x, y)))
    }
}

/// Focus, scroll offsets and last-draw sizes of the console's panes.
#[derive(Debug)]
pub struct Panes {
    /// The focused pane.
    pub(crate) focus: Focus,
    /// Scroll offsets of Request, Signature ([`Focus::scroll_slot`]).
    pub(crate) scroll: [usize; 2],
    /// Visible height of the scrollable panes at the last draw.
    pub(crate) viewport: [Cell<usize>; 2],
    /// Content length (lines) of the scrollable panes at the last draw.
    pub(crate) content: [Cell<usize>; 2],
    /// Pane rectangles of the last draw, for the mouse.
    pub(crate) hit: HitAreas,
}

impl Default for Panes {
    /// The operation list focused, nothing scrolled.
    fn default() -> Self {
        Panes {
            focus: Focus::Operations,
            scroll: [0; 2],
            viewport: Default::default(),
            content: Default::default(),
            hit: HitAreas::default(),
        }
    }
}

impl Panes {
    /// The largest offset of `slot` for `content` lines (the last draw's when `None`).
    pub fn max_scroll(&self, slot: usize, content: Option<usize>) -> usize {
        content
            .unwrap_or_else(|| self.content[slot].get())
            .saturating_sub(self.viewport[slot].get().max(1))
    }

    /// Scrolls `slot` by `delta` lines within `0..=max`.
    pub fn scroll_lines(&mut self, slot: usize, delta: isize, max: usize) {
        self.scroll[slot] = scrolled(self.scroll[slot], delta, max);
    }

    /// Lines of one page of `slot` (its last visible height less one, at least one).
    pub fn page(&self, slot: usize) -> isize {
        self.viewport[slot].get().saturating_sub(1).max(1) as isize
    }
}

/// Scroll offset `cur` moved by `delta` lines within `0..=max`.
pub(crate) fn scrolled(cur: usize, delta: isize, max: usize) -> usize {
    let cur = cur.min(max);
    if delta < 0 {
        cur.saturating_sub(delta.unsigned_abs())
    } else {
        (cur + delta as usize).min(max)
    }
}
