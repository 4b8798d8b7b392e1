//! Colours and text styles of the console, all in one place.
//!
//! [`Theme::dark`] is the default: the terminal's own background, calm colours from the 16
//! ANSI colours (so it looks right over ssh and in tmux), and bold only where the eye should
//! go first. [`Theme::high_contrast`] is for projectors and bright rooms: black background,
//! white text, yellow focus.

use ratatui::style::{Color, Modifier, Style};

/// Every style the console draws with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Theme {
    /// Short name shown in the help overlay (`dark`, `high-contrast`).
    pub name: &'static str,
    /// Base style of every pane (foreground and background).
    pub base: Style,
    /// Secondary text: hints, placeholders, labels.
    pub dim: Style,
    /// Border of a pane without focus.
    pub border: Style,
    /// Border and title of the focused pane.
    pub border_focused: Style,
    /// Title of a pane without focus.
    pub title: Style,
    /// The status bar at the top.
    pub status_bar: Style,
    /// Labels in the status bar (`Profile`, `Target`, ...).
    pub status_label: Style,
    /// A value in the status bar that needs attention (no PSU yet).
    pub status_attention: Style,
    /// The selected row of the focused list.
    pub selected: Style,
    /// The selected row of a list without focus.
    pub selected_unfocused: Style,
    /// Group headings in the operation list.
    pub group: Style,
    /// HTTP methods that only read (GET, HEAD).
    pub method_read: Style,
    /// HTTP methods that create or change (POST, PUT, PATCH).
    pub method_write: Style,
    /// DELETE.
    pub method_delete: Style,
    /// 2xx statuses.
    pub status_ok: Style,
    /// 3xx statuses.
    pub status_redirect: Style,
    /// 4xx statuses.
    pub status_client_error: Style,
    /// 5xx statuses and transport errors.
    pub status_server_error: Style,
    /// Header names in the request and response panes.
    pub header_name: Style,
    /// JSON object keys.
    pub json_key: Style,
    /// JSON strings.
    pub json_string: Style,
    /// JSON numbers.
    pub json_number: Style,
    /// JSON `true`, `false`, `null`.
    pub json_literal: Style,
    /// JSON braces, brackets, commas and colons.
    pub json_punct: Style,
    /// Informational messages in the status line.
    pub info: Style,
    /// Success messages.
    pub success: Style,
    /// Warnings.
    pub warning: Style,
    /// Errors.
    pub error: Style,
    /// Border of modal dialogs (SCA prompt, help, profiles).
    pub modal_border: Style,
    /// The scaRedirect URL in the prompt.
    pub url: Style,
    /// A parameter value.
    pub input: Style,
    /// The parameter being edited (INSERT mode).
    pub input_active: Style,
    /// Key names in the help overlay and the hint line.
    pub key: Style,
    /// The `-- INSERT --` mode badge.
    pub mode_badge: Style,
}

impl Default for Theme {
    fn default() -> Self {
        Theme::dark()
    }
}

