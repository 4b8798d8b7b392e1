//! Themes, keys, the command palette and the mouse, on an `App` rendered into ratatui's
//! `TestBackend`: theme files (built-in and user, good and broken), `t` cycling, the config
//! file's key overrides (what a key does and what the help says), the palette, clicks and
//! the wheel.

use std::path::Path;

use crossterm::event::{KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use psd2_console::client::{Exchange, PreparedRequest};
use psd2_console::profile::{Paths, SessionState};
use psd2_console::tui::config::{Setup, load_with};
use psd2_console::tui::keymap::{Command, KEYMAP, Keymap, Scope, UNBOUND};
use psd2_console::tui::theme::{BUILTIN, Theme, parse_theme};
use psd2_console::tui::{Action, App, Focus, Level, ResponseView, Screen};
use ratatui::style::Color;

use crate::common::tui::{self, Drive, masked_app, prepare_as_runner};

/// A real signed request for the selected operation (fixed clock), as the runner makes.
fn prepared(app: &mut App) -> PreparedRequest {
    prepare_as_runner(&app.request_spec(), &SessionState::default()).expect("prepare")
}

/// `(column, row)` of the first cell of `needle` on the screen, searching cells from
/// column `min_x`.
fn find(screen: &str, needle: &str, min_x: usize) -> Option<(u16, u16)> {
    screen.lines().enumerate().find_map(|(y, line)| {
        let cells: Vec<char> = line.chars().collect();
        let n: Vec<char> = needle.chars().collect();
        (min_x..cells.len().saturating_sub(n.len() - 1))
            .find(|x| cells[*x..].starts_with(&n))
            .map(|x| (x as u16, y as u16))
    })
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A config dir under a temp dir, with `config.toml` and the given user themes.
fn home(config: Option<&str>, themes: &[(&str, &str)]) -> (tempfile::TempDir, Paths) {
    let dir = tempfile::tempdir().unwrap();
    let paths = Paths::under(dir.path().to_path_buf());
    if let Some(c) = config {
        write(&paths.config.join("config.toml"), c);
    }
    for (name, text) in themes {
        write(
            &paths.config.join("themes").join(format!("{name}.toml")),
            text,
        );
    }
    (dir, paths)
}

fn app_with(setup: Setup) -> App {
    let mut app = masked_app();
    app.apply_setup(setup);
    app
}

// ---------------------------------------------------------------------------------------
// Themes

#[test]
fn every_builtin_theme_parses_with_no_unknown_keys() {
    let mut names = Vec::new();
    for (name, text) in BUILTIN {
        let (theme, warnings) = parse_theme(name, text, &format!("themes/{name}.toml"), None)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(warnings.is_empty(), "{name}: {warnings:?}");
        assert_eq!(theme.name, name);
        names.push(name);
    }
    assert_eq!(names, ["dark", "light", "high-contrast"]);
    // The embedded files are the repository's themes/*.toml.
    for name in names {
        let on_disk = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("themes/{name}.toml")),
        )
        .unwrap();
        assert_eq!(
            parse_theme(name, &on_disk, name, None).unwrap().0,
            Theme::by_name(name).unwrap()
        );
    }
    assert_eq!(Theme::dark().name, "dark");
    assert_eq!(Theme::high_contrast().name, "high-contrast");
    assert_ne!(Theme::dark(), Theme::high_contrast());
}

#[test]
fn user_theme_with_an_unknown_key_loads_and_reports_it() {
    let (_dir, paths) = home(
        Some("theme = \"mine\"\n"),
        &[(
            "mine",
            "extends = \"light\"\nkey = { fg = \"#ff8700\", bold = true }\nsparkle = \"red\"\n",
        )],
    );
    let setup = load_with(&paths, None);
    assert_eq!(setup.theme.name, "mine");
    assert_eq!(setup.theme.key.fg, Some(Color::Rgb(0xff, 0x87, 0x00)));
    assert_eq!(setup.theme.base, Theme::light().base, "extends light");
    let app = app_with(setup);
    let m = app.message().expect("reported");
    assert_eq!(m.level, Level::Warning);
    assert!(m.text.contains("mine.toml:3"), "{}", m.text);
    assert!(m.text.contains("unknown key \"sparkle\""), "{}", m.text);
    assert_eq!(app.theme.name, "mine");
}

