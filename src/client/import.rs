//! Imports of requests from elsewhere: Postman Collection v2.1, HAR 1.2 and cURL commands.
//! An imported request keeps its method, URL (Postman `{{host}}` variables and all), headers
//! and body; signing headers (`Signature`, `Digest`, `Date`, `TPP-Signature-Certificate`) are
//! dropped, since the console signs afresh with the active profile when it sends.

use serde_json::Value;

/// One imported request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportedRequest {
    /// Postman item name, HAR comment/URL, or `curl N`.
    pub name: String,
    pub method: String,
    /// As written in the source (may hold `{{variables}}`).
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: Option<String>,
}

/// Headers the console sets itself when it signs.
pub const SIGNING_HEADERS: [&str; 4] = ["signature", "digest", "date", "tpp-signature-certificate"];

/// Why a file could not be imported.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{source_name}: {reason}")]
pub struct ImportError {
    pub source_name: String,
    pub reason: String,
}

fn keep_header(name: &str) -> bool {
    !SIGNING_HEADERS.iter().any(|s| s.eq_ignore_ascii_case(name))
}

/// Detects the format of `text` (Postman collection, HAR, or a cURL command) and imports it.
///
/// Errors: not one of the three formats, or a malformed one (with the reason).
pub fn import(text: &str, source_name: &str) -> Result<Vec<ImportedRequest>, ImportError> {
    let err = |reason: String| ImportError {
        source_name: source_name.to_string(),
        reason,
    };
    let trimmed = text.trim_start();
    if trimmed.starts_with("curl") {
        return curl(text).map_err(err);
    }
    let doc: Value = serde_json::from_str(text).map_err(|e| {
        err(format!(
            "neither a cURL command nor JSON (Postman, HAR): {e}"
        ))
    })?;
    if doc.get("log").and_then(|l| l.get("entries")).is_some() {
        return Ok(har(&doc));
    }
    if doc.get("item").is_some() {
        let mut out = Vec::new();
        postman_items(&doc["item"], &mut out);
        return Ok(out);
    }
    Err(err(
        "JSON without `item` (Postman collection) or `log.entries` (HAR)".into(),
    ))
}

fn postman_items(items: &Value, out: &mut Vec<ImportedRequest>) {
    for it in items.as_array().into_iter().flatten() {
        if it.get("item").is_some() {
            postman_items(&it["item"], out);
            continue;
        }
        let r = &it["request"];
        let url = match &r["url"] {
            Value::String(s) => s.clone(),
            u => u["raw"].as_str().unwrap_or_default().to_string(),
        };
        let headers = r["header"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|h| h["disabled"] != Value::Bool(true))
            .map(|h| {
                (
                    h["key"].as_str().unwrap_or_default().trim().to_string(),
                    h["value"].as_str().unwrap_or_default().trim().to_string(),
                )
            })
            .filter(|(n, _)| !n.is_empty() && keep_header(n))
            .collect();
        let body = match (r["body"]["mode"].as_str(), r["body"]["raw"].as_str()) {
            (Some("raw"), Some(raw)) if !raw.trim().is_empty() => Some(raw.to_string()),
            _ => None,
        };
        out.push(ImportedRequest {
            name: it["name"].as_str().unwrap_or_default().to_string(),
            method: r["method"].as_str().unwrap_or("GET").to_ascii_uppercase(),
            url: url.trim().to_string(),
            headers,
            body,
        });
    }
}

fn har(doc: &Value) -> Vec<ImportedRequest> {
    doc["log"]["entries"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
        .map(|(i, e)| {
            let r = &e["request"];
            let url = r["url"].as_str().unwrap_or_default().to_string();
            ImportedRequest {
                name: e["comment"]
                    .as_str()
                    .filter(|c| !c.is_empty())
                    .map(str::to_string)
                    .unwrap_or_else(|| format!("har {} {url}", i + 1)),
                method: r["method"].as_str().unwrap_or("GET").to_ascii_uppercase(),
                url,
                headers: r["headers"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|h| {
                        (
                            h["name"].as_str().unwrap_or_default().to_string(),
                            h["value"].as_str().unwrap_or_default().to_string(),
                        )
                    })
                    .filter(|(n, _)| keep_header(n))
                    .collect(),
                body: r["postData"]["text"]
                    .as_str()
                    .filter(|t| !t.is_empty())
                    .map(str::to_string),
            }
        })
        .collect()
}

/// Parses one or more cURL commands (backslash line continuations allowed), reading `-X`,
/// `-H`, `-d`/`--data`/`--data-raw`/`--data-binary` and the URL.
fn curl(text: &str) -> Result<Vec<ImportedRequest>, String> {
    let joined = text.replace("\\\r\n", " ").replace("\\\n", " ");
    let mut out = Vec::new();
    for (i, line) in joined
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("curl"))
        .enumerate()
    {
        let words = shell_words::split(line).map_err(|e| format!("cURL command {}: {e}", i + 1))?;
        let mut method = None;
        let mut url = None;
        let mut headers = Vec::new();
        let mut body: Option<String> = None;
        let mut it = words.into_iter().skip(1);
        while let Some(w) = it.next() {
            match w.as_str() {
                "-X" | "--request" => method = it.next(),
                "-H" | "--header" => {
                    if let Some(h) = it.next()
                        && let Some((n, v)) = h.split_once(':')
                        && keep_header(n.trim())
                    {
                        headers.push((n.trim().to_string(), v.trim().to_string()));
                    }
                }
                "-d" | "--data" | "--data-raw" | "--data-binary" | "--data-ascii" => {
                    body = it.next();
                }
                "-o" | "-w" | "--max-time" | "-m" | "--output" | "--write-out" => {
                    it.next();
                }
                s if s.starts_with("http://") || s.starts_with("https://") => {
                    url = Some(s.to_string())
                }
                _ => {}
            }
        }
        let url = url.ok_or_else(|| format!("cURL command {} has no http(s) URL", i + 1))?;
        let method = method
            .unwrap_or_else(|| if body.is_some() { "POST" } else { "GET" }.into())
            .to_ascii_uppercase();
        out.push(ImportedRequest {
            name: format!("curl {} {method} {url}", i + 1),
            method,
            url,
            headers,
            body,
        });
    }
    if out.is_empty() {
        return Err("no cURL command found".into());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn curl_commands_are_parsed_and_signing_headers_dropped() {
        let r = import(
            "curl -sS -X POST 'http://127.0.0.1:8080/v1/payments/x' \\\n  -H 'X-Request-ID: 1' \\\n  -H 'Signature: keyId=\"a\"' \\\n  --data-binary '{\"a\":\"1\"}'\n",
            "t",
        )
        .unwrap();
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].method, "POST");
        assert_eq!(r[0].url, "http://127.0.0.1:8080/v1/payments/x");
        assert_eq!(
            r[0].headers,
            vec![("X-Request-ID".to_string(), "1".to_string())]
        );
        assert_eq!(r[0].body.as_deref(), Some("{\"a\":\"1\"}"));
        assert!(import("curl 'unterminated", "t").is_err());
        assert!(
            import("{\"x\":1}", "t")
                .unwrap_err()
                .to_string()
                .contains("item")
        );
    }
}
