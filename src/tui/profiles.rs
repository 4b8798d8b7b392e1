//! The profiles screen (`2`): every profile (built-in ones read-only, the active one marked)
//! and, for the highlighted one, its target and TLS options, a certificate inspector (serial,
//! keyId as signed, subject, issuer, validity with a warning near expiry, PSD2 roles and NCA,
//! whether the key matches; never key bytes) and the session state learned from SCA (PSU-ID,
//! corporate context, TPP-Session-ID with its 1-hour SCA window, consent age of 180 days).
//!
//! Keys: Enter switches to the profile, `n` new, `e` edit, `c` clone, `d` delete (y/n), `g`
//! generate a test certificate. The form (create, edit, clone) takes every key while open
//! ([`ProfilesView`]'s [`Component::input`]), so typing never triggers a command.
//!
//! File work (saving, deleting, generating certificates) happens here, on the paths given
//! with [`ProfilesView::set_profile_set`]; afterwards the screen returns [`Action::LoadProfiles`] and
//! the runner reads the profiles again.

use std::path::{Path, PathBuf};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use super::component::{Action, Component, Confirm, Ctx, Effect};
use super::keymap::{Command, Keymap, Scope};
pub use super::profiles_view::{
    CertInfo, FormKind, KeyCheckError, ProfileDetails, ProfileForm, ProfilesView,
};
use super::status_line::Level;
use super::theme::{Theme, rounded_block};
use crate::cert::{Certificate, PrivateKey};
use crate::profile::edit::{
    FIELDS, FieldError, ProfileDraft, copy_name, delete_profile, generate_certificate, save_profile,
};
use crate::profile::{
    CONSENT_RENEWAL_DAYS, Paths, Profile, ProfileSet, SCA_SESSION_SECS, SessionState, Target,
    TlsMinVersion,
};
use std::sync::Arc;

/// Days before expiry from which the inspector warns.
pub const EXPIRY_WARNING_DAYS: i64 = crate::cert::EXPIRY_WARNING_DAYS;

/// Reads what the inspector shows about `p`.
pub fn profile_details(p: &Profile, paths: &Paths) -> ProfileDetails {
    let cert = match (&p.certificate, &p.key) {
        (Some(c), k) => cert_info(p.resolve(c), k.as_ref().map(|k| p.resolve(k))),
        (None, _) => {
            let dir = paths.certs_dir();
            let c = dir.join(format!("{}.pem", p.slug()));
            let k = dir.join(format!("{}.key", p.slug()));
            if p.target == Target::Embedded && c.exists() {
                cert_info(c, Some(k))
            } else if p.target == Target::Embedded {
                CertInfo::Missing(
                    "none yet: a test certificate is generated on first use (or press g)".into(),
                )
            } else {
                CertInfo::Missing(
                    "none configured: a remote target needs certificate and key".into(),
                )
            }
        }
    };
    let session_file = paths.session_file(&p.slug());
    let session = SessionState::load(&session_file).map_err(Arc::new);
    ProfileDetails {
        cert,
        session_file,
        session,
    }
}

fn cert_info(cert_path: PathBuf, key_path: Option<PathBuf>) -> CertInfo {
    let cert = Certificate::load(&cert_path)
        .map(Box::new)
        .map_err(Arc::new);
    let key_match = key_path.as_ref().map(|k| {
        let key = PrivateKey::load(k).map_err(|e| KeyCheckError::Key(Arc::new(e)))?;
        match &cert {
            Ok(c) => Ok(key.matches(c)),
            Err(_) => Err(KeyCheckError::NoCertificate),
        }
    });
    CertInfo::Files {
        cert_path,
        key_path,
        cert,
        key_match,
    }
}

/// The command bound to `ev` in `scope` (the profile form and the confirmation have their
/// own scopes, searched alone).
fn scope_lookup(keymap: &Keymap, scope: Scope, ev: &KeyEvent) -> Option<Command> {
    keymap
        .in_scope(scope)
        .find(|b| b.keys.iter().any(|k| k.matches(ev)))
        .map(|b| b.command)
}

fn byte_index(s: &str, char_index: usize) -> usize {
    s.char_indices()
        .nth(char_index)
        .map(|(i, _)| i)
        .unwrap_or(s.len())
}

/// `PSP_AI, PSP_PI`: the names of `roles`, comma-separated.
fn role_names(roles: &[crate::cert::Psd2Role]) -> String {
    roles
        .iter()
        .map(|r| r.name())
        .collect::<Vec<_>>()
        .join(", ")
}

fn fmt_time(t: i64) -> String {
    chrono::DateTime::from_timestamp(t, 0)
        .map(|d| d.format("%Y-%m-%d %H:%M UTC").to_string())
        .unwrap_or_else(|| t.to_string())
}

