//! The overlay stack: every dialog drawn over the screens (body editor, SCA prompt, link
//! chooser, profile picker, help, command palette, problems) lives in one ordered stack,
//! which key handling, drawing and the mouse all read.
//!
//! - Keys go to the topmost overlay ([`Overlays::top`]); the screen below sees no key while
//!   one is open, except through it.
//! - Drawing paints the stack bottom to top ([`Overlays::iter`]), so what takes the keys is
//!   what is on top.
//! - The mouse is ignored while any overlay is open ([`Overlays::is_empty`]).
//!
//! Each overlay sits on a fixed [`Layer`]: opening one puts it at its layer (replacing one
//! of the same kind), so an overlay that appears by itself (the SCA prompt when a response
//! asks for SCA) never hides the dialog the user is working in (the help, the palette).

use std::cell::Cell;

use super::body_editor::BodyEditor;
use super::keymap::Command;

/// The kinds of overlay, bottom to top: the stacking order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Layer {
    /// The JSON body editor ([`super::editor`]).
    BodyEditor,
    /// The scaRedirect prompt.
    ScaPrompt,
    /// The response's link chooser (several `_links`).
    LinkChooser,
    /// The profile picker (`p`).
    Picker,
    /// The lesson picker (`L`, [`super::lesson`]).
    Lessons,
    /// The key help (`?`).
    Help,
    /// The command palette (`Ctrl-p`).
    Palette,
    /// The problems log (`!`).
    Problems,
}

/// One open overlay and its own state.
#[derive(Debug)]
pub enum Overlay {
    /// The body editor with its text.
    BodyEditor(Box<BodyEditor>),
    /// The scaRedirect prompt (its URL stays on the console while it is hidden, for `o`).
    ScaPrompt,
    /// The link chooser; the highlighted link.
    LinkChooser(usize),
    /// The profile picker; the highlighted profile.
    Picker(usize),
    /// The lesson picker.
    Lessons(LessonPicker),
    /// The help and its scroll state.
    Help(HelpView),
    /// The command palette and its filter.
    Palette(PaletteView),
    /// The problems log.
    Problems,
}

impl Overlay {
    /// The layer this overlay sits on.
    pub fn layer(&self) -> Layer {
        match self {
            Overlay::BodyEditor(_) => Layer::BodyEditor,
            Overlay::ScaPrompt => Layer::ScaPrompt,
            Overlay::LinkChooser(_) => Layer::LinkChooser,
            Overlay::Picker(_) => Layer::Picker,
            Overlay::Lessons(_) => Layer::Lessons,
            Overlay::Help(_) => Layer::Help,
            Overlay::Palette(_) => Layer::Palette,
            Overlay::Problems => Layer::Problems,
        }
    }
}

/// The open overlays, bottom first, at most one per [`Layer`].
#[derive(Debug, Default)]
pub struct Overlays {
    stack: Vec<Overlay>,
}

impl Overlays {
    /// Opens `overlay` at its layer, replacing an open one of the same kind.
    pub fn open(&mut self, overlay: Overlay) {
        let layer = overlay.layer();
        self.close(layer);
        let at = self
            .stack
            .iter()
            .position(|o| o.layer() > layer)
            .unwrap_or(self.stack.len());
        self.stack.insert(at, overlay);
    }

    /// Closes the overlay of `layer` and returns it (`None` when it was not open).
    pub fn close(&mut self, layer: Layer) -> Option<Overlay> {
        let i = self.stack.iter().position(|o| o.layer() == layer)?;
        Some(self.stack.remove(i))
    }

    /// Whether an overlay of `layer` is open.
    pub fn is_open(&self, layer: Layer) -> bool {
        self.get(layer).is_some()
    }

    /// The open overlay of `layer`.
    pub fn get(&self, layer: Layer) -> Option<&Overlay> {
        self.stack.iter().find(|o| o.layer() == layer)
    }

    /// The open overlay of `layer`, mutably.
    pub fn get_mut(&mut self, layer: Layer) -> Option<&mut Overlay> {
        self.stack.iter_mut().find(|o| o.layer() == layer)
    }

    /// The topmost overlay: the one that takes the keys.
    pub fn top(&self) -> Option<&Overlay> {
        self.stack.last()
    }

