//! Reading template folders from disk, from the binary or from memory, and compiling them.
//!
//! Template folders come from the monorepo, so they are untrusted input: sizes and counts are
//! capped, symbolic links are not followed, and every problem becomes a [`Diagnostic`] for
//! that template alone.

use std::{
    collections::BTreeMap,
    fs,
    io::Read,
    path::{Path, PathBuf},
};

use include_dir::{Dir, include_dir};
use mirante_domain::{Diagnostic, selfservice::TemplateManifest};

use super::{Template, TemplateSet, render};

/// The templates shipped with the portal.
static SHIPPED: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/../templates/self-service");

/// Where the shipped templates live in the repository, for messages.
const SHIPPED_ORIGIN: &str = "templates/self-service";

/// Largest file of a template accepted, in bytes.
pub(crate) const MAX_FILE_BYTES: usize = 256 * 1024;
/// Most files in one template folder.
pub(super) const MAX_TEMPLATE_FILES: usize = 128;
/// Most template folders in one directory.
const MAX_TEMPLATES: usize = 256;
/// Deepest nesting inside a template folder.
const MAX_DEPTH: usize = 8;

/// The default slug: the template id and who asked.
const DEFAULT_SLUG: &str = "{{ template.id }}-{{ requester.username }}";

/// Files of one template folder, by path relative to it.
type Folder = BTreeMap<String, Vec<u8>>;

pub(super) fn embedded() -> TemplateSet {
    let mut folders: BTreeMap<String, Folder> = BTreeMap::new();
    fn walk(dir: &Dir<'static>, out: &mut BTreeMap<String, Folder>) {
        for file in dir.files() {
            let path = file.path().to_string_lossy().replace('\\', "/");
            if is_hidden(&path) {
                continue;
            }
            if let Some((id, rel)) = path.split_once('/') {
                out.entry(id.to_owned())
                    .or_default()
                    .insert(rel.to_owned(), file.contents().to_vec());
            }
        }
        for sub in dir.dirs() {
            walk(sub, out);
        }
    }
    walk(&SHIPPED, &mut folders);
    // A folder holding only sub-folders still shows up, so it is reported as incomplete.
    for sub in SHIPPED.dirs() {
        folders
            .entry(sub.path().to_string_lossy().into_owned())
            .or_default();
    }
    build_all(SHIPPED_ORIGIN, folders, Vec::new())
}

pub(super) fn from_files(origin: &str, files: Vec<(String, Vec<u8>)>) -> TemplateSet {
    let mut folders: BTreeMap<String, Folder> = BTreeMap::new();
    for (path, bytes) in files {
        if is_hidden(&path) {
            continue;
        }
        match path.split_once('/') {
            Some((id, rel)) if !id.is_empty() && !rel.is_empty() => {
                folders
                    .entry(id.to_owned())
                    .or_default()
                    .insert(rel.to_owned(), bytes);
            }
            // Files beside the template folders (a README), as on disk.
            _ => {}
        }
    }
    build_all(origin, folders, Vec::new())
}

pub(super) fn dir(root: &Path) -> TemplateSet {
    let origin = root.display().to_string();
    let mut problems = Vec::new();
    let mut folders = BTreeMap::new();
    let entries = match sorted_entries(root) {
        Ok(e) => e,
        Err(msg) => {
            return TemplateSet {
                templates: Vec::new(),
                problems: vec![Diagnostic::new(&origin, 0, 0, msg)],
            };
        }
    };
    for (name, path) in entries {
        if name.starts_with('.') {
            continue;
        }
        let shown = join(&origin, &name);
        let meta = match fs::symlink_metadata(&path) {
            Ok(m) => m,
            Err(e) => {
                problems.push(Diagnostic::new(&shown, 0, 0, format!("cannot read: {e}")));
                continue;
            }
        };
        if meta.file_type().is_symlink() {
            problems.push(Diagnostic::new(
                &shown,
                0,
                0,
                "symbolic link not followed: put the template in the folder",
            ));
            continue;
        }
        if !meta.is_dir() {
            // READMEs and the like beside the template folders.
            continue;
        }
        if folders.len() >= MAX_TEMPLATES {
            problems.push(Diagnostic::new(
                &origin,
                0,
                0,
                format!("more than {MAX_TEMPLATES} template folders"),
            ));
            break;
        }
        let mut files = Folder::new();
        let mut problems_here = Vec::new();
        read_folder(&path, "", 0, &shown, &mut files, &mut problems_here);
        if problems_here.is_empty() {
            folders.insert(name, files);
        } else {
            problems.extend(problems_here);
        }
    }
    build_all(&origin, folders, problems)
}

