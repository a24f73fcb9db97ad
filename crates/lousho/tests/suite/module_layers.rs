//! A structure check over the whole library (`crates/lousho/src`): its
//! layers only point down, and its modules import each other without cycles.
//!
//! # The layers, lowest first
//!
//! A module may use its own layer and the layers below it, never one above.
//!
//! 0. `sync`, `error_chain`, `interpolate`: helpers with no domain of their own;
//! 1. `tool`;
//! 2. `model`, `policy`, `builtin`, `skills` (local skills read through
//!    the built-in file sandbox), `cassette` (record and replay model and
//!    MCP traffic: it wraps models and rmcp transports, so the MCP client
//!    and the agent plug it in from above);
//! 3. `telemetry`;
//! 4. `mcp` (its shared pieces) and `mcp::client`;
//! 5. `session`;
//! 6. `agent`;
//! 7. `mcp::server`;
//! 8. `spec` (then the CLI, a separate crate).
//!
//! This departs from the order issue 29 wrote (`… → mcp client → agent →
//! session / telemetry → mcp server → spec`) in two places, each the
//! smallest change that lets the code keep its shape:
//! - `telemetry` sits below the MCP client and the agent, which open its
//!   spans: the span helpers take plain values (a status name, token counts,
//!   an error's text), never agent types;
//! - `session` sits below `agent`: the agent persists its conversations
//!   through the `SessionStore` trait (and `AgentError` names `StoreError`),
//!   so the store cannot be above it; the paused run a store keeps
//!   (`RunState`) lives in `session` and `agent` re-exports it.
//!
//! `lib.rs` and `mcp.rs` are facades (they re-export); a path through them
//! (`crate::Agent`, `crate::mcp::McpClient`) counts as a use of the module
//! the item comes from.
//!
//! # Cycles
//!
//! Every file is a node; an edge is a path to another file's module that is
//! neither its ancestor nor its descendant (a module file re-exporting its
//! children, and children using their parent's items, are not cycles).
//!
//! Paths are found in the code with comments and the `#[cfg(test)] mod`
//! parts left out: `crate::…` and `super::…` (`use` lines and paths in code).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src");

/// The layers, lowest first (see the module docs).
const LAYERS: &[&[&str]] = &[
    &["sync", "error_chain", "interpolate"],
    &["tool"],
    &["model", "policy", "builtin", "skills", "cassette"],
    &["telemetry"],
    &["mcp", "mcp::client"],
    &["session"],
    &["agent"],
    &["mcp::server"],
    &["spec"],
];

/// Cycles still to be broken (issue 29), each as its sorted files. Nothing
/// may be added here; remove an entry when its cycle goes.
const KNOWN_CYCLES: &[&[&str]] = &[
    // The server's rewrite (issue 29) owns these two files.
    &["mcp/server/agent_tool", "mcp/server/sessions"],
];

type ModPath = Vec<String>;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module a file holds: `src/agent/run.rs` → `[agent, run]`, `lib.rs` → `[]`.
fn module_of(file: &Path) -> ModPath {
    let rel = file.strip_prefix(ROOT).unwrap().with_extension("");
    let parts: ModPath = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts == ["lib"] { Vec::new() } else { parts }
}

/// The code of a file: comments dropped, cut at the first `#[cfg(test)] mod`.
fn code(text: &str) -> String {
    let mut kept = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let trimmed = line.trim();
        let test_module = trimmed.starts_with("#[cfg(")
            && trimmed.contains("test")
            && lines
                .peek()
                .is_some_and(|next| next.trim_start().starts_with("mod "));
        if test_module {
            break;
        }
        kept.push(match line.find("//") {
            Some(i) => &line[..i],
            None => line,
        });
    }
    kept.join("\n")
}

fn ident(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// The items of a `{a, b::{c, d}}` group's inside, split at its top-level commas.
fn group_items(inside: &str) -> Vec<&str> {
    let mut items = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in inside.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&inside[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&inside[start..]);
    items.into_iter().filter(|i| !i.trim().is_empty()).collect()
}

/// The paths written at the start of `s`: `a::b::C` is one, `a::{b, c::D}` two.
fn paths_at(s: &str) -> Vec<ModPath> {
    let s = s.trim_start();
    if let Some(group) = s.strip_prefix('{') {
        let mut depth = 1;
        for (i, c) in group.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        return group_items(&group[..i])
                            .into_iter()
                            .flat_map(paths_at)
                            .collect();
                    }
                }
                _ => {}
            }
        }
        return Vec::new();
    }
    let name = ident(s);
    if name.is_empty() {
        return Vec::new();
    }
    match s[name.len()..].strip_prefix("::") {
        Some(rest) => {
            let tails = paths_at(rest);
            if tails.is_empty() {
                vec![vec![name.to_owned()]]
            } else {
                tails
                    .into_iter()
                    .map(|mut t| {
                        t.insert(0, name.to_owned());
                        t
                    })
                    .collect()
            }
        }
        None => vec![vec![name.to_owned()]],
    }
}