impl Theme {
    /// The default theme: terminal background, muted ANSI colours.
    pub fn dark() -> Self {
        let base = Style::new().fg(Color::Reset).bg(Color::Reset);
        Theme {
            name: "dark",
            base,
            dim: Style::new().fg(Color::DarkGray),
            border: Style::new().fg(Color::DarkGray),
            border_focused: Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD),
            title: Style::new().fg(Color::Gray),
            status_bar: Style::new().fg(Color::White).bg(Color::Indexed(236)),
            status_label: Style::new().fg(Color::Gray).bg(Color::Indexed(236)),
            status_attention: Style::new().fg(Color::Yellow).bg(Color::Indexed(236)),
            selected: Style::new()
                .fg(Color::Black)
                .bg(Color::Cyan)
                .add_modifier(Modifier::BOLD),
            selected_unfocused: Style::new().fg(Color::White).bg(Color::Indexed(238)),
            group: Style::new().fg(Color::Blue).add_modifier(Modifier::BOLD),
            method_read: Style::new().fg(Color::Green),
            method_write: Style::new().fg(Color::Yellow),
            method_delete: Style::new().fg(Color::Red),
            status_ok: Style::new().fg(Color::Green).add_modifier(Modifier::BOLD),
            status_redirect: Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD),
            status_client_error: Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD),
            status_server_error: Style::new().fg(Color::Red).add_modifier(Modifier::BOLD),
            header_name: Style::new().fg(Color::Cyan),
            json_key: Style::new().fg(Color::Cyan),
            json_string: Style::new().fg(Color::Green),
            json_number: Style::new().fg(Color::Magenta),
            json_literal: Style::new().fg(Color::Yellow),
            json_punct: Style::new().fg(Color::Gray),
            info: Style::new().fg(Color::Gray),
            success: Style::new().fg(Color::Green).add_modifier(Modifier::BOLD),
            warning: Style::new().fg(Color::Yellow),
            error: Style::new().fg(Color::Red).add_modifier(Modifier::BOLD),
            modal_border: Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD),
            url: Style::new()
                .fg(Color::Cyan)
                .add_modifier(Modifier::UNDERLINED),
            input: Style::new().fg(Color::White),
            input_active: Style::new().fg(Color::White).bg(Color::Indexed(24)),
            key: Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD),
            mode_badge: Style::new()
                .fg(Color::Black)
                .bg(Color::Yellow)
                .add_modifier(Modifier::BOLD),
        }
    }

    /// White on black with yellow focus and bold everywhere it matters; for projectors.
    pub fn high_contrast() -> Self {
        let base = Style::new().fg(Color::White).bg(Color::Black);
        let bold = Modifier::BOLD;
        Theme {
            name: "high-contrast",
            base,
            dim: Style::new().fg(Color::Gray).bg(Color::Black),
            border: Style::new().fg(Color::White),
            border_focused: Style::new().fg(Color::Yellow).add_modifier(bold),
            title: Style::new().fg(Color::White).add_modifier(bold),
            status_bar: Style::new().fg(Color::Black).bg(Color::White),
            status_label: Style::new()
                .fg(Color::Black)
                .bg(Color::White)
                .add_modifier(bold),
            status_attention: Style::new()
                .fg(Color::Red)
                .bg(Color::White)
                .add_modifier(bold),
            selected: Style::new()
                .fg(Color::Black)
                .bg(Color::Yellow)
                .add_modifier(bold),
            selected_unfocused: Style::new().fg(Color::Black).bg(Color::Gray),
            group: Style::new().fg(Color::LightCyan).add_modifier(bold),
            method_read: Style::new().fg(Color::LightGreen).add_modifier(bold),
            method_write: Style::new().fg(Color::LightYellow).add_modifier(bold),
            method_delete: Style::new().fg(Color::LightRed).add_modifier(bold),
            status_ok: Style::new().fg(Color::LightGreen).add_modifier(bold),
            status_redirect: Style::new().fg(Color::LightCyan).add_modifier(bold),
            status_client_error: Style::new().fg(Color::LightYellow).add_modifier(bold),
            status_server_error: Style::new().fg(Color::LightRed).add_modifier(bold),
            header_name: Style::new().fg(Color::LightCyan).add_modifier(bold),
            json_key: Style::new().fg(Color::LightCyan).add_modifier(bold),
            json_string: Style::new().fg(Color::White),
            json_number: Style::new().fg(Color::LightMagenta),
            json_literal: Style::new().fg(Color::LightYellow),
            json_punct: Style::new().fg(Color::White),
            info: Style::new().fg(Color::White),
            success: Style::new().fg(Color::LightGreen).add_modifier(bold),
            warning: Style::new().fg(Color::LightYellow).add_modifier(bold),
            error: Style::new().fg(Color::LightRed).add_modifier(bold),
            modal_border: Style::new().fg(Color::Yellow).add_modifier(bold),
            url: Style::new()
                .fg(Color::LightCyan)
                .add_modifier(bold | Modifier::UNDERLINED),
            input: Style::new().fg(Color::White).add_modifier(bold),
            input_active: Style::new().fg(Color::Black).bg(Color::LightYellow),
            key: Style::new().fg(Color::Yellow).add_modifier(bold),
            mode_badge: Style::new()
                .fg(Color::Black)
                .bg(Color::Yellow)
                .add_modifier(bold),
        }
    }

    /// The theme called `name` (`dark`, `high-contrast`), if there is one.
    pub fn by_name(name: &str) -> Option<Self> {
        match name.trim().to_ascii_lowercase().as_str() {
            "dark" | "default" => Some(Theme::dark()),
            "high-contrast" | "high_contrast" | "highcontrast" | "contrast" => {
                Some(Theme::high_contrast())
            }
            _ => None,
        }
    }

    /// The other theme (dark ↔ high-contrast), for the toggle key.
    pub fn toggled(&self) -> Self {
        if self.name == "dark" {
            Theme::high_contrast()
        } else {
            Theme::dark()
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