fn sorted_entries(dir: &Path) -> Result<Vec<(String, PathBuf)>, String> {
    let read = fs::read_dir(dir).map_err(|e| format!("cannot read the templates folder: {e}"))?;
    let mut out = Vec::new();
    for entry in read {
        let entry = entry.map_err(|e| format!("cannot read the templates folder: {e}"))?;
        out.push((
            entry.file_name().to_string_lossy().into_owned(),
            entry.path(),
        ));
    }
    out.sort();
    Ok(out)
}

fn read_folder(
    dir: &Path,
    rel: &str,
    depth: usize,
    shown: &str,
    files: &mut Folder,
    problems: &mut Vec<Diagnostic>,
) {
    let entries = match sorted_entries(dir) {
        Ok(e) => e,
        Err(msg) => {
            problems.push(Diagnostic::new(join(shown, rel), 0, 0, msg));
            return;
        }
    };
    for (name, path) in entries {
        if name.starts_with('.') {
            // `.gitkeep` and the like: never rendered, never proposed.
            continue;
        }
        let rel_path = if rel.is_empty() {
            name.clone()
        } else {
            format!("{rel}/{name}")
        };
        let here = join(shown, &rel_path);
        let meta = match fs::symlink_metadata(&path) {
            Ok(m) => m,
            Err(e) => {
                problems.push(Diagnostic::new(&here, 0, 0, format!("cannot read: {e}")));
                continue;
            }
        };
        if meta.file_type().is_symlink() {
            problems.push(Diagnostic::new(
                &here,
                0,
                0,
                "symbolic link not followed: put the file in the template folder",
            ));
        } else if meta.is_dir() {
            if depth + 1 >= MAX_DEPTH {
                problems.push(Diagnostic::new(
                    &here,
                    0,
                    0,
                    format!("nested deeper than {MAX_DEPTH} levels"),
                ));
            } else {
                read_folder(&path, &rel_path, depth + 1, shown, files, problems);
            }
        } else if meta.is_file() {
            if files.len() >= MAX_TEMPLATE_FILES {
                problems.push(Diagnostic::new(
                    shown,
                    0,
                    0,
                    format!("more than {MAX_TEMPLATE_FILES} files"),
                ));
                return;
            }
            match read_capped(&path) {
                Ok(bytes) => {
                    files.insert(rel_path, bytes);
                }
                Err(msg) => problems.push(Diagnostic::new(&here, 0, 0, msg)),
            }
        }
    }
}

fn read_capped(path: &Path) -> Result<Vec<u8>, String> {
    let file = fs::File::open(path).map_err(|e| format!("cannot read: {e}"))?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read: {e}"))?;
    if bytes.len() > MAX_FILE_BYTES {
        return Err(format!("larger than {} KiB", MAX_FILE_BYTES / 1024));
    }
    Ok(bytes)
}

/// Whether any segment of a `/`-separated path starts with `.` (`.gitkeep`, `.github/…`).
fn is_hidden(path: &str) -> bool {
    path.split('/').any(|s| s.starts_with('.'))
}

fn join(base: &str, rel: &str) -> String {
    if base.is_empty() {
        rel.to_owned()
    } else if rel.is_empty() {
        base.to_owned()
    } else {
        format!("{}/{rel}", base.trim_end_matches('/'))
    }
}

