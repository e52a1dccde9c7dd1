//! No import circle of more than two files in any crate, read from the sources: each `.rs` file
//! is a module, and a module imports another when its code (tests left out) names it by a
//! `crate::` or `super::` path, in a `use` tree or inline. A module naming an enclosing module
//! (its folder's `mod.rs`, the crate root) is not counted: that is the folder's namespace, which
//! declares the module itself. Two files may need each other (a type and its one helper); a
//! circle of three or more is a layer no one can read bottom-up.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::common::sources::{repo, sources};

type Module = Vec<String>;

/// The module a file is: its path under `src` without `.rs`, `mod`/`lib`/`main` naming the folder.
fn module_of(src: &Path, file: &Path) -> Module {
    let mut parts: Module = file
        .strip_prefix(src)
        .unwrap()
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// The code of a file: before its test module, without comment lines.
fn code(file: &Path) -> String {
    let text = std::fs::read_to_string(file).unwrap();
    let before_tests = text.split("#[cfg(test)]").next().unwrap_or_default();
    before_tests
        .lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The paths a `use` tree names (`a::{b, c::{d, e}}` → `a::b`, `a::c::d`, `a::c::e`).
fn expand_tree(prefix: &[String], tree: &str, into: &mut Vec<Module>) {
    let mut depth = 0;
    let mut item = String::new();
    let mut items = Vec::new();
    for c in tree.chars().filter(|c| !c.is_whitespace()) {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            _ => {}
        }
        if c == ',' && depth == 0 {
            items.push(std::mem::take(&mut item));
        } else {
            item.push(c);
        }
    }
    items.push(item);
    for item in items.iter().filter(|i| !i.is_empty()) {
        match item.find('{') {
            Some(open) => {
                let mut inner_prefix = prefix.to_vec();
                inner_prefix.extend(segments(item[..open].trim_end_matches(':')));
                let close = item.rfind('}').unwrap_or(item.len());
                expand_tree(&inner_prefix, &item[open + 1..close], into);
            }
            None => {
                let path = item.split(" as ").next().unwrap_or_default();
                let mut full = prefix.to_vec();
                full.extend(segments(path));
                into.push(full);
            }
        }
    }
}

fn segments(path: &str) -> impl Iterator<Item = String> + '_ {
    path.split("::")
        .filter(|s| !s.is_empty())
        .map(|s| s.split(" as ").next().unwrap_or(s).to_owned())
}

/// Every `crate::`/`super::`/`self::` path the code names.
fn named_paths(code: &str) -> Vec<Module> {
    let mut paths = Vec::new();
    for statement in code.split(';') {
        let trimmed = statement.trim_start();
        let rest = trimmed
            .strip_prefix("pub ")
            .or_else(|| {
                trimmed
                    .strip_prefix("pub(")
                    .and_then(|r| r.split_once(") "))
                    .map(|(_, r)| r)
            })
            .unwrap_or(trimmed);
        if let Some(tree) = rest.strip_prefix("use ") {
            expand_tree(&[], tree, &mut paths);
        }
    }
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    for start in ["crate::", "super::"] {
        for (at, _) in code.match_indices(start) {
            if code[..at].chars().next_back().is_some_and(is_ident) {
                continue;
            }
            let path: String = code[at..]
                .chars()
                .take_while(|&c| is_ident(c) || c == ':')
                .collect();
            paths.push(segments(&path).collect());
        }
    }
    paths
}

/// The module `path` names from `from`, as the deepest module of `modules` it starts with.
fn resolve(from: &Module, path: &Module, modules: &BTreeSet<Module>) -> Option<Module> {
    let mut target: Module = match path.first().map(String::as_str) {
        Some("crate") => Vec::new(),
        Some("self") => from.clone(),
        Some("super") => from[..from.len().saturating_sub(1)].to_vec(),
        _ => return None,
    };
    let mut rest = path[1..].iter().peekable();
    while rest.peek().is_some_and(|s| *s == "super") {
        rest.next();
        target.pop();
    }
    target.extend(rest.cloned());
    (0..=target.len())
        .rev()
        .map(|len| target[..len].to_vec())
        .find(|candidate| modules.contains(candidate))
}

/// Each module of the crate under `src` with the modules it imports.
pub fn import_graph(src: &Path) -> BTreeMap<Module, BTreeSet<Module>> {
    let files = sources(src);
    let modules: BTreeSet<Module> = files.iter().map(|f| module_of(src, f)).collect();
    let mut graph = BTreeMap::new();
    for file in &files {
        let from = module_of(src, file);
        let imports: BTreeSet<Module> = named_paths(&code(file))
            .iter()
            .filter_map(|path| resolve(&from, path, &modules))
            .filter(|to| *to != from && !from.starts_with(to))
            .collect();
        graph.insert(from, imports);
    }
    graph
}

/// The circles of more than two modules: each module with the others it both reaches and is
/// reached by.
pub fn circles(graph: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<String> {
    let reach = |from: &Module| {
        let mut seen = BTreeSet::new();
        let mut pending = vec![from.clone()];
        while let Some(module) = pending.pop() {
            for next in graph.get(&module).into_iter().flatten() {
                if seen.insert(next.clone()) {
                    pending.push(next.clone());
                }
            }
        }
        seen
    };
    let reached: BTreeMap<&Module, BTreeSet<Module>> =
        graph.keys().map(|m| (m, reach(m))).collect();
    let mut found = Vec::new();
    for (module, reaches) in &reached {
        let circle: Vec<String> = reaches
            .iter()
            .filter(|other| reached.get(other).is_some_and(|r| r.contains(*module)))
            .map(|m| m.join("/"))
            .collect();
        if circle.len() > 2 {
            found.push(format!("{}: {circle:?}", module.join("/")));
        }
    }
    found
}

#[test]
fn no_crate_has_an_import_circle_of_more_than_two_files() {
    for crate_src in [
        "src",
        "planner/src",
        "geometry/src",
        "native/src",
        "backends/src",
        "distributed/src",
    ] {
        let graph = import_graph(&repo().join(crate_src));
        assert!(graph.len() > 3, "{crate_src}: {} modules read", graph.len());
        let found = circles(&graph);
        assert!(found.is_empty(), "{crate_src}: {found:#?}");
    }
}

#[test]
fn the_geos_base_of_the_native_kernels_imports_only_the_layer_type() {
    let graph = import_graph(&repo().join("native/src"));
    let base: Module = vec!["geos_base".into()];
    let imports: Vec<String> = graph[&base].iter().map(|m| m.join("/")).collect();
    assert!(
        imports.iter().all(|m| m == "layer"),
        "geomill-native's geos_base imports {imports:?}"
    );
}

#[test]
fn the_reader_finds_a_circle_of_three_and_follows_use_trees_and_inline_paths() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| std::fs::write(dir.path().join(name), text).unwrap();
    write("lib.rs", "mod a;\nmod b;\nmod c;\nmod d;\n");
    write("a.rs", "use crate::{b::Thing, d};\n");
    write("b.rs", "fn f() { super::c::g(); }\n");
    write("c.rs", "use super::a::X as Y;\n// use crate::d;\n");
    write("d.rs", "#[cfg(test)]\nmod tests { use crate::a; }\n");
    let graph = import_graph(dir.path());
    let module = |name: &str| vec![name.to_owned()];
    assert_eq!(graph[&module("a")], [module("b"), module("d")].into());
    assert!(
        graph[&module("d")].is_empty(),
        "tests and comments are not imports"
    );
    let found = circles(&graph);
    assert_eq!(found.len(), 3, "{found:#?}");
    assert!(found[0].starts_with("a: "), "{found:#?}");
}
