//! The Postman reader of [`super::read`] and of the importer: a Postman Collection v2.1
//! (`item`, folders nested, `variable` lists, test scripts) and a Postman environment
//! export, read into [`ImportedRequest`]s with every header as written.
//!
//! The collection is read typed ([`Collection`], [`Item`], [`Request`]: only the fields the
//! console uses) but leniently, as the string-key reader before it was: a collection written
//! by hand or by another tool is read as far as it goes, and a field of another shape counts
//! as absent ([`lenient`], [`list`]) rather than refusing the file: a request without a
//! usable `method` is a `GET`, one without a `url` has an empty one, a header without a
//! string `key` is left out.

use serde::Deserialize;
use serde::de::{DeserializeOwned, Deserializer};
use serde_json::Value;

use super::{ImportError, ImportedRequest, ScriptSet};

/// `v` as a `T`, or `T::default()` when it has another shape. A list is never a `T` here
/// (every `T` read this way is an object or a scalar; serde would read a struct from a list
/// by position).
fn element<T: DeserializeOwned + Default>(v: Value) -> T {
    match v {
        Value::Array(_) => T::default(),
        v => serde_json::from_value(v).unwrap_or_default(),
    }
}

/// A field read as [`element`] does.
fn lenient<'de, D: Deserializer<'de>, T: DeserializeOwned + Default>(d: D) -> Result<T, D::Error> {
    Value::deserialize(d).map(element)
}

/// A JSON list as a `Vec<T>`, each element read as [`element`] does; a value that is not a
/// list is an empty one.
fn list<'de, D: Deserializer<'de>, T: DeserializeOwned + Default>(
    d: D,
) -> Result<Vec<T>, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::Array(elements) => elements.into_iter().map(element).collect(),
        _ => Vec::new(),
    })
}

/// [`list`], `Some` whenever the field is there (whatever its shape): an item with an `item`
/// field is a folder.
fn present_list<'de, D: Deserializer<'de>, T: DeserializeOwned + Default>(
    d: D,
) -> Result<Option<Vec<T>>, D::Error> {
    list(d).map(Some)
}

/// A Postman collection (schema v2.1.0), the fields read: its items and its variables.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Collection {
    /// `item`: requests and folders; `None` when the document has no `item` (not a
    /// collection).
    #[serde(deserialize_with = "present_list")]
    item: Option<Vec<Item>>,
    /// `variable`: the collection's variables.
    #[serde(deserialize_with = "list")]
    variable: Vec<Variable>,
}

/// A Postman item: a folder (it has `item`) or a request.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Item {
    /// `name`.
    #[serde(deserialize_with = "lenient")]
    name: Option<String>,
    /// `item`: the folder's items (`Some` for a folder).
    #[serde(deserialize_with = "present_list")]
    item: Option<Vec<Item>>,
    /// `variable`: the item's or folder's variables.
    #[serde(deserialize_with = "list")]
    variable: Vec<Variable>,
    /// `request`.
    #[serde(deserialize_with = "lenient")]
    request: Request,
    /// `event`: the item's scripts.
    #[serde(deserialize_with = "list")]
    event: Vec<Event>,
}

/// A Postman `request` object.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Request {
    /// `method` (`GET` when absent).
    #[serde(deserialize_with = "lenient")]
    method: Option<String>,
    /// `url`: a string or an object with `raw`.
    #[serde(deserialize_with = "lenient")]
    url: Url,
    /// `header`.
    #[serde(deserialize_with = "list")]
    header: Vec<Header>,
    /// `body`.
    #[serde(deserialize_with = "lenient")]
    body: Body,
}

/// A Postman `url`: the text, or the object form of which the `raw` text is read.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Url {
    /// `"url": "https://{{host}}/v1/x"`.
    Text(String),
    /// `"url": {"raw": "...", "host": [...], "path": [...]}`.
    Parts {
        /// `raw`.
        #[serde(default, deserialize_with = "lenient")]
        raw: String,
    },
}

impl Default for Url {
    fn default() -> Self {
        Url::Text(String::new())
    }
}

/// A Postman `header` element.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Header {
    /// `key`.
    #[serde(deserialize_with = "lenient")]
    key: String,
    /// `value`.
    #[serde(deserialize_with = "lenient")]
    value: String,
    /// `disabled`: `true` leaves the header out.
    #[serde(deserialize_with = "lenient")]
    disabled: Option<bool>,
}

/// A Postman request `body`; only `raw` bodies are read.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Body {
    /// `mode` (`raw`, `urlencoded`, `formdata`, ...).
    #[serde(deserialize_with = "lenient")]
    mode: Option<String>,
    /// `raw`: the body text.
    #[serde(deserialize_with = "lenient")]
    raw: Option<String>,
}

