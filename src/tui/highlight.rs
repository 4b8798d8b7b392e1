//! Colouring of the response body's lines: pretty-JSON tokens, search marks painted over
//! them, control characters made visible, and the cut to the visible columns (work bounded
//! by the columns shown, not by the line's length).

use std::ops::Range;

use ratatui::style::{Modifier, Style};
use ratatui::text::Span;

use super::theme::Theme;

/// Colours `line` (JSON tokens when `json`, else `base`), paints the search `marks`
/// (byte ranges, `true` for the current match) over them, and cuts the result to the
/// characters `skip..skip + w`. Work is bounded by `skip + w` characters, not by the
/// line's length.
pub(crate) fn styled_line(
    line: &str,
    json: bool,
    base: Style,
    marks: &[(Range<usize>, bool)],
    skip: usize,
    w: usize,
    t: &Theme,
) -> Vec<Span<'static>> {
    let end = line
        .char_indices()
        .nth(skip + w)
        .map(|(i, _)| i)
        .unwrap_or(line.len());
    let segs = if json {
        json_tokens(line, end, t)
    } else {
        vec![(base, 0..end)]
    };
    let segs = overlay(segs, marks, t);
    let texts = segs
        .into_iter()
        .filter(|(_, r)| r.start < r.end)
        .map(|(s, r)| (s, sanitize(&line[r])))
        .collect();
    cut_segments(texts, skip, w)
}

/// Paints search marks over token segments.
fn overlay(
    segs: Vec<(Style, Range<usize>)>,
    marks: &[(Range<usize>, bool)],
    t: &Theme,
) -> Vec<(Style, Range<usize>)> {
    if marks.is_empty() {
        return segs;
    }
    let current = t.selected;
    let other = Style::new().add_modifier(Modifier::REVERSED);
    let mut out = Vec::with_capacity(segs.len() + 2 * marks.len());
    for (style, r) in segs {
        let mut pos = r.start;
        for (m, cur) in marks {
            if m.end <= pos || m.start >= r.end {
                continue;
            }
            let ms = m.start.max(pos);
            let me = m.end.min(r.end);
            if ms > pos {
                out.push((style, pos..ms));
            }
            let hs = if *cur { current } else { style.patch(other) };
            out.push((hs, ms..me));
            pos = me;
        }
        if pos < r.end {
            out.push((style, pos..r.end));
        }
    }
    out
}

/// The line with tabs as spaces and other control characters as `�` (char for char, so
/// columns stay put).
fn sanitize(s: &str) -> String {
    if !s.chars().any(char::is_control) {
        return s.to_string();
    }
    s.chars()
        .map(|c| match c {
            '\t' => ' ',
            c if c.is_control() => '\u{fffd}',
            c => c,
        })
        .collect()
}

/// How far past the visible part a string is scanned to tell a key (followed by `:`) from a
/// value.
const KEY_PEEK: usize = 512;

/// Token segments (style, byte range) of a pretty-JSON line up to byte `end`: keys,
/// strings, numbers, literals (`true`, `false`, `null`), punctuation, spaces.
fn json_tokens(line: &str, end: usize, t: &Theme) -> Vec<(Style, Range<usize>)> {
    let b = line.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < end {
        let c = b[i];
        let start = i;
        let style = if c == b'"' {
            let limit = (end + KEY_PEEK).min(b.len());
            let mut j = i + 1;
            let mut closed = false;
            while j < limit {
                match b[j] {
                    b'\\' => j += 2,
                    b'"' => {
                        closed = true;
                        j += 1;
                        break;
                    }
                    _ => j += 1,
                }
            }
            let j = j.min(b.len());
            let mut k = j;
            while k < b.len() && k < j + 4 && b[k] == b' ' {
                k += 1;
            }
            i = j;
            if closed && k < b.len() && b[k] == b':' {
                t.json_key
            } else {
                t.json_string
            }
        } else if c == b'-' || c.is_ascii_digit() {
            i += 1;
            while i < end
                && (b[i].is_ascii_digit() || matches!(b[i], b'+' | b'-' | b'.' | b'e' | b'E'))
            {
                i += 1;
            }
            t.json_number
        } else if c.is_ascii_alphabetic() {
            while i < end && b[i].is_ascii_alphabetic() {
                i += 1;
            }
            t.json_literal
        } else if c == b' ' {
            while i < end && b[i] == b' ' {
                i += 1;
            }
            t.base
        } else if c.is_ascii() {
            i += 1;
            t.json_punct
        } else {
            // Not JSON syntax (cannot happen in pretty JSON): take the whole character.
            i += line[i..].chars().next().map(char::len_utf8).unwrap_or(1);
            t.base
        };
        out.push((style, start..i.min(end)));
    }
    out
}

/// Styled segments with the first `skip` characters dropped and cut to `w` characters.
pub(crate) fn cut_segments(
    segs: Vec<(Style, String)>,
    skip: usize,
    w: usize,
) -> Vec<Span<'static>> {
    let mut out = Vec::new();
    let mut to_skip = skip;
    let mut room = w;
    for (style, text) in segs {
        if room == 0 {
            break;
        }
        let n = text.chars().count();
        if to_skip >= n {
            to_skip -= n;
            continue;
        }
        let piece: String = text.chars().skip(to_skip).take(room).collect();
        to_skip = 0;
        room -= piece.chars().count();
        out.push(Span::styled(piece, style));
    }
    out
}

/// Colours one line of pretty JSON (keys, strings, numbers, literals, punctuation), looking
/// only at the characters that can be visible (`skip..skip + w`).
pub(crate) fn json_spans(line: &str, skip: usize, w: usize, t: &Theme) -> Vec<Span<'static>> {
    styled_line(line, true, t.base, &[], skip, w, t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_and_cuts() {
        let t = Theme::dark();
        let spans = json_spans("  \"key\": \"value\",", 0, 80, &t);
        let text: String = spans.iter().map(|s| s.content.to_string()).collect();
        assert_eq!(text, "  \"key\": \"value\",");
        assert_eq!(spans[1].style, t.json_key);
        assert_eq!(spans[1].content, "\"key\"");
        assert_eq!(spans[4].style, t.json_string);
        let styles: Vec<_> = json_spans("  \"n\": -1.5e3, true, null", 0, 80, &t)
            .into_iter()
            .map(|s| (s.content.to_string(), s.style))
            .collect();
        assert!(styles.contains(&("-1.5e3".into(), t.json_number)));
        assert!(styles.contains(&("true".into(), t.json_literal)));
        assert!(styles.contains(&("null".into(), t.json_literal)));
        assert!(styles.contains(&(":".into(), t.json_punct)));
        let cut: String = json_spans("  \"key\": 12", 4, 3, &t)
            .iter()
            .map(|s| s.content.to_string())
            .collect();
        assert_eq!(cut, "ey\"");
        // A key cut off by the window is still a key.
        assert_eq!(
            json_spans("  \"longkey\": 1", 0, 5, &t)[1].style,
            t.json_key
        );
    }
}
