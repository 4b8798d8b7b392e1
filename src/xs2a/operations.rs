//! The operation catalogue: every operation the console can send, with its method, path
//! template, parameters and body template. The console, the `send` command and tests use it;
//! the sandbox routes the same paths.

/// Where a parameter goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamKind {
    /// Replaces `{name}` in the path.
    Path,
    Query,
}

/// One parameter of an operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Param {
    pub name: &'static str,
    pub kind: ParamKind,
    pub required: bool,
    /// Value used when the user gives none (`""`: omitted unless required).
    pub default: &'static str,
    pub help: &'static str,
}

/// Operation groups, in catalogue order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Group {
    Ais,
    Pis,
    Baskets,
    Psu,
    Sandbox,
}

impl Group {
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
    pub title: &'static str,
    pub group: Group,
    pub method: &'static str,
    /// Path template relative to the base URL, e.g. `/v1/accounts/{account-id}/balances`.
    pub path: &'static str,
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
};

const CARD_ACCOUNT_ID: Param = Param {
    name: "card-account-id",
    kind: ParamKind::Path,
    required: true,
    default: "",
    help: "resourceId of a card account from List card accounts",
};

const PAYMENT_SERVICE: Param = Param {
    name: "payment-service",
    kind: ParamKind::Path,
    required: true,
    default: "payments",
    help: "payments, bulk-payments or periodic-payments",
};

const PAYMENT_PRODUCT: Param = Param {
    name: "payment-product",
    kind: ParamKind::Path,
    required: true,
    default: "norwegian-domestic-credit-transfers",
    help: "e.g. norwegian-domestic-credit-transfers, instant-norwegian-credit-transfers-straks",
};

const PAYMENT_ID: Param = Param {
    name: "payment-id",
    kind: ParamKind::Path,
    required: true,
    default: "",
    help: "paymentId from the initiation answer",
};

const BASKET_ID: Param = Param {
    name: "basket-id",
    kind: ParamKind::Path,
    required: true,
    default: "",
    help: "basketId from the basket creation answer",
};

const CUSTOMER_ID: Param = Param {
    name: "customer-id",
    kind: ParamKind::Path,
    required: true,
    default: "",
    help: "customerId from Sandbox customers",
};

const ALLOW_LOGICAL_DUPLICATE: Param = Param {
    name: "allowLogicalDuplicate",
    kind: ParamKind::Query,
    required: false,
    default: "",
    help: "true to allow a logical duplicate",
};

const fn path_param(name: &'static str, help: &'static str) -> Param {
    Param {
        name,
        kind: ParamKind::Path,
        required: true,
        default: "",
        help,
    }
}

const fn query_param(name: &'static str, default: &'static str, help: &'static str) -> Param {
    Param {
        name,
        kind: ParamKind::Query,
        required: false,
        default,
        help,
    }
}

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

/// Body of a domestic credit transfer (interface document, "Payment initiation body").
pub const DOMESTIC_PAYMENT_BODY: &str = r#"{
  "instructedAmount": {"currency": "NOK", "amount": "123.50"},
  "debtorAccount": {"bban": "<your account bban>"},
  "creditorName": "Ola Nordmann",
  "creditorAccount": {"bban": "98765432109"},
  "requestedExecutionDate": "",
  "remittanceInformationUnstructured": "Invoice 42"
}"#;

/// Body of a SEPA credit transfer with the structured creditor address and creditor agent
/// BIC required from 2026-08-13 in the sandbox (interface document, Versioning).
pub const SEPA_PAYMENT_BODY: &str = r#"{
  "instructedAmount": {"currency": "EUR", "amount": "250.00"},
  "debtorAccount": {"bban": "<your account bban>"},
  "creditorName": "Ola Nordmann GmbH",
  "creditorAccount": {"iban": "DE89370400440532013000"},
  "creditorAgent": "COBADEFFXXX",
  "creditorAddress": {"townName": "Berlin", "country": "DE", "streetName": "Unter den Linden", "buildingNumber": "1", "postCode": "10117"},
  "remittanceInformationUnstructured": "Invoice 4711"
}"#;

/// Body of a cross-border (NCBCT / SWIFT) credit transfer.
pub const CROSS_BORDER_PAYMENT_BODY: &str = r#"{
  "instructedAmount": {"currency": "USD", "amount": "500.00"},
  "debtorAccount": {"bban": "<your account bban>"},
  "creditorName": "Example Supplier Inc",
  "creditorAccount": {"iban": "GB33BUKB20201555555555"},
  "creditorAgent": "BUKBGB22",
  "creditorAddress": {"townName": "London", "country": "GB"},
  "remittanceInformationUnstructured": "PO 1234"
}"#;