#[test]
fn a_user_theme_with_one_bad_colour_keeps_its_other_styles() {
    let (_dir, paths) = home(
        Some("theme = \"broken\"\n"),
        &[("broken", "dim = \"cyan\"\nkey = { fg = \"blurple\" }\n")],
    );
    let setup = load_with(&paths, None);
    assert_eq!(setup.theme.name, "broken", "the theme is used");
    assert_eq!(
        setup.theme.dim.fg,
        Some(Color::Cyan),
        "its good style applies"
    );
    assert_eq!(setup.theme.key, Theme::dark().key, "the bad one is skipped");
    assert!(setup.themes.names().contains(&"broken"), "in the cycle");
    let app = app_with(setup);
    let text = &app.message().unwrap().text;
    assert!(text.contains("broken.toml:2"), "{text}");
    assert!(text.contains("\"blurple\" is not a colour"), "{text}");
    assert!(text.contains("key skipped"), "{text}");
    // The problem stays reachable after the status line changed (`!`).
    let mut app = app;
    app.keys("t");
    assert!(!app.message().unwrap().text.contains("blurple"));
    app.keys("!");
    assert!(app.log_visible());
    let s = app.screen_text(200, 50);
    assert!(s.contains("Problems"), "{s}");
    assert!(s.contains("\"blurple\" is not a colour"), "{s}");
    app.keys("x");
    assert!(!app.log_visible(), "any key closes it");

    // A TOML syntax error names the line too.
    let (_dir, paths) = home(
        None,
        &[("syntax", "dim = \"cyan\"\n\nborder = { fg = \"red\"\n")],
    );
    let setup = load_with(&paths, Some("syntax"));
    assert_eq!(setup.theme, Theme::dark());
    let all = setup.problems.join("\n");
    assert!(all.contains("syntax.toml:3"), "{all}");
    assert!(all.contains("PSD2_CONSOLE_THEME"), "{all}");
}

#[test]
fn t_cycles_through_the_builtins_and_the_user_theme() {
    let (_dir, paths) = home(
        None,
        &[("zebra", "extends = \"high-contrast\"\nkey = \"red\"\n")],
    );
    let mut app = app_with(load_with(&paths, None));
    assert_eq!(app.theme.name, "dark");
    assert_eq!(app.message().unwrap().level, Level::Info, "no problems");
    let mut seen = Vec::new();
    for _ in 0..4 {
        assert_eq!(app.press("t"), Action::None);
        seen.push(app.theme.name.clone());
        let m = app.message().unwrap();
        assert!(
            m.text.starts_with(&format!("Theme: {}", app.theme.name)),
            "{}",
            m.text
        );
        if app.theme.name == "zebra" {
            assert!(
                m.text
                    .contains("(4 of 4: dark, light, high-contrast, zebra)"),
                "{}",
                m.text
            );
            assert_eq!(app.theme.key.fg, Some(Color::Red));
        }
    }
    assert_eq!(seen, ["light", "high-contrast", "zebra", "dark"]);
    // The help overlay names the theme in use.
    app.keys("t ?");
    assert!(app.screen_text(160, 48).contains("theme: light"));
}

#[test]
fn the_environment_wins_over_the_config_file() {
    let (_dir, paths) = home(Some("theme = \"light\"\n"), &[]);
    assert_eq!(load_with(&paths, None).theme.name, "light");
    assert_eq!(
        load_with(&paths, Some("high-contrast")).theme.name,
        "high-contrast"
    );
    let setup = load_with(&paths, Some("nope"));
    assert_eq!(setup.theme, Theme::dark());
    assert!(
        setup.problems[0].contains("no theme called \"nope\""),
        "{:?}",
        setup.problems
    );
}

