//! The catalog model: plain types shared by the loader, the server, the API and the UI.
//!
//! The YAML field, the Rust field, the JSON field and the UI label use one name for one
//! thing. Every document kind rejects unknown fields so a typo in the monorepo is an error
//! with a position, not a silently ignored line.

use serde::{Deserialize, Serialize};
pub use smol_str::SmolStr;

/// The three states every claim about the infrastructure falls into.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    /// Works in production with real traffic or data.
    Validated,
    /// Exists in IaC (Pulumi, Ansible, Argo CD manifests) but is not applied or validated.
    Declared,
    /// An architectural decision on the roadmap, with no code and no validation.
    Desired,
}

impl State {
    /// Every state, in the order the UI shows them.
    pub const ALL: [State; 3] = [State::Validated, State::Declared, State::Desired];

    /// The identifier used in YAML, JSON and query strings.
    pub fn as_str(self) -> &'static str {
        match self {
            State::Validated => "validated",
            State::Declared => "declared",
            State::Desired => "desired",
        }
    }

    /// Parses the identifier used in YAML, JSON and query strings.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.as_str() == s)
    }
}

/// Refines a state: how far along, or why it will not happen (yet).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Qualifier {
    /// Works for part of its scope only.
    Partial,
    /// Work is under way.
    InProgress,
    /// Postponed until a criterion is met (`criterion` says which).
    Deferred,
    /// Considered and turned down (`reason` says why).
    Rejected,
    /// Beyond the current roadmap.
    Future,
}

impl Qualifier {
    /// Every qualifier, in the order the UI shows them.
    pub const ALL: [Qualifier; 5] = [
        Qualifier::Partial,
        Qualifier::InProgress,
        Qualifier::Deferred,
        Qualifier::Rejected,
        Qualifier::Future,
    ];

    /// The identifier used in YAML, JSON and query strings.
    pub fn as_str(self) -> &'static str {
        match self {
            Qualifier::Partial => "partial",
            Qualifier::InProgress => "in_progress",
            Qualifier::Deferred => "deferred",
            Qualifier::Rejected => "rejected",
            Qualifier::Future => "future",
        }
    }

    /// Parses the identifier used in YAML, JSON and query strings.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.as_str() == s)
    }
}

/// What a catalog item is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ItemKind {
    /// A piece of the platform stack (a Proxmox cluster, a LINSTOR pool, a router).
    Component,
    /// An application, job or platform running on top of the stack (layer 8).
    Workload,
    /// Part of a cross-cutting capability (secrets, TLS, identity, ...).
    Capability,
}

/// Whether a layer is one of the ordered layers 0–8 or a cross-cutting capability.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LayerKind {
    /// An ordered layer: layer N is operated only on a stable N-1.
    Layer,
    /// A capability that crosses every layer.
    Capability,
}

/// Priority of a pending task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Priority {
    /// Must be done before anything else in its area.
    Critical,
    /// Part of the minimum viable platform.
    Mvp,
    /// Planned for phases 2–3.
    Later,
    /// Worth doing, no date.
    Normal,
}

/// Whether a pending entry is work to do or a decision still to take.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, Default,
)]
#[serde(rename_all = "snake_case")]
pub enum TaskKind {
    /// Work to be done.
    #[default]
    Task,
    /// A decision that has not been taken yet.
    Decision,
}

/// A titled list of free-text entries, for the prose of a layer that is not an item
/// (a strategy, an evolution plan, options under discussion).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Section {
    /// Heading of the section.
    pub title: String,
    /// Entries, in order.
    #[serde(default)]
    pub entries: Vec<String>,
}

/// The platform as a whole: what it is and the principles it follows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Platform {
    /// Display name.
    pub name: String,
    /// One paragraph on what the platform is.
    #[serde(default)]
    pub description: String,
    /// Design principles, each a title and an explanation.
    #[serde(default)]
    pub principles: Vec<Principle>,
    /// Further prose (reading prerequisites, roadmap direction, expansion plans).
    #[serde(default)]
    pub sections: Vec<Section>,
    /// Where an architecture decision record is read: an http(s) address in which `{adr}`
    /// stands for the record's name as decisions cite it (`ADR-003`), e.g.
    /// `https://git.example.org/devops/-/blob/main/docs/adr/{adr}.md`. Without it, decisions
    /// name their ADRs as plain text.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::link::opt_http_url_template"
    )]
    pub adr_url: Option<String>,
}

