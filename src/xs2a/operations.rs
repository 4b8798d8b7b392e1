//! The operation catalogue: every operation the console can send, with its method, path
//! template, parameters and body template. The console, the `send` command and tests use it;
//! the sandbox routes the same paths.

use std::sync::LazyLock;

use crate::xs2a::headers as h;
use crate::xs2a::paths::PathTemplates;

/// Where a parameter goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamKind {
    /// Replaces `{name}` in the path.
    Path,
    /// Appended to the query string.
    Query,
    /// Sent as the HTTP request header `name` ([`crate::client::prepare`]); a typed value
    /// replaces what the engine would send.
    Header,
}

/// One parameter of an operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Param {
    /// The name: `{name}` of the path, the query key or the header name.
    pub name: &'static str,
    /// Where it goes.
    pub kind: ParamKind,
    /// Whether the operation needs a value.
    pub required: bool,
    /// Value used when the user gives none (`""`: omitted unless required).
    pub default: &'static str,
    /// One line for the form and `send --list`.
    pub help: &'static str,
    /// The engine fills it when left empty (signing headers, session and profile values;
    /// shown as `auto` in the console); a typed value overrides it.
    pub auto: bool,
    /// The value must be a UUID (RFC 4122), e.g. `X-Request-ID`, `PSU-ID`.
    pub uuid: bool,
}

/// Operation groups, in catalogue order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Group {
    /// Account information (accounts, card accounts, consents).
    Ais,
    /// Payment initiation.
    Pis,
    /// Signing baskets.
    Baskets,
    /// PSU registration and agreements (interface document).
    Psu,
    /// The embedded sandbox's management endpoints.
    Sandbox,
}

impl Group {
    /// The label shown in the catalogue: `AIS`, `PIS`, `Baskets`, `PSU`, `Sandbox`.
    pub fn label(self) -> &'static str {
        match self {
            Group::Ais => "AIS",
            Group::Pis => "PIS",
            Group::Baskets => "Baskets",
            Group::Psu => "PSU",
            Group::Sandbox => "Sandbox",
        }
    }
}

/// One operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Operation {
    /// Stable id used by `send ID` and in history, e.g. `accounts.list`.
    pub id: &'static str,
    /// Title shown in the catalogue, e.g. `List accounts`.
    pub title: &'static str,
    /// Its group.
    pub group: Group,
    /// HTTP method in upper case.
    pub method: &'static str,
    /// Path template relative to the base URL, e.g. `/v1/accounts/{account-id}/balances`.
    pub path: &'static str,
    /// Path and query parameters ([`Operation::header_params`] gives the headers).
    pub params: &'static [Param],
    /// JSON body template (compacted before sending), if the operation takes a body.
    pub body: Option<&'static str>,
    /// Whether the PSU-ID (and PSU-Corporate-ID) learned from SCA are sent.
    pub psu_headers: bool,
    /// Where in the interface document the operation is described.
    pub source: &'static str,
    /// Deprecated by the interface document (shown as such).
    pub deprecated: bool,
}

const ACCOUNT_ID: Param = Param {
    name: "account-id",
    kind: ParamKind::Path,
    required: true,
    default: "",
    help: "resourceId of an account from List accounts",
    auto: false,
    uuid: false,
};

const CARD_ACCOUNT_ID: Param = Param {
    name: "card-account-id",
    kind: ParamKind::Path,
    required: true,
    default: "",
    help: "resourceId of a card account from List card accounts",
    auto: false,
    uuid: false,
};

const PAYMENT_SERVICE: Param = Param {
    name: "payment-service",
    kind: ParamKind::Path,
    required: true,
    default: "payments",
    help: "payments, bulk-payments or periodic-payments",
    auto: false,
    uuid: false,
};

const PAYMENT_PRODUCT: Param = Param {
    name: "payment-product",
    kind: ParamKind::Path,
    required: true,
    default: "norwegian-domestic-credit-transfers",
    help: "e.g. norwegian-domestic-credit-transfers, instant-norwegian-credit-transfers-straks",
    auto: false,
    uuid: false,
};

const PAYMENT_ID: Param = Param {
    name: "payment-id",
    kind: ParamKind::Path,
    required: true,
    default: "",
    help: "paymentId from the initiation answer",
    auto: false,
    uuid: false,
};

const BASKET_ID: Param = Param {
    name: "basket-id",
    kind: ParamKind::Path,
    required: true,
    default: "",
    help: "basketId from the basket creation answer",
    auto: false,
    uuid: false,
};

const CUSTOMER_ID: Param = Param {
    name: "customer-id",
    kind: ParamKind::Path,
    required: true,
    default: "",
    help: "customerId from Sandbox customers",
    auto: false,
    uuid: false,
};

const ALLOW_LOGICAL_DUPLICATE: Param = Param {
    name: "allowLogicalDuplicate",
    kind: ParamKind::Query,
    required: false,
    default: "",
    help: "true to allow a logical duplicate",
    auto: false,
    uuid: false,
};

const fn path_param(name: &'static str, help: &'static str) -> Param {
    Param {
        name,
        kind: ParamKind::Path,
        required: true,
        default: "",
        help,
        auto: false,
        uuid: false,
    }
}

const fn query_param(name: &'static str, default: &'static str, help: &'static str) -> Param {
    Param {
        name,
        kind: ParamKind::Query,
        required: false,
        default,
        help,
        auto: false,
        uuid: false,
    }
}

