//! Self-service templates: the manifest a template folder declares (`template.yaml`) and the
//! validation of the values a person submits for it.
//!
//! Pure and compiled for the browser too, so the form is generated from the same parameter
//! list and checked by the same [`validate`] on both sides; the server's answer is the one
//! that counts. Rendering the skeleton files lives in the server (`selfservice::template`).
//!
//! The parameter list is a subset of JSON Schema (`type`, `title`, `description`, `enum`,
//! `default`, `minimum`, `maximum`, `minLength`, `maxLength`, `pattern`, `format`, `items`,
//! `minItems`, `maxItems`, `uniqueItems`, `required`) plus three catalog-derived keys:
//! `options` (the choices come from the catalog, e.g. `gpu-clusters`), `maximumFrom`
//! (the maximum is the capacity of the option chosen in another parameter) and `clusterFrom`
//! (a namespace must be on the cluster chosen in another parameter).

use std::collections::BTreeSet;
use std::fmt::{self, Write as _};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::access::Role;
use crate::model::{KubernetesAccess, default_gitops_folder};
use crate::snapshot::Snapshot;

/// Longest string accepted for a string parameter that sets no `maxLength`.
pub const DEFAULT_MAX_LENGTH: u32 = 256;
/// Most items accepted in an array parameter that sets no `maxItems`.
pub const DEFAULT_MAX_ITEMS: u32 = 64;
/// Longest `pattern` a template may declare, in bytes.
const MAX_PATTERN_LEN: usize = 512;
/// Names the renderer puts beside the values; a parameter may not take them.
pub const RESERVED_NAMES: &[&str] = &[
    "requester",
    "now",
    "today",
    "template",
    "options",
    "target",
    "folder",
    "kubernetes",
];

/// A text in the portal's two languages.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Localized {
    /// Brazilian Portuguese.
    #[serde(rename = "pt-BR")]
    pub pt_br: String,
    /// English.
    pub en: String,
}

impl Localized {
    /// The text for a language tag: Portuguese for `pt*`, English otherwise.
    pub fn get(&self, lang: &str) -> &str {
        if lang.starts_with("pt") {
            &self.pt_br
        } else {
            &self.en
        }
    }
}

/// Whether a request made from the template waits for an admin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Approval {
    /// An admin approves or rejects it before anything is proposed.
    Required,
    /// It is proposed as soon as it is submitted (the pull request is still reviewed).
    None,
}

/// Who may use a template. Empty lists mean every signed-in user; otherwise a user whose role
/// is listed, or who is in one of the groups, may use it. Admins may use every template.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Access {
    /// Roles allowed.
    #[serde(default)]
    pub roles: Vec<Role>,
    /// Identity-provider groups allowed.
    #[serde(default)]
    pub groups: Vec<String>,
}

/// A template's `template.yaml`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TemplateManifest {
    /// Identifier, a DNS label equal to the template's folder name (`gpu-workspace`).
    pub id: String,
    /// Name shown in the catalogue of templates.
    pub title: Localized,
    /// What the template creates, shown beside the title.
    pub description: Localized,
    /// Who may use it.
    #[serde(default)]
    pub access: Access,
    /// Whether requests wait for an admin's approval.
    pub approval: Approval,
    /// The directory the files go to, relative to the monorepo root; a minijinja template
    /// over the values (`clusters/{{ cluster }}/workspaces/{{ name }}`).
    pub target: String,
    /// The short, branch-safe name of a request (minijinja over the values); by default the
    /// template id and the requester's username.
    #[serde(default)]
    pub slug: Option<String>,
    /// The form's fields, in order.
    #[serde(default)]
    pub parameters: Vec<Parameter>,
    /// The template's version, as its authors name it (`"2"`, `"2026-12"`); without it the
    /// portal names each version by a digest of the template's files. A resource records the
    /// version it was rendered with; when the template's changes, the resource is offered the
    /// update.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Who approves the requests that change a resource made from it (`dayTwo`).
    #[serde(default, rename = "dayTwo")]
    pub day_two: DayTwo,
}

/// Whether requests on a resource that exists wait for an admin. By default an update asks as
/// the template's `approval` says; an extension (within the template's bounds on `days`) and a
/// removal do not.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DayTwo {
    /// An update's approval; default: the template's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update: Option<Approval>,
    /// An extension's approval; default: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extend: Option<Approval>,
    /// Extensions of more days than this wait for an admin even when `extend` is `none`
    /// ("extensions up to 30 days need no approval").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extend_approval_over_days: Option<u32>,
    /// A removal's approval; default: none (it gives something back).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remove: Option<Approval>,
}

impl TemplateManifest {
    /// Whether a request doing `action` with this template waits for an admin; `days` is an
    /// extension's new duration.
    pub fn needs_approval(&self, action: crate::request::Action, days: Option<u64>) -> bool {
        use crate::request::Action;
        let required =
            |a: Option<Approval>, default: Approval| a.unwrap_or(default) == Approval::Required;
        match action {
            Action::Create => self.approval == Approval::Required,
            Action::Update => required(self.day_two.update, self.approval),
            Action::Extend => {
                let over = self
                    .day_two
                    .extend_approval_over_days
                    .zip(days)
                    .is_some_and(|(limit, asked)| asked > u64::from(limit));
                over || required(self.day_two.extend, Approval::None)
            }
            Action::Remove => required(self.day_two.remove, Approval::None),
        }
    }
}

/// The JSON-Schema type of a parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ParamType {
    /// Text.
    String,
    /// A whole number.
    Integer,
    /// Any number.
    Number,
    /// Yes or no.
    Boolean,
    /// A list of strings (`items` describes each).
    Array,
}

impl ParamType {
    /// The name used in `type:` and in error arguments.
    pub fn as_str(self) -> &'static str {
        match self {
            ParamType::String => "string",
            ParamType::Integer => "integer",
            ParamType::Number => "number",
            ParamType::Boolean => "boolean",
            ParamType::Array => "array",
        }
    }
}