impl Platform {
    /// The address of ADR `name` (`ADR-003`), when the catalog says where ADRs are read and the
    /// name is one that can stand in an address as it is (letters, digits, `.`, `_`, `-`).
    pub fn adr_link(&self, name: &str) -> Option<String> {
        crate::link::adr_link(self.adr_url.as_deref()?, name)
    }
}

/// One design principle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Principle {
    /// Short name of the principle.
    pub title: String,
    /// What it means in practice.
    pub text: String,
}

/// A site: a place with its own hardware, network and clusters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Site {
    /// Short identifier, used in references and query strings (`franca`, `sp`).
    pub id: String,
    /// Display name.
    pub name: String,
    /// Where it is.
    #[serde(default)]
    pub location: String,
    /// Free notes.
    #[serde(default)]
    pub notes: String,
    /// Groups of physical hosts at the site.
    #[serde(default)]
    pub host_groups: Vec<HostGroup>,
}

/// A group of physical hosts sharing a naming pattern and a role.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostGroup {
    /// Identifier, unique in the catalog.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Host-name pattern (`pve-labri-*`).
    #[serde(default)]
    pub pattern: String,
    /// Number of hosts in the group.
    #[serde(default)]
    pub count: Option<u32>,
    /// Free notes.
    #[serde(default)]
    pub notes: String,
}

/// A GPU model and how many of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Gpu {
    /// Model name (`NVIDIA RTX A5000`).
    pub model: String,
    /// Number of cards; absent when the hardware is known but not how many cards it holds
    /// (a GPU cluster without it offers none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u32>,
}

impl std::fmt::Display for Gpu {
    /// `2× NVIDIA RTX A5000`, or the model alone when the count is not recorded.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.count {
            Some(n) => write!(f, "{n}× {}", self.model),
            None => f.write_str(&self.model),
        }
    }
}

/// How a layer is labelled in lists: `1 · Storage`, or the bare name for capabilities.
pub fn layer_label(number: &str, name: &str) -> String {
    if number.is_empty() {
        name.to_string()
    } else {
        format!("{number} · {name}")
    }
}

/// One physical host or container host named in the catalog.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Host {
    /// Host name, unique in the catalog.
    pub id: String,
    /// Site the host is in.
    pub site: String,
    /// Host group it belongs to, if any.
    #[serde(default)]
    pub group: Option<String>,
    /// Hardware tier (`1`, `2A`, `3`), see the hardware tiers document.
    #[serde(default)]
    pub tier: Option<String>,
    /// What the host does.
    #[serde(default)]
    pub roles: Vec<String>,
    /// GPUs installed.
    #[serde(default)]
    pub gpus: Vec<Gpu>,
    /// Free notes.
    #[serde(default)]
    pub notes: String,
}

/// A layer (0–8, with sub-layers such as 8a) or a cross-cutting capability.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Layer {
    /// Identifier (`l0`, `l8b`, `secrets`).
    pub id: String,
    /// Ordered layer or cross-cutting capability.
    pub kind: LayerKind,
    /// Label shown before the name (`0`, `8b`); empty for capabilities.
    #[serde(default)]
    pub number: String,
    /// Display name.
    pub name: String,
    /// Enclosing layer, for sub-layers (`l8` for `l8a`).
    #[serde(default)]
    pub parent: Option<String>,
    /// Its role in the platform ("Papel").
    #[serde(default)]
    pub role: String,
    /// Components, as the architecture names them.
    #[serde(default)]
    pub components: Vec<String>,
    /// Why it sits where it sits.
    #[serde(default)]
    pub rationale: String,
    /// Priority of the layer as a whole, when the architecture gives one.
    #[serde(default)]
    pub priority: Option<Priority>,
    /// Free notes.
    #[serde(default)]
    pub notes: String,
    /// Further prose: strategies, options, evolution plans.
    #[serde(default)]
    pub sections: Vec<Section>,
}

/// How a reference into the devops monorepo is written: a path and, optionally, a key inside
/// a YAML, JSON or TOML file (`ha` in a Pulumi stack config).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IacRef {
    /// Path relative to the monorepo root.
    pub path: Box<str>,
    /// Dotted key inside the file, if the claim is about one setting.
    #[serde(default)]
    pub key: Option<Box<str>>,
}

