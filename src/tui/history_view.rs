//! The history screen's state: the rows of the last search, the highlighted exchange and its
//! detail, the search and import boxes, the diff and the list of imported requests
//! ([`super::history`] handles its keys and draws it).

use std::cell::Cell;

use crate::client::history::{HistoryEntry, HistorySummary};
use crate::client::import::{ImportedRequest, Variables};

/// What the one-line text box of the screen is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Input {
    /// The search box (`/`).
    Search,
    /// The path of a file to import (`i`).
    ImportPath,
}

/// Kind of a line of the detail pane or the diff, for its colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Heading,
    Header,
    Text,
    Added,
    Removed,
}

/// The diff overlay.
#[derive(Debug, Clone)]
pub(crate) struct DiffView {
    pub(crate) title: String,
    pub(crate) lines: Vec<(Kind, String)>,
    pub(crate) scroll: usize,
}

/// Requests imported from a file, listed in an overlay.
#[derive(Debug, Clone)]
pub(crate) struct ImportList {
    pub(crate) source: String,
    pub(crate) requests: Vec<ImportedRequest>,
    pub(crate) variables: Variables,
    pub(crate) selected: usize,
}

/// State of the history screen.
#[derive(Debug, Default)]
pub struct HistoryView {
    /// Index of the highlighted exchange.
    pub selected: usize,
    /// The rows of the last search, as the list draws them (no headers, no bodies).
    pub(crate) rows: Vec<HistorySummary>,
    /// The whole exchange of the highlighted row once read ([`crate::client::history::History::get`]);
    /// `None` while it is being read.
    pub(crate) current: Option<HistoryEntry>,
    /// The whole exchange of the marked row (`m`), for the diff.
    pub(crate) marked_entry: Option<HistoryEntry>,
    pub(crate) loaded: bool,
    pub(crate) error: Option<String>,
    pub(crate) query: String,
    pub(crate) path: String,
    pub(crate) input: Option<Input>,
    pub(crate) marked: Option<i64>,
    pub(crate) diff: Option<DiffView>,
    pub(crate) import: Option<ImportList>,
    pub(crate) detail: Vec<(Kind, String)>,
    pub(crate) detail_scroll: usize,
    /// The exchange whose whole detail `detail` holds (`None` for a placeholder).
    pub(crate) detail_for: Option<i64>,
    /// Visible height of the detail pane or the diff at the last draw.
    pub(crate) viewport: Cell<usize>,
}
