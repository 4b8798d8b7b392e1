//! The one reader of JSON request bodies: a JSON object with its path (for messages and
//! `tppMessages[].path`), read field by field with the shape rules every body shares. Used by
//! the sandbox's payment bodies ([`crate::sandbox::http::payments::body`]) and its management
//! bodies ([`crate::sandbox::http::manage`]); a refusal is a [`FieldError`], which the sandbox
//! answers as a 400 `FORMAT_ERROR` naming the field.
//!
//! Rules of every string field:
//!
//! * `null` is the same as absent (Berlin Group: optional fields may be left out);
//! * a string is read trimmed; **an empty (or blank) string is the same as absent**: the
//!   interface document says nothing about empty values, and the Berlin Group text types
//!   (`Max35Text`, `Max70Text`, ...; psd2-api 1.3.11) set no `minLength`, so an empty
//!   optional field is accepted and not echoed, and an empty required field is refused as
//!   missing (the payment bodies' rule; sandbox management formerly refused an empty optional
//!   field, and now reads it as not given);
//! * longer than its limit (in characters) or holding a control character → refused;
//! * any other JSON type → refused, naming the type found.
//!
//! Paths join keys with `.` and index arrays with `[i]`: `payments[0].creditorAccount.iban`;
//! the body itself has the empty path.

use chrono::NaiveDate;
use serde_json::{Map, Value};
use uuid::Uuid;

use crate::xs2a::identifiers::is_currency;

/// A body field refused by the reader: the field's path and a sentence that names it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{text}")]
pub struct FieldError {
    /// The field's path, e.g. `instructedAmount.amount`; `body` for the body as a whole.
    pub path: String,
    /// Why, naming the field, e.g. `creditorName is 71 characters long; at most 70 are
    /// allowed`.
    pub text: String,
}

impl FieldError {
    /// A refusal of the field at `path`.
    pub fn new(path: impl Into<String>, text: impl Into<String>) -> Self {
        FieldError {
            path: path.into(),
            text: text.into(),
        }
    }
}

/// `key` below `path` (`a` + `b` → `a.b`; the empty path + `b` → `b`).
pub fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// The JSON type of `v` for messages (`a string`, `an object`, ...).
pub(crate) fn json_type<V: Json>(v: &V) -> &'static str {
    v.type_name()
}

/// A parsed JSON value the reader reads: [`serde_json::Value`] (sandbox management), or a
/// payment body's borrowed tree ([`crate::xs2a::tree::Node`], issue 23).
pub trait Json: Sized {
    /// Its objects.
    type Object: JsonObject<Self> + ?Sized;
    /// The string, when this is one.
    fn as_str(&self) -> Option<&str>;
    /// The object, when this is one.
    fn as_object(&self) -> Option<&Self::Object>;
    /// The array's elements, when this is one.
    fn as_array(&self) -> Option<&[Self]>;
    /// Whether this is `null`.
    fn is_null(&self) -> bool;
    /// The JSON type for messages: `null`, `a boolean`, `a number`, `a string`, `an array`,
    /// `an object`.
    fn type_name(&self) -> &'static str;
}

/// A JSON object of values `V`: its keys, each once, in document order.
pub trait JsonObject<V> {
    /// Number of keys.
    fn len(&self) -> usize;
    /// Whether it has no key.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The value of `key` (`null` included).
    fn get(&self, key: &str) -> Option<&V>;
    /// Keys and values in document order.
    fn entries<'s>(&'s self) -> impl Iterator<Item = (&'s str, &'s V)>
    where
        V: 's;
}

impl Json for Value {
    type Object = Map<String, Value>;
    fn as_str(&self) -> Option<&str> {
        Value::as_str(self)
    }
    fn as_object(&self) -> Option<&Map<String, Value>> {
        Value::as_object(self)
    }
    fn as_array(&self) -> Option<&[Value]> {
        Value::as_array(self).map(Vec::as_slice)
    }
    fn is_null(&self) -> bool {
        Value::is_null(self)
    }
    fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Number(_) => "a number",
            Value::String(_) => "a string",
            Value::Array(_) => "an array",
            Value::Object(_) => "an object",
        }
    }
}

/// Objects of at most this many keys are searched key by key in [`Fields::get`].
const SCAN_KEYS: usize = 12;