/// A named string format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// An RFC 1123 label as Kubernetes names require: lowercase letters, digits and `-`,
    /// starting and ending with a letter or digit, at most 63 characters.
    DnsLabel,
    /// An http(s) URL of a service on the network, for the platform to reach (an S3
    /// endpoint): never the requester's cluster node itself (loopback, `localhost`), the
    /// cloud's metadata service (link-local, `metadata.google.internal`) or the unspecified
    /// address, which nothing a researcher asks for has a reason to name.
    ExternalUrl,
}

/// Where a parameter's choices come from in the catalog.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OptionSource {
    /// Catalog items that record GPUs (`gpus:`); the capacity is their number of GPUs.
    GpuClusters,
    /// The Kubernetes clusters self-service deploys to: catalog items that record a GitOps
    /// folder (`gitops:`) or GPUs.
    Clusters,
    /// The namespaces of the requester's own workspaces that are on the base branch (merged
    /// or being applied): a researcher picks one of them; an admin may name any namespace.
    OwnNamespaces,
}

impl OptionSource {
    /// The name used in `options:`.
    pub fn as_str(self) -> &'static str {
        match self {
            OptionSource::GpuClusters => "gpu-clusters",
            OptionSource::Clusters => "clusters",
            OptionSource::OwnNamespaces => "own-namespaces",
        }
    }

    /// Whether its choices are clusters (each with its GitOps folder).
    pub fn is_cluster(self) -> bool {
        matches!(self, OptionSource::GpuClusters | OptionSource::Clusters)
    }
}

/// Constraints on one item of an array parameter (only strings are supported).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ItemSchema {
    /// Must be `string`.
    #[serde(rename = "type")]
    pub kind: ParamType,
    /// Fewest characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_length: Option<u32>,
    /// Most characters ([`DEFAULT_MAX_LENGTH`] when unset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_length: Option<u32>,
    /// A regular expression the item must match (unanchored, as in JSON Schema).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// What `pattern` asks for, in words, shown instead of the expression when an item does
    /// not match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern_message: Option<Localized>,
    /// A named format.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<Format>,
    /// The allowed values.
    #[serde(default, rename = "enum", skip_serializing_if = "Option::is_none")]
    pub choices: Option<Vec<Value>>,
}

/// One field of a template's form.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Parameter {
    /// The variable name in templates and the key in submitted values (`[a-z_][a-z0-9_]*`).
    pub name: String,
    /// Its type.
    #[serde(rename = "type")]
    pub kind: ParamType,
    /// The field's label.
    pub title: Localized,
    /// Help shown under the field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<Localized>,
    /// Whether a value must be given (a default counts).
    #[serde(default)]
    pub required: bool,
    /// The value used when none is given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Value>,
    /// The allowed values.
    #[serde(default, rename = "enum", skip_serializing_if = "Option::is_none")]
    pub choices: Option<Vec<Value>>,
    /// Smallest number allowed (inclusive).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimum: Option<f64>,
    /// Largest number allowed (inclusive).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maximum: Option<f64>,
    /// Fewest characters of a string.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_length: Option<u32>,
    /// Most characters of a string ([`DEFAULT_MAX_LENGTH`] when unset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_length: Option<u32>,
    /// A regular expression a string must match (unanchored, as in JSON Schema: write
    /// `^…$` to match the whole value).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// What `pattern` asks for, in words (`Lowercase letters, digits and single underscores,
    /// starting with a letter.`), shown instead of the expression when a value does not match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern_message: Option<Localized>,
    /// A named string format.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<Format>,
    /// For arrays: what each item is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub items: Option<ItemSchema>,
    /// For arrays: fewest items.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_items: Option<u32>,
    /// For arrays: most items ([`DEFAULT_MAX_ITEMS`] when unset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_items: Option<u32>,
    /// For arrays: whether every item must differ.
    #[serde(default)]
    pub unique_items: bool,
    /// For strings: the choices come from the catalog.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub options: Option<OptionSource>,
    /// For numbers: the maximum is the capacity of the catalog option chosen in the named
    /// parameter (one with `options`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maximum_from: Option<String>,
    /// For `own-namespaces`: the namespace must be on the cluster chosen in the named
    /// parameter (one with cluster options).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_from: Option<String>,
}

/// One choice offered by the catalog.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CatalogOption {
    /// The value submitted (a catalog item id).
    pub value: String,
    /// What the form shows (the item's name).
    pub label: String,
    /// What it offers, e.g. `1× NVIDIA RTX A5000`.
    pub detail: String,
    /// How much of it there is (GPUs for a GPU cluster), when that limits a request.
    pub capacity: Option<u64>,
    /// How researchers reach it (a Kubernetes cluster's API, CA and OIDC client), when the
    /// catalog records it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubernetes: Option<KubernetesAccess>,
    /// For a cluster: the monorepo folder its Argo CD applies, under which self-service puts
    /// what it deploys there (the catalog's `gitops.folder`, else `clusters/<id>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub folder: Option<String>,
}

/// The catalog facts a template's form depends on, taken from a snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct CatalogContext {
    /// Items the catalog records with GPUs, in catalog order.
    pub gpu_clusters: Vec<CatalogOption>,
    /// The clusters self-service deploys to (a GitOps folder or GPUs), in catalog order.
    #[serde(default)]
    pub clusters: Vec<CatalogOption>,
    /// The requester's own workspace namespaces (value: the namespace; detail: its cluster).
    #[serde(default)]
    pub namespaces: Vec<CatalogOption>,
    /// Whether any namespace may be named (admins; and renders with no requester, such as
    /// `mirante template render`): then `own-namespaces` is not a closed list.
    #[serde(default)]
    pub any_namespace: bool,
}

