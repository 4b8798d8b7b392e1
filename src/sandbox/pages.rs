//! Server-rendered HTML of the sandbox SCA (interface document, Authentication 11 and 14:
//! redirect SCA, bank-offered consent as a checkbox list with existing consents pre-selected,
//! sandbox SCA by customerNumber).
//!
//! Plain forms, no JavaScript, inline CSS only; every interpolated value is HTML-escaped.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use uuid::Uuid;

use super::store::{Account, Agreement, Authorisation, Customer};

/// The name shown on every page.
pub const BANK_NAME: &str = "psd2-console Sandbox Bank";

/// Escapes text for element content and double-quoted attributes.
pub fn esc(s: &str) -> String {
    html_escape::encode_double_quoted_attribute(s).into_owned()
}

/// An HTML page with its status.
#[derive(Debug, Clone)]
pub struct Page {
    pub status: StatusCode,
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

/// The common frame: header with the bank name, optional step indicator, body.
pub fn layout(title: &str, step: Option<usize>, body: &str) -> String {
    let steps = match step {
        None => String::new(),
        Some(on) => {
            let items: String = ["1 Identify", "2 Context", "3 Consent"]
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    let class = if i + 1 == on { " class=\"on\"" } else { "" };
                    format!("<span{class}>{s}</span>")
                })
                .collect();
            format!("<div class=\"steps\">{items}</div>")
        }
    };
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
<title>{title} – {bank}</title><style>{CSS}</style></head><body>\
<header><div class=\"logo\">SB</div><h1>{bank}</h1><span class=\"badge\">SANDBOX</span></header>\
<main><div class=\"card\">{steps}{body}</div></main>\
<footer>{bank} · NextGenPSD2 XS2A 1.3 sandbox · fake customers, no real money</footer>\
</body></html>",
        title = esc(title),
        bank = esc(BANK_NAME),
    )
}

fn error_box(error: Option<&str>) -> String {
    error
        .map(|e| format!("<div class=\"error\">{}</div>", esc(e)))
        .unwrap_or_default()
}

fn tpp_box(auth: &Authorisation) -> String {
    format!(
        "<p class=\"tpp\"><b>{}</b> asks for access to your account information.</p>",
        esc(&auth.tpp_name)
    )
}

fn cancel_button(auth: &Authorisation) -> String {
    format!(
        "<button type=\"submit\" class=\"secondary\" formaction=\"/sca/{}/cancel\" \
formnovalidate name=\"action\" value=\"cancel\">Cancel</button>",
        auth.id
    )
}

/// A private customer offered as a login hint, with the names of corporate customers they
/// may act for.
pub struct Hint {
    pub customer: Customer,
    pub corporate_names: Vec<String>,
}

/// Step 1: the customerNumber form, with clickable hints.
pub fn login(auth: &Authorisation, hints: &[Hint], typed: &str, error: Option<&str>) -> String {
    let hint_buttons: String = hints
        .iter()
        .map(|h| {
            let extra = if h.corporate_names.is_empty() {
                "private accounts".to_string()
            } else {
                format!("private + corporate: {}", h.corporate_names.join(", "))
            };
            format!(
                "<button type=\"submit\" name=\"customerNumber\" value=\"{num}\">\
<span><span class=\"num\">{num}</span> &nbsp; {name}</span><small>{extra}</small></button>",
                num = esc(&h.customer.number),
                name = esc(&h.customer.name),
                extra = esc(&extra),
            )
        })
        .collect();
    let body = format!(
        "<h2>Log in</h2>{tpp}{error}\
<form id=\"login\" method=\"post\" action=\"/sca/{id}/login\">\
<label class=\"field\" for=\"customerNumber\">National identity number (customerNumber)</label>\
<input type=\"text\" id=\"customerNumber\" name=\"customerNumber\" value=\"{typed}\" \
inputmode=\"numeric\" autocomplete=\"off\" autofocus>\
<div class=\"buttons\"><button type=\"submit\">Log in</button>{cancel}</div></form>\
<h3>Sandbox customers</h3><p>In the sandbox any of these identifies you; click one to log in.</p>\
<form id=\"hints\" class=\"hints\" method=\"post\" action=\"/sca/{id}/login\">{hint_buttons}</form>",
        tpp = tpp_box(auth),
        error = error_box(error),
        id = auth.id,
        typed = esc(typed),
        cancel = cancel_button(auth),
    );
    layout("Log in", Some(1), &body)
}