impl JsonObject<Value> for Map<String, Value> {
    fn len(&self) -> usize {
        Map::len(self)
    }
    fn get(&self, key: &str) -> Option<&Value> {
        // A body's objects are small: up to `SCAN_KEYS` keys, comparing them costs less than
        // hashing `key` (SipHash) for the map's index (issue 23: ~20 look-ups per payment,
        // most of them of fields not given). Keys are unique, so the answer is the map's.
        if Map::len(self) <= SCAN_KEYS {
            self.iter().find_map(|(k, v)| (k == key).then_some(v))
        } else {
            Map::get(self, key)
        }
    }
    fn entries<'s>(&'s self) -> impl Iterator<Item = (&'s str, &'s Value)>
    where
        Value: 's,
    {
        self.iter().map(|(k, v)| (k.as_str(), v))
    }
}

impl<'t> Json for crate::xs2a::tree::Node<'t> {
    type Object = crate::xs2a::tree::Object<'t>;
    fn as_str(&self) -> Option<&str> {
        crate::xs2a::tree::Node::as_str(self)
    }
    fn as_object(&self) -> Option<&crate::xs2a::tree::Object<'t>> {
        match self {
            crate::xs2a::tree::Node::Object(o) => Some(o),
            _ => None,
        }
    }
    fn as_array(&self) -> Option<&[Self]> {
        match self {
            crate::xs2a::tree::Node::Array(a) => Some(a),
            _ => None,
        }
    }
    fn is_null(&self) -> bool {
        crate::xs2a::tree::Node::is_null(self)
    }
    fn type_name(&self) -> &'static str {
        use crate::xs2a::tree::Node;
        match self {
            Node::Null => "null",
            Node::Bool(_) => "a boolean",
            Node::Number => "a number",
            Node::String(_) => "a string",
            Node::Array(_) => "an array",
            Node::Object(_) => "an object",
        }
    }
}

impl<'t> JsonObject<crate::xs2a::tree::Node<'t>> for crate::xs2a::tree::Object<'t> {
    fn len(&self) -> usize {
        crate::xs2a::tree::Object::len(self)
    }
    fn get(&self, key: &str) -> Option<&crate::xs2a::tree::Node<'t>> {
        crate::xs2a::tree::Object::get(self, key)
    }
    fn entries<'s>(&'s self) -> impl Iterator<Item = (&'s str, &'s crate::xs2a::tree::Node<'t>)>
    where
        crate::xs2a::tree::Node<'t>: 's,
    {
        self.iter()
    }
}

/// A JSON object being read, with its path: of a [`serde_json::Value`] by default, or of
/// any [`Json`] tree.
pub struct Fields<'a, V: Json = Value> {
    map: &'a V::Object,
    path: String,
}

impl<V: Json> Clone for Fields<'_, V> {
    fn clone(&self) -> Self {
        Fields {
            map: self.map,
            path: self.path.clone(),
        }
    }
}

impl<V: Json> std::fmt::Debug for Fields<'_, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fields")
            .field(
                "keys",
                &self.map.entries().map(|(k, _)| k).collect::<Vec<_>>(),
            )
            .field("path", &self.path)
            .finish()
    }
}

