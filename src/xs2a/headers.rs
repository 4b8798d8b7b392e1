//! Header names of the interface document (header table of the basket operation and
//! Authentication rules), as sent on the wire.

pub const X_REQUEST_ID: &str = "X-Request-ID";
pub const DATE: &str = "Date";
pub const DIGEST: &str = "Digest";
pub const SIGNATURE: &str = "Signature";
pub const TPP_SIGNATURE_CERTIFICATE: &str = "TPP-Signature-Certificate";
pub const TPP_REDIRECT_URI: &str = "TPP-Redirect-URI";
pub const TPP_REDIRECT_PREFERRED: &str = "TPP-Redirect-Preferred";
pub const TPP_SESSION_ID: &str = "TPP-Session-ID";
pub const PSU_ID: &str = "PSU-ID";
pub const PSU_CORPORATE_ID: &str = "PSU-Corporate-ID";
pub const PSU_IP_ADDRESS: &str = "PSU-IP-Address";
pub const X_ACCEPT_FIX: &str = "x-accept-fix";
pub const X_PSU_IDENTITY: &str = "X-PSU-IDENTITY";
pub const CONTENT_TYPE: &str = "Content-Type";
pub const ACCEPT: &str = "Accept";
pub const ASPSP_SCA_APPROACH: &str = "ASPSP-SCA-Approach";
pub const LOCATION: &str = "Location";

/// The value of the first header named `name` (header names are case-insensitive, RFC 9110
/// §5.1) in a list of (name, value) pairs in wire order; `None` when absent. The value is
/// returned as stored (untrimmed).
pub fn find<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// The `x-accept-fix` values of the interface document's Versioning table, all now default.
pub const ACCEPT_FIXES: [&str; 4] = [
    "amount-as-string",
    "cardaccount-switch-originalamount-and-transactionamount",
    "longer-names",
    "cash-account-type-iso",
];

/// The sandbox's operator token (`sandbox serve --operator-token-file`; never signed, never
/// logged): requests carrying it reach the sandbox's operator plane.
pub const SANDBOX_OPERATOR_TOKEN: &str = "X-Sandbox-Operator-Token";