const fn header(
    name: &'static str,
    required: bool,
    auto: bool,
    uuid: bool,
    help: &'static str,
) -> Param {
    Param {
        name,
        kind: ParamKind::Header,
        required,
        default: "",
        help,
        auto,
        uuid,
    }
}

// Request headers (interface document: the header table of "Create payments signing
// basket", the headers of "GET /v1/sandbox/customers", Authentication rules 2-17, "Other
// operations named" for X-PSU-IDENTITY and X-Accept-Fix; Berlin Group 1.3.11 where silent).

const H_X_REQUEST_ID: Param = header(
    h::X_REQUEST_ID,
    true,
    true,
    true,
    "UUID, unique per call: new on every send unless you type one",
);
const H_DATE: Param = header(
    h::DATE,
    true,
    true,
    false,
    "RFC 7231 date, signing time (60 s tolerance); a typed value is signed as given",
);
const H_DIGEST: Param = header(
    h::DIGEST,
    false,
    true,
    false,
    "SHA-256=<base64> of the body; a typed value replaces it after signing",
);
const H_TPP_SIGNATURE_CERTIFICATE: Param = header(
    h::TPP_SIGNATURE_CERTIFICATE,
    true,
    true,
    false,
    "signing certificate, base64 (from the profile); a typed value replaces it",
);
const H_SIGNATURE: Param = header(
    h::SIGNATURE,
    true,
    true,
    false,
    "keyId, algorithm, headers, signature (Authentication 5); a typed value replaces it",
);
const H_TPP_REDIRECT_URI: Param = header(
    h::TPP_REDIRECT_URI,
    true,
    true,
    false,
    "where the PSU returns after SCA (the console's callback listener)",
);
const H_TPP_REDIRECT_PREFERRED: Param = header(
    h::TPP_REDIRECT_PREFERRED,
    false,
    true,
    false,
    "false asks for biometric authentication in the bank's app (profile)",
);
const H_TPP_SESSION_ID: Param = header(
    h::TPP_SESSION_ID,
    false,
    true,
    true,
    "the SCA session (1 hour); from the session state",
);
const H_PSU_ID: Param = header(
    h::PSU_ID,
    false,
    true,
    true,
    "UUID learned from SCA (redirect psu-id); sent on all requests after registration",
);
const H_PSU_CORPORATE_ID: Param = header(
    h::PSU_CORPORATE_ID,
    false,
    true,
    true,
    "UUID of the corporate context (redirect psu-corporate-id)",
);
const H_PSU_IP_ADDRESS: Param = header(
    h::PSU_IP_ADDRESS,
    false,
    true,
    false,
    "when the PSU is present (Authentication 16); from the profile",
);
const H_X_ACCEPT_FIX: Param = header(
    h::X_ACCEPT_FIX,
    false,
    true,
    false,
    "opt-in fixes, comma-separated, e.g. amount-as-string (profile)",
);
const H_X_PSU_IDENTITY: Param = header(
    h::X_PSU_IDENTITY,
    false,
    false,
    false,
    "national identification number: single-SCA flow for a private PSU without PSU-ID",
);
const H_ACCEPT: Param = header(h::ACCEPT, false, true, false, "content negotiation");
const H_ACCEPT_LANGUAGE: Param = header("Accept-Language", false, false, false, "e.g. nb, en");
const H_PSU_USER_AGENT: Param = header("PSU-User-Agent", false, false, false, "the PSU's browser");
const H_PSU_DEVICE_ID: Param = header(
    "PSU-Device-ID",
    false,
    false,
    true,
    "UUID of the PSU's device",
);
const H_PSU_GEO_LOCATION: Param = header(
    "PSU-Geo-Location",
    false,
    false,
    false,
    "GEO:<latitude>,<longitude>",
);

/// Headers of the XS2A operations (AIS, PIS, PSU): the basket header table with the
/// requirements that hold before registration (PSU-ID only after SCA).
const XS2A_HEADERS: [Param; 17] = [
    H_X_REQUEST_ID,
    H_TPP_SESSION_ID,
    H_PSU_ID,
    H_PSU_CORPORATE_ID,
    H_PSU_IP_ADDRESS,
    H_TPP_REDIRECT_URI,
    H_TPP_REDIRECT_PREFERRED,
    H_X_ACCEPT_FIX,
    H_ACCEPT,
    H_ACCEPT_LANGUAGE,
    H_PSU_USER_AGENT,
    H_PSU_DEVICE_ID,
    H_PSU_GEO_LOCATION,
    H_DATE,
    H_DIGEST,
    H_TPP_SIGNATURE_CERTIFICATE,
    H_SIGNATURE,
];

/// Headers of payment initiation: [`XS2A_HEADERS`] with `X-PSU-IDENTITY` after
/// `X-Request-ID`.
const PAYMENT_CREATE_HEADERS: [Param; 18] = inserted(XS2A_HEADERS, 1, H_X_PSU_IDENTITY);

/// The header table of "Create payments signing basket", as the document gives it: the
/// headers of [`XS2A_HEADERS`], with `TPP-Session-ID`, `PSU-ID`, `PSU-IP-Address` and
/// `X-Accept-Fix` required.
const BASKET_CREATE_HEADERS: [Param; 17] = requiring(
    XS2A_HEADERS,
    &[
        h::TPP_SESSION_ID,
        h::PSU_ID,
        h::PSU_IP_ADDRESS,
        h::X_ACCEPT_FIX,
    ],
);

