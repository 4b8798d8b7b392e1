//! The module structure of docs/architecture.md, checked on every test run (issue 19).
//!
//! Every `.rs` file the library (`src/lib.rs`) and the binary (`src/main.rs`) reach through
//! `mod` declarations is parsed with `syn`; every module path a file names outside
//! `#[cfg(test)]` items is an import: `use` trees, paths starting with `crate::`, `super::`,
//! `self::`, `psd2_console::`, a child module or a name a `use` bound (`store::Store` after
//! `use super::store`), and the same inside macro calls (`format!`, `html!`). An import points
//! at the longest module prefix of the path it names (`crate::sandbox::http::auth::Tpp` is the
//! module `sandbox::http::auth`).
//!
//! The rules (the failure message names the file, the line, the import and the rule):
//! - `src/sandbox`: handlers (`http/`) -> domain (`domain/`) -> store (`store/`), never back;
//!   handlers may read the store; `model.rs` and `clock.rs` (the shared vocabulary) import no
//!   other sandbox module; `errors.rs` (`ApiError`, HTTP statuses) is below the domain, above
//!   the store, and the store never imports it; neither the store, `errors.rs` nor the domain
//!   imports the sandbox's root (`App`: the domain takes a `domain::Ctx`); the domain, the
//!   store and the vocabulary name no HTTP crate ([`HTTP_CRATES`]); no cycle between the
//!   sandbox's modules.
//! - `src/sandbox/http`: no transaction call ([`TRANSACTION_METHODS`]): the handlers parse,
//!   call the domain and answer.
//! - `src/client`: no import of `sandbox` or `tui`, no cycle between its modules.
//! - top level: [`LAYERS`], the picture of docs/architecture.md as a table: a module imports
//!   only modules of a lower layer; `client` never imports `sandbox`; no cycle between
//!   top-level modules.
//!
//! A cycle ignores a module's imports of its own submodules (`mod.rs` re-exporting a child):
//! the parent owns the child already.
//!
//! [`ALLOWED`] lists the imports that break a rule today and are being removed; an entry that
//! no longer occurs fails too, so the list only shrinks.
//!
//! The second half checks docs/architecture.md's file map against the files under `src/`.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use proc_macro2::{Spacing, TokenStream, TokenTree};
use syn::visit::{self, Visit};

/// The imports that break a rule today, `(importing module, imported module)` as module paths
/// of the library (`sandbox::domain::access`) or the binary (`main::...`), each removed by the
/// branch its comment names. An import on this list is left out of every rule (and out of the
/// cycle search); an entry that no longer occurs fails `every_allowed_import_still_occurs`.
/// The lead empties the list when the branches are merged.
const ALLOWED: &[(&str, &str)] = &[];

/// The top-level modules in layers, lowest first (docs/architecture.md, "The layers"): a
/// module imports only modules of a lower layer. `main` is the binary (`src/main.rs` and the
/// modules it declares).
const LAYERS: &[&[&str]] = &[
    // Helpers that know no protocol.
    &["fsutil", "terminal", "logging"],
    // The XS2A vocabulary (operations, headers, model, statuses), the event stream's wire
    // types, the HTTP/1.1 server loop.
    &["xs2a", "sandbox_events", "http_server"],
    &["cert"],
    // Shared by both sides: signing and verifying; profiles and data paths.
    &["signing", "profile"],
    // The conformance lint; the redirect listener (the console's SCA callback).
    &["lint", "redirect"],
    // The two halves: neither imports the other.
    &["client", "sandbox"],
    // Readers of the client's history and flows: doctor, flow diagrams, lessons.
    &["doctor", "flow", "lessons"],
    // Composition: the modules that know both client and sandbox.
    &["embedded", "case"],
    &["tui"],
    &["main"],
];

// ---------------------------------------------------------------------------------------
// Reading the sources
// ---------------------------------------------------------------------------------------

/// A module: `main` for the binary's root, else the library path (`sandbox::http::auth`), or
/// `main::cli::send` for a module of the binary. The library's root is `""`.
type ModPath = String;

/// One import: a module path a file names.
#[derive(Clone, Debug)]
struct Import {
    /// Path of the file, relative to the package (`src/sandbox/store/mod.rs`).
    file: String,
    line: usize,
    /// The path as written (`super::auth::Tpp`).
    text: String,
    /// The module whose code names it.
    from: ModPath,
    /// The module the path points into.
    to: ModPath,
}

/// A path as written in one module, before resolution.
struct Raw {
    module: Vec<String>,
    segs: Vec<String>,
    line: usize,
}

/// Whether `attrs` hold `#[cfg(test)]` (or a `cfg` naming `test` without `not`).
fn cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        if !a.path().is_ident("cfg") {
            return false;
        }
        let syn::Meta::List(list) = &a.meta else {
            return false;
        };
        let idents = idents_of(list.tokens.clone());
        idents.iter().any(|i| i == "test") && !idents.iter().any(|i| i == "not")
    })
}

fn idents_of(tokens: TokenStream) -> Vec<String> {
    let mut out = Vec::new();
    for t in tokens {
        match t {
            TokenTree::Ident(i) => out.push(i.to_string()),
            TokenTree::Group(g) => out.extend(idents_of(g.stream())),
            _ => {}
        }
    }
    out
}