    /// The layers open, topmost first.
    pub fn layers_top_down(&self) -> impl Iterator<Item = Layer> + '_ {
        self.stack.iter().rev().map(Overlay::layer)
    }

    /// The open overlays, bottom first (drawing order).
    pub fn iter(&self) -> impl Iterator<Item = &Overlay> {
        self.stack.iter()
    }

    /// Whether no overlay is open.
    pub fn is_empty(&self) -> bool {
        self.stack.is_empty()
    }

    /// The highlighted profile of the open picker.
    pub fn picker(&self) -> Option<usize> {
        match self.get(Layer::Picker) {
            Some(Overlay::Picker(i)) => Some(*i),
            _ => None,
        }
    }

    /// The highlighted link of the open link chooser.
    pub fn link_chooser(&self) -> Option<usize> {
        match self.get(Layer::LinkChooser) {
            Some(Overlay::LinkChooser(i)) => Some(*i),
            _ => None,
        }
    }

    /// The open lesson picker.
    pub fn lessons(&self) -> Option<&LessonPicker> {
        match self.get(Layer::Lessons) {
            Some(Overlay::Lessons(p)) => Some(p),
            _ => None,
        }
    }

    /// The open lesson picker, mutably.
    pub fn lessons_mut(&mut self) -> Option<&mut LessonPicker> {
        match self.get_mut(Layer::Lessons) {
            Some(Overlay::Lessons(p)) => Some(p),
            _ => None,
        }
    }

    /// The open help's scroll state.
    pub fn help(&self) -> Option<&HelpView> {
        match self.get(Layer::Help) {
            Some(Overlay::Help(v)) => Some(v),
            _ => None,
        }
    }

    /// The open help's scroll state, mutably.
    pub fn help_mut(&mut self) -> Option<&mut HelpView> {
        match self.get_mut(Layer::Help) {
            Some(Overlay::Help(v)) => Some(v),
            _ => None,
        }
    }

    /// The open palette.
    pub fn palette(&self) -> Option<&PaletteView> {
        match self.get(Layer::Palette) {
            Some(Overlay::Palette(p)) => Some(p),
            _ => None,
        }
    }

    /// The open palette, mutably.
    pub fn palette_mut(&mut self) -> Option<&mut PaletteView> {
        match self.get_mut(Layer::Palette) {
            Some(Overlay::Palette(p)) => Some(p),
            _ => None,
        }
    }

    /// The open body editor.
    pub fn body_editor(&self) -> Option<&BodyEditor> {
        match self.get(Layer::BodyEditor) {
            Some(Overlay::BodyEditor(e)) => Some(e.as_ref()),
            _ => None,
        }
    }

    /// The open body editor, mutably.
    pub fn body_editor_mut(&mut self) -> Option<&mut BodyEditor> {
        match self.get_mut(Layer::BodyEditor) {
            Some(Overlay::BodyEditor(e)) => Some(e.as_mut()),
            _ => None,
        }
    }

    /// Closes the body editor and returns it.
    pub fn take_body_editor(&mut self) -> Option<Box<BodyEditor>> {
        match self.close(Layer::BodyEditor) {
            Some(Overlay::BodyEditor(e)) => Some(e),
            _ => None,
        }
    }
}

/// The lesson picker (`L`): the lessons on offer, one highlighted.
#[derive(Debug, Clone, Default)]
pub struct LessonPicker {
    /// The lessons, built-in first.
    pub lessons: Vec<crate::lessons::Lesson>,
    /// The highlighted one.
    pub selected: usize,
    /// Whether a lesson is running (the picker offers to end it).
    pub running: bool,
}

/// State of the command palette.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PaletteView {
    /// The filter text.
    pub query: String,
    /// Index of the highlighted entry among the filtered ones.
    pub selected: usize,
}

/// Scroll state of the help overlay: the first line shown, and the sizes of the last draw.
#[derive(Debug, Default)]
pub struct HelpView {
    /// First line shown (clamped when drawing).
    pub scroll: usize,
    pub(crate) rows: Cell<usize>,
    pub(crate) height: Cell<usize>,
}

impl HelpView {
    /// First help line to show for `rows` lines in `height` rows; records both for the keys.
    pub(crate) fn top(&self, rows: usize, height: u16) -> u16 {
        self.rows.set(rows);
        self.height.set(height as usize);
        let max = rows.saturating_sub(height as usize);
        self.scroll.min(max).min(u16::MAX as usize) as u16
    }

    /// Scrolls for ↑/↓/PgUp/PgDn (within the sizes of the last draw); false for other
    /// commands.
    pub(crate) fn scroll_by(&mut self, cmd: Command) -> bool {
        let height = self.height.get().max(1);
        let max = self.rows.get().saturating_sub(height);
        let cur = self.scroll.min(max);
        let page = height.saturating_sub(1).max(1);
        self.scroll = match cmd {
            Command::Up => cur.saturating_sub(1),
            Command::Down => (cur + 1).min(max),
            Command::PageUp => cur.saturating_sub(page),
            Command::PageDown => (cur + page).min(max),
            _ => return false,
        };
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlays_stack_by_layer_not_by_opening_order() {
        let mut o = Overlays::default();
        o.open(Overlay::Help(HelpView::default()));
        o.open(Overlay::ScaPrompt);
        o.open(Overlay::Picker(2));
        let top_down: Vec<Layer> = o.layers_top_down().collect();
        assert_eq!(top_down, [Layer::Help, Layer::Picker, Layer::ScaPrompt]);
        o.open(Overlay::Picker(0));
        assert_eq!(o.picker(), Some(0));
        assert_eq!(o.iter().count(), 3);
        assert!(matches!(o.close(Layer::Help), Some(Overlay::Help(_))));
        assert_eq!(o.top().map(Overlay::layer), Some(Layer::Picker));
    }
}