#[test]
fn light_and_high_contrast_consoles_are_drawn_in_their_colours() {
    let mut app = masked_app();
    app.theme = Theme::light();
    let buf = app.buffer(120, 40);
    // An empty cell inside a pane carries the light background.
    assert_eq!(buf[(60, 20)].bg, Color::Indexed(255));
    app.theme = Theme::high_contrast();
    let buf = app.buffer(120, 40);
    for y in 0..40 {
        for x in 0..120 {
            let c = &buf[(x, y)];
            for col in [c.fg, c.bg] {
                assert!(
                    matches!(
                        col,
                        Color::Black | Color::White | Color::Yellow | Color::Reset
                    ),
                    "({x},{y}) {col:?}"
                );
            }
        }
    }
    insta::assert_snapshot!("high_contrast_console_styles", format!("{buf:?}"));
}

// ---------------------------------------------------------------------------------------
// Keys

#[test]
fn every_command_is_bound_or_deliberately_unbound_and_has_a_name() {
    let mut names = Vec::new();
    for cmd in Command::all() {
        let bound = KEYMAP.iter().any(|b| b.command == cmd);
        assert!(
            bound != UNBOUND.contains(&cmd),
            "{cmd:?}: bound in KEYMAP: {bound}, listed in UNBOUND: {}",
            UNBOUND.contains(&cmd)
        );
        let name = cmd.name();
        assert_eq!(Command::from_name(name), Some(cmd));
        assert!(
            name.chars().all(|c| c.is_ascii_lowercase() || c == '_'),
            "{name}"
        );
        names.push(name);
    }
    assert!(names.contains(&"send") && names.contains(&"toggle_theme"));
    let n = names.len();
    names.dedup();
    assert_eq!(names.len(), n);
}

#[test]
fn the_default_keymap_has_no_clashes() {
    assert_eq!(Keymap::default().collisions(), Vec::<String>::new());
}

#[test]
fn help_overlay_snapshot() {
    let mut app = masked_app();
    app.keys("?");
    let first = app.screen_text(160, 48);
    assert!(first.contains("Ctrl-p"), "{first}");
    insta::assert_snapshot!("help_overlay", first);
    // It scrolls when it does not fit; page by page it shows every binding of the keymap.
    let mut seen = first.clone();
    let mut last = String::new();
    for _ in 0..20 {
        app.keys("PageDown");
        let s = app.screen_text(160, 48);
        if s == last {
            break;
        }
        seen.push_str(&s);
        last = s;
    }
    for b in app.keymap().bindings() {
        // Long texts wrap: their first words are on the binding's line.
        let head = match b.help.char_indices().nth(40) {
            Some((i, _)) => &b.help[..b.help[..i].rfind(' ').unwrap_or(i)],
            None => b.help,
        };
        assert!(seen.contains(head), "help lacks {:?}", b.help);
    }
    assert!(app.help_visible());
    app.keys("Esc");
    assert!(!app.help_visible());
}

#[test]
fn a_key_override_changes_what_the_key_does_and_what_help_shows() {
    let (_dir, paths) = home(
        Some("[keys]\nsend = [\"z\", \"ctrl-enter\"]\ntoggle_theme = \"T\"\n"),
        &[],
    );
    let setup = load_with(&paths, None);
    assert!(setup.problems.is_empty(), "{:?}", setup.problems);
    let mut app = app_with(setup);
    assert_eq!(app.press("s"), Action::None, "s no longer sends");
    assert_eq!(app.press("z"), Action::Send);
    assert_eq!(app.press("C-Enter"), Action::Send);
    app.keys("T");
    assert_eq!(app.theme.name, "light");
    let s = app.screen_text(160, 48);
    assert!(s.contains(" z send "), "the footer hint follows:\n{s}");
    assert!(
        s.contains("Select an operation and press z."),
        "the response pane's hint follows:\n{s}"
    );
    app.keys("?");
    let s = app.screen_text(160, 48);
    let line = s
        .lines()
        .find(|l| l.contains("sign and send the selected operation"))
        .unwrap();
    assert!(line.contains("z / Ctrl-Enter"), "{line}");
    assert!(!line.contains("s / Enter"), "{line}");
    assert!(
        s.lines()
            .any(|l| l.contains("T ") && l.contains("next theme")),
        "{s}"
    );
}