/// Body of a bulk payment.
pub const BULK_PAYMENT_BODY: &str = r#"{
  "debtorAccount": {"bban": "<your account bban>"},
  "payments": [
    {"instructedAmount": {"currency": "NOK", "amount": "100.00"}, "creditorName": "Kari Nordmann", "creditorAccount": {"bban": "98765432109"}, "remittanceInformationUnstructured": "Salary 1"},
    {"instructedAmount": {"currency": "NOK", "amount": "200.00"}, "creditorName": "Per Hansen", "creditorAccount": {"bban": "12345678903"}, "remittanceInformationUnstructured": "Salary 2"}
  ]
}"#;

/// Body of a periodic payment with frequency `MonthlyVariable` (interface document, "Other
/// payment facts").
pub const PERIODIC_PAYMENT_BODY: &str = r#"{
  "instructedAmount": {"currency": "NOK", "amount": "1500.00"},
  "debtorAccount": {"bban": "<your account bban>"},
  "creditorName": "Borettslaget",
  "creditorAccount": {"bban": "98765432109"},
  "remittanceInformationUnstructured": "Rent",
  "startDate": "2026-12-01",
  "frequency": "MonthlyVariable",
  "monthsOfExecution": ["01", "03", "05", "07", "09", "11"]
}"#;

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
            Some("{}"),
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
        Some(DOMESTIC_PAYMENT_BODY),
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
        Some(SEPA_PAYMENT_BODY),
        "Other payment facts: SEPA; Versioning: structured addresses",
    ),
    op(
        "payments.cross-border.create",
        "Cross-border payment (NCBCT)",
        Group::Pis,
        "POST",
        "/v1/payments/norwegian-cross-border-credit-transfers",
        &[ALLOW_LOGICAL_DUPLICATE],
        Some(CROSS_BORDER_PAYMENT_BODY),
        "Other payment facts: NCBCT, SWIFT",
    ),
    op(
        "payments.bulk.create",
        "Bulk payment",
        Group::Pis,
        "POST",
        "/v1/bulk-payments/norwegian-domestic-credit-transfers",
        &[],
        Some(BULK_PAYMENT_BODY),
        "Other payment facts: bulk",
    ),
    op(
        "payments.periodic.create",
        "Periodic payment",
        Group::Pis,
        "POST",
        "/v1/periodic-payments/norwegian-domestic-credit-transfers",
        &[],
        Some(PERIODIC_PAYMENT_BODY),
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
        Some(r#"{"paymentIds": ["<paymentId>", "<paymentId>"]}"#),
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
            },
            Param {
                name: "withAgreements",
                kind: ParamKind::Query,
                required: false,
                default: "true",
                help: "include agreements",
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
            Some(r#"{"customerType": "PRIVATE", "customerName": "Nora Nordmann"}"#),
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
            Some(
                r#"{"customerId": "<customerId>", "name": "Brukskonto", "currency": "NOK", "cashAccountType": "CACC"}"#,
            ),
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
            Some(
                r#"{"transactionAmount": {"currency": "NOK", "amount": "-250.00"}, "creditorName": "Rema 1000", "remittanceInformationUnstructured": "Groceries", "bookingStatus": "booked"}"#,
            ),
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
            Some(
                r#"{"booked": {"currency": "NOK", "amount": "25000.00"}, "available": {"currency": "NOK", "amount": "25000.00"}}"#,
            ),
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
            Some(r#"{"advanceSeconds": 3600}"#),
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

impl Operation {
    /// Fills the path template and query from `values` (name → value), using defaults.
    ///
    /// Errors: the names of required parameters that have no value, or unknown names.
    pub fn path_and_query(&self, values: &[(String, String)]) -> Result<String, String> {
        for (k, _) in values {
            if !self.params.iter().any(|p| p.name == k) {
                let known: Vec<&str> = self.params.iter().map(|p| p.name).collect();
                return Err(format!(
                    "{} has no parameter {k:?} (known: {})",
                    self.id,
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    }
                ));
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
            }
        }
        if !missing.is_empty() {
            return Err(format!(
                "{} needs {}",
                self.id,
                missing
                    .iter()
                    .map(|m| format!("--param {m}=..."))
                    .collect::<Vec<_>>()
                    .join(" ")
            ));
        }
        if has_query {
            path.push('?');
            path.push_str(&query.finish());
        }
        Ok(path)
    }
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
        assert!(op.path_and_query(&[]).unwrap_err().contains("account-id"));
        assert!(op.path_and_query(&[("nope".into(), "1".into())]).is_err());
        let ids: std::collections::HashSet<_> = OPERATIONS.iter().map(|o| o.id).collect();
        assert_eq!(ids.len(), OPERATIONS.len(), "ids are unique");
    }
}