/// Step 2: PRIVATE or CORPORATE (which agreement). `agreements` pairs an agreement with the
/// corporate customer's name.
pub fn context(
    auth: &Authorisation,
    customer: &Customer,
    agreements: &[(Agreement, String)],
    error: Option<&str>,
) -> String {
    let corporate: String = agreements
        .iter()
        .map(|(a, corp)| {
            format!(
                "<label class=\"choice\"><input type=\"radio\" name=\"context\" \
value=\"CORPORATE:{id}\"><span><b>{corp}</b><br><span class=\"meta\">Corporate · {name}</span></span></label>",
                id = a.id,
                corp = esc(corp),
                name = esc(&a.name),
            )
        })
        .collect();
    let body = format!(
        "<h2>Hello, {name}</h2>{tpp}{error}<p>Whose accounts should {tppname} see?</p>\
<form id=\"context\" method=\"post\" action=\"/sca/{id}/context\">\
<label class=\"choice\"><input type=\"radio\" name=\"context\" value=\"PRIVATE\" checked>\
<span><b>My own accounts</b><br><span class=\"meta\">Private</span></span></label>{corporate}\
<div class=\"buttons\"><button type=\"submit\">Continue</button>{cancel}</div></form>",
        name = esc(&customer.name),
        tpp = tpp_box(auth),
        tppname = esc(&auth.tpp_name),
        error = error_box(error),
        id = auth.id,
        cancel = cancel_button(auth),
    );
    layout("Choose context", Some(2), &body)
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
    let rows: String = accounts
        .iter()
        .map(|a| {
            format!(
                "<label class=\"acct\"><input type=\"checkbox\" name=\"account\" value=\"{id}\"{checked}>\
<span><b>{name}</b><br><span class=\"meta\"><span class=\"bban\">{bban}</span> · {product} · {cur}</span></span></label>",
                id = a.id,
                checked = if checked.contains(&a.id) { " checked" } else { "" },
                name = esc(&a.name),
                bban = esc(&format_bban(&a.bban)),
                product = esc(&a.product),
                cur = esc(&a.currency),
            )
        })
        .collect();
    let whose = match corporate {
        Some(c) => format!("accounts of <b>{}</b> (corporate)", esc(c)),
        None => "your own accounts (private)".to_string(),
    };
    let body = format!(
        "<h2>Give consent</h2>{tpp}{error}\
<p>{name}, choose which of {whose} {tppname} may read (balances and transactions). \
Accounts you consented to before are already ticked; untick to withdraw.</p>\
<form id=\"consent\" method=\"post\" action=\"/sca/{id}/consent\">{rows}\
<div class=\"buttons\"><button type=\"submit\" name=\"action\" value=\"approve\">Approve</button>{cancel}</div></form>",
        tpp = tpp_box(auth),
        error = error_box(error),
        name = esc(&customer.name),
        tppname = esc(&auth.tpp_name),
        id = auth.id,
        cancel = cancel_button(auth),
    );
    layout("Consent", Some(3), &body)
}

/// An error page (unknown, expired or used authorisation; unknown page).
pub fn error(status: StatusCode, title: &str, message: &str) -> Page {
    let body = format!(
        "<h2>{}</h2><div class=\"error\">{}</div>",
        esc(title),
        esc(message)
    );
    Page {
        status,
        html: layout(title, None, &body),
    }
}

/// A short page shown with the final redirect (browsers follow the Location header).
pub fn redirecting(location: &str) -> String {
    let body = format!(
        "<h2>Returning to the TPP</h2><p><a href=\"{href}\">Continue</a></p>",
        href = esc(location)
    );
    layout("Redirecting", None, &body)
}

/// The home page of the sandbox: what it is and where the interface is.
pub fn home(base_url: &str) -> String {
    let body = format!(
        "<h2>Sandbox ASPSP</h2>\
<p>This is the embedded sandbox of psd2-console: a NextGenPSD2 XS2A 1.3 bank with fake \
customers. The signed interface is under <code>{base}/v1</code>; SCA pages open from the \
<code>scaRedirect</code> links it returns.</p>",
        base = esc(base_url)
    );
    layout("Sandbox", None, &body)
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