#[test]
fn bad_overrides_are_reported_and_ignored() {
    let (_dir, paths) = home(
        Some(concat!(
            "[keys]\n",
            "sendd = [\"s\"]\n",               // 2: unknown command
            "quit = [\"ctrl-\"]\n",            // 3: not a key
            "edit_params = [\"s\"]\n",         // 4: s is send's
            "force_quit = [\"ctrl-q\"]\n",     // 5: ctrl-c stays
            "reset_session = [\"hyper-r\"]\n", // 6: not a key
            "open_sca = [\"q\"]\n",            // 7: q quits everywhere
            "[extra]\n",                       // 8: unknown table
        )),
        &[],
    );
    let setup = load_with(&paths, None);
    let all = setup.problems.join("\n");
    for (line, what) in [
        (2, "unknown command \"sendd\""),
        (3, "an empty key"),
        (4, "s is already send"),
        (5, "ctrl-c cannot be unbound"),
        (6, "\"hyper-r\" is not a key"),
        (7, "q is already quit"),
        (8, "unknown key \"extra\""),
    ] {
        assert!(
            setup
                .problems
                .iter()
                .any(|p| p.contains(&format!("config.toml:{line}:")) && p.contains(what)),
            "line {line}, {what}:\n{all}"
        );
    }
    let mut app = app_with(setup);
    assert!(app.message().unwrap().text.contains("config.toml:2"));
    // The bad entries changed nothing.
    assert_eq!(app.press("s"), Action::Send);
    assert_eq!(app.press("o"), Action::None);
    assert!(
        app.message().unwrap().text.contains("No scaRedirect"),
        "o is still open_sca"
    );
    assert!(!app.should_quit());
    assert_eq!(app.press("C-q"), Action::Quit, "the good part applies");
    let mut app = app_with(load_with(&paths, None));
    assert_eq!(app.press("C-c"), Action::Quit, "ctrl-c still quits");
}

#[test]
fn a_toml_error_in_the_config_file_names_the_line() {
    let (_dir, paths) = home(Some("theme = \"light\"\n[keys\nsend = [\"x\"]\n"), &[]);
    let setup = load_with(&paths, None);
    assert_eq!(setup.theme.name, "dark", "the file is ignored");
    assert!(
        setup.problems[0].contains("config.toml:2:"),
        "{:?}",
        setup.problems
    );
    assert_eq!(setup.keymap, Keymap::default());
}

// ---------------------------------------------------------------------------------------
// Palette

#[test]
fn palette_snapshot_filtered() {
    let mut app = masked_app();
    assert_eq!(app.press("C-p"), Action::None);
    assert!(app.palette_visible());
    let s = app.screen_text(140, 40);
    // Unfiltered it lists every action of the keymap (it scrolls: count them instead).
    let total = app.palette_entries().len();
    let bindings = app
        .keymap()
        .bindings()
        .iter()
        .filter(|b| b.scope != Scope::Palette)
        .count();
    assert_eq!(total, bindings);
    assert!(s.contains(&format!("of {bindings}")), "{s}");
    app.type_text("send");
    assert_eq!(app.palette_query(), "send");
    let s = app.screen_text(140, 40);
    assert!(s.contains("sign and send the selected operation"), "{s}");
    assert!(!s.contains("scroll left"), "filtered out:\n{s}");
    insta::assert_snapshot!("palette_send", s);
}

