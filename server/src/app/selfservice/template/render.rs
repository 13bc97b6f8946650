//! Rendering a template safely, and the checks its output must pass.
//!
//! Values cannot change the structure of what they are printed into, whatever the template
//! author writes, because the formatter (the hook minijinja calls for every `{{ … }}`) depends
//! on where the output goes, not on a filter someone could forget:
//!
//! | output | how a value is printed |
//! |---|---|
//! | `*.yaml`, `*.yml` | a YAML scalar: strings always double-quoted with every line break, quote, backslash and non-printable character escaped; numbers, booleans and `null` bare; lists and maps as flow collections of the same |
//! | `*.json` | JSON |
//! | `*.md` | Markdown text: every character that opens Markdown or HTML syntax (`\` `` ` `` `*` `_` `{` `}` `[` `]` `<` `>` `#` `|` `!` `~` `&`) backslash-escaped, so a value shows as written and never becomes a link, an image, HTML or a table cell |
//! | file names and `target` | only `[A-Za-z0-9_][A-Za-z0-9._-]*` (at most 100 characters): no `/`, `\`, `..`, control characters; anything else is refused as [`ErrorCode::UnsafePath`] |
//! | other files, `slug` | as is (values never hold control characters: validation refuses them) |
//!
//! `|safe` and `{% autoescape false %}` change nothing. Paths are then checked whole (relative,
//! no `.`/`..`/empty segments, no backslash or control character, inside `target`), and every
//! YAML file is parsed (all documents) and checked by [`check_manifests`].

use std::fmt::Write as _;

use chrono::{Days, NaiveDate};
use minijinja::{
    AutoEscape, Environment, Error, ErrorKind, Output, State, UndefinedBehavior,
    syntax::SyntaxConfig,
    value::{Serde, Value, ValueKind},
};
use mirante_domain::selfservice::{
    CatalogContext, ErrorCode, FieldError, is_dns_label, is_dns_subdomain, validate,
};
use serde_json::{Map, Value as Json};

use super::{
    RenderContext, RenderError, Rendered, Template,
    load::{template_message, yaml_options},
};
use mirante_domain::monorepo::FileChange;

/// The compiled name of a manifest's `target`.
pub(super) const TARGET: &str = "@target";
/// The compiled name of a manifest's `slug`.
pub(super) const SLUG: &str = "@slug";
/// Prefix of the compiled name of a skeleton file's path.
pub(super) const PATH_PREFIX: &str = "@path/";
/// The budget of one render (see minijinja's fuel): ample for real templates, a bound on loops.
const FUEL: u64 = 500_000;
/// Longest slug, in characters.
pub(crate) const MAX_SLUG: usize = 48;
/// Longest rendered path, in bytes.
const MAX_PATH: usize = 512;
/// Longest value printed into a path.
const MAX_PATH_VALUE: usize = 100;
/// Marker opening the detail of an unsafe-path error; the offending value follows as JSON.
const UNSAFE_PATH: &str = "unsafe path value ";

/// The compiled name of a skeleton file's content.
pub(super) fn content_name(path: &str) -> String {
    format!("skeleton/{path}")
}

/// How values are printed, by where the output goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Yaml,
    Json,
    Markdown,
    Path,
    Text,
}

fn mode_of(template_name: &str) -> Mode {
    if template_name == TARGET || template_name.starts_with(PATH_PREFIX) {
        Mode::Path
    } else if is_yaml(template_name) {
        Mode::Yaml
    } else if template_name.ends_with(".json") {
        Mode::Json
    } else if template_name.ends_with(".md") {
        Mode::Markdown
    } else {
        Mode::Text
    }
}

fn is_yaml(path: &str) -> bool {
    path.ends_with(".yaml") || path.ends_with(".yml")
}

/// A minijinja environment set up for templates: strict undefined variables (a typo is an
/// error, not an empty string), the safe formatter, a fuel budget, `trim_blocks` and
/// `lstrip_blocks` (so `{% for %}` lines leave no blank lines in YAML), trailing newlines kept,
/// and the `dns_label` filter and `date_after_days` function.
pub(super) fn environment() -> Environment<'static> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env.set_auto_escape_callback(|_| AutoEscape::None);
    env.set_formatter(format_value);
    env.set_fuel(Some(FUEL));
    if let Ok(syntax) = SyntaxConfig::builder()
        .keep_trailing_newline(true)
        .trim_blocks(true)
        .lstrip_blocks(true)
        .build()
    {
        env.set_syntax(syntax);
    }
    env.add_filter("dns_label", |s: &str| dns_label(s));
    env.add_function("date_after_days", date_after_days);
    env.add_function("kubeconfig", kubeconfig);
    env
}