/// A Postman `event`: `listen` (`test`, `prerequest`) and its `script`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Event {
    /// `listen`.
    #[serde(deserialize_with = "lenient")]
    listen: Option<String>,
    /// `script`.
    #[serde(deserialize_with = "lenient")]
    script: Script,
}

/// A Postman `script`: its `exec` lines.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Script {
    /// `exec`: a list of lines (elements that are not strings are skipped) or one text.
    exec: Exec,
}

/// The `exec` of a script.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Exec {
    /// A list of lines.
    Lines(Vec<Value>),
    /// One text of lines.
    Text(String),
    /// Anything else: no lines.
    Other(serde::de::IgnoredAny),
}

impl Default for Exec {
    fn default() -> Self {
        Exec::Lines(Vec::new())
    }
}

/// A Postman variable (collection, folder, item, environment `values`): `key` (or `id`),
/// `value`, and `disabled` / `enabled`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Variable {
    /// `key`.
    #[serde(deserialize_with = "lenient")]
    key: Option<String>,
    /// `id`, read when there is no `key`.
    #[serde(deserialize_with = "lenient")]
    id: Option<String>,
    /// `value`: a string, else written as JSON (`null` as empty).
    value: Value,
    /// `disabled`: `true` leaves the variable out.
    #[serde(deserialize_with = "lenient")]
    disabled: Option<bool>,
    /// `enabled` (environment exports): `false` leaves the variable out.
    #[serde(deserialize_with = "lenient")]
    enabled: Option<bool>,
}

/// A Postman environment export: `{"values": [{"key", "value", "enabled"}]}`.
#[derive(Debug, Deserialize)]
struct EnvironmentExport {
    /// `values`: a list (each element read as [`element`] does).
    values: Vec<Value>,
}

impl Collection {
    /// `doc` as a collection, `None` when it has no `item` (not a Postman collection).
    pub(crate) fn of(doc: &Value) -> Option<Collection> {
        doc.is_object()
            .then(|| Collection::deserialize(doc).ok())
            .flatten()
            .filter(|c| c.item.is_some())
    }

    /// The requests of every folder, in file order, with the headers `keep` accepts, and
    /// the collection's variables as (name, value).
    pub(crate) fn read(
        self,
        keep: fn(&str) -> bool,
    ) -> (Vec<ImportedRequest>, Vec<(String, String)>) {
        let mut requests = Vec::new();
        items(self.item.unwrap_or_default(), &[], keep, &mut requests);
        (requests, variables(self.variable))
    }
}

/// A Postman `variable` list as (name, value): without the disabled ones and those without
/// a name; values that are not strings are written as JSON.
fn variables(list: Vec<Variable>) -> Vec<(String, String)> {
    list.into_iter()
        .filter(|v| v.disabled != Some(true) && v.enabled != Some(false))
        .filter_map(|v| {
            let key = v.key.or(v.id)?.trim().to_string();
            let value = match v.value {
                Value::String(s) => s,
                Value::Null => String::new(),
                other => other.to_string(),
            };
            (!key.is_empty()).then_some((key, value))
        })
        .collect()
}

/// The `.set(...)` assignments of the item's test scripts that read a JSON path of the
/// response (`jsonData...`).
fn sets(events: &[Event]) -> Vec<ScriptSet> {
    events
        .iter()
        .filter(|e| e.listen.as_deref() == Some("test"))
        .flat_map(|e| match &e.script.exec {
            Exec::Lines(lines) => lines
                .iter()
                .filter_map(|l| l.as_str().map(str::to_string))
                .collect::<Vec<_>>(),
            Exec::Text(s) => s.lines().map(str::to_string).collect(),
            Exec::Other(_) => Vec::new(),
        })
        .flat_map(|line| line.split(';').filter_map(script_set).collect::<Vec<_>>())
        .collect()
}

/// Parses `pm.globals.set("x", jsonData.a[0].b)` (and the other setters named in
/// [`crate::client::import`]'s documentation); `None` for anything else.
pub fn script_set(statement: &str) -> Option<ScriptSet> {
    const SETTERS: [&str; 6] = [
        "pm.globals.set(",
        "pm.environment.set(",
        "pm.collectionVariables.set(",
        "pm.variables.set(",
        "postman.setEnvironmentVariable(",
        "postman.setGlobalVariable(",
    ];
    let s = statement.trim();
    let args = SETTERS
        .iter()
        .find_map(|p| s.find(p).map(|i| &s[i + p.len()..]))?;
    let args = args.trim_start();
    let quote = args
        .chars()
        .next()
        .filter(|c| matches!(c, '"' | '\'' | '`'))?;
    let (variable, rest) = args[1..].split_once(quote)?;
    let rest = rest.trim_start().strip_prefix(',')?.trim();
    let rest = rest.strip_suffix(')')?.trim();
    let path = rest.strip_prefix("jsonData")?;
    let valid = path
        .chars()
        .all(|c| c.is_alphanumeric() || "._[]$".contains(c));
    (valid && !variable.is_empty()).then(|| ScriptSet {
        variable: variable.to_string(),
        path: path.to_string(),
    })
}