/// The attributes of a `syn::$kind` (`Item`, `ImplItem`, `TraitItem`) of the listed variants;
/// none for the others (`Verbatim`).
macro_rules! attrs_of {
    ($item:expr, $kind:ident: $($variant:ident),+) => {
        match $item {
            $(syn::$kind::$variant(i) => &i.attrs[..],)+
            _ => &[],
        }
    };
}

fn item_attrs(item: &syn::Item) -> &[syn::Attribute] {
    attrs_of!(item, Item: Const, Enum, ExternCrate, Fn, ForeignMod, Impl, Macro, Mod, Static,
        Struct, Trait, TraitAlias, Type, Union, Use)
}

/// Collects the paths of one file (and its inline modules), its `use` bindings and the
/// modules it declares with `mod name;`.
struct FileReader {
    stack: Vec<String>,
    raws: Vec<Raw>,
    /// module -> name -> the path a `use` bound it to (as written).
    bindings: HashMap<Vec<String>, HashMap<String, Vec<String>>>,
    /// Modules whose code lives in another file: (parent module, name).
    external: Vec<(Vec<String>, String)>,
    /// Inline modules (`mod name { .. }`) and their parent.
    inline: Vec<Vec<String>>,
}

impl FileReader {
    fn record(&mut self, segs: Vec<String>, line: usize) {
        if segs.len() >= 2 || segs.first().is_some_and(|s| s == "crate" || s == "super") {
            self.raws.push(Raw {
                module: self.stack.clone(),
                segs,
                line,
            });
        }
    }

    /// Flattens a `use` tree: every leaf is an import; names and renames become bindings.
    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) => self.use_leaf(prefix, &n.ident, &n.ident),
            syn::UseTree::Rename(r) => self.use_leaf(prefix, &r.ident, &r.rename),
            syn::UseTree::Glob(_) => {
                let line = prefix_line(tree);
                self.record(prefix.clone(), line);
            }
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    self.use_tree(prefix, t);
                }
            }
        }
    }

    fn use_leaf(&mut self, prefix: &[String], ident: &syn::Ident, name: &syn::Ident) {
        let mut segs = prefix.to_vec();
        if ident != "self" {
            segs.push(ident.to_string());
        }
        let name = if ident == "self" && name == "self" {
            segs.last().cloned().unwrap_or_default()
        } else {
            name.to_string()
        };
        if name != "_" {
            self.bindings
                .entry(self.stack.clone())
                .or_default()
                .insert(name, segs.clone());
        }
        self.record(segs, ident.span().start().line);
    }

    /// Paths inside a macro call's tokens: `a::b::c` sequences.
    fn macro_tokens(&mut self, tokens: TokenStream) {
        let trees: Vec<TokenTree> = tokens.into_iter().collect();
        let mut i = 0;
        while i < trees.len() {
            if let TokenTree::Group(g) = &trees[i] {
                self.macro_tokens(g.stream());
                i += 1;
                continue;
            }
            let TokenTree::Ident(first) = &trees[i] else {
                i += 1;
                continue;
            };
            // A leading `::` (an external crate) or `$crate` is not a module of ours.
            let after_colons = i >= 2 && is_colon2(&trees[i - 2], &trees[i - 1]);
            let mut segs = vec![first.to_string()];
            let line = first.span().start().line;
            let mut j = i + 1;
            while j + 1 < trees.len() && is_colon2(&trees[j], &trees[j + 1]) {
                match trees.get(j + 2) {
                    Some(TokenTree::Ident(next)) => {
                        segs.push(next.to_string());
                        j += 3;
                    }
                    _ => break,
                }
            }
            let after_dollar =
                i >= 1 && matches!(&trees[i - 1], TokenTree::Punct(p) if p.as_char() == '$');
            if !after_colons && !after_dollar && segs.len() >= 2 {
                self.record(segs, line);
            }
            i = j.max(i + 1);
        }
    }
}

fn is_colon2(a: &TokenTree, b: &TokenTree) -> bool {
    matches!((a, b), (TokenTree::Punct(x), TokenTree::Punct(y))
        if x.as_char() == ':' && x.spacing() == Spacing::Joint && y.as_char() == ':')
}

fn prefix_line(tree: &syn::UseTree) -> usize {
    match tree {
        syn::UseTree::Glob(g) => g.star_token.span.start().line,
        _ => 0,
    }
}

