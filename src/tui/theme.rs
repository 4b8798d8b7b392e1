//! Colours and text styles of the console, all in one place, read from TOML theme files.
//!
//! The built-in themes are the files of the repository's `themes/` directory, embedded in
//! the binary: [`Theme::dark`] (the default: the terminal's own background, calm ANSI
//! colours), `light`, and [`Theme::high_contrast`] (projectors: pure black, white and
//! yellow, bold). User themes are `<config>/themes/*.toml` ([`ThemeSet::load`]); a user
//! theme with the name of a built-in one replaces it.
//!
//! A theme file maps each style of [`Theme`] (the snake_case field names, [`Theme::KEYS`]) to
//! a style: a colour name for the foreground (`key = "yellow"`) or a table
//! `{ fg = "black", bg = "#00afaf", bold = true }` with the flags `bold`, `dim`, `italic`,
//! `underlined`, `reversed`, `crossed_out`. Colours are parsed by ratatui's `Color: FromStr`:
//! the 16 ANSI names, `reset`, a 256-palette index (`"236"`) or `#rrggbb`. The optional key
//! `extends = "light"` names the built-in theme that styles missing from the file come from
//! (default `dark`). Unknown keys and styles with a bad colour or flag are reported
//! (`file:line: reason`) and skipped, the theme's other styles are used (the skipped ones
//! come from `extends`/the base); a file that is not TOML, or names an unknown `extends`, is
//! rejected with `file:line: reason`.

use std::path::Path;
use std::sync::OnceLock;

use ratatui::style::{Color, Modifier, Style};
use toml::Spanned;
use toml::de::{DeTable, DeValue};

/// The built-in themes: `(name, TOML text)`, in cycling order.
pub const BUILTIN: [(&str, &str); 3] = [
    ("dark", include_str!("../../themes/dark.toml")),
    ("light", include_str!("../../themes/light.toml")),
    (
        "high-contrast",
        include_str!("../../themes/high-contrast.toml"),
    ),
];

/// Name of the default theme, used when a chosen theme is missing or broken.
pub const DEFAULT_THEME: &str = "dark";

