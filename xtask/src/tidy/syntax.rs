//! One source file read as Rust syntax (syn): its module structure, every path it writes and
//! every string literal, outside test code.
//!
//! Test code is an item under `#[cfg(test)]` (or `#[cfg(all(test, …))]`), a `#[test]`
//! function, or a module named `tests`; only that item is left out, whatever follows it is read.
//!
//! A macro's arguments are tokens, not syntax: in them every run of identifiers joined by `::`
//! is taken as a path and every string literal as a literal. That reads `format!`-style
//! arguments, `vec![…]`, `matches!(…)` and most bodies; a path broken by generic arguments
//! (`a::B::<T>::f`) is seen up to them, and `$crate::…` in a `macro_rules!` body is skipped
//! (it names the crate of whoever expands the macro).

use proc_macro2::{Spacing, TokenStream, TokenTree};
use syn::punctuated::Punctuated;
use syn::visit::{self, Visit};
use syn::{Attribute, Expr, Item, ItemMod, ItemUse, Lit, LitStr, Meta, Token, UseTree};

/// A module's path inside its crate (`[]` is the crate root, `["call", "flow"]` is
/// `crate::call::flow`).
pub type ModPath = Vec<String>;

/// What tidy reads of one file.
#[derive(Debug, Default)]
pub struct FileFacts {
    /// The file's module and the inline modules in it, with what each declares.
    pub modules: Vec<ModuleFacts>,
    /// Every path the file writes, in `use` items and in code.
    pub paths: Vec<PathUse>,
    /// Every string literal, with its line.
    pub literals: Vec<(String, usize)>,
}

/// The items of one module that give it its names.
#[derive(Debug, Default)]
pub struct ModuleFacts {
    /// The module.
    pub path: ModPath,
    /// `mod x;` declarations: the name and the `#[path]` attribute if any.
    pub declared: Vec<(String, Option<String>)>,
    /// Inline modules (`mod x { … }`).
    pub inline: Vec<String>,
    /// Names bound by `use` items, with the path each stands for.
    pub aliases: Vec<(String, RawPath)>,
    /// The paths of glob imports (`use a::*`).
    pub globs: Vec<RawPath>,
    /// Names of the items defined here (functions, types, constants, macros…).
    pub defined: Vec<String>,
}

/// A path as written, with the module it is written in.
#[derive(Debug, Clone)]
pub struct RawPath {
    /// The module the path is written in (its `self`).
    pub scope: ModPath,
    /// The segments; a leading `::` is a segment `::`.
    pub segments: Vec<String>,
}

/// One path in the file.
#[derive(Debug)]
pub struct PathUse {
    /// The path.
    pub path: RawPath,
    /// Its line.
    pub line: usize,
    /// How it is written.
    pub kind: Kind,
}

/// Where a path is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A leaf of a `use` tree; `reexport` when the `use` has a visibility (`pub`,
    /// `pub(crate)`, …).
    Use { reexport: bool },
    /// Anywhere in code: expressions, types, patterns, macro arguments.
    Code,
}

/// Reads one file of module `module`.
pub fn read(module: &ModPath, text: &str) -> Result<FileFacts, String> {
    let file = syn::parse_file(text).map_err(|e| format!("line {}: {e}", e.span().start().line))?;
    let mut facts = FileFacts::default();
    if is_test(&file.attrs) {
        return Ok(facts);
    }
    structure(&file.items, module.clone(), &mut facts.modules);
    let mut collector = Collector {
        scope: module.clone(),
        facts: &mut facts,
    };
    collector.visit_file(&file);
    Ok(facts)
}

/// Whether attributes make an item test code.
pub fn is_test(attrs: &[Attribute]) -> bool {
    attrs.iter().any(|attr| {
        attr.path().is_ident("test")
            || (attr.path().is_ident("cfg")
                && attr.parse_args::<Meta>().is_ok_and(|m| requires_test(&m)))
    })
}

/// Whether a `cfg` predicate holds only under test.
fn requires_test(meta: &Meta) -> bool {
    match meta {
        Meta::Path(path) => path.is_ident("test"),
        Meta::List(list) if list.path.is_ident("all") => list
            .parse_args_with(Punctuated::<Meta, Token![,]>::parse_terminated)
            .is_ok_and(|all| all.iter().any(requires_test)),
        _ => false,
    }
}

fn is_test_module(module: &ItemMod) -> bool {
    module.ident == "tests" || is_test(&module.attrs)
}

/// The attributes of an item (none for items syn keeps as tokens).
fn attrs_of(item: &Item) -> &[Attribute] {
    match item {
        Item::Const(i) => &i.attrs,
        Item::Enum(i) => &i.attrs,
        Item::ExternCrate(i) => &i.attrs,
        Item::Fn(i) => &i.attrs,
        Item::ForeignMod(i) => &i.attrs,
        Item::Impl(i) => &i.attrs,
        Item::Macro(i) => &i.attrs,
        Item::Mod(i) => &i.attrs,
        Item::Static(i) => &i.attrs,
        Item::Struct(i) => &i.attrs,
        Item::Trait(i) => &i.attrs,
        Item::TraitAlias(i) => &i.attrs,
        Item::Type(i) => &i.attrs,
        Item::Union(i) => &i.attrs,
        Item::Use(i) => &i.attrs,
        _ => &[],
    }
}

