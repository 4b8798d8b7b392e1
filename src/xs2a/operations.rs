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
}

const ACCOUNT_ID: Param = Param {
    name: "account-id",
    kind: ParamKind::Path,
    required: true,
    default: "",
    help: "resourceId of an account from List accounts",
};

/// The catalogue.
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
    },
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
    },
    Operation {
        id: "accounts.transactions",
        title: "Account transactions",
        group: Group::Ais,
        method: "GET",
        path: "/v1/accounts/{account-id}/transactions",
        params: &[
            ACCOUNT_ID,
            Param {
                name: "bookingStatus",
                kind: ParamKind::Query,
                required: false,
                default: "both",
                help: "both, booked, pending or all",
            },
            Param {
                name: "dateFrom",
                kind: ParamKind::Query,
                required: false,
                default: "",
                help: "YYYY-MM-DD",
            },
            Param {
                name: "dateTo",
                kind: ParamKind::Query,
                required: false,
                default: "",
                help: "YYYY-MM-DD",
            },
            Param {
                name: "limit",
                kind: ParamKind::Query,
                required: false,
                default: "",
                help: "page size (default 200)",
            },
            Param {
                name: "offset",
                kind: ParamKind::Query,
                required: false,
                default: "",
                help: "index of the first booked transaction",
            },
        ],
        body: None,
        psu_headers: true,
        source: "Endpoints, Other operations named: GET /v1/accounts/{id}/transactions; Limits",
    },
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
