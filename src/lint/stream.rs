//! The lint of a large answer without its whole JSON tree.
//!
//! A `serde_json::Value` takes about eight times the text (a 20 MB transaction report about
//! 170 MiB, with `preserve_order`), so a 2xx body longer than [`STREAM_ABOVE`] is read in one
//! pass that keeps a *skeleton*: the body with the elements of its arrays left out. Each
//! element is parsed on its own, checked, and dropped:
//!
//! - against a Berlin Group schema ([`Mode::Schema`]): an array is read element by element
//!   when its place in the body is reached through `properties` of schemas with no
//!   combinator (`allOf`, `anyOf`, `oneOf`, `not`, `patternProperties`, ...), and its own
//!   schema has nothing but `type` (allowing arrays), `items` (one schema) and
//!   descriptions. Each element is validated against the schema of `items`, and the
//!   skeleton, where that array is empty, against the answer's schema. With those
//!   conditions an empty array cannot fail its schema, and every element meets exactly the
//!   `items` schema it would meet in the whole tree, so the findings are those of the
//!   whole body. A member no schema applies to (its object's schema neither names it nor
//!   has an `additionalProperties` schema) is not validated at all, so its arrays are
//!   skipped. Any other array is kept whole in the skeleton.
//! - by the structural rules ([`Mode::Structure`]): every array is read element by element,
//!   each element checked on its own (the rules look at one object at a time).
//! - only for JSON syntax and the interface document's rules on top-level fields
//!   ([`Mode::Syntax`]): elements are skipped.
//!
//! Memory: the skeleton plus one element at a time. The findings are the same as with the
//! whole tree; when there are more schema errors than the lint reports, which ones come
//! first may differ (elements' errors, in body order, come before the skeleton's).

use serde::Deserialize as _;
use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::Finding;
use super::spec::Spec;

/// Bodies longer than this (1 MiB) are linted streamed (module docs); shorter ones as one
/// tree.
pub(super) const STREAM_ABOVE: usize = 1 << 20;

/// What the elements of a streamed array are checked against.
pub(super) enum Mode {
    /// The definition `key` of the compiled file (`transactionsResponse-200_json`, ...).
    Schema(String),
    /// The structural rules (`_links`, amounts, statuses; a 2xx no schema covers).
    Structure,
    /// Nothing: JSON syntax only.
    Syntax,
}

/// What one pass over a large body found.
pub(super) struct Streamed {
    /// The body with the elements of its streamed arrays left out.
    pub(super) skeleton: Value,
    /// Schema errors of the elements ([`Mode::Schema`]): (JSON pointer, message), at most
    /// the limit given.
    pub(super) errors: Vec<(String, String)>,
    /// Structural findings of the elements ([`Mode::Structure`]).
    pub(super) findings: Vec<Finding>,
}

/// Reads `body` once (module docs), checking the elements of its arrays by `mode`; at most
/// `limit` schema errors are kept.
///
/// Errors: the body is not one JSON value (serde_json's error, as for a whole tree).
pub(super) fn parse(
    spec: &Spec,
    mode: &Mode,
    body: &[u8],
    limit: usize,
) -> Result<Streamed, serde_json::Error> {
    let mut ctx = Ctx {
        spec,
        mode,
        limit,
        at: String::new(),
        errors: Vec::new(),
        findings: Vec::new(),
    };
    let plan = match mode {
        Mode::Schema(key) => ctx
            .resolve(format!("#/definitions/{key}"))
            .map_or(Plan::Whole, Plan::At),
        Mode::Structure | Mode::Syntax => Plan::Free,
    };
    let mut de = serde_json::Deserializer::from_slice(body);
    let skeleton = Node {
        ctx: &mut ctx,
        plan,
    }
    .deserialize(&mut de)?;
    de.end()?;
    Ok(Streamed {
        skeleton,
        errors: ctx.errors,
        findings: ctx.findings,
    })
}

/// How a node of the body is read.
#[derive(Clone)]
enum Plan {
    /// Its schema is at this location (references followed): objects descend by
    /// `properties`, arrays are streamed when their schema allows it.
    At(String),
    /// Kept whole (no streaming below it).
    Whole,
    /// Every array below is streamed ([`Mode::Structure`], [`Mode::Syntax`]).
    Free,
    /// No schema applies here (a member its object's schema does not name, with no
    /// `additionalProperties` schema): every array below is streamed and its elements
    /// skipped.
    Unchecked,
}

/// Keywords that make a schema's children depend on more than `properties`: below them
/// nothing is streamed.
const COMBINATORS: [&str; 10] = [
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "dependencies",
    "patternProperties",
    "additionalItems",
];

/// The only keywords a streamed array's schema may have.
const ARRAY_KEYWORDS: [&str; 4] = ["type", "items", "description", "title"];

struct Ctx<'s> {
    spec: &'s Spec,
    mode: &'s Mode,
    limit: usize,
    /// JSON pointer of the node being read.
    at: String,
    errors: Vec<(String, String)>,
    findings: Vec<Finding>,
}

