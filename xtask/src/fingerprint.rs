//! Content-hashed names for the hydration bundle, so browsers may keep it for a year.
//!
//! After a build, `pkg/mirante.{js,wasm,css}` are copied to `pkg/mirante-<hash>.{js,wasm,css}`,
//! where `<hash>` is the first 16 hex digits of a SHA-256 over the three files, and the name
//! `mirante-<hash>` is written to `pkg/bundle.txt`. The server reads that file at start-up and
//! names the hashed files in its pages; it serves them `immutable`, and everything else in
//! `pkg` with `no-cache` (the unhashed names stay for the server's own plain pages). A new
//! build removes the hashed files of the one before.

use std::{fs, path::Path};

use anyhow::{Context, Result};
use sha2::{Digest, Sha256};

/// The file that names the current bundle.
pub const NAME_FILE: &str = "bundle.txt";

/// The bundle's files, by extension.
const EXTENSIONS: [&str; 3] = ["js", "wasm", "css"];

/// Writes the hashed copies of `<output>.{js,wasm,css}` in `pkg` and `bundle.txt`; answers
/// the bundle's name.
pub fn write(pkg: &Path, output: &str) -> Result<String> {
    let mut hasher = Sha256::new();
    let mut contents = Vec::with_capacity(EXTENSIONS.len());
    for ext in EXTENSIONS {
        let path = pkg.join(format!("{output}.{ext}"));
        let bytes = fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
        hasher.update(ext.as_bytes());
        hasher.update((bytes.len() as u64).to_le_bytes());
        hasher.update(&bytes);
        contents.push((ext, bytes));
    }
    let digest = hex::encode(hasher.finalize());
    let name = format!("{output}-{}", &digest[..16]);
    remove_hashed(pkg, output)?;
    for (ext, bytes) in contents {
        let path = pkg.join(format!("{name}.{ext}"));
        fs::write(&path, bytes).with_context(|| format!("writing {}", path.display()))?;
    }
    fs::write(pkg.join(NAME_FILE), format!("{name}\n"))?;
    Ok(name)
}

/// Removes the hashed files (and their compressed copies) an earlier build left in `pkg`.
fn remove_hashed(pkg: &Path, output: &str) -> Result<()> {
    let prefix = format!("{output}-");
    for entry in fs::read_dir(pkg).with_context(|| format!("listing {}", pkg.display()))? {
        let entry = entry?;
        let name = entry.file_name();
        if name.to_string_lossy().starts_with(&prefix) && entry.file_type()?.is_file() {
            fs::remove_file(entry.path())
                .with_context(|| format!("removing {}", entry.path().display()))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bundle(dir: &Path, js: &str) {
        fs::write(dir.join("mirante.js"), js).unwrap();
        fs::write(dir.join("mirante.wasm"), "wasm").unwrap();
        fs::write(dir.join("mirante.css"), "body{}").unwrap();
    }

    #[test]
    fn the_bundle_gets_names_that_change_with_its_content_and_a_new_build_removes_the_old_ones() {
        let dir = tempfile::tempdir().unwrap();
        bundle(dir.path(), "one");
        let first = write(dir.path(), "mirante").unwrap();
        assert!(
            first.starts_with("mirante-") && first.len() == "mirante-".len() + 16,
            "{first}"
        );
        assert_eq!(
            fs::read_to_string(dir.path().join(format!("{first}.js"))).unwrap(),
            "one"
        );
        fs::write(dir.path().join(format!("{first}.js.br")), "copy").unwrap();
        assert_eq!(
            write(dir.path(), "mirante").unwrap(),
            first,
            "same content, same name"
        );

        bundle(dir.path(), "two");
        let second = write(dir.path(), "mirante").unwrap();
        assert_ne!(second, first);
        let mut names: Vec<String> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        let expected = [
            NAME_FILE.to_owned(),
            format!("{second}.css"),
            format!("{second}.js"),
            format!("{second}.wasm"),
            "mirante.css".to_owned(),
            "mirante.js".to_owned(),
            "mirante.wasm".to_owned(),
        ];
        let mut expected = expected.to_vec();
        expected.sort();
        assert_eq!(names, expected);
        assert_eq!(
            fs::read_to_string(dir.path().join(NAME_FILE)).unwrap(),
            format!("{second}\n")
        );
    }
}