/// The chosen cluster's GitOps folder (`folder` in templates), from the catalog, which checked
/// it when it loaded (relative names of `[A-Za-z0-9._-]`, no `.` or `..`): printed into a path
/// as it is, `/` included, where any value's `/` is refused; elsewhere as a string. The whole
/// path is still checked after rendering.
#[derive(Debug)]
struct RepoFolder(String);

impl minijinja::value::Object for RepoFolder {
    fn repr(self: &std::sync::Arc<Self>) -> minijinja::value::ObjectRepr {
        minijinja::value::ObjectRepr::Plain
    }

    fn render(self: &std::sync::Arc<Self>, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A block of text shown exactly as written: in Markdown a fenced code block whose fence is
/// longer than any run of backticks inside, so nothing in it can end it early; elsewhere the
/// text, formatted as any string is.
#[derive(Debug)]
struct CodeBlock {
    language: &'static str,
    text: String,
}

impl minijinja::value::Object for CodeBlock {
    fn render(self: &std::sync::Arc<Self>, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

/// `kubeconfig(namespace)`: the kubeconfig for `namespace` on the chosen cluster, as a code
/// block, or none when the catalog does not record how to reach the cluster.
fn kubeconfig(state: &State, namespace: &str) -> Result<Value, Error> {
    let kubernetes = state.lookup("kubernetes").ok_or_else(|| {
        Error::new(
            ErrorKind::InvalidOperation,
            "no `kubernetes` in the context",
        )
    })?;
    let access: Option<mirante_domain::KubernetesAccess> =
        serde_json::to_value(kubernetes.get_attr("access")?)
            .ok()
            .and_then(|v| serde_json::from_value(v).ok());
    let cluster = kubernetes.get_attr("cluster")?;
    Ok(match (access, cluster.as_str()) {
        (Some(access), Some(cluster)) => Value::from_object(CodeBlock {
            language: "yaml",
            text: crate::app::selfservice::kubeconfig::kubeconfig(&access, cluster, namespace),
        }),
        _ => Value::from(()),
    })
}

/// The formatter: every `{{ … }}` goes through here.
fn format_value(out: &mut Output, state: &mut State, value: &Value) -> Result<(), Error> {
    let mut s = String::new();
    match mode_of(state.name()) {
        Mode::Yaml => yaml(&mut s, value)?,
        Mode::Json => {
            let j = serde_json::to_string(value)
                .map_err(|e| Error::new(ErrorKind::BadSerialization, e.to_string()))?;
            s.push_str(&j);
        }
        Mode::Path => path_value(&mut s, value)?,
        Mode::Markdown => {
            if value.is_undefined() {
                return Err(Error::from(ErrorKind::UndefinedError));
            }
            if let Some(block) = value.downcast_object_ref::<CodeBlock>() {
                fenced(&mut s, block);
            } else if !value.is_none() {
                markdown_escape(&mut s, &value.to_string());
            }
        }
        Mode::Text => {
            if value.is_undefined() {
                return Err(Error::from(ErrorKind::UndefinedError));
            }
            if !value.is_none() {
                write!(s, "{value}").map_err(|_| Error::from(ErrorKind::WriteFailure))?;
            }
        }
    }
    out.write_str(&s)
        .map_err(|_| Error::from(ErrorKind::WriteFailure))
}

/// `block` as a fenced code block: the fence is one backtick longer than the longest run of
/// backticks in the text (at least three), so the text cannot close it.
fn fenced(s: &mut String, block: &CodeBlock) {
    let longest = block
        .text
        .split(|c| c != '`')
        .map(str::len)
        .max()
        .unwrap_or(0);
    let fence = "`".repeat((longest + 1).max(3));
    let _ = writeln!(s, "{fence}{}", block.language);
    s.push_str(&block.text);
    if !block.text.ends_with('\n') {
        s.push('\n');
    }
    s.push_str(&fence);
}

/// [`fenced`] for the tests.
#[cfg(test)]
pub(super) fn fenced_for_test(s: &mut String, text: &str) {
    fenced(
        s,
        &CodeBlock {
            language: "yaml",
            text: text.to_owned(),
        },
    );
}

/// Characters that open Markdown (CommonMark and GitHub's tables and strikethrough) or HTML
/// syntax where a value may land. `-`, `+`, `.` and digits only do so at the start of a line,
/// where templates print labels, not values; they stay as written so names read naturally.
const MARKDOWN_SPECIAL: &[char] = &[
    '\\', '`', '*', '_', '{', '}', '[', ']', '<', '>', '#', '|', '!', '~', '&',
];

/// `text` as Markdown that shows exactly `text`: specials backslash-escaped (CommonMark allows
/// it for any ASCII punctuation) and line breaks made spaces, so a value stays in its line.
fn markdown_escape(s: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '\n' | '\r' => s.push(' '),
            c if MARKDOWN_SPECIAL.contains(&c) => {
                s.push('\\');
                s.push(c);
            }
            c => s.push(c),
        }
    }
}

/// `value` as a YAML flow node that cannot be anything but that one value.
fn yaml(s: &mut String, value: &Value) -> Result<(), Error> {
    if let Some(folder) = value.downcast_object_ref::<RepoFolder>() {
        yaml_quote(s, &folder.0);
        return Ok(());
    }
    match value.kind() {
        ValueKind::Undefined => return Err(Error::from(ErrorKind::UndefinedError)),
        ValueKind::None => s.push_str("null"),
        ValueKind::Bool => s.push_str(if value.is_true() { "true" } else { "false" }),
        ValueKind::Number => {
            let finite = f64::try_from(value.clone()).is_ok_and(f64::is_finite);
            if !finite && !value.is_integer() {
                return Err(Error::new(
                    ErrorKind::InvalidOperation,
                    "cannot print a number that is not finite",
                ));
            }
            s.push_str(&value.to_string());
        }
        ValueKind::String => yaml_quote(s, value.as_str().unwrap_or_default()),
        ValueKind::Seq | ValueKind::Iterable => {
            s.push('[');
            for (i, item) in value.try_iter()?.enumerate() {
                if i > 0 {
                    s.push_str(", ");
                }
                yaml(s, &item)?;
            }
            s.push(']');
        }
        ValueKind::Map => {
            s.push('{');
            for (i, key) in value.try_iter()?.enumerate() {
                if i > 0 {
                    s.push_str(", ");
                }
                yaml(s, &key)?;
                s.push_str(": ");
                yaml(s, &value.get_item(&key)?)?;
            }
            s.push('}');
        }
        _ => {
            return Err(Error::new(
                ErrorKind::InvalidOperation,
                format!("cannot print a {} into YAML", value.kind()),
            ));
        }
    }
    Ok(())
}

pub(crate) use mirante_domain::selfservice::yaml_quote;

/// A value printed into a path: a plain name, never a separator or a dot-only segment.
fn path_value(s: &mut String, value: &Value) -> Result<(), Error> {
    if let Some(folder) = value.downcast_object_ref::<RepoFolder>() {
        s.push_str(&folder.0);
        return Ok(());
    }
    let text = match value.kind() {
        ValueKind::String => value.as_str().unwrap_or_default().to_owned(),
        ValueKind::Number if value.is_integer() => value.to_string(),
        ValueKind::Undefined => return Err(Error::from(ErrorKind::UndefinedError)),
        _ => String::new(),
    };
    let safe = !text.is_empty()
        && text.len() <= MAX_PATH_VALUE
        && text
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_')
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if !safe {
        let json = serde_json::to_string(value).unwrap_or_default();
        return Err(Error::new(
            ErrorKind::InvalidOperation,
            format!("{UNSAFE_PATH}{json}"),
        ));
    }
    s.push_str(&text);
    Ok(())
}

/// `text` made into a DNS label: lowercase ASCII letters and digits kept, anything else
/// becomes `-`, runs of `-` collapse, cut to 63 characters, no `-` at either end; `x` when
/// nothing is left.
pub(crate) fn dns_label(text: &str) -> String {
    slugify(text, 63)
}

fn slugify(text: &str, max: usize) -> String {
    let mut out = String::new();
    for c in text.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            out.push(c);
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    out.truncate(max);
    let trimmed = out.trim_matches('-');
    if trimmed.is_empty() {
        "x".to_owned()
    } else {
        trimmed.to_owned()
    }
}

/// `date_after_days(n)`: the date `n` days after the render's `now`, as `YYYY-MM-DD`.
fn date_after_days(state: &State, days: i64) -> Result<String, Error> {
    let today = state
        .lookup("today")
        .and_then(|v| v.as_str().map(str::to_owned))
        .and_then(|s| NaiveDate::parse_from_str(&s, "%Y-%m-%d").ok())
        .ok_or_else(|| Error::new(ErrorKind::InvalidOperation, "no `today` in the context"))?;
    let shifted = if days >= 0 {
        today.checked_add_days(Days::new(days.unsigned_abs()))
    } else {
        today.checked_sub_days(Days::new(days.unsigned_abs()))
    };
    shifted
        .map(|d| d.format("%Y-%m-%d").to_string())
        .ok_or_else(|| Error::new(ErrorKind::InvalidOperation, "date out of range"))
}

pub(super) fn render(
    template: &Template,
    values: &Json,
    ctx: &RenderContext<'_>,
) -> Result<Rendered, RenderError> {
    let manifest = &template.manifest;
    let catalog =
        CatalogContext::from_snapshot(ctx.catalog).with_namespaces(ctx.namespaces.clone());
    let normalized = validate(manifest, values, &catalog).map_err(RenderError::Invalid)?;

    // The chosen catalog option of each parameter that has options.
    let mut options = Map::new();
    let mut cluster = None;
    for p in &manifest.parameters {
        if let (Some(source), Some(Json::String(chosen))) = (p.options, normalized.get(&p.name))
            && let Some(o) = catalog.options(source).iter().find(|o| &o.value == chosen)
        {
            options.insert(
                p.name.clone(),
                serde_json::to_value(o).unwrap_or(Json::Null),
            );
            if source.is_cluster() {
                cluster = cluster.or(Some(o));
            }
        }
    }
    let mut context = normalized.clone();
    context.insert(
        "requester".into(),
        serde_json::to_value(&ctx.requester).unwrap_or(Json::Null),
    );
    context.insert("now".into(), ctx.now.to_rfc3339().into());
    context.insert(
        "today".into(),
        ctx.now.date_naive().format("%Y-%m-%d").to_string().into(),
    );
    context.insert("template".into(), serde_json::json!({ "id": manifest.id }));
    context.insert("options".into(), Json::Object(options));
    // Who the requester is on the chosen cluster, and how to reach it when the catalog says.
    let access = cluster.and_then(|c| c.kubernetes.as_ref());
    context.insert(
        "kubernetes".into(),
        serde_json::json!({
            "cluster": cluster.map(|c| c.value.clone()),
            "user": mirante_domain::kubernetes_user(access, &ctx.requester.username),
            "groups_prefix": access
                .map_or(mirante_domain::DEFAULT_OIDC_PREFIX, |a| a.oidc.groups_prefix.as_str()),
            "access": access,
        }),
    );

    // Where the chosen cluster's files go; undefined for a template that names no cluster.
    let folder = cluster
        .and_then(|c| c.folder.clone())
        .map_or(Value::UNDEFINED, |f| Value::from_object(RepoFolder(f)));
    let run = |name: &str, context: &Map<String, Json>| -> Result<String, RenderError> {
        let t = template
            .env
            .get_template(name)
            .map_err(|e| RenderError::Template(describe(template, name, &e)))?;
        t.render(minijinja::context! { folder => folder.clone(), ..Value::from(Serde(context)) })
            .map_err(|e| map_error(template, name, &e, &normalized))
    };

    let target = run(TARGET, &context)?;
    let target = target.trim().trim_end_matches('/').to_owned();
    check_path(&target).map_err(|m| {
        RenderError::Template(format!(
            "{}/template.yaml: target renders to an unsafe path {target:?}: {m}",
            template.origin
        ))
    })?;
    context.insert("target".into(), target.clone().into());

    let slug = slugify(&run(SLUG, &context)?, MAX_SLUG);

    let mut files = Vec::with_capacity(template.files.len());
    for source in &template.files {
        let rel = run(&format!("{PATH_PREFIX}{source}"), &context)?;
        let shown = format!("{}/skeleton/{source}", template.origin);
        check_path(&rel).map_err(|m| {
            RenderError::Template(format!("{shown}: renders to an unsafe path {rel:?}: {m}"))
        })?;
        if extension(&rel) != extension(source) {
            return Err(RenderError::Template(format!(
                "{shown}: the rendered name {rel:?} changes the file's extension"
            )));
        }
        let path = format!("{target}/{rel}");
        if path.len() > MAX_PATH {
            return Err(RenderError::Template(format!(
                "{shown}: the rendered path is longer than {MAX_PATH} bytes"
            )));
        }
        let content = run(&content_name(source), &context)?;
        // A file that renders to nothing (its `{% if %}` was false) is left out.
        if !content.trim().is_empty() {
            files.push(FileChange { path, content });
        }
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    if let Some(w) = files.windows(2).find(|w| w[0].path == w[1].path) {
        return Err(RenderError::Template(format!(
            "{}: two skeleton files render to {}",
            template.origin, w[0].path
        )));
    }
    let problems = check_manifests(&files);
    if !problems.is_empty() {
        return Err(RenderError::Template(format!(
            "the rendered files of {} are invalid: {}",
            template.origin,
            problems.join("; ")
        )));
    }
    Ok(Rendered {
        template: manifest.id.clone(),
        target,
        slug,
        values: normalized,
        files,
        version: template.version.clone(),
    })
}

fn extension(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.rsplit_once('.').map_or("", |(_, ext)| ext)
}

/// Turns a render error into the submitter's fault (a value unusable in a path) or the
/// template's.
fn map_error(
    template: &Template,
    name: &str,
    e: &minijinja::Error,
    values: &Map<String, Json>,
) -> RenderError {
    // The error may come from a nested call; look at the whole chain.
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = cur {
        if let Some(mj) = err.downcast_ref::<minijinja::Error>()
            && let Some(json) = mj.detail().and_then(|d| d.strip_prefix(UNSAFE_PATH))
        {
            let offending: Json = serde_json::from_str(json).unwrap_or(Json::Null);
            let mut fields: Vec<FieldError> = values
                .iter()
                .filter(|(_, v)| **v == offending)
                .map(|(k, _)| unsafe_path_error(k))
                .collect();
            if fields.is_empty() {
                fields.push(unsafe_path_error(""));
            }
            return RenderError::Invalid(fields);
        }
        cur = err.source();
    }
    RenderError::Template(describe(template, name, e))
}

fn unsafe_path_error(field: &str) -> FieldError {
    FieldError {
        field: field.to_owned(),
        code: ErrorCode::UnsafePath,
        args: Map::new(),
        message: "cannot be used in a file path: use letters, digits, `.`, `_` and `-`, \
                  starting with a letter, digit or `_`"
            .to_owned(),
    }
}

/// A template error as `file:line: message`.
fn describe(template: &Template, name: &str, e: &minijinja::Error) -> String {
    let file = if name == TARGET || name == SLUG {
        format!("{}/template.yaml ({})", template.origin, &name[1..])
    } else if let Some(p) = name.strip_prefix(PATH_PREFIX) {
        format!("{}/skeleton/{p} (file name)", template.origin)
    } else {
        format!("{}/{name}", template.origin)
    };
    match e.line() {
        Some(line) if !name.starts_with('@') => {
            format!("{file}:{line}: {}", template_message(e))
        }
        _ => format!("{file}: {}", template_message(e)),
    }
}

/// Why a rendered relative path is unsafe, if it is: empty, absolute, with a backslash, a
/// control or invisible character, an empty, `.` or `..` segment, or a segment starting with
/// `.`.
pub(crate) fn check_path(path: &str) -> Result<(), String> {
    if path.is_empty() {
        return Err("empty".into());
    }
    if path.starts_with('/') {
        return Err("absolute".into());
    }
    if path.contains('\\') {
        return Err("contains a backslash".into());
    }
    if path.contains(':') {
        return Err("contains `:`".into());
    }
    if path
        .chars()
        .any(|c| mirante_domain::selfservice::is_forbidden_char(c) || c == '\u{7f}')
    {
        return Err("contains a control or invisible character".into());
    }
    for segment in path.split('/') {
        if segment.is_empty() {
            return Err("has an empty segment".into());
        }
        if segment == "." || segment == ".." {
            return Err(format!("has a `{segment}` segment"));
        }
        if segment.starts_with('.') {
            return Err("has a hidden (dot) segment".into());
        }
    }
    Ok(())
}

/// Checks rendered files before they are proposed; returns every problem as
/// `path[:line:column]: message`, empty when all is well.
///
/// Every `*.yaml`/`*.yml` file must parse (all of its documents, with serde-saphyr's resource
/// limits); every non-empty document must be a mapping with `apiVersion`, `kind` and
/// `metadata.name`; names must be RFC 1123 (a label for a Namespace and for
/// `metadata.namespace`, a subdomain otherwise); label keys and values must be valid; no two
/// objects share a kind, namespace and name; a `Secret` may not carry `data` or `stringData`
/// (secrets never go to git).
pub(crate) fn check_manifests(files: &[FileChange]) -> Vec<String> {
    let mut problems = Vec::new();
    // (kind, namespace, name) → where it was first seen; two objects with the same identity
    // would overwrite each other when applied.
    let mut seen: std::collections::BTreeMap<(String, String, String), String> =
        std::collections::BTreeMap::new();
    for f in files.iter().filter(|f| is_yaml(&f.path)) {
        let docs: Vec<Json> =
            match serde_saphyr::from_multiple_with_options(&f.content, yaml_options()) {
                Ok(d) => d,
                Err(e) => {
                    let d = super::load::yaml_diag(&f.path, &e);
                    problems.push(d.to_string());
                    continue;
                }
            };
        for (i, doc) in docs.iter().enumerate() {
            let at = format!("{}: document {}", f.path, i + 1);
            check_document(doc, &at, &mut problems);
            let text = |v: &Json| v.as_str().unwrap_or_default().to_owned();
            let identity = (
                text(&doc["kind"]),
                text(&doc["metadata"]["namespace"]),
                text(&doc["metadata"]["name"]),
            );
            if identity.0.is_empty() || identity.2.is_empty() {
                continue;
            }
            if let Some(first) = seen.get(&identity) {
                problems.push(format!(
                    "{at}: {} {:?} is already defined in {first}",
                    identity.0, identity.2
                ));
            } else {
                seen.insert(identity, at);
            }
        }
    }
    problems
}

fn check_document(doc: &Json, at: &str, problems: &mut Vec<String>) {
    let Some(obj) = doc.as_object() else {
        if !doc.is_null() {
            problems.push(format!("{at}: not a mapping"));
        }
        return;
    };
    let text = |key: &str| {
        obj.get(key)
            .and_then(Json::as_str)
            .filter(|s| !s.is_empty())
    };
    if text("apiVersion").is_none() {
        problems.push(format!("{at}: no apiVersion"));
    }
    let kind = text("kind");
    if kind.is_none() {
        problems.push(format!("{at}: no kind"));
    }
    let meta = obj.get("metadata").and_then(Json::as_object);
    match meta.and_then(|m| m.get("name")).and_then(Json::as_str) {
        None => problems.push(format!("{at}: no metadata.name")),
        Some(name) => {
            let ok = if kind == Some("Namespace") {
                is_dns_label(name)
            } else {
                is_dns_subdomain(name)
            };
            if !ok {
                problems.push(format!("{at}: metadata.name {name:?} is not a valid name"));
            }
        }
    }
    if let Some(ns) = meta.and_then(|m| m.get("namespace"))
        && !ns.as_str().is_some_and(is_dns_label)
    {
        problems.push(format!("{at}: metadata.namespace {ns} is not a DNS label"));
    }
    if let Some(labels) = meta.and_then(|m| m.get("labels")) {
        match labels.as_object() {
            None => problems.push(format!("{at}: metadata.labels is not a mapping")),
            Some(labels) => {
                for (k, v) in labels {
                    if !is_label_key(k) {
                        problems.push(format!("{at}: label key {k:?} is not valid"));
                    }
                    if !v.as_str().is_some_and(is_label_value) {
                        problems.push(format!("{at}: label {k:?} has an invalid value {v}"));
                    }
                }
            }
        }
    }
    if kind == Some("Secret") && (obj.contains_key("data") || obj.contains_key("stringData")) {
        problems.push(format!(
            "{at}: a Secret with data or stringData: secret values never go to git"
        ));
    }
}

/// A label value: empty, or at most 63 characters of `[A-Za-z0-9._-]` starting and ending
/// with a letter or digit.
fn is_label_value(v: &str) -> bool {
    v.is_empty()
        || (v.len() <= 63
            && v.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
            && v.as_bytes()[0].is_ascii_alphanumeric()
            && v.as_bytes()[v.len() - 1].is_ascii_alphanumeric())
}

/// A label key: an optional DNS-subdomain prefix and `/`, then a name like a label value
/// (non-empty).
fn is_label_key(k: &str) -> bool {
    let (prefix, name) = match k.split_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, k),
    };
    prefix.is_none_or(is_dns_subdomain) && !name.is_empty() && is_label_value(name)
}
