//! A JSON request body parsed once into a tree that borrows its strings from the body
//! ([`Node`]), read by the shared body reader ([`crate::xs2a::fields::Fields`]) like a
//! [`serde_json::Value`]; used for payment bodies (issue 23: a `Value` costs a `String` per
//! key and per string, and an `IndexMap` with a SipHash per key).
//!
//! The same document as `serde_json::from_slice::<Value>` (crate feature `preserve_order`)
//! gives: the same parser, so the same refusals with the same texts; keys in document order;
//! a repeated key keeps its first place and takes its last value (`IndexMap::insert`).
//! Strings without escapes borrow from the body, the others are owned; a number keeps no
//! value (nothing of a payment body reads one: an `amount` as a number is refused, any other
//! number is an unknown field or a field of the wrong type).

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

/// A JSON value of a body parsed by [`from_slice`].
#[derive(Debug, Clone)]
pub enum Node<'a> {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// Any number (its value is not kept).
    Number,
    /// A string, borrowed from the body when it holds no escape.
    String(Cow<'a, str>),
    /// An array.
    Array(Vec<Node<'a>>),
    /// An object.
    Object(Object<'a>),
}

/// Objects of more keys than this are looked up through a hash index (a body of 1 MiB can
/// hold an object of ~100,000 keys: searching it key by key for each repeated key or each
/// field read would be quadratic).
const SCAN_KEYS: usize = 16;

/// A JSON object: its keys in document order, each once.
#[derive(Debug, Clone, Default)]
pub struct Object<'a> {
    entries: Vec<(Cow<'a, str>, Node<'a>)>,
    /// Key → place in `entries`, for objects of more than [`SCAN_KEYS`] keys.
    index: Option<HashMap<Cow<'a, str>, usize>>,
}

impl<'a> Object<'a> {
    /// Number of keys.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// The value of `key`, when present (`null` included).
    pub fn get(&self, key: &str) -> Option<&Node<'a>> {
        self.position(key).map(|i| &self.entries[i].1)
    }

    /// The place of `key` in `entries`: through the index when there is one.
    fn position(&self, key: &str) -> Option<usize> {
        match &self.index {
            Some(index) => index.get(key).copied(),
            None => self.entries.iter().position(|(k, _)| k == key),
        }
    }

    /// The keys and values in document order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Node<'a>)> {
        self.entries.iter().map(|(k, v)| (k.as_ref(), v))
    }

    /// `value` under `key`: a new key goes last, a repeated one keeps its place and takes
    /// `value` (as `serde_json::Map::insert` with `preserve_order`).
    fn insert(&mut self, key: Cow<'a, str>, value: Node<'a>) {
        if let Some(i) = self.position(&key) {
            self.entries[i].1 = value;
            return;
        }
        if let Some(index) = &mut self.index {
            index.insert(key.clone(), self.entries.len());
        }
        self.entries.push((key, value));
        if self.index.is_none() && self.entries.len() > SCAN_KEYS {
            self.index = Some(
                self.entries
                    .iter()
                    .enumerate()
                    .map(|(i, (k, _))| (k.clone(), i))
                    .collect(),
            );
        }
    }
}

impl Node<'_> {
    /// The string, when this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Node::String(s) => Some(s),
            _ => None,
        }
    }

    /// Whether this is `null`.
    pub fn is_null(&self) -> bool {
        matches!(self, Node::Null)
    }

    /// Whether this is a number.
    pub fn is_number(&self) -> bool {
        matches!(self, Node::Number)
    }
}

/// `body` parsed as one JSON document.
///
/// Errors: serde_json's, with the texts `serde_json::from_slice::<Value>` gives (the same
/// parser: syntax, trailing characters, nesting deeper than 128, numbers out of range).
pub fn from_slice(body: &[u8]) -> serde_json::Result<Node<'_>> {
    serde_json::from_slice(body)
}

impl<'de> Deserialize<'de> for Node<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NodeVisitor)
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any valid JSON value")
    }

    fn visit_bool<E>(self, b: bool) -> Result<Node<'de>, E> {
        Ok(Node::Bool(b))
    }

    fn visit_i64<E>(self, _: i64) -> Result<Node<'de>, E> {
        Ok(Node::Number)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Node<'de>, E> {
        Ok(Node::Number)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Node<'de>, E> {
        Ok(Node::Number)
    }

    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Node<'de>, E> {
        Ok(Node::String(Cow::Borrowed(s)))
    }

    fn visit_str<E>(self, s: &str) -> Result<Node<'de>, E> {
        Ok(Node::String(Cow::Owned(s.to_owned())))
    }

    fn visit_string<E>(self, s: String) -> Result<Node<'de>, E> {
        Ok(Node::String(Cow::Owned(s)))
    }

    fn visit_none<E>(self) -> Result<Node<'de>, E> {
        Ok(Node::Null)
    }

    fn visit_unit<E>(self) -> Result<Node<'de>, E> {
        Ok(Node::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Node<'de>, D::Error> {
        Node::deserialize(d)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node<'de>, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Node::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node<'de>, A::Error> {
        let mut object = Object::default();
        while let Some(Key(key)) = map.next_key()? {
            let value = map.next_value()?;
            object.insert(key, value);
        }
        Ok(Node::Object(object))
    }
}

/// An object key, borrowed from the body when it holds no escape.
struct Key<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(KeyVisitor)
    }
}

