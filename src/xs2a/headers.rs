//! Header names of the interface document (header table of the basket operation and
//! Authentication rules), as sent on the wire.

/// UUID of the request, echoed in the answer.
pub const X_REQUEST_ID: &str = "X-Request-ID";
/// IMF-fixdate of the request (signed).
pub const DATE: &str = "Date";
/// `SHA-256=<base64>` of the body (signed).
pub const DIGEST: &str = "Digest";
/// The HTTP signature (keyId, algorithm, headers, signature).
pub const SIGNATURE: &str = "Signature";
/// The TPP's signing certificate, base64 DER.
pub const TPP_SIGNATURE_CERTIFICATE: &str = "TPP-Signature-Certificate";
/// Where the ASPSP redirects the PSU's browser after SCA.
pub const TPP_REDIRECT_URI: &str = "TPP-Redirect-URI";
/// `true`: the TPP prefers the redirect SCA approach.
pub const TPP_REDIRECT_PREFERRED: &str = "TPP-Redirect-Preferred";
/// The session an SCA opened (interface document).
pub const TPP_SESSION_ID: &str = "TPP-Session-ID";
/// The PSU's id (the `psu-id` of an earlier SCA).
pub const PSU_ID: &str = "PSU-ID";
/// The business a corporate PSU acts for.
pub const PSU_CORPORATE_ID: &str = "PSU-Corporate-ID";
/// The PSU's IP address, when the PSU is present.
pub const PSU_IP_ADDRESS: &str = "PSU-IP-Address";
/// The interface document's opt-in to fixes ([`ACCEPT_FIXES`]).
pub const X_ACCEPT_FIX: &str = "x-accept-fix";
/// The PSU's identity proof on payment initiation (interface document).
pub const X_PSU_IDENTITY: &str = "X-PSU-IDENTITY";
/// The body's media type.
pub const CONTENT_TYPE: &str = "Content-Type";
/// The media types the TPP accepts.
pub const ACCEPT: &str = "Accept";
/// The SCA approach of an answer (`REDIRECT`).
pub const ASPSP_SCA_APPROACH: &str = "ASPSP-SCA-Approach";
/// The created resource of a 201.
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
