//! The parameter form: the operation list, the values typed per operation and parameter,
//! the highlighted parameter and the text cursor, and the values the console filled in by
//! itself (ids carried from one answer into the next requests).
//!
//! Methods that change a value of the selected operation return whether they did, so the
//! console knows the request preview must be prepared again.

use crate::xs2a::operations::{OPERATIONS, Operation, Param, ParamKind};

/// Whether keys type text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Keys are commands.
    Normal,
    /// Keys type into the highlighted parameter (only Ctrl-c and the INSERT keys are
    /// commands).
    Insert,
}

/// One entry of an operation's parameter form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    /// Parameter name (`body` for the JSON body).
    pub name: &'static str,
    /// Short explanation.
    pub help: &'static str,
    /// Whether the request cannot be built without it.
    pub required: bool,
    /// Value used when left empty (`""`: omitted).
    pub default: &'static str,
    /// The JSON body rather than a path or query parameter.
    pub is_body: bool,
    /// A request header ([`ParamKind::Header`]).
    pub is_header: bool,
    /// The engine fills it when left empty (shown as `auto`).
    pub auto: bool,
}

/// The form fields of `op`: its path and query parameters, `body` when it takes one, then
/// its request headers ([`Operation::header_params`]).
pub fn fields_of(op: &Operation) -> Vec<Field> {
    let field = |p: &Param| Field {
        name: p.name,
        help: p.help,
        required: p.required,
        default: p.default,
        is_body: false,
        is_header: p.kind == ParamKind::Header,
        auto: p.auto,
    };
    let mut v: Vec<Field> = op.params.iter().map(field).collect();
    if op.body.is_some() {
        v.push(Field {
            name: "body",
            help: "JSON body: Enter or e opens the editor (templates: Ctrl-t)",
            required: false,
            default: "",
            is_body: true,
            is_header: false,
            auto: false,
        });
    }
    v.extend(op.header_params().iter().map(field));
    v
}

/// What to prepare: the operation, its non-empty parameter values, and the body text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestSpec {
    /// The operation.
    pub op: &'static Operation,
    /// `(name, value)` of every parameter the user filled in.
    pub params: Vec<(String, String)>,
    /// The body text, when the operation takes one.
    pub body: Option<String>,
}

/// State of the operation finder while it is open.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OperationFinder {
    /// What was typed.
    pub query: String,
    /// Indexes (into the console's operation list) of the operations matching `query`, in list order.
    pub matches: Vec<usize>,
    /// Position in `matches` of the highlighted operation.
    pub cursor: usize,
    /// The selection before the finder opened (restored by Esc).
    pub previous: usize,
}

/// The operation list and the parameter form.
#[derive(Debug)]
pub struct Form {
    /// The operations in display order (grouped).
    pub(crate) ops: Vec<&'static Operation>,
    /// Index of the selected operation in `ops`.
    pub(crate) selected: usize,
    /// The values typed, per operation (as `ops`) and field (as [`fields_of`]).
    pub(crate) values: Vec<Vec<String>>,
    /// The highlighted field.
    pub(crate) field: usize,
    /// The text cursor in the highlighted field, in characters.
    pub(crate) cursor: usize,
    /// Whether keys type into the highlighted field.
    pub(crate) mode: Mode,
    /// Values the console filled in by itself, per parameter name (`body:<op id>` for a
    /// body): a field still holding one is refilled, a value the user typed never is.
    auto_values: Vec<(String, String)>,
    /// The operation finder (`/`), while open.
    pub(crate) finder: Option<OperationFinder>,
}

impl Default for Form {
    /// The whole catalogue, grouped (catalogue order within a group), the first operation
    /// selected, every value empty.
    fn default() -> Self {
        let mut ops: Vec<&'static Operation> = OPERATIONS.iter().collect();
        ops.sort_by_key(|o| o.group); // stable: catalogue order within a group
        let values = ops
            .iter()
            .map(|o| vec![String::new(); fields_of(o).len()])
            .collect();
        Form {
            ops,
            selected: 0,
            values,
            field: 0,
            cursor: 0,
            mode: Mode::Normal,
            auto_values: Vec::new(),
            finder: None,
        }
    }
}

