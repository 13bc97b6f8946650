//! Self-service templates: loading template folders and rendering them into files for the
//! devops monorepo.
//!
//! A template is a folder `<id>/` holding `template.yaml` (a
//! [`TemplateManifest`](mirante_domain::selfservice::TemplateManifest)) and `skeleton/`, whose
//! files' paths and contents are minijinja templates. The shipped ones live in
//! `templates/self-service/` and are built into the binary ([`TemplateSet::embedded`]);
//! [`TemplateSet::load`] reads one or more folders of them (e.g. a folder of the monorepo).
//!
//! Loading never fails as a whole: a broken template is left out and reported in
//! [`TemplateSet::problems`] with file, line and column; the others load.
//!
//! [`Template::render`] validates the values (the same
//! [`validate`](mirante_domain::selfservice::validate) the form runs), renders the target
//! directory, the slug and every skeleton file, and checks the result (see [`render`]):
//!
//! ```text
//! values ──validate──► normalized ──minijinja──► target, slug, files ──checks──► Rendered
//!            │ FieldError…                         │ unsafe path value        │ YAML parses, apiVersion,
//!            ▼                                     ▼                          ▼ kind, metadata.name, no Secret data
//!     RenderError::Invalid               RenderError::Invalid          RenderError::Template
//! ```
//!
//! One check needs the monorepo and is left to the caller: that [`Rendered::target`] does not
//! already exist there (`Forge::path_exists` on the base branch).

mod load;
pub(crate) mod render;

use std::path::PathBuf;

use chrono::{DateTime, Utc};
use mirante_domain::{
    Diagnostic, Snapshot,
    selfservice::{FieldError, TemplateManifest},
};
use serde::{Deserialize, Serialize};

use mirante_domain::monorepo::FileChange;

pub(crate) use load::MAX_FILE_BYTES;

/// Every template that loaded, and what was wrong with those that did not.
#[derive(Debug, Clone, Default)]
pub struct TemplateSet {
    /// Sorted by id, ids unique.
    templates: Vec<Template>,
    problems: Vec<Diagnostic>,
}

impl TemplateSet {
    /// The templates shipped in the binary (`templates/self-service/`). Their problems, if
    /// any, name files as `templates/self-service/<id>/…`.
    pub fn embedded() -> Self {
        load::embedded()
    }

    /// Reads every template folder (`<dir>/<id>/template.yaml` + `<dir>/<id>/skeleton/`) of
    /// each directory, in order; a template of a later directory replaces one with the same id
    /// from an earlier one. Blocking: file I/O and parsing. Problems name files as
    /// `<dir>/<id>/…`.
    pub fn load(dirs: &[PathBuf]) -> Self {
        let mut set = TemplateSet::default();
        for dir in dirs {
            set = set.with_overrides(load::dir(dir));
        }
        set
    }

    /// Templates from files already in memory, such as a tree read from git: `(path, contents)`
    /// with paths `<id>/template.yaml` and `<id>/skeleton/…` relative to the templates folder
    /// (files beside the folders, and hidden ones, are ignored). `origin` prefixes the file
    /// names of problems (e.g. `monorepo:templates`).
    pub fn from_files(origin: &str, files: Vec<(String, Vec<u8>)>) -> Self {
        load::from_files(origin, files)
    }

    /// This set with `other`'s templates added, each replacing one with the same id; the
    /// problems of both are kept.
    pub fn with_overrides(mut self, other: TemplateSet) -> Self {
        for t in other.templates {
            self.templates.retain(|x| x.manifest.id != t.manifest.id);
            self.templates.push(t);
        }
        self.templates
            .sort_by(|a, b| a.manifest.id.cmp(&b.manifest.id));
        self.problems.extend(other.problems);
        self
    }

    /// The templates that loaded, sorted by id.
    pub fn templates(&self) -> &[Template] {
        &self.templates
    }

    /// The template with this id.
    pub fn get(&self, id: &str) -> Option<&Template> {
        self.templates.iter().find(|t| t.manifest.id == id)
    }

    /// What kept templates from loading, each at a file, line and column (1-based; 0 when the
    /// problem has no position), sorted.
    pub fn problems(&self) -> &[Diagnostic] {
        &self.problems
    }
}

