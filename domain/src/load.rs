//! Reading a catalog (a directory of YAML files, or the same files from memory) into a
//! validated [`Catalog`], with every problem reported at its file, line and column.
//!
//! Files are read in path order and merged; the catalog is refused whole if anything is wrong.
//! Input is untrusted (a pull request to the monorepo can change it), so sizes are capped,
//! YAML alias expansion and nesting stay under serde-saphyr's default budget, and no input
//! makes the loader panic.

use std::collections::HashMap;
use std::fs;
use std::hash::Hash;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_saphyr::MessageFormatter;
use sha2::{Digest, Sha256};

use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::history::FileStates;
use crate::model::{Catalog, CatalogFile};
use crate::snapshot::Snapshot;
use crate::validate::{ParsedFile, Shadow, validate};

/// Largest catalog file accepted, in bytes.
pub const MAX_FILE_BYTES: usize = 4 * 1024 * 1024;
/// Most catalog files accepted in one catalog.
pub const MAX_FILES: usize = 4096;
/// Largest catalog accepted, all files together, in bytes.
pub const MAX_TOTAL_BYTES: usize = 64 * 1024 * 1024;
/// Most diagnostics returned; the rest are counted in a last one. A broken catalog of thousands
/// of items can produce thousands of dangling references, and nobody reads past the first pages.
pub const MAX_DIAGNOSTICS: usize = 1000;
/// Deepest directory nesting searched under the catalog root.
const MAX_DEPTH: usize = 32;

/// A catalog that passed validation, with a fingerprint of the files it came from.
#[derive(Debug, Clone)]
pub struct LoadedCatalog {
    /// Every file merged, in path order.
    pub catalog: Catalog,
    /// SHA-256, hex, over each file's relative path and contents in path order (see
    /// [`catalog_hash`]). Equal catalogs read from disk or from a git tree hash the same.
    pub hash: String,
    /// Number of files read.
    pub files: usize,
}

impl LoadedCatalog {
    /// Builds the indexed, read-only view the server serves.
    pub fn into_snapshot(self, revision: Option<String>) -> Snapshot {
        Snapshot::new(self.catalog, self.hash, revision)
    }
}

/// Whether a path names a catalog file (`*.yaml` or `*.yml`).
pub fn is_catalog_path(path: &str) -> bool {
    path.ends_with(".yaml") || path.ends_with(".yml")
}

/// Reads every `*.yaml`/`*.yml` file under `dir` (recursively, in path order), merges and
/// validates them.
///
/// Hidden files and directories (names starting with `.`) are skipped; symbolic links are not
/// followed (a link named like a catalog file, or pointing at a directory, is reported), so the
/// catalog cannot reach outside its directory or loop.
pub fn load_dir(dir: &Path) -> Result<LoadedCatalog, Diagnostics> {
    let root = dir.display().to_string();
    match fs::metadata(dir) {
        Err(e) => {
            return Err(one(
                &root,
                format!("cannot read the catalog directory: {e}"),
            ));
        }
        Ok(m) if !m.is_dir() => return Err(one(&root, "the catalog path is not a directory")),
        Ok(_) => {}
    }
    let mut walk = Walk {
        root: root.clone(),
        found: Vec::new(),
        diags: Vec::new(),
        too_many: false,
    };
    walk.dir(dir, "", 0);
    let mut files = Vec::with_capacity(walk.found.len());
    let mut total = 0usize;
    for (rel, path) in walk.found {
        match read_capped(&path) {
            Ok(bytes) => {
                total = total.saturating_add(bytes.len());
                files.push((rel, bytes));
            }
            Err(msg) => walk.diags.push(Diagnostic::new(&rel, 0, 0, msg)),
        }
        // Stop reading early rather than hold an oversized catalog in memory; load_inner
        // reports the size.
        if total > MAX_TOTAL_BYTES {
            break;
        }
    }
    load_inner(files, walk.diags, &root)
}

/// Loads a catalog from files already in memory: `(relative path, contents)` pairs, in any
/// order (they are sorted by path). Every pair is read; filter with [`is_catalog_path`] first
/// when the list comes from a whole tree.
pub fn load_files(files: Vec<(String, String)>) -> Result<LoadedCatalog, Diagnostics> {
    load_bytes(
        files
            .into_iter()
            .map(|(p, c)| (p, c.into_bytes()))
            .collect(),
    )
}