impl Form {
    /// The selected operation.
    pub fn operation(&self) -> &'static Operation {
        self.ops[self.selected]
    }

    /// Index of operation `id` in the list.
    pub fn index_of(&self, id: &str) -> Option<usize> {
        self.ops.iter().position(|o| o.id == id)
    }

    /// Lines of the operation list: one heading per group and one line per operation.
    pub fn rows(&self) -> usize {
        let mut groups = self.ops.iter().map(|o| o.group).collect::<Vec<_>>();
        groups.dedup();
        groups.len() + self.ops.len()
    }

    /// The id of the operation on line `line` of the list (group headings count as lines,
    /// as drawn); `None` on a heading or past the end.
    pub fn op_at_line(&self, line: usize) -> Option<&'static str> {
        let mut i = 0;
        let mut last = None;
        for op in &self.ops {
            if last != Some(op.group) {
                last = Some(op.group);
                if i == line {
                    return None;
                }
                i += 1;
            }
            if i == line {
                return Some(op.id);
            }
            i += 1;
        }
        None
    }

    /// The value typed for parameter `name` of operation `op_id` (`""` when empty).
    pub fn value(&self, op_id: &str, name: &str) -> Option<&str> {
        let oi = self.index_of(op_id)?;
        let fi = fields_of(self.ops[oi])
            .iter()
            .position(|f| f.name == name)?;
        Some(self.values[oi][fi].as_str())
    }

    /// Sets parameter `name` of operation `op_id`: `None` when there is no such parameter,
    /// else whether it is a parameter of the selected operation.
    pub fn set(&mut self, op_id: &str, name: &str, value: &str) -> Option<bool> {
        let oi = self.index_of(op_id)?;
        let fi = fields_of(self.ops[oi])
            .iter()
            .position(|f| f.name == name)?;
        self.values[oi][fi] = value.to_string();
        Some(oi == self.selected)
    }

    /// The request to prepare for the selected operation.
    pub fn request_spec(&self) -> RequestSpec {
        let op = self.operation();
        let mut params = Vec::new();
        let mut body = None;
        for (f, v) in fields_of(op).iter().zip(&self.values[self.selected]) {
            if f.is_body {
                body = Some(v.clone()).filter(|b| !b.trim().is_empty());
            } else if !v.is_empty() {
                params.push((f.name.to_string(), v.clone()));
            }
        }
        RequestSpec { op, params, body }
    }

    /// `(name, value)` of the non-body fields of operation `oi` with a value.
    pub fn param_pairs(&self, oi: usize) -> Vec<(String, String)> {
        fields_of(self.ops[oi])
            .iter()
            .zip(&self.values[oi])
            .filter(|(f, v)| !f.is_body && !v.is_empty())
            .map(|(f, v)| (f.name.to_string(), v.clone()))
            .collect()
    }

    /// The highlighted field's value.
    pub fn current_value(&self) -> &str {
        self.values[self.selected]
            .get(self.field)
            .map(String::as_str)
            .unwrap_or("")
    }

    fn current_value_mut(&mut self) -> Option<&mut String> {
        self.values[self.selected].get_mut(self.field)
    }

    /// Moves the highlight by `delta` fields (clamped), the cursor to the end of its value.
    pub fn move_field(&mut self, delta: isize) {
        let n = fields_of(self.operation()).len();
        if n == 0 {
            return;
        }
        self.field = step(self.field, delta, n);
        self.cursor = self.current_value().chars().count();
    }

    /// Types `c` at the cursor; whether the value changed.
    pub fn type_char(&mut self, c: char) -> bool {
        let cursor = self.cursor;
        let Some(v) = self.current_value_mut() else {
            return false;
        };
        let at = byte_index(v, cursor);
        v.insert(at, c);
        self.cursor += 1;
        true
    }

    /// Deletes the character at the cursor; whether the value changed.
    pub fn remove_at_cursor(&mut self) -> bool {
        let cursor = self.cursor;
        match self.current_value_mut() {
            Some(v) if cursor < v.chars().count() => {
                let at = byte_index(v, cursor);
                v.remove(at);
                true
            }
            _ => false,
        }
    }

    /// Clears the highlighted field's value.
    pub fn clear_field(&mut self) {
        if let Some(v) = self.current_value_mut() {
            v.clear();
        }
        self.cursor = 0;
    }

    /// Sets parameter `name` of every operation that has it to `value`, where it is empty
    /// or still holds the value filled in last time. Returns the titles of the operations
    /// whose value changed, and whether the selected operation's did.
    pub fn prefill(&mut self, name: &str, value: &str) -> (Vec<&'static str>, bool) {
        let last = self.auto_value(name);
        let mut filled = Vec::new();
        let mut selected_changed = false;
        for (oi, op) in self.ops.iter().enumerate() {
            if let Some(fi) = fields_of(op)
                .iter()
                .position(|f| f.name == name && !f.is_body)
            {
                let cur = &self.values[oi][fi];
                if cur.is_empty() || Some(cur) == last.as_ref() {
                    if cur != value {
                        filled.push(op.title);
                        selected_changed |= oi == self.selected;
                    }
                    self.values[oi][fi] = value.to_string();
                }
            }
        }
        self.remember(name.to_string(), value);
        (filled, selected_changed)
    }

    /// Sets the body of operation `op_id` to `body` when it is empty or still the one
    /// filled in last time; whether the selected operation's body changed.
    pub fn prefill_body(&mut self, op_id: &str, body: &str) -> bool {
        let key = format!("body:{op_id}");
        let last = self.auto_value(&key);
        let Some(oi) = self.index_of(op_id) else {
            return false;
        };
        let Some(fi) = fields_of(self.ops[oi]).iter().position(|f| f.is_body) else {
            return false;
        };
        let cur = &self.values[oi][fi];
        if cur.trim().is_empty() || Some(cur) == last.as_ref() {
            self.values[oi][fi] = body.to_string();
            self.remember(key, body);
            return oi == self.selected;
        }
        false
    }

    fn auto_value(&self, key: &str) -> Option<String> {
        self.auto_values
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
    }

    fn remember(&mut self, key: String, value: &str) {
        self.auto_values.retain(|(k, _)| *k != key);
        self.auto_values.push((key, value.to_string()));
    }
}

/// `i` moved by `delta`, clamped to `0..n` (0 when `n` is 0).
pub(crate) fn step(i: usize, delta: isize, n: usize) -> usize {
    if n == 0 {
        return 0;
    }
    if delta < 0 {
        i.saturating_sub(delta.unsigned_abs())
    } else {
        (i + delta as usize).min(n - 1)
    }
}

/// Byte offset of character `char_index` in `s` (its length past the end).
pub(crate) fn byte_index(s: &str, char_index: usize) -> usize {
    s.char_indices()
        .nth(char_index)
        .map(|(i, _)| i)
        .unwrap_or(s.len())
}
