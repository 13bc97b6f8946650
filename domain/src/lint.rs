//! The consistency lint: claims the catalog makes that its own evidence does not back.
//!
//! The validator refuses a catalog that cannot be read (broken YAML, unknown ids, cycles); the
//! lint reads a valid one and reports what keeps the three states honest: validated without
//! evidence, stale attestations, declared without an IaC reference (or with one the monorepo
//! does not have), a validated item depending on one that is not, deferred without its
//! criterion, rejected without its reason.
//!
//! Pure: "today" is an argument, and the monorepo is reached through the [`Monorepo`] trait
//! (the `load` feature adds [`DirMonorepo`], which reads a checkout on disk, and [`lookup_key`],
//! which any other reader of files, such as a git tree, shares).

use std::collections::BTreeMap;

use chrono::NaiveDate;
use serde::{Deserialize, Serialize};

use crate::model::{Catalog, Evidence, IacRef, Item, Qualifier, State};

/// How serious a finding is. `catalog check` fails on errors only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// A claim that contradicts the catalog or the monorepo.
    Error,
    /// A claim without the backing it should have.
    Warning,
    /// Worth knowing, nothing to fix.
    Info,
}

impl Severity {
    /// Every severity, most serious first.
    pub const ALL: [Severity; 3] = [Severity::Error, Severity::Warning, Severity::Info];

    /// The identifier used in JSON and in the command line's output.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }
}

/// What a finding is about; each code has one message shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Code {
    /// A validated item with no evidence at all.
    ValidatedWithoutEvidence,
    /// A validated item whose evidence is free text only: no probe, Argo CD application,
    /// attestation or IaC reference.
    ValidatedOnlyFreeText,
    /// An attestation older than the allowed age.
    AttestationStale,
    /// An attestation whose date is not an ISO date, or lies in the future.
    AttestationDateInvalid,
    /// A declared item with no `iac` reference.
    DeclaredWithoutIac,
    /// A declared item: it exists in code but does not run in production.
    DeclaredNotReal,
    /// A validated item that depends on an item that is not validated.
    ValidatedDependsOnUnvalidated,
    /// A deferred item without `criterion`.
    DeferredWithoutCriterion,
    /// A rejected item without `reason`.
    RejectedWithoutReason,
    /// An IaC path that is absolute or climbs out of the monorepo.
    IacPathOutside,
    /// An IaC path the monorepo does not have.
    IacPathMissing,
    /// An IaC key the file does not have.
    IacKeyMissing,
    /// An IaC file that cannot be read or parsed to look the key up.
    IacUnreadable,
    /// A probe of a validated item whose last run failed.
    ProbeFailing,
    /// An Argo CD application of a validated item that is not Healthy and Synced, or that
    /// could not be read.
    ArgocdUnhealthy,
}

impl Code {
    /// Every code, in the order the documentation lists them.
    pub const ALL: [Code; 15] = [
        Code::ValidatedDependsOnUnvalidated,
        Code::ProbeFailing,
        Code::ArgocdUnhealthy,
        Code::AttestationDateInvalid,
        Code::IacPathMissing,
        Code::IacKeyMissing,
        Code::IacUnreadable,
        Code::IacPathOutside,
        Code::ValidatedWithoutEvidence,
        Code::ValidatedOnlyFreeText,
        Code::AttestationStale,
        Code::DeclaredWithoutIac,
        Code::DeferredWithoutCriterion,
        Code::RejectedWithoutReason,
        Code::DeclaredNotReal,
    ];