/// Like [`load_files`] for raw contents, such as blobs read from a git tree: a file that is not
/// UTF-8 is reported with the position of its first bad byte.
pub fn load_bytes(files: Vec<(String, Vec<u8>)>) -> Result<LoadedCatalog, Diagnostics> {
    load_inner(files, Vec::new(), ".")
}

/// SHA-256, hex, over `(path, contents)` pairs in the order given.
///
/// Each path and each content is preceded by its length (8 bytes, little endian) so that no two
/// different file lists produce the same byte stream.
pub fn catalog_hash<'a>(files: impl IntoIterator<Item = (&'a str, &'a [u8])>) -> String {
    let mut h = Sha256::new();
    for (path, contents) in files {
        h.update((path.len() as u64).to_le_bytes());
        h.update(path.as_bytes());
        h.update((contents.len() as u64).to_le_bytes());
        h.update(contents);
    }
    hex::encode(h.finalize())
}

fn one(file: &str, message: impl AsRef<str>) -> Diagnostics {
    Diagnostics(vec![Diagnostic::new(file, 0, 0, message)])
}

/// The directory walk: relative paths found so far and problems met.
struct Walk {
    root: String,
    found: Vec<(String, PathBuf)>,
    diags: Vec<Diagnostic>,
    too_many: bool,
}

impl Walk {
    fn dir(&mut self, dir: &Path, rel: &str, depth: usize) {
        let here = if rel.is_empty() {
            self.root.as_str()
        } else {
            rel
        };
        let read = match fs::read_dir(dir) {
            Ok(r) => r,
            Err(e) => {
                let d = Diagnostic::new(here, 0, 0, format!("cannot read directory: {e}"));
                self.diags.push(d);
                return;
            }
        };
        let mut entries = Vec::new();
        for e in read {
            match e {
                Ok(e) => entries.push(e),
                Err(e) => {
                    let d = Diagnostic::new(here, 0, 0, format!("cannot read directory: {e}"));
                    self.diags.push(d);
                }
            }
        }
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            if self.too_many {
                return;
            }
            let name = e.file_name();
            let name = name.to_string_lossy();
            if name.starts_with('.') {
                continue;
            }
            let path = if rel.is_empty() {
                name.into_owned()
            } else {
                format!("{rel}/{name}")
            };
            let kind = match e.file_type() {
                Ok(k) => k,
                Err(err) => {
                    self.diags
                        .push(Diagnostic::new(&path, 0, 0, format!("cannot read: {err}")));
                    continue;
                }
            };
            if kind.is_symlink() {
                let to_dir = fs::metadata(e.path()).is_ok_and(|m| m.is_dir());
                if to_dir || is_catalog_path(&path) {
                    let msg = "symbolic link not followed: put the file in the catalog directory";
                    self.diags.push(Diagnostic::new(&path, 0, 0, msg));
                }
            } else if kind.is_dir() {
                if depth + 1 >= MAX_DEPTH {
                    let msg = format!("directory nested deeper than {MAX_DEPTH} levels");
                    self.diags.push(Diagnostic::new(&path, 0, 0, msg));
                } else {
                    self.dir(&e.path(), &path, depth + 1);
                }
            } else if kind.is_file() && is_catalog_path(&path) {
                if self.found.len() >= MAX_FILES {
                    let msg = format!("more than {MAX_FILES} catalog files");
                    self.diags.push(Diagnostic::new(&self.root, 0, 0, msg));
                    self.too_many = true;
                    return;
                }
                self.found.push((path, e.path()));
            }
        }
    }
}

/// Reads a file, refusing it once it passes [`MAX_FILE_BYTES`] (also if it grows while read).
fn read_capped(path: &Path) -> Result<Vec<u8>, String> {
    let file = fs::File::open(path).map_err(|e| format!("cannot read: {e}"))?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read: {e}"))?;
    Ok(bytes)
}

fn load_inner(
    mut files: Vec<(String, Vec<u8>)>,
    diags: Vec<Diagnostic>,
    root: &str,
) -> Result<LoadedCatalog, Diagnostics> {
    files.sort_by(|a, b| a.0.cmp(&b.0));
    let sorted: Vec<(&str, &[u8])> = files
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_slice()))
        .collect();
    let parsed = check(&sorted, diags, root, Parse::Parallel, |k| {
        let (path, bytes) = sorted[k];
        parse_file(path, bytes).map(Arc::new)
    })?;
    let hash = catalog_hash(sorted.iter().copied());
    let n = parsed.len();
    Ok(LoadedCatalog {
        catalog: merge(parsed),
        hash,
        files: n,
    })
}

