//! The server's layers depend in one direction: `http → app → adapters → mirante-domain`
//! (docs/adr/0016-server-layers-http-app-adapters-over-the-domain.md). This test reads the
//! source tree: a file under `app/` or `adapters/` that names `crate::http`, or a file under
//! `adapters/` that names `crate::app`, fails it. Comment lines and code after a file's
//! `#[cfg(test)]` are not read: a test may build a whole portal to check one part.

use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The top-level modules of the crate a source text names: `crate::x::…` anywhere, and the
/// first segment of each item of a `use crate::{…}` group.
fn crate_modules_named(source: &str) -> Vec<String> {
    let mut named = Vec::new();
    let mut rest = source;
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // Items at depth zero of the group, up to its closing brace.
            let (mut depth, mut item) = (0usize, String::new());
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        named.push(first_segment(&item));
                        item.clear();
                        continue;
                    }
                    _ => {}
                }
                if depth == 0 {
                    item.push(c);
                }
            }
            named.push(first_segment(&item));
        } else {
            named.push(first_segment(rest));
        }
    }
    named.retain(|m| !m.is_empty());
    named
}

fn first_segment(path: &str) -> String {
    path.trim()
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect()
}

/// The file's code before its first `#[cfg(test)]`, comment lines left out (a doc comment
/// may point the reader at another layer).
fn code_of(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let code = match text.find("#[cfg(test)]") {
        Some(at) => &text[..at],
        None => &text,
    };
    code.lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every `(file, module)` where a file under `layer` names one of `forbidden`.
fn violations(layer: &str, forbidden: &[&str]) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut found = Vec::new();
    for file in rust_files(&root.join(layer)) {
        for module in crate_modules_named(&code_of(&file)) {
            if forbidden.contains(&module.as_str()) {
                let shown = file.strip_prefix(&root).unwrap().display().to_string();
                found.push(format!("{shown} uses crate::{module}"));
            }
        }
    }
    found.sort();
    found.dedup();
    found
}

#[test]
fn the_application_layer_never_imports_the_http_layer() {
    let found = violations("app", &["http"]);
    assert!(found.is_empty(), "app/ depends on http/: {found:#?}");
}

#[test]
fn adapters_import_neither_the_application_nor_the_http_layer() {
    let found = violations("adapters", &["http", "app"]);
    assert!(
        found.is_empty(),
        "adapters/ depend on a layer above: {found:#?}"
    );
}

#[test]
fn the_reader_sees_grouped_and_nested_imports() {
    let source = "use crate::{\n    adapters::git,\n    http::{ApiError, auth::Principal},\n};\n\
                  fn f() { crate::app::catalog::x(); }";
    assert_eq!(
        crate_modules_named(source),
        vec!["adapters", "http", "app"],
        "every top-level module named, grouped or inline"
    );
}

#[test]
fn the_layers_this_test_guards_exist() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for layer in ["http", "app", "adapters"] {
        assert!(
            !rust_files(&root.join(layer)).is_empty(),
            "server/src/{layer}/ has no source: the layer test would check nothing"
        );
    }
}