/// `base` with `extra` inserted at index `at` (`M` is `N + 1`, checked at compile time).
const fn inserted<const N: usize, const M: usize>(
    base: [Param; N],
    at: usize,
    extra: Param,
) -> [Param; M] {
    assert!(M == N + 1 && at <= N);
    let mut out = [extra; M];
    let mut i = 0;
    while i < N {
        out[if i < at { i } else { i + 1 }] = base[i];
        i += 1;
    }
    out
}

/// `base` with the headers named in `names` (ASCII case-insensitive) required.
const fn requiring<const N: usize>(base: [Param; N], names: &[&str]) -> [Param; N] {
    let mut out = base;
    let mut i = 0;
    while i < N {
        let mut j = 0;
        while j < names.len() {
            if out[i].name.eq_ignore_ascii_case(names[j]) {
                out[i].required = true;
            }
            j += 1;
        }
        i += 1;
    }
    out
}

/// Headers of the sandbox operations ("GET /v1/sandbox/customers": X-Request-ID,
/// TPP-Signature-Certificate, Signature required; every request carries TPP-Redirect-URI).
const SANDBOX_HEADERS: &[Param] = &[
    H_X_REQUEST_ID,
    H_TPP_REDIRECT_URI,
    H_ACCEPT,
    H_ACCEPT_LANGUAGE,
    H_DATE,
    H_DIGEST,
    H_TPP_SIGNATURE_CERTIFICATE,
    H_SIGNATURE,
];

const TRANSACTION_QUERY: [Param; 5] = [
    query_param("bookingStatus", "both", "both, booked, pending or all"),
    query_param("dateFrom", "", "YYYY-MM-DD"),
    query_param("dateTo", "", "YYYY-MM-DD"),
    query_param("limit", "", "page size (default 200)"),
    query_param("offset", "", "index of the first booked transaction"),
];

#[allow(clippy::too_many_arguments)] // a table row, read positionally
const fn op(
    id: &'static str,
    title: &'static str,
    group: Group,
    method: &'static str,
    path: &'static str,
    params: &'static [Param],
    body: Option<&'static str>,
    source: &'static str,
) -> Operation {
    Operation {
        id,
        title,
        group,
        method,
        path,
        params,
        body,
        psu_headers: true,
        source,
        deprecated: false,
    }
}

/// The example request body `src/xs2a/examples/<name>.json`, as its file holds it (no
/// trailing line break). The bodies are data: one JSON file each, read at compile time.
macro_rules! example {
    ($name:literal) => {
        include_str!(concat!("examples/", $name, ".json"))
    };
}

// Body templates. The debtor is Kari Nordmann's current account of the embedded sandbox's
// seed (`15031279191`, customerNumber 31125461118), so every template is accepted there as
// is; against another bank, replace it with one of your PSU's accounts. `{{date+N}}` is
// replaced by the date N days after today when a template is rendered ([`Template::render`]).

/// Body of a domestic credit transfer (interface document, "Payment initiation body").
pub const DOMESTIC_PAYMENT_BODY: &str = example!("domestic_payment");

/// A body template offered by the request editor for an operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Template {
    /// Short name shown in the editor, e.g. `SEPA`.
    pub name: &'static str,
    /// JSON text, possibly with `{{date+N}}` placeholders ([`Template::render`]).
    pub body: &'static str,
}

const fn t(name: &'static str, body: &'static str) -> Template {
    Template { name, body }
}

impl Template {
    /// The body with every `{{date+N}}` replaced by the ISO 8601 date `N` days after `today`.
    pub fn render(&self, today: chrono::NaiveDate) -> String {
        render_dates(self.body, today)
    }
}

/// Replaces `{{date+N}}` placeholders in `text` by `today + N days` (`YYYY-MM-DD`); other text
/// is kept as is.
pub(crate) fn render_dates(text: &str, today: chrono::NaiveDate) -> String {
    replace_placeholders(text, "{{date+", "}}", |days| {
        if days.is_empty() || !days.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let days: i64 = days.parse().unwrap_or(0);
        Some(
            (today + chrono::Duration::days(days))
                .format("%Y-%m-%d")
                .to_string(),
        )
    })
}