impl<'a, V: Json + 'a> Fields<'a, V> {
    /// The object `map` at `path` (`""` for the body).
    pub fn new(map: &'a V::Object, path: impl Into<String>) -> Self {
        Fields {
            map,
            path: path.into(),
        }
    }

    /// `value` at `path` as an object with only `allowed` keys.
    ///
    /// Errors: not an object (named `body` when `path` is empty); a key not in `allowed`
    /// (named by its path, listing the allowed ones).
    pub fn of(value: &'a V, path: &str, allowed: &[&str]) -> Result<Self, FieldError> {
        let Some(map) = value.as_object() else {
            return Err(FieldError::new(
                if path.is_empty() { "body" } else { path },
                format!(
                    "{} must be a JSON object, not {}",
                    if path.is_empty() { "the body" } else { path },
                    json_type(value)
                ),
            ));
        };
        if let Some((k, _)) = map.entries().find(|(k, _)| !allowed.contains(k)) {
            let p = join(path, k);
            return Err(FieldError::new(
                &p,
                format!("unknown field {p}; the fields are: {}", allowed.join(", ")),
            ));
        }
        Ok(Fields::new(map, path))
    }

    /// The object's own path (`""` for the body).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The object's fields as given.
    pub fn map(&self) -> &'a V::Object {
        self.map
    }

    /// The path of field `key`.
    pub fn at(&self, key: &str) -> String {
        join(&self.path, key)
    }

    /// Field `key`, `None` when absent or `null`.
    pub fn get(&self, key: &str) -> Option<&'a V> {
        self.map.get(key).filter(|v| !v.is_null())
    }

    /// Field `key` as `T` by `pick` (e.g. [`Json::as_str`]); `None` when absent or `null`.
    ///
    /// Errors: `pick` refuses the value: `<path> must be <kind>, not <JSON type>`.
    fn typed<T>(
        &self,
        key: &str,
        kind: &str,
        pick: impl FnOnce(&'a V) -> Option<T>,
    ) -> Result<Option<T>, FieldError> {
        let Some(v) = self.get(key) else {
            return Ok(None);
        };
        pick(v).map(Some).ok_or_else(|| {
            let p = self.at(key);
            FieldError::new(&p, format!("{p} must be {kind}, not {}", json_type(v)))
        })
    }

    /// Whether field `key` is present and not `null`.
    pub fn has(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// A refusal of field `key` with `text`.
    pub fn error(&self, key: &str, text: impl Into<String>) -> FieldError {
        FieldError::new(self.at(key), text)
    }

    /// Field `key` is missing; `what` says what it should hold.
    pub fn missing(&self, key: &str, what: &str) -> FieldError {
        let p = self.at(key);
        FieldError::new(&p, format!("{p} is missing: {what}"))
    }

    /// A string of at most `max` characters without control characters, trimmed; `None`
    /// when absent, `null`, empty or blank (see the module rules).
    ///
    /// Errors: not a string, too long, a control character.
    pub(crate) fn opt_str(&self, key: &str, max: usize) -> Result<Option<String>, FieldError> {
        Ok(self.opt_text(key, max)?.map(str::to_string))
    }

    /// [`Fields::opt_str`] borrowed from the body: the same checks and refusals, the text
    /// not copied (issue 23: a field only checked, or parsed into another type, was copied
    /// into a `String` first).
    ///
    /// Errors: those of [`Fields::opt_str`].
    pub(crate) fn opt_text(&self, key: &str, max: usize) -> Result<Option<&'a str>, FieldError> {
        let Some(s) = self.typed(key, "a string", V::as_str)? else {
            return Ok(None);
        };
        let s = s.trim();
        if s.is_empty() {
            return Ok(None);
        }
        // The path is built only for a refusal (issue 23: five paths per accepted payment).
        // An ASCII text (the usual one) is counted and checked by its bytes: one character
        // per byte, and its control characters are the ASCII ones (issue 23: the two passes
        // decoded every character).
        let ascii = s.is_ascii();
        let n = if ascii { s.len() } else { s.chars().count() };
        if n > max {
            let p = self.at(key);
            return Err(FieldError::new(
                &p,
                format!("{p} is {n} characters long; at most {max} are allowed"),
            ));
        }
        let control = if ascii {
            s.bytes().any(|b| b.is_ascii_control())
        } else {
            s.chars().any(char::is_control)
        };
        if control {
            let p = self.at(key);
            return Err(FieldError::new(
                &p,
                format!("{p} contains a control character"),
            ));
        }
        Ok(Some(s))
    }

    /// [`Fields::opt_str`] whose value must pass `valid`; `what` names the rule in the
    /// refusal `<path> "<value>" is not <what>` (e.g. `a BIC`).
    ///
    /// Errors: those of [`Fields::opt_str`]; a value `valid` refuses.
    pub(crate) fn opt_checked(
        &self,
        key: &str,
        max: usize,
        valid: impl Fn(&str) -> bool,
        what: &str,
    ) -> Result<Option<String>, FieldError> {
        match self.opt_str(key, max)? {
            Some(v) if !valid(&v) => {
                let p = self.at(key);
                Err(FieldError::new(&p, format!("{p} {v:?} is not {what}")))
            }
            v => Ok(v),
        }
    }

    /// [`Fields::opt_str`], required; `what` says what it should hold.
    ///
    /// Errors: those of [`Fields::opt_str`]; absent, `null`, empty or blank.
    pub(crate) fn req_str(&self, key: &str, max: usize, what: &str) -> Result<String, FieldError> {
        self.req_text(key, max, what).map(str::to_string)
    }

    /// [`Fields::req_str`] borrowed from the body ([`Fields::opt_text`]).
    ///
    /// Errors: those of [`Fields::req_str`].
    pub(crate) fn req_text(
        &self,
        key: &str,
        max: usize,
        what: &str,
    ) -> Result<&'a str, FieldError> {
        self.opt_text(key, max)?.ok_or_else(|| {
            let p = self.at(key);
            FieldError::new(&p, format!("{p} is missing or empty: {what}"))
        })
    }

    /// Field `key` as an object (any keys); `None` when absent or `null`.
    ///
    /// Errors: not an object.
    pub(crate) fn opt_obj(&self, key: &str) -> Result<Option<Fields<'a, V>>, FieldError> {
        Ok(self
            .typed(key, "a JSON object", V::as_object)?
            .map(|m| Fields::new(m, self.at(key))))
    }

    /// [`Fields::opt_obj`], required; `what` says what it should hold.
    ///
    /// Errors: those of [`Fields::opt_obj`]; absent or `null`.
    pub(crate) fn req_obj(&self, key: &str, what: &str) -> Result<Fields<'a, V>, FieldError> {
        self.opt_obj(key)?.ok_or_else(|| self.missing(key, what))
    }

    /// Field `key` as an array of at most `max` elements; `None` when absent or `null`.
    ///
    /// Errors: not an array, too many elements.
    pub(crate) fn opt_array(&self, key: &str, max: usize) -> Result<Option<&'a [V]>, FieldError> {
        let Some(a) = self.typed(key, "an array", V::as_array)? else {
            return Ok(None);
        };
        let p = self.at(key);
        if a.len() > max {
            return Err(FieldError::new(
                &p,
                format!("{p} has {} elements; at most {max} are allowed", a.len()),
            ));
        }
        Ok(Some(a))
    }

    /// A UUID string (a resource id).
    ///
    /// Errors: those of [`Fields::opt_str`]; not a UUID.
    pub(crate) fn opt_uuid(&self, key: &str) -> Result<Option<Uuid>, FieldError> {
        match self.opt_text(key, 100)? {
            None => Ok(None),
            Some(s) => Uuid::parse_str(s).map(Some).map_err(|_| {
                let p = self.at(key);
                FieldError::new(&p, format!("{p} {s:?} is not a UUID (a resource id)"))
            }),
        }
    }

    /// A currency code: three capital letters (ISO 4217, Berlin Group `currencyCode`).
    ///
    /// Errors: those of [`Fields::opt_str`]; another shape.
    pub(crate) fn opt_currency(&self, key: &str) -> Result<Option<String>, FieldError> {
        match self.opt_text(key, 3)? {
            None => Ok(None),
            Some(c) if is_currency(c) => Ok(Some(c.to_string())),
            Some(c) => {
                let p = self.at(key);
                Err(FieldError::new(
                    &p,
                    format!("{p} {c:?} is not an ISO 4217 currency code (three capital letters)"),
                ))
            }
        }
    }

    /// An ISO 8601 calendar date `YYYY-MM-DD` (Berlin Group `format: date`, RFC 3339
    /// `full-date`: four-digit year, two-digit month and day).
    ///
    /// Errors: those of [`Fields::opt_str`]; another shape or no such day.
    pub(crate) fn opt_date(&self, key: &str) -> Result<Option<NaiveDate>, FieldError> {
        let Some(s) = self.opt_text(key, 10)? else {
            return Ok(None);
        };
        parse_iso_date(s).map(Some).ok_or_else(|| {
            let p = self.at(key);
            FieldError::new(
                &p,
                format!("{p} {s:?} is not an ISO 8601 date (YYYY-MM-DD)"),
            )
        })
    }
}