    /// The identifier used in JSON, the command line and the UI's message keys.
    pub fn as_str(self) -> &'static str {
        match self {
            Code::ValidatedWithoutEvidence => "validated-without-evidence",
            Code::ValidatedOnlyFreeText => "validated-only-free-text",
            Code::AttestationStale => "attestation-stale",
            Code::AttestationDateInvalid => "attestation-date-invalid",
            Code::DeclaredWithoutIac => "declared-without-iac",
            Code::DeclaredNotReal => "declared-not-real",
            Code::ValidatedDependsOnUnvalidated => "validated-depends-on-unvalidated",
            Code::DeferredWithoutCriterion => "deferred-without-criterion",
            Code::RejectedWithoutReason => "rejected-without-reason",
            Code::IacPathOutside => "iac-path-outside",
            Code::IacPathMissing => "iac-path-missing",
            Code::IacKeyMissing => "iac-key-missing",
            Code::IacUnreadable => "iac-unreadable",
            Code::ProbeFailing => "probe-failing",
            Code::ArgocdUnhealthy => "argocd-unhealthy",
        }
    }

    /// How serious findings of this code are.
    pub fn severity(self) -> Severity {
        match self {
            Code::AttestationDateInvalid
            | Code::ValidatedDependsOnUnvalidated
            | Code::IacPathOutside
            | Code::IacPathMissing
            | Code::IacKeyMissing
            | Code::IacUnreadable
            | Code::ProbeFailing
            | Code::ArgocdUnhealthy => Severity::Error,
            Code::ValidatedWithoutEvidence
            | Code::ValidatedOnlyFreeText
            | Code::AttestationStale
            | Code::DeclaredWithoutIac
            | Code::DeferredWithoutCriterion
            | Code::RejectedWithoutReason => Severity::Warning,
            Code::DeclaredNotReal => Severity::Info,
        }
    }
}

/// One problem found in the catalog.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// How serious.
    pub severity: Severity,
    /// What kind of problem.
    pub code: Code,
    /// The item it is about.
    pub item: String,
    /// One line in English (the command line and the API); the UI builds its own from `code`
    /// and `args`.
    pub message: String,
    /// The values the message names (`dependency`, `path`, `key`, `date`, `days`, ...).
    pub args: BTreeMap<String, String>,
}

impl Finding {
    fn new(code: Code, item: &Item, args: &[(&str, String)]) -> Self {
        let args: BTreeMap<String, String> = args
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect();
        Finding {
            severity: code.severity(),
            code,
            item: item.id.to_string(),
            message: message(code, &args),
            args,
        }
    }
}

impl std::fmt::Display for Finding {
    /// `warning: traefik-sp-ha: message [code]`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: {}: {} [{}]",
            self.severity.as_str(),
            self.item,
            self.message,
            self.code.as_str()
        )
    }
}

fn message(code: Code, a: &BTreeMap<String, String>) -> String {
    let arg = |k: &str| a.get(k).map_or("", String::as_str);
    let key_part = || match a.get("key") {
        Some(k) => format!(" (key `{k}`)"),
        None => String::new(),
    };
    match code {
        Code::ValidatedWithoutEvidence => {
            "validated, but no evidence (probe, Argo CD application, attestation or reference)"
                .to_owned()
        }
        Code::ValidatedOnlyFreeText => "validated on free text only: add a probe, an Argo CD \
             application, a dated attestation or an IaC reference"
            .to_owned(),
        Code::AttestationStale => format!(
            "attestation by {} on {} is {} days old (limit {})",
            arg("by"),
            arg("date"),
            arg("age"),
            arg("days")
        ),
        Code::AttestationDateInvalid => format!(
            "attestation by {} has date `{}`, not a past ISO date (YYYY-MM-DD)",
            arg("by"),
            arg("date")
        ),
        Code::DeclaredWithoutIac => {
            "declared, but no `iac` reference says where the code is".to_owned()
        }
        Code::DeclaredNotReal => format!(
            "declared in `{}`{}, but not validated in production",
            arg("path"),
            key_part()
        ),
        Code::ValidatedDependsOnUnvalidated => format!(
            "validated, but depends on `{}`, which is {}",
            arg("dependency"),
            arg("state")
        ),
        Code::DeferredWithoutCriterion => {
            "deferred, but no `criterion` says when it is taken up".to_owned()
        }
        Code::RejectedWithoutReason => "rejected, but no `reason` says why".to_owned(),
        Code::IacPathOutside => format!(
            "IaC path `{}` is absolute or leaves the monorepo",
            arg("path")
        ),
        Code::IacPathMissing => {
            format!("IaC path `{}` does not exist in the monorepo", arg("path"))
        }
        Code::IacKeyMissing => format!("IaC key `{}` not found in `{}`", arg("key"), arg("path")),
        Code::IacUnreadable => format!(
            "cannot look up key `{}` in `{}`: {}",
            arg("key"),
            arg("path"),
            arg("error")
        ),
        Code::ProbeFailing => format!("probe of `{}` fails: {}", arg("url"), arg("reason")),
        Code::ArgocdUnhealthy => {
            format!("Argo CD application `{}`: {}", arg("app"), arg("reason"))
        }
    }
}

