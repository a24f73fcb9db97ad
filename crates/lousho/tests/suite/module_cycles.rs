//! A structure check: the modules of `mcp/client` import each other without
//! cycles. Each top-level module of `src/mcp/client/` is a node (a file under
//! `x/` counts as `x`); an edge is a `super::y` or `crate::mcp::client::y`
//! path in the file's code (comments and `#[cfg(test)]` parts left out).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src/mcp/client");

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

/// The code of a file: comments dropped, cut at the first `#[cfg(test)]`.
fn code(text: &str) -> String {
    let text = text.split("#[cfg(test)]").next().unwrap_or_default();
    text.lines()
        .map(|line| match line.find("//") {
            Some(i) => &line[..i],
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn ident(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// The first path segment of each item after `prefix` (`a` or `{a, b::c}`).
fn first_segments(rest: &str) -> Vec<String> {
    let rest = rest.trim_start();
    if let Some(group) = rest.strip_prefix('{') {
        let mut depth = 0;
        let mut items = Vec::new();
        let mut start = 0;
        for (i, c) in group.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => {
                    items.push(&group[start..i]);
                    break;
                }
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    items.push(&group[start..i]);
                    start = i + 1;
                }
                _ => {}
            }
        }
        return items
            .into_iter()
            .map(|item| ident(item.trim()).to_owned())
            .collect();
    }
    vec![ident(rest).to_owned()]
}

/// The modules of `mcp/client` a file at `depth` (0: `client/x.rs`, 1:
/// `client/x/y.rs`) refers to.
fn references(code: &str, depth: usize, own: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for (i, _) in code.match_indices("crate::mcp::client::") {
        found.extend(first_segments(&code[i + "crate::mcp::client::".len()..]));
    }
    let bytes = code.as_bytes();
    for (i, _) in code.match_indices("super::") {
        // Only the first `super` of a run of them.
        if i >= 7 && &code[i - 7..i] == "super::" {
            continue;
        }
        if i > 0 && (bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_') {
            continue;
        }
        let mut rest = &code[i + "super::".len()..];
        let mut ups = 1;
        while let Some(r) = rest.strip_prefix("super::") {
            rest = r;
            ups += 1;
        }
        match ups.cmp(&(depth + 1)) {
            // `super::x` from `client/own/y.rs` is a sibling inside `own`.
            std::cmp::Ordering::Less => {
                found.insert(own.to_owned());
            }
            std::cmp::Ordering::Equal => found.extend(first_segments(rest)),
            std::cmp::Ordering::Greater => {}
        }
    }
    found
}

/// Every module and the modules it uses.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let root = Path::new(ROOT);
    let mut files = Vec::new();
    rust_files(root, &mut files);
    let modules: BTreeSet<String> = files
        .iter()
        .map(|f| {
            let rel = f.strip_prefix(root).unwrap();
            let first = rel.components().next().unwrap().as_os_str();
            first.to_string_lossy().trim_end_matches(".rs").to_owned()
        })
        .collect();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let rel = file.strip_prefix(root).unwrap();
        let depth = rel.components().count() - 1;
        let own = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_owned();
        let text = std::fs::read_to_string(file).unwrap();
        let uses = references(&code(&text), depth, &own);
        let edges = graph.entry(own.clone()).or_default();
        edges.extend(
            uses.into_iter()
                .filter(|m| modules.contains(m) && *m != own),
        );
    }
    graph
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

#[test]
fn mcp_client_modules_import_each_other_without_cycles() {
    let graph = graph();
    assert!(graph.contains_key("connection") && graph.contains_key("oauth"));
    let found = cycles(&graph);
    let edges: Vec<String> = found
        .iter()
        .flat_map(|component| {
            component.iter().flat_map(|from| {
                graph[from]
                    .iter()
                    .filter(|to| component.contains(to))
                    .map(move |to| format!("{from} -> {to}"))
            })
        })
        .collect();
    assert!(
        found.is_empty(),
        "module cycles in mcp/client: {found:?}\nedges inside them:\n{}",
        edges.join("\n")
    );
}

#[test]
fn the_structure_check_sees_grouped_and_nested_imports() {
    let top = references(
        &code("use super::{call::X, error::Y};\n// use super::live::W;\n"),
        0,
        "connection",
    );
    assert_eq!(top.into_iter().collect::<Vec<_>>(), ["call", "error"]);
    let nested = references(
        &code("use super::super::naming::Z;\nuse super::flow::F;\nuse crate::mcp::client::http;\n"),
        1,
        "oauth",
    );
    assert_eq!(
        nested.into_iter().collect::<Vec<_>>(),
        ["http", "naming", "oauth"]
    );
    let mut g = BTreeMap::new();
    g.insert("a".to_owned(), BTreeSet::from(["b".to_owned()]));
    g.insert("b".to_owned(), BTreeSet::from(["a".to_owned()]));
    g.insert("c".to_owned(), BTreeSet::from(["a".to_owned()]));
    assert_eq!(cycles(&g), vec![vec!["a".to_owned(), "b".to_owned()]]);
}