impl<'ast> Visit<'ast> for FileReader {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        if cfg_test(item_attrs(item)) {
            return;
        }
        match item {
            syn::Item::Mod(m) => {
                let name = m.ident.to_string();
                match &m.content {
                    None => self.external.push((self.stack.clone(), name)),
                    Some((_, items)) => {
                        self.stack.push(name);
                        self.inline.push(self.stack.clone());
                        for i in items {
                            self.visit_item(i);
                        }
                        self.stack.pop();
                    }
                }
            }
            syn::Item::Use(u) => {
                if u.leading_colon.is_none() {
                    self.use_tree(&mut Vec::new(), &u.tree);
                }
            }
            _ => visit::visit_item(self, item),
        }
    }

    fn visit_impl_item(&mut self, item: &'ast syn::ImplItem) {
        if !cfg_test(attrs_of!(item, ImplItem: Const, Fn, Type, Macro)) {
            visit::visit_impl_item(self, item);
        }
    }

    fn visit_trait_item(&mut self, item: &'ast syn::TraitItem) {
        if !cfg_test(attrs_of!(item, TraitItem: Const, Fn, Type, Macro)) {
            visit::visit_trait_item(self, item);
        }
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        if path.leading_colon.is_none() {
            let segs = path.segments.iter().map(|s| s.ident.to_string()).collect();
            let line = path
                .segments
                .first()
                .map_or(0, |s| s.ident.span().start().line);
            self.record(segs, line);
        }
        visit::visit_path(self, path);
    }

    /// `pub(crate)`, `pub(super)`, `pub(in path)` restrict who sees an item; they import
    /// nothing.
    fn visit_visibility(&mut self, _: &'ast syn::Visibility) {}

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        visit::visit_macro(self, mac);
        self.macro_tokens(mac.tokens.clone());
    }
}

/// The parsed crates: every module, the file it lives in, its children and the imports.
struct Tree {
    /// Module path -> file (relative to the package).
    modules: BTreeMap<ModPath, String>,
    imports: Vec<Import>,
    /// Paths into the crates of the HTTP stack ([`HTTP_CRATES`]), `to` the crate's name.
    externals: Vec<Import>,
}

/// The crates of the HTTP stack: the handlers' framework and what it is built on. Only the
/// handlers (and `errors.rs`, the error answers) name them; the domain, the store and the
/// shared vocabulary never see HTTP.
const HTTP_CRATES: &[&str] = &["axum", "hyper", "hyper_util", "http"];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn join(krate: &str, path: &[String]) -> ModPath {
    let mut parts: Vec<&str> = Vec::new();
    if !krate.is_empty() {
        parts.push(krate);
    }
    parts.extend(path.iter().map(String::as_str));
    parts.join("::")
}

/// What one crate's files declare: modules, their children, their `use` bindings, and the
/// paths they name (with the file).
struct Crate {
    /// `""` for the library, `main` for the binary.
    name: &'static str,
    /// Every module of the crate (segments below its root).
    known: BTreeSet<Vec<String>>,
    children: HashMap<Vec<String>, BTreeSet<String>>,
    bindings: HashMap<Vec<String>, HashMap<String, Vec<String>>>,
    raws: Vec<(String, Raw)>,
}

/// Reads both crates: the library from `src/lib.rs` (module paths without prefix) and the
/// binary from `src/main.rs` (module paths under `main`).
fn read_tree() -> &'static Tree {
    static TREE: std::sync::OnceLock<Tree> = std::sync::OnceLock::new();
    TREE.get_or_init(parse_tree)
}

fn parse_tree() -> Tree {
    let mut modules = BTreeMap::new();
    let crates = [
        read_crate("", "src/lib.rs", &mut modules),
        read_crate("main", "src/main.rs", &mut modules),
    ];
    let mut imports = Vec::new();
    let mut externals = Vec::new();
    for (k, c) in crates.iter().enumerate() {
        for (file, raw) in &c.raws {
            let Some((to_k, abs)) = resolve(&crates, k, &raw.module, &raw.segs, 0) else {
                if let Some(krate) = raw
                    .segs
                    .first()
                    .filter(|s| HTTP_CRATES.contains(&s.as_str()))
                {
                    externals.push(Import {
                        file: file.clone(),
                        line: raw.line,
                        text: raw.segs.join("::"),
                        from: join(c.name, &raw.module),
                        to: krate.clone(),
                    });
                }
                continue;
            };
            let target = locate(&crates, to_k, &abs, 0);
            imports.push(Import {
                file: file.clone(),
                line: raw.line,
                text: raw.segs.join("::"),
                from: join(c.name, &raw.module),
                to: target,
            });
        }
    }
    Tree {
        modules,
        imports,
        externals,
    }
}