/// Replaces every `<open>NAME<close>` of `text` for which `value(NAME)` gives a value, in one
/// pass: a value is never searched again, so a value holding a placeholder stays text. An
/// `open` whose name has no value stays as it is (the search goes on after it). Used by
/// [`render_dates`] and the code export's templates (`@@NAME@@`).
pub(crate) fn replace_placeholders(
    text: &str,
    open: &str,
    close: &str,
    value: impl Fn(&str) -> Option<String>,
) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find(open) {
        out.push_str(&rest[..start]);
        let after = &rest[start + open.len()..];
        let found = after
            .find(close)
            .and_then(|end| value(&after[..end]).map(|v| (v, end)));
        match found {
            Some((v, end)) => {
                out.push_str(&v);
                rest = &after[end + close.len()..];
            }
            None => {
                out.push_str(open);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

// The templates of each operation that takes a body, the default (its `body`) first.
const SINGLE_DOMESTIC_TEMPLATES: &[Template] = &[
    t("Domestic", DOMESTIC_PAYMENT_BODY),
    // `requestedExecutionDate`, an ISO 8601 date.
    t(
        "Domestic, future-dated",
        example!("domestic_future_payment"),
    ),
    INSTANT_TEMPLATES[0],
];
const INSTANT_TEMPLATES: &[Template] = &[
    // NOK, settles at approval.
    t("Instant (Straks)", example!("instant_payment")),
    t("Domestic", DOMESTIC_PAYMENT_BODY),
];
const SEPA_TEMPLATES: &[Template] = &[
    // The structured creditor address and creditor agent BIC required from 2026-08-13 in
    // the sandbox (interface document, Versioning).
    t("SEPA", example!("sepa_payment")),
    // The Norwegian regulatory reporting option (interface document, "SEPA payments accept
    // a Norwegian regulatory reporting option").
    t(
        "SEPA, regulatory reporting",
        example!("sepa_reporting_payment"),
    ),
];
/// An urgent NCBCT transfer: `serviceLevel` `URGP`, allowed on non-SEPA cross-border payments
/// only (interface document, Versioning 2.14.0).
const CROSS_BORDER_URGENT: &str = example!("cross_border_urgent_payment");
const NCBCT_TEMPLATES: &[Template] = &[
    // Norwegian cross-border (NCBCT, non-SEPA over SWIFT).
    t("Cross-border (NCBCT)", example!("cross_border_payment")),
    t("Cross-border (NCBCT), urgent", CROSS_BORDER_URGENT),
];
const SWIFT_TEMPLATES: &[Template] = &[
    // Berlin Group product `cross-border-credit-transfers`.
    t("SWIFT", example!("swift_payment")),
    t("SWIFT, urgent", CROSS_BORDER_URGENT),
];
// One debtor account, `payments[]` entries.
const BULK_TEMPLATES: &[Template] = &[t("Bulk", example!("bulk_payment"))];
const PERIODIC_TEMPLATES: &[Template] = &[
    // Frequency `MonthlyVariable` (interface document, "Other payment facts"): distinct
    // months, as strings.
    t("Periodic, MonthlyVariable", example!("periodic_payment")),
    // Monthly, with an end date and execution day.
    t("Periodic, Monthly", example!("periodic_monthly_payment")),
];
// Ids of single payments created before (at most 100, no bulk or periodic payments).
const BASKET_TEMPLATES: &[Template] = &[t("Signing basket", example!("basket"))];
const CONSENT_TEMPLATES: &[Template] = &[
    // The document says the body is ignored; this is the Berlin Group `consents` shape.
    t("Consent", example!("consent")),
    t("Empty", "{}"),
];

/// The catalogue: every operation of the interface document, grouped AIS / PIS / Baskets /
/// PSU / Sandbox.
pub const OPERATIONS: &[Operation] = &[
    Operation {
        id: "accounts.list",
        title: "List accounts",
        group: Group::Ais,
        method: "GET",
        path: "/v1/accounts",
        params: &[],
        body: None,
        psu_headers: true,
        source: "Endpoints, Other operations named: GET /v1/accounts",
        deprecated: false,
    },
    op(
        "accounts.get",
        "Account details",
        Group::Ais,
        "GET",
        "/v1/accounts/{account-id}",
        &[ACCOUNT_ID],
        None,
        "Account data facts",
    ),
    Operation {
        id: "accounts.balances",
        title: "Account balances",
        group: Group::Ais,
        method: "GET",
        path: "/v1/accounts/{account-id}/balances",
        params: &[ACCOUNT_ID],
        body: None,
        psu_headers: true,
        source: "Endpoints, Other operations named: GET /v1/accounts/{id}/balances",
        deprecated: false,
    },
    Operation {
        id: "accounts.transactions",
        title: "Account transactions",
        group: Group::Ais,
        method: "GET",
        path: "/v1/accounts/{account-id}/transactions",
        params: &[
            ACCOUNT_ID,
            TRANSACTION_QUERY[0],
            TRANSACTION_QUERY[1],
            TRANSACTION_QUERY[2],
            TRANSACTION_QUERY[3],
            TRANSACTION_QUERY[4],
        ],
        body: None,
        psu_headers: true,
        source: "Endpoints, Other operations named: GET /v1/accounts/{id}/transactions; Limits",
        deprecated: false,
    },
    op(
        "accounts.transaction-details",
        "Transaction details",
        Group::Ais,
        "GET",
        "/v1/accounts/{account-id}/transactions/{transaction-id}",
        &[
            ACCOUNT_ID,
            path_param("transaction-id", "transactionId of a booked transaction"),
        ],
        None,
        "Endpoints: transaction details endpoint; Versioning 2.11.0",
    ),
    op(
        "card-accounts.list",
        "List card accounts",
        Group::Ais,
        "GET",
        "/v1/card-accounts",
        &[],
        None,
        "Account data facts: card accounts",
    ),
    op(
        "card-accounts.get",
        "Card account details",
        Group::Ais,
        "GET",
        "/v1/card-accounts/{card-account-id}",
        &[CARD_ACCOUNT_ID],
        None,
        "Account data facts: card account status",
    ),
    op(
        "card-accounts.balances",
        "Card account balances",
        Group::Ais,
        "GET",
        "/v1/card-accounts/{card-account-id}/balances",
        &[CARD_ACCOUNT_ID],
        None,
        "Versioning 2.16.0: interimBooked",
    ),
    op(
        "card-accounts.transactions",
        "Card account transactions",
        Group::Ais,
        "GET",
        "/v1/card-accounts/{card-account-id}/transactions",
        &[
            CARD_ACCOUNT_ID,
            TRANSACTION_QUERY[0],
            TRANSACTION_QUERY[1],
            TRANSACTION_QUERY[2],
        ],
        None,
        "Account data facts: card transactions",
    ),
    op(
        "consents.bank-offered",
        "Bank-offered consent",
        Group::Ais,
        "POST",
        "/v1/bank-offered-consents",
        &[],
        None,
        "Authentication 11; Endpoints: /v1/bank-offered-consents",
    ),
    Operation {
        deprecated: true,
        ..op(
            "consents.create",
            "Consent (deprecated)",
            Group::Ais,
            "POST",
            "/v1/consents",
            &[],
            Some(CONSENT_TEMPLATES[0].body),
            "Endpoints: POST /v1/consents (deprecated)",
        )
    },
    op(
        "payments.domestic.create",
        "Domestic payment",
        Group::Pis,
        "POST",
        "/v1/payments/norwegian-domestic-credit-transfers",
        &[ALLOW_LOGICAL_DUPLICATE],
        Some(DOMESTIC_PAYMENT_BODY),
        "Resources: Payment initiation body",
    ),
    op(
        "payments.instant.create",
        "Instant payment (straks)",
        Group::Pis,
        "POST",
        "/v1/payments/instant-norwegian-credit-transfers-straks",
        &[ALLOW_LOGICAL_DUPLICATE],
        Some(INSTANT_TEMPLATES[0].body),
        "Other payment facts: instant payments",
    ),
    op(
        "payments.domestic-norway.create",
        "Domestic Norway payment",
        Group::Pis,
        "POST",
        "/v1/payments/domestic-norway-credit-transfers",
        &[ALLOW_LOGICAL_DUPLICATE],
        Some(DOMESTIC_PAYMENT_BODY),
        "Other payment facts: products",
    ),
    op(
        "payments.sepa.create",
        "SEPA payment",
        Group::Pis,
        "POST",
        "/v1/payments/sepa-credit-transfers",
        &[ALLOW_LOGICAL_DUPLICATE],
        Some(SEPA_TEMPLATES[0].body),
        "Other payment facts: SEPA; Versioning: structured addresses",
    ),
    op(
        "payments.cross-border.create",
        "Cross-border payment (NCBCT)",
        Group::Pis,
        "POST",
        "/v1/payments/norwegian-cross-border-credit-transfers",
        &[ALLOW_LOGICAL_DUPLICATE],
        Some(NCBCT_TEMPLATES[0].body),
        "Other payment facts: NCBCT, SWIFT",
    ),
    op(
        "payments.swift.create",
        "SWIFT payment",
        Group::Pis,
        "POST",
        "/v1/payments/cross-border-credit-transfers",
        &[ALLOW_LOGICAL_DUPLICATE],
        Some(SWIFT_TEMPLATES[0].body),
        "Other payment facts: SWIFT; Versioning: structured addresses",
    ),
    op(
        "payments.bulk.create",
        "Bulk payment",
        Group::Pis,
        "POST",
        "/v1/bulk-payments/norwegian-domestic-credit-transfers",
        &[],
        Some(BULK_TEMPLATES[0].body),
        "Other payment facts: bulk",
    ),
    op(
        "payments.periodic.create",
        "Periodic payment",
        Group::Pis,
        "POST",
        "/v1/periodic-payments/norwegian-domestic-credit-transfers",
        &[],
        Some(PERIODIC_TEMPLATES[0].body),
        "Other payment facts: periodic, MonthlyVariable",
    ),
    op(
        "payments.get",
        "Payment details",
        Group::Pis,
        "GET",
        "/v1/{payment-service}/{payment-product}/{payment-id}",
        &[PAYMENT_SERVICE, PAYMENT_PRODUCT, PAYMENT_ID],
        None,
        "Endpoints: GET payment",
    ),
    op(
        "payments.status",
        "Payment status",
        Group::Pis,
        "GET",
        "/v1/{payment-service}/{payment-product}/{payment-id}/status",
        &[PAYMENT_SERVICE, PAYMENT_PRODUCT, PAYMENT_ID],
        None,
        "Endpoints: payment status; fundsAvailable",
    ),
    op(
        "payments.delete",
        "Delete payment",
        Group::Pis,
        "DELETE",
        "/v1/{payment-service}/{payment-product}/{payment-id}",
        &[PAYMENT_SERVICE, PAYMENT_PRODUCT, PAYMENT_ID],
        None,
        "Endpoints: DELETE payment",
    ),
    op(
        "payments.start-authorisation",
        "Start payment authorisation",
        Group::Pis,
        "POST",
        "/v1/{payment-service}/{payment-product}/{payment-id}/authorisations",
        &[PAYMENT_SERVICE, PAYMENT_PRODUCT, PAYMENT_ID],
        None,
        "Endpoints: startAuthorisation link",
    ),
    op(
        "payments.fee-information",
        "Instant payment fee information",
        Group::Pis,
        "GET",
        "/v1/payments/instant-norwegian-credit-transfers-straks/fee-information",
        &[],
        None,
        "Endpoints: fee-information",
    ),
    op(
        "baskets.create",
        "Create signing basket",
        Group::Baskets,
        "POST",
        "/v1/signing-baskets",
        &[],
        Some(BASKET_TEMPLATES[0].body),
        "Resources: Signing basket creation request",
    ),
    op(
        "baskets.get",
        "Signing basket",
        Group::Baskets,
        "GET",
        "/v1/signing-baskets/{basket-id}",
        &[BASKET_ID],
        None,
        "Resources: signing basket",
    ),
    op(
        "baskets.status",
        "Signing basket status",
        Group::Baskets,
        "GET",
        "/v1/signing-baskets/{basket-id}/status",
        &[BASKET_ID],
        None,
        "States: basket transactionStatus",
    ),
    op(
        "baskets.start-authorisation",
        "Start basket authorisation",
        Group::Baskets,
        "POST",
        "/v1/signing-baskets/{basket-id}/authorisations",
        &[BASKET_ID],
        None,
        "Signing basket SCA",
    ),
    op(
        "baskets.delete",
        "Delete signing basket",
        Group::Baskets,
        "DELETE",
        "/v1/signing-baskets/{basket-id}",
        &[BASKET_ID],
        None,
        "Signing baskets",
    ),
    op(
        "psu.users",
        "Register PSU (PISP)",
        Group::Psu,
        "GET",
        "/v1/users",
        &[],
        None,
        "Authentication 15: GET /v1/users",
    ),
    op(
        "psu.agreements",
        "Corporate agreements",
        Group::Psu,
        "GET",
        "/v1/agreements",
        &[],
        None,
        "Authentication 12: /v1/agreements",
    ),
    Operation {
        id: "sandbox.customers.list",
        title: "Sandbox customers",
        group: Group::Sandbox,
        method: "GET",
        path: "/v1/sandbox/customers",
        params: &[
            Param {
                name: "withAccounts",
                kind: ParamKind::Query,
                required: false,
                default: "true",
                help: "include mock accounts",
                auto: false,
                uuid: false,
            },
            Param {
                name: "withAgreements",
                kind: ParamKind::Query,
                required: false,
                default: "true",
                help: "include agreements",
                auto: false,
                uuid: false,
            },
        ],
        body: None,
        psu_headers: false,
        source: "Endpoints: GET /v1/sandbox/customers",
        deprecated: false,
    },
    Operation {
        psu_headers: false,
        ..op(
            "sandbox.customers.get",
            "Sandbox customer",
            Group::Sandbox,
            "GET",
            "/v1/sandbox/customers/{customer-id}",
            &[CUSTOMER_ID],
            None,
            "Sandbox customer",
        )
    },
    Operation {
        psu_headers: false,
        ..op(
            "sandbox.customers.create",
            "Create sandbox customer",
            Group::Sandbox,
            "POST",
            "/v1/sandbox/customers",
            &[],
            Some(example!("sandbox_customer")),
            "Endpoints: POST /v1/sandbox/customers",
        )
    },
    Operation {
        psu_headers: false,
        ..op(
            "sandbox.customers.delete",
            "Delete sandbox customer",
            Group::Sandbox,
            "DELETE",
            "/v1/sandbox/customers/{customer-id}",
            &[CUSTOMER_ID],
            None,
            "Sandbox management",
        )
    },
    Operation {
        psu_headers: false,
        ..op(
            "sandbox.accounts.create",
            "Create sandbox account",
            Group::Sandbox,
            "POST",
            "/v1/sandbox/accounts",
            &[],
            Some(example!("sandbox_account")),
            "Sandbox management",
        )
    },
    Operation {
        psu_headers: false,
        ..op(
            "sandbox.transactions.create",
            "Create sandbox transaction",
            Group::Sandbox,
            "POST",
            "/v1/sandbox/accounts/{account-id}/transactions",
            &[ACCOUNT_ID],
            Some(example!("sandbox_transaction")),
            "Endpoints: POST /v1/sandbox/accounts/{mockAccountId}/transactions",
        )
    },
    Operation {
        psu_headers: false,
        ..op(
            "sandbox.balances.update",
            "Update sandbox balances",
            Group::Sandbox,
            "PUT",
            "/v1/sandbox/accounts/{account-id}/balances",
            &[ACCOUNT_ID],
            Some(example!("sandbox_balances")),
            "Sandbox balance-update operations",
        )
    },
    Operation {
        psu_headers: false,
        ..op(
            "sandbox.consents.revoke",
            "Revoke consents (as the PSU)",
            Group::Sandbox,
            "DELETE",
            "/v1/sandbox/consents/{psu-id}",
            &[path_param(
                "psu-id",
                "the PSU-ID whose consents the PSU revokes",
            )],
            None,
            "Authentication 11: revocation at the ASPSP",
        )
    },
    Operation {
        psu_headers: false,
        ..op(
            "sandbox.batch.run",
            "Run batch now",
            Group::Sandbox,
            "POST",
            "/v1/sandbox/batch",
            &[],
            None,
            "Sandbox: batch payment processing",
        )
    },
    Operation {
        psu_headers: false,
        ..op(
            "sandbox.clock.get",
            "Sandbox clock",
            Group::Sandbox,
            "GET",
            "/v1/sandbox/clock",
            &[],
            None,
            "Sandbox clock",
        )
    },
    Operation {
        psu_headers: false,
        ..op(
            "sandbox.clock.advance",
            "Advance sandbox clock",
            Group::Sandbox,
            "POST",
            "/v1/sandbox/clock",
            &[],
            Some(example!("sandbox_clock_advance")),
            "Sandbox clock",
        )
    },
    Operation {
        psu_headers: false,
        ..op(
            "sandbox.initialize",
            "Initialize sandbox",
            Group::Sandbox,
            "POST",
            "/v1/sandbox/initialize",
            &[],
            None,
            "Endpoints: sandbox initialization",
        )
    },
];

/// Finds an operation by id.
pub fn find(id: &str) -> Option<&'static Operation> {
    OPERATIONS.iter().find(|o| o.id == id)
}

/// The operation a request is for, from its method and path (the query, if any, is
/// ignored), with the values of the path template's `{name}` segments (percent-decoded) as
/// (name, value). Templates are matched by [`super::paths`]: literal segments win
/// (`/v1/payments/norwegian-domestic-credit-transfers` over
/// `/v1/{payment-service}/{payment-product}/...`) and `{payment-service}` takes only the
/// Berlin Group payment services; `None` when no operation fits.
pub fn find_request(
    method: &str,
    path: &str,
) -> Option<(&'static Operation, Vec<(String, String)>)> {
    static TEMPLATES: LazyLock<PathTemplates<&'static Operation>> = LazyLock::new(|| {
        let mut t = PathTemplates::new();
        for op in OPERATIONS {
            // The catalogue's templates are valid routes (a test inserts each).
            let _ = t.insert(op.method, op.path, op);
        }
        t
    });
    TEMPLATES.at(method, path).map(|f| (*f.value, f.params))
}