/// The load itself, on files sorted by path: screens them (duplicates, sizes, counts),
/// parses each one that passes with `parse` (given its index in `files`; in parallel when
/// `Parse::Parallel`), and validates the whole. `diags`
/// are problems already met (files that could not be read): they are reported with the rest,
/// and they turn the cross-file checks off.
fn check<'a>(
    files: &[(&'a str, &'a [u8])],
    mut diags: Vec<Diagnostic>,
    root: &str,
    how: Parse,
    parse: impl Fn(usize) -> Result<Arc<CatalogFile>, Diagnostic> + Sync,
) -> Result<Vec<ParsedFile<'a>>, Diagnostics> {
    if files.is_empty() && diags.is_empty() {
        diags.push(Diagnostic::new(
            root,
            0,
            0,
            "no catalog files (*.yaml, *.yml)",
        ));
    }
    let files = if files.len() > MAX_FILES {
        diags.push(Diagnostic::new(
            root,
            0,
            0,
            format!("more than {MAX_FILES} catalog files"),
        ));
        &files[..MAX_FILES]
    } else {
        files
    };
    // Cross-file checks need every file: a file that failed to read hides ids that other files
    // refer to, and reporting those references too would bury the real error.
    let mut complete = diags.is_empty();
    let mut to_parse = Vec::with_capacity(files.len());
    let mut total = 0usize;
    for (k, &(path, bytes)) in files.iter().enumerate() {
        if k > 0 && files[k - 1].0 == path {
            diags.push(Diagnostic::new(
                path,
                0,
                0,
                "the same file path is given twice",
            ));
            complete = false;
            continue;
        }
        total = total.saturating_add(bytes.len());
        if bytes.len() > MAX_FILE_BYTES {
            let msg = format!("file larger than {} MiB", MAX_FILE_BYTES >> 20);
            diags.push(Diagnostic::new(path, 0, 0, msg));
            complete = false;
            continue;
        }
        if total > MAX_TOTAL_BYTES {
            let msg = format!("catalog larger than {} MiB in total", MAX_TOTAL_BYTES >> 20);
            diags.push(Diagnostic::new(path, 0, 0, msg));
            complete = false;
            break;
        }
        to_parse.push((k, path, bytes));
    }
    let mut parsed = Vec::with_capacity(to_parse.len());
    let results = match how {
        Parse::Parallel => parallel_map(&to_parse, |&(k, _, _)| parse(k)),
        Parse::InTurn => to_parse.iter().map(|&(k, _, _)| parse(k)).collect(),
    };
    for (&(_, path, source), result) in to_parse.iter().zip(results) {
        match result {
            Ok(file) => parsed.push(ParsedFile {
                path: path.to_owned(),
                source,
                file,
                shadow: Shadow::default(),
            }),
            Err(d) => {
                diags.push(d);
                complete = false;
            }
        }
    }
    // Validation needs positions only to report problems: the files are read for them (a
    // second time) only when there is something to report, and then everything is checked
    // again with them.
    let mut problems = Vec::new();
    validate(&parsed, complete, &mut problems);
    if !problems.is_empty() {
        let shadows = parallel_map(&parsed, |pf| {
            let text = std::str::from_utf8(pf.source).unwrap_or_default();
            serde_saphyr::from_str_with_options::<Shadow>(text, yaml_options()).unwrap_or_default()
        });
        for (pf, shadow) in parsed.iter_mut().zip(shadows) {
            pf.shadow = shadow;
        }
        problems.clear();
        validate(&parsed, complete, &mut problems);
    }
    diags.append(&mut problems);
    if diags.is_empty() {
        return Ok(parsed);
    }
    diags.sort();
    if diags.len() > MAX_DIAGNOSTICS {
        let more = diags.len() - MAX_DIAGNOSTICS;
        diags.truncate(MAX_DIAGNOSTICS);
        diags.push(Diagnostic::new(
            root,
            0,
            0,
            format!("{more} more problems not shown"),
        ));
    }
    Err(Diagnostics(diags))
}

/// How [`check`] runs its `parse`.
#[derive(Clone, Copy)]
enum Parse {
    /// On every core: the files are parsed there.
    Parallel,
    /// In the caller's thread: `parse` hands over files already parsed.
    InTurn,
}