impl CatalogContext {
    /// The facts of a catalog snapshot: every item with a non-zero number of GPUs is a GPU
    /// cluster whose capacity is that number; it and every item with a GitOps folder are
    /// clusters self-service deploys to.
    pub fn from_snapshot(snapshot: &Snapshot) -> Self {
        let mut gpu_clusters = Vec::new();
        let mut clusters = Vec::new();
        for item in &snapshot.catalog().items {
            let total: u64 = item
                .gpus
                .iter()
                .map(|g| u64::from(g.count.unwrap_or(0)))
                .sum();
            if total == 0 && item.gitops.is_none() {
                continue;
            }
            let option = CatalogOption {
                value: item.id.to_string(),
                label: item.name.to_string(),
                detail: item
                    .gpus
                    .iter()
                    .map(|g| g.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                capacity: (total > 0).then_some(total),
                kubernetes: item.kubernetes.as_deref().cloned(),
                folder: Some(
                    item.gitops
                        .as_ref()
                        .map_or_else(|| default_gitops_folder(&item.id), |g| g.folder.clone()),
                ),
            };
            if total > 0 {
                gpu_clusters.push(option.clone());
            }
            clusters.push(option);
        }
        CatalogContext {
            gpu_clusters,
            clusters,
            namespaces: Vec::new(),
            any_namespace: false,
        }
    }

    /// These facts for a requester who may use `namespaces` (`None`: any namespace).
    pub fn with_namespaces(mut self, namespaces: Option<Vec<CatalogOption>>) -> Self {
        self.any_namespace = namespaces.is_none();
        self.namespaces = namespaces.unwrap_or_default();
        self
    }

    /// Whether `source` is a closed list here (a free one takes any well-formed value).
    pub fn is_closed(&self, source: OptionSource) -> bool {
        !(source == OptionSource::OwnNamespaces && self.any_namespace)
    }

    /// The choices a source offers.
    pub fn options(&self, source: OptionSource) -> &[CatalogOption] {
        match source {
            OptionSource::GpuClusters => &self.gpu_clusters,
            OptionSource::Clusters => &self.clusters,
            OptionSource::OwnNamespaces => &self.namespaces,
        }
    }
}

/// Why a value was refused; stable, for the UI to translate and for clients to test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// The values are not a JSON object.
    NotAnObject,
    /// A key that is no parameter of the template.
    UnknownField,
    /// A required parameter has no value.
    Required,
    /// The value has the wrong JSON type (`expected`).
    WrongType,
    /// Below `minimum`.
    TooSmall,
    /// Above `maximum`.
    TooLarge,
    /// Shorter than `min_length` characters.
    TooShort,
    /// Longer than `max_length` characters.
    TooLong,
    /// Not one of `allowed`.
    NotInEnum,
    /// Does not match `pattern`.
    Pattern,
    /// Not an RFC 1123 label.
    NotDnsLabel,
    /// Not an http(s) URL, or one naming a loopback, link-local or unspecified address.
    NotExternalUrl,
    /// Holds a control or invisible formatting character (`character`, as `U+XXXX`).
    ForbiddenCharacter,
    /// Not one of the catalog's options (`allowed`).
    NotAnOption,
    /// More than the chosen option's `capacity`.
    ExceedsCapacity,
    /// A namespace that is not on the chosen `cluster` (`allowed`: the requester's there).
    NotOnCluster,
    /// More GPUs than the chosen cluster has free now (`value`, `option`, `capacity`,
    /// `allocated`, `free`, `holders`); see [`crate::capacity`].
    ExceedsFreeCapacity,
    /// Fewer than `min_items` items.
    TooFewItems,
    /// More than `max_items` items.
    TooManyItems,
    /// The same item twice (`index` of the second).
    DuplicateItem,
    /// The value cannot be used in a file path.
    UnsafePath,
    /// The change would make the catalog invalid (`file`, `line`, `column` of the problem).
    InvalidCatalog,
    /// A change to `validated` whose evidence holds nothing verifiable (see
    /// [`crate::model::has_verifiable_evidence`]).
    NeedsVerifiableEvidence,
}

impl ErrorCode {
    /// The code as serialized.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::NotAnObject => "not_an_object",
            ErrorCode::UnknownField => "unknown_field",
            ErrorCode::Required => "required",
            ErrorCode::WrongType => "wrong_type",
            ErrorCode::TooSmall => "too_small",
            ErrorCode::TooLarge => "too_large",
            ErrorCode::TooShort => "too_short",
            ErrorCode::TooLong => "too_long",
            ErrorCode::NotInEnum => "not_in_enum",
            ErrorCode::Pattern => "pattern",
            ErrorCode::NotDnsLabel => "not_dns_label",
            ErrorCode::NotExternalUrl => "not_external_url",
            ErrorCode::ForbiddenCharacter => "forbidden_character",
            ErrorCode::NotAnOption => "not_an_option",
            ErrorCode::ExceedsCapacity => "exceeds_capacity",
            ErrorCode::NotOnCluster => "not_on_cluster",
            ErrorCode::ExceedsFreeCapacity => "exceeds_free_capacity",
            ErrorCode::TooFewItems => "too_few_items",
            ErrorCode::TooManyItems => "too_many_items",
            ErrorCode::DuplicateItem => "duplicate_item",
            ErrorCode::UnsafePath => "unsafe_path",
            ErrorCode::InvalidCatalog => "invalid_catalog",
            ErrorCode::NeedsVerifiableEvidence => "needs_verifiable_evidence",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One refused value: which field, a stable code, its arguments and an English message.
///
/// `field` is the parameter name (an unknown key for [`ErrorCode::UnknownField`], empty for
/// [`ErrorCode::NotAnObject`]); an error on one item of an array has an `index` argument.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FieldError {
    /// The parameter.
    pub field: String,
    /// Why.
    pub code: ErrorCode,
    /// The numbers and names the message uses (`maximum`, `capacity`, `allowed`, …).
    pub args: Map<String, Value>,
    /// The reason in English, for logs and API clients.
    pub message: String,
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.field.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.field, self.message)
        }
    }
}