macro_rules! theme_struct {
    ($( $(#[$doc:meta])* $field:ident, )*) => {
        /// Every style the console draws with; each field is a key of the theme files.
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub struct Theme {
            /// Name: the theme file's name without `.toml` (`dark`, `light`,
            /// `high-contrast`, or a user theme's).
            pub name: String,
            $( $(#[$doc])* pub $field: Style, )*
        }

        impl Theme {
            /// The style keys of a theme file, in the order of the struct.
            pub const KEYS: &'static [&'static str] = &[$(stringify!($field)),*];

            fn style_mut(&mut self, key: &str) -> Option<&mut Style> {
                match key {
                    $(stringify!($field) => Some(&mut self.$field),)*
                    _ => None,
                }
            }

            /// A theme called `name` with every style empty (the terminal's defaults).
            fn blank(name: &str) -> Self {
                Theme { name: name.to_string(), $($field: Style::new(),)* }
            }
        }
    };
}

theme_struct! {
    /// Base style of every pane (foreground and background).
    base,
    /// Secondary text: hints, placeholders, labels.
    dim,
    /// Border of a pane without focus.
    border,
    /// Border and title of the focused pane.
    border_focused,
    /// Title of a pane without focus.
    title,
    /// The status bar at the top.
    status_bar,
    /// Labels in the status bar (`Profile`, `Target`, ...).
    status_label,
    /// A value in the status bar that needs attention (no PSU yet).
    status_attention,
    /// The selected row of the focused list.
    selected,
    /// The selected row of a list without focus.
    selected_unfocused,
    /// Group headings in the operation list.
    group,
    /// HTTP methods that only read (GET, HEAD).
    method_read,
    /// HTTP methods that create or change (POST, PUT, PATCH).
    method_write,
    /// DELETE.
    method_delete,
    /// 2xx statuses.
    status_ok,
    /// 3xx statuses.
    status_redirect,
    /// 4xx statuses.
    status_client_error,
    /// 5xx statuses and transport errors.
    status_server_error,
    /// Header names in the request and response panes.
    header_name,
    /// JSON object keys.
    json_key,
    /// JSON strings.
    json_string,
    /// JSON numbers.
    json_number,
    /// JSON `true`, `false`, `null`.
    json_literal,
    /// JSON braces, brackets, commas and colons.
    json_punct,
    /// Informational messages in the status line.
    info,
    /// Success messages.
    success,
    /// Warnings.
    warning,
    /// Errors.
    error,
    /// Border of modal dialogs (SCA prompt, help, profiles, palette).
    modal_border,
    /// The scaRedirect URL in the prompt.
    url,
    /// A parameter value.
    input,
    /// The parameter being edited (INSERT mode).
    input_active,
    /// Key names in the help overlay and the hint line.
    key,
    /// The `-- INSERT --` mode badge.
    mode_badge,
}

impl Default for Theme {
    fn default() -> Self {
        Theme::dark()
    }
}

/// The built-in theme `name` parsed once and cached.
fn builtin(name: &str) -> Option<Theme> {
    // One cache per theme: a start on the default theme parses `dark.toml` only (issue 23).
    static CACHE: [OnceLock<Theme>; BUILTIN.len()] = [const { OnceLock::new() }; BUILTIN.len()];
    let i = BUILTIN.iter().position(|(n, _)| *n == name)?;
    if BUILTIN[i].0 == DEFAULT_THEME {
        return Some(Theme::dark());
    }
    let theme = CACHE[i].get_or_init(|| {
        let (n, text) = BUILTIN[i];
        parse_theme(n, text, &format!("themes/{n}.toml"), Some(&Theme::dark()))
            .map(|(t, _)| t)
            // The built-ins are tested to parse; never panic over one anyway.
            .unwrap_or_else(|_| Theme::blank(n))
    });
    Some(theme.clone())
}

/// The frame of a pane or panel: rounded border in `border`, `title` in `title_style`.
pub fn rounded_block<'a>(
    title: impl Into<std::borrow::Cow<'a, str>>,
    border: Style,
    title_style: Style,
) -> ratatui::widgets::Block<'a> {
    use ratatui::widgets::{Block, BorderType};
    Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(border)
        .title(ratatui::text::Span::styled(title, title_style))
}

impl Theme {
    /// The frame of a console pane titled `title`: `▸` and the focused border colour when
    /// `focused`.
    pub(crate) fn pane_block(
        &self,
        title: impl Into<String>,
        focused: bool,
    ) -> ratatui::widgets::Block<'static> {
        let title = title.into();
        let (title, border, tstyle) = if focused {
            (
                format!(" ▸ {title} "),
                self.border_focused,
                self.border_focused,
            )
        } else {
            (format!(" {title} "), self.border, self.title)
        };
        rounded_block(title, border, tstyle)
            .style(self.base)
            .padding(ratatui::widgets::Padding::horizontal(1))
    }

    /// A pane collapsed to its title line (presenter mode): `key` gives it the room.
    pub(crate) fn collapsed_block(
        &self,
        title: &str,
        key: &str,
    ) -> ratatui::widgets::Block<'static> {
        use ratatui::widgets::{Block, BorderType, Borders};
        Block::new()
            .borders(Borders::TOP)
            .border_type(BorderType::Rounded)
            .border_style(self.border)
            .title(ratatui::text::Span::styled(
                format!(" {title} · {key} shows it "),
                self.title,
            ))
            .style(self.base)
    }

    /// The frame of a modal overlay (SCA prompt, problems, profile picker, link chooser):
    /// double border in `modal_border`, `title` in it, `base` inside, one column of padding.
    pub fn modal_block<'a>(&self, title: &'a str) -> ratatui::widgets::Block<'a> {
        use ratatui::widgets::{Block, BorderType, Padding};
        Block::bordered()
            .border_type(BorderType::Double)
            .border_style(self.modal_border)
            .title(ratatui::text::Span::styled(title, self.modal_border))
            .style(self.base)
            .padding(Padding::horizontal(1))
    }

    /// The default theme (`themes/dark.toml`): terminal background, muted ANSI colours.
    pub fn dark() -> Self {
        static DARK: OnceLock<Theme> = OnceLock::new();
        DARK.get_or_init(|| {
            let (n, text) = BUILTIN[0];
            parse_theme(n, text, "themes/dark.toml", None)
                .map(|(t, _)| t)
                .unwrap_or_else(|_| Theme::blank(n))
        })
        .clone()
    }

    /// The light theme (`themes/light.toml`): dark text on a light background.
    pub fn light() -> Self {
        builtin("light").unwrap_or_else(Theme::dark)
    }

    /// Black, white and yellow, bold, for projectors (`themes/high-contrast.toml`).
    pub fn high_contrast() -> Self {
        builtin("high-contrast").unwrap_or_else(Theme::dark)
    }

    /// The built-in theme called `name` (`dark`, `light`, `high-contrast`; case and `_`
    /// are ignored), if there is one. User themes: [`ThemeSet::select`].
    pub fn by_name(name: &str) -> Option<Self> {
        let n = name.trim().to_ascii_lowercase().replace('_', "-");
        match n.as_str() {
            "dark" | "default" => Some(Theme::dark()),
            "highcontrast" | "contrast" => Some(Theme::high_contrast()),
            other => builtin(other),
        }
    }

    /// Style of an HTTP method name.
    pub fn method(&self, method: &str) -> Style {
        match method {
            "GET" | "HEAD" | "OPTIONS" => self.method_read,
            "DELETE" => self.method_delete,
            _ => self.method_write,
        }
    }

    /// Style of an HTTP status code.
    pub fn http_status(&self, status: u16) -> Style {
        match status {
            200..=299 => self.status_ok,
            300..=399 => self.status_redirect,
            400..=499 => self.status_client_error,
            _ => self.status_server_error,
        }
    }
}