/// Attestations older than this many days are stale unless configured otherwise.
pub const DEFAULT_STALE_AFTER_DAYS: u32 = 180;

/// What the lint needs besides the catalog.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LintOptions {
    /// Today's date, for the age of attestations.
    pub today: NaiveDate,
    /// Attestations older than this many days are stale.
    pub stale_after_days: u32,
}

/// Checks a catalog's claims against its own evidence. Findings come by item, in catalog
/// order; within an item, in rule order.
pub fn lint(catalog: &Catalog, options: &LintOptions) -> Vec<Finding> {
    let state_of: std::collections::HashMap<&str, State> = catalog
        .items
        .iter()
        .map(|i| (i.id.as_str(), i.state))
        .collect();
    let mut out = Vec::new();
    for item in &catalog.items {
        lint_item(item, &state_of, options, &mut out);
    }
    out
}

fn lint_item(
    item: &Item,
    state_of: &std::collections::HashMap<&str, State>,
    options: &LintOptions,
    out: &mut Vec<Finding>,
) {
    if item.state == State::Validated && item.evidence.is_empty() {
        out.push(Finding::new(Code::ValidatedWithoutEvidence, item, &[]));
    } else if item.state == State::Validated
        && !crate::model::has_verifiable_evidence(&item.evidence, item.iac.as_ref())
    {
        out.push(Finding::new(Code::ValidatedOnlyFreeText, item, &[]));
    }
    for e in &item.evidence {
        match e {
            Evidence::Attestation { by, date, .. } => {
                let parsed = date
                    .parse::<NaiveDate>()
                    .ok()
                    .filter(|d| *d <= options.today);
                match parsed {
                    None => out.push(Finding::new(
                        Code::AttestationDateInvalid,
                        item,
                        &[("by", by.clone()), ("date", date.clone())],
                    )),
                    Some(d) => {
                        let age = (options.today - d).num_days();
                        if age > i64::from(options.stale_after_days) {
                            out.push(Finding::new(
                                Code::AttestationStale,
                                item,
                                &[
                                    ("by", by.clone()),
                                    ("date", date.clone()),
                                    ("age", age.to_string()),
                                    ("days", options.stale_after_days.to_string()),
                                ],
                            ));
                        }
                    }
                }
            }
            // A probe's URL is http(s) by construction (`crate::link`).
            Evidence::Probe { .. } | Evidence::Argocd { .. } | Evidence::Reference { .. } => {}
        }
    }
    if item.state == State::Declared {
        match &item.iac {
            None => out.push(Finding::new(Code::DeclaredWithoutIac, item, &[])),
            Some(iac) => out.push(Finding::new(Code::DeclaredNotReal, item, &iac_args(iac))),
        }
    }
    if item.state == State::Validated {
        for dep in &item.depends_on {
            if let Some(&s) = state_of.get(dep.as_str())
                && s != State::Validated
            {
                out.push(Finding::new(
                    Code::ValidatedDependsOnUnvalidated,
                    item,
                    &[
                        ("dependency", dep.to_string()),
                        ("state", s.as_str().to_owned()),
                    ],
                ));
            }
        }
    }
    if item.qualifier == Some(Qualifier::Deferred) && blank(&item.criterion) {
        out.push(Finding::new(Code::DeferredWithoutCriterion, item, &[]));
    }
    if item.qualifier == Some(Qualifier::Rejected) && blank(&item.reason) {
        out.push(Finding::new(Code::RejectedWithoutReason, item, &[]));
    }
}