/// The module structure of `items` (module `path`) and of the inline modules among them.
fn structure(items: &[Item], path: ModPath, out: &mut Vec<ModuleFacts>) {
    let mut facts = ModuleFacts {
        path: path.clone(),
        ..ModuleFacts::default()
    };
    for item in items {
        if is_test(attrs_of(item)) {
            continue;
        }
        let name = match item {
            Item::Mod(module) if is_test_module(module) => continue,
            Item::Mod(module) => {
                let name = module.ident.to_string();
                match &module.content {
                    Some((_, inner)) => {
                        facts.inline.push(name.clone());
                        let mut child = path.clone();
                        child.push(name);
                        structure(inner, child, out);
                    }
                    None => facts.declared.push((name, path_attribute(&module.attrs))),
                }
                continue;
            }
            Item::Use(item) => {
                for leaf in leaves(item) {
                    let raw = RawPath {
                        scope: path.clone(),
                        segments: leaf.segments,
                    };
                    match leaf.binds {
                        Some(name) => facts.aliases.push((name, raw)),
                        None if leaf.glob => facts.globs.push(raw),
                        None => {}
                    }
                }
                continue;
            }
            Item::Const(i) => &i.ident,
            Item::Enum(i) => &i.ident,
            Item::Fn(i) => &i.sig.ident,
            Item::Static(i) => &i.ident,
            Item::Struct(i) => &i.ident,
            Item::Trait(i) => &i.ident,
            Item::TraitAlias(i) => &i.ident,
            Item::Type(i) => &i.ident,
            Item::Union(i) => &i.ident,
            Item::Macro(i) => match &i.ident {
                Some(ident) => ident,
                None => continue,
            },
            _ => continue,
        };
        facts.defined.push(name.to_string());
    }
    out.push(facts);
}

/// The value of a `#[path = "…"]` attribute.
fn path_attribute(attrs: &[Attribute]) -> Option<String> {
    attrs.iter().find_map(|attr| match &attr.meta {
        Meta::NameValue(nv) if nv.path.is_ident("path") => match &nv.value {
            Expr::Lit(lit) => match &lit.lit {
                Lit::Str(s) => Some(s.value()),
                _ => None,
            },
            _ => None,
        },
        _ => None,
    })
}

/// One leaf of a `use` tree.
struct Leaf {
    segments: Vec<String>,
    /// The name it binds (none for a glob or `as _`).
    binds: Option<String>,
    glob: bool,
    line: usize,
}

/// The leaves of a `use` item, groups and nested groups flattened (`use a::{b, c::{self, d}}`
/// is `a::b`, `a::c`, `a::c::d`).
fn leaves(item: &ItemUse) -> Vec<Leaf> {
    let mut prefix = Vec::new();
    if item.leading_colon.is_some() {
        prefix.push("::".to_string());
    }
    let mut out = Vec::new();
    flatten(&item.tree, &mut prefix, &mut out);
    out
}

fn flatten(tree: &UseTree, prefix: &mut Vec<String>, out: &mut Vec<Leaf>) {
    let mut leaf = |ident: &proc_macro2::Ident, binds: Option<String>| {
        let mut segments = prefix.clone();
        if ident != "self" {
            segments.push(ident.to_string());
        }
        let binds = binds.or_else(|| segments.last().cloned());
        out.push(Leaf {
            binds: binds.filter(|b| b != "_"),
            segments,
            glob: false,
            line: ident.span().start().line,
        });
    };
    match tree {
        UseTree::Path(path) => {
            prefix.push(path.ident.to_string());
            flatten(&path.tree, prefix, out);
            prefix.pop();
        }
        UseTree::Name(name) => leaf(&name.ident, None),
        UseTree::Rename(rename) => leaf(&rename.ident, Some(rename.rename.to_string())),
        UseTree::Glob(glob) => out.push(Leaf {
            segments: prefix.clone(),
            binds: None,
            glob: true,
            line: glob.star_token.spans[0].start().line,
        }),
        UseTree::Group(group) => {
            for tree in &group.items {
                flatten(tree, prefix, out);
            }
        }
    }
}

/// Walks the syntax tree for paths and literals, skipping test code.
struct Collector<'a> {
    /// The module being read (the file's, or an inline module in it).
    scope: ModPath,
    facts: &'a mut FileFacts,
}