/// The 1-based line of byte offset `at` in `text`.
pub(crate) fn line_of(text: &str, at: usize) -> usize {
    text.as_bytes()[..at.min(text.len())]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

/// `origin:line: message` of a TOML syntax error.
pub(crate) fn toml_error(origin: &str, text: &str, e: &toml::de::Error) -> String {
    let line = line_of(text, e.span().map(|s| s.start).unwrap_or(0));
    format!("{origin}:{line}: {}", e.message().trim())
}

const FLAGS: [(&str, Modifier); 6] = [
    ("bold", Modifier::BOLD),
    ("dim", Modifier::DIM),
    ("italic", Modifier::ITALIC),
    ("underlined", Modifier::UNDERLINED),
    ("reversed", Modifier::REVERSED),
    ("crossed_out", Modifier::CROSSED_OUT),
];

fn parse_color(v: &Spanned<DeValue>, what: &str, at: &str) -> Result<Color, String> {
    match v.get_ref().as_str() {
        Some(s) => s.parse::<Color>().map_err(|_| {
            format!(
                "{at}: {what}: \"{s}\" is not a colour (try \"cyan\", \"reset\", \"236\" or \"#rrggbb\")"
            )
        }),
        None => Err(format!("{at}: {what} must be a string (a colour)")),
    }
}

/// Parses one style value; unknown keys of a style table are pushed to `warnings`.
fn parse_style(
    key: &str,
    v: &Spanned<DeValue>,
    text: &str,
    origin: &str,
    warnings: &mut Vec<String>,
) -> Result<Style, String> {
    let at = |span: std::ops::Range<usize>| format!("{origin}:{}", line_of(text, span.start));
    match v.get_ref() {
        DeValue::String(_) => Ok(Style::new().fg(parse_color(v, key, &at(v.span()))?)),
        DeValue::Table(t) => {
            let mut style = Style::new();
            let mut entries: Vec<_> = t.iter().collect();
            entries.sort_by_key(|(k, _)| k.span().start);
            for (k, val) in entries {
                let name: &str = k.get_ref();
                let here = at(k.span());
                match name {
                    "fg" => style = style.fg(parse_color(val, &format!("{key}.fg"), &here)?),
                    "bg" => style = style.bg(parse_color(val, &format!("{key}.bg"), &here)?),
                    flag => match FLAGS.iter().find(|(n, _)| *n == flag) {
                        Some((_, m)) => match val.get_ref().as_bool() {
                            Some(true) => style = style.add_modifier(*m),
                            Some(false) => {}
                            None => {
                                return Err(format!("{here}: {key}.{flag} must be true or false"));
                            }
                        },
                        None => warnings.push(format!(
                            "{here}: unknown key \"{flag}\" in {key} (known: fg, bg, {})",
                            FLAGS.map(|(n, _)| n).join(", ")
                        )),
                    },
                }
            }
            Ok(style)
        }
        _ => Err(format!(
            "{}: {key} must be a colour or a table like {{ fg = \"white\", bold = true }}",
            at(v.span())
        )),
    }
}

/// Why a theme file was left out (`origin:line: reason`, [`parse_theme`]).
#[derive(Debug, thiserror::Error)]
pub enum ThemeError {
    /// The file cannot be read.
    #[error("{origin}: cannot read: {source}")]
    Read {
        /// The file.
        origin: String,
        /// The read error.
        source: std::io::Error,
    },
    /// Not TOML.
    #[error("{at}: {}", .source.message().trim())]
    Syntax {
        /// `origin:line` of the error.
        at: String,
        /// The TOML parser's error.
        source: toml::de::Error,
    },
    /// `extends` is not a string.
    #[error("{at}: extends must be a string")]
    ExtendsNotString {
        /// `origin:line` of `extends`.
        at: String,
    },
    /// `extends` names the theme itself.
    #[error("{at}: a theme cannot extend itself")]
    ExtendsItself {
        /// `origin:line` of `extends`.
        at: String,
    },
    /// `extends` names no built-in theme.
    #[error("{at}: extends \"{base}\": no such built-in theme ({})", BUILTIN.map(|(n, _)| n).join(", "))]
    UnknownBase {
        /// `origin:line` of `extends`.
        at: String,
        /// The name given.
        base: String,
    },
}

/// Why [`ThemeSet::select`] gave no theme (the default is used then).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ThemeSelectError {
    /// The theme's file was left out when the themes were loaded.
    #[error("theme {name} not used: {reason}; using {DEFAULT_THEME}")]
    Broken {
        /// The theme asked for.
        name: String,
        /// Why its file was left out (`file:line: reason`).
        reason: String,
    },
    /// No theme of that name.
    #[error("no theme called \"{name}\" (themes: {known}); using {DEFAULT_THEME}")]
    Unknown {
        /// The theme asked for.
        name: String,
        /// The usable themes, `, `-separated.
        known: String,
    },
}

