//! Server-rendered HTML of the sandbox SCA (interface document, Authentication 11 and 14:
//! redirect SCA, bank-offered consent as a checkbox list with existing consents pre-selected,
//! sandbox SCA by customerNumber).
//!
//! Plain forms, no JavaScript, inline CSS only. The markup is written with [`maud::html!`],
//! which escapes every interpolated value (element text and attribute values); the only
//! unescaped text is the pages' own style sheet, a constant.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use maud::{DOCTYPE, Markup, PreEscaped, html};
use uuid::Uuid;

use crate::sandbox::store::{Account, Agreement, Authorisation, Customer};

/// The name shown on every page.
pub const BANK_NAME: &str = "psd2-console Sandbox Bank";

/// An HTML page with its status.
#[derive(Debug, Clone)]
pub struct Page {
    /// The HTTP status.
    pub status: StatusCode,
    /// The HTML document.
    pub html: String,
}

impl IntoResponse for Page {
    fn into_response(self) -> Response {
        let mut r = (self.status, self.html).into_response();
        let h = r.headers_mut();
        for (name, value) in [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            // Not `no-referrer`: with it browsers send `Origin: null` on the pages' own form
            // posts, which the SCA guard refuses; `same-origin` still sends nothing to the
            // TPP or any other site.
            (header::REFERRER_POLICY, "same-origin"),
            (
                header::CONTENT_SECURITY_POLICY,
                "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'",
            ),
        ] {
            h.insert(name, HeaderValue::from_static(value));
        }
        r
    }
}