impl FieldError {
    fn new(field: &str, code: ErrorCode, message: impl Into<String>) -> Self {
        FieldError {
            field: printable(field, 64),
            code,
            args: Map::new(),
            message: message.into(),
        }
    }

    fn arg(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.args.insert(key.to_owned(), value.into());
        self
    }
}

impl TemplateManifest {
    /// Whether a user with this role and these groups may use the template.
    pub fn may_use(&self, role: Role, groups: &[String]) -> bool {
        crate::access::may_use_template_as(role, groups, &self.access)
    }

    /// The parameter called `name`.
    pub fn parameter(&self, name: &str) -> Option<&Parameter> {
        self.parameters.iter().find(|p| p.name == name)
    }

    /// What is wrong with the manifest itself, each with the parameter it concerns; empty for
    /// a usable manifest. The server refuses to load a template with any.
    pub fn problems(&self) -> Vec<ManifestProblem> {
        let mut out = Vec::new();
        let mut top = |message: String| {
            out.push(ManifestProblem {
                parameter: None,
                message,
            })
        };
        if !is_dns_label(&self.id) {
            top(format!(
                "id `{}` is not a DNS label (lowercase letters, digits and `-`, at most 63)",
                printable(&self.id, 80)
            ));
        }
        for (what, l) in [("title", &self.title), ("description", &self.description)] {
            if l.pt_br.trim().is_empty() || l.en.trim().is_empty() {
                top(format!("{what} needs both `pt-BR` and `en`"));
            }
        }
        if self.target.trim().is_empty() {
            top("target is empty".to_owned());
        }
        if self.day_two.extend_approval_over_days.is_some()
            && !self.parameters.iter().any(|p| p.name == "days")
        {
            top("dayTwo.extendApprovalOverDays needs a `days` parameter to extend".to_owned());
        }
        let mut seen = BTreeSet::new();
        for p in &self.parameters {
            let mut push = |message: String| {
                out.push(ManifestProblem {
                    parameter: Some(p.name.clone()),
                    message,
                })
            };
            for m in parameter_problems(self, p) {
                push(m);
            }
            if !seen.insert(p.name.as_str()) {
                push(format!("parameter `{}` is declared twice", p.name));
            }
        }
        out
    }
}

/// A problem in a template manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestProblem {
    /// The parameter it concerns, if any.
    pub parameter: Option<String>,
    /// What is wrong.
    pub message: String,
}

fn parameter_problems(m: &TemplateManifest, p: &Parameter) -> Vec<String> {
    let mut out = Vec::new();
    let name = printable(&p.name, 80);
    let valid_name = !p.name.is_empty()
        && p.name.len() <= 64
        && p.name
            .starts_with(|c: char| c.is_ascii_lowercase() || c == '_')
        && p.name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if !valid_name {
        out.push(format!(
            "parameter name `{name}` must match [a-z_][a-z0-9_]* (at most 64 characters)"
        ));
    }
    if RESERVED_NAMES.contains(&p.name.as_str()) {
        out.push(format!(
            "parameter name `{name}` is reserved (the renderer provides it)"
        ));
    }
    if p.title.pt_br.trim().is_empty() || p.title.en.trim().is_empty() {
        out.push(format!(
            "parameter `{name}`: title needs both `pt-BR` and `en`"
        ));
    }
    let is_string = p.kind == ParamType::String;
    let is_number = matches!(p.kind, ParamType::Integer | ParamType::Number);
    let is_array = p.kind == ParamType::Array;
    let mut only = |ok: bool, set: bool, key: &str, types: &str| {
        if set && !ok {
            out.push(format!(
                "parameter `{name}`: `{key}` applies to {types} only, not {}",
                p.kind.as_str()
            ));
        }
    };
    only(is_string, p.min_length.is_some(), "minLength", "strings");
    only(is_string, p.max_length.is_some(), "maxLength", "strings");
    only(is_string, p.pattern.is_some(), "pattern", "strings");
    only(is_string, p.format.is_some(), "format", "strings");
    only(is_string, p.options.is_some(), "options", "strings");
    only(is_number, p.minimum.is_some(), "minimum", "numbers");
    only(is_number, p.maximum.is_some(), "maximum", "numbers");
    only(
        is_number,
        p.maximum_from.is_some(),
        "maximumFrom",
        "numbers",
    );
    only(
        p.options == Some(OptionSource::OwnNamespaces),
        p.cluster_from.is_some(),
        "clusterFrom",
        "`own-namespaces` parameters",
    );
    only(is_array, p.items.is_some(), "items", "arrays");
    only(is_array, p.min_items.is_some(), "minItems", "arrays");
    only(is_array, p.max_items.is_some(), "maxItems", "arrays");
    only(is_array, p.unique_items, "uniqueItems", "arrays");
    if let (Some(lo), Some(hi)) = (p.minimum, p.maximum)
        && lo > hi
    {
        out.push(format!("parameter `{name}`: minimum is above maximum"));
    }
    for v in [p.minimum, p.maximum].into_iter().flatten() {
        if !v.is_finite() {
            out.push(format!(
                "parameter `{name}`: minimum and maximum must be finite"
            ));
        }
    }
    if let (Some(lo), Some(hi)) = (p.min_length, p.max_length)
        && lo > hi
    {
        out.push(format!("parameter `{name}`: minLength is above maxLength"));
    }
    if let (Some(lo), Some(hi)) = (p.min_items, p.max_items)
        && lo > hi
    {
        out.push(format!("parameter `{name}`: minItems is above maxItems"));
    }
    if let Some(pattern) = &p.pattern
        && let Err(e) = pattern::check(pattern)
    {
        out.push(format!("parameter `{name}`: pattern does not compile: {e}"));
    }
    if is_array {
        match &p.items {
            None => out.push(format!(
                "parameter `{name}`: an array needs `items: {{type: string}}`"
            )),
            Some(items) => {
                if items.kind != ParamType::String {
                    out.push(format!(
                        "parameter `{name}`: only arrays of strings are supported"
                    ));
                }
                if let (Some(lo), Some(hi)) = (items.min_length, items.max_length)
                    && lo > hi
                {
                    out.push(format!(
                        "parameter `{name}`: items minLength is above maxLength"
                    ));
                }
                if let Some(pattern) = &items.pattern
                    && let Err(e) = pattern::check(pattern)
                {
                    out.push(format!(
                        "parameter `{name}`: items pattern does not compile: {e}"
                    ));
                }
                if let Some(c) = &items.choices
                    && (c.is_empty() || c.iter().any(|v| !v.is_string()))
                {
                    out.push(format!(
                        "parameter `{name}`: items enum must be a non-empty list of strings"
                    ));
                }
            }
        }
    }
    if let Some(choices) = &p.choices {
        if choices.is_empty() {
            out.push(format!("parameter `{name}`: enum is empty"));
        }
        for c in choices {
            if check_type(p.kind, c).is_none() || is_array {
                out.push(format!(
                    "parameter `{name}`: enum value {c} is not a {}",
                    p.kind.as_str()
                ));
            }
        }
    }
    if let Some(from) = &p.maximum_from {
        match m.parameter(from) {
            Some(q) if q.options.is_some() => {}
            _ => out.push(format!(
                "parameter `{name}`: maximumFrom `{}` must name a parameter with `options`",
                printable(from, 80)
            )),
        }
    }
    if let Some(from) = &p.cluster_from {
        match m.parameter(from) {
            Some(q) if q.options.is_some_and(OptionSource::is_cluster) => {}
            _ => out.push(format!(
                "parameter `{name}`: clusterFrom `{}` must name a parameter with `options: gpu-clusters` or `options: clusters`",
                printable(from, 80)
            )),
        }
    }
    if let Some(default) = &p.default {
        if p.options.is_some() {
            out.push(format!(
                "parameter `{name}`: a parameter with catalog options cannot have a default"
            ));
        } else if let Err(e) = check_value(p, default, None) {
            out.push(format!(
                "parameter `{name}`: the default is invalid: {}",
                e.message
            ));
        }
    }
    out
}

