//! The README stays short and leads everywhere: at most 200 lines, every page of `docs/` linked
//! from it, and every relative link of the README and the pages naming a file that exists.

use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The relative targets of the Markdown links in `text` (`](target)`, anchors cut off).
fn relative_links(text: &str) -> Vec<String> {
    text.split("](")
        .skip(1)
        .filter_map(|rest| rest.split_once(')').map(|(target, _)| target))
        .filter(|target| !target.contains("://") && !target.starts_with('#'))
        .map(|target| target.split('#').next().unwrap_or_default().to_owned())
        .collect()
}

fn pages() -> Vec<PathBuf> {
    let mut pages: Vec<PathBuf> = std::fs::read_dir(repo().join("docs"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .collect();
    pages.sort();
    pages
}

#[test]
fn the_readme_is_short_and_links_every_page_of_the_docs() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(
        lines <= 200,
        "README.md has {lines} lines: move detail into docs/"
    );
    let linked = relative_links(&readme);
    let unlinked: Vec<_> = pages()
        .iter()
        .filter_map(|page| {
            page.file_name()?
                .to_str()
                .map(|name| format!("docs/{name}"))
        })
        .filter(|page| !linked.contains(page))
        .collect();
    assert!(unlinked.is_empty(), "README.md links none of {unlinked:?}");
}

#[test]
fn every_relative_link_of_the_docs_names_a_file() {
    let mut broken = Vec::new();
    let readme = repo().join("README.md");
    for file in pages().into_iter().chain([readme]) {
        let text = std::fs::read_to_string(&file).unwrap();
        let base = file.parent().unwrap_or(Path::new("."));
        for target in relative_links(&text) {
            if !target.is_empty() && !base.join(&target).exists() {
                broken.push(format!("{}: {target}", file.display()));
            }
        }
    }
    assert!(broken.is_empty(), "{broken:#?}");
}
