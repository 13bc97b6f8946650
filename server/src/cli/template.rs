//! `mirante template check DIR` and `mirante template render ID --values FILE --out DIR`.

use std::{
    fs,
    io::Write,
    path::{Component, Path, PathBuf},
    process::ExitCode,
};

use chrono::{DateTime, Utc};
use mirante_domain::Snapshot;

use crate::{
    app::catalog::CatalogSource,
    app::selfservice::template::{
        MAX_FILE_BYTES, RenderContext, RenderError, Requester, TemplateSet, render::check_path,
    },
    config::Config,
};

/// Validates the templates in `dir`, writing the problems or the summary to `out`.
pub(super) fn check(dir: &Path, out: &mut impl Write) -> ExitCode {
    let shown = dir.display();
    let set = TemplateSet::load(&[dir.to_owned()]);
    let written = (|| {
        for d in set.problems() {
            writeln!(out, "{d}")?;
        }
        if !set.problems().is_empty() {
            writeln!(
                out,
                "{shown} is invalid: {} problem(s)",
                set.problems().len()
            )?;
            return Ok(ExitCode::FAILURE);
        }
        if set.templates().is_empty() {
            writeln!(
                out,
                "{shown} is invalid: no templates (expected <id>/template.yaml and <id>/skeleton/)"
            )?;
            return Ok(ExitCode::FAILURE);
        }
        let ids: Vec<&str> = set
            .templates()
            .iter()
            .map(|t| t.manifest().id.as_str())
            .collect();
        writeln!(
            out,
            "{shown} is valid: {} template(s): {}",
            ids.len(),
            ids.join(", ")
        )?;
        Ok(ExitCode::SUCCESS)
    })();
    written.unwrap_or_else(|e: std::io::Error| {
        eprintln!("error: {e}");
        ExitCode::FAILURE
    })
}

/// What `template render` was asked.
#[derive(Debug)]
pub(super) struct RenderArgs {
    /// The template's id.
    pub id: String,
    /// The values file.
    pub values: PathBuf,
    /// The output directory.
    pub out: PathBuf,
    /// Template folders; the built-in templates when empty.
    pub templates: Vec<PathBuf>,
    /// The catalog directory; the configured or demo catalog when unset.
    pub catalog: Option<PathBuf>,
    /// The requester's username.
    pub requester: String,
    /// The request's moment; now when unset.
    pub now: Option<DateTime<Utc>>,
}

/// Renders a template into `args.out`, printing what was written; problems go to stderr.
pub(super) fn render(args: &RenderArgs) -> ExitCode {
    match try_render(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(lines) => {
            for l in lines {
                eprintln!("{l}");
            }
            ExitCode::FAILURE
        }
    }
}

fn try_render(args: &RenderArgs) -> Result<(), Vec<String>> {
    let one = |s: String| vec![s];
    let set = if args.templates.is_empty() {
        TemplateSet::embedded()
    } else {
        TemplateSet::load(&args.templates)
    };
    let Some(template) = set.get(&args.id) else {
        let mut lines: Vec<String> = set.problems().iter().map(ToString::to_string).collect();
        let ids: Vec<&str> = set
            .templates()
            .iter()
            .map(|t| t.manifest().id.as_str())
            .collect();
        lines.push(format!(
            "error: no template `{}` (available: {})",
            args.id,
            if ids.is_empty() {
                "none".to_owned()
            } else {
                ids.join(", ")
            }
        ));
        return Err(lines);
    };
    let values = read_values(&args.values).map_err(one)?;
    let snapshot = load_catalog(args.catalog.as_deref()).map_err(one)?;
    let ctx = RenderContext {
        catalog: &snapshot,
        requester: Requester {
            username: args.requester.clone(),
            name: args.requester.clone(),
            email: None,
        },
        now: args.now.unwrap_or_else(Utc::now),
        // No requester's workspaces behind a local render: any namespace.
        namespaces: None,
    };
    let rendered = template.render(&values, &ctx).map_err(|e| match e {
        RenderError::Invalid(errors) => {
            let shown = args.values.display();
            let mut lines: Vec<String> = errors
                .iter()
                .map(|e| {
                    if e.field.is_empty() {
                        format!("{shown}: {} [{}]", e.message, e.code)
                    } else {
                        format!("{shown}: {}: {} [{}]", e.field, e.message, e.code)
                    }
                })
                .collect();
            lines.push(format!(
                "error: {} invalid value(s) for template `{}`",
                errors.len(),
                args.id
            ));
            lines
        }
        RenderError::Template(m) => vec![format!("error: {m}")],
    })?;
    let mut stdout = std::io::stdout().lock();
    for f in &rendered.files {
        let path = write_under(&args.out, &f.path, &f.content).map_err(one)?;
        let _ = writeln!(stdout, "wrote {}", path.display());
    }
    let _ = writeln!(
        stdout,
        "rendered `{}` into {}: {} file(s) under {} (slug {})",
        rendered.template,
        args.out.display(),
        rendered.files.len(),
        rendered.target,
        rendered.slug
    );
    Ok(())
}