/// Reads a Postman environment export (`{"values": [{"key", "value", "enabled"}]}`) or a
/// plain JSON object of names to values, as (name, value).
///
/// Errors: not JSON, or neither shape.
pub fn environment(text: &str, source_name: &str) -> Result<Vec<(String, String)>, ImportError> {
    let err = |reason: String| ImportError {
        source_name: source_name.to_string(),
        reason,
    };
    let doc: Value = serde_json::from_str(text)
        .map_err(|e| err(format!("not JSON (a Postman environment export): {e}")))?;
    if doc.is_object()
        && let Ok(export) = EnvironmentExport::deserialize(&doc)
    {
        return Ok(variables(export.values.into_iter().map(element).collect()));
    }
    match doc {
        Value::Object(map) => Ok(map
            .into_iter()
            .map(|(k, v)| match v {
                Value::String(s) => (k, s),
                other => (k, other.to_string()),
            })
            .collect()),
        _ => Err(err(
            "neither a Postman environment (`values` list) nor an object of names to values".into(),
        )),
    }
}

/// The requests of `items` (folders entered, their variables added to `scope`), with the
/// headers `keep` accepts, appended to `out`.
fn items(
    items: Vec<Item>,
    scope: &[(String, String)],
    keep: fn(&str) -> bool,
    out: &mut Vec<ImportedRequest>,
) {
    for it in items {
        let mut variables = scope.to_vec();
        variables.extend(self::variables(it.variable));
        if let Some(inner) = it.item {
            self::items(inner, &variables, keep, out);
            continue;
        }
        let r = it.request;
        let url = match r.url {
            Url::Text(s) | Url::Parts { raw: s } => s,
        };
        let headers = r
            .header
            .into_iter()
            .filter(|h| h.disabled != Some(true))
            .map(|h| (h.key.trim().to_string(), h.value.trim().to_string()))
            .filter(|(n, _)| !n.is_empty() && keep(n))
            .collect();
        let body = match (r.body.mode.as_deref(), r.body.raw) {
            (Some("raw"), Some(raw)) if !raw.trim().is_empty() => Some(raw),
            _ => None,
        };
        out.push(ImportedRequest {
            name: it.name.unwrap_or_default(),
            method: r.method.as_deref().unwrap_or("GET").to_ascii_uppercase(),
            url: url.trim().to_string(),
            headers,
            body,
            variables,
            sets: sets(&it.event),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The typed reader reads odd collections as the string-key reader before it did: an
    /// element that is no item is an empty `GET`, a `request` that is a list has no fields, a
    /// folder whose `item` is `null` has no requests, a header without a string `key` and a
    /// variable that is no object are left out, a number value is written as JSON.
    #[test]
    fn odd_shapes_read_as_far_as_they_go() {
        let doc: Value = serde_json::from_str(
            r#"{"item": [42,
                {"name": "a", "request": {"method": "post", "url": {"raw": " https://x/v1/a "},
                  "header": [{"key": 1, "value": "v"}, {"key": "K", "value": "V", "disabled": true},
                             {"key": " H ", "value": " w "}],
                  "body": {"mode": "raw", "raw": "{}"}},
                 "event": [{"listen": "test", "script": {"exec": "pm.globals.set('x', jsonData.a)"}},
                           {"listen": "prerequest", "script": {"exec": ["pm.globals.set('y', jsonData.b)"]}}]},
                {"name": "f", "item": null},
                {"request": ["POST", "u"]}],
              "variable": [{"id": "i", "value": 3}, {"key": "d", "disabled": true}, 7]}"#,
        )
        .unwrap();
        let (requests, variables) = Collection::of(&doc).unwrap().read(|_| true);
        assert_eq!(variables, vec![("i".to_string(), "3".to_string())]);
        assert_eq!(requests.len(), 3);
        let empty = ImportedRequest {
            method: "GET".into(),
            ..ImportedRequest::default()
        };
        assert_eq!(requests[0], empty);
        assert_eq!(requests[2], empty);
        let a = &requests[1];
        assert_eq!(
            (a.method.as_str(), a.url.as_str()),
            ("POST", "https://x/v1/a")
        );
        assert_eq!(a.headers, vec![("H".to_string(), "w".to_string())]);
        assert_eq!(a.body.as_deref(), Some("{}"));
        assert_eq!(
            a.sets,
            vec![ScriptSet {
                variable: "x".into(),
                path: ".a".into()
            }]
        );
        assert!(Collection::of(&serde_json::json!([[], []])).is_none());
        assert!(Collection::of(&serde_json::json!({"info": {}})).is_none());
        let env = environment(r#"{"values": {"a": 1}, "b": "c"}"#, "e").unwrap();
        assert_eq!(env.len(), 2, "values that is no list: a plain object");
    }
}