#[test]
fn palette_typing_never_runs_commands_and_enter_runs_the_chosen_one() {
    let mut app = masked_app();
    app.keys("C-p");
    app.type_text("q?t1");
    assert!(!app.should_quit(), "q typed, not quit");
    assert!(!app.help_visible());
    assert_eq!(app.theme.name, "dark");
    assert_eq!(app.palette_query(), "q?t1");
    app.keys("C-u");
    assert_eq!(app.palette_query(), "");
    app.type_text("next theme");
    assert_eq!(app.palette_entries().len(), 1);
    assert_eq!(app.press("Enter"), Action::None);
    assert!(!app.palette_visible());
    assert_eq!(app.theme.name, "light", "ran toggle_theme");

    // A screen's action switches the screen first; the runner is asked to load it.
    app.keys("C-p");
    app.type_text("history screen");
    assert_eq!(app.press("Enter"), Action::LoadHistory);
    assert_eq!(app.screen(), Screen::History);

    // A console action from another screen comes back to the console.
    app.keys("C-p");
    app.type_text("sign and send");
    assert_eq!(app.press("Enter"), Action::Send);
    assert_eq!(app.screen(), Screen::Console);

    // ↓ moves through the matches; Esc closes without running anything.
    app.keys("C-p");
    app.type_text("scroll");
    assert!(app.palette_entries().len() > 1);
    app.keys("Down Esc");
    assert!(!app.palette_visible());
    assert!(!app.should_quit());

    // A pane action focuses its pane.
    app.keys("C-p");
    app.type_text("scroll right");
    app.keys("Enter");
    assert_eq!(app.focus(), Focus::Response);

    // Ctrl-c still quits from the palette.
    app.keys("C-p");
    assert_eq!(app.press("C-c"), Action::Quit);
}

// ---------------------------------------------------------------------------------------
// Mouse

fn click(column: u16, row: u16) -> MouseEvent {
    MouseEvent {
        kind: MouseEventKind::Down(MouseButton::Left),
        column,
        row,
        modifiers: KeyModifiers::NONE,
    }
}

fn wheel(down: bool, column: u16, row: u16) -> MouseEvent {
    MouseEvent {
        kind: if down {
            MouseEventKind::ScrollDown
        } else {
            MouseEventKind::ScrollUp
        },
        column,
        row,
        modifiers: KeyModifiers::NONE,
    }
}

#[test]
fn a_click_selects_an_operation_and_focuses_a_pane() {
    let mut app = masked_app();
    let target = app.operations()[3];
    assert_ne!(app.selected_operation().id, target.id);
    let s = app.screen_text(160, 48);
    // The list cuts long titles: look for the start of it.
    let start: String = target.title.chars().take(14).collect();
    let (x, y) = find(&s, &start, 0).expect("operation shown");
    assert!(x < 32, "in the operation list");
    app.keys("Tab");
    assert_eq!(app.focus(), Focus::Params);
    assert_eq!(app.handle_mouse(click(x + 1, y)), Action::None);
    assert_eq!(app.selected_operation().id, target.id);
    assert_eq!(app.focus(), Focus::Operations);

    let s = app.screen_text(160, 48);
    let (x, y) = find(&s, "Response", 60).expect("response pane");
    app.handle_mouse(click(x, y + 3));
    assert_eq!(app.focus(), Focus::Response);
    let (x, y) = find(&s, "Signature inspector", 32).expect("signature pane");
    app.handle_mouse(click(x, y + 1));
    assert_eq!(app.focus(), Focus::Signature);
    // Keys keep working after the mouse.
    app.keys("BackTab");
    assert_eq!(app.focus(), Focus::Request);
}

