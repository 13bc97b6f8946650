//! A monorepo checkout on disk, for checking IaC references.

use std::fs;
use std::io::Read;
use std::path::{Component, Path, PathBuf};

use super::doc::Value;
use super::{Lookup, Monorepo, has_key};

/// Largest file whose keys are looked up, in bytes.
pub const MAX_IAC_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// A monorepo checked out at `root`.
#[derive(Debug, Clone)]
pub struct DirMonorepo {
    root: PathBuf,
}

impl DirMonorepo {
    /// The checkout at `root`.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        DirMonorepo { root: root.into() }
    }
}

/// Whether a reference stays inside the repository: relative, no `..`, not empty.
pub fn is_inside(path: &str) -> bool {
    let p = Path::new(path);
    !path.is_empty()
        && p.components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
}

fn one_line(e: impl std::fmt::Display) -> String {
    let s = e.to_string();
    let line = s.lines().next().unwrap_or("").trim();
    line.chars().take(300).collect()
}

impl Monorepo for DirMonorepo {
    fn lookup(&self, path: &str, key: Option<&str>) -> Lookup {
        if !is_inside(path) {
            return Lookup::Outside;
        }
        let root = match self.root.canonicalize() {
            Ok(r) => r,
            Err(e) => return Lookup::Unreadable(format!("the monorepo root: {}", one_line(e))),
        };
        let full = match root.join(path).canonicalize() {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Lookup::MissingPath,
            Err(e) => return Lookup::Unreadable(one_line(e)),
        };
        // A symbolic link inside the checkout must not lead the check outside it.
        if !full.starts_with(&root) {
            return Lookup::Outside;
        }
        let Some(key) = key else {
            return Lookup::Found;
        };
        match read_limited(&full) {
            // The format is that of the file the path leads to.
            Ok(bytes) => lookup_key(&full.to_string_lossy(), bytes, key),
            Err(e) => Lookup::Unreadable(e),
        }
    }
}

/// Whether the file `path` (its extension says the format: YAML, JSON or TOML) with contents
/// `bytes` holds the dotted `key`. Shared by every [`Monorepo`] that reads files, wherever the
/// bytes come from (a checkout, a git tree).
pub fn lookup_key(path: &str, bytes: Vec<u8>, key: &str) -> Lookup {
    if bytes.len() as u64 > MAX_IAC_FILE_BYTES {
        return Lookup::Unreadable(format!(
            "larger than {} MiB",
            MAX_IAC_FILE_BYTES / 1024 / 1024
        ));
    }
    let Ok(text) = String::from_utf8(bytes) else {
        return Lookup::Unreadable("not UTF-8 text".to_owned());
    };
    let ext = Path::new(path)
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    let parsed: Result<Value, String> = match ext.as_str() {
        "yaml" | "yml" => serde_saphyr::from_str::<Value>(&text).map_err(one_line),
        "json" => serde_json::from_str::<Value>(&text).map_err(one_line),
        "toml" => toml::from_str::<Value>(&text).map_err(one_line),
        _ => Err("keys can be looked up in YAML, JSON and TOML files only".to_owned()),
    };
    match parsed {
        Ok(doc) if has_key(&doc, key) => Lookup::Found,
        Ok(_) => Lookup::MissingKey,
        Err(e) => Lookup::Unreadable(e),
    }
}

/// The file's bytes, reading at most one byte more than [`MAX_IAC_FILE_BYTES`] so that
/// [`lookup_key`] can refuse a larger file without reading it whole.
fn read_limited(path: &Path) -> Result<Vec<u8>, String> {
    let file = fs::File::open(path).map_err(one_line)?;
    let meta = file.metadata().map_err(one_line)?;
    if !meta.is_file() {
        return Err("not a file".to_owned());
    }
    let mut buf = Vec::new();
    file.take(MAX_IAC_FILE_BYTES + 1)
        .read_to_end(&mut buf)
        .map_err(one_line)?;
    Ok(buf)
}