fn fmt_duration(secs: i64) -> String {
    let s = secs.abs();
    if s >= 86_400 {
        format!("{} d {} h", s / 86_400, (s % 86_400) / 3600)
    } else if s >= 3600 {
        format!("{} h {} min", s / 3600, (s % 3600) / 60)
    } else {
        format!("{} min {} s", s / 60, s % 60)
    }
}

impl ProfilesView {
    /// Shows `set` on the profiles screen (and in the picker), reading each profile's
    /// certificate and session from `paths`. Keeps the highlighted profile when it still
    /// exists.
    pub fn set_profile_set(&mut self, set: ProfileSet, paths: &Paths) {
        let v = self;
        let keep = v
            .pending_select
            .take()
            .or_else(|| v.set.profiles.get(v.selected).map(|p| p.name.clone()));
        v.details = set
            .profiles
            .iter()
            .map(|p| profile_details(p, paths))
            .collect();
        v.selected = keep
            .and_then(|n| set.profiles.iter().position(|p| p.name == n))
            .unwrap_or(v.selected)
            .min(set.profiles.len().saturating_sub(1));
        v.set = set;
        v.paths = Some(paths.clone());
    }

    /// The profile to restart after the profiles were read again (the active one was
    /// edited), taken once.
    pub fn take_apply_after_load(&mut self) -> Option<String> {
        self.apply_after_load.take()
    }

    /// "Now" in Unix seconds: the fixed [`ProfilesView::clock`], else the system clock.
    fn now(&self) -> i64 {
        self.clock
            .unwrap_or_else(|| crate::cert::unix_seconds(std::time::SystemTime::now()))
    }

    fn highlighted_profile(&self) -> Option<&Profile> {
        self.set.profiles.get(self.selected)
    }