/// Checks submitted values against a template's parameters.
///
/// `values` is the JSON object the form or the API sent (`null` counts as `{}`). Returns the
/// normalized values — one entry per parameter, in declaration order: the value given, else
/// the default, else `null` — or every error found: at most one per parameter (one per array
/// item) plus one per unknown key. A `null` value and, for strings, an empty string count as
/// not given.
pub fn validate(
    manifest: &TemplateManifest,
    values: &Value,
    catalog: &CatalogContext,
) -> Result<Map<String, Value>, Vec<FieldError>> {
    let empty = Map::new();
    let object = match values {
        Value::Object(o) => o,
        Value::Null => &empty,
        other => {
            return Err(vec![
                FieldError::new(
                    "",
                    ErrorCode::NotAnObject,
                    "the values must be a JSON object of parameter names to values",
                )
                .arg("got", type_name(other)),
            ]);
        }
    };
    let mut errors = Vec::new();
    for key in object.keys() {
        if manifest.parameter(key).is_none() {
            errors.push(
                FieldError::new(
                    key,
                    ErrorCode::UnknownField,
                    "no such parameter in this template",
                )
                .arg("field", printable(key, 64)),
            );
        }
    }
    let mut out = Map::new();
    let mut invalid = BTreeSet::new();
    for p in &manifest.parameters {
        let given = match object.get(&p.name) {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) if s.is_empty() && p.kind == ParamType::String => None,
            Some(v) => Some(v),
        };
        let value = match (given, &p.default) {
            (Some(v), _) => match check_value(p, v, Some(catalog)) {
                Ok(v) => v,
                Err(e) => {
                    errors.push(e);
                    invalid.insert(p.name.as_str());
                    Value::Null
                }
            },
            (None, Some(d)) => d.clone(),
            (None, None) if p.required => {
                errors.push(FieldError::new(
                    &p.name,
                    ErrorCode::Required,
                    "a value is required",
                ));
                invalid.insert(p.name.as_str());
                Value::Null
            }
            (None, None) => Value::Null,
        };
        out.insert(p.name.clone(), value);
    }
    // Capacities need the option chosen in another field, so they come second.
    for p in &manifest.parameters {
        let Some(from) = &p.maximum_from else {
            continue;
        };
        if invalid.contains(p.name.as_str()) || invalid.contains(from.as_str()) {
            continue;
        }
        let (Some(asked), Some(Value::String(chosen))) =
            (out.get(&p.name).and_then(Value::as_f64), out.get(from))
        else {
            continue;
        };
        let Some(source) = manifest.parameter(from).and_then(|q| q.options) else {
            continue;
        };
        let Some(option) = catalog.options(source).iter().find(|o| &o.value == chosen) else {
            continue;
        };
        if let Some(capacity) = option.capacity
            && asked > capacity as f64
        {
            errors.push(
                FieldError::new(
                    &p.name,
                    ErrorCode::ExceedsCapacity,
                    format!(
                        "{} asked for, but {} has {capacity} ({})",
                        number(asked),
                        option.value,
                        option.detail
                    ),
                )
                .arg("capacity", capacity)
                .arg("option", option.value.clone())
                .arg("detail", option.detail.clone())
                .arg("value", number(asked)),
            );
        }
    }
    // A namespace must be on the chosen cluster, where the list of namespaces is closed.
    for p in &manifest.parameters {
        let (Some(from), Some(source)) = (&p.cluster_from, p.options) else {
            continue;
        };
        if invalid.contains(p.name.as_str())
            || invalid.contains(from.as_str())
            || !catalog.is_closed(source)
        {
            continue;
        }
        let (Some(Value::String(namespace)), Some(Value::String(cluster))) =
            (out.get(&p.name), out.get(from))
        else {
            continue;
        };
        let on_cluster: Vec<Value> = catalog
            .options(source)
            .iter()
            .filter(|o| &o.detail == cluster)
            .map(|o| Value::from(o.value.clone()))
            .collect();
        if !on_cluster.iter().any(|v| v == namespace.as_str()) {
            errors.push(
                FieldError::new(
                    &p.name,
                    ErrorCode::NotOnCluster,
                    if on_cluster.is_empty() {
                        format!(
                            "`{}` is not on {cluster}, where you have no namespace",
                            printable(namespace, 64)
                        )
                    } else {
                        format!(
                            "`{}` is not on {cluster}; yours there: {}",
                            printable(namespace, 64),
                            list(&on_cluster)
                        )
                    },
                )
                .arg("cluster", cluster.clone())
                .arg("count", on_cluster.len())
                .arg("allowed", on_cluster),
            );
        }
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

/// Checks one given value; `catalog` is `None` when checking a manifest's default.
fn check_value(
    p: &Parameter,
    v: &Value,
    catalog: Option<&CatalogContext>,
) -> Result<Value, FieldError> {
    let Some(value) = check_type(p.kind, v) else {
        return Err(FieldError::new(
            &p.name,
            ErrorCode::WrongType,
            format!(
                "expected {}, got {}",
                article(p.kind.as_str()),
                type_name(v)
            ),
        )
        .arg("expected", p.kind.as_str())
        .arg("got", type_name(v)));
    };
    match p.kind {
        ParamType::String => {
            let s = value.as_str().unwrap_or_default();
            let rules = StringRules {
                min_length: p.min_length,
                max_length: p.max_length,
                pattern: p.pattern.as_deref(),
                pattern_message: p.pattern_message.as_ref(),
                format: p.format,
                choices: p.choices.as_deref(),
            };
            rules.check(&p.name, s, None)?;
            if let (Some(source), Some(catalog)) = (p.options, catalog)
                && catalog.is_closed(source)
            {
                let options = catalog.options(source);
                if !options.iter().any(|o| o.value == s) {
                    let allowed: Vec<Value> = options
                        .iter()
                        .map(|o| Value::from(o.value.clone()))
                        .collect();
                    return Err(FieldError::new(
                        &p.name,
                        ErrorCode::NotAnOption,
                        format!(
                            "`{}` is not one of the catalog's {}: {}",
                            printable(s, 64),
                            source.as_str(),
                            list(&allowed)
                        ),
                    )
                    .arg("allowed", allowed)
                    .arg("source", source.as_str()));
                }
            }
        }
        ParamType::Integer | ParamType::Number => {
            let n = value.as_f64().unwrap_or_default();
            if let Some(min) = p.minimum
                && n < min
            {
                return Err(FieldError::new(
                    &p.name,
                    ErrorCode::TooSmall,
                    format!("must be at least {}", number(min)),
                )
                .arg("minimum", number(min)));
            }
            if let Some(max) = p.maximum
                && n > max
            {
                return Err(FieldError::new(
                    &p.name,
                    ErrorCode::TooLarge,
                    format!("must be at most {}", number(max)),
                )
                .arg("maximum", number(max)));
            }
            check_enum(&p.name, &value, p.choices.as_deref(), None)?;
        }
        ParamType::Boolean => check_enum(&p.name, &value, p.choices.as_deref(), None)?,
        ParamType::Array => {
            let items = value.as_array().map(Vec::as_slice).unwrap_or_default();
            let max = p.max_items.unwrap_or(DEFAULT_MAX_ITEMS);
            if items.len() > max as usize {
                return Err(FieldError::new(
                    &p.name,
                    ErrorCode::TooManyItems,
                    format!("at most {max} items"),
                )
                .arg("max_items", max));
            }
            if let Some(min) = p.min_items
                && items.len() < min as usize
            {
                return Err(FieldError::new(
                    &p.name,
                    ErrorCode::TooFewItems,
                    format!("at least {min} item(s)"),
                )
                .arg("min_items", min));
            }
            let schema = p.items.as_ref();
            let rules = StringRules {
                min_length: schema.and_then(|s| s.min_length),
                max_length: schema.and_then(|s| s.max_length),
                pattern: schema.and_then(|s| s.pattern.as_deref()),
                pattern_message: schema.and_then(|s| s.pattern_message.as_ref()),
                format: schema.and_then(|s| s.format),
                choices: schema.and_then(|s| s.choices.as_deref()),
            };
            for (i, item) in items.iter().enumerate() {
                let Some(s) = item.as_str() else {
                    return Err(FieldError::new(
                        &p.name,
                        ErrorCode::WrongType,
                        format!(
                            "item {} : expected a string, got {}",
                            i + 1,
                            type_name(item)
                        ),
                    )
                    .arg("expected", "string")
                    .arg("got", type_name(item))
                    .arg("index", i));
                };
                rules.check(&p.name, s, Some(i))?;
                if p.unique_items && items[..i].contains(item) {
                    return Err(FieldError::new(
                        &p.name,
                        ErrorCode::DuplicateItem,
                        format!("item {} repeats `{}`", i + 1, printable(s, 64)),
                    )
                    .arg("index", i));
                }
            }
        }
    }
    Ok(value)
}

/// The value as the type asks, or `None` when it is of another type. Whole floats count as
/// integers (`2.0` is `2`), as JSON does not tell them apart.
fn check_type(kind: ParamType, v: &Value) -> Option<Value> {
    match (kind, v) {
        (ParamType::String, Value::String(_)) => Some(v.clone()),
        (ParamType::Boolean, Value::Bool(_)) => Some(v.clone()),
        (ParamType::Array, Value::Array(_)) => Some(v.clone()),
        (ParamType::Number, Value::Number(n)) => {
            n.as_f64().filter(|f| f.is_finite()).map(|_| v.clone())
        }
        (ParamType::Integer, Value::Number(n)) => {
            if let Some(i) = n.as_i64() {
                Some(Value::from(i))
            } else {
                let f = n.as_f64()?;
                // i64::MAX as f64 rounds up, so the bound is exclusive.
                (f.fract() == 0.0 && f >= i64::MIN as f64 && f < i64::MAX as f64)
                    .then(|| Value::from(f as i64))
            }
        }
        _ => None,
    }
}

/// The string constraints shared by string parameters and array items.
struct StringRules<'a> {
    min_length: Option<u32>,
    max_length: Option<u32>,
    pattern: Option<&'a str>,
    pattern_message: Option<&'a Localized>,
    format: Option<Format>,
    choices: Option<&'a [Value]>,
}