/// Parses the theme file `text` (read from `origin`, used in messages) as the theme `name`.
/// Styles missing from the file come from `extends = "..."` when given, else from `base`,
/// else they are empty.
///
/// Returns the theme and warnings (`origin:line: reason`): unknown keys, and styles skipped
/// for a bad colour, a flag that is not a boolean or a value that is neither a colour nor a
/// table (those keep the style of `extends`/`base`). Errors ([`ThemeError`],
/// `origin:line: reason`): not TOML, a bad or unknown `extends`.
pub fn parse_theme(
    name: &str,
    text: &str,
    origin: &str,
    base: Option<&Theme>,
) -> Result<(Theme, Vec<String>), ThemeError> {
    let doc = DeTable::parse(text).map_err(|source| ThemeError::Syntax {
        at: format!(
            "{origin}:{}",
            line_of(text, source.span().map(|s| s.start).unwrap_or(0))
        ),
        source,
    })?;
    let doc = doc.get_ref();
    let mut warnings = Vec::new();
    let mut theme = match doc.get("extends") {
        Some(v) => {
            let at = format!("{origin}:{}", line_of(text, v.span().start));
            let ext = v
                .get_ref()
                .as_str()
                .ok_or_else(|| ThemeError::ExtendsNotString { at: at.clone() })?;
            if ext == name {
                return Err(ThemeError::ExtendsItself { at });
            }
            Theme::by_name(ext).ok_or_else(|| ThemeError::UnknownBase {
                at,
                base: ext.to_string(),
            })?
        }
        None => base.cloned().unwrap_or_else(|| Theme::blank(name)),
    };
    theme.name = name.to_string();
    let mut entries: Vec<_> = doc.iter().collect();
    entries.sort_by_key(|(k, _)| k.span().start);
    for (k, v) in entries {
        let key: &str = k.get_ref();
        if key == "extends" {
            continue;
        }
        let parsed = if Theme::KEYS.contains(&key) {
            match parse_style(key, v, text, origin, &mut warnings) {
                Ok(style) => Some(style),
                Err(e) => {
                    // One bad style does not cost the others: skipped, reported.
                    warnings.push(format!("{e}; {key} skipped"));
                    continue;
                }
            }
        } else {
            None
        };
        match (parsed, theme.style_mut(key)) {
            (Some(style), Some(slot)) => *slot = style,
            _ => warnings.push(format!(
                "{origin}:{}: unknown key \"{key}\" (not a style of the console)",
                line_of(text, k.span().start)
            )),
        }
    }
    Ok((theme, warnings))
}