    /// The hint-line scopes of the profiles screen: the form's, the confirmation's, or the
    /// list's.
    pub(crate) fn hint_scopes(&self) -> &'static [Scope] {
        if self.form.is_some() {
            &[Scope::ProfileForm]
        } else if self.confirm_delete.is_some() {
            &[Scope::ProfileConfirm]
        } else {
            &[Scope::ProfilesScreen, Scope::NotInsert]
        }
    }

    /// Commands of the profiles screen; `None` for commands it does not take.
    fn command(&mut self, cmd: Command, ctx: &mut Ctx) -> Option<Effect> {
        let n = self.set.profiles.len();
        match cmd {
            Command::Up => {
                self.selected = self.selected.saturating_sub(1);
            }
            Command::Down => {
                self.selected = (self.selected + 1).min(n.saturating_sub(1));
            }
            Command::Choose => {
                let name = self.highlighted_profile()?.name.clone();
                if name == ctx.status.profile {
                    ctx.say(Level::Info, format!("Profile {name} is already active"));
                } else {
                    ctx.say(Level::Info, format!("Starting profile {name} …"));
                    return Some(Effect::Run(Action::SwitchProfile(name)));
                }
            }
            Command::ProfileNew => {
                self.open_form(FormKind::New, ProfileDraft::default());
            }
            Command::ProfileEdit => {
                let p = self.highlighted_profile()?.clone();
                match &p.source {
                    Some(src) => {
                        let kind = FormKind::Edit {
                            original: p.name.clone(),
                            source: src.clone(),
                        };
                        self.open_form(kind, ProfileDraft::from_profile(&p));
                    }
                    None => {
                        self.clone_into_form(&p);
                        ctx.say(
                            Level::Info,
                            format!(
                                "{} is built in and read-only: editing a copy instead",
                                p.name
                            ),
                        );
                    }
                }
            }
            Command::ProfileClone => {
                let p = self.highlighted_profile()?.clone();
                self.clone_into_form(&p);
            }
            Command::ProfileDelete => {
                let p = self.highlighted_profile()?;
                let name = p.name.clone();
                if p.is_builtin() {
                    ctx.say(
                        Level::Warning,
                        format!("{name} is built in and cannot be deleted"),
                    );
                } else {
                    ctx.say(
                        Level::Warning,
                        format!("Delete profile {name}? y deletes its file, n keeps it"),
                    );
                    self.confirm_delete = Some(name);
                }
            }
            Command::ProfileGenerateCert => return Some(self.generate_for_highlighted(ctx)),
            _ => return None,
        }
        Some(Effect::None)
    }

    fn open_form(&mut self, kind: FormKind, draft: ProfileDraft) {
        let cursor = draft.values[0].chars().count();
        self.form = Some(ProfileForm {
            kind,
            draft,
            field: 0,
            cursor,
            errors: Vec::new(),
        });
    }

    fn clone_into_form(&mut self, p: &Profile) {
        let mut draft = ProfileDraft::from_profile(p);
        draft.set("name", &copy_name(&self.set, &p.name));
        // Relative paths of a user profile stay valid (the copy is saved beside it); those
        // of a built-in one are made absolute where the file exists.
        for key in [
            "certificate",
            "key",
            "ca_bundle",
            "client_certificate",
            "client_key",
            "aspsp_certificate",
        ] {
            let v = draft.get(key).to_string();
            if !v.is_empty() {
                let resolved = p.resolve(Path::new(&v));
                if resolved.exists() {
                    draft.set(key, &resolved.display().to_string());
                }
            }
        }
        self.open_form(
            FormKind::Clone {
                from: p.name.clone(),
            },
            draft,
        );
    }

    /// `g`: checks the highlighted profile can take a generated certificate, then asks y/N
    /// (the old certificate and key are replaced, and the sandbox knows the TPP by its
    /// certificate: resources created with the old one become unreachable).
    fn generate_for_highlighted(&mut self, ctx: &mut Ctx) -> Effect {
        let Some(p) = self.highlighted_profile().cloned() else {
            return Effect::None;
        };
        if self.paths.is_none() {
            ctx.say(Level::Error, "The profiles are not loaded yet");
            return Effect::None;
        }
        if p.is_builtin() && p.target != Target::Embedded {
            ctx.say(
                Level::Warning,
                format!(
                    "{} is built in and read-only: clone it (c) and generate the certificate in the form (Ctrl-g)",
                    p.name
                ),
            );
            return Effect::None;
        }
        let replaces = if p.certificate.is_some() {
            "It replaces the certificate and key the profile names: payments and consents made with them become unreachable."
        } else {
            "It replaces the profile's generated certificate and key."
        };
        Effect::Ask {
            what: Confirm::GenerateCert(p.name.clone()),
            question: format!("Generate a new test certificate and key for {}?", p.name),
            note: replaces.to_string(),
        }
    }

    /// Generates the certificate for profile `name` after a `y` to [`Self::generate_for_highlighted`].
    /// A profile file gets only its `certificate` and `key` keys changed (file name and
    /// comments kept, [`save_profile`]).
    pub(crate) fn generate_confirmed(&mut self, name: &str, ctx: &mut Ctx) -> Action {
        let Some(p) = self.set.get(name).cloned() else {
            ctx.say(Level::Error, format!("No profile called {name}"));
            return Action::None;
        };
        let Some(paths) = self.paths.clone() else {
            ctx.say(Level::Error, "The profiles are not loaded yet");
            return Action::None;
        };
        let written = match generate_certificate(&paths, &p.name, &p.roles) {
            Ok(w) => w,
            Err(e) => {
                ctx.say(Level::Error, format!("Certificate not generated: {e}"));
                return Action::None;
            }
        };
        let applies = if p.name == ctx.status.profile {
            self.apply_after_load = Some(p.name.clone());
            " (active: applied now)"
        } else {
            ""
        };
        if p.is_builtin() || (p.certificate.is_none() && p.target == Target::Embedded) {
            ctx.say(
                Level::Success,
                format!(
                    "New test certificate for {} in {}{applies}",
                    p.name,
                    written.tpp_cert.display()
                ),
            );
            return Action::LoadProfiles;
        }
        let mut updated = p.clone();
        updated.certificate = Some(written.tpp_cert.clone());
        updated.key = Some(written.tpp_key.clone());
        match save_profile(&paths.profiles_dir(), &updated, p.source.as_deref()) {
            Ok(file) => ctx.say(
                Level::Success,
                format!(
                    "New test certificate {} for {}; {} updated{applies}",
                    written.tpp_cert.display(),
                    p.name,
                    file.display()
                ),
            ),
            Err(e) => ctx.say(
                Level::Error,
                format!("Certificate generated, but the profile was not saved: {e}"),
            ),
        }
        Action::LoadProfiles
    }

    /// Keys for the profile form and the delete confirmation while they are open: every key
    /// is theirs (letters type into the field). `None` when neither is open.
    fn text_input(&mut self, key: &KeyEvent, ctx: &mut Ctx) -> Option<Action> {
        if self.confirm_delete.is_some() {
            return Some(match scope_lookup(ctx.keymap, Scope::ProfileConfirm, key) {
                Some(Command::Confirm) => self.delete_confirmed(ctx),
                Some(Command::Dismiss) => {
                    self.confirm_delete = None;
                    ctx.say(Level::Info, "Nothing deleted");
                    Action::None
                }
                _ => Action::None,
            });
        }
        self.form.as_ref()?;
        // Line-editing keys work as in every text field; the form's own keys come from the
        // keymap (so the help lists them).
        let editing = match key.code {
            KeyCode::Backspace => Some(Command::Backspace),
            KeyCode::Delete => Some(Command::Delete),
            KeyCode::Left => Some(Command::CursorLeft),
            KeyCode::Right => Some(Command::CursorRight),
            KeyCode::Home => Some(Command::CursorHome),
            KeyCode::End => Some(Command::CursorEnd),
            _ => None,
        };
        let cmd = scope_lookup(ctx.keymap, Scope::ProfileForm, key).or(editing);
        let action = match cmd {
            Some(Command::FormSave) => self.save_form(ctx),
            Some(Command::Dismiss) => {
                self.form = None;
                ctx.say(Level::Info, "Nothing saved");
                Action::None
            }
            Some(Command::ProfileGenerateCert) => {
                self.generate_in_form(ctx);
                Action::None
            }
            Some(c) => {
                self.form_edit(c);
                Action::None
            }
            None => {
                if let KeyCode::Char(c) = key.code
                    && !key
                        .modifiers
                        .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
                {
                    self.form_type(c);
                }
                Action::None
            }
        };
        Some(action)
    }

    /// Types pasted text into the open form field (line breaks dropped); false when no form
    /// is open.
    fn paste_text(&mut self, text: &str) -> bool {
        if self.form.is_none() {
            return false;
        }
        for c in text.chars().filter(|c| *c != '\n' && *c != '\r') {
            self.form_type(c);
        }
        true
    }

    fn form_type(&mut self, c: char) {
        if let Some(f) = &mut self.form {
            let v = &mut f.draft.values[f.field];
            let at = byte_index(v, f.cursor);
            v.insert(at, c);
            f.cursor += 1;
        }
    }

    fn form_edit(&mut self, cmd: Command) {
        let Some(f) = &mut self.form else {
            return;
        };
        let len = |f: &ProfileForm| f.draft.values[f.field].chars().count();
        match cmd {
            Command::NextField => {
                f.field = (f.field + 1) % FIELDS.len();
                f.cursor = len(f);
            }
            Command::PrevField => {
                f.field = (f.field + FIELDS.len() - 1) % FIELDS.len();
                f.cursor = len(f);
            }
            Command::Backspace if f.cursor > 0 => {
                f.cursor -= 1;
                let v = &mut f.draft.values[f.field];
                let at = byte_index(v, f.cursor);
                v.remove(at);
            }
            Command::Delete => {
                let cursor = f.cursor;
                let v = &mut f.draft.values[f.field];
                if cursor < v.chars().count() {
                    let at = byte_index(v, cursor);
                    v.remove(at);
                }
            }
            Command::CursorLeft => f.cursor = f.cursor.saturating_sub(1),
            Command::CursorRight => f.cursor = (f.cursor + 1).min(len(f)),
            Command::CursorHome => f.cursor = 0,
            Command::CursorEnd => f.cursor = len(f),
            Command::ClearField => {
                f.draft.values[f.field].clear();
                f.cursor = 0;
            }
            _ => {}
        }
    }

    fn generate_in_form(&mut self, ctx: &mut Ctx) {
        let Some(paths) = self.paths.clone() else {
            ctx.say(Level::Error, "The profiles are not loaded yet");
            return;
        };
        let Some(f) = &mut self.form else {
            return;
        };
        let name = f.draft.get("name").trim().to_string();
        if name.is_empty() {
            f.errors = vec![FieldError {
                field: "name",
                message: "type a name first: the certificate files are named after it".into(),
            }];
            f.field = 0;
            return;
        }
        let roles = f.draft.roles();
        match generate_certificate(&paths, &name, &roles) {
            Ok(w) => {
                f.draft
                    .set("certificate", &w.tpp_cert.display().to_string());
                f.draft.set("key", &w.tpp_key.display().to_string());
                f.errors
                    .retain(|e| e.field != "certificate" && e.field != "key");
                let roles = if roles.is_empty() {
                    "PSP_AI, PSP_PI".to_string()
                } else {
                    role_names(&roles)
                };
                ctx.say(
                    Level::Success,
                    format!(
                        "Test certificate ({roles}) written to {} (key 0600); save with Enter",
                        w.tpp_cert.display()
                    ),
                );
            }
            Err(e) => ctx.say(Level::Error, format!("Certificate not generated: {e}")),
        }
    }

    fn save_form(&mut self, ctx: &mut Ctx) -> Action {
        let Some(paths) = self.paths.clone() else {
            ctx.say(Level::Error, "The profiles are not loaded yet");
            return Action::None;
        };
        let dir = paths.profiles_dir();
        let set = &self.set;
        let Some(f) = &mut self.form else {
            return Action::None;
        };
        let (original, previous) = match &f.kind {
            FormKind::Edit { original, source } => (Some(original.clone()), Some(source.clone())),
            _ => (None, None),
        };
        let profile = match f.draft.validate(set, original.as_deref(), &dir) {
            Ok(p) => p,
            Err(errors) => {
                if let Some(first) = errors.first()
                    && let Some(i) = ProfileDraft::index(first.field)
                {
                    f.field = i;
                    f.cursor = f.draft.values[i].chars().count();
                }
                let n = errors.len();
                f.errors = errors;
                ctx.say(
                    Level::Error,
                    format!("Not saved: {n} field(s) need attention (shown in the form)"),
                );
                return Action::None;
            }
        };
        match save_profile(&dir, &profile, previous.as_deref()) {
            Ok(file) => {
                let applies = if original.as_deref() == Some(ctx.status.profile.as_str()) {
                    self.apply_after_load = Some(profile.name.clone());
                    "; it is active: applied now"
                } else {
                    "; Enter switches to it"
                };
                self.form = None;
                self.pending_select = Some(profile.name.clone());
                ctx.say(
                    Level::Success,
                    format!("Saved {} to {}{applies}", profile.name, file.display()),
                );
                Action::LoadProfiles
            }
            Err(e) => {
                ctx.say(Level::Error, format!("Not saved: {e}"));
                Action::None
            }
        }
    }

    fn delete_confirmed(&mut self, ctx: &mut Ctx) -> Action {
        let Some(name) = self.confirm_delete.take() else {
            return Action::None;
        };
        let Some(p) = self.set.get(&name).cloned() else {
            return Action::None;
        };
        match delete_profile(&p) {
            Ok(file) => {
                let note = if name == ctx.status.profile {
                    " (it stays active until you switch)"
                } else {
                    ""
                };
                ctx.say(
                    Level::Success,
                    format!("Deleted {name} ({}){note}", file.display()),
                );
                Action::LoadProfiles
            }
            Err(e) => {
                ctx.say(Level::Error, format!("Not deleted: {e}"));
                Action::None
            }
        }
    }

    /// Draws the profiles screen into `area` (between the status bar and the footer).
    fn draw_screen(&self, frame: &mut Frame, area: Rect, ctx: &Ctx) {
        let t = ctx.theme;
        let list_w = self
            .set
            .profiles
            .iter()
            .map(|p| p.name.chars().count() + 16)
            .max()
            .unwrap_or(20)
            .clamp(24, 44) as u16;
        let [list_area, detail_area] =
            Layout::horizontal([Constraint::Length(list_w), Constraint::Min(20)]).areas(area);
        self.draw_profile_list(frame, list_area, ctx);
        if let Some(form) = &self.form {
            self.draw_profile_form(frame, detail_area, form, ctx);
        } else {
            let lines = self.profile_detail_lines(ctx);
            let title = match self.highlighted_profile() {
                Some(p) => format!(" {} ", p.name),
                None => " Profile ".into(),
            };
            frame.render_widget(
                Paragraph::new(lines)
                    .style(t.base)
                    .wrap(Wrap { trim: false })
                    .block(rounded_block(title, t.border, t.title)),
                detail_area,
            );
        }
    }

    fn draw_profile_list(&self, frame: &mut Frame, area: Rect, ctx: &Ctx) {
        let t = ctx.theme;
        let v = self;
        let mut lines: Vec<Line> = Vec::new();
        for (i, p) in v.set.profiles.iter().enumerate() {
            let active = p.name == ctx.status.profile;
            let mark = if active { "● " } else { "  " };
            let style = if i == v.selected {
                if v.form.is_some() {
                    t.selected_unfocused
                } else {
                    t.selected
                }
            } else {
                t.base
            };
            let mut spans = vec![Span::styled(format!("{mark}{}", p.name), style)];
            if p.is_builtin() {
                spans.push(Span::styled(" [built-in]", t.dim));
            }
            lines.push(Line::from(spans));
        }
        if v.set.profiles.is_empty() {
            lines.push(Line::styled("(loading …)", t.dim));
        }
        lines.push(Line::default());
        lines.push(Line::styled("● active", t.dim));
        lines.push(Line::styled("[built-in] read-only", t.dim));
        for e in &v.set.errors {
            lines.push(Line::styled(format!("✗ {e}"), t.error));
        }
        frame.render_widget(
            Paragraph::new(lines)
                .style(t.base)
                .wrap(Wrap { trim: false })
                .block(rounded_block(
                    " Profiles ",
                    t.border_focused,
                    t.border_focused,
                )),
            area,
        );
    }

    /// Replaces volatile parts (the home directory of config and data) for snapshots.
    fn shown_path(&self, ctx: &Ctx, p: &Path) -> String {
        self.shown_text(ctx, &p.display().to_string())
    }

    /// `s` with the config and data directories written `<config>` and `<data>` when
    /// volatile values are masked.
    fn shown_text(&self, ctx: &Ctx, s: &str) -> String {
        let s = s.to_string();
        if !ctx.mask {
            return s;
        }
        match &self.paths {
            Some(paths) => s
                .replace(&paths.data.display().to_string(), "<data>")
                .replace(&paths.config.display().to_string(), "<config>"),
            None => s,
        }
    }

    fn profile_detail_lines(&self, ctx: &Ctx) -> Vec<Line<'static>> {
        let t = ctx.theme;
        let v = self;
        let Some(p) = self.highlighted_profile() else {
            return vec![Line::styled("No profile", t.dim)];
        };
        let now = self.now();
        let label = |l: &str| detail_label(t, l);
        let kv = |l: &str, value: String| Line::from(vec![label(l), Span::raw(value)]);
        let kv_styled =
            |l: &str, value: String, s: Style| Line::from(vec![label(l), Span::styled(value, s)]);
        let mut out: Vec<Line<'static>> = Vec::new();
        let active = p.name == ctx.status.profile;
        let mut what = Vec::new();
        if active {
            what.push("active".to_string());
        }
        if p.is_builtin() {
            what.push("built in, read-only (c clones it)".to_string());
        }
        if !what.is_empty() {
            out.push(kv_styled("Profile", what.join("; "), t.info));
        }
        out.push(kv(
            "File",
            match &p.source {
                Some(s) => self.shown_path(ctx, s),
                None => "built into the binary".into(),
            },
        ));
        out.push(kv(
            "Target",
            match &p.target {
                // As this process starts it: `--listen` over the profile's `listen`.
                Target::Embedded => match crate::embedded::as_started(p.clone()).room_address() {
                    Some(a) => format!(
                        "embedded sandbox (in this process, room mode: reachable from the network on {a})"
                    ),
                    None => "embedded sandbox (in this process, loopback)".into(),
                },
                Target::Url(u) => u.clone(),
            },
        ));
        if let Target::Url(u) = &p.target {
            let tls = if u.starts_with("https://") {
                format!(
                    "TLS ≥ {}; roots: system{}; client certificate (QWAC): {}",
                    match p.tls_min_version {
                        Some(TlsMinVersion::Tls13) => "1.3",
                        _ => "1.2",
                    },
                    p.ca_bundle
                        .as_ref()
                        .map(|b| format!(" + {}", self.shown_path(ctx, &p.resolve(b))))
                        .unwrap_or_default(),
                    p.client_certificate
                        .as_ref()
                        .map(|c| self.shown_path(ctx, &p.resolve(c)))
                        .unwrap_or_else(|| "none".into()),
                )
            } else {
                "plain http: no TLS".into()
            };
            out.push(kv("Transport", tls));
        }
        out.push(kv(
            "Responses",
            if p.verify_response_signatures {
                format!(
                    "signatures verified (certificate: {})",
                    p.aspsp_certificate
                        .as_ref()
                        .map(|c| self.shown_path(ctx, &p.resolve(c)))
                        .unwrap_or_else(|| "from ASPSP-Signature-Certificate".into())
                )
            } else {
                "signatures not verified".into()
            },
        ));
        if let Some(ip) = &p.psu_ip_address {
            out.push(kv("PSU-IP-Address", ip.clone()));
        }
        if let Some(u) = &p.tpp_redirect_uri {
            out.push(kv("TPP-Redirect-URI", u.clone()));
        }
        out.push(Line::default());
        out.push(Line::styled("Certificate", t.title));
        let details = v.details.get(v.selected);
        match details.map(|d| &d.cert) {
            None => out.push(Line::styled("  (loading …)", t.dim)),
            Some(CertInfo::Missing(why)) => out.push(kv_styled("  File", why.clone(), t.dim)),
            Some(CertInfo::Files {
                cert_path,
                key_path,
                cert,
                key_match,
            }) => {
                out.push(kv("  File", self.shown_path(ctx, cert_path)));
                match (key_path, key_match) {
                    (Some(k), Some(Ok(true))) => out.push(Line::from(vec![
                        label("  Key file"),
                        Span::raw(self.shown_path(ctx, k)),
                        Span::styled("  ✓ matches the certificate", t.success),
                    ])),
                    (Some(k), Some(Ok(false))) => out.push(Line::from(vec![
                        label("  Key file"),
                        Span::raw(self.shown_path(ctx, k)),
                        Span::styled("  ✗ does NOT match the certificate", t.error),
                    ])),
                    (Some(k), Some(Err(e))) => out.push(Line::from(vec![
                        label("  Key file"),
                        Span::raw(self.shown_path(ctx, k)),
                        Span::styled(format!("  ✗ {e}"), t.error),
                    ])),
                    _ => out.push(kv_styled("  Key file", "none".into(), t.warning)),
                }
                match cert {
                    Err(e) => out.push(kv_styled("  Error", e.to_string(), t.error)),
                    Ok(c) => out.extend(cert_lines(ctx, c, p, now)),
                }
            }
        }
        out.push(Line::default());
        out.push(Line::styled("Session", t.title));
        match details {
            None => {}
            Some(d) => {
                out.push(kv("  File", self.shown_path(ctx, &d.session_file)));
                match &d.session {
                    Err(e) => out.push(kv_styled("  Error", e.to_string(), t.error)),
                    Ok(s) => out.extend(session_lines(ctx, s, p, now)),
                }
            }
        }
        out
    }
}