/// Loads successive revisions of one catalog, such as the commits of a git history taken
/// oldest first, parsing only the files that were not in the revision before.
///
/// A file is named by its path and a key for its contents (a git blob id): its contents are
/// read, and parsed, only when that pair is new. A revision loads, or is refused with the
/// same diagnostics, exactly as [`load_bytes`] of the same files would; what is kept between
/// revisions is each file of the last one, its contents and what its parse gave.
#[derive(Debug)]
pub struct RevisionLoader<K> {
    files: HashMap<(String, K), Arc<Known>>,
}

/// A file of the last revision.
#[derive(Debug)]
struct Known {
    bytes: Vec<u8>,
    parsed: Result<Arc<CatalogFile>, Diagnostic>,
    /// Its items' states, once, so that every revision holding the file unchanged hands the
    /// history the same allocation.
    states: Option<FileStates>,
}

/// A revision whose files are read and parsed, to be checked as a whole.
struct Prepared {
    /// Each file, in path order.
    files: Vec<(String, Arc<Known>)>,
    /// Files that could not be read.
    diags: Vec<Diagnostic>,
}

impl Prepared {
    /// What [`load_bytes`] would say of the revision: its item states by file, or its problems.
    fn check(&self) -> Result<Vec<FileStates>, Diagnostics> {
        let paths: Vec<(&str, &[u8])> = self
            .files
            .iter()
            .map(|(p, k)| (p.as_str(), k.bytes.as_slice()))
            .collect();
        let diags = self.diags.clone();
        check(&paths, diags, ".", Parse::InTurn, |k| {
            self.files[k].1.parsed.clone()
        })?;
        // It loaded, so every file parsed.
        Ok(self
            .files
            .iter()
            .filter_map(|(_, k)| k.states.clone())
            .collect())
    }
}

impl<K> Default for RevisionLoader<K> {
    fn default() -> Self {
        RevisionLoader {
            files: HashMap::new(),
        }
    }
}

impl<K: Clone + Eq + Hash + Send + Sync> RevisionLoader<K> {
    /// A loader that knows no file yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The item states of each file of the revision made of `files` (path and contents key;
    /// only the catalog's files, see [`is_catalog_path`]), in path order, or why it does not
    /// load. `read` gives the contents of a file the loader does not know, or why they cannot
    /// be read. A file the revision before had too comes back as the same allocation
    /// ([`FileStates`]).
    pub fn item_states(
        &mut self,
        files: Vec<(String, K)>,
        read: impl FnMut(&K) -> Result<Vec<u8>, String>,
    ) -> Result<Vec<FileStates>, Diagnostics> {
        self.prepare(files, read).check()
    }

    /// [`Self::item_states`] of successive revisions, given oldest first, in their order.
    ///
    /// The revisions are read and parsed one after the other, then each is checked whole on
    /// up to as many threads as the machine has cores: checking a large catalog costs far
    /// more than reading the file or two a revision changes. The files of every revision
    /// given are held until all are checked.
    pub fn item_states_each(
        &mut self,
        revisions: Vec<Vec<(String, K)>>,
        mut read: impl FnMut(&K) -> Result<Vec<u8>, String>,
    ) -> Vec<Result<Vec<FileStates>, Diagnostics>> {
        let prepared: Vec<Prepared> = revisions
            .into_iter()
            .map(|files| self.prepare(files, &mut read))
            .collect();
        parallel_map(&prepared, Prepared::check)
    }

    /// Reads and parses the files of a revision that the revision before did not have.
    fn prepare(
        &mut self,
        files: Vec<(String, K)>,
        mut read: impl FnMut(&K) -> Result<Vec<u8>, String>,
    ) -> Prepared {
        let mut previous = std::mem::take(&mut self.files);
        let mut diags = Vec::new();
        let mut fresh = Vec::new();
        for (path, key) in files {
            let name = (path, key);
            if let Some(known) = previous.remove(&name) {
                self.files.insert(name, known);
                continue;
            }
            match read(&name.1) {
                Ok(bytes) => fresh.push((name, bytes)),
                Err(message) => diags.push(Diagnostic::new(&name.0, 0, 0, message)),
            }
        }
        drop(previous);
        let parsed = parallel_map(&fresh, |((path, _), bytes)| {
            // A file over the size limit is refused by the load without being parsed.
            if bytes.len() <= MAX_FILE_BYTES {
                parse_file(path, bytes).map(Arc::new)
            } else {
                Err(Diagnostic::new(path, 0, 0, "not parsed"))
            }
        });
        for ((name, bytes), parsed) in fresh.into_iter().zip(parsed) {
            let states = parsed.as_ref().ok().map(|file| {
                file.items
                    .iter()
                    .map(|item| (item.id.clone(), item.state))
                    .collect()
            });
            let known = Known {
                bytes,
                parsed,
                states,
            };
            self.files.insert(name, Arc::new(known));
        }
        let mut files: Vec<(String, Arc<Known>)> = self
            .files
            .iter()
            .map(|((path, _), known)| (path.clone(), Arc::clone(known)))
            .collect();
        files.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        Prepared { files, diags }
    }
}