fn blank(s: &Option<Box<str>>) -> bool {
    s.as_deref().is_none_or(|s| s.trim().is_empty())
}

fn iac_args(iac: &IacRef) -> Vec<(&'static str, String)> {
    let mut a = vec![("path", iac.path.to_string())];
    if let Some(k) = &iac.key {
        a.push(("key", k.to_string()));
    }
    a
}

/// What the monorepo says about an IaC reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup {
    /// The path (and the key, if given) exists.
    Found,
    /// The path is absolute or climbs out of the monorepo.
    Outside,
    /// No such path.
    MissingPath,
    /// The file exists, the key does not.
    MissingKey,
    /// The file cannot be read or parsed (the reason, in one line).
    Unreadable(String),
}

/// A monorepo that IaC references can be checked against.
pub trait Monorepo {
    /// Whether `path` (relative to the root) exists and, with `key`, whether the file holds
    /// that dotted key.
    fn lookup(&self, path: &str, key: Option<&str>) -> Lookup;
}

/// Checks every item's IaC reference (declared or not: a reference that points nowhere is
/// wrong whatever the state) against a monorepo.
pub fn lint_iac(catalog: &Catalog, repo: &impl Monorepo) -> Vec<Finding> {
    let mut out = Vec::new();
    for item in &catalog.items {
        let Some(iac) = &item.iac else { continue };
        let code = match repo.lookup(&iac.path, iac.key.as_deref()) {
            Lookup::Found => continue,
            Lookup::Outside => Code::IacPathOutside,
            Lookup::MissingPath => Code::IacPathMissing,
            Lookup::MissingKey => Code::IacKeyMissing,
            Lookup::Unreadable(error) => {
                let mut a = iac_args(iac);
                a.push(("error", error));
                out.push(Finding::new(Code::IacUnreadable, item, &a));
                continue;
            }
        };
        out.push(Finding::new(code, item, &iac_args(iac)));
    }
    out
}

/// A live check of a validated item's evidence that failed on its last run (the server runs
/// the probes and reads Argo CD; the lint only turns the outcome into findings).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LiveFailure {
    /// An HTTP probe did not answer with the expected status.
    Probe {
        /// The item whose evidence it is.
        item: String,
        /// The probed URL, as the catalog writes it.
        url: String,
        /// Why it failed, in one line.
        reason: String,
    },
    /// An Argo CD application is not Healthy and Synced, or cannot be read.
    Argocd {
        /// The item whose evidence it is.
        item: String,
        /// The application's name.
        app: String,
        /// Why, in one line.
        reason: String,
    },
}

/// Findings for failed live checks, on items the catalog still has (results of an item the
/// catalog dropped since the last run are ignored).
pub fn lint_live<'a>(
    catalog: &Catalog,
    failures: impl IntoIterator<Item = &'a LiveFailure>,
) -> Vec<Finding> {
    let mut out = Vec::new();
    for failure in failures {
        let (id, finding) = match failure {
            LiveFailure::Probe { item, url, reason } => (
                item,
                (
                    Code::ProbeFailing,
                    [("url", url.clone()), ("reason", reason.clone())],
                ),
            ),
            LiveFailure::Argocd { item, app, reason } => (
                item,
                (
                    Code::ArgocdUnhealthy,
                    [("app", app.clone()), ("reason", reason.clone())],
                ),
            ),
        };
        if let Some(item) = catalog.items.iter().find(|i| i.id == id) {
            out.push(Finding::new(finding.0, item, &finding.1));
        }
    }
    out
}