fn read_crate(
    krate: &'static str,
    root_file: &str,
    modules: &mut BTreeMap<ModPath, String>,
) -> Crate {
    let base = root();
    // Depth-first over `mod name;` declarations: (module path, file).
    let mut todo = vec![(Vec::<String>::new(), root_file.to_string())];
    let mut c = Crate {
        name: krate,
        known: BTreeSet::new(),
        children: HashMap::new(),
        bindings: HashMap::new(),
        raws: Vec::new(),
    };
    while let Some((path, file)) = todo.pop() {
        let text =
            std::fs::read_to_string(base.join(&file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        let ast = syn::parse_file(&text).unwrap_or_else(|e| {
            panic!("{file}:{}: syn cannot parse it: {e}", e.span().start().line)
        });
        let mut reader = FileReader {
            stack: path.clone(),
            raws: Vec::new(),
            bindings: HashMap::new(),
            external: Vec::new(),
            inline: Vec::new(),
        };
        reader.visit_file(&ast);
        modules.insert(join(krate, &path), file.clone());
        c.known.insert(path.clone());
        for m in &reader.inline {
            modules.insert(join(krate, m), file.clone());
            c.known.insert(m.clone());
            if let Some((name, parent)) = m.split_last() {
                c.children
                    .entry(parent.to_vec())
                    .or_default()
                    .insert(name.clone());
            }
        }
        // Where a child's file is: next to `lib.rs`/`main.rs`/`mod.rs`, else in a folder
        // named after this file (`payments.rs` -> `payments/body.rs`).
        let p = Path::new(&file);
        let dir = if ["lib.rs", "main.rs", "mod.rs"]
            .iter()
            .any(|n| p.file_name().is_some_and(|f| f == *n))
        {
            p.parent().unwrap().to_path_buf()
        } else {
            p.with_extension("")
        };
        for (parent, name) in &reader.external {
            c.children
                .entry(parent.clone())
                .or_default()
                .insert(name.clone());
            // Inline parents nest the folder (`mod a { mod b; }` -> `a/b.rs`).
            let mut d = dir.clone();
            for s in &parent[path.len()..] {
                d.push(s);
            }
            let flat = d.join(format!("{name}.rs"));
            let nested = d.join(name).join("mod.rs");
            let child_file = if base.join(&flat).exists() {
                flat
            } else {
                nested
            };
            let mut child = parent.clone();
            child.push(name.clone());
            todo.push((child, child_file.to_string_lossy().into_owned()));
        }
        for (m, b) in reader.bindings {
            c.bindings.entry(m).or_default().extend(b);
        }
        c.raws
            .extend(reader.raws.into_iter().map(|r| (file.clone(), r)));
    }
    c
}

/// The absolute path (crate index, segments) a path written in `module` of crate `k` names,
/// or `None` for an external crate, the prelude or a local name.
fn resolve(
    crates: &[Crate],
    k: usize,
    module: &[String],
    segs: &[String],
    depth: usize,
) -> Option<(usize, Vec<String>)> {
    let first = segs.first()?.as_str();
    if depth > 8 {
        return None;
    }
    let c = &crates[k];
    match first {
        "crate" => Some((k, segs[1..].to_vec())),
        "psd2_console" => Some((0, segs[1..].to_vec())),
        "self" => Some((k, [module, &segs[1..]].concat())),
        "super" => {
            let mut m = module.to_vec();
            let mut n = 0;
            while segs.get(n).is_some_and(|s| s == "super") {
                m.pop();
                n += 1;
            }
            Some((k, [&m[..], &segs[n..]].concat()))
        }
        _ => {
            if c.children.get(module).is_some_and(|ch| ch.contains(first)) {
                return Some((k, [module, segs].concat()));
            }
            let bound = c.bindings.get(module)?.get(first)?;
            if bound.len() == 1 && bound[0] == first {
                return None;
            }
            let whole = [&bound[..], &segs[1..]].concat();
            resolve(crates, k, module, &whole, depth + 1)
        }
    }
}

/// The module an absolute path points into: its longest module prefix, following a name the
/// module only imports (`super::ApiError` in a store module, where `store/mod.rs` has `use
/// crate::sandbox::errors::ApiError`, is `sandbox::errors`; `client::Engine` re-exported
/// from `client::engine` is `client::engine`).
fn locate(crates: &[Crate], k: usize, abs: &[String], depth: usize) -> ModPath {
    let c = &crates[k];
    let n = (0..=abs.len())
        .rev()
        .find(|n| c.known.contains(&abs[..*n]))
        .unwrap_or(0);
    let module = &abs[..n];
    if depth < 8
        && let Some(name) = abs.get(n)
        && let Some(bound) = c.bindings.get(module).and_then(|b| b.get(name))
    {
        let whole = [&bound[..], &abs[n + 1..]].concat();
        if let Some((k2, abs2)) = resolve(crates, k, module, &whole, 0) {
            return locate(crates, k2, &abs2, depth + 1);
        }
    }
    join(c.name, module)
}

// ---------------------------------------------------------------------------------------
// The rules
// ---------------------------------------------------------------------------------------

/// The top-level module of a module path (`sandbox` for `sandbox::http::auth`; `""` for the
/// library's root).
fn top(m: &str) -> &str {
    m.split("::").next().unwrap_or("")
}

/// Whether `m` is `of` or inside it.
fn within(m: &str, of: &str) -> bool {
    m == of || m.strip_prefix(of).is_some_and(|r| r.starts_with("::"))
}

fn is_allowed(i: &Import) -> bool {
    ALLOWED.contains(&(i.from.as_str(), i.to.as_str()))
}

/// The imports between two different modules, one per (from, to) pair (its first
/// occurrence), allowed ones left out.
fn edges(tree: &Tree) -> Vec<&Import> {
    let mut seen = BTreeSet::new();
    tree.imports
        .iter()
        .filter(|i| i.from != i.to && !i.to.is_empty() && !is_allowed(i))
        .filter(|i| seen.insert((i.from.clone(), i.to.clone())))
        .collect()
}

fn breach(i: &Import, rule: &str) -> String {
    format!(
        "{}:{}: `{}` ({} -> {}) breaks the rule: {rule}",
        i.file, i.line, i.text, i.from, i.to
    )
}

/// A part of the sandbox (docs/architecture.md, "The sandbox's layers").
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Part {
    /// `sandbox/mod.rs`: `App`, the router, `spawn`; wires every layer.
    Root,
    Http,
    Domain,
    /// `errors.rs`: `ApiError`; used by handlers and domain, never by the store.
    Errors,
    Store,
    /// `model.rs`, `clock.rs`: any layer may import them; they import no sandbox module.
    Vocabulary,
}

/// The sandbox's modules directly under `src/sandbox` and their part.
const SANDBOX_PARTS: &[(&str, Part)] = &[
    ("http", Part::Http),
    ("domain", Part::Domain),
    ("errors", Part::Errors),
    ("store", Part::Store),
    ("model", Part::Vocabulary),
    ("clock", Part::Vocabulary),
    // The sandbox's interface for case bundles: beside mod.rs, above the layers.
    ("bundle", Part::Root),
];

/// The part of a sandbox module, `Err` naming a module in no part.
fn part(m: &str) -> Result<Part, String> {
    let rest = m.strip_prefix("sandbox").unwrap_or(m);
    let Some(rest) = rest.strip_prefix("::") else {
        return Ok(Part::Root);
    };
    let first = rest.split("::").next().unwrap_or("");
    SANDBOX_PARTS
        .iter()
        .find(|(name, _)| *name == first)
        .map(|(_, p)| *p)
        .ok_or_else(|| format!("sandbox::{first} is in no layer: add it to SANDBOX_PARTS"))
}

/// The rule an import inside the sandbox breaks, if any.
fn sandbox_rule(from: &str, to: &str) -> Option<String> {
    if !within(from, "sandbox") || !within(to, "sandbox") || within(to, from) {
        return None;
    }
    let (f, t) = match (part(from), part(to)) {
        (Ok(f), Ok(t)) => (f, t),
        (Err(e), _) | (_, Err(e)) => return Some(e),
    };
    use Part::*;
    let rule = match (f, t) {
        (Vocabulary, _) => "model.rs and clock.rs import no other sandbox module",
        (Domain, Http) => "http -> domain -> store, never back: the domain imports no handler",
        (Store, Http | Domain) => {
            "http -> domain -> store, never back: the store imports neither handlers nor domain"
        }
        (Store, Errors) => "the store never imports errors.rs (ApiError): it answers StoreError",
        (Store | Errors, Root) => {
            "the store and errors.rs never import the sandbox's root (`App`, the router)"
        }
        (Domain, Root) => {
            "the domain never imports the sandbox's root (`App`, the HTTP layer's state): it \
             takes a `domain::Ctx` and typed inputs"
        }
        (Errors, Http | Domain) => {
            "errors.rs is below the domain: it imports neither handlers nor domain"
        }
        _ => return None,
    };
    Some(rule.to_string())
}

/// The rule a path of a sandbox module into an HTTP crate ([`HTTP_CRATES`]) breaks, if any.
fn http_crate_rule(from: &str, krate: &str) -> Option<String> {
    if !within(from, "sandbox") {
        return None;
    }
    match part(from) {
        Ok(Part::Domain | Part::Store | Part::Vocabulary) => Some(format!(
            "the domain, the store, model.rs and clock.rs never see HTTP: no `{krate}` (the \
             handlers parse the request and hand over typed values)"
        )),
        _ => None,
    }
}

/// The rule an import of a client module breaks, if any.
fn client_rule(from: &str, to: &str) -> Option<String> {
    if !within(from, "client") {
        return None;
    }
    ["sandbox", "tui"]
        .iter()
        .find(|m| within(to, m))
        .map(|m| format!("the client never imports `{m}`"))
}

/// The layer of a top-level module in [`LAYERS`].
fn layer(m: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&m))
}