/// Whether the byte before `i` may start a path (not part of a longer one).
fn starts_path(code: &str, i: usize) -> bool {
    let before = code[..i].chars().next_back();
    !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':')
}

/// Every crate path a file's code names, made absolute.
fn references(code: &str, module: &ModPath) -> Vec<ModPath> {
    let mut found = Vec::new();
    for (i, _) in code.match_indices("crate::") {
        if starts_path(code, i) {
            found.extend(paths_at(&code[i + "crate::".len()..]));
        }
    }
    for (i, _) in code.match_indices("super::") {
        if !starts_path(code, i) {
            continue;
        }
        let mut rest = &code[i..];
        let mut base = module.clone();
        while let Some(r) = rest.strip_prefix("super::") {
            rest = r;
            base.pop();
        }
        found.extend(
            paths_at(rest)
                .into_iter()
                .map(|p| [base.clone(), p].concat()),
        );
    }
    found
}

/// What a facade re-exports: item name → the path it comes from.
fn reexports(file: &Path, module: &ModPath) -> BTreeMap<String, ModPath> {
    let text = code(&std::fs::read_to_string(file).unwrap());
    let mut map = BTreeMap::new();
    for (i, _) in text.match_indices("pub use ") {
        for path in paths_at(&text[i + "pub use ".len()..]) {
            let Some(last) = path.last().cloned() else {
                continue;
            };
            let absolute = match path.first().map(String::as_str) {
                Some("crate") => path[1..].to_vec(),
                _ => [module.clone(), path].concat(),
            };
            // The first wins: a later `pub use crate::{…}` (a prelude) points back here.
            map.entry(last).or_insert(absolute);
        }
    }
    map
}

/// The crate's files and modules, with the facades' re-exports.
struct Crate {
    files: Vec<(PathBuf, ModPath)>,
    modules: BTreeSet<ModPath>,
    facades: BTreeMap<ModPath, BTreeMap<String, ModPath>>,
}

impl Crate {
    fn read() -> Self {
        let mut paths = Vec::new();
        rust_files(Path::new(ROOT), &mut paths);
        let files: Vec<(PathBuf, ModPath)> = paths
            .into_iter()
            .map(|f| {
                let m = module_of(&f);
                (f, m)
            })
            .collect();
        let modules = files.iter().map(|(_, m)| m.clone()).collect();
        let mut facades = BTreeMap::new();
        for (file, module) in &files {
            if module.is_empty() || *module == ["mcp"] {
                facades.insert(module.clone(), reexports(file, module));
            }
        }
        Crate {
            files,
            modules,
            facades,
        }
    }

    /// `path` with a facade's re-export replaced by where the item is from.
    fn resolve(&self, path: &ModPath) -> ModPath {
        let mut path = path.clone();
        for _ in 0..4 {
            let Some((facade, names)) = self
                .facades
                .iter()
                .filter(|(f, _)| path.starts_with(f) && path.len() > f.len())
                .max_by_key(|(f, _)| f.len())
            else {
                break;
            };
            let next = &path[facade.len()];
            let mut child = facade.clone();
            child.push(next.clone());
            if self.modules.contains(&child) {
                break;
            }
            match names.get(next) {
                Some(from) if *from != path[..=facade.len()] => {
                    path = [from.clone(), path[facade.len() + 1..].to_vec()].concat();
                }
                _ => break,
            }
        }
        path
    }

    /// The longest module `path` lies in (`None`: the crate root or outside).
    fn module_at(&self, path: &ModPath) -> Option<ModPath> {
        (1..=path.len())
            .rev()
            .map(|n| path[..n].to_vec())
            .find(|m| self.modules.contains(m))
    }

    /// Every file's module and the modules its paths land in.
    fn uses(&self) -> Vec<(ModPath, ModPath, String)> {
        let mut out = Vec::new();
        for (file, module) in &self.files {
            let text = code(&std::fs::read_to_string(file).unwrap());
            for path in references(&text, module) {
                let resolved = self.resolve(&path);
                if let Some(to) = self.module_at(&resolved) {
                    out.push((module.clone(), to, resolved.join("::")));
                }
            }
        }
        out
    }
}

/// The layer unit of a module: its top-level module, or `mcp::client` /
/// `mcp::server`.
fn unit(module: &ModPath) -> Option<String> {
    match module.as_slice() {
        [] => None,
        [mcp, side, ..] if mcp == "mcp" && (side == "client" || side == "server") => {
            Some(format!("mcp::{side}"))
        }
        [top, ..] => Some(top.clone()),
    }
}

fn layer(unit: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&unit))
}