impl StringRules<'_> {
    fn check(&self, field: &str, s: &str, index: Option<usize>) -> Result<(), FieldError> {
        let with_index = |e: FieldError| match index {
            Some(i) => e.arg("index", i),
            None => e,
        };
        let prefix = index
            .map(|i| format!("item {}: ", i + 1))
            .unwrap_or_default();
        if let Some(c) = s.chars().find(|c| is_forbidden_char(*c)) {
            let code = format!("U+{:04X}", u32::from(c));
            return Err(with_index(
                FieldError::new(
                    field,
                    ErrorCode::ForbiddenCharacter,
                    format!("{prefix}contains the control or invisible character {code}"),
                )
                .arg("character", code),
            ));
        }
        let len = s.chars().count();
        let max = self.max_length.unwrap_or(DEFAULT_MAX_LENGTH);
        if len > max as usize {
            return Err(with_index(
                FieldError::new(
                    field,
                    ErrorCode::TooLong,
                    format!("{prefix}at most {max} characters ({len} given)"),
                )
                .arg("max_length", max)
                .arg("length", len),
            ));
        }
        if let Some(min) = self.min_length
            && len < min as usize
        {
            return Err(with_index(
                FieldError::new(
                    field,
                    ErrorCode::TooShort,
                    format!("{prefix}at least {min} characters"),
                )
                .arg("min_length", min),
            ));
        }
        if self.format == Some(Format::DnsLabel) && !is_dns_label(s) {
            return Err(with_index(FieldError::new(
                field,
                ErrorCode::NotDnsLabel,
                format!(
                    "{prefix}must be a DNS label: lowercase letters, digits and `-`, starting and \
                     ending with a letter or digit, at most 63 characters"
                ),
            )));
        }
        if self.format == Some(Format::ExternalUrl) && !is_external_url(s) {
            return Err(with_index(FieldError::new(
                field,
                ErrorCode::NotExternalUrl,
                format!(
                    "{prefix}must be an http:// or https:// address of a service on the \
                     network, not of this machine (loopback, localhost) or of the cloud's \
                     metadata service (link-local)"
                ),
            )));
        }
        if let Some(pattern) = self.pattern
            && !pattern::matches(pattern, s)
        {
            let error = match self.pattern_message {
                // The template's words, in both languages; the expression stays an
                // argument for API clients.
                Some(words) => FieldError::new(
                    field,
                    ErrorCode::Pattern,
                    format!("{prefix}does not have the expected form: {}", words.en),
                )
                .arg("hint", serde_json::to_value(words).unwrap_or(Value::Null)),
                None => FieldError::new(
                    field,
                    ErrorCode::Pattern,
                    format!("{prefix}must match the pattern {pattern}"),
                ),
            };
            return Err(with_index(error.arg("pattern", pattern)));
        }
        check_enum(field, &Value::from(s), self.choices, index)
    }
}