/// The rule an import between two top-level modules breaks, if any.
fn top_rule(from: &str, to: &str) -> Option<String> {
    let (a, b) = (top(from), top(to));
    if a == b || a.is_empty() || b.is_empty() {
        return None;
    }
    if a == "client" && b == "sandbox" {
        return Some("`client` never imports `sandbox` (embedded composes them)".into());
    }
    match (layer(a), layer(b)) {
        (None, _) => Some(format!("`{a}` is in no layer of LAYERS")),
        (_, None) => Some(format!("`{b}` is in no layer of LAYERS")),
        (Some(x), Some(y)) if y >= x => Some(format!(
            "a top-level module imports only lower layers (LAYERS): `{a}` is in layer {x}, `{b}` in layer {y}"
        )),
        _ => None,
    }
}

/// The cycles among `nodes` (strongly connected components of more than one module), an
/// import of a module's own submodule left out; each with the imports inside it.
fn cycles(edges: &[&Import], node: impl Fn(&str) -> Option<String>) -> Vec<String> {
    let mut graph: BTreeMap<String, BTreeMap<String, &Import>> = BTreeMap::new();
    for i in edges {
        if within(&i.to, &i.from) {
            continue;
        }
        let (Some(a), Some(b)) = (node(&i.from), node(&i.to)) else {
            continue;
        };
        if a != b {
            graph.entry(b.clone()).or_default();
            graph.entry(a).or_default().entry(b).or_insert(i);
        }
    }
    // Tarjan's strongly connected components.
    struct State<'a> {
        graph: &'a BTreeMap<String, BTreeMap<String, &'a Import>>,
        index: HashMap<&'a str, usize>,
        low: HashMap<&'a str, usize>,
        stack: Vec<&'a str>,
        found: Vec<Vec<&'a str>>,
    }
    fn strong<'a>(s: &mut State<'a>, v: &'a str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        for w in s.graph[v].keys() {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                strong(s, w);
                let l = s.low[v].min(s.low[w]);
                s.low.insert(v, l);
            } else if s.stack.contains(&w) {
                let l = s.low[v].min(s.index[w]);
                s.low.insert(v, l);
            }
        }
        if s.low[v] == s.index[v] {
            let at = s.stack.iter().rposition(|x| *x == v).unwrap_or(0);
            let c: Vec<&str> = s.stack.split_off(at);
            if c.len() > 1 {
                s.found.push(c);
            }
        }
    }
    let mut s = State {
        graph: &graph,
        index: HashMap::new(),
        low: HashMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !s.index.contains_key(v.as_str()) {
            strong(&mut s, v);
        }
    }
    s.found
        .iter()
        .map(|c| {
            let mut names: Vec<&str> = c.clone();
            names.sort();
            let inner: Vec<String> = names
                .iter()
                .flat_map(|a| {
                    graph[*a]
                        .iter()
                        .filter(|(b, _)| names.contains(&b.as_str()))
                        .map(|(_, i)| breach(i, "no cycle"))
                })
                .collect();
            format!(
                "cycle {}:\n    {}",
                names.join(" <-> "),
                inner.join("\n    ")
            )
        })
        .collect()
}