/// Why a claim is believed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Evidence {
    /// A person checked it.
    Attestation {
        /// Who checked.
        by: String,
        /// When (ISO date, `2026-10-01`).
        date: String,
        /// What was checked.
        what: String,
    },
    /// An HTTP endpoint the portal can probe.
    Probe {
        /// URL to request: http(s) only.
        #[serde(deserialize_with = "crate::link::http_url")]
        url: String,
        /// Expected status code.
        #[serde(default = "default_probe_status")]
        expect_status: u16,
    },
    /// An Argo CD application whose health and sync state back the claim.
    Argocd {
        /// Application name.
        app: String,
        /// Argo CD instance (site) that runs it.
        #[serde(default)]
        instance: Option<String>,
    },
    /// A document, pull request or page that records it.
    Reference {
        /// What the reference shows.
        text: String,
        /// Where it is, if it has an address: http(s) only.
        #[serde(default, deserialize_with = "crate::link::opt_http_url")]
        url: Option<String>,
    },
}

impl Evidence {
    /// Whether someone can check it again: a probe or an Argo CD application the portal reads,
    /// or an attestation saying who checked what and when. A free-text reference only repeats a
    /// claim.
    pub fn is_verifiable(&self) -> bool {
        !matches!(self, Evidence::Reference { .. })
    }
}

/// Whether a validated claim rests on something verifiable: one piece of evidence that is
/// ([`Evidence::is_verifiable`]) or the item's IaC reference, checked against the monorepo at
/// the catalog's commit.
pub fn has_verifiable_evidence(evidence: &[Evidence], iac: Option<&IacRef>) -> bool {
    iac.is_some() || evidence.iter().any(Evidence::is_verifiable)
}

fn default_probe_status() -> u16 {
    200
}

/// Anything the catalog tracks a state for: a component, a workload, a capability item.
///
/// Its text and lists are boxed slices (`Box<str>`, `Box<[T]>`), not `String` and `Vec`: an
/// item is not edited once read, a boxed slice holds exactly its elements (a list read from
/// YAML grows by doubling, so a `Vec` of one kept room for four) and takes 16 bytes instead of
/// 24. The item list is most of a large catalog's memory (ADR 0030).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Item {
    /// Identifier, unique in the catalog (`linstor-sp-ssd`).
    pub id: SmolStr,
    /// Display name.
    pub name: Box<str>,
    /// Component, workload or capability item.
    pub kind: ItemKind,
    /// Layer or capability it belongs to.
    pub layer: SmolStr,
    /// Sites it concerns; empty means platform-wide.
    #[serde(default)]
    pub sites: Box<[SmolStr]>,
    /// Hosts it runs on.
    #[serde(default)]
    pub hosts: Box<[SmolStr]>,
    /// Validated, declared or desired.
    pub state: State,
    /// Refinement of the state.
    #[serde(default)]
    pub qualifier: Option<Qualifier>,
    /// Free notes, as written in the architecture.
    #[serde(default)]
    pub notes: Box<str>,
    /// Why the state is believed (expected for `validated`).
    #[serde(default)]
    pub evidence: Box<[Evidence]>,
    /// Where it is declared in the monorepo (expected for `declared`).
    #[serde(default)]
    pub iac: Option<IacRef>,
    /// Why it was rejected (expected with the `rejected` qualifier).
    #[serde(default)]
    pub reason: Option<Box<str>>,
    /// What must happen before it is taken up (expected with `deferred`).
    #[serde(default)]
    pub criterion: Option<Box<str>>,
    /// Items that must work before this one can.
    #[serde(default)]
    pub depends_on: Box<[SmolStr]>,
    /// Decisions that shape it.
    #[serde(default)]
    pub decisions: Box<[SmolStr]>,
    /// Roadmap phase it is planned in.
    #[serde(default)]
    pub phase: Option<SmolStr>,
    /// GPUs it offers to workloads (for GPU clusters).
    #[serde(default)]
    pub gpus: Box<[Gpu]>,
    /// How researchers reach it, for a Kubernetes cluster: its API, CA and OIDC sign-in.
    /// Boxed: few items are clusters, and the item list is most of a large catalog's memory.
    #[serde(default)]
    pub kubernetes: Option<Box<KubernetesAccess>>,
    /// Where the monorepo holds what self-service deploys to it, for a Kubernetes cluster.
    #[serde(default)]
    pub gitops: Option<Box<Gitops>>,
    /// Free labels.
    #[serde(default)]
    pub tags: Box<[SmolStr]>,
}