fn check_enum(
    field: &str,
    v: &Value,
    choices: Option<&[Value]>,
    index: Option<usize>,
) -> Result<(), FieldError> {
    let Some(choices) = choices else {
        return Ok(());
    };
    let same = |c: &Value| match (c.as_f64(), v.as_f64()) {
        (Some(a), Some(b)) => a == b,
        _ => c == v,
    };
    if choices.iter().any(same) {
        return Ok(());
    }
    let prefix = index
        .map(|i| format!("item {}: ", i + 1))
        .unwrap_or_default();
    let e = FieldError::new(
        field,
        ErrorCode::NotInEnum,
        format!("{prefix}must be one of {}", list(choices)),
    )
    .arg("allowed", choices.to_vec());
    Err(match index {
        Some(i) => e.arg("index", i),
        None => e,
    })
}

/// Templates' value patterns: the server checks them with `regex`; the browser, which only
/// checks a form as it is typed before the server checks it again, with `regex-lite`.
mod pattern {
    use super::MAX_PATTERN_LEN;

    /// Whether `pattern` compiles, with bounded size, so a manifest cannot make the portal
    /// build a huge automaton; the error's last line when it does not.
    #[cfg(not(target_arch = "wasm32"))]
    pub(super) fn check(pattern: &str) -> Result<(), String> {
        compile(pattern).map(drop)
    }

    /// Whether `s` matches `pattern`. A pattern that does not compile (a manifest with one is
    /// refused at load) matches nothing, rather than letting any value through.
    #[cfg(not(target_arch = "wasm32"))]
    pub(super) fn matches(pattern: &str, s: &str) -> bool {
        compile(pattern).is_ok_and(|re| re.is_match(s))
    }

    /// Refuses a pattern longer than [`MAX_PATTERN_LEN`], before it is compiled.
    fn bounded(pattern: &str) -> Result<&str, String> {
        if pattern.len() > MAX_PATTERN_LEN {
            return Err(format!("longer than {MAX_PATTERN_LEN} bytes"));
        }
        Ok(pattern)
    }