/// Every breach of the rules in `tree`: sandbox, client, top level, cycles.
fn breaches(tree: &Tree) -> Vec<String> {
    let edges = edges(tree);
    let mut out: Vec<String> = Vec::new();
    for i in &edges {
        for rule in [
            sandbox_rule(&i.from, &i.to),
            client_rule(&i.from, &i.to),
            top_rule(&i.from, &i.to),
        ]
        .into_iter()
        .flatten()
        {
            out.push(breach(i, &rule));
        }
    }
    let mut seen = BTreeSet::new();
    for i in &tree.externals {
        if seen.insert((&i.from, &i.to))
            && let Some(rule) = http_crate_rule(&i.from, &i.to)
        {
            out.push(breach(i, &rule));
        }
    }
    let inside = |of: &'static str| move |m: &str| within(m, of).then(|| m.to_string());
    out.extend(cycles(&edges, inside("sandbox")));
    out.extend(cycles(&edges, inside("client")));
    out.extend(cycles(&edges, |m| {
        Some(top(m).to_string()).filter(|t| !t.is_empty())
    }));
    out
}

/// Fails with `what` and one line per problem unless `problems` is empty.
fn none<T: std::fmt::Display>(what: &str, problems: impl IntoIterator<Item = T>) {
    let lines: Vec<String> = problems.into_iter().map(|p| p.to_string()).collect();
    assert!(
        lines.is_empty(),
        "{} {what}:\n{}",
        lines.len(),
        lines.join("\n")
    );
}

#[test]
fn imports_follow_the_layers_of_docs_architecture() {
    let tree = read_tree();
    assert!(
        tree.modules.len() > 100,
        "the reader found only {} modules",
        tree.modules.len()
    );
    assert!(
        tree.externals
            .iter()
            .any(|i| i.from.starts_with("sandbox::http") && i.to == "axum"),
        "the reader found no handler naming axum"
    );
    none(
        "imports break docs/architecture.md's layers",
        breaches(tree),
    );
}

// ---------------------------------------------------------------------------------------
// Handlers run no transaction
// ---------------------------------------------------------------------------------------

/// The methods that run a transaction: the store's `Db::write` and `Db::write_raw`,
/// rusqlite's `transaction` and `unchecked_transaction`.
const TRANSACTION_METHODS: &[&str] =
    &["write", "write_raw", "transaction", "unchecked_transaction"];

/// Calls of [`TRANSACTION_METHODS`] outside `#[cfg(test)]` items.
#[derive(Default)]
struct TransactionCalls {
    found: Vec<(usize, String)>,
}

impl<'ast> Visit<'ast> for TransactionCalls {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        if !cfg_test(item_attrs(item)) {
            visit::visit_item(self, item);
        }
    }

    fn visit_impl_item(&mut self, item: &'ast syn::ImplItem) {
        if !cfg_test(attrs_of!(item, ImplItem: Const, Fn, Type, Macro)) {
            visit::visit_impl_item(self, item);
        }
    }

    fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
        let name = call.method.to_string();
        if TRANSACTION_METHODS.contains(&name.as_str()) {
            self.found.push((call.method.span().start().line, name));
        }
        visit::visit_expr_method_call(self, call);
    }
}

/// The transaction calls of one source text, `(line, method)`.
fn transaction_calls(text: &str) -> Vec<(usize, String)> {
    let ast = syn::parse_file(text).expect("the text parses");
    let mut v = TransactionCalls::default();
    v.visit_file(&ast);
    v.found
}