/// Reads one file into the strict model, without positions.
///
/// When the strict reading fails, the file is read again into the lenient shadow: if that
/// fails too, the file is not well-formed YAML and that error is reported, rather than
/// whatever field the strict reading happened to miss before reaching the broken spot.
fn parse_file(path: &str, bytes: &[u8]) -> Result<CatalogFile, Diagnostic> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let (line, column) = line_col(&bytes[..e.valid_up_to()]);
        Diagnostic::new(path, line, column, "not valid UTF-8")
    })?;
    let file = serde_saphyr::from_str_with_options::<CatalogFile>(text, yaml_options()).map_err(
        |strict| {
            let lenient = serde_saphyr::from_str_with_options::<Shadow>(text, yaml_options());
            yaml_diag(path, lenient.err().as_ref().unwrap_or(&strict))
        },
    )?;
    Ok(file)
}

/// `f` over every element, on up to as many threads as the machine has cores, results in the
/// order of `items`. The catalog's files are parsed this way: parsing is most of a load.
fn parallel_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(items.len());
    if threads <= 1 {
        return items.iter().map(f).collect();
    }
    // Files differ in size, so threads take the next file as they finish one.
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut done: Vec<(usize, R)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut out = Vec::new();
                    loop {
                        let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(item) = items.get(k) else {
                            return out;
                        };
                        out.push((k, f(item)));
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| match w.join() {
                Ok(out) => out,
                Err(panic) => std::panic::resume_unwind(panic),
            })
            .collect()
    });
    done.sort_unstable_by_key(|(k, _)| *k);
    done.into_iter().map(|(_, r)| r).collect()
}

/// serde-saphyr's defaults (resource budget, alias limits, duplicate keys are errors) without
/// the source snippet, which the diagnostics do not show.
fn yaml_options() -> serde_saphyr::Options {
    let mut o = serde_saphyr::Options::default();
    o.with_snippet = false;
    o
}

fn yaml_diag(path: &str, e: &serde_saphyr::Error) -> Diagnostic {
    let (line, column) = e.location().map_or((0, 0), |l| (l.line(), l.column()));
    // The message without the "at line X, column Y" suffix: the position has its own fields.
    let mut inner = e;
    while let serde_saphyr::Error::AliasError { error, .. }
    | serde_saphyr::Error::WithSnippet { error, .. } = inner
    {
        inner = error;
    }
    let message = serde_saphyr::DefaultMessageFormatter.format_message(inner);
    Diagnostic::new(path, line, column, message)
}

/// 1-based line and column (in characters) just after `prefix`, which is valid UTF-8.
fn line_col(prefix: &[u8]) -> (u64, u64) {
    let text = std::str::from_utf8(prefix).unwrap_or_default();
    let line = text.matches('\n').count() as u64 + 1;
    let last = text.rsplit('\n').next().unwrap_or_default();
    (line, last.chars().count() as u64 + 1)
}

fn merge(files: Vec<ParsedFile<'_>>) -> Catalog {
    let mut c = Catalog::default();
    // The item list is most of a large catalog's memory: sized once, it keeps no spare room.
    c.items
        .reserve_exact(files.iter().map(|pf| pf.file.items.len()).sum());
    for pf in files {
        // The only holder of each file, unless a [`RevisionLoader`] keeps it too.
        let f = Arc::unwrap_or_clone(pf.file);
        // Validation has refused a second platform, so this keeps the only one.
        if let Some(p) = f.platform {
            c.platform = p;
        }
        c.sites.extend(f.sites);
        c.hosts.extend(f.hosts);
        c.layers.extend(f.layers);
        c.items.extend(f.items);
        c.decisions.extend(f.decisions);
        c.tasks.extend(f.tasks);
        c.phases.extend(f.phases);
    }
    c
}

#[cfg(test)]
mod tests;