/// A label of the profile details, padded to their label column (20).
fn detail_label(t: &Theme, l: &str) -> Span<'static> {
    Span::styled(format!("{l:<20}"), t.status_label)
}

/// The certificate's lines of the profile details (`p`'s, at unix second `now`).
fn cert_lines(ctx: &Ctx, c: &Certificate, p: &Profile, now: i64) -> Vec<Line<'static>> {
    let t = ctx.theme;
    let mut out = Vec::new();
    let label = |l: &str| detail_label(t, l);
    let kv = |l: &str, value: String| Line::from(vec![label(l), Span::raw(value)]);
    let mask = ctx.mask;
    let serial = if mask {
        "<serial>".to_string()
    } else {
        c.serial_hex()
    };
    out.push(kv("  Serial", serial.clone()));
    let key_id = if mask {
        c.key_id().replacen(&c.serial_hex(), "<serial>", 1)
    } else {
        c.key_id()
    };
    out.push(kv("  keyId", key_id));
    out.push(kv("  Subject", c.subject.to_rfc2253()));
    out.push(kv("  Issuer", c.issuer.to_rfc2253()));
    let (from, to) = if mask {
        ("<not-before>".to_string(), "<not-after>".to_string())
    } else {
        (fmt_time(c.not_before), fmt_time(c.not_after))
    };
    // One verdict for the inspector and `cert show` (crate::cert::Certificate::validity_at).
    use crate::cert::Validity;
    let (state, style) = match c.validity_at(now) {
        Validity::NotYetValid { starts_in } => (
            format!("✗ not valid yet (starts in {})", fmt_duration(starts_in)),
            t.error,
        ),
        Validity::Expired { ago } => (format!("✗ EXPIRED {} ago", fmt_duration(ago)), t.error),
        Validity::ExpiresSoon { days } => (format!("⚠ expires in {days} days"), t.warning),
        Validity::Valid { .. } if mask => ("valid".to_string(), t.success),
        Validity::Valid { days_left } => (format!("valid, {days_left} days left"), t.success),
    };
    out.push(Line::from(vec![
        label("  Valid"),
        Span::raw(format!("{from} → {to}  ")),
        Span::styled(state, style),
    ]));
    let roles = c.roles();
    let role_text = if roles.is_empty() {
        "none (no PSD2 qcStatement)".to_string()
    } else {
        role_names(&roles)
    };
    out.push(kv("  PSD2 roles", role_text));
    if let Some(s) = &c.psd2 {
        out.push(kv("  NCA", format!("{} ({})", s.nca_name, s.nca_id)));
    }
    let missing: Vec<&str> = c.missing_roles(&p.roles).iter().map(|r| r.name()).collect();
    if !missing.is_empty() {
        out.push(Line::from(vec![
            label(""),
            Span::styled(
                format!(
                    "⚠ the profile expects {} too; the bank may refuse those operations",
                    missing.join(", ")
                ),
                t.warning,
            ),
        ]));
    }
    out
}