/// The handlers parse, call the domain and answer: every transaction (and the rows it
/// writes) is a domain function's (issue 19, "handlers stop running transactions").
#[test]
fn handlers_run_no_transaction() {
    let files: Vec<String> = source_files()
        .into_iter()
        .filter(|f| f.starts_with("src/sandbox/http/") && f.ends_with(".rs"))
        .collect();
    assert!(files.len() > 20, "only {} handler files", files.len());
    let mut problems = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(root().join(f)).unwrap();
        for (line, method) in transaction_calls(&text) {
            problems.push(format!(
                "{f}:{line}: `.{method}(` runs a transaction in a handler: move it (and the rows \
                 it writes) into a domain function"
            ));
        }
    }
    none("transactions in src/sandbox/http", problems);
}

#[test]
fn a_seeded_transaction_in_a_handler_is_found() {
    let seeded = "use crate::sandbox::App;\n\
        pub async fn create(app: &App) -> Result<(), ApiError> {\n\
            app.db.write(|tx| Ok(store::insert(tx)?))\n\
        }\n\
        fn raw(db: &Db, c: &mut Connection) {\n\
            let _ = db.write_raw(|tx| tx.execute(\"DELETE FROM t\", []));\n\
            let _ = c.transaction();\n\
        }\n\
        #[cfg(test)]\n\
        mod tests {\n\
            fn setup(app: &App) { app.db.write(|tx| Ok(())).unwrap(); }\n\
        }\n";
    assert_eq!(
        transaction_calls(seeded),
        vec![
            (3, "write".to_string()),
            (6, "write_raw".to_string()),
            (7, "transaction".to_string())
        ]
    );
}

#[test]
fn every_allowed_import_still_occurs() {
    let tree = read_tree();
    let stale = ALLOWED
        .iter()
        .filter(|(f, t)| !tree.imports.iter().any(|i| i.from == *f && i.to == *t))
        .map(|(f, t)| format!("{f} -> {t}"));
    none("imports in ALLOWED no longer occur: remove them", stale);
}

#[test]
fn every_top_level_module_is_in_a_layer() {
    let tree = read_tree();
    let tops: BTreeSet<&str> = tree
        .modules
        .keys()
        .map(|m| top(m))
        .filter(|m| !m.is_empty())
        .collect();
    none(
        "top-level modules are in no layer of LAYERS",
        tops.iter().filter(|m| layer(m).is_none()),
    );
    let all = LAYERS.iter().flat_map(|l| l.iter());
    none(
        "modules LAYERS names do not exist",
        all.filter(|m| !tops.contains(*m)),
    );
}

/// The real tree with one more import, as if `file` named `text`.
fn seeded(file: &str, text: &str, from: &str, to: &str) -> Vec<String> {
    let tree = read_tree();
    let (mut imports, mut externals) = (tree.imports.clone(), tree.externals.clone());
    let seed = Import {
        file: file.into(),
        line: 7,
        text: text.into(),
        from: from.into(),
        to: to.into(),
    };
    if HTTP_CRATES.contains(&to) {
        externals.push(seed);
    } else {
        imports.push(seed);
    }
    breaches(&Tree {
        modules: tree.modules.clone(),
        imports,
        externals,
    })
}

/// One seeded import (file, path as written, from, to) and a part of a message each rule
/// it breaks must produce.
const SEEDS: &[(&str, &str, &str, &str, &[&str])] = &[
    (
        "src/sandbox/store/payments.rs",
        "crate::sandbox::http::payments::PaymentBody",
        "sandbox::store::payments",
        "sandbox::http::payments",
        &[
            "src/sandbox/store/payments.rs:7: `crate::sandbox::http::payments::PaymentBody` \
             (sandbox::store::payments -> sandbox::http::payments) breaks the rule: http -> \
             domain -> store, never back: the store imports neither handlers nor domain",
            // The cycle it closes: http::payments imports store::payments.
            "-> sandbox::http::payments) breaks the rule: no cycle",
        ],
    ),
    (
        // The domain takes a `Ctx`, not the handlers' state.
        "src/sandbox/domain/payment.rs",
        "crate::sandbox::App",
        "sandbox::domain::payment",
        "sandbox",
        &[
            "src/sandbox/domain/payment.rs:7: `crate::sandbox::App` (sandbox::domain::payment -> \
           sandbox) breaks the rule: the domain never imports the sandbox's root",
        ],
    ),
    (
        "src/sandbox/domain/events.rs",
        "axum::http::HeaderMap",
        "sandbox::domain::events",
        "axum",
        &[
            "src/sandbox/domain/events.rs:7: `axum::http::HeaderMap` (sandbox::domain::events -> \
           axum) breaks the rule: the domain, the store, model.rs and clock.rs never see HTTP: \
           no `axum`",
        ],
    ),
    (
        "src/sandbox/store/db.rs",
        "hyper::Request",
        "sandbox::store::db",
        "hyper",
        &["never see HTTP: no `hyper`"],
    ),
    (
        "src/sandbox/model.rs",
        "crate::sandbox::clock::Clock",
        "sandbox::model",
        "sandbox::clock",
        &["model.rs and clock.rs import no other sandbox module"],
    ),
    (
        "src/sandbox/store/db.rs",
        "crate::sandbox::App",
        "sandbox::store::db",
        "sandbox",
        &["the store and errors.rs never import the sandbox's root"],
    ),
    (
        "src/client/tls.rs",
        "crate::tui::App",
        "client::tls",
        "tui::app",
        &[
            "the client never imports `tui`",
            "`client` is in layer 5, `tui` in layer 8",
            "(client::tls -> tui::app) breaks the rule: no cycle",
        ],
    ),
    (
        "src/xs2a/mod.rs",
        "crate::sandbox::App",
        "xs2a",
        "sandbox",
        &[
            "`xs2a` is in layer 1, `sandbox` in layer 5",
            "(xs2a -> sandbox) breaks the rule: no cycle",
        ],
    ),
    (
        // client::engine imports client::tls: the seeded import closes a cycle.
        "src/client/tls.rs",
        "super::engine::Engine",
        "client::tls",
        "client::engine",
        &["cycle client::engine <-> client::tls:\n    src/client/engine.rs:"],
    ),
];