#[test]
fn the_wheel_scrolls_the_response_under_the_pointer() {
    let mut app = masked_app();
    let accounts: Vec<serde_json::Value> = (1..=40)
        .map(|i| serde_json::json!({ "resourceId": format!("acc-{i:03}"), "currency": "EUR" }))
        .collect();
    let body = serde_json::json!({ "accounts": accounts });
    let bytes = serde_json::to_vec(&body).unwrap();
    let ex = Exchange {
        status: 200,
        headers: vec![("content-type".into(), "application/json".into())],
        body: bytes,
        elapsed: std::time::Duration::from_millis(5),
        json: Some(body),
    };
    let req = prepared(&mut app);
    app.begin_send(req.clone());
    app.finish_send(Ok(ResponseView::from_exchange("List accounts", &req, &ex)));
    let s = app.screen_text(160, 48);
    let (x, y) = find(&s, "Response", 60).expect("response pane");
    assert_eq!(app.response_scroll(), 0);
    app.handle_mouse(wheel(true, x, y + 5));
    assert_eq!(app.response_scroll(), 3);
    app.handle_mouse(wheel(true, x, y + 5));
    assert_eq!(app.response_scroll(), 6);
    assert_eq!(
        app.focus(),
        Focus::Operations,
        "the wheel does not move the focus"
    );
    app.handle_mouse(wheel(false, x, y + 5));
    assert_eq!(app.response_scroll(), 3);
    // Vim keys still scroll it once focused.
    app.focus_on(Focus::Response);
    app.keys("j");
    assert_eq!(app.response_scroll(), 4);
    app.keys("g");
    assert_eq!(app.response_scroll(), 0);
    // The wheel over the operation list moves the selection there, not the response.
    let before = app.selected_operation().id;
    app.handle_mouse(wheel(true, 5, 8));
    assert_ne!(app.selected_operation().id, before);
    assert_eq!(app.response_scroll(), 0);
}

/// Text of each row of the help overlay's inner area, split at the column boundary, to check
/// that no text of the left column runs into the right one.
fn assert_help_columns_apart(s: &str) {
    for line in s.lines() {
        for glued in [
            "pageProfiles",
            "pageHistory",
            "pageResponse",
            "pageParameters",
        ] {
            assert!(!line.contains(glued), "columns run together: {line}\n{s}");
        }
    }
}

#[test]
fn help_overlay_at_200x50_and_80x24() {
    let mut app = masked_app();
    app.keys("?");
    let big = app.screen_text(200, 50);
    assert_help_columns_apart(&big);
    insta::assert_snapshot!("help_overlay_200x50", big);
    let small = app.screen_text(80, 24);
    assert_help_columns_apart(&small);
    insta::assert_snapshot!("help_overlay_80x24", small);
}

/// The harness reads the key names the tests write.
#[test]
fn harness_reads_key_names_and_modifiers() {
    assert_eq!(tui::parse_key("q"), tui::key('q'));
    assert_eq!(tui::parse_key("C-p"), tui::ctrl('p'));
    assert_eq!(tui::parse_key("S-S"), tui::shift('S'));
    assert_eq!(
        tui::parse_key("Enter"),
        tui::code(crossterm::event::KeyCode::Enter)
    );
    assert_eq!(
        tui::parse_key("F5"),
        tui::code(crossterm::event::KeyCode::F(5))
    );
    assert_eq!(
        tui::parse_key("C-A-x"),
        crossterm::event::KeyEvent::new(
            crossterm::event::KeyCode::Char('x'),
            KeyModifiers::CONTROL | KeyModifiers::ALT
        )
    );
    assert!(std::panic::catch_unwind(|| tui::parse_key("Entr")).is_err());
}

// ---------------------------------------------------------------------------------------
// The one focus chain (issue 19): keys, paste and the mouse go to the same layer first.