impl Operation {
    /// The request headers of the operation as form fields ([`ParamKind::Header`]): the
    /// basket header table for `baskets.create`, the sandbox customer listing's headers for
    /// the sandbox operations, and the basket table with the requirements that hold before
    /// registration for the other XS2A operations (plus `X-PSU-IDENTITY` on payment
    /// initiation).
    pub(crate) fn header_params(&self) -> &'static [Param] {
        if self.group == Group::Sandbox {
            SANDBOX_HEADERS
        } else if self.id == "baskets.create" {
            &BASKET_CREATE_HEADERS
        } else if self.group == Group::Pis && self.method == "POST" && self.body.is_some() {
            &PAYMENT_CREATE_HEADERS
        } else {
            &XS2A_HEADERS
        }
    }

    /// Every parameter: path and query ([`Operation::params`]), then the headers
    /// ([`Operation::header_params`]).
    pub(crate) fn all_params(&self) -> impl Iterator<Item = &'static Param> + use<> {
        self.params.iter().chain(self.header_params())
    }

    /// The parameter named `name` (path, query or header; header names case-insensitive).
    pub fn param(&self, name: &str) -> Option<&'static Param> {
        self.all_params().find(|p| match p.kind {
            ParamKind::Header => p.name.eq_ignore_ascii_case(name),
            _ => p.name == name,
        })
    }

    /// The body templates the request editor offers, the default first (empty without a
    /// body).
    pub fn templates(&self) -> Vec<Template> {
        let list: &[Template] = match self.id {
            "payments.domestic.create" | "payments.domestic-norway.create" => {
                SINGLE_DOMESTIC_TEMPLATES
            }
            "payments.instant.create" => INSTANT_TEMPLATES,
            "payments.sepa.create" => SEPA_TEMPLATES,
            "payments.cross-border.create" => NCBCT_TEMPLATES,
            "payments.swift.create" => SWIFT_TEMPLATES,
            "payments.bulk.create" => BULK_TEMPLATES,
            "payments.periodic.create" => PERIODIC_TEMPLATES,
            "baskets.create" => BASKET_TEMPLATES,
            "consents.create" => CONSENT_TEMPLATES,
            _ => {
                return self.body.map(|b| vec![t("Default", b)]).unwrap_or_default();
            }
        };
        list.to_vec()
    }

    /// The body sent when none is given: the default template with its `{{date+N}}`
    /// placeholders rendered for `today` (UTC).
    pub(crate) fn default_body(&self) -> Option<String> {
        let today = chrono::Utc::now().date_naive();
        self.body.map(|b| render_dates(b, today))
    }

    /// Fills the path template and query from `values` (name → value), using defaults;
    /// header parameters are accepted and left to [`crate::client::prepare`].
    ///
    /// Errors: [`ParamsError`]: an unknown name, or the names of required path or query
    /// parameters that have no value.
    pub fn path_and_query(&self, values: &[(String, String)]) -> Result<String, ParamsError> {
        for (k, _) in values {
            if self.param(k).is_none() {
                let known: Vec<&str> = self.all_params().map(|p| p.name).collect();
                return Err(ParamsError::Unknown {
                    operation: self.id,
                    name: k.clone(),
                    known: if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    },
                });
            }
        }
        let get = |name: &str| {
            values
                .iter()
                .rev()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.as_str())
        };
        let mut path = self.path.to_string();
        let mut query = url::form_urlencoded::Serializer::new(String::new());
        let mut has_query = false;
        let mut missing = Vec::new();
        for p in self.params {
            let v = get(p.name).unwrap_or(p.default);
            if v.is_empty() {
                if p.required {
                    missing.push(p.name);
                }
                continue;
            }
            match p.kind {
                ParamKind::Path => {
                    // byte_serialize writes a literal '+' as %2B, so any '+' left is a space.
                    let enc: String = url::form_urlencoded::byte_serialize(v.as_bytes())
                        .collect::<String>()
                        .replace('+', "%20");
                    path = path.replace(&format!("{{{}}}", p.name), &enc);
                }
                ParamKind::Query => {
                    query.append_pair(p.name, v);
                    has_query = true;
                }
                ParamKind::Header => {}
            }
        }
        if !missing.is_empty() {
            return Err(ParamsError::Missing {
                operation: self.id,
                missing,
            });
        }
        if has_query {
            path.push('?');
            path.push_str(&query.finish());
        }
        Ok(path)
    }
}