#[test]
fn a_seeded_violation_names_file_import_and_rule() {
    for (file, text, from, to, expected) in SEEDS {
        let found = seeded(file, text, from, to);
        assert_eq!(found.len(), expected.len(), "{text} in {file}: {found:#?}");
        for part in *expected {
            assert!(
                found.iter().any(|f| f.contains(part)),
                "{text} in {file}: no message has {part:?}: {found:#?}"
            );
        }
    }
}

// ---------------------------------------------------------------------------------------
// docs/architecture.md
// ---------------------------------------------------------------------------------------

fn architecture() -> String {
    std::fs::read_to_string(root().join("docs/architecture.md")).unwrap()
}

/// The paths in backticks of the file map's rows (`## File map`, last column), each with its
/// row's number.
fn file_map() -> Vec<(usize, String)> {
    let doc = architecture();
    let section = doc
        .split("\n## File map")
        .nth(1)
        .expect("docs/architecture.md has a File map");
    let section = section.split("\n## ").next().unwrap_or(section);
    let mut out = Vec::new();
    // Rows of every table in the section, their headers (`| Role | File |`, `|---|---|`) left
    // out.
    let rows = section
        .lines()
        .filter(|l| l.starts_with('|') && !l.starts_with("|---") && !l.ends_with("| File |"));
    for (n, row) in rows.enumerate() {
        let cell = row
            .trim_end()
            .trim_end_matches('|')
            .rsplit('|')
            .next()
            .unwrap_or("");
        for (k, part) in cell.split('`').enumerate() {
            if k % 2 == 1 && part.contains('/') {
                out.push((n + 1, part.to_string()));
            }
        }
    }
    out
}

/// Every file under `src/` (Rust sources and the code export's templates), relative.
fn source_files() -> BTreeSet<String> {
    let base = root();
    let mut dirs = vec![base.join("src")];
    let mut out = BTreeSet::new();
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                let rel = path.strip_prefix(&base).unwrap();
                out.insert(rel.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    out
}

#[test]
fn the_file_map_names_every_source_file_once_and_only_files_that_exist() {
    let map = file_map();
    let files = source_files();
    let mut rows: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (row, path) in &map {
        rows.entry(path).or_default().push(*row);
    }
    let mut problems: Vec<String> = files
        .iter()
        .filter(|f| !rows.contains_key(f.as_str()))
        .map(|f| format!("{f}: in no row"))
        .collect();
    for (path, r) in &rows {
        let exists = if path.starts_with("src/") {
            files.contains(*path)
        } else {
            root().join(path).exists()
        };
        if !exists {
            problems.push(format!(
                "{path} (row {r:?}): no such file (a `src/` entry names one file)"
            ));
        } else if r.len() > 1 {
            problems.push(format!("{path}: in rows {r:?}, one row each"));
        }
    }
    none("problems in docs/architecture.md's file map", problems);
}

#[test]
fn the_picture_shows_every_top_level_module() {
    let doc = architecture();
    let layers = doc.split("\n## The layers").nth(1).unwrap();
    let picture = layers
        .split("```text")
        .nth(1)
        .unwrap()
        .split("```")
        .next()
        .unwrap();
    let words: BTreeSet<&str> = picture
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .collect();
    let missing = LAYERS
        .iter()
        .flat_map(|l| l.iter().copied())
        .filter(|m| *m != "main" && !words.contains(m));
    none(
        "top-level modules are missing from the picture of docs/architecture.md",
        missing,
    );
}

/// Prints every module and every import between two modules (the one per pair the rules
/// see) when `STRUCTURE_DUMP` is set:
/// `STRUCTURE_DUMP=1 cargo test --test it structure::dump_imports -- --nocapture`.
#[test]
fn dump_imports() {
    if std::env::var_os("STRUCTURE_DUMP").is_none() {
        return;
    }
    let tree = read_tree();
    for (m, f) in &tree.modules {
        println!("MOD {m} {f}");
    }
    for i in edges(tree) {
        println!(
            "EDGE {} -> {} {}:{} {}",
            i.from, i.to, i.file, i.line, i.text
        );
    }
}