impl Collector<'_> {
    fn path(&mut self, segments: Vec<String>, line: usize, kind: Kind) {
        self.facts.paths.push(PathUse {
            path: RawPath {
                scope: self.scope.clone(),
                segments,
            },
            line,
            kind,
        });
    }

    /// The paths and string literals of a macro's tokens (see the module's doc).
    fn tokens(&mut self, tokens: TokenStream) {
        let tokens: Vec<TokenTree> = tokens.into_iter().collect();
        let separator = |k: usize| {
            matches!((tokens.get(k), tokens.get(k + 1)),
                (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b)))
                    if a.as_char() == ':' && a.spacing() == Spacing::Joint && b.as_char() == ':')
        };
        let mut i = 0;
        while i < tokens.len() {
            match &tokens[i] {
                TokenTree::Group(group) => self.tokens(group.stream()),
                TokenTree::Literal(literal) => {
                    let token = TokenStream::from(TokenTree::Literal(literal.clone()));
                    if let Ok(s) = syn::parse2::<LitStr>(token) {
                        self.facts
                            .literals
                            .push((s.value(), literal.span().start().line));
                    }
                }
                TokenTree::Ident(ident) => {
                    let after_dollar = i > 0
                        && matches!(&tokens[i - 1], TokenTree::Punct(p) if p.as_char() == '$');
                    let after_separator = i > 1 && separator(i - 2);
                    let mut segments = vec![ident.to_string()];
                    while separator(i + 1) {
                        let Some(TokenTree::Ident(next)) = tokens.get(i + 3) else {
                            break;
                        };
                        segments.push(next.to_string());
                        i += 3;
                    }
                    if !after_dollar && !after_separator {
                        self.path(segments, ident.span().start().line, Kind::Code);
                    }
                }
                TokenTree::Punct(_) => {}
            }
            i += 1;
        }
    }
}

impl<'ast> Visit<'ast> for Collector<'_> {
    fn visit_item(&mut self, item: &'ast Item) {
        if is_test(attrs_of(item)) {
            return;
        }
        match item {
            Item::Mod(module) => self.visit_item_mod(module),
            _ => visit::visit_item(self, item),
        }
    }

    fn visit_item_mod(&mut self, module: &'ast ItemMod) {
        // `mod x;` is structure, not an import; test modules are not read.
        let Some((_, items)) = &module.content else {
            return;
        };
        if is_test_module(module) {
            return;
        }
        self.scope.push(module.ident.to_string());
        for item in items {
            self.visit_item(item);
        }
        self.scope.pop();
    }

    fn visit_item_use(&mut self, item: &'ast ItemUse) {
        let reexport = !matches!(item.vis, syn::Visibility::Inherited);
        for leaf in leaves(item) {
            self.path(leaf.segments, leaf.line, Kind::Use { reexport });
        }
    }

    fn visit_impl_item(&mut self, item: &'ast syn::ImplItem) {
        let attrs: &[Attribute] = match item {
            syn::ImplItem::Const(i) => &i.attrs,
            syn::ImplItem::Fn(i) => &i.attrs,
            syn::ImplItem::Type(i) => &i.attrs,
            syn::ImplItem::Macro(i) => &i.attrs,
            _ => &[],
        };
        if !is_test(attrs) {
            visit::visit_impl_item(self, item);
        }
    }

    fn visit_trait_item(&mut self, item: &'ast syn::TraitItem) {
        let attrs: &[Attribute] = match item {
            syn::TraitItem::Const(i) => &i.attrs,
            syn::TraitItem::Fn(i) => &i.attrs,
            syn::TraitItem::Type(i) => &i.attrs,
            syn::TraitItem::Macro(i) => &i.attrs,
            _ => &[],
        };
        if !is_test(attrs) {
            visit::visit_trait_item(self, item);
        }
    }

    fn visit_local(&mut self, local: &'ast syn::Local) {
        if !is_test(&local.attrs) {
            visit::visit_local(self, local);
        }
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        if path.leading_colon.is_none() {
            if let Some(first) = path.segments.first() {
                let line = first.ident.span().start().line;
                let segments = path.segments.iter().map(|s| s.ident.to_string()).collect();
                self.path(segments, line, Kind::Code);
            }
        }
        // The generic arguments hold paths too.
        visit::visit_path(self, path);
    }

    /// `pub(in crate::a)` says who may see an item, it imports nothing.
    fn visit_vis_restricted(&mut self, _: &'ast syn::VisRestricted) {}

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.visit_path(&mac.path);
        self.tokens(mac.tokens.clone());
    }

    fn visit_attribute(&mut self, attr: &'ast Attribute) {
        match &attr.meta {
            // Documentation is prose.
            _ if attr.path().is_ident("doc") => {}
            // `#[serde(rename = "…")]`: the literals only (its paths are attribute syntax).
            Meta::List(list) => {
                let before = self.facts.paths.len();
                self.tokens(list.tokens.clone());
                self.facts.paths.truncate(before);
            }
            _ => visit::visit_attribute(self, attr),
        }
    }

    fn visit_lit_str(&mut self, lit: &'ast LitStr) {
        self.facts
            .literals
            .push((lit.value(), lit.span().start().line));
    }
}