/// Why an operation's path and query could not be filled ([`Operation::path_and_query`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParamsError {
    /// A value for a name the operation does not have.
    #[error("{operation} has no parameter {name:?} (known: {known})")]
    Unknown {
        /// The operation id.
        operation: &'static str,
        /// The name given.
        name: String,
        /// The operation's parameter names, comma-separated (`none` when it has none).
        known: String,
    },
    /// Required path or query parameters without a value (and without a default).
    #[error(
        "{operation} needs {}",
        missing.iter().map(|m| format!("--param {m}=...")).collect::<Vec<_>>().join(" ")
    )]
    Missing {
        /// The operation id.
        operation: &'static str,
        /// The parameter names, in template order.
        missing: Vec<&'static str>,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_paths_and_queries() {
        let op = find("accounts.transactions").unwrap();
        let p = op
            .path_and_query(&[
                ("account-id".into(), "a b".into()),
                ("limit".into(), "5".into()),
            ])
            .unwrap();
        assert_eq!(
            p,
            "/v1/accounts/a%20b/transactions?bookingStatus=both&limit=5"
        );
        assert!(
            op.path_and_query(&[])
                .unwrap_err()
                .to_string()
                .contains("account-id")
        );
        assert!(op.path_and_query(&[("nope".into(), "1".into())]).is_err());
        let ids: std::collections::HashSet<_> = OPERATIONS.iter().map(|o| o.id).collect();
        assert_eq!(ids.len(), OPERATIONS.len(), "ids are unique");
    }

    /// Every example body is a JSON object (after its dates are rendered) of the shape its
    /// operation takes, and every file of `src/xs2a/examples/` is one an operation offers.
    #[test]
    fn every_example_body_is_json_of_its_operation() {
        let today = chrono::NaiveDate::from_ymd_opt(2026, 1, 31).unwrap();
        let mut offered = std::collections::BTreeSet::new();
        for op in OPERATIONS {
            for t in op.templates() {
                let text = t.render(today);
                assert!(!text.contains("{{"), "{} {}: {text}", op.id, t.name);
                let v: serde_json::Value = serde_json::from_str(&text)
                    .unwrap_or_else(|e| panic!("{} {}: {e}", op.id, t.name));
                let keys = v.as_object().expect("a JSON object");
                let wants: &[&str] = match op.id {
                    "payments.bulk.create" => &["debtorAccount", "payments"],
                    "payments.periodic.create" => &[
                        "instructedAmount",
                        "debtorAccount",
                        "startDate",
                        "frequency",
                    ],
                    id if id.starts_with("payments.") => &["instructedAmount", "debtorAccount"],
                    "baskets.create" => &["paymentIds"],
                    "sandbox.customers.create" => &["customerType", "customerName"],
                    "sandbox.accounts.create" => &["customerId", "currency"],
                    "sandbox.transactions.create" => &["transactionAmount", "bookingStatus"],
                    "sandbox.balances.update" => &["booked", "available"],
                    "sandbox.clock.advance" => &["advanceSeconds"],
                    _ => &[],
                };
                for k in wants {
                    assert!(keys.contains_key(*k), "{} {}: no {k}", op.id, t.name);
                }
                offered.insert(t.body);
            }
        }
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/xs2a/examples");
        let mut files = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            assert!(
                offered.contains(text.as_str()),
                "{path:?} is offered by no operation"
            );
            files += 1;
        }
        // The examples and the consent's `{}`.
        assert_eq!(offered.len(), files + 1);
    }

    #[test]
    fn header_tables_of_payments_and_baskets_extend_the_xs2a_table() {
        let names = |ps: &[Param]| ps.iter().map(|p| p.name).collect::<Vec<_>>();
        let mut payment = names(&XS2A_HEADERS);
        payment.insert(1, h::X_PSU_IDENTITY);
        assert_eq!(names(&PAYMENT_CREATE_HEADERS), payment);
        assert_eq!(names(&BASKET_CREATE_HEADERS), names(&XS2A_HEADERS));
        let required = |ps: &[Param]| {
            ps.iter()
                .filter(|p| p.required)
                .map(|p| p.name)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            required(&BASKET_CREATE_HEADERS),
            [
                h::X_REQUEST_ID,
                h::TPP_SESSION_ID,
                h::PSU_ID,
                h::PSU_IP_ADDRESS,
                h::TPP_REDIRECT_URI,
                h::X_ACCEPT_FIX,
                h::DATE,
                h::TPP_SIGNATURE_CERTIFICATE,
                h::SIGNATURE,
            ]
        );
        assert_eq!(
            required(&XS2A_HEADERS),
            [
                h::X_REQUEST_ID,
                h::TPP_REDIRECT_URI,
                h::DATE,
                h::TPP_SIGNATURE_CERTIFICATE,
                h::SIGNATURE,
            ]
        );
    }

    #[test]
    fn dates_are_rendered_and_other_braces_kept() {
        let today = chrono::NaiveDate::from_ymd_opt(2026, 1, 31).unwrap();
        assert_eq!(
            render_dates("{{date+1}} {{date+}} {{date+x}} {{date+2", today),
            "2026-02-01 {{date+}} {{date+x}} {{date+2"
        );
    }

    #[test]
    fn every_catalogue_template_is_a_route() {
        let mut t = PathTemplates::new();
        for op in OPERATIONS {
            t.insert(op.method, op.path, op.id)
                .unwrap_or_else(|e| panic!("{} {}: {e}", op.method, op.path));
        }
    }

    #[test]
    fn payment_service_is_restricted() {
        // `{payment-service}` takes only the Berlin Group payment services.
        assert!(find_request("GET", "/v1/accounts/x/y").is_none());
        assert!(find_request("GET", "/v1/consents/x/y").is_none());
        let (op, values) = find_request("GET", "/v1/periodic-payments/p/i").unwrap();
        assert_eq!(
            op.path,
            "/v1/{payment-service}/{payment-product}/{payment-id}"
        );
        assert_eq!(
            values[0],
            ("payment-service".into(), "periodic-payments".into())
        );
    }
}
