//! Schemas of the catalog: items, layers, sites and hosts, decisions and tasks, the
//! overview's counts, and where the catalog is read from and why it was reloaded.

// Fields are read only by the schema derive.
#![expect(
    dead_code,
    reason = "schema-only types: never constructed, only described"
)]

use utoipa::ToSchema;

/// The three states every claim about the infrastructure falls into.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
pub(crate) enum State {
    /// Works in production with real traffic or data.
    Validated,
    /// Exists in IaC but is not applied or validated.
    Declared,
    /// An architectural decision on the roadmap, with no code and no validation.
    Desired,
}

/// Refines a state.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
pub(crate) enum Qualifier {
    /// Works for part of its scope only.
    Partial,
    /// Work is under way.
    InProgress,
    /// Postponed until a criterion is met.
    Deferred,
    /// Considered and turned down.
    Rejected,
    /// Beyond the current roadmap.
    Future,
}

/// What a catalog item is.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
pub(crate) enum ItemKind {
    /// A piece of the platform stack.
    Component,
    /// An application, job or platform running on top of the stack.
    Workload,
    /// Part of a cross-cutting capability.
    Capability,
}

/// An ordered layer or a cross-cutting capability.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
pub(crate) enum LayerKind {
    /// An ordered layer (0–8).
    Layer,
    /// A capability that crosses every layer.
    Capability,
}

/// Priority of a task or layer.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
pub(crate) enum Priority {
    /// Before anything else in its area.
    Critical,
    /// Part of the minimum viable platform.
    Mvp,
    /// Planned for later phases.
    Later,
    /// Worth doing, no date.
    Normal,
}

/// Whether a pending entry is work to do or a decision still to take.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
pub(crate) enum TaskKind {
    /// Work to be done.
    Task,
    /// A decision not taken yet.
    Decision,
}

/// A titled list of free-text entries.
#[derive(ToSchema)]
pub(crate) struct Section {
    /// Heading.
    title: String,
    /// Entries, in order.
    entries: Vec<String>,
}

/// A GPU model and how many of it.
#[derive(ToSchema)]
pub(crate) struct Gpu {
    /// Model name.
    model: String,
    /// Number of cards; absent when the catalog does not record how many.
    count: Option<u32>,
}

/// A group of physical hosts sharing a naming pattern and a role.
#[derive(ToSchema)]
pub(crate) struct HostGroup {
    /// Identifier.
    id: String,
    /// Display name.
    name: String,
    /// Host-name pattern (`pve-labri-*`).
    pattern: String,
    /// Number of hosts.
    count: Option<u32>,
    /// Free notes.
    notes: String,
}

/// A physical host or container host.
#[derive(ToSchema)]
pub(crate) struct Host {
    /// Host name.
    id: String,
    /// Site the host is in.
    site: String,
    /// Host group.
    group: Option<String>,
    /// Hardware tier (`1`, `2A`, `3`).
    tier: Option<String>,
    /// What the host does.
    roles: Vec<String>,
    /// GPUs installed.
    gpus: Vec<Gpu>,
    /// Free notes.
    notes: String,
}

/// A site with its hosts.
#[derive(ToSchema)]
pub(crate) struct Site {
    /// Short identifier (`franca`, `sp`).
    id: String,
    /// Display name.
    name: String,
    /// Where it is.
    location: String,
    /// Free notes.
    notes: String,
    /// Groups of physical hosts.
    host_groups: Vec<HostGroup>,
    /// Hosts at the site (from the catalog's `hosts`).
    hosts: Vec<Host>,
}

/// A layer (0–8, with sub-layers) or a cross-cutting capability.
#[derive(ToSchema)]
pub(crate) struct Layer {
    /// Identifier (`l0`, `l8b`, `secrets`).
    id: String,
    /// Ordered layer or capability.
    kind: LayerKind,
    /// Label shown before the name (`0`, `8b`).
    number: String,
    /// Display name.
    name: String,
    /// Enclosing layer, for sub-layers.
    parent: Option<String>,
    /// Its role in the platform.
    role: String,
    /// Components, as the architecture names them.
    components: Vec<String>,
    /// Why it sits where it sits.
    rationale: String,
    /// Priority of the layer as a whole.
    priority: Option<Priority>,
    /// Free notes.
    notes: String,
    /// Further prose.
    sections: Vec<Section>,
}