impl Ctx<'_> {
    /// `location` with `$ref`s followed, when it leads to a schema object.
    fn resolve(&self, mut location: String) -> Option<String> {
        for _ in 0..32 {
            let s = self.spec.schema_at(&location)?;
            match s.get("$ref").and_then(Value::as_str) {
                Some(r) if r.starts_with("#/") => location = r.to_string(),
                Some(_) => return None,
                None => return s.is_object().then_some(location),
            }
        }
        None
    }

    /// The plan of member `key` of an object read by `plan`.
    fn member(&self, plan: &Plan, key: &str) -> Plan {
        match plan {
            Plan::Free => Plan::Free,
            Plan::Whole => Plan::Whole,
            Plan::Unchecked => Plan::Unchecked,
            Plan::At(loc) => {
                let Some(s) = self.spec.schema_at(loc) else {
                    return Plan::Whole;
                };
                if COMBINATORS.iter().any(|k| s.get(k).is_some()) {
                    return Plan::Whole;
                }
                if s.get("properties").and_then(|p| p.get(key)).is_some() {
                    return self
                        .resolve(format!("{loc}/properties/{}", escape(key)))
                        .map_or(Plan::Whole, Plan::At);
                }
                match s.get("additionalProperties") {
                    // Not validated beyond its name (`false` refuses the name alone).
                    None | Some(Value::Bool(_)) => Plan::Unchecked,
                    Some(_) => self
                        .resolve(format!("{loc}/additionalProperties"))
                        .map_or(Plan::Whole, Plan::At),
                }
            }
        }
    }

    /// How an array read by `plan` is read.
    fn array(&self, plan: &Plan) -> Array {
        match plan {
            Plan::Free => match self.mode {
                Mode::Structure => Array::Structure,
                _ => Array::Skip,
            },
            Plan::Unchecked => Array::Skip,
            Plan::Whole => Array::Whole,
            Plan::At(loc) => self.streamed(loc).map_or(Array::Whole, Array::Schema),
        }
    }

    /// The validator of the elements when the array whose schema is at `loc` can be
    /// streamed (module docs).
    fn streamed(&self, loc: &str) -> Option<std::sync::Arc<jsonschema::Validator>> {
        {
            {
                let s = self.spec.schema_at(loc)?.as_object()?;
                if !s.keys().all(|k| ARRAY_KEYWORDS.contains(&k.as_str())) {
                    return None;
                }
                let allows_array = match s.get("type") {
                    None => true,
                    Some(Value::String(t)) => t == "array",
                    Some(Value::Array(ts)) => ts.iter().any(|t| t == "array"),
                    Some(_) => false,
                };
                if !allows_array || !s.get("items").is_some_and(Value::is_object) {
                    return None;
                }
                self.spec.validator(&format!("{loc}/items")).ok()
            }
        }
    }

    /// Validates element `i` of the array at [`Ctx::at`].
    fn validate(&mut self, validator: &jsonschema::Validator, i: usize, v: &Value) {
        // Most elements conform: the boolean check allocates no error iterator.
        if self.errors.len() >= self.limit || validator.is_valid(v) {
            return;
        }
        let room = self.limit - self.errors.len();
        for e in validator.iter_errors(v).take(room) {
            self.errors.push((
                format!("{}/{i}{}", self.at, e.instance_path()),
                e.to_string(),
            ));
        }
    }
}

/// How an array is read.
enum Array {
    /// Kept whole in the skeleton.
    Whole,
    /// Streamed, each element validated against the schema of `items`.
    Schema(std::sync::Arc<jsonschema::Validator>),
    /// Streamed, each element checked by the structural rules.
    Structure,
    /// Streamed, the elements skipped.
    Skip,
}

/// `key` as a JSON pointer segment.
fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// One node of the body, read by its plan.
struct Node<'c, 's> {
    ctx: &'c mut Ctx<'s>,
    plan: Plan,
}

impl<'de> DeserializeSeed<'de> for Node<'_, '_> {
    type Value = Value;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        match self.plan {
            Plan::Whole => Value::deserialize(d),
            _ => d.deserialize_any(self),
        }
    }
}

impl<'de> Visitor<'de> for Node<'_, '_> {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let plan = self.ctx.member(&self.plan, &key);
            let len = self.ctx.at.len();
            self.ctx.at.push('/');
            self.ctx.at.push_str(&escape(&key));
            let v = map.next_value_seed(Node {
                ctx: self.ctx,
                plan,
            });
            self.ctx.at.truncate(len);
            out.insert(key, v?);
        }
        Ok(Value::Object(out))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut i = 0;
        match self.ctx.array(&self.plan) {
            Array::Whole => {
                let mut out = Vec::new();
                while let Some(v) = seq.next_element::<Value>()? {
                    out.push(v);
                }
                return Ok(Value::Array(out));
            }
            Array::Schema(validator) => {
                while let Some(v) = seq.next_element::<Value>()? {
                    self.ctx.validate(&validator, i, &v);
                    i += 1;
                }
            }
            Array::Structure => {
                while let Some(v) = seq.next_element::<Value>()? {
                    let mut at = format!("{}/{i}", self.ctx.at);
                    super::rules::structure(self.ctx.spec, &v, &mut at, &mut self.ctx.findings);
                    i += 1;
                }
            }
            Array::Skip => while seq.next_element::<IgnoredAny>()?.is_some() {},
        }
        Ok(Value::Array(Vec::new()))
    }
}