/// The themes that can be chosen: the built-ins, then the user's, with what went wrong
/// while reading them. The built-ins are parsed when first needed: selecting one parses that
/// one only, listing or cycling parses them all (the start of the console on the default
/// theme parses `dark.toml` alone, issue 23).
#[derive(Debug, Clone, Default)]
pub struct ThemeSet {
    /// The user's themes, in file-name order.
    user: Vec<Theme>,
    /// `(name, error)` of user theme files that could not be used.
    broken: Vec<(String, String)>,
    problems: Vec<String>,
    /// Every usable theme in cycling order, made at the first [`ThemeSet::themes`].
    all: OnceLock<Vec<Theme>>,
}

impl ThemeSet {
    /// Only the built-in themes.
    pub fn builtin() -> Self {
        ThemeSet::default()
    }

    /// The built-in themes plus every `*.toml` of `dir` (the user's `<config>/themes`), in
    /// file-name order; a missing directory is not an error. A user theme named like a
    /// built-in one replaces it. Files that cannot be read or parsed are left out and
    /// reported ([`ThemeSet::problems`]); unknown keys are reported too.
    pub fn load(dir: Option<&Path>) -> Self {
        let mut set = ThemeSet::builtin();
        let Some(dir) = dir else {
            return set;
        };
        let Ok(rd) = std::fs::read_dir(dir) else {
            return set;
        };
        let mut files: Vec<_> = rd
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "toml") && p.is_file())
            .collect();
        files.sort();
        for path in files {
            let Some(name) = path
                .file_stem()
                .and_then(|s| s.to_str())
                .map(str::to_string)
            else {
                continue;
            };
            let origin = path.display().to_string();
            let result = std::fs::read_to_string(&path)
                .map_err(|source| ThemeError::Read {
                    origin: origin.clone(),
                    source,
                })
                .and_then(|text| parse_theme(&name, &text, &origin, Some(&Theme::dark())));
            match result {
                Ok((theme, warnings)) => {
                    set.problems.extend(warnings);
                    set.user.push(theme);
                }
                Err(e) => {
                    set.problems.push(e.to_string());
                    set.broken.push((name, e.to_string()));
                }
            }
        }
        set
    }

    /// The usable themes, in cycling order: the built-ins (a user theme of the same name in
    /// place of one), then the other user themes.
    pub fn themes(&self) -> &[Theme] {
        self.all.get_or_init(|| {
            let mut all: Vec<Theme> = BUILTIN
                .iter()
                .filter_map(|(n, _)| self.user_theme(n).cloned().or_else(|| builtin(n)))
                .collect();
            for t in &self.user {
                if !all.iter().any(|a| a.name == t.name) {
                    all.push(t.clone());
                }
            }
            all
        })
    }

    /// The user's theme called `name`.
    fn user_theme(&self, name: &str) -> Option<&Theme> {
        self.user.iter().find(|t| t.name == name)
    }

    /// Names of the usable themes, in cycling order.
    pub fn names(&self) -> Vec<&str> {
        self.themes().iter().map(|t| t.name.as_str()).collect()
    }

    /// What went wrong while loading: unknown keys (the theme is used anyway) and files
    /// left out (`file:line: reason`).
    pub fn problems(&self) -> &[String] {
        &self.problems
    }

    /// The theme called `name`. A theme whose file is broken, or a name that is not known,
    /// gives a [`ThemeSelectError`] naming the file, line and reason; use the default theme
    /// then ([`Theme::dark`]).
    pub fn select(&self, name: &str) -> Result<Theme, ThemeSelectError> {
        // A name of the set: a user theme, else a built-in (that one parsed alone).
        if let Some(t) = self.user_theme(name).cloned().or_else(|| builtin(name)) {
            return Ok(t);
        }
        if let Some((_, e)) = self.broken.iter().find(|(n, _)| n == name) {
            return Err(ThemeSelectError::Broken {
                name: name.to_string(),
                reason: e.clone(),
            });
        }
        match Theme::by_name(name).and_then(|t| self.themes().iter().find(|x| x.name == t.name)) {
            Some(t) => Ok(t.clone()),
            None => Err(ThemeSelectError::Unknown {
                name: name.to_string(),
                known: self.names().join(", "),
            }),
        }
    }

    /// The theme after the one called `current` (the first after the last, and the first
    /// when `current` is not in the set).
    pub fn next(&self, current: &str) -> Theme {
        let themes = self.themes();
        let i = themes
            .iter()
            .position(|t| t.name == current)
            .map(|i| (i + 1) % themes.len().max(1))
            .unwrap_or(0);
        themes.get(i).cloned().unwrap_or_else(Theme::dark)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selecting_a_theme_makes_no_list_of_all() {
        let set = ThemeSet::load(None);
        assert_eq!(set.select("light").unwrap().name, "light");
        assert_eq!(set.select("dark").unwrap(), Theme::dark());
        assert!(set.all.get().is_none(), "every built-in was parsed");
        assert_eq!(set.names(), ["dark", "light", "high-contrast"]);
        assert_eq!(set.next("high-contrast").name, "dark");
    }

    /// The dark theme as it was written in Rust before it moved to `themes/dark.toml`.
    fn legacy_dark() -> Theme {
        let mut t = Theme::blank("dark");
        t.base = Style::new().fg(Color::Reset).bg(Color::Reset);
        t.dim = Style::new().fg(Color::DarkGray);
        t.border = Style::new().fg(Color::DarkGray);
        t.border_focused = Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD);
        t.title = Style::new().fg(Color::Gray);
        t.status_bar = Style::new().fg(Color::White).bg(Color::Indexed(236));
        t.status_label = Style::new().fg(Color::Gray).bg(Color::Indexed(236));
        t.status_attention = Style::new().fg(Color::Yellow).bg(Color::Indexed(236));
        t.selected = Style::new()
            .fg(Color::Black)
            .bg(Color::Cyan)
            .add_modifier(Modifier::BOLD);
        t.selected_unfocused = Style::new().fg(Color::White).bg(Color::Indexed(238));
        t.group = Style::new().fg(Color::Blue).add_modifier(Modifier::BOLD);
        t.method_read = Style::new().fg(Color::Green);
        t.method_write = Style::new().fg(Color::Yellow);
        t.method_delete = Style::new().fg(Color::Red);
        t.status_ok = Style::new().fg(Color::Green).add_modifier(Modifier::BOLD);
        t.status_redirect = Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD);
        t.status_client_error = Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD);
        t.status_server_error = Style::new().fg(Color::Red).add_modifier(Modifier::BOLD);
        t.header_name = Style::new().fg(Color::Cyan);
        t.json_key = Style::new().fg(Color::Cyan);
        t.json_string = Style::new().fg(Color::Green);
        t.json_number = Style::new().fg(Color::Magenta);
        t.json_literal = Style::new().fg(Color::Yellow);
        t.json_punct = Style::new().fg(Color::Gray);
        t.info = Style::new().fg(Color::Gray);
        t.success = Style::new().fg(Color::Green).add_modifier(Modifier::BOLD);
        t.warning = Style::new().fg(Color::Yellow);
        t.error = Style::new().fg(Color::Red).add_modifier(Modifier::BOLD);
        t.modal_border = Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD);
        t.url = Style::new()
            .fg(Color::Cyan)
            .add_modifier(Modifier::UNDERLINED);
        t.input = Style::new().fg(Color::White);
        t.input_active = Style::new().fg(Color::White).bg(Color::Indexed(24));
        t.key = Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD);
        t.mode_badge = Style::new()
            .fg(Color::Black)
            .bg(Color::Yellow)
            .add_modifier(Modifier::BOLD);
        t
    }

    #[test]
    fn dark_toml_is_the_former_dark_theme() {
        assert_eq!(Theme::dark(), legacy_dark());
    }

    #[test]
    fn every_builtin_sets_every_style_and_nothing_else() {
        for (name, text) in BUILTIN {
            let (t, warnings) =
                parse_theme(name, text, name, None).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(warnings.is_empty(), "{name}: {warnings:?}");
            assert_eq!(t.name, name);
            let doc = DeTable::parse(text).unwrap();
            for key in Theme::KEYS {
                assert!(doc.get_ref().get(*key).is_some(), "{name} lacks {key}");
            }
        }
    }

    #[test]
    fn high_contrast_uses_only_black_white_and_yellow() {
        let t = Theme::high_contrast();
        let mut copy = t.clone();
        for key in Theme::KEYS {
            let s = *copy.style_mut(key).unwrap();
            for c in [s.fg, s.bg].into_iter().flatten() {
                assert!(
                    matches!(c, Color::Black | Color::White | Color::Yellow),
                    "{key}: {c:?}"
                );
            }
        }
    }

    #[test]
    fn errors_name_the_line() {
        // A bad colour skips that style only (issue 8 item 18): dim is kept.
        let (t, w) = parse_theme(
            "x",
            "dim = \"cyan\"\nkey = { fg = \"blurple\" }\n",
            "x.toml",
            Some(&Theme::dark()),
        )
        .unwrap();
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].starts_with("x.toml:2: key.fg: \"blurple\""), "{w:?}");
        assert!(w[0].ends_with("key skipped"), "{w:?}");
        assert_eq!(t.dim, Style::new().fg(Color::Cyan));
        assert_eq!(t.key, Theme::dark().key, "the bad one keeps the base style");
        let e = parse_theme("x", "dim = \"cyan\"\n\nkey = {\n", "x.toml", None)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("x.toml:3:"), "{e}");
        let (t, w) = parse_theme(
            "x",
            "extends = \"light\"\nkey = { fg = \"red\", blink = true }\nsparkle = \"red\"\n",
            "x.toml",
            None,
        )
        .unwrap();
        assert_eq!(t.key, Style::new().fg(Color::Red));
        assert_eq!(t.base, Theme::light().base);
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(w[0].starts_with("x.toml:2: unknown key \"blink\""), "{w:?}");
        assert!(
            w[1].starts_with("x.toml:3: unknown key \"sparkle\""),
            "{w:?}"
        );
    }
}