/// Where a claim is declared in the devops monorepo.
#[derive(ToSchema)]
pub(crate) struct IacRef {
    /// Path relative to the monorepo root.
    path: String,
    /// Dotted key inside the file.
    key: Option<String>,
}

/// Why a claim is believed.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
#[serde(tag = "kind")]
pub(crate) enum Evidence {
    /// A person checked it.
    Attestation {
        /// Who checked.
        by: String,
        /// When (ISO date).
        date: String,
        /// What was checked.
        what: String,
    },
    /// An HTTP endpoint the portal can probe.
    Probe {
        /// URL to request.
        url: String,
        /// Expected status code.
        expect_status: u16,
    },
    /// An Argo CD application backing the claim.
    Argocd {
        /// Application name.
        app: String,
        /// Argo CD instance.
        instance: Option<String>,
    },
    /// A document, pull request or page that records it.
    Reference {
        /// What it shows.
        text: String,
        /// Where it is.
        url: Option<String>,
    },
}

/// Anything the catalog tracks a state for.
#[derive(ToSchema)]
pub(crate) struct Item {
    /// Identifier (`linstor-sp-ssd`).
    id: String,
    /// Display name.
    name: String,
    /// Component, workload or capability item.
    kind: ItemKind,
    /// Layer or capability it belongs to.
    layer: String,
    /// Sites it concerns; empty means platform-wide.
    sites: Vec<String>,
    /// Hosts it runs on.
    hosts: Vec<String>,
    /// Validated, declared or desired.
    state: State,
    /// Refinement of the state.
    qualifier: Option<Qualifier>,
    /// Free notes.
    notes: String,
    /// Why the state is believed.
    evidence: Vec<Evidence>,
    /// Where it is declared in the monorepo.
    iac: Option<IacRef>,
    /// Why it was rejected.
    reason: Option<String>,
    /// What must happen before it is taken up.
    criterion: Option<String>,
    /// Items that must work before this one can.
    depends_on: Vec<String>,
    /// Decisions that shape it.
    decisions: Vec<String>,
    /// Roadmap phase.
    phase: Option<String>,
    /// GPUs it offers to workloads.
    gpus: Vec<Gpu>,
    /// How researchers reach it, for a Kubernetes cluster.
    kubernetes: Option<KubernetesAccess>,
    /// Where the monorepo holds what self-service deploys to it, for a Kubernetes cluster.
    gitops: Option<Gitops>,
    /// Free labels.
    tags: Vec<String>,
}

/// A cluster's folder in the monorepo's Argo CD layout.
#[derive(ToSchema)]
pub(crate) struct Gitops {
    /// The folder, relative to the monorepo's root (`apps/sp/gpu-sp-01`); its Argo CD turns
    /// each subfolder into an Application.
    folder: String,
}

/// How to reach a Kubernetes cluster with kubectl.
#[derive(ToSchema)]
pub(crate) struct KubernetesAccess {
    /// The API server's address (http(s)).
    api: String,
    /// The PEM certificate of the CA that signs the API server's certificate.
    ca: Option<String>,
    /// The OpenID sign-in the API server accepts.
    oidc: KubernetesOidc,
}

/// A Kubernetes API server's OpenID settings (its `--oidc-*` flags).
#[derive(ToSchema)]
pub(crate) struct KubernetesOidc {
    /// The issuer (http(s)).
    issuer: String,
    /// The public OpenID client kubectl signs in with.
    client_id: String,
    /// What is put before `preferred_username` to make the Kubernetes user name (`oidc:`).
    username_prefix: String,
    /// What is put before each group of the `groups` claim (`oidc:`).
    groups_prefix: String,
}