/// How to reach a Kubernetes cluster with kubectl: its API server, the CA that signs it and the
/// OpenID client the API server trusts (`--oidc-*` flags), so the portal can hand a researcher a
/// ready kubeconfig signing in through `kubectl oidc-login`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KubernetesAccess {
    /// The API server's address (`https://gpu-sp-01.example.org:6443`): http(s) only.
    #[serde(deserialize_with = "crate::link::http_url")]
    pub api: String,
    /// The PEM certificate of the CA that signs the API server's certificate; without it
    /// kubectl trusts the system's CAs.
    #[serde(default, deserialize_with = "pem_certificate")]
    pub ca: Option<String>,
    /// The OpenID sign-in the API server accepts.
    pub oidc: KubernetesOidc,
}

/// The API server's OpenID settings, as its `--oidc-issuer-url`, `--oidc-client-id`,
/// `--oidc-username-prefix` and `--oidc-groups-prefix` flags set them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KubernetesOidc {
    /// The issuer (Authentik's `https://<host>/application/o/<slug>/`): http(s) only.
    #[serde(deserialize_with = "crate::link::http_url")]
    pub issuer: String,
    /// The public OpenID client kubectl signs in with.
    pub client_id: String,
    /// What the API server puts before the `preferred_username` claim to make the Kubernetes
    /// user name (`oidc:` makes `oidc:rui`).
    #[serde(default = "default_oidc_prefix")]
    pub username_prefix: String,
    /// What it puts before each group of the `groups` claim.
    #[serde(default = "default_oidc_prefix")]
    pub groups_prefix: String,
}

/// The monorepo's Argo CD layout for one cluster: the folder whose subfolders the Argo CD that
/// manages the cluster turns into Applications (an `ApplicationSet` with a git directory
/// generator). Self-service puts a resource's files under it (`<folder>/workspaces/<name>`,
/// `<folder>/databases/<namespace>/<name>`), so a merged folder is applied with no hand edit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Gitops {
    /// The folder, relative to the monorepo's root (`apps/sp/gpu-sp-01`).
    #[serde(deserialize_with = "repo_folder")]
    pub folder: String,
}

/// The folder self-service uses for a cluster whose layout the catalog does not record.
pub fn default_gitops_folder(cluster: &str) -> String {
    format!("clusters/{cluster}")
}

/// Deserializes a folder of the monorepo: relative, `/`-separated names of letters, digits,
/// `.`, `_` and `-`, none of them `.` or `..`, at most 200 characters.
fn repo_folder<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let s = String::deserialize(d)?;
    let ok = !s.is_empty()
        && s.len() <= 200
        && s.split('/').all(|seg| {
            !seg.is_empty()
                && seg != "."
                && seg != ".."
                && seg
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        });
    if ok {
        Ok(s)
    } else {
        Err(serde::de::Error::custom(format!(
            "`{}` is not a folder of the monorepo: use relative names of letters, digits, `.`, `_` and `-` separated by `/` (no `..`, no leading or trailing `/`)",
            crate::selfservice::printable(&s, 80)
        )))
    }
}

/// The prefix the portal assumes for user and group names: the usual `--oidc-*-prefix`.
pub const DEFAULT_OIDC_PREFIX: &str = "oidc:";

fn default_oidc_prefix() -> String {
    DEFAULT_OIDC_PREFIX.to_owned()
}

impl KubernetesAccess {
    /// The Kubernetes user name the cluster gives the person signed in as `username`.
    pub fn user(&self, username: &str) -> String {
        format!("{}{username}", self.oidc.username_prefix)
    }
}

/// The Kubernetes user name of `username` on a cluster whose access the catalog may not record
/// (then the default prefix is assumed).
pub fn kubernetes_user(access: Option<&KubernetesAccess>, username: &str) -> String {
    match access {
        Some(a) => a.user(username),
        None => format!("{DEFAULT_OIDC_PREFIX}{username}"),
    }
}

/// Deserializes an optional PEM certificate: one or more `CERTIFICATE` blocks and nothing else.
fn pem_certificate<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let Some(s) = Option::<String>::deserialize(d)? else {
        return Ok(None);
    };
    let body = s.trim();
    let well_formed = body.starts_with("-----BEGIN CERTIFICATE-----")
        && body.ends_with("-----END CERTIFICATE-----")
        && body.lines().all(|l| {
            let l = l.trim();
            l.starts_with("-----")
                || l.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '='))
        });
    if well_formed {
        Ok(Some(format!("{body}\n")))
    } else {
        Err(serde::de::Error::custom(
            "`ca` is not a PEM certificate (-----BEGIN CERTIFICATE----- … -----END CERTIFICATE-----)",
        ))
    }
}