/// `(from file, to path, why)` for every use of a higher layer.
fn upward(krate: &Crate) -> Vec<(String, String, String)> {
    let mut found = BTreeSet::new();
    for (from, to, path) in krate.uses() {
        let (Some(a), Some(b)) = (unit(&from), unit(&to)) else {
            continue;
        };
        let la = layer(&a).unwrap_or_else(|| panic!("`{a}` is in no layer: add it to LAYERS"));
        let lb = layer(&b).unwrap_or_else(|| panic!("`{b}` is in no layer: add it to LAYERS"));
        if lb > la {
            found.insert((
                from.join("/"),
                path,
                format!("`{a}` (layer {la}) uses `{b}` (layer {lb})"),
            ));
        }
    }
    found.into_iter().collect()
}

/// The strongly connected components with more than one module (Tarjan).
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct Walk<'a> {
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        next: usize,
        out: Vec<Vec<String>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, v: &'a str) {
            self.index.insert(v, self.next);
            self.low.insert(v, self.next);
            self.next += 1;
            self.stack.push(v);
            self.on_stack.insert(v);
            for w in self.graph.get(v).into_iter().flatten() {
                let w = w.as_str();
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let low = self.low[v].min(self.low[w]);
                    self.low.insert(v, low);
                } else if self.on_stack.contains(w) {
                    let low = self.low[v].min(self.index[w]);
                    self.low.insert(v, low);
                }
            }
            if self.low[v] == self.index[v] {
                let mut component = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack.remove(w);
                    component.push(w.to_owned());
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    self.out.push(component);
                }
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !walk.index.contains_key(v.as_str()) {
            walk.visit(v);
        }
    }
    walk.out
}

/// File → files it uses (neither its ancestors nor its descendants).
fn file_graph(krate: &Crate) -> BTreeMap<String, BTreeSet<String>> {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (from, to, _) in krate.uses() {
        let edges = graph.entry(from.join("/")).or_default();
        if !from.starts_with(&to) && !to.starts_with(&from) {
            edges.insert(to.join("/"));
        }
    }
    graph
}

#[test]
fn layers_only_point_down() {
    let krate = Crate::read();
    assert!(
        krate
            .modules
            .contains(&vec!["agent".to_owned(), "run".to_owned()])
    );
    let found = upward(&krate);
    let found: Vec<String> = found
        .iter()
        .map(|(file, path, why)| format!("{file}.rs uses {path}: {why}"))
        .collect();
    assert!(
        found.is_empty(),
        "imports pointing up the layers (crates/lousho/tests/suite/module_layers.rs has the order; \
         move the shared item down, or pass plain values):\n{}",
        found.join("\n")
    );
}

#[test]
fn modules_import_each_other_without_cycles() {
    let krate = Crate::read();
    let graph = file_graph(&krate);
    let found = cycles(&graph);
    let new: Vec<String> = found
        .iter()
        .filter(|c| !KNOWN_CYCLES.iter().any(|k| k.iter().eq(c.iter())))
        .map(|component| {
            let edges: Vec<String> = component
                .iter()
                .flat_map(|from| {
                    graph[from]
                        .iter()
                        .filter(|to| component.contains(to))
                        .map(move |to| format!("  {from} -> {to}"))
                })
                .collect();
            format!("{component:?}:\n{}", edges.join("\n"))
        })
        .collect();
    assert!(new.is_empty(), "module cycles:\n{}", new.join("\n"));
}

#[test]
fn the_structure_check_reads_grouped_nested_and_relative_paths() {
    let module = vec!["mcp".to_owned(), "client".to_owned(), "oauth".to_owned()];
    let text = code(
        "use super::{call::X, error::{Y, Z}};\n// use crate::agent::W;\n\
         use super::super::naming::N;\nfn f() { crate::tool::define_tool(); }\n\
         #[cfg(test)]\nmod tests { use crate::agent::T; }\n",
    );
    let found: Vec<String> = references(&text, &module)
        .into_iter()
        .map(|p| p.join("::"))
        .collect();
    assert_eq!(
        found,
        [
            "tool::define_tool",
            "mcp::client::call::X",
            "mcp::client::error::Y",
            "mcp::client::error::Z",
            "mcp::naming::N",
        ]
    );
    assert_eq!(unit(&module).as_deref(), Some("mcp::client"));
    let krate = Crate::read();
    // `crate::Agent` is the agent module's.
    let agent = krate.resolve(&vec!["Agent".to_owned()]);
    assert_eq!(
        unit(&krate.module_at(&agent).unwrap()).as_deref(),
        Some("agent")
    );
    let mut g = BTreeMap::new();
    g.insert("a".to_owned(), BTreeSet::from(["b".to_owned()]));
    g.insert("b".to_owned(), BTreeSet::from(["a".to_owned()]));
    g.insert("c".to_owned(), BTreeSet::from(["a".to_owned()]));
    assert_eq!(cycles(&g), vec![vec!["a".to_owned(), "b".to_owned()]]);
}
