//! Checks a sandbox response against the Berlin Group 1.3.11 component schemas
//! (`shared/spec/berlin-group-psd2-api-1.3.11.yaml`).
//!
//! PLACEHOLDER until the schema validator lands: it only checks that error bodies carry a
//! `tppMessages` array; replaced by a jsonschema-based check in this session.

#![allow(dead_code)]

use psd2_console::sandbox::observe::ObservedExchange;

/// `Ok` when the body is valid for its operation and status (non-JSON and non-`/v1`
/// responses are not checked).
pub fn check_exchange(ex: &ObservedExchange) -> Result<(), String> {
    if !ex.path.starts_with("/v1/") || ex.status < 400 {
        return Ok(());
    }
    let v: serde_json::Value =
        serde_json::from_slice(&ex.body).map_err(|e| format!("error body is not JSON: {e}"))?;
    if v["tppMessages"].is_array() {
        Ok(())
    } else {
        Err("error body without tppMessages".into())
    }
}