/// The values file as JSON: `.json` files with serde_json, anything else as YAML.
fn read_values(path: &Path) -> Result<serde_json::Value, String> {
    let shown = path.display();
    let bytes = fs::read(path).map_err(|e| format!("{shown}: cannot read: {e}"))?;
    if bytes.len() > MAX_FILE_BYTES {
        return Err(format!(
            "{shown}: larger than {} KiB",
            MAX_FILE_BYTES / 1024
        ));
    }
    let text = String::from_utf8(bytes).map_err(|_| format!("{shown}: not valid UTF-8 text"))?;
    if path.extension().is_some_and(|e| e == "json") {
        serde_json::from_str(&text).map_err(|e| format!("{shown}:{}:{}: {e}", e.line(), e.column()))
    } else {
        let mut options = serde_saphyr::Options::default();
        options.with_snippet = false;
        serde_saphyr::from_str_with_options(&text, options).map_err(|e| {
            let (line, column) = e.location().map_or((0, 0), |l| (l.line(), l.column()));
            format!("{shown}:{line}:{column}: {e}")
        })
    }
}

/// The catalog the GPU clusters come from: `dir`, else the configured one, else the demo.
fn load_catalog(dir: Option<&Path>) -> Result<Snapshot, String> {
    let source = match dir {
        Some(d) => CatalogSource::dir(d),
        None => {
            let config = Config::load().map_err(|e| format!("error: {e}"))?;
            match config.catalog {
                Some(d) => CatalogSource::dir(&d),
                None => CatalogSource::Embedded,
            }
        }
    };
    let loaded = source.load().map_err(|d| {
        format!(
            "error: the catalog ({}) is invalid:\n{d}",
            source.describe()
        )
    })?;
    Ok(loaded.into_snapshot(None))
}

/// Writes `content` at `rel` under `root`, refusing anything that would land outside it: an
/// unsafe relative path, or a symbolic link on the way (which could point anywhere).
fn write_under(root: &Path, rel: &str, content: &str) -> Result<PathBuf, String> {
    check_path(rel).map_err(|m| format!("error: refusing to write {rel:?}: {m}"))?;
    let rel_path = Path::new(rel);
    if !rel_path
        .components()
        .all(|c| matches!(c, Component::Normal(_)))
    {
        return Err(format!(
            "error: refusing to write {rel:?}: not a plain relative path"
        ));
    }
    fs::create_dir_all(root)
        .map_err(|e| format!("error: cannot create {}: {e}", root.display()))?;
    let mut here = root.to_path_buf();
    let parts: Vec<_> = rel_path.components().collect();
    for (i, part) in parts.iter().enumerate() {
        here.push(part);
        match fs::symlink_metadata(&here) {
            Ok(m) if m.file_type().is_symlink() => {
                return Err(format!(
                    "error: refusing to write through the symbolic link {}",
                    here.display()
                ));
            }
            Ok(m) if i + 1 < parts.len() && !m.is_dir() => {
                return Err(format!("error: {} is not a directory", here.display()));
            }
            Ok(_) => {}
            Err(_) if i + 1 < parts.len() => {
                fs::create_dir(&here)
                    .map_err(|e| format!("error: cannot create {}: {e}", here.display()))?;
            }
            Err(_) => {}
        }
    }
    fs::write(&here, content)
        .map_err(|e| format!("error: cannot write {}: {e}", here.display()))?;
    Ok(here)
}