/// The session's lines of the profile details (`p`'s, at unix second `now`).
fn session_lines(ctx: &Ctx, s: &SessionState, p: &Profile, now: i64) -> Vec<Line<'static>> {
    let t = ctx.theme;
    let mut out = Vec::new();
    let label = |l: &str| detail_label(t, l);
    let none = |what: &str| Span::styled(what.to_string(), t.dim);
    let line = |l: &str, v: Option<&String>, empty: &str| match v {
        Some(v) => Line::from(vec![label(l), Span::raw(v.clone())]),
        None => Line::from(vec![label(l), none(empty)]),
    };
    let psu = s.psu_id.as_ref().or(p.psu_id.as_ref());
    let psu_note = if s.psu_id.is_none() && p.psu_id.is_some() {
        " (from the profile)"
    } else {
        ""
    };
    let mask = &ctx.screen_mask;
    match psu {
        Some(v) => out.push(Line::from(vec![
            label("  PSU-ID"),
            Span::raw(format!("{}{psu_note}", mask.personal(v))),
        ])),
        None => out.push(Line::from(vec![
            label("  PSU-ID"),
            Span::styled("none yet: SCA registers the PSU", t.status_attention),
        ])),
    }
    out.push(line(
        "  PSU-Corporate-ID",
        s.psu_corporate_id
            .as_ref()
            .map(|c| mask.personal(c).into_owned())
            .as_ref(),
        "none (private context)",
    ));
    out.push(line(
        "  Context",
        s.context.map(|c| c.as_str().to_string()).as_ref(),
        "not chosen yet",
    ));
    out.push(line(
        "  TPP-Session-ID",
        s.tpp_session_id
            .as_ref()
            .map(|id| mask.personal(id).into_owned())
            .as_ref(),
        "none yet (created when the profile starts)",
    ));
    let sca = match s.sca_remaining_secs(now) {
        None => Span::styled("no SCA yet", t.dim),
        Some(left) if left > 0 => Span::styled(
            format!(
                "{} left of {} min{}",
                fmt_duration(left),
                SCA_SESSION_SECS / 60,
                if ctx.mask {
                    String::new()
                } else {
                    format!(
                        " (SCA at {})",
                        fmt_time(s.sca_completed_at.unwrap_or_default())
                    )
                }
            ),
            t.success,
        ),
        Some(left) => Span::styled(
            format!(
                "expired {} ago: the next PSU request asks for SCA again",
                fmt_duration(left)
            ),
            t.warning,
        ),
    };
    out.push(Line::from(vec![label("  SCA session"), sca]));
    let consent = match s.consent_age_days(now) {
        None => Span::styled("no consent yet", t.dim),
        Some(d) if d < CONSENT_RENEWAL_DAYS - EXPIRY_WARNING_DAYS => {
            Span::styled(format!("{d} of {CONSENT_RENEWAL_DAYS} days"), t.success)
        }
        Some(d) if d < CONSENT_RENEWAL_DAYS => Span::styled(
            format!(
                "⚠ {d} of {CONSENT_RENEWAL_DAYS} days: renew with SCA within {} days",
                CONSENT_RENEWAL_DAYS - d
            ),
            t.warning,
        ),
        Some(d) => Span::styled(
            format!("✗ {d} days: over {CONSENT_RENEWAL_DAYS}, SCA must renew the consent"),
            t.error,
        ),
    };
    out.push(Line::from(vec![label("  Consent age"), consent]));
    out
}

