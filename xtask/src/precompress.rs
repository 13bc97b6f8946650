//! Compressed copies of the release bundle, written once at build time so the server sends
//! them as they are (`ServeDir::precompressed_br` / `precompressed_gzip`) instead of gzipping
//! the wasm at its fastest level on every first load.
//!
//! The release bundle gets brotli at its highest quality and gzip at its best level: slow to
//! write (seconds for the wasm), free to serve. The bundle of `cargo xtask run` and the tests
//! gets fast levels, which cost about a second. Only the content-hashed bundle the pages name
//! gets copies; every build first removes the copies it finds, so a server never sends a
//! compressed copy of an older build.

use std::{
    fs::{self, File},
    io::{self, BufReader, BufWriter, Write},
    path::{Path, PathBuf},
    time::Instant,
};

use anyhow::{Context, Result};

/// Extensions of the compressed copies, as `ServeDir` looks for them.
const COPIES: [&str; 2] = ["br", "gz"];

/// A 4 MiB brotli window (the wasm is a few MB).
const BROTLI_WINDOW_BITS: u32 = 22;

/// How hard the copies are compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Brotli 11, gzip 9: the release bundle, written once and sent many times.
    Best,
    /// Brotli 5, gzip 6: the bundle rebuilt while working on the portal.
    Fast,
}

impl Level {
    fn brotli(self) -> u32 {
        match self {
            Level::Best => 11,
            Level::Fast => 5,
        }
    }

    fn gzip(self) -> flate2::Compression {
        match self {
            Level::Best => flate2::Compression::best(),
            Level::Fast => flate2::Compression::default(),
        }
    }
}

/// Removes every compressed copy in `pkg`.
pub fn remove_stale(pkg: &Path) -> Result<()> {
    for path in files(pkg)? {
        if is_copy(&path) {
            fs::remove_file(&path).with_context(|| format!("removing {}", path.display()))?;
        }
    }
    Ok(())
}

/// Writes `<file>.br` and `<file>.gz` next to each file of the bundle named `name` in `pkg`
/// (`<name>.js`, `<name>.wasm`, `<name>.css`).
pub fn bundle(pkg: &Path, name: &str, level: Level) -> Result<()> {
    let prefix = format!("{name}.");
    for path in files(pkg)? {
        let in_bundle = path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with(&prefix));
        if is_copy(&path) || !in_bundle {
            continue;
        }
        let size = fs::metadata(&path)?.len();
        let started = Instant::now();
        let br = write_copy(&path, "br", |input, output| {
            let mut encoder = brotli::CompressorWriter::new(
                output,
                64 * 1024,
                level.brotli(),
                BROTLI_WINDOW_BITS,
            );
            io::copy(input, &mut encoder)?;
            Ok(encoder.into_inner())
        })?;
        let gz = write_copy(&path, "gz", |input, output| {
            let mut encoder = flate2::write::GzEncoder::new(output, level.gzip());
            io::copy(input, &mut encoder)?;
            encoder.finish()
        })?;
        println!(
            "xtask: {} {} bytes, brotli {}, gzip {} ({:.1} s)",
            path.display(),
            size,
            fs::metadata(&br)?.len(),
            fs::metadata(&gz)?.len(),
            started.elapsed().as_secs_f64()
        );
    }
    Ok(())
}

/// Writes `<source>.<suffix>` with `encode`, which streams the file into an encoder around
/// the output and hands the output back once the stream is finished; returns the copy's path.
fn write_copy(
    source: &Path,
    suffix: &str,
    encode: impl FnOnce(&mut BufReader<File>, BufWriter<File>) -> io::Result<BufWriter<File>>,
) -> Result<PathBuf> {
    let target = with_suffix(source, suffix);
    let input = File::open(source).with_context(|| format!("reading {}", source.display()))?;
    let output = File::create(&target).with_context(|| format!("writing {}", target.display()))?;
    encode(&mut BufReader::new(input), BufWriter::new(output))
        .and_then(|mut output| output.flush())
        .with_context(|| format!("compressing {} into {}", source.display(), target.display()))?;
    Ok(target)
}

/// The regular files directly in `dir`.
fn files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).with_context(|| format!("listing {}", dir.display()))? {
        let entry = entry?;
        if entry.file_type()?.is_file() {
            out.push(entry.path());
        }
    }
    out.sort();
    Ok(out)
}

fn is_copy(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| COPIES.contains(&e))
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".");
    name.push(suffix);
    PathBuf::from(name)
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;

    #[test]
    fn each_file_of_the_bundle_gets_copies_that_decompress_to_it_and_a_new_build_removes_them() {
        let pkg = tempfile::tempdir().unwrap();
        let wasm: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        let css = "body { color: black; }\n".repeat(100);
        fs::write(pkg.path().join("mirante-0123456789abcdef.wasm"), &wasm).unwrap();
        fs::write(pkg.path().join("mirante-0123456789abcdef.css"), &css).unwrap();
        fs::write(pkg.path().join("mirante.css"), &css).unwrap();

        bundle(pkg.path(), "mirante-0123456789abcdef", Level::Best).unwrap();

        assert!(
            !pkg.path().join("mirante.css.br").exists(),
            "a file outside the bundle gets no copy"
        );
        for (name, original) in [
            ("mirante-0123456789abcdef.wasm", wasm.clone()),
            ("mirante-0123456789abcdef.css", css.into_bytes()),
        ] {
            let br = fs::read(pkg.path().join(format!("{name}.br"))).unwrap();
            let mut unbr = Vec::new();
            brotli::Decompressor::new(&br[..], 4096)
                .read_to_end(&mut unbr)
                .unwrap();
            assert_eq!(unbr, original, "{name}.br");
            assert!(
                br.len() < original.len() / 4,
                "{name}.br is {} bytes",
                br.len()
            );
            let gz = fs::read(pkg.path().join(format!("{name}.gz"))).unwrap();
            let mut ungz = Vec::new();
            flate2::read::GzDecoder::new(&gz[..])
                .read_to_end(&mut ungz)
                .unwrap();
            assert_eq!(ungz, original, "{name}.gz");
        }

        remove_stale(pkg.path()).unwrap();

        let mut left: Vec<_> = files(pkg.path())
            .unwrap()
            .into_iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(
            left,
            [
                "mirante-0123456789abcdef.css",
                "mirante-0123456789abcdef.wasm",
                "mirante.css"
            ]
        );
    }
}