/// Whether a dotted `key` exists in a parsed document. A segment may itself contain dots
/// (`linstor_pools.nvme-pool` can be one key): the longest run of segments that names a key
/// is tried first. In lists, a segment is an index.
pub fn has_key(doc: &doc::Value, key: &str) -> bool {
    let segs: Vec<&str> = key.split('.').collect();
    doc::find(doc, &segs)
}

/// A minimal owned tree of the values YAML, JSON and TOML share, so the key lookup stays pure
/// and any serde format can produce it.
pub mod doc {
    use std::collections::BTreeMap;
    use std::fmt;

    use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

    /// A parsed document.
    #[derive(Debug, Clone, PartialEq)]
    pub enum Value {
        /// A mapping; keys that are numbers or booleans are kept as their text.
        Map(BTreeMap<String, Value>),
        /// A sequence.
        List(Vec<Value>),
        /// Anything else (a string, number, boolean, null, date).
        Scalar,
    }

    impl<'de> Deserialize<'de> for Value {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            d.deserialize_any(ValueVisitor)
        }
    }

    struct ValueVisitor;

    macro_rules! scalar {
        ($($name:ident: $t:ty),*) => {
            $(fn $name<E: de::Error>(self, _: $t) -> Result<Value, E> { Ok(Value::Scalar) })*
        };
    }

    impl<'de> Visitor<'de> for ValueVisitor {
        type Value = Value;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a YAML, JSON or TOML value")
        }

        scalar!(visit_bool: bool, visit_i64: i64, visit_u64: u64, visit_i128: i128,
            visit_u128: u128, visit_f64: f64, visit_str: &str, visit_bytes: &[u8]);

        fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
            Ok(Value::Scalar)
        }

        fn visit_none<E: de::Error>(self) -> Result<Value, E> {
            Ok(Value::Scalar)
        }

        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
            Value::deserialize(d)
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
            let mut out = Vec::new();
            while let Some(v) = seq.next_element::<Value>()? {
                out.push(v);
            }
            Ok(Value::List(out))
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
            let mut out = BTreeMap::new();
            while let Some(Key(k)) = map.next_key::<Key>()? {
                let v = map.next_value::<Value>()?;
                out.insert(k, v);
            }
            Ok(Value::Map(out))
        }
    }

    /// A mapping key as text.
    struct Key(String);

    impl<'de> Deserialize<'de> for Key {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            d.deserialize_any(KeyVisitor)
        }
    }

    struct KeyVisitor;

    macro_rules! key {
        ($($name:ident: $t:ty),*) => {
            $(fn $name<E: de::Error>(self, v: $t) -> Result<Key, E> { Ok(Key(v.to_string())) })*
        };
    }

    impl Visitor<'_> for KeyVisitor {
        type Value = Key;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a string, number or boolean key")
        }

        key!(visit_bool: bool, visit_i64: i64, visit_u64: u64, visit_f64: f64, visit_str: &str);
    }

    pub(super) fn find(v: &Value, segs: &[&str]) -> bool {
        if segs.is_empty() {
            return true;
        }
        match v {
            Value::Map(m) => (1..=segs.len()).rev().any(|k| {
                m.get(&segs[..k].join("."))
                    .is_some_and(|child| find(child, &segs[k..]))
            }),
            Value::List(l) => segs[0]
                .parse::<usize>()
                .ok()
                .and_then(|i| l.get(i))
                .is_some_and(|child| find(child, &segs[1..])),
            Value::Scalar => false,
        }
    }
}

#[cfg(feature = "load")]
mod dir;
#[cfg(feature = "load")]
pub use dir::{DirMonorepo, MAX_IAC_FILE_BYTES, is_inside, lookup_key};

#[cfg(all(test, feature = "load"))]
mod tests;