/// An architectural decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Decision {
    /// Identifier, unique in the catalog (`argocd-topology`).
    pub id: String,
    /// What the decision is about.
    pub topic: String,
    /// What was decided.
    pub decision: String,
    /// The alternative that was turned down.
    #[serde(default)]
    pub rejected: String,
    /// Why.
    #[serde(default)]
    pub reason: String,
    /// ADR documents that record it (`ADR-001`).
    #[serde(default)]
    pub adrs: Vec<String>,
    /// Other documents it refers to (`Tiers`).
    #[serde(default)]
    pub refs: Vec<String>,
    /// Layers it concerns.
    #[serde(default)]
    pub layers: Vec<String>,
    /// Items it concerns.
    #[serde(default)]
    pub items: Vec<String>,
}

/// A pending task or an open decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Task {
    /// Identifier, unique in the catalog.
    pub id: String,
    /// What is to be done or decided.
    pub title: String,
    /// Task or open decision.
    #[serde(default)]
    pub kind: TaskKind,
    /// Layer or capability it belongs to.
    pub layer: String,
    /// Items it moves forward.
    #[serde(default)]
    pub items: Vec<String>,
    /// Sites it concerns.
    #[serde(default)]
    pub sites: Vec<String>,
    /// How urgent.
    #[serde(default)]
    pub priority: Option<Priority>,
    /// Tasks or items that must be done first ("only after X").
    #[serde(default)]
    pub after: Vec<String>,
    /// Free notes.
    #[serde(default)]
    pub notes: String,
}

/// A roadmap phase.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Phase {
    /// Identifier (`mvp`).
    pub id: String,
    /// Display name.
    pub name: String,
    /// Position in the roadmap, lowest first.
    pub order: u32,
    /// What the phase delivers.
    #[serde(default)]
    pub description: String,
}

/// One catalog file: any file may hold any kinds; the loader merges them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct CatalogFile {
    /// The platform description (at most one file may hold it).
    #[serde(default)]
    pub platform: Option<Platform>,
    /// Sites.
    #[serde(default)]
    pub sites: Vec<Site>,
    /// Hosts.
    #[serde(default)]
    pub hosts: Vec<Host>,
    /// Layers and capabilities.
    #[serde(default)]
    pub layers: Vec<Layer>,
    /// Items.
    #[serde(default)]
    pub items: Vec<Item>,
    /// Decisions.
    #[serde(default)]
    pub decisions: Vec<Decision>,
    /// Pending tasks.
    #[serde(default)]
    pub tasks: Vec<Task>,
    /// Roadmap phases.
    #[serde(default)]
    pub phases: Vec<Phase>,
}

/// A whole catalog: every file merged, in file-name order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Catalog {
    /// The platform description.
    pub platform: Platform,
    /// Sites.
    pub sites: Vec<Site>,
    /// Hosts.
    pub hosts: Vec<Host>,
    /// Layers and capabilities.
    pub layers: Vec<Layer>,
    /// Items.
    pub items: Vec<Item>,
    /// Decisions.
    pub decisions: Vec<Decision>,
    /// Pending tasks.
    pub tasks: Vec<Task>,
    /// Roadmap phases.
    pub phases: Vec<Phase>,
}

#[cfg(test)]
mod tests {
    use super::{Gpu, Item};

    #[test]
    fn an_item_takes_no_more_than_the_304_bytes_its_memory_budget_counts_on() {
        // A large catalog's memory is mostly its item list (docs/performance.md, ADR 0030):
        // a field added or widened shows here first.
        assert!(
            std::mem::size_of::<Item>() <= 304,
            "an item takes {} bytes",
            std::mem::size_of::<Item>()
        );
    }

    #[test]
    fn a_gpu_reads_with_or_without_its_count_and_says_so() {
        let counted: Gpu = serde_json::from_str(r#"{"model": "NVIDIA RTX A5000", "count": 2}"#)
            .expect("a counted GPU");
        let uncounted: Gpu =
            serde_json::from_str(r#"{"model": "NVIDIA A5500"}"#).expect("a GPU without a count");
        assert_eq!(counted.to_string(), "2× NVIDIA RTX A5000");
        assert_eq!(uncounted.count, None);
        assert_eq!(uncounted.to_string(), "NVIDIA A5500");
        assert_eq!(
            serde_json::to_value(&uncounted).expect("serialises"),
            serde_json::json!({"model": "NVIDIA A5500"})
        );
    }
}