    #[cfg(not(target_arch = "wasm32"))]
    fn compile(pattern: &str) -> Result<regex::Regex, String> {
        regex::RegexBuilder::new(bounded(pattern)?)
            .size_limit(1 << 20)
            .dfa_size_limit(1 << 20)
            .build()
            .map_err(|e| {
                e.to_string()
                    .lines()
                    .last()
                    .unwrap_or_default()
                    .trim()
                    .to_owned()
            })
    }

    /// In the browser, whether `pattern` compiles with `regex-lite` (manifests are checked
    /// on the server, with [`check`]'s native version).
    #[cfg(target_arch = "wasm32")]
    pub(super) fn check(pattern: &str) -> Result<(), String> {
        regex_lite::Regex::new(bounded(pattern)?)
            .map(drop)
            .map_err(|e| e.to_string())
    }

    /// In the browser, whether `s` matches `pattern`, as far as `regex-lite` can tell the same
    /// as the server. Its classes (`\w`, `\d`, `\s`, `\b`) and case folding are ASCII-only,
    /// which agree with `regex`'s Unicode ones on ASCII text and an ASCII pattern; a value or
    /// pattern outside ASCII, or a pattern `regex-lite` does not take (`\p{…}`), is left to the
    /// server, which checks every value again when the form is sent.
    #[cfg(target_arch = "wasm32")]
    pub(super) fn matches(pattern: &str, s: &str) -> bool {
        let Ok(pattern) = bounded(pattern) else {
            return true;
        };
        if !s.is_ascii() || !pattern.is_ascii() {
            return true;
        }
        regex_lite::Regex::new(pattern).map_or(true, |re| re.is_match(s))
    }
}

/// Whether `s` is an RFC 1123 label as Kubernetes checks it: 1–63 characters, lowercase
/// ASCII letters, digits and `-`, starting and ending with a letter or digit.
pub fn is_dns_label(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
}

/// Whether `s` is an http(s) URL whose host is not a loopback, link-local or unspecified
/// address, nor a name that stands for one (`localhost`, `*.localhost`, the metadata
/// service's names). Names are not resolved: the platform resolves them, and this check only
/// keeps a form from naming the obviously internal.
pub fn is_external_url(s: &str) -> bool {
    use std::net::IpAddr;

    use crate::link::is_internal_address;
    let Ok(url) = url::Url::parse(s) else {
        return false;
    };
    if !matches!(url.scheme(), "http" | "https") || !url.username().is_empty() {
        return false;
    }
    match url.host() {
        Some(url::Host::Ipv4(v4)) => !is_internal_address(IpAddr::V4(v4)),
        Some(url::Host::Ipv6(v6)) => !is_internal_address(IpAddr::V6(v6)),
        Some(url::Host::Domain(name)) => {
            let name = name.trim_end_matches('.').to_ascii_lowercase();
            !(name == "localhost"
                || name.ends_with(".localhost")
                || name == "metadata.google.internal"
                || name == "metadata")
        }
        None => false,
    }
}

/// Whether `s` is an RFC 1123 subdomain as Kubernetes checks object names: at most 253
/// characters, DNS labels joined by `.`.
pub fn is_dns_subdomain(s: &str) -> bool {
    !s.is_empty() && s.len() <= 253 && s.split('.').all(is_dns_label)
}

/// Characters no parameter value may hold: control characters (newlines and tabs included)
/// and the invisible formatting characters used to disguise text — bidirectional overrides
/// and isolates, zero-width characters, the byte-order mark, line and paragraph separators.
pub fn is_forbidden_char(c: char) -> bool {
    c.is_control()
        || matches!(c,
            '\u{00AD}'
            | '\u{061C}'
            | '\u{180E}'
            | '\u{200B}'..='\u{200F}'
            | '\u{2028}'..='\u{202E}'
            | '\u{2060}'..='\u{206F}'
            | '\u{FEFF}'
            | '\u{FFF9}'..='\u{FFFB}')
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn article(word: &str) -> String {
    if word.starts_with(['a', 'e', 'i', 'o', 'u']) {
        format!("an {word}")
    } else {
        format!("a {word}")
    }
}

/// A number as JSON, whole numbers without a fraction.
fn number(f: f64) -> Value {
    if f.fract() == 0.0 && f.abs() < 9.0e15 {
        Value::from(f as i64)
    } else {
        Value::from(f)
    }
}

fn list(values: &[Value]) -> String {
    if values.is_empty() {
        return "(none)".to_owned();
    }
    values
        .iter()
        .map(|v| match v {
            Value::String(s) => printable(s, 64),
            other => other.to_string(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// `s` made safe to show in a message: forbidden characters escaped, cut at `max` characters.
pub(crate) fn printable(s: &str, max: usize) -> String {
    let mut out = String::new();
    for (n, c) in s.chars().enumerate() {
        if n >= max {
            out.push('…');
            break;
        }
        if is_forbidden_char(c) {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

/// `text` as a YAML double-quoted scalar. Everything outside YAML's printable set, the
/// characters YAML 1.1 reads as line breaks (U+0085, U+2028, U+2029), the byte-order mark,
/// `"` and `\` are escaped, so the scalar ends exactly at the closing quote.
pub fn yaml_quote(out: &mut String, text: &str) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            ' '..='~' => out.push(c),
            '\u{85}' | '\u{2028}' | '\u{2029}' | '\u{FEFF}' => {
                let _ = write!(out, "\\u{:04X}", u32::from(c));
            }
            '\u{A0}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..='\u{10FFFF}'
                if !is_forbidden_char(c) =>
            {
                out.push(c)
            }
            c if u32::from(c) <= 0xFFFF => {
                let _ = write!(out, "\\u{:04X}", u32::from(c));
            }
            c => {
                let _ = write!(out, "\\U{:08X}", u32::from(c));
            }
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests;