fn build_all(
    origin: &str,
    folders: BTreeMap<String, Folder>,
    mut problems: Vec<Diagnostic>,
) -> TemplateSet {
    let mut templates = Vec::new();
    for (id, files) in folders {
        if templates.len() >= MAX_TEMPLATES {
            problems.push(Diagnostic::new(
                origin,
                0,
                0,
                format!("more than {MAX_TEMPLATES} template folders"),
            ));
            break;
        }
        match build(origin, &id, files) {
            Ok(t) => templates.push(t),
            Err(mut d) => problems.append(&mut d),
        }
    }
    problems.sort();
    TemplateSet {
        templates,
        problems,
    }
}

/// Parses and compiles one template folder; every problem found is returned.
fn build(origin: &str, id: &str, mut files: Folder) -> Result<Template, Vec<Diagnostic>> {
    let base = join(origin, id);
    let manifest_file = join(&base, "template.yaml");
    let Some(manifest_bytes) = files.remove("template.yaml") else {
        return Err(vec![Diagnostic::new(
            &base,
            0,
            0,
            "no template.yaml in the template folder",
        )]);
    };
    if manifest_bytes.len() > MAX_FILE_BYTES {
        return Err(vec![Diagnostic::new(
            &manifest_file,
            0,
            0,
            format!("larger than {} KiB", MAX_FILE_BYTES / 1024),
        )]);
    }
    let text = match std::str::from_utf8(&manifest_bytes) {
        Ok(t) => t,
        Err(e) => {
            let (line, column) = line_col(&manifest_bytes[..e.valid_up_to()]);
            return Err(vec![Diagnostic::new(
                &manifest_file,
                line,
                column,
                "not valid UTF-8",
            )]);
        }
    };
    let manifest: TemplateManifest = serde_saphyr::from_str_with_options(text, yaml_options())
        .map_err(|e| vec![yaml_diag(&manifest_file, &e)])?;
    let version = manifest
        .version
        .clone()
        .unwrap_or_else(|| digest(&manifest_bytes, &files));

    let mut problems = Vec::new();
    let at = |needle: &str| find_line(text, needle);
    if manifest.id != id {
        let (line, column) = at("id:");
        problems.push(Diagnostic::new(
            &manifest_file,
            line,
            column,
            format!("id `{}` differs from the folder name `{id}`", manifest.id),
        ));
    }
    for p in manifest.problems() {
        let (line, column) = match &p.parameter {
            Some(name) => at(&format!("name: {name}")),
            None => (0, 0),
        };
        problems.push(Diagnostic::new(&manifest_file, line, column, p.message));
    }

    let mut env = render::environment();
    let slug = manifest
        .slug
        .clone()
        .unwrap_or_else(|| DEFAULT_SLUG.to_owned());
    for (name, key, source) in [
        (render::TARGET, "target:", manifest.target.clone()),
        (render::SLUG, "slug:", slug),
    ] {
        if let Err(e) = env.add_template_owned(name, source) {
            let (line, column) = at(key);
            problems.push(Diagnostic::new(
                &manifest_file,
                line,
                column,
                format!("{}: {}", &key[..key.len() - 1], template_message(&e)),
            ));
        }
    }

    let mut skeleton = Vec::new();
    for (rel, bytes) in files {
        let Some(path) = rel.strip_prefix("skeleton/") else {
            // Other files (a README for the template's authors) are not rendered.
            continue;
        };
        let shown = join(&base, &rel);
        let Ok(content) = String::from_utf8(bytes) else {
            problems.push(Diagnostic::new(&shown, 0, 0, "not valid UTF-8 text"));
            continue;
        };
        if let Err(e) =
            env.add_template_owned(format!("{}{path}", render::PATH_PREFIX), path.to_owned())
        {
            problems.push(Diagnostic::new(
                &shown,
                0,
                0,
                format!("in the file name: {}", template_message(&e)),
            ));
        }
        if let Err(e) = env.add_template_owned(render::content_name(path), content) {
            let (line, column) = error_position(&e);
            problems.push(Diagnostic::new(&shown, line, column, template_message(&e)));
        }
        skeleton.push(path.to_owned());
    }
    if skeleton.is_empty() {
        problems.push(Diagnostic::new(
            join(&base, "skeleton"),
            0,
            0,
            "no files under skeleton/: the template would render nothing",
        ));
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    Ok(Template {
        manifest,
        origin: base,
        env,
        files: skeleton,
        version,
    })
}

/// A template's version when its manifest names none: the first 12 hex digits of the SHA-256
/// over its files (each path, its length and its bytes, in path order), so any change of any
/// file makes a new version and nothing else does.
fn digest(manifest: &[u8], files: &Folder) -> String {
    use sha2::{Digest, Sha256};
    let mut hash = Sha256::new();
    let mut add = |path: &str, bytes: &[u8]| {
        hash.update(path.as_bytes());
        hash.update([0]);
        hash.update((bytes.len() as u64).to_be_bytes());
        hash.update(bytes);
    };
    add("template.yaml", manifest);
    for (path, bytes) in files {
        add(path, bytes);
    }
    let hex = hex::encode(hash.finalize());
    format!("sha256:{}", &hex[..12])
}

/// serde-saphyr's defaults (resource budget, alias limits, duplicate keys are errors) without
/// the source snippet, which diagnostics do not show.
pub(super) fn yaml_options() -> serde_saphyr::Options {
    let mut o = serde_saphyr::Options::default();
    o.with_snippet = false;
    o
}

/// A YAML error as a diagnostic, with its position in its own fields.
pub(super) fn yaml_diag(file: &str, e: &serde_saphyr::Error) -> Diagnostic {
    use serde_saphyr::MessageFormatter;
    let (line, column) = e.location().map_or((0, 0), |l| (l.line(), l.column()));
    let mut inner = e;
    while let serde_saphyr::Error::AliasError { error, .. }
    | serde_saphyr::Error::WithSnippet { error, .. } = inner
    {
        inner = error;
    }
    let message = serde_saphyr::DefaultMessageFormatter.format_message(inner);
    Diagnostic::new(file, line, column, message)
}

/// A minijinja error's message without the template name and line, which diagnostics hold.
pub(super) fn template_message(e: &minijinja::Error) -> String {
    match e.detail() {
        Some(detail) => format!("{}: {detail}", e.kind()),
        None => e.kind().to_string(),
    }
}

/// 1-based line and column of a minijinja error in its template source.
fn error_position(e: &minijinja::Error) -> (u64, u64) {
    let line = e.line().unwrap_or(0) as u64;
    let column = match (e.range(), e.template_source()) {
        (Some(range), Some(source)) => {
            let start = range.start.min(source.len());
            let before = source.get(..start).unwrap_or_default();
            before
                .rsplit('\n')
                .next()
                .unwrap_or_default()
                .chars()
                .count() as u64
                + 1
        }
        _ if line > 0 => 1,
        _ => 0,
    };
    (line, column)
}

/// 1-based line and column of the first line that starts (after indentation and a list dash)
/// with `needle`; (0, 0) when there is none.
fn find_line(text: &str, needle: &str) -> (u64, u64) {
    for (n, line) in text.lines().enumerate() {
        let trimmed = line.trim_start().trim_start_matches("- ").trim_start();
        if let Some(rest) = trimmed.strip_prefix(needle)
            && (rest.is_empty() || rest.starts_with([' ', '#']))
        {
            let column = line.len() - trimmed.len();
            return (n as u64 + 1, line[..column].chars().count() as u64 + 1);
        }
    }
    (0, 0)
}

/// 1-based line and column (in characters) just after `prefix`.
fn line_col(prefix: &[u8]) -> (u64, u64) {
    let text = std::str::from_utf8(prefix).unwrap_or_default();
    let line = text.matches('\n').count() as u64 + 1;
    let last = text.rsplit('\n').next().unwrap_or_default();
    (line, last.chars().count() as u64 + 1)
}