/// One loaded template: its manifest and its compiled skeleton.
#[derive(Debug, Clone)]
pub struct Template {
    manifest: TemplateManifest,
    /// Where it was read from, for messages (`templates/self-service/gpu-workspace`).
    origin: String,
    /// The compiled target, slug, skeleton paths and contents.
    env: minijinja::Environment<'static>,
    /// Skeleton files, by their path under `skeleton/`, sorted.
    files: Vec<String>,
    /// The manifest's `version`, else a digest of the template's files.
    version: String,
}

impl Template {
    /// The parsed `template.yaml`.
    pub fn manifest(&self) -> &TemplateManifest {
        &self.manifest
    }

    /// Its version: the manifest's `version`, else `sha256:` and 12 hex digits of its files.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// Where the template was read from (a folder, or the binary's `templates/self-service/`).
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// The skeleton files' paths (before rendering), relative to `skeleton/`.
    pub fn skeleton_files(&self) -> &[String] {
        &self.files
    }

    /// Validates `values` and renders every file.
    ///
    /// `values` is the JSON object of parameter values as submitted (see
    /// [`validate`](mirante_domain::selfservice::validate)); the catalog in `ctx` provides the
    /// catalog-derived options (GPU clusters and their capacity). The result is deterministic
    /// for given values and context. Errors:
    /// - [`RenderError::Invalid`]: every field the submitter must fix, including a value that
    ///   would make an unsafe path (code `unsafe_path`);
    /// - [`RenderError::Template`]: the template itself is broken (a syntax or runtime error, an
    ///   output that is not valid YAML, a manifest without `metadata.name`, a Secret with
    ///   data…), with the file and line.
    pub fn render(
        &self,
        values: &serde_json::Value,
        ctx: &RenderContext<'_>,
    ) -> Result<Rendered, RenderError> {
        render::render(self, values, ctx)
    }
}

/// What a render needs besides the values.
#[derive(Debug, Clone)]
pub struct RenderContext<'a> {
    /// The catalog in force (GPU clusters and their capacities come from it).
    pub catalog: &'a Snapshot,
    /// Who asks.
    pub requester: Requester,
    /// When; templates see it as `now` (RFC 3339) and `today` (`YYYY-MM-DD`), and
    /// `date_after_days(n)` counts from it.
    pub now: DateTime<Utc>,
    /// The namespaces an `own-namespaces` parameter may take (the requester's workspaces);
    /// `None`: any (an admin, or a render with no requester behind it).
    pub namespaces: Option<Vec<mirante_domain::selfservice::CatalogOption>>,
}

/// The person a request is made for, as templates see it (`requester.username`, …).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Requester {
    /// Login name.
    pub username: String,
    /// Display name.
    pub name: String,
    /// E-mail address, when known.
    pub email: Option<String>,
}

/// A rendered template: what to commit and where.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rendered {
    /// The template's id.
    pub template: String,
    /// The directory the files are in, relative to the repository root, `/`-separated, no
    /// trailing slash (`clusters/gpu-sp-01/workspaces/alice-nlp`).
    pub target: String,
    /// A short, branch-safe name for the request: lowercase letters, digits and `-`, at most
    /// 48 characters (`gpu-workspace-alice-nlp`).
    pub slug: String,
    /// The normalized values: one per parameter, defaults applied, `null` when not given.
    pub values: serde_json::Map<String, serde_json::Value>,
    /// Every file, each under `target`, sorted by path.
    pub files: Vec<FileChange>,
    /// The template's version (see [`Template::version`]).
    pub version: String,
}

/// Why a template could not be rendered.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RenderError {
    /// The values are refused; every problem is listed (answer 422).
    #[error("{} invalid value(s): {}", .0.len(), join_errors(.0))]
    Invalid(Vec<FieldError>),
    /// The template is broken: the message names the file and line. Not the submitter's
    /// fault (answer 500 and tell the template's authors).
    #[error("template error: {0}")]
    Template(String),
}

fn join_errors(errors: &[FieldError]) -> String {
    errors
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests;