/// An ISO 8601 calendar date written exactly `YYYY-MM-DD` (Berlin Group `format: date`, RFC
/// 3339 `full-date`); `None` for another shape (`2026-3-1`, `+2026-03-01`) or no such day.
pub(crate) fn parse_iso_date(s: &str) -> Option<NaiveDate> {
    let shape_ok = s.len() == 10
        && s.bytes().enumerate().all(|(i, b)| {
            if i == 4 || i == 7 {
                b == b'-'
            } else {
                b.is_ascii_digit()
            }
        });
    shape_ok
        .then(|| NaiveDate::parse_from_str(s, "%Y-%m-%d").ok())
        .flatten()
}

/// Unix seconds `secs` as an RFC 3339 UTC date-time in whole seconds (Berlin Group
/// `ISODateTime`, e.g. `2026-11-24T10:02:00Z`); empty when `secs` is out of chrono's range
/// (beyond ±262,000 years).
pub fn rfc3339(secs: i64) -> String {
    chrono::DateTime::<chrono::Utc>::from_timestamp(secs, 0)
        .map(|d| d.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// [`Fields::get`] finds what the map's own look-up finds, below, at and above
    /// [`SCAN_KEYS`], for given keys, absent keys, `null`s and a key that is a prefix of
    /// another.
    #[test]
    fn get_answers_as_the_maps_look_up_for_every_size() {
        for n in 0..=SCAN_KEYS + 3 {
            let mut map = Map::new();
            for i in 0..n {
                let v = if i % 3 == 2 { Value::Null } else { json!(i) };
                map.insert(format!("key{i}"), v);
            }
            let f = Fields::<Value>::new(&map, "");
            for i in 0..n + 2 {
                for key in [format!("key{i}"), format!("key{i}x"), "key".to_string()] {
                    let expected = map.get(&key).filter(|v| !v.is_null());
                    assert_eq!(f.get(&key), expected, "{n} keys, {key}");
                    assert_eq!(f.has(&key), expected.is_some(), "{n} keys, {key}");
                }
            }
        }
    }

    /// [`Fields::opt_str`] before its ASCII path (issue 23): two passes over the characters.
    fn opt_str_by_chars(text: &str, path: &str, max: usize) -> Result<Option<String>, FieldError> {
        let s = text.trim();
        if s.is_empty() {
            return Ok(None);
        }
        let n = s.chars().count();
        if n > max {
            return Err(FieldError::new(
                path,
                format!("{path} is {n} characters long; at most {max} are allowed"),
            ));
        }
        if s.chars().any(char::is_control) {
            return Err(FieldError::new(
                path,
                format!("{path} contains a control character"),
            ));
        }
        Ok(Some(s.to_string()))
    }

    /// [`Fields::opt_str`] answers as the character-by-character reading it replaces, for
    /// every ASCII character and some beyond (controls, whitespace and non-breaking spaces
    /// of Latin-1 and Unicode, two- to four-byte characters) alone, between letters, at
    /// either end, and in texts around the limit.
    #[test]
    fn opt_str_is_the_character_by_character_reading() {
        let mut chars: Vec<char> = (0u8..=0x7f).map(char::from).collect();
        chars.extend([
            '\u{80}', '\u{85}', '\u{9f}', '\u{a0}', 'é', 'ø', '\u{2028}', '\u{3000}', '€', '中',
            '😀', '\u{feff}',
        ]);
        let mut texts: Vec<String> = vec![String::new(), "abc".into(), "a b".into()];
        for c in &chars {
            texts.push(c.to_string());
            texts.push(format!("a{c}b"));
            texts.push(format!("{c}ab"));
            texts.push(format!("ab{c}"));
            texts.push(format!("{c}{c}{c}{c}{c}"));
            texts.push(format!("abcd{c}"));
            texts.push(format!(" {c} xyz "));
        }
        for n in 0..8 {
            texts.push("x".repeat(n));
            texts.push("é".repeat(n));
            texts.push(format!(" {} ", "ab".repeat(n)));
        }
        for text in &texts {
            let map = json!({"k": text});
            let f = Fields::<Value>::new(map.as_object().unwrap(), "at");
            for max in [0, 1, 2, 3, 4, 5, 6, 35] {
                assert_eq!(
                    f.opt_str("k", max),
                    opt_str_by_chars(text, "at.k", max),
                    "{text:?}, at most {max}"
                );
            }
        }
    }

    #[test]
    fn empty_strings_are_absent_and_paths_name_the_field() {
        let v = json!({"a": "  ", "b": null, "c": 1, "d": {"e": "x"}, "t": "2026-01-05"});
        let f = Fields::of(&v, "", &["a", "b", "c", "d", "t"]).unwrap();
        assert_eq!(f.opt_str("a", 5), Ok(None));
        assert_eq!(f.opt_str("b", 5), Ok(None));
        let e = f.req_str("a", 5, "a name").unwrap_err();
        assert_eq!(e.path, "a");
        assert_eq!(e.text, "a is missing or empty: a name");
        let e = f.opt_str("c", 5).unwrap_err();
        assert_eq!(e.text, "c must be a string, not a number");
        let d = f.req_obj("d", "an object").unwrap();
        assert_eq!(d.at("e"), "d.e");
        assert_eq!(d.opt_str("e", 0).unwrap_err().path, "d.e");
        assert!(f.opt_date("t").unwrap().is_some());
        let e = Fields::of(&v, "", &["a"]).unwrap_err();
        assert_eq!(e.path, "b");
        let e = Fields::of(&json!([1]), "", &[]).unwrap_err();
        assert_eq!(e.path, "body");
        let bad = json!({"t": "2026-1-5", "u": "x\u{7}"});
        let g = Fields::of(&bad, "p[0]", &["t", "u"]).unwrap();
        assert_eq!(g.opt_date("t").unwrap_err().path, "p[0].t");
        assert!(g.opt_str("u", 5).is_err());
    }
}
