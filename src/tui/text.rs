//! Small text and layout helpers shared by the screens and dialogs: centring a dialog,
//! padding, cutting and wrapping text to a width (in characters).

use ratatui::layout::Rect;

/// A `w`×`h` rectangle centred in `area` (clipped to it).
pub(crate) fn centered(area: Rect, w: u16, h: u16) -> Rect {
    let w = w.min(area.width);
    let h = h.min(area.height);
    Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    )
}

/// `s` padded with spaces to `w` characters (or cut).
pub(crate) fn pad(s: &str, w: usize) -> String {
    let n = s.chars().count();
    if n >= w {
        s.chars().take(w).collect()
    } else {
        format!("{s}{}", " ".repeat(w - n))
    }
}

/// `s` cut to `w` characters with a trailing `…` when longer.
///
/// Looks at no more than `w + 1` characters: a 1 MiB body value costs nothing per frame.
pub(crate) fn ellipsize(s: &str, w: usize) -> String {
    if s.char_indices().nth(w).is_none() {
        s.to_string()
    } else {
        let mut out: String = s.chars().take(w.saturating_sub(1)).collect();
        out.push('…');
        out
    }
}

/// `s` wrapped at spaces to lines of at most `w` characters.
pub(crate) fn wrap_words(s: &str, w: usize) -> Vec<String> {
    let w = w.max(1);
    let mut out = Vec::new();
    let mut cur = String::new();
    for word in s.split(' ') {
        let need = if cur.is_empty() { 0 } else { 1 } + word.chars().count();
        if !cur.is_empty() && cur.chars().count() + need > w {
            out.push(std::mem::take(&mut cur));
        }
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(word);
        while cur.chars().count() > w {
            let head: String = cur.chars().take(w).collect();
            cur = cur.chars().skip(w).collect();
            out.push(head);
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}
