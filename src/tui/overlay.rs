//! The overlay stack: every dialog drawn over the screens (body editor, SCA prompt, link
//! chooser, profile picker, help, command palette, problems) lives in one ordered stack.
//!
//! Each overlay sits on a fixed [`Layer`]: opening one puts it at its layer (replacing one
//! of the same kind), so an overlay that appears by itself (the SCA prompt when a response
//! asks for SCA) never hides the dialog the user is working in (the help, the palette).
//!
//! Three more layers are states of the console rather than drawn dialogs: typing in a text
//! box of the screen shown ([`Layer::Insert`]), the operation finder ([`Layer::Finder`])
//! and the y/N question ([`Layer::Confirm`]). With the open overlays they make the one
//! focus chain (`App::focus_chain`, topmost first) that keys, paste and the mouse all read:
//! the topmost layer takes the input, the screen below sees none while one is open.
//! Drawing paints the overlays bottom to top ([`Overlays::iter`]), so what takes the input
//! is what is on top.

use std::cell::Cell;

use ratatui_textarea::TextArea;

use super::keymap::Command;
use crate::client::validate::Problem;
use crate::xs2a::operations::Operation;

/// The layers of the focus chain, bottom to top: the stacking order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Layer {
    /// The JSON body editor ([`super::editor`]).
    BodyEditor,
    /// The scaRedirect prompt.
    ScaPrompt,
    /// Typing in a text box of the screen shown: a parameter in INSERT mode, the response's
    /// search or filter box, the history's search, the profile form, the monitor's offset.
    /// Above the SCA prompt, which appears by itself while one types. Not an [`Overlay`].
    Insert,
    /// The operation finder filtering the console's list. Not an [`Overlay`].
    Finder,
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
    /// A destructive action waiting for y/N: any key, paste or click answers it first. Not
    /// an [`Overlay`].
    Confirm,
}

/// One open overlay and its own state.
#[derive(Debug)]
pub enum Overlay {
    /// The body editor with its text.
    BodyEditor(Box<BodyEditor>),
    /// The scaRedirect prompt (its URL stays on the console while it is hidden, for `o`).
    ScaPrompt,
    /// The link chooser (its highlighted link is the response pane's,
    /// [`super::response_pane`]).
    LinkChooser,
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
            Overlay::LinkChooser => Layer::LinkChooser,
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

/// The accessors of an overlay `variant` holding a `ty` (possibly boxed): by reference
/// (when named) and by mutable reference, `None` when that layer is not open.
macro_rules! layer_accessors {
    ($variant:ident: $ty:ty, $(#[$doc:meta])* $get:ident, $(#[$doc_mut:meta])* $get_mut:ident) => {
        $(#[$doc])*
        pub fn $get(&self) -> Option<&$ty> {
            match self.get(Layer::$variant) {
                Some(Overlay::$variant(v)) => {
                    let v: &$ty = v;
                    Some(v)
                }
                _ => None,
            }
        }

        layer_accessors!($variant: $ty, $(#[$doc_mut])* $get_mut);
    };
    ($variant:ident: $ty:ty, $(#[$doc_mut:meta])* $get_mut:ident) => {
        $(#[$doc_mut])*
        pub fn $get_mut(&mut self) -> Option<&mut $ty> {
            match self.get_mut(Layer::$variant) {
                Some(Overlay::$variant(v)) => {
                    let v: &mut $ty = v;
                    Some(v)
                }
                _ => None,
            }
        }
    };
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

    /// The layers open, topmost first.
    pub fn layers_top_down(&self) -> impl Iterator<Item = Layer> + '_ {
        self.stack.iter().rev().map(Overlay::layer)
    }

    /// The open overlays, bottom first (drawing order).
    pub fn iter(&self) -> impl Iterator<Item = &Overlay> {
        self.stack.iter()
    }

    /// The highlighted profile of the open picker.
    pub fn picker(&self) -> Option<usize> {
        match self.get(Layer::Picker) {
            Some(Overlay::Picker(i)) => Some(*i),
            _ => None,
        }
    }

    layer_accessors!(Lessons: LessonPicker,
        /// The open lesson picker, mutably.
        lessons_mut);
    layer_accessors!(Help: HelpView,
        /// The open help's scroll state, mutably.
        help_mut);
    layer_accessors!(Palette: PaletteView,
        /// The open palette.
        palette,
        /// The open palette, mutably.
        palette_mut);
    layer_accessors!(BodyEditor: BodyEditor,
        /// The open body editor.
        body_editor,
        /// The open body editor, mutably.
        body_editor_mut);

    /// Closes the body editor and returns it.
    pub fn take_body_editor(&mut self) -> Option<Box<BodyEditor>> {
        match self.close(Layer::BodyEditor) {
            Some(Overlay::BodyEditor(e)) => Some(e),
            _ => None,
        }
    }
}

/// The open body editor: its state (the component is [`super::body_editor`]).
#[derive(Debug)]
pub struct BodyEditor {
    /// The text being edited.
    pub(crate) text: TextArea<'static>,
    /// The operation whose body it is.
    pub(crate) op: &'static Operation,
    /// Index of the operation in the console's list.
    pub(crate) op_index: usize,
    /// Index of the `body` field in the form.
    pub(crate) field: usize,
    /// Index of the template in [`Operation::templates`].
    pub(crate) template: usize,
    /// Problems of the text as it is now.
    pub(crate) problems: Vec<Problem>,
    /// The operation's other parameters as the form holds them (name, value), which the
    /// body is validated with; they do not change while the editor takes every key.
    pub(crate) params: Vec<(String, String)>,
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
        assert_eq!(o.layers_top_down().next(), Some(Layer::Picker));
    }
}