const CSS: &str = r#"
*{box-sizing:border-box}
body{margin:0;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:#eef2f5;color:#1d2a33;font-size:18px}
header{background:#0b4f6c;color:#fff;padding:18px 28px;display:flex;align-items:center;gap:16px}
header .logo{width:38px;height:38px;border-radius:50%;background:#20bf9f;display:flex;align-items:center;justify-content:center;font-weight:700}
header h1{font-size:22px;margin:0;font-weight:600}
header .badge{margin-left:auto;background:#f5b82e;color:#3a2a00;font-size:13px;font-weight:700;padding:4px 10px;border-radius:12px;letter-spacing:.05em}
main{max-width:760px;margin:32px auto;padding:0 16px}
.card{background:#fff;border-radius:10px;box-shadow:0 2px 10px rgba(0,0,0,.08);padding:28px 32px;margin-bottom:20px}
h2{margin-top:0;font-size:26px}
.steps{display:flex;gap:8px;margin-bottom:18px;font-size:14px;color:#6b7b86}
.steps span{padding:4px 10px;border-radius:12px;background:#dde5ea}
.steps span.on{background:#0b4f6c;color:#fff}
.tpp{background:#e8f4f8;border-left:4px solid #0b4f6c;padding:10px 14px;margin:0 0 18px}
label.field{display:block;font-weight:600;margin:12px 0 6px}
input[type=text]{width:100%;font-size:20px;padding:10px 12px;border:1px solid #9fb0bb;border-radius:6px;letter-spacing:.06em}
.buttons{display:flex;gap:12px;margin-top:22px}
button{font-size:17px;padding:10px 22px;border-radius:6px;border:1px solid #0b4f6c;background:#0b4f6c;color:#fff;cursor:pointer}
button.secondary{background:#fff;color:#0b4f6c}
.error{background:#fdecea;border-left:4px solid #c62828;color:#7f1d1d;padding:10px 14px;margin-bottom:16px}
.hints button{display:flex;width:100%;justify-content:space-between;background:#f7fafb;color:#1d2a33;border:1px solid #cdd8de;margin:6px 0;text-align:left}
.hints button .num{font-family:ui-monospace,Menlo,Consolas,monospace;letter-spacing:.04em}
.hints button small{color:#6b7b86}
.choice,.acct{display:flex;align-items:center;gap:14px;border:1px solid #cdd8de;border-radius:8px;padding:12px 14px;margin:8px 0}
.acct .meta,.choice .meta{color:#6b7b86;font-size:15px}
.acct .bban{font-family:ui-monospace,Menlo,Consolas,monospace}
input[type=checkbox],input[type=radio]{width:22px;height:22px}
footer{text-align:center;color:#8597a3;font-size:13px;margin:24px 0}
code{background:#eef2f5;padding:1px 5px;border-radius:4px}
"#;

/// The common frame: header with the bank name, optional step indicator (`step` 1 to 3 of
/// Identify, Context, Consent), `body` in the card; the whole HTML document.
pub fn layout(title: &str, step: Option<usize>, body: Markup) -> String {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width,initial-scale=1";
                title { (title) " – " (BANK_NAME) }
                // The one deliberate unescaped text: a constant style sheet (`"` must stay `"`).
                style { (PreEscaped(CSS)) }
            }
            body {
                header {
                    div class="logo" { "SB" }
                    h1 { (BANK_NAME) }
                    span class="badge" { "SANDBOX" }
                }
                main {
                    div class="card" {
                        @if let Some(on) = step {
                            div class="steps" {
                                @for (i, s) in ["1 Identify", "2 Context", "3 Consent"].iter().enumerate() {
                                    span class=[(i + 1 == on).then_some("on")] { (s) }
                                }
                            }
                        }
                        (body)
                    }
                }
                footer {
                    (BANK_NAME) " · NextGenPSD2 XS2A 1.3 sandbox · fake customers, no real money"
                }
            }
        }
    }
    .into_string()
}

/// The red message box of a step shown again (nothing when `error` is `None`).
pub fn error_box(error: Option<&str>) -> Markup {
    html! {
        @if let Some(e) = error {
            div class="error" { (e) }
        }
    }
}

fn tpp_box(auth: &Authorisation) -> Markup {
    html! {
        p class="tpp" { b { (auth.tpp_name) } " asks for access to your account information." }
    }
}

/// A secondary submit button `action=value` posting to `formaction` without validation
/// (Cancel and Reject buttons inside a step's form).
pub fn secondary_button(formaction: &str, value: &str, label: &str) -> Markup {
    html! {
        button type="submit" class="secondary" formaction=(formaction) formnovalidate
            name="action" value=(value) { (label) }
    }
}

fn cancel_button(auth: &Authorisation) -> Markup {
    secondary_button(&format!("/sca/{}/cancel", auth.id), "cancel", "Cancel")
}

/// One sandbox customer as a one-click login button: submits `customerNumber=number`;
/// `extra` is the small grey note on the right.
pub fn hint_button(number: &str, name: &str, extra: &str) -> Markup {
    html! {
        button type="submit" name="customerNumber" value=(number) {
            span { span class="num" { (number) } " \u{a0} " (name) }
            small { (extra) }
        }
    }
}

/// The customerNumber form (`id="login"`) and the form of one-click `hints`
/// (`id="hints"`), both posting to `action` (interface document, Authentication 14:
/// sandbox SCA by customerNumber). `typed` is the number typed before; `cancel` sits beside
/// Log in.
pub fn login_forms(action: &str, typed: &str, cancel: Markup, hints: Markup) -> Markup {
    html! {
        form id="login" method="post" action=(action) {
            label class="field" for="customerNumber" {
                "National identity number (customerNumber)"
            }
            input type="text" id="customerNumber" name="customerNumber" value=(typed)
                inputmode="numeric" autocomplete="off" autofocus;
            div class="buttons" { button type="submit" { "Log in" } (cancel) }
        }
        h3 { "Sandbox customers" }
        p { "In the sandbox any of these identifies you; click one to log in." }
        form id="hints" class="hints" method="post" action=(action) { (hints) }
    }
}

/// One account (or card account) as a checkbox row: `field=id`, ticked when `checked`;
/// `number` is the formatted BBAN or the masked PAN.
pub fn account_checkbox(
    field: &str,
    id: Uuid,
    checked: bool,
    name: &str,
    number: &str,
    product: &str,
    currency: &str,
) -> Markup {
    html! {
        label class="acct" {
            input type="checkbox" name=(field) value=(id.to_string()) checked[checked];
            span {
                b { (name) }
                br;
                span class="meta" {
                    span class="bban" { (number) } " · " (product) " · " (currency)
                }
            }
        }
    }
}

/// A private customer offered as a login hint, with the names of corporate customers they
/// may act for.
pub struct Hint {
    /// The customer.
    pub customer: Customer,
    /// The corporate customers they may act for (agreements).
    pub corporate_names: Vec<String>,
}

/// Step 1: the customerNumber form, with clickable hints.
pub fn login(auth: &Authorisation, hints: &[Hint], typed: &str, error: Option<&str>) -> String {
    let hint_buttons = html! {
        @for h in hints {
            @let extra = if h.corporate_names.is_empty() {
                "private accounts".to_string()
            } else {
                format!("private + corporate: {}", h.corporate_names.join(", "))
            };
            (hint_button(&h.customer.number, &h.customer.name, &extra))
        }
    };
    let body = html! {
        h2 { "Log in" }
        (tpp_box(auth))
        (error_box(error))
        (login_forms(&format!("/sca/{}/login", auth.id), typed, cancel_button(auth), hint_buttons))
    };
    layout("Log in", Some(1), body)
}

/// Step 2: PRIVATE or CORPORATE (which agreement). `agreements` holds an agreement with the
/// corporate customer's name and customerNumber (organisation number): each corporate radio
/// carries the number as `data-company` and shows it, so a PSU (or `sca complete
/// --company`) can pick the company by its number.
pub fn context(
    auth: &Authorisation,
    customer: &Customer,
    agreements: &[(Agreement, String, String)],
    error: Option<&str>,
) -> String {
    let body = html! {
        h2 { "Hello, " (customer.name) }
        (tpp_box(auth))
        (error_box(error))
        p { "Whose accounts should " (auth.tpp_name) " see?" }
        form id="context" method="post" action={ "/sca/" (auth.id.to_string()) "/context" } {
            label class="choice" {
                input type="radio" name="context" value="PRIVATE" checked;
                span { b { "My own accounts" } br; span class="meta" { "Private" } }
            }
            @for (a, corp, number) in agreements {
                label class="choice" {
                    input type="radio" name="context" value={ "CORPORATE:" (a.id.to_string()) }
                        data-company=(number);
                    span {
                        b { (corp) } br;
                        span class="meta" { "Corporate · org. no. " (number) " · " (a.name) }
                    }
                }
            }
            div class="buttons" { button type="submit" { "Continue" } (cancel_button(auth)) }
        }
    };
    layout("Choose context", Some(2), body)
}

/// `1503.12.34562` from `15031234562`.
pub fn format_bban(bban: &str) -> String {
    if bban.len() == 11 && bban.is_ascii() {
        format!("{}.{}.{}", &bban[..4], &bban[4..6], &bban[6..])
    } else {
        bban.to_string()
    }
}

/// Step 3: the account checkboxes (pre-selected: `checked`), Approve and Cancel.
/// `corporate` names the corporate customer in CORPORATE context.
pub fn consent(
    auth: &Authorisation,
    customer: &Customer,
    corporate: Option<&str>,
    accounts: &[Account],
    checked: &[Uuid],
    error: Option<&str>,
) -> String {
    let body = html! {
        h2 { "Give consent" }
        (tpp_box(auth))
        (error_box(error))
        p {
            (customer.name) ", choose which of "
            @match corporate {
                Some(c) => { "accounts of " b { (c) } " (corporate)" },
                None => { "your own accounts (private)" },
            }
            " " (auth.tpp_name) " may read (balances and transactions). Accounts you consented \
             to before are already ticked; untick to withdraw."
        }
        form id="consent" method="post" action={ "/sca/" (auth.id.to_string()) "/consent" } {
            @for a in accounts {
                (account_checkbox("account", a.id, checked.contains(&a.id), &a.name,
                    &format_bban(&a.bban), &a.product, &a.currency))
            }
            div class="buttons" {
                button type="submit" name="action" value="approve" { "Approve" }
                (cancel_button(auth))
            }
        }
    };
    layout("Consent", Some(3), body)
}

/// An error page (unknown, expired or used authorisation; unknown page).
pub fn error(status: StatusCode, title: &str, message: &str) -> Page {
    let body = html! {
        h2 { (title) }
        div class="error" { (message) }
    };
    Page {
        status,
        html: layout(title, None, body),
    }
}

/// A short page shown with the final redirect (browsers follow the Location header).
pub fn redirecting(location: &str) -> String {
    let body = html! {
        h2 { "Returning to the TPP" }
        p { a href=(location) { "Continue" } }
    };
    layout("Redirecting", None, body)
}

/// The home page of the sandbox: what it is and where the interface is.
pub fn home(base_url: &str) -> String {
    let body = html! {
        h2 { "Sandbox ASPSP" }
        p {
            "This is the embedded sandbox of psd2-console: a NextGenPSD2 XS2A 1.3 bank with fake \
             customers. The signed interface is under " code { (base_url) "/v1" } "; SCA pages \
             open from the " code { "scaRedirect" } " links it returns."
        }
    };
    layout("Sandbox", None, body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_interpolated_text() {
        let p = error(StatusCode::NOT_FOUND, "<b>x</b>", "\"'&<script>");
        assert!(!p.html.contains("<script>"));
        assert!(p.html.contains("&lt;b&gt;x&lt;/b&gt;"));
        assert_eq!(format_bban("15031234562"), "1503.12.34562");
    }
}