#[test]
fn a_paste_while_profiles_is_not_shown_does_not_reach_its_form() {
    let home = tempfile::tempdir().unwrap();
    let paths = Paths::under(home.path().to_path_buf());
    let mut app = masked_app();
    assert_eq!(app.press("2"), Action::LoadProfiles);
    app.set_profile_set(
        psd2_console::profile::ProfileSet::load(Some(&paths.profiles_dir())),
        &paths,
    );
    app.keys("n").type_text("draft");
    // The console comes back with the form still open behind it; a parameter is edited.
    app.select_operation("accounts.balances");
    app.run_in_scope(Scope::Insert, Command::CursorEnd);
    assert_eq!(app.screen(), Screen::Console);
    app.handle_paste("c86d2be7");
    assert_eq!(
        app.param_value("accounts.balances", "account-id"),
        Some("c86d2be7"),
        "the paste goes to the parameter on screen"
    );
    let form = app.profiles_view().form.as_ref().expect("form kept");
    assert_eq!(form.draft.get("name"), "draft", "not to the hidden form");
}

#[test]
fn with_the_y_n_question_open_a_key_a_paste_and_a_click_answer_it_first() {
    // A key: any key but y cancels, and does nothing else.
    let mut app = masked_app();
    app.keys("r");
    assert!(app.pending_confirm().is_some());
    assert_eq!(app.press("s"), Action::None, "not sent");
    assert!(app.pending_confirm().is_none());
    assert!(app.message().unwrap().text.contains("nothing changed"));

    // A paste: cancels, so a later `y` resets nothing; it types nowhere.
    app.select_operation("accounts.balances");
    app.keys("r");
    app.handle_paste("y");
    assert!(
        app.pending_confirm().is_none(),
        "the paste answered the question"
    );
    assert!(app.message().unwrap().text.contains("nothing changed"));
    assert_eq!(app.press("y"), Action::None, "y alone no longer resets");
    assert_eq!(app.param_value("accounts.balances", "account-id"), Some(""));

    // A click: cancels, and does not select the operation under the pointer.
    let target = app.operations()[3];
    let s = app.screen_text(160, 48);
    let start: String = target.title.chars().take(14).collect();
    let (x, y) = find(&s, &start, 0).expect("operation shown");
    app.keys("r");
    assert_eq!(app.handle_mouse(click(x + 1, y)), Action::None);
    assert!(
        app.pending_confirm().is_none(),
        "the click answered the question"
    );
    assert_ne!(
        app.selected_operation().id,
        target.id,
        "the click went no further"
    );
    // The question gone, the same click reaches the list.
    app.handle_mouse(click(x + 1, y));
    assert_eq!(app.selected_operation().id, target.id);
}

#[test]
fn an_sca_prompt_that_appears_while_typing_takes_no_key_paste_or_click() {
    let mut app = masked_app();
    app.select_operation("accounts.balances");
    let s = app.screen_text(160, 48);
    let target = app.operations()[3];
    let start: String = target.title.chars().take(14).collect();
    let (x, y) = find(&s, &start, 0).expect("operation shown");
    app.keys("e").type_text("ab");
    // A response asking for SCA arrives while the parameter is typed.
    let req = tui::unsigned_request("accounts.balances", "GET", "/v1/accounts/x/balances");
    let body =
        serde_json::json!({"_links": {"scaRedirect": {"href": "http://127.0.0.1:40123/sca/1"}}});
    let ex = Exchange {
        status: 401,
        headers: Vec::new(),
        body: body.to_string().into_bytes(),
        elapsed: std::time::Duration::from_millis(3),
        json: Some(body),
    };
    app.finish_send(Ok(ResponseView::from_exchange("Read balances", &req, &ex)));
    assert!(app.sca_prompt().is_some());
    // The key, the paste and the click go to the parameter being typed, in that order of
    // layers: `o` is typed (it would open the browser on the prompt), the paste too, and
    // the click is ignored (INSERT mode takes no mouse).
    assert_eq!(app.press("o"), Action::None);
    app.handle_paste("cd");
    assert_eq!(app.handle_mouse(click(x + 1, y)), Action::None);
    assert_eq!(
        app.param_value("accounts.balances", "account-id"),
        Some("abocd")
    );
    assert_ne!(app.selected_operation().id, target.id);
}