/// An architectural decision.
#[derive(ToSchema)]
pub(crate) struct Decision {
    /// Identifier.
    id: String,
    /// What it is about.
    topic: String,
    /// What was decided.
    decision: String,
    /// The alternative turned down.
    rejected: String,
    /// Why.
    reason: String,
    /// ADR documents that record it.
    adrs: Vec<String>,
    /// Other documents it refers to.
    refs: Vec<String>,
    /// Layers it concerns.
    layers: Vec<String>,
    /// Items it concerns.
    items: Vec<String>,
}

/// A pending task or an open decision.
#[derive(ToSchema)]
pub(crate) struct Task {
    /// Identifier.
    id: String,
    /// What is to be done or decided.
    title: String,
    /// Task or open decision.
    kind: TaskKind,
    /// Layer or capability.
    layer: String,
    /// Items it moves forward.
    items: Vec<String>,
    /// Sites it concerns.
    sites: Vec<String>,
    /// How urgent.
    priority: Option<Priority>,
    /// Tasks or items that must be done first.
    after: Vec<String>,
    /// Free notes.
    notes: String,
}

/// Counts of items per state.
#[derive(ToSchema)]
pub(crate) struct StateCounts {
    /// Validated items.
    validated: u32,
    /// Declared items.
    declared: u32,
    /// Desired items.
    desired: u32,
}

/// One row of the overview matrix.
#[derive(ToSchema)]
pub(crate) struct OverviewRow {
    /// Layer id.
    layer: String,
    /// Label.
    number: String,
    /// Layer name.
    name: String,
    /// Ordered layer or capability.
    kind: LayerKind,
    /// Counts per site, in the order of `sites`.
    per_site: Vec<StateCounts>,
    /// Counts of platform-wide items.
    platform_wide: StateCounts,
    /// Counts over the row.
    total: StateCounts,
}

/// The layers × sites matrix with counts per state.
#[derive(ToSchema)]
pub(crate) struct Overview {
    /// Columns: `[site id, site name]` pairs.
    #[schema(value_type = Vec<Vec<String>>, example = json!([["franca", "Franca"], ["sp", "São Paulo"]]))]
    sites: Vec<(String, String)>,
    /// One row per top-level layer, then per capability.
    rows: Vec<OverviewRow>,
    /// Counts over the whole catalog.
    totals: StateCounts,
}

/// A problem in the catalog, with its position.
#[derive(ToSchema)]
pub(crate) struct Diagnostic {
    /// File relative to the catalog root.
    file: String,
    /// 1-based line; 0 when the problem has no position in a file.
    line: u64,
    /// 1-based column in characters.
    column: u64,
    /// What is wrong.
    message: String,
}

/// Where the catalog is read from.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
#[serde(tag = "kind")]
pub(crate) enum CatalogSource {
    /// The demo catalog built into the binary.
    Embedded,
    /// A directory of YAML files.
    Dir {
        /// The directory: its whole path for admins, its last component for everyone else.
        path: String,
    },
    /// A folder of a branch of a git repository (the local monorepo).
    Git {
        /// The repository's directory: its whole path for admins, its last component for
        /// everyone else.
        repo: String,
        /// The branch.
        branch: String,
        /// The folder in the repository (`catalog`).
        dir: String,
    },
}

/// What caused a reload.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
#[serde(tag = "kind")]
pub(crate) enum ReloadTrigger {
    /// The first load at start-up.
    Startup,
    /// SIGHUP.
    Signal,
    /// The refresh timer.
    Timer,
    /// `POST /api/v1/catalog/reload`.
    Api {
        /// The signed-in admin (username) who asked.
        user: String,
        /// The caller's address.
        peer: String,
    },
    /// An admin merged a request's pull request into the local monorepo.
    Merge {
        /// The admin (username).
        user: String,
        /// The request.
        request: i64,
    },
    /// Another replica was asked to reload, and this one followed.
    Peer,
}