struct KeyVisitor;

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = Key<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string key")
    }

    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Key<'de>, E> {
        Ok(Key(Cow::Borrowed(s)))
    }

    fn visit_str<E>(self, s: &str) -> Result<Key<'de>, E> {
        Ok(Key(Cow::Owned(s.to_owned())))
    }

    fn visit_string<E>(self, s: String) -> Result<Key<'de>, E> {
        Ok(Key(Cow::Owned(s)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::xs2a::fields::Json;
    use serde_json::Value;

    /// The tree as a `Value`, numbers as `0` (the tree keeps no number's value).
    fn value(n: &Node<'_>) -> Value {
        match n {
            Node::Null => Value::Null,
            Node::Bool(b) => Value::Bool(*b),
            Node::Number => Value::from(0),
            Node::String(s) => Value::String(s.to_string()),
            Node::Array(a) => Value::Array(a.iter().map(value).collect()),
            Node::Object(o) => {
                Value::Object(o.iter().map(|(k, v)| (k.to_string(), value(v))).collect())
            }
        }
    }

    /// `Value` with its numbers as `0`.
    fn zeroed(v: Value) -> Value {
        match v {
            Value::Number(_) => Value::from(0),
            Value::Array(a) => Value::Array(a.into_iter().map(zeroed).collect()),
            Value::Object(m) => Value::Object(m.into_iter().map(|(k, v)| (k, zeroed(v))).collect()),
            v => v,
        }
    }

    /// Every document parses to what `serde_json::from_slice::<Value>` gives (keys in order,
    /// repeated keys at their first place with their last value, below and above the index
    /// size, escaped keys and strings), and every refused document is refused with the same
    /// text.
    #[test]
    fn the_tree_is_the_value_serde_json_reads() {
        let mut big = String::from("{");
        for i in 0..40 {
            big.push_str(&format!("\"k{}\": {i}, ", i % 25));
        }
        big.push_str("\"k3\": \"last\", \"k\\u0030\": [1, {\"a\": 1, \"a\": null}]}");
        let mut small_dups = String::from("{\"b\": 1, \"a\": 2, \"b\": \"x\"");
        for i in 0..(SCAN_KEYS + 2) {
            small_dups.push_str(&format!(", \"n{i}\": {i}"));
        }
        small_dups.push_str(", \"a\": {\"z\": 1}, \"n0\": true}");
        let deep_ok = format!("{}1{}", "[".repeat(127), "]".repeat(127));
        let deep_bad = format!("{}1{}", "[".repeat(129), "]".repeat(129));
        let docs: Vec<String> = [
            r#"{"a": "x", "b": {"amount": "1.00"}, "c": [true, false, null, -1.5e3]}"#,
            r#"{"e\u00f8\"": "v\n\u00e6", "plain": "blåbær", "": ""}"#,
            r#"  [1, 2, "3"]  "#,
            r#""just a string""#,
            "12",
            "null",
            r#"{"a": 1, "a": 2}"#,
            big.as_str(),
            small_dups.as_str(),
            deep_ok.as_str(),
            deep_bad.as_str(),
            "",
            "{",
            r#"{"a": 1,}"#,
            r#"{"a" 1}"#,
            r#"{"a": 1} x"#,
            r#"{1: 2}"#,
            r#"{"a": 1e400}"#,
            r#"{"a": 18446744073709551616}"#,
            r#"{"a": -9223372036854775809}"#,
            r#"{"a": "\ud800"}"#,
            r#"{"a": "\x"}"#,
            "{\"a\": \"\u{1}\"}",
            r#"{"a": tru}"#,
            "\u{feff}{}",
            "[1,]",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        for doc in &docs {
            let want = serde_json::from_slice::<Value>(doc.as_bytes());
            let got = from_slice(doc.as_bytes());
            match (want, got) {
                (Ok(w), Ok(g)) => {
                    let (w, g) = (zeroed(w), value(&g));
                    assert_eq!(
                        serde_json::to_string(&g).unwrap(),
                        serde_json::to_string(&w).unwrap(),
                        "{doc}"
                    );
                }
                (Err(w), Err(g)) => assert_eq!(g.to_string(), w.to_string(), "{doc}"),
                (w, g) => panic!("{doc}: {w:?} against {:?}", g.map(|g| value(&g))),
            }
        }
        // Invalid UTF-8 is refused as by `Value`.
        let bad = b"{\"a\": \"\xff\"}";
        assert_eq!(
            from_slice(bad).unwrap_err().to_string(),
            serde_json::from_slice::<Value>(bad)
                .unwrap_err()
                .to_string()
        );
    }

    /// A string without escapes is borrowed from the body, one with an escape is owned; an
    /// object of many keys finds each of them.
    #[test]
    fn strings_borrow_and_big_objects_find_their_keys() {
        let doc = br#"{"plain": "text", "esc": "a\"b"}"#;
        let n = from_slice(doc).unwrap();
        let o = n.as_object().unwrap();
        assert!(matches!(
            o.get("plain"),
            Some(Node::String(Cow::Borrowed("text")))
        ));
        assert!(matches!(o.get("esc"), Some(Node::String(Cow::Owned(s))) if s == "a\"b"));
        assert!(o.get("absent").is_none());
        let mut big = String::from("{");
        for i in 0..100 {
            if i > 0 {
                big.push(',');
            }
            big.push_str(&format!("\"k{i}\": \"{i}\""));
        }
        big.push('}');
        let n = from_slice(big.as_bytes()).unwrap();
        let o = n.as_object().unwrap();
        assert_eq!(o.len(), 100);
        for i in 0..100 {
            assert_eq!(
                o.get(&format!("k{i}")).and_then(Node::as_str),
                Some(&*i.to_string())
            );
        }
        assert!(o.get("k100").is_none());
    }
}
