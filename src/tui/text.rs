//! Small text and layout helpers shared by the screens and dialogs: centring a dialog,
//! padding, cutting and wrapping text to a width (in characters), sizes and durations in
//! human units.

use std::time::Duration;

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

/// `n` bytes in human units (IEC): `512 B`, `1.5 KiB`, `20.0 MiB`, `1.2 GiB`.
pub fn human_size(n: usize) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut v = n as f64 / 1024.0;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    format!("{v:.1} {}", UNITS[u])
}

/// A duration for the head line: `42 ms` below a second, else `1.25 s`.
pub fn human_time(d: Duration) -> String {
    if d < Duration::from_secs(1) {
        format!("{} ms", d.as_millis())
    } else {
        format!("{:.2} s", d.as_secs_f64())
    }
}