impl ProfilesView {
    fn draw_profile_form(&self, frame: &mut Frame, area: Rect, form: &ProfileForm, ctx: &Ctx) {
        let t = ctx.theme;
        let title = match &form.kind {
            FormKind::New => " New profile ".to_string(),
            FormKind::Edit { original, .. } => format!(" Edit {original} "),
            FormKind::Clone { from } => format!(" Copy of {from} "),
        };
        let label_w = FIELDS
            .iter()
            .map(|f| f.label.chars().count())
            .max()
            .unwrap_or(10)
            + 2;
        let mut lines: Vec<Line<'static>> = Vec::new();
        let mut selected_line = 0;
        for (i, spec) in FIELDS.iter().enumerate() {
            let value = &form.draft.values[i];
            let active = i == form.field;
            if active {
                selected_line = lines.len();
            }
            let marker = if active { "▸ " } else { "  " };
            let mut spans = vec![Span::styled(
                format!("{marker}{:<label_w$}", spec.label),
                if active {
                    t.border_focused
                } else {
                    t.status_label
                },
            )];
            if active {
                let at = byte_index(value, form.cursor);
                let (a, b) = value.split_at(at);
                let mut rest = b.chars();
                let under = rest.next().map(|c| c.to_string()).unwrap_or(" ".into());
                spans.push(Span::styled(a.to_string(), t.input_active));
                spans.push(Span::styled(under, t.selected));
                spans.push(Span::styled(rest.collect::<String>(), t.input_active));
            } else {
                let shown = if value.is_empty() {
                    Span::styled("—", t.dim)
                } else {
                    Span::styled(value.clone(), t.input)
                };
                spans.push(shown);
            }
            lines.push(Line::from(spans));
            for e in form.errors.iter().filter(|e| e.field == spec.key) {
                lines.push(Line::from(vec![
                    Span::raw(" ".repeat(label_w + 2)),
                    Span::styled(format!("✗ {}", self.shown_text(ctx, &e.message)), t.error),
                ]));
            }
        }
        let help = FIELDS[form.field].help;
        let inner_h = area.height.saturating_sub(4) as usize;
        let scroll = selected_line.saturating_sub(inner_h.saturating_sub(2));
        let [form_area, help_area] =
            Layout::vertical([Constraint::Min(3), Constraint::Length(1)]).areas(area);
        frame.render_widget(
            Paragraph::new(lines)
                .style(t.base)
                .scroll((scroll as u16, 0))
                .block(rounded_block(title, t.border_focused, t.border_focused)),
            form_area,
        );
        frame.render_widget(
            Paragraph::new(Line::styled(format!(" {help}"), t.dim)),
            help_area,
        );
    }
}

impl Component for ProfilesView {
    /// The profile form and the delete confirmation take every key while open.
    fn input(&mut self, key: &KeyEvent, ctx: &mut Ctx) -> Option<Effect> {
        self.text_input(key, ctx).map(Effect::Run)
    }

    fn handle(&mut self, cmd: Command, ctx: &mut Ctx) -> Option<Effect> {
        self.command(cmd, ctx)
    }

    fn paste(&mut self, text: &str) -> bool {
        self.paste_text(text)
    }

    /// The profile form and the delete question take the keys.
    fn typing(&self) -> bool {
        self.form.is_some() || self.confirm_delete.is_some()
    }

    fn draw(&self, frame: &mut Frame, area: Rect, ctx: &Ctx) {
        self.draw_screen(frame, area, ctx);
    }
}
